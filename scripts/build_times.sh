#!/usr/bin/env bash
# What each translation unit of a build cost to compile, from the log that scripts/build.sh has
# its compile launcher (scripts/compile_timer.py) write: BUILD/compile_times.tsv.
# Usage: scripts/build_times.sh [BUILD_DIR] [--top N] [--check]
#   BUILD_DIR  build/ (or $MPSIM_BUILD_DIR) by default
#   --top N    print the N slowest units (default 10; 0: all)
#   --check    exit 1 when a unit crossed the limits: 60 s in a plain build, 120 s in a sanitizer
#              build (MPSIM_SANITIZE set), 1536 MiB of compiler memory in any build
# A unit counts with its latest compile; one that ccache answered shows its lookup's time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MPSIM_BUILD_DIR:-$root/build}
top=10
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --top) top=$2; shift 2 ;;
    --check) check=1; shift ;;
    -*) echo "build_times.sh: unknown option '$1'" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
[ -d "$build" ] && build=$(cd "$build" && pwd)
log=$build/compile_times.tsv
if [ ! -f "$log" ]; then
  echo "build_times.sh: no compile log at $log (build with scripts/build.sh)" >&2
  exit 2
fi
limit_s=60
if grep -Eq '^MPSIM_SANITIZE:STRING=.+' "$build/CMakeCache.txt" 2>/dev/null; then limit_s=120; fi
limit_mib=1536
# The latest line per object that still exists (a removed source leaves its line behind), slowest
# first, the objects named relative to the build.
latest=$(awk -F'\t' '{ row[$4] = $0 } END { for (o in row) print row[o] }' "$log" |
  while IFS=$'\t' read -r secs mib status obj; do
    if [ -e "$obj" ]; then printf '%s\t%s\t%s\t%s\n' "$secs" "$mib" "$status" "${obj#"$build"/}"; fi
  done | sort -t$'\t' -k1,1 -rn)
units=$(printf '%s\n' "$latest" | grep -c . || true)
total=$(printf '%s\n' "$latest" | awk -F'\t' '{ s += $1 } END { printf "%.0f", s }')
echo "compile times of $units units in $build ($total s in all; limits ${limit_s} s, ${limit_mib} MiB)"
printf '%8s %8s  %s\n' seconds MiB unit
shown=$latest
# awk reads to the end: head would exit early and, under pipefail, printf's SIGPIPE (141)
# would end the script when printf had not finished writing.
[ "$top" -gt 0 ] && shown=$(printf '%s\n' "$latest" | awk -v n="$top" 'NR <= n')
printf '%s\n' "$shown" | awk -F'\t' '{ printf "%8.1f %8d  %s\n", $1, $2, $4 }'
[ "$check" -eq 1 ] || exit 0
over=$(printf '%s\n' "$latest" |
  awk -F'\t' -v s="$limit_s" -v m="$limit_mib" '$1 > s || $2 > m { printf "%8.1f %8d  %s\n", $1, $2, $4 }')
if [ -n "$over" ]; then
  echo "build_times.sh: units over the limits (${limit_s} s, ${limit_mib} MiB):" >&2
  echo "$over" >&2
  exit 1
fi
echo "build_times.sh: every unit within ${limit_s} s and ${limit_mib} MiB"
