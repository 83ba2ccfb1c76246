#!/usr/bin/env bash
# Two ranks against one on loaded 1,024-host fabrics (issue 15; docs/benchmarks.md,
# "Two ranks on a fully loaded fabric"). Alternates, ROUNDS times, a serial run and an
# `mpirun -np 2` run of each case with BIN (and with OLD, when given, at -np 2), prints
# each run's timing and distributed lines with the load average, then the min and median
# of the `run` figure per case and mode.
#
# Usage: scripts/bench-dist.sh [-r ROUNDS] [-c CASES] BIN [OLD]
#   CASES: comma-separated from perm-ft, perm-ls, incast-ft, incast-ls (default: all four)
#   Run from the repository root. Each rank's CPU comes from /usr/bin/time.
set -u
rounds=3
cases="perm-ft,perm-ls,incast-ft,incast-ls"
while getopts "r:c:" o; do
  case "$o" in
    r) rounds="$OPTARG" ;;
    c) cases="$OPTARG" ;;
    *) echo "usage: $0 [-r ROUNDS] [-c CASES] BIN [OLD]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r ROUNDS] [-c CASES] BIN [OLD]" >&2; exit 2; }
BIN="$1"
OLD="${2:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPI=(mpirun --oversubscribe --allow-run-as-root -np 2)
PERM=(scenarios/bench-permutation-1024.yaml --timing)
INCAST=(scenarios/roce-incast.yaml --set topology.gpus=1024 --set topology.radix=64
        --set traffic.0.bytes=4MiB --set traffic.1.bytes=1MiB --set traffic.1.start=2us --timing)
FT=(--set topology.kind=fat-tree --set topology.radix=32)
LS=(--set topology.kind=leaf-spine --set topology.radix=64)
args() {
  case "$1" in
    perm-ft) echo "${PERM[*]} ${FT[*]}" ;;
    perm-ls) echo "${PERM[*]} ${LS[*]}" ;;
    incast-ft) echo "${INCAST[*]} ${FT[*]}" ;;
    incast-ls) echo "${INCAST[*]} ${LS[*]}" ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
one() {  # case mode binary [mpirun...]
  local c="$1" mode="$2" bin="$3"; shift 3
  # shellcheck disable=SC2046
  "$@" /usr/bin/time -f 'rank CPU %U s user %S s sys' "$bin" run $(args "$c") 2>&1 |
    grep -E '^timing|^distributed|^rank CPU' | sed "s/^/$c $mode /" | tee -a "$log"
}
IFS=, read -r -a list <<< "$cases"
for i in $(seq 1 "$rounds"); do
  for c in "${list[@]}"; do
    echo "# round $i, $c: $(uptime)"
    one "$c" serial "$BIN"
    one "$c" np2 "$BIN" "${MPI[@]}"
    [ -n "$OLD" ] && one "$c" old-np2 "$OLD" "${MPI[@]}"
  done
done
echo "# run (s) per case and mode: runs, min, median"
grep ' timing ' "$log" | sed -E 's/^([^ ]+) ([^ ]+) timing .* run ([0-9.]+) s.*/\1 \2 \3/' |
  sort -k1,1 -k2,2 -k3,3n |
  awk '{k=$1" "$2; v[k]=v[k]" "$3; n[k]++; a[k,n[k]]=$3}
       END {for (k in n) printf "%-18s %s   min %s  median %s\n", k, v[k], a[k,1], a[k,int((n[k]+1)/2)]}' |
  sort
