#!/usr/bin/env bash
# Builds the repository as a ROS 2 colcon workspace, the way a ROS 2 user does, and checks the
# result (issue: "the suite builds and installs as a ROS 2 colcon workspace").
#
#   tests/colcon_check.sh          (tests/tests/colcon_build.rs runs it inside the test namespace)
#
# 1. copies the repository's files (git ls-files: tracked + untracked, not ignored) into
#    <cache>/ws/src/rpq-ros, a fresh copy each run;
# 2. `colcon build --cargo-args --release` in <cache>/ws with the venv's PyPI Jazzy wheels as the
#    underlay (AMENT_PREFIX_PATH), offline (crates come from ~/.cargo, fetched by the cargo build
#    that runs before the tests);
# 3. checks the install tree: exactly the ROS packages of the repository are built; each
#    ament_cargo package's binaries under lib/<pkg>/, its package.xml, its install_to_share
#    folders under share/<pkg>/ (byte for byte), the paths its launch files and URDFs name
#    relative to themselves, the ament resource index, rpq_interfaces' message files and Python
#    module;
# 4. sources install/setup.bash in a clean shell (env -i) and checks that ament_index_python finds
#    every package in its install prefix and that rclpy imports rpq_interfaces from there;
# 5. inside the private network namespace: runs the installed robot_sim and reads /joint_states
#    with rclpy; runs the installed rpq_launch with `robot_sim rx60_sim.launch.xml` (package
#    form, resolved through the ament index) and reads the latched robot_description with rclpy:
#    the installed URDF with every mesh named by a package:// URI that the ament index of the
#    sourced install resolves to an installed STL file (what RViz's RobotModel display needs);
# 6. builds again from a shell that sourced install/setup.bash (the usual edit-build loop);
# 7. checks that no file of the checkout was added, changed or removed by colcon or its plugins,
#    and that plain cargo still resolves (--locked) and builds (--offline) in that same tree.
#
# Environment:
#   RPQ_PYENV         venv from tests/setup_pyenv.sh + tests/setup_colcon.sh (required)
#   RPQ_COLCON_CACHE  work directory (default target/colcon-cache): the workspace's build/ stays
#                     there between runs, so a rerun only rebuilds what changed
#   ROS_DOMAIN_ID     domain of the DDS checks (default 0)
#   RPQ_COLCON_NO_DDS=1  skip step 5 (then it may run outside the namespace)
#   RPQ_COLCON_PACKAGES  which packages colcon builds: `run` (default) builds robot_sim and rpq_launch,
#                     the packages that step 5 runs (their dependency rpq_interfaces then comes from
#                     the venv, where tests/setup_pyenv.sh built and installed it from msg/ with the
#                     same rosidl toolchain); `all` builds every package of the repository, and
#                     steps 3-4 check all of them (rclpy imports rpq_interfaces from the install space)
#   RPQ_COLCON_OPT_LEVEL opt-level of the colcon build's release profile (default 0, for speed;
#                     3 = a user's optimized build)
# Exit status: 0 all checks passed, 1 a check failed, 2 cannot run here.
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$tests_dir")
venv=${RPQ_PYENV:-}
cache=${RPQ_COLCON_CACHE:-$repo/target/colcon-cache}
domain=${ROS_DOMAIN_ID:-0}
no_dds=${RPQ_COLCON_NO_DDS:-0}
opt_level=${RPQ_COLCON_OPT_LEVEL:-0}
packages=${RPQ_COLCON_PACKAGES:-run}
t_start=$(date +%s%N)
t_stage=$t_start
timings=()

elapsed() { # ms since $1
  echo $((($(date +%s%N) - $1) / 1000000))
}
fmt_ms() { printf '%d.%ds' $(($1 / 1000)) $(($1 % 1000 / 100)); }
say() { printf '[colcon_check %s] %s\n' "$(fmt_ms "$(elapsed "$t_start")")" "$*"; }
stage() { # closes the previous stage's timing, opens a new one
  if [ -n "${stage_name:-}" ]; then
    timings+=("$(printf '%-50s %8s' "$stage_name" "$(fmt_ms "$(elapsed "$t_stage")")")")
  fi
  stage_name=$1
  t_stage=$(date +%s%N)
  say "== $1"
}
die() {
  printf 'colcon_check: FAILED: %s\n' "$*" >&2
  exit 1
}
cannot() {
  printf 'colcon_check: cannot run: %s\n' "$*" >&2
  exit 2
}
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR

