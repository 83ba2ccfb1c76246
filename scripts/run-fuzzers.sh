#!/usr/bin/env bash
# Run every libFuzzer target in BUILD_DIR/fuzz for SECONDS each, seeded from
# tests/fuzz/<target>/ when that folder exists. Fails on the first crash.
# Standard input is /dev/null: an input naming "-" (a scenario's topology
# file, read while loading) must not wait for a terminal.
set -euo pipefail
dir="$1"; secs="${2:-10}"
root="$(cd "$(dirname "$0")/.." && pwd)"
shopt -s nullglob
targets=("$dir"/fuzz/*_fuzz)
if [ ${#targets[@]} -eq 0 ]; then echo "fuzz: FAILED, no fuzz targets built in $dir/fuzz"; exit 1; fi
for t in "${targets[@]}"; do
  name="$(basename "$t")"
  work="$dir/fuzz-corpus/$name"; mkdir -p "$work"
  seeds=()
  [ -d "$root/tests/fuzz/$name" ] && seeds+=("$root/tests/fuzz/$name")
  echo "fuzz: $name for ${secs}s"
  "$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=0 \
       -artifact_prefix="$dir/" "$work" "${seeds[@]}" </dev/null >"$dir/$name.log" 2>&1 || {
    echo "fuzz: $name FAILED, last lines of $dir/$name.log:"; tail -40 "$dir/$name.log"; exit 1; }
done
echo "fuzz: all ${#targets[@]} targets ran clean"
