#!/usr/bin/env bash
# Adds colcon and its cargo plugin to the test peers' venv, so tests/colcon_check.sh can build the
# repository as a ROS 2 colcon workspace the way a ROS 2 user does (without a ROS installation:
# the venv's PyPI Jazzy wheels stand in for /opt/ros/jazzy).
#
#   tests/setup_colcon.sh [VENV_DIR]     default: $RPQ_PYENV, else tests/.cache/venv
#
# Run it after tests/setup_pyenv.sh (which makes the venv) and outside the test namespace: it
# downloads the pinned wheels of tests/colcon-requirements.txt (colcon-common-extensions,
# colcon-ros-cargo, and cargo-ament-build, a binary wheel, so nothing is compiled).
# Cached: a stamp in the venv records a hash of the requirements file and this script; when it
# matches, nothing is done. A venv that setup_pyenv.sh rebuilds loses the stamp with everything
# else, so colcon is installed again next time.
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${1:-${RPQ_PYENV:-$tests_dir/.cache/venv}}
requirements=$tests_dir/colcon-requirements.txt
t0=$(date +%s%N)

say() {
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '[setup_colcon %3d.%ds] %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"
}
die() {
  printf 'setup_colcon: error: %s\n' "$*" >&2
  exit 1
}
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR

[ -d "$venv" ] || die "no venv at $venv: run tests/setup_pyenv.sh $venv first"
venv=$(cd "$venv" && pwd)
py=$venv/bin/python
[ -x "$py" ] && [ -f "$venv/.rpq_stamp" ] ||
  die "$venv is not a finished test venv (no python or no .rpq_stamp): run tests/setup_pyenv.sh $venv first"

stamp=$venv/.rpq_colcon_stamp
hash=$(cat "$requirements" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)

# Same lock as setup_pyenv.sh: never install while the venv is being rebuilt.
exec 9>"$venv.lock"
flock 9

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -x "$venv/bin/colcon" ]; then
  say "colcon in $venv is up to date"
  exit 0
fi
rm -f "$stamp"

say "installing $(grep -c '==' "$requirements") pinned packages (colcon, colcon-ros-cargo, cargo-ament-build)"
"$py" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv \
  -r "$requirements" || die "pip install -r $requirements failed (see the messages above)"
"$py" -m pip check >/dev/null || die "the venv's packages conflict after installing colcon: $("$py" -m pip check)"

# Exactly one plugin may claim ament_cargo; colcon-cargo-ros2 would also patch Cargo.lock.
if "$py" -m pip show colcon-cargo-ros2 >/dev/null 2>&1; then
  die "colcon-cargo-ros2 is installed in $venv beside colcon-ros-cargo: both claim ament_cargo; uninstall it"
fi
export PATH=$venv/bin:$PATH
cargo ament-build --help >/dev/null 2>&1 ||
  die "'cargo ament-build' does not run with $venv/bin on PATH (cargo-ament-build wheel broken?)"
# COLCON_LOG_PATH=/dev/null: colcon would otherwise leave a log/ directory in the current one.
extensions=$(COLCON_LOG_PATH=/dev/null colcon extensions 2>&1) ||
  die "colcon does not run: $(tail -3 <<<"$extensions")"
for ext in ament_cargo ros.ament_cmake cargo_workspace; do
  grep -q "^  $ext:" <<<"$extensions" || die "colcon lacks the '$ext' extension after the install"
done

printf '%s\n' "$hash" >"$stamp"
say "colcon ready in $venv: $("$py" -m pip list --disable-pip-version-check 2>/dev/null |
  awk '$1 ~ /^(colcon-core|colcon-ros-cargo|colcon-cargo|cargo-ament-build)$/ {printf "%s %s  ", $1, $2}')"