# ---------------------------------------------------------------------------------------------
stage "preconditions"
case $packages in run | all) ;; *) cannot "RPQ_COLCON_PACKAGES=$packages: use run or all" ;; esac
case $opt_level in 0 | 1 | 2 | 3 | s | z) ;; *) cannot "RPQ_COLCON_OPT_LEVEL=$opt_level: use 0, 1, 2, 3, s or z" ;; esac
[ -n "$venv" ] || cannot "RPQ_PYENV is not set: run through tests/run_all.sh, or set it to the venv of tests/setup_pyenv.sh"
[ -d "$venv" ] || cannot "no venv at $venv: run tests/setup_pyenv.sh $venv"
venv=$(cd "$venv" && pwd)
py=$venv/bin/python
[ -x "$py" ] || cannot "no python in $venv: run tests/setup_pyenv.sh $venv"
[ -x "$venv/bin/colcon" ] && [ -x "$venv/bin/cargo-ament-build" ] ||
  cannot "no colcon / cargo-ament-build in $venv: run tests/setup_colcon.sh $venv"
command -v cargo >/dev/null || cannot "no cargo on PATH"
command -v script >/dev/null || cannot "no script(1) on PATH (util-linux): colcon runs in a pseudo-terminal, see colcon_build below"
command -v git >/dev/null && git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 ||
  cannot "$repo is not a git checkout (the workspace copy is made from git ls-files)"
ifaces=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/self/net/dev | sort | tr '\n' ' ')
if [ "$no_dds" != 1 ] && [ "$ifaces" != "lo " ]; then
  cannot "the DDS checks must run inside a private loopback-only network namespace (interfaces here: $ifaces); use ../shared/netns-run, or RPQ_COLCON_NO_DDS=1 to skip them"
fi
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
exec 8>"$cache/lock"
flock 8 # one run at a time per cache
ws=$cache/ws
src=$ws/src/rpq-ros
logs=$cache/logs
rm -rf "$logs" "$ws/src" "$ws/install" "$ws/log" "$ws/.cargo" "$cache/ros_home"
# build/ is kept between runs, but CMake caches and cargo's build scripts hold absolute paths:
# start over if the cache was moved (with the repository) since it was filled.
if [ "$(cat "$ws/build/.rpq_ws_path" 2>/dev/null)" != "$ws" ]; then
  rm -rf "$ws/build" "$cache/cargo-build-dir"
