#!/usr/bin/env bash
# `lossless perf` under real MPI (docs/perf.md, "Over MPI ranks";
# docs/parallel.md): mpirun -np 1/2/3 gives the serial sweep's nccl-tests
# text and JSON byte for byte (cmp) on a RoCE leaf-spine (NCCL's Tree at these
# sizes), Ring forced at -np 2 and sendrecv on an InfiniBand fat tree at -np 3,
# with cross-rank events above zero in the report line on standard error;
# --pcap and --trace (the files `cmp`-equal) and the cloud-shared profile's
# other tenants at -np 2; bad input (more ranks than partition units) is
# reported once, by rank 0, exit 2, and no rank hangs.
# Usage: perf_mpi.sh PATH/TO/lossless
# Registered only in a build with MPI (CMake LOSSLESS_MPI); without mpirun
# it skips (exit 77), under CI=true it fails.
set -u
BIN="$1"
. "$(dirname "$0")/lib/require.sh"
. "$(dirname "$0")/lib/mpi.sh"
fail=0
# same NAME "NP..." PERF-ARGS...: each -np gives the serial text and JSON.
same() {
  local name="$1" nps="$2"; shift 2
  "$BIN" perf "$@" --json "$tmp/serial.json" > "$tmp/serial.txt" 2> "$tmp/serial.err" ||
    { echo "FAIL $name: serial run"; cat "$tmp/serial.err"; fail=1; return; }
  local np
  for np in $nps; do
    if ! timeout 300 "${MPIRUN[@]}" -np "$np" "$BIN" perf "$@" --json "$tmp/np.json" \
        > "$tmp/np.txt" 2> "$tmp/np.err"; then
      echo "FAIL $name: -np $np exited non-zero"; cat "$tmp/np.err"; fail=1; continue
    fi
    cmp -s "$tmp/serial.txt" "$tmp/np.txt" || { echo "FAIL $name: -np $np: text differs"; fail=1; }
    cmp -s "$tmp/serial.json" "$tmp/np.json" || { echo "FAIL $name: -np $np: JSON differs"; fail=1; }
    local line
    line=$(grep "^distributed:" "$tmp/np.err")
    echo "$name -np $np: $(echo "$line" | cut -c1-160)..."
    if [ "$np" -gt 1 ] && ! echo "$line" | grep -Eq ' [1-9][0-9]* cross-rank events'; then
      echo "FAIL $name: -np $np: no cross-rank event"; fail=1
    fi
  done
}
same roce-tree "1 2 3" all_reduce -b 1M -e 2M -f 2 -g 8 --nodes 16 --scenario scenarios/roce-incast.yaml -n 1 -w 0
same roce-ring "2" all_reduce -b 1M -e 1M -g 8 --nodes 16 --scenario scenarios/roce-incast.yaml -n 1 -w 0 --algo ring
# alltoall of 128 GPUs is 16,256 connections (7 s here): the loopback tests
# (distrun_tests DistributedPerf.*) cover it on a smaller fabric.
same ib-sendrecv "3" sendrecv -b 1M -e 1M -g 8 --nodes 16 --scenario scenarios/ib-fat-tree.json -n 1 -w 0
# --pcap and --trace at -np 2: the files are the serial ones; the
# cloud-shared profile's other tenants at -np 2.
caps() {
  "$BIN" perf "$@" --pcap "$tmp/serial.pcapng" --trace "$tmp/serial-trace.json" > "$tmp/serial.txt" \
    2> /dev/null || { echo "FAIL perf captures: serial run"; fail=1; return; }
  if ! timeout 300 "${MPIRUN[@]}" -np 2 "$BIN" perf "$@" --pcap "$tmp/np.pcapng" \
      --trace "$tmp/np-trace.json" > "$tmp/np.txt" 2> "$tmp/np.err"; then
    echo "FAIL perf captures: -np 2 exited non-zero"; cat "$tmp/np.err"; fail=1; return
  fi
  cmp -s "$tmp/serial.txt" "$tmp/np.txt" || { echo "FAIL perf captures: text differs"; fail=1; }
  cmp -s "$tmp/serial.pcapng" "$tmp/np.pcapng" || { echo "FAIL perf captures: pcapng differs"; fail=1; }
  cmp -s "$tmp/serial-trace.json" "$tmp/np-trace.json" || { echo "FAIL perf captures: trace differs"; fail=1; }
  echo "perf captures -np 2: $(wc -c < "$tmp/np.pcapng") pcapng bytes, $(wc -c < "$tmp/np-trace.json") trace bytes"
  grep -Eq '^distributed: .* [1-9][0-9]* cross-rank events' "$tmp/np.err" ||
    { echo "FAIL perf captures: -np 2: no cross-rank event"; fail=1; }
  rm -f "$tmp"/*.pcapng "$tmp"/*trace.json
}
# 128 GPUs on the leaf-spine (the ring crosses the spines), a small size.
caps all_reduce -b 16K -e 16K -g 8 --nodes 16 --scenario scenarios/roce-incast.yaml -n 1 -w 0 --algo ring
# 4 nodes: 3 per leaf, so the ring and the tenants cross the spines.
same cloud-shared "2 3" all_reduce -b 1M -e 1M -g 8 --nodes 4 --fabric cloud-shared -n 1 -w 0
# Bad input: once, by rank 0, exit 2, every rank ends.
bad() {
  local name="$1" np="$2" pattern="$3"; shift 3
  timeout 120 "${MPIRUN[@]}" -np "$np" "$BIN" perf "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
  if [ "$rc" = 2 ] && [ "$(grep -c '^error: ' "$tmp/err")" = 1 ] && grep -Eq "$pattern" "$tmp/err"; then
    echo "ok   $name"
  else
    echo "FAIL $name: exit $rc"; cat "$tmp/out" "$tmp/err"; fail=1
  fi
}
# --fabric ib-ndr, 2 nodes: one scalable unit and the spines, 2 partition units.
bad mpi-perf-too-many-ranks 3 \
  '^error: <cli>: mpirun -np: expected at most 2 ranks: the fabric has 2 partition units' \
  all_reduce -b 1M -e 1M -g 2 --nodes 2 --fabric ib-ndr
[ "$fail" = 0 ] && echo "perf_mpi: every rank count gives the serial bytes"
exit "$fail"
