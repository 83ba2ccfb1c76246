#!/usr/bin/env bash
# issue 10's performance benchmark of `lossless perf` (docs/benchmarks.md):
# the target command (128 GPUs, ib-ndr's default topology) and its growth
# with --nodes. Prints, per run, the wall time, user CPU and peak RSS
# (/usr/bin/time -v) and what `perf --timing` says (events, packet-hops and
# their rates), then the run's time per packet-hop against `bench ls-ring`
# (64 hosts, 64 MiB) raw and with InfiniBand credits (`--lossless ib`, the
# same link layer as the target's ib-ndr), each LS-RING rate the mean of
# one run just before and one just after, so that a machine's drift
# through the minutes weighs on both sides (docs/benchmarks.md, "Per
# packet-hop: what the 2x compares"). A benchmark, never a test: nothing
# here passes or fails.
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
# Packet-hops per second of one LS-RING run ($1: none or ib).
ls_rate() {
  "$bin" bench ls-ring --hosts 64 --bytes 64MiB --lossless "$1" |
    sed -n 's/.*packet_hops_per_s=\([^ ]*\).*/\1/p'
}
for n in "${nodes[@]}"; do
  tmp=$(mktemp)
  raw0=$(ls_rate none)
  ib0=$(ls_rate ib)
  # shellcheck disable=SC2086
  /usr/bin/time -v "$bin" perf all_reduce $sweep -g 8 --nodes "$n" --timing >"$tmp.out" 2>"$tmp"
  wall=$(grep 'Elapsed (wall clock)' "$tmp" | awk '{print $NF}')
  user=$(grep 'User time' "$tmp" | awk '{print $NF}')
  rss=$(grep 'Maximum resident' "$tmp" | awk '{print $NF}')
  timing=$(grep '^lossless perf timing' "$tmp" | sed 's/^lossless perf timing: //')
  busbw=$(grep '# Avg bus bandwidth' "$tmp.out" | awk '{print $NF}')
  echo "nodes $n ($((n * 8)) GPUs), $sweep: wall $wall, user ${user}s, peak RSS ${rss} KB;" \
       "$timing; avg busbw $busbw GB/s"
  raw1=$(ls_rate none)
  ib1=$(ls_rate ib)
  # The run's packet-hops over its simulation's wall time (--timing).
  hops=$(echo "$timing" | sed -n 's/^\([0-9.]*\) s wall, .*, \([0-9]*\) packet-hops .*/\2 \1/p')
  awk -v r0="$raw0" -v r1="$raw1" -v i0="$ib0" -v i1="$ib1" -v hw="$hops" 'BEGIN {
    split(hw, a, " "); h = a[1] / a[2]; raw = (r0 + r1) / 2; ib = (i0 + i1) / 2
    printf "  per packet-hop: %.2fx raw LS-RING (%.4g packet-hops/s against %.4g, before %.4g, after %.4g),", raw / h, h, raw, r0, r1
    printf " %.2fx LS-RING --lossless ib (%.4g, before %.4g, after %.4g)\n", ib / h, ib, i0, i1
  }'
  rm -f "$tmp" "$tmp.out"
done