fi
# A CMake package configured against another venv (another RPQ_PYENV) is configured afresh.
for cmake_cache in "$ws"/build/*/CMakeCache.txt; do
  [ -f "$cmake_cache" ] || continue
  grep -q "^ament_cmake_DIR:PATH=$venv/" "$cmake_cache" || rm -rf "$(dirname "$cmake_cache")"
done
mkdir -p "$logs" "$src" "$cache/ros_home"
# Every ROS program below logs here, not in ~/.ros.
export ROS_HOME=$cache/ros_home ROS_LOG_DIR=$cache/ros_home/log
# Variables that would point the cargo builds elsewhere than a user's colcon build does.
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR CARGO_BUILD_TARGET
say "venv $venv, workspace $ws, ROS_DOMAIN_ID $domain, release opt-level $opt_level"

show_log() { # file [lines]
  printf -- '--- last %s lines of %s ---\n' "${2:-60}" "$1" >&2
  tail -n "${2:-60}" "$1" >&2 || true
}

# Lists every path below $1 with its type, and each file's hash: a snapshot of the checkout.
snapshot() {
  (cd "$1" && find . -mindepth 1 -printf '%y %p\n' | LC_ALL=C sort |
    while read -r type path; do
      if [ "$type" = f ]; then
        printf 'f %s %s\n' "$(sha256sum <"$path" | cut -c1-16)" "$path"
      else
        printf '%s - %s\n' "$type" "$path"
      fi
    done)
}

# ---------------------------------------------------------------------------------------------
stage "copy the repository to ws/src/rpq-ros"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do
    if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
  done | tar --null -T - --format=posix -cf -) | tar -xf - -C "$src"
# Keep every mtime to the nanosecond (posix tar format; the default format keeps whole seconds),
# directories' too (build scripts watch directories with rerun-if-changed): cargo then sees
# unchanged sources as fresh and a rerun rebuilds only what changed.
(cd "$src" && find . -mindepth 1 -type d -print0) | while IFS= read -r -d '' d; do
  touch -r "$repo/$d" "$src/$d"
done
snapshot "$src" >"$logs/checkout.before"
say "$(grep -c '^f' "$logs/checkout.before") files copied"

# The environment of a ROS 2 user, with the venv's wheels in place of /opt/ros/jazzy.
# One difference, for speed only: colcon-ros-cargo gives every package its own cargo target
# directory (build/<pkg>), so a user's first build compiles ros2-client once per node package.
# Here cargo's build-dir (intermediate artifacts; the binaries still land in build/<pkg>) is one
# directory kept in the cache: the dependencies are compiled once, and reruns are incremental.
# (Not the checkout's target/: a package built alone can get other dependency features than the
# workspace build, and a second variant of a crate in target/release/deps makes the workspace's
# doc tests fail with E0460.)
# Second difference, also for speed: RPQ_COLCON_OPT_LEVEL (default 0) overrides the release
# profile's opt-level through cargo's CARGO_PROFILE_RELEASE_OPT_LEVEL. The check is about how
# the packages build, install and run, not about the speed of their code, and an unoptimized
# build of the whole dependency tree takes a fraction of the time on a 2-core CI machine.
# RPQ_COLCON_OPT_LEVEL=3 gives exactly a user's `colcon build --cargo-args --release`.
build_dir=$cache/cargo-build-dir
cargo_env=("CARGO_NET_OFFLINE=true" "CARGO_BUILD_BUILD_DIR=$build_dir"
  "CARGO_PROFILE_RELEASE_OPT_LEVEL=$opt_level")
underlay_env=(env "PATH=$venv/bin:$PATH" "AMENT_PREFIX_PATH=$venv" "CMAKE_PREFIX_PATH=$venv"
  "${cargo_env[@]}")
# colcon runs in a pseudo-terminal (script(1)), as in a user's terminal: colcon-cargo 0.2.0 reads
# `cargo metadata --no-deps` (one JSON line) through colcon-core's line reader, which refuses lines
# above 64 KiB when colcon's output is a pipe, and this workspace's metadata is about that size
# (it grows with the checkout path). With a terminal colcon-core reads the line without that
# limit. The stage "cargo metadata size" below reports the figure; README "For ROS 2 users" says
# what CI users do.
colcon_build() { # log-file [extra colcon args...]
  local log=$1
  shift
  local cmd
  cmd=$(printf '%q ' "$@" colcon build "${select[@]}" --cmake-args -DBUILD_TESTING=OFF --cargo-args --release)
  (cd "$ws" && script -qefc "$cmd" /dev/null </dev/null) >"$log" 2>&1 || {
    show_log "$log" 80
    for f in "$ws"/log/latest_build/*/stderr.log; do
      [ -s "$f" ] && show_log "$f" 40
    done
    die "colcon build failed (full log: $log, per package: $ws/log/latest_build/)"
  }
}

# ---------------------------------------------------------------------------------------------
stage "colcon list: the repository's ROS packages"
(cd "$ws" && "${underlay_env[@]}" colcon list) >"$logs/colcon-list.txt" 2>&1 ||
  { show_log "$logs/colcon-list.txt"; die "colcon list failed"; }
# What a user expects: every package.xml of the repository, and nothing else (the plain Cargo
# crates are libraries, tests and tools: COLCON_IGNORE keeps colcon-cargo from building them).
expected=$("$py" - "$src" <<'PY'
import os, sys, xml.etree.ElementTree as ET
names = []
for d, dirs, files in os.walk(sys.argv[1]):
    if "COLCON_IGNORE" in files:
        dirs[:] = []
        continue
    dirs[:] = [x for x in dirs if not x.startswith(".") and x != "target"]
    if "package.xml" in files:
        names.append(ET.parse(os.path.join(d, "package.xml")).getroot().findtext("name"))
print(" ".join(sorted(names)), end=" ")
PY
)
found=$(awk '{print $1}' "$logs/colcon-list.txt" | sort | tr '\n' ' ')
cat "$logs/colcon-list.txt"
[ "$found" = "$expected" ] ||
  die "colcon finds packages [$found] but the repository's package.xml files name [$expected]"
