#!/usr/bin/env bash
# Topic round-trip latency on loopback: suite <-> suite, rclpy <-> suite, rclpy <-> rclpy.
# A benchmark, not a test: it prints a table of min / median / p99 / max in microseconds.
#
#   tests/bench_latency.sh [latency_bench options]   e.g. --count 2000 --rate 200 --only suite-suite
#
# Builds outside the network namespace, prepares the Python peers, then runs
# target/release/latency_bench inside a private loopback-only namespace (../shared/netns-run),
# since it opens DDS sockets. See tests/src/bin/latency_bench.rs for what is measured.
#
# Environment: RPQ_NETNS_RUN (namespace wrapper), RPQ_PYENV (peers' venv), as tests/run_all.sh.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

netns_run=${RPQ_NETNS_RUN:-$repo/../shared/netns-run}
if [ ! -x "$netns_run" ]; then
  echo "error: no network-namespace wrapper at $netns_run (set RPQ_NETNS_RUN);" >&2
  echo "       DDS traffic must not leave a private loopback-only namespace." >&2
  exit 2
fi

cargo build --release --locked -p rpq_tests --bin latency_bench
export RPQ_PYENV=${RPQ_PYENV:-$repo/tests/.cache/venv}
tests/setup_pyenv.sh "$RPQ_PYENV"
export CYCLONEDDS_URI="file://$repo/tests/cyclonedds.xml"
exec "$netns_run" "$repo/target/release/latency_bench" "$@"
