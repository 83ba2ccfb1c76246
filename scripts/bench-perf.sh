#!/usr/bin/env bash
# issue 10's performance benchmark of `lossless perf` (docs/benchmarks.md):
# the target command (128 GPUs, ib-ndr's default topology) and its growth
# with --nodes. Prints, per run, the wall time, user CPU and peak RSS
# (/usr/bin/time -v) and what `perf --timing` says (events, packet-hops and
# their rates). A benchmark, never a test: nothing here passes or fails.
#
#   scripts/bench-perf.sh [LOSSLESS] [NODES...]
#   LOSSLESS: the binary (default build/lossless); NODES: default 16 32 64.
#   SWEEP: the size flags (default the "-b 8M -e 1G -f 2 -n 5 -w 1").
set -euo pipefail
bin=${1:-build/lossless}
shift || true
nodes=("$@")
[ ${#nodes[@]} -eq 0 ] && nodes=(16 32 64)
sweep=${SWEEP:-"-b 8M -e 1G -f 2 -n 5 -w 1"}
for n in "${nodes[@]}"; do
  tmp=$(mktemp)
  # shellcheck disable=SC2086
  /usr/bin/time -v "$bin" perf all_reduce $sweep -g 8 --nodes "$n" --timing >"$tmp.out" 2>"$tmp"
  wall=$(grep 'Elapsed (wall clock)' "$tmp" | awk '{print $NF}')
  user=$(grep 'User time' "$tmp" | awk '{print $NF}')
  rss=$(grep 'Maximum resident' "$tmp" | awk '{print $NF}')
  timing=$(grep '^lossless perf timing' "$tmp" | sed 's/^lossless perf timing: //')
  busbw=$(grep '# Avg bus bandwidth' "$tmp.out" | awk '{print $NF}')
  echo "nodes $n ($((n * 8)) GPUs), $sweep: wall $wall, user ${user}s, peak RSS ${rss} KB;" \
       "$timing; avg busbw $busbw GB/s"
  rm -f "$tmp" "$tmp.out"
done