grep -q 'ament_cargo' "$logs/colcon-list.txt" || die "no ament_cargo package identified (colcon-ros-cargo missing?)"
# What is built: every package, or (the default, for the time of the test command) the two that
# the DDS checks run; the checks below cover exactly the built packages.
if [ "$packages" = all ]; then
  select=()
  built=$found
else
  select=(--packages-select robot_sim rpq_launch --packages-ignore rpq_interfaces)
  built="robot_sim rpq_launch "
fi
say "building: $built(RPQ_COLCON_PACKAGES=$packages)"

# ---------------------------------------------------------------------------------------------
stage "cargo metadata size (colcon-cargo's line limit without a terminal)"
metadata_bytes=$(cd "$src/nodes/robot_sim" && cargo metadata --no-deps --format-version 1 --offline | wc -c)
say "cargo metadata --no-deps: $metadata_bytes bytes for a checkout at $src (${#src} characters); colcon without a terminal reads at most 65536"

# ---------------------------------------------------------------------------------------------
stage "colcon build --cargo-args --release"
rebuilt_from_scratch=$([ -d "$ws/build" ] && echo no || echo yes)
mkdir -p "$ws/build"
printf '%s\n' "$ws" >"$ws/build/.rpq_ws_path"
colcon_build "$logs/colcon-build.log" "${underlay_env[@]}"
grep -E '^(Finished|Summary)' "$logs/colcon-build.log" || true
say "build/ was $([ "$rebuilt_from_scratch" = yes ] && echo empty: a fresh build || echo kept: an incremental build)"

# ---------------------------------------------------------------------------------------------
stage "install tree: lib/, share/, resource index"
cargo metadata --manifest-path "$src/Cargo.toml" --format-version 1 --no-deps --offline \
  >"$logs/cargo-metadata.json" 2>"$logs/cargo-metadata.err" ||
  { show_log "$logs/cargo-metadata.err"; die "cargo metadata failed in the copy"; }
"$py" - "$src" "$ws/install" "$logs/cargo-metadata.json" $built <<'PY' || die "the install tree is not what a ROS 2 user needs (see above)"
import json, pathlib, re, sys, tomllib, xml.etree.ElementTree as ET
src, install, meta_file, packages = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
meta = {p["name"]: p for p in json.load(open(meta_file))["packages"]}
errors = []
def err(msg): errors.append(msg)
def same_tree(a, b):
    """Files below a and b (relative paths and bytes) are the same."""
    fa = {p.relative_to(a): p.read_bytes() for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b): p.read_bytes() for p in b.rglob("*") if p.is_file()} if b.is_dir() else {}
    missing = sorted(str(k) for k in fa.keys() - fb.keys())
    extra = sorted(str(k) for k in fb.keys() - fa.keys())
    differ = sorted(str(k) for k in fa.keys() & fb.keys() if fa[k] != fb[k])
    return missing, extra, differ, len(fa)
pkg_dirs = {}
for px in src.rglob("package.xml"):
    root = ET.parse(px).getroot()
    pkg_dirs.setdefault(root.findtext("name"), (px.parent, root))
