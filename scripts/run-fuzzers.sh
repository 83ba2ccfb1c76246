#!/usr/bin/env bash
# Run every libFuzzer target in BUILD_DIR/fuzz for SECONDS each, JOBS targets at
# a time (default 1; each libFuzzer process uses one core), seeded from
# tests/fuzz/<target>/ when that folder exists. Fails when any target crashed,
# leaked, hit a sanitizer report or timed out, with the end of its log.
# Standard input is /dev/null: an input naming "-" (a scenario's topology
# file, read while loading) must not wait for a terminal.
# Usage: scripts/run-fuzzers.sh BUILD_DIR [SECONDS] [JOBS]
set -euo pipefail
dir="$1"; secs="${2:-10}"; jobs="${3:-1}"
root="$(cd "$(dirname "$0")/.." && pwd)"
shopt -s nullglob
targets=("$dir"/fuzz/*_fuzz)
if [ ${#targets[@]} -eq 0 ]; then echo "fuzz: FAILED, no fuzz targets built in $dir/fuzz"; exit 1; fi
case "$jobs" in ''|*[!0-9]*|0) echo "fuzz: JOBS must be a positive integer, got '$jobs'" >&2; exit 2;; esac

run_one() {
  local t="$1" name work
  name="$(basename "$t")"
  work="$dir/fuzz-corpus/$name"; mkdir -p "$work"
  local seeds=()
  [ -d "$root/tests/fuzz/$name" ] && seeds+=("$root/tests/fuzz/$name")
  "$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 \
       -artifact_prefix="$dir/" "$work" "${seeds[@]}" </dev/null >"$dir/$name.log" 2>&1
}

# Start up to $jobs targets, then one more each time one ends; every exit status is collected.
declare -A pid_name=()
failed=()
reap() {
  local pid rc=0
  wait -n -p pid "${!pid_name[@]}" || rc=$?
  if [ "$rc" -ne 0 ]; then failed+=("${pid_name[$pid]}"); fi
  unset "pid_name[$pid]"
}
for t in "${targets[@]}"; do
  while [ ${#pid_name[@]} -ge "$jobs" ]; do reap; done
  echo "fuzz: $(basename "$t") for ${secs}s"
  run_one "$t" &
  pid_name[$!]="$(basename "$t")"
done
while [ ${#pid_name[@]} -gt 0 ]; do reap; done

if [ ${#failed[@]} -gt 0 ]; then
  for name in "${failed[@]}"; do
    echo "fuzz: $name FAILED, last lines of $dir/$name.log:"; tail -40 "$dir/$name.log"
  done
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran clean"
