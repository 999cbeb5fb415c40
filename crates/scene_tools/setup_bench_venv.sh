#!/usr/bin/env bash
# Creates the Python venv of rpq_bench's exact-distance peer, Coal (PyPI `coal`, the successor
# of FCL / hpp-fcl, with numpy), at target/bench-venv (or $1). rpq_bench finds it there, or
# through RPQ_BENCH_PYTHON. Not needed by the tests; rpq_bench --no-coal runs without it.
#
#   crates/scene_tools/setup_bench_venv.sh [VENV_DIR]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=${1:-$repo/target/bench-venv}
python=${RPQ_PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet 'coal==3.0.3' 'numpy>=1.26'
"$venv/bin/python" -c 'import coal, numpy; print("coal", coal.__version__, "numpy", numpy.__version__)'
