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

# The Python peers' venv (pip downloads, then a C/C++ build of msg/) is made while cargo builds:
# both take minutes and neither needs the other. Its output goes to a log, shown after the build.
export RPQ_PYENV=${RPQ_PYENV:-$repo/tests/.cache/venv}
mkdir -p "$(dirname "$RPQ_PYENV")"
peers_log=$RPQ_PYENV.setup.log
# (own process group, so that a failed cargo build stops pip and make too)
setsid bash -c 'tests/setup_pyenv.sh "$1" && tests/setup_colcon.sh "$1"' setup "$RPQ_PYENV" \
  >"$peers_log" 2>&1 </dev/null &
peers_pid=$!
trap 'kill -- -"$peers_pid" 2>/dev/null || true' EXIT
stage "Python test peers started in the background (venv with rclpy Jazzy, cyclonedds, rosbags, colcon; msg/ built with rosidl; log: $peers_log)"

stage "cargo build (release, all targets; fetches crates on a fresh machine)"
cargo build --release --workspace --all-targets --locked

stage "Python test peers (their log so far, then as it grows until they are ready)"
tail -n +1 -f --pid="$peers_pid" "$peers_log"
peers_status=0
wait "$peers_pid" || peers_status=$?
trap - EXIT
if [ "$peers_status" != 0 ]; then
  echo "error: setting up the Python test peers failed (exit status $peers_status; log above and in $peers_log)" >&2
  exit 1
fi

stage "cargo test inside a private network namespace"
export CYCLONEDDS_URI="file://$repo/tests/cyclonedds.xml"
"$netns_run" cargo test --release --workspace --offline --locked --no-fail-fast "$@"

stage "done"
