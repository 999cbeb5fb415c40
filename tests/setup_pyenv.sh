#!/usr/bin/env bash
# Creates (or refreshes) the Python venv of the suite's test peers:
#   - CPython 3.11 with the pinned wheels of tests/python/requirements.txt (rclpy Jazzy on Fast DDS,
#     the ROS message packages, the rosidl/ament_cmake toolchain, cmake, cyclonedds, rosbags, mcap);
#   - the suite's rosidl package msg/ (rpq_interfaces) built with that toolchain and installed into
#     the venv, so `from rpq_interfaces.msg import DriverStatus` works in its python.
#
#   tests/setup_pyenv.sh [VENV_DIR]          default: tests/.cache/venv
#
# Cached: a stamp in the venv records a hash of requirements.txt + this script, and one of msg/.
# Both unchanged: nothing to do. Only msg/ changed: rebuild rpq_interfaces. Otherwise: new venv.
# Environment: RPQ_PYTHON  the interpreter to build the venv from (default: python3.11, else a
#              python3 that is 3.11).
# Needs: CPython 3.11 with its headers (Python.h) and pip, a C/C++ compiler and make, PyPI access.
# No system cmake is needed (the pinned PyPI cmake wheel is used), nor a ROS installation.
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$tests_dir")
venv=${1:-$tests_dir/.cache/venv}
python=${RPQ_PYTHON:-python3.11}
if [ -z "${RPQ_PYTHON:-}" ] && ! command -v python3.11 >/dev/null && command -v python3 >/dev/null; then
  python=python3 # checked below to be 3.11
fi
requirements=$tests_dir/python/requirements.txt
msg_dir=$repo/msg
t0=$(date +%s%N)

say() {
  local ms=$((($(date +%s%N) - t0) / 1000000))
  printf '[setup_pyenv %3d.%ds] %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$*"
}
die() {
  printf 'setup_pyenv: error: %s\n' "$*" >&2
  exit 1
}
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR
mkdir -p "$(dirname "$venv")"
venv=$(cd "$(dirname "$venv")" && pwd)/$(basename "$venv")

# Hashes deciding what is stale. The msg/ hash covers every file's path and content.
env_hash=$(cat "$requirements" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)
msg_hash=$(cd "$msg_dir" && find . -type f -print0 | LC_ALL=C sort -z |
  xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
stamp=$venv/.rpq_stamp

# One setup at a time per venv (parallel test runs would otherwise race on pip and cmake).
exec 9>"$venv.lock"
flock 9

old_env_hash= old_msg_hash=
if [ -f "$stamp" ]; then
  { read -r old_env_hash && read -r old_msg_hash; } <"$stamp" || true
fi
if [ "$old_env_hash" = "$env_hash" ] && [ "$old_msg_hash" = "$msg_hash" ] && [ -x "$venv/bin/python" ]; then
  say "venv $venv is up to date"
  exit 0
fi

py=$venv/bin/python
if [ "$old_env_hash" != "$env_hash" ] || [ ! -x "$py" ]; then
  command -v "$python" >/dev/null ||
    die "no $python on PATH: the ROS 2 Jazzy wheels need CPython 3.11 (set RPQ_PYTHON to one)"
  py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
    die "$python does not run: the ROS 2 Jazzy wheels need CPython 3.11 (set RPQ_PYTHON to one)"
  [ "$py_version" = 3.11 ] ||
    die "$python is Python $py_version, the ROS 2 Jazzy wheels on PyPI need CPython 3.11"
  py_include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [ -f "$py_include/Python.h" ] ||
    die "no Python.h in $py_include: install the CPython 3.11 headers (Debian: python3.11-dev)"

  # The stamp is written last, so an interrupted setup is redone from scratch next time.
  say "creating venv $venv with $("$python" -V 2>&1)"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  say "installing $(grep -c '==' "$requirements") pinned packages (about 1 min with a fresh pip cache)"
  "$py" -m pip install --quiet --disable-pip-version-check --no-input \
    --require-virtualenv -r "$requirements" ||
    die "pip install -r $requirements failed (see the messages above)"

  # The wheels' exported CMake files name the interpreter of the machine that built them;
  # point them at this venv's Python headers and numpy instead.
  np_include=$("$py" -c 'import numpy; print(numpy.get_include())')
  say "patching the wheels' CMake exports: Python include -> $py_include, numpy -> $np_include"
  mapfile -t cmake_files < <(grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share" || true)
  [ "${#cmake_files[@]}" -gt 0 ] ||
    die "no CMake export names /opt/python/cp311-cp311: the wheels changed, revisit this patch"
  sed -i -e "s|/opt/python/cp311-cp311/include/python3.11|$py_include|g" \
    -e "s|/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include|$np_include|g" \
    "${cmake_files[@]}"
  if grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share" >/dev/null; then
    die "CMake exports still name /opt/python/cp311-cp311 after patching: $(grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share" | head -3)"
  fi
  # colcon must not crawl the ~90 package.xml files the wheels install.
  touch "$venv/COLCON_IGNORE"
  old_msg_hash=
fi

# Build msg/ (rpq_interfaces) with the venv's rosidl toolchain and install it into the venv.
command -v cc >/dev/null && command -v c++ >/dev/null && command -v make >/dev/null ||
  die "building msg/ needs a C and C++ compiler and make (Debian: build-essential)"
build=$venv/.rpq_build/rpq_interfaces
manifest=$venv/.rpq_build/rpq_interfaces.install_manifest.txt
if [ -f "$manifest" ]; then
  say "removing the previous rpq_interfaces install"
  while IFS= read -r f; do rm -f "$f"; done <"$manifest"
  rm -f "$manifest"
fi
rm -rf "$build"
mkdir -p "$build"
export PATH=$venv/bin:$PATH AMENT_PREFIX_PATH=$venv CMAKE_PREFIX_PATH=$venv
unset PYTHONPATH PYTHONHOME
say "configuring msg/ (rpq_interfaces) with $("$venv/bin/cmake" --version | head -1)"
"$venv/bin/cmake" -S "$msg_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$venv" -DCMAKE_INSTALL_PREFIX="$venv" -DBUILD_TESTING=OFF \
  -DPython3_EXECUTABLE="$py" >"$build/../configure.log" 2>&1 ||
  { tail -40 "$build/../configure.log" >&2; die "cmake configure of msg/ failed (log: $build/../configure.log)"; }
say "building rpq_interfaces"
"$venv/bin/cmake" --build "$build" -j "$(nproc)" >"$build/../build.log" 2>&1 ||
  { tail -40 "$build/../build.log" >&2; die "building msg/ failed (log: $build/../build.log)"; }
"$venv/bin/cmake" --install "$build" >"$build/../install.log" 2>&1 ||
  { tail -40 "$build/../install.log" >&2; die "installing msg/ failed (log: $build/../install.log)"; }
cp "$build/install_manifest.txt" "$manifest"
rm -rf "$build"

say "checking that rclpy imports the suite's interfaces"
"$py" -c 'from rpq_interfaces.msg import DriverStatus
from rpq_interfaces.srv import ComputeForwardKinematics
import rclpy, std_msgs.msg, sensor_msgs.msg, std_srvs.srv, cyclonedds, rosbags, mcap_ros2
assert DriverStatus.MODE_POSITION == 1, DriverStatus.MODE_POSITION' ||
  die "the venv's python cannot import rpq_interfaces / rclpy (see the traceback above)"

printf '%s\n%s\n' "$env_hash" "$msg_hash" >"$stamp"
say "venv ready: $venv ($(du -sh "$venv" | cut -f1))"
