#!/usr/bin/env bash
# proximity_query benchmark: min_distance round trip from rclpy and from Rust (median, p99),
# distance-stream rate and node CPU at 1 kHz, check_states throughput on 10,000 configurations.
# A benchmark, not a test: it prints a table and the figures as one JSON line (about a minute).
#
#   tests/bench_proximity.sh [proximity_bench options]   e.g. --calls 1000 --configs 20000
#
# Builds outside the network namespace, prepares the Python peers, then runs
# target/release/proximity_bench inside a private loopback-only namespace (../shared/netns-run),
# since it opens DDS sockets. See tests/src/bin/proximity_bench.rs for what is measured.
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

cargo build --release --locked -p rpq_tests --bin proximity_bench -p proximity_query
export RPQ_PYENV=${RPQ_PYENV:-$repo/tests/.cache/venv}
tests/setup_pyenv.sh "$RPQ_PYENV"
export CYCLONEDDS_URI="file://$repo/tests/cyclonedds.xml"
exec "$netns_run" "$repo/target/release/proximity_bench" "$@"