print(f"{'package':16} {'build type':12} installed")
for name in packages:
    d, root = pkg_dirs[name]
    prefix = install / name
    share = prefix / "share" / name
    build_type = root.findtext("export/build_type")
    notes = []
    if root.get("format") != "3":
        err(f"{name}: package.xml is format {root.get('format')}, not 3")
    for tag in ("license", "maintainer", "description", "version"):
        if not (root.findtext(tag) or "").strip():
            err(f"{name}: package.xml has no <{tag}>")
    if not (prefix / "share/ament_index/resource_index/packages" / name).is_file():
        err(f"{name}: no ament resource index entry share/ament_index/resource_index/packages/{name}")
    installed_xml = share / "package.xml"
    if not installed_xml.is_file() or installed_xml.read_bytes() != (d / "package.xml").read_bytes():
        err(f"{name}: share/{name}/package.xml missing or not the source's")
    for hook in ("package.bash", "package.dsv"):
        if not (share / hook).is_file():
            err(f"{name}: colcon's environment hook share/{name}/{hook} is missing")
    if build_type == "ament_cargo":
        cargo = tomllib.loads((d / "Cargo.toml").read_text())
        if cargo["package"]["name"] != name:
            err(f"{name}: Cargo package name {cargo['package']['name']!r} differs from package.xml's")
        bins = sorted(t["name"] for t in meta[name]["targets"] if "bin" in t["kind"])
        if not bins:
            err(f"{name}: an ament_cargo node package without a binary")
        for b in bins:
            exe = prefix / "lib" / name / b
            if not exe.is_file() or not exe.stat().st_mode & 0o111 or exe.read_bytes()[:4] != b"\x7fELF":
                err(f"{name}: executable lib/{name}/{b} missing or not an executable ELF file")
        notes.append("lib/%s/{%s}" % (name, ",".join(bins)))
        entries = cargo["package"].get("metadata", {}).get("ros", {}).get("install_to_share", [])
        for e in entries:
            s = (d / e).resolve()
            t = share / s.name
            missing, extra, differ, n = same_tree(s, t) if s.is_dir() else (
                ([] if t.is_file() and t.read_bytes() == s.read_bytes() else [s.name]), [], [], 1)
            if missing or extra or differ:
                err(f"{name}: share/{name}/{s.name} differs from {e}: missing {missing[:5]}, extra {extra[:5]}, different {differ[:5]}")
            notes.append(f"share/{name}/{s.name} ({n} files)")
        # Paths that launch files and URDFs name relative to themselves must resolve in share/.
        for lf in share.rglob("*.launch.xml"):
            for rel in sorted(set(re.findall(r"\$\(dirname\)/([^\"'\s)]+)", lf.read_text()))):
                if not (lf.parent / rel).exists():
                    err(f"{name}: {lf.relative_to(install)} names $(dirname)/{rel}, absent from the install space")
        for urdf in share.rglob("*.urdf"):
            for rel in sorted(set(re.findall(r'filename="([^"]+)"', urdf.read_text()))):
                if "://" not in rel and not (urdf.parent / rel).is_file():
                    err(f"{name}: {urdf.relative_to(install)} names mesh {rel}, absent from the install space")
    elif build_type == "ament_cmake":
        idl = sorted(p.relative_to(d) for p in d.rglob("*") if p.suffix in (".msg", ".srv", ".action"))
        for f in idl:
            if not (share / f).is_file():
                err(f"{name}: interface file share/{name}/{f} is missing")
        if idl:
            if not (prefix / "share/ament_index/resource_index/rosidl_interfaces" / name).is_file():
                err(f"{name}: no rosidl_interfaces resource index entry")
            if not list(prefix.glob(f"lib/python3*/site-packages/{name}/msg/__init__.py")):
                err(f"{name}: no Python module {name}.msg in the install space")
        notes.append(f"share/{name}/{{{','.join(sorted({str(f.parent) for f in idl}))}}} ({len(idl)} interface files), Python module")
    else:
        err(f"{name}: unexpected build type {build_type!r}")
    print(f"{name:16} {build_type or '?':12} {'; '.join(notes)}")
