#!/usr/bin/env bash
# The suite's one test command (README, .ci/run): builds everything, prepares the Python peers,
# then runs every test inside a private loopback-only network namespace.
#
#   tests/run_all.sh [extra cargo test args...]      e.g. tests/run_all.sh -p rpq_kinematics
#
# Environment:
#   RPQ_NETNS_RUN  the namespace wrapper (default: ../shared/netns-run beside the repository)
#   RPQ_PYENV      the Python venv of the test peers (default: tests/.cache/venv, created here)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
start=$(date +%s)
stage() { printf '\n=== [%4ss] %s\n' "$(( $(date +%s) - start ))" "$*"; }

netns_run=${RPQ_NETNS_RUN:-$repo/../shared/netns-run}
if [ ! -x "$netns_run" ]; then
  echo "error: no network-namespace wrapper at $netns_run." >&2
  echo "       DDS tests must not run on the host network; set RPQ_NETNS_RUN to a script that runs" >&2
  echo "       its arguments inside a private namespace with only loopback (multicast on)." >&2
  exit 2
fi

stage "cargo build (release, all targets; fetches crates on a fresh machine)"
cargo build --release --workspace --all-targets --locked

stage "Python test peers (venv with rclpy Jazzy, cyclonedds, rosbags, colcon; msg/ built with rosidl)"
export RPQ_PYENV=${RPQ_PYENV:-$repo/tests/.cache/venv}
tests/setup_pyenv.sh "$RPQ_PYENV"
tests/setup_colcon.sh "$RPQ_PYENV"

stage "cargo test inside a private network namespace"
export CYCLONEDDS_URI="file://$repo/tests/cyclonedds.xml"
"$netns_run" cargo test --release --workspace --offline --locked --no-fail-fast "$@"

stage "done"