for e in errors:
    print("  ERROR", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
[ -f "$ws/install/setup.bash" ] || die "no install/setup.bash"

# ---------------------------------------------------------------------------------------------
stage "clean shell + install/setup.bash: ament_index_python"
# A clean shell: empty environment, install/setup.bash sourced, then the given bash code.
# ament_index_prefix PKG prints what `ros2 pkg prefix PKG` would (from the ament index).
clean_env=(env -i HOME="$HOME" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
  ROS_DOMAIN_ID="$domain" ROS_HOME="$ROS_HOME" ROS_LOG_DIR="$ROS_LOG_DIR" RPQ_PY="$py"
  bash --noprofile --norc -c '
    ament_index_prefix() { "$RPQ_PY" -c "import sys
from ament_index_python.packages import get_package_prefix
print(get_package_prefix(sys.argv[1]))" "$1"; }
    source "$1/install/setup.bash" && shift && eval "$1"' clean_shell "$ws")
clean_shell() { # bash-code
  "${clean_env[@]}" "$1"
}
clean_shell_bg() { # log-file bash-code: runs in the background, $node_pid is its process
  # Job control on: a background job of a script would otherwise start with SIGINT ignored.
  set -m
  ( exec "${clean_env[@]}" "$2" ) >"$1" 2>&1 8>&- &
  node_pid=$!
  set +m
}
clean_shell "\"$py\" - $built" <<'PY' || die "a clean shell that sourced install/setup.bash does not find the packages"
import os, pathlib, sys
from ament_index_python.packages import get_package_prefix, get_package_share_directory, get_packages_with_prefixes
install = pathlib.Path(os.environ["COLCON_PREFIX_PATH"].split(os.pathsep)[0]).resolve()
errors = []
known = get_packages_with_prefixes()
for name in sys.argv[1:]:
    prefix = install / name
    if pathlib.Path(known.get(name, "")).resolve() != prefix:
        errors.append(f"ament index: {name} -> {known.get(name)}, expected {prefix}")
        continue
    if pathlib.Path(get_package_prefix(name)).resolve() != prefix or \
       pathlib.Path(get_package_share_directory(name)).resolve() != prefix / "share" / name:
        errors.append(f"{name}: get_package_prefix / get_package_share_directory disagree with {prefix}")
    print(f"{name:16} {get_package_share_directory(name)}")
import rpq_interfaces.msg, rpq_interfaces.srv
mod = pathlib.Path(rpq_interfaces.msg.__file__).resolve()
if "rpq_interfaces" in sys.argv[1:] and install not in mod.parents:
    errors.append(f"rclpy users would import rpq_interfaces from {mod}, not from the install space {install}")
print(f"rpq_interfaces.msg imported from {mod}")
for e in errors:
    print("  ERROR", e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY

# ---------------------------------------------------------------------------------------------
if [ "$no_dds" = 1 ]; then
  stage "DDS checks skipped (RPQ_COLCON_NO_DDS=1)"
else
  stage "installed robot_sim -> rclpy (/joint_states)"
  share=$ws/install/robot_sim/share/robot_sim
  urdf=$share/urdf/rx60b.urdf
  joints=$("$py" -c 'import sys, xml.etree.ElementTree as ET
print(",".join(j.get("name") for j in ET.parse(sys.argv[1]).getroot().iter("joint") if j.get("type") in ("revolute", "continuous", "prismatic")))' "$urdf")
  node_pid=
  stop_node() { # SIGINT to $node_pid, then wait (10 s at most, then SIGKILL); sets $rc
    kill -INT "$node_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$node_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$node_pid" 2>/dev/null; then kill -KILL "$node_pid" 2>/dev/null || true; fi
    rc=0
    wait "$node_pid" || rc=$?
    node_pid=
  }
  cleanup() { # on any exit: SIGTERM lets rpq_launch stop its children, SIGKILL 5 s later
    if [ -n "$node_pid" ] && kill -TERM "$node_pid" 2>/dev/null; then
      for _ in $(seq 50); do kill -0 "$node_pid" 2>/dev/null || return 0; sleep 0.1; done
      kill -KILL "$node_pid" 2>/dev/null || true
    fi
  }
  trap cleanup EXIT
  # `ros2 run robot_sim robot_sim` = <prefix of robot_sim in the ament index>/lib/robot_sim/robot_sim
  clean_shell_bg "$logs/robot_sim.log" 'exec "$(ament_index_prefix robot_sim)/lib/robot_sim/robot_sim" \
    --ros-args --params-file "'"$share"'/config/robot_sim.yaml" -p robot_description_file:="'"$urdf"'"'
  "$py" "$tests_dir/python/rclpy_peer.py" --domain "$domain" --timeout 30 joint-states --count 3 \
    >"$logs/joint_states.jsonl" 2>"$logs/joint_states.err" || {
    show_log "$logs/joint_states.err" 20
    show_log "$logs/robot_sim.log" 30
    die "rclpy received no /joint_states from the installed robot_sim"
  }
  "$py" - "$logs/joint_states.jsonl" "$joints" <<'PY' || die "/joint_states from the installed robot_sim is wrong"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
states = [r for r in recs if r["kind"] == "joint_state"]
want = sys.argv[2].split(",")
assert len(states) == 3, f"expected 3 joint_state records, got {recs}"
for s in states:
    assert s["name"] == want, f"joint names {s['name']} != URDF's {want}"
    assert len(s["position"]) == len(want), s
print(f"rclpy: 3 JointState messages, joints {','.join(want)}, positions {states[-1]['position']}")
PY
  stop_node
  [ "$rc" = 0 ] || { show_log "$logs/robot_sim.log" 30; die "the installed robot_sim exited with status $rc after SIGINT (want 0)"; }

  stage "installed rpq_launch robot_sim rx60_sim.launch.xml -> rclpy"
  clean_shell '"$(ament_index_prefix rpq_launch)/lib/rpq_launch/rpq_launch" --print robot_sim rx60_sim.launch.xml' \
    >"$logs/rpq_launch-print.txt" 2>&1 || { show_log "$logs/rpq_launch-print.txt"; die "rpq_launch --print robot_sim rx60_sim.launch.xml failed"; }
  cat "$logs/rpq_launch-print.txt"
  "$py" - "$logs/rpq_launch-print.txt" "$ws/install" <<'PY' || die "rpq_launch does not resolve the package from the install space"
import os, shlex, sys
text, install = open(sys.argv[1]).read(), os.path.realpath(sys.argv[2])
line = next(l for l in text.splitlines() if l.startswith("[robot_sim"))
argv = shlex.split(line.split("] ", 1)[1])
want_exe = os.path.join(install, "robot_sim/lib/robot_sim/robot_sim")
assert os.path.realpath(argv[0]) == want_exe, f"executable {argv[0]}, expected {want_exe}"
share = os.path.join(install, "robot_sim/share/robot_sim")
params = os.path.realpath(argv[argv.index("--params-file") + 1])
assert params == os.path.join(share, "config/robot_sim.yaml"), params
desc = [a for a in argv if a.startswith("robot_description_file:=")]
assert desc and os.path.realpath(desc[0].split(":=", 1)[1]) == os.path.join(share, "urdf/rx60b.urdf"), desc
print("rpq_launch: executable, parameter file and URDF all from the install space")
PY
  clean_shell_bg "$logs/rpq_launch.log" \
    'exec "$(ament_index_prefix rpq_launch)/lib/rpq_launch/rpq_launch" robot_sim rx60_sim.launch.xml'
  "$py" "$tests_dir/python/rclpy_peer.py" --domain "$domain" --timeout 30 robot-description \
    --out "$logs/robot_description.urdf" \
    >"$logs/robot_description.jsonl" 2>"$logs/robot_description.err" || {
    show_log "$logs/robot_description.err" 20
    show_log "$logs/rpq_launch.log" 30
    die "rclpy did not receive robot_description from robot_sim started by the installed rpq_launch"
  }
  # What RViz needs: the installed URDF with its mesh names as package:// URIs that the ament
  # index of a shell that sourced install/setup.bash resolves to the installed STL files.
  desc_files="\"$logs/robot_description.jsonl\" \"$logs/robot_description.urdf\" \"$urdf\""
  clean_shell "\"$py\" - $desc_files" <<'PY' || die "robot_description is not the installed URDF with package:// mesh URIs that the ament index resolves"
import hashlib, json, os, re, sys
from ament_index_python.packages import get_package_share_directory
rec = next(json.loads(l) for l in open(sys.argv[1]) if '"robot_description"' in l)
received = open(sys.argv[2], "rb").read()
urdf = sys.argv[3]
installed = open(urdf, "rb").read()
assert rec["has_robot_tag"], rec
assert rec["sha256"] == hashlib.sha256(received).hexdigest() and rec["length"] == len(received), rec
mesh = re.compile(rb'(<mesh\b[^>]*?\bfilename\s*=\s*")([^"]*)(")')
share = os.path.dirname(os.path.dirname(os.path.normpath(urdf)))
# the expected text: every relative mesh name of the installed URDF as package://robot_sim/...,
# every other byte unchanged
def to_package_uri(m):
    path = os.path.normpath(os.path.join(os.path.dirname(urdf), m.group(2).decode()))
    return m.group(1) + b"package://robot_sim/" + os.path.relpath(path, share).encode() + m.group(3)
expected = mesh.sub(to_package_uri, installed)
names = [m.group(2).decode() for m in mesh.finditer(received)]
assert names, "robot_description names no mesh"
bad = [n for n in names if not n.startswith("package://")]
assert not bad, f"mesh names RViz cannot resolve from the topic: {bad[:3]}"
resolved = set()
for n in names:
    pkg, _, inner = n[len("package://"):].partition("/")
    path = os.path.join(get_package_share_directory(pkg), inner)
    assert os.path.isfile(path) and path.endswith(".stl"), f"{n} -> {path}: no STL file there"
    assert open(path, "rb").read(84)[80:84] != b"\0\0\0\0", f"{n} -> {path}: an empty STL"
    resolved.add(os.path.realpath(path))
assert received == expected, "robot_description differs from the installed URDF beyond its mesh names"
print(f"rclpy: latched robot_description = share/robot_sim/urdf/rx60b.urdf ({len(installed)} bytes) "
      f"with {len(names)} mesh names as package:// URIs; the ament index resolves them to "
      f"{len(resolved)} installed STL files, e.g. {names[0]}")
PY
  stop_node
  [ "$rc" = 0 ] || { show_log "$logs/rpq_launch.log" 30; die "rpq_launch exited with status $rc after SIGINT (want 0)"; }
fi

# ---------------------------------------------------------------------------------------------
stage "colcon build again from a sourced shell"
# The usual edit-build loop: now AMENT_PREFIX_PATH also lists this workspace's own install
# prefixes, and colcon-ros-cargo writes [patch] entries for every Rust package it finds there.
colcon_build "$logs/colcon-rebuild.log" env "PATH=$venv/bin:$PATH" "AMENT_PREFIX_PATH=$(
  clean_shell 'printf %s "$AMENT_PREFIX_PATH"'):$venv" "CMAKE_PREFIX_PATH=$venv" "${cargo_env[@]}"
grep -E '^Summary' "$logs/colcon-rebuild.log" || true

# ---------------------------------------------------------------------------------------------
stage "checkout untouched, plain cargo works in it"
if [ -f "$ws/.cargo/config.toml" ]; then
  say "colcon-ros-cargo wrote ws/.cargo/config.toml (outside the checkout): $(tr '\n' ' ' <"$ws/.cargo/config.toml")"
fi
snapshot "$src" >"$logs/checkout.after-colcon"
if ! diff "$logs/checkout.before" "$logs/checkout.after-colcon" >"$logs/checkout.diff"; then
  cat "$logs/checkout.diff" >&2
  die "colcon changed the checkout ws/src/rpq-ros ('>' added or changed, '<' removed or changed): such files would end up in the repository"
fi
# --filter-platform: without it cargo metadata resolves the crates of every target platform
# (android_system_properties, windows-sys, ...), which `cargo build` never downloads on this host;
# the check is about this checkout's lock file and config, not about a full crate cache.
host_triple=$(rustc -vV | sed -n 's/^host: //p')
(cd "$src" && cargo metadata --locked --offline --filter-platform "$host_triple" --format-version 1 \
  >/dev/null 2>"$logs/cargo-locked.err") || {
  show_log "$logs/cargo-locked.err"
  die "cargo metadata --locked fails in the checkout after colcon build (config or lock file broken)"
}
# Same tree, same target directory as colcon's build of robot_sim: cargo picks up whatever
# colcon left in ws/.cargo/ and must still build (and find nothing to rebuild).
(cd "$src" && env "${cargo_env[@]}" cargo build --release --locked --offline -p robot_sim \
  --target-dir "$ws/build/robot_sim") >"$logs/cargo-build.log" 2>&1 || {
  show_log "$logs/cargo-build.log"
  die "cargo build fails in the checkout after colcon build"
}
grep -E 'Compiling|Finished|warning: Patch' "$logs/cargo-build.log" | tail -5 || true
snapshot "$src" >"$logs/checkout.after-cargo"
diff "$logs/checkout.before" "$logs/checkout.after-cargo" >&2 ||
  die "cargo build changed the checkout after the colcon build (lock file?)"

stage "done"
say "all colcon checks passed"
printf '\ncolcon check timings (%s build):\n' "$([ "$rebuilt_from_scratch" = yes ] && echo fresh || echo incremental)"
printf '  %s\n' "${timings[@]}"
printf '  %-50s %8s\n' "total" "$(fmt_ms "$(elapsed "$t_start")")"
