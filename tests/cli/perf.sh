#!/usr/bin/env bash
# `lossless perf` end to end: nccl-tests' layout that `lossless audit nccl -`
# reads with a real log's verdict; --json with its schema; the same bytes on a
# second run; every collective at packet level, read back by the audit;
# NCCL's choice per size and the protocols; --model beside the rows; bad input exits 2 with one line
# naming the flag; a QP out of retries exits 1.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "$0")/lib/expect.sh"

run=(perf all_reduce -b 32M -e 64M -f 2 -g 8 --nodes 2 -n 2 -w 0)
expect "perf prints the nccl-tests layout" 0 '^# Avg bus bandwidth +: [0-9]' -- "$BIN" "${run[@]}"
cp "$tmp/out" "$tmp/first"
expect "perf names lossless and the simulation" 0 'packet-level simulation of NCCL' -- "$BIN" "${run[@]}"
if ! cmp -s "$tmp/first" "$tmp/out"; then echo "FAIL perf: two runs differ"; fail=1; else echo "ok   perf: same bytes twice"; fi
expect "audit nccl reads perf's output" 0 'overall verdict: pass' -- \
  bash -c "\"$BIN\" ${run[*]} | \"$BIN\" audit nccl -"
expect "perf --json" 0 '' -- "$BIN" "${run[@]}" --json "$tmp/p.json"
python3 - "$tmp/p.json" <<'PY' || { echo "FAIL perf --json schema"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "lossless.perf/1", j["schema"]
assert j["kind"] == "simulation"
assert len(j["results"]) == 2
PY
expect "perf --model prints the model beside the simulated rows" 0 'alpha-beta model beside it' -- \
  "$BIN" perf all_gather -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 --model
expect "perf --model: a row of the model block" 0 '^# +8388608 +Ring +LL128 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' -- \
  "$BIN" perf all_gather -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 --model
expect "audit nccl reads perf --model" 0 'overall verdict: pass' -- \
  bash -c "\"$BIN\" perf all_reduce -b 8 -e 64M -f 64 -g 8 --nodes 2 -n 1 -w 0 --model | \"$BIN\" audit nccl -"
expect "perf: NCCL's choice per size" 0 '^# +8 +Tree +LL +1 ' -- \
  "$BIN" perf all_reduce -b 8 -e 8 -g 8 --nodes 2 -n 1 -w 0
expect "perf --proto LL128" 0 '^# +1048576 +Ring +LL128 ' -- \
  "$BIN" perf all_reduce -b 1M -e 1M -g 8 --nodes 2 -n 1 -w 0 --algo ring --proto ll128
expect "perf: NCCL_PROTO=LL256" 2 '^error: <env>: NCCL_PROTO: expected LL, LL128 or Simple' -- \
  env NCCL_PROTO=LL256 "$BIN" perf all_reduce -g 8 --nodes 2
expect "perf: --proto LL256" 2 '^error: <cli>: --proto: expected LL, LL128 or Simple' -- \
  "$BIN" perf all_reduce -g 8 --nodes 2 --proto LL256
expect "perf: NCCL_BUFFSIZE not a multiple of 4 KiB" 2 '^error: <env>: NCCL_BUFFSIZE: expected an integer' -- \
  env NCCL_BUFFSIZE=100000 "$BIN" perf all_reduce -g 8 --nodes 2
expect "perf: NCCL_MAX_NCHANNELS=0" 2 '^error: <env>: NCCL_MAX_NCHANNELS' -- \
  env NCCL_MAX_NCHANNELS=0 "$BIN" perf all_reduce -g 8 --nodes 2
expect "perf: NCCL_IB_QPS_PER_CONNECTION=0" 2 '^error: <env>: NCCL_IB_QPS_PER_CONNECTION: expected an integer from 1 to 128' -- \
  env NCCL_IB_QPS_PER_CONNECTION=0 "$BIN" perf all_reduce -g 8 --nodes 2
expect "perf: NCCL_IB_SPLIT_DATA_ON_QPS=2" 2 '^error: <env>: NCCL_IB_SPLIT_DATA_ON_QPS: expected an integer from 0 to 1' -- \
  env NCCL_IB_SPLIT_DATA_ON_QPS=2 "$BIN" perf all_reduce -g 8 --nodes 2
expect "perf: NCCL_IB_QPS_PER_CONNECTION=4 is named in the header" 0 '^# lossless: 4 queue pairs per network connection' -- \
  env NCCL_IB_QPS_PER_CONNECTION=4 "$BIN" perf all_reduce -b 64M -e 64M -g 8 --nodes 2 -n 1 -w 0 --algo ring
expect "perf: --qps 4 under Tree (and over NCCL_IB_QPS_PER_CONNECTION)" 0 '^# lossless: 4 queue pairs per network connection' -- \
  env NCCL_IB_QPS_PER_CONNECTION=2 "$BIN" perf all_reduce -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 --algo tree --qps 4
expect "perf: --qps 0" 2 '^error: <cli>: --qps: expected an integer from 1 to 128' -- \
  "$BIN" perf all_reduce -g 8 --nodes 2 --qps 0
expect "perf --timing: events and packet-hops on standard error" 0 'packet-hops' -- \
  "$BIN" perf all_reduce -b 1M -e 1M -g 8 --nodes 2 -n 1 -w 0 --timing
for coll in reduce_scatter all_gather broadcast reduce alltoall sendrecv; do
  expect "perf $coll at packet level" 0 "packet-level simulation of NCCL .*$coll" -- \
    "$BIN" perf $coll -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0
  expect "audit nccl reads perf $coll" 0 'overall verdict: pass' -- \
    bash -c "\"$BIN\" perf $coll -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 | \"$BIN\" audit nccl -"
done
# GPU nodes (docs/model/node.md): presets, the NIC map of a real topo -m, bad input.
expect "perf --gpu a100 names the node" 0 '^# lossless: node: a100, 8 GPUs, NVLink 300 GB/s per direction, PCIe Gen4 x16' -- \
  "$BIN" perf all_reduce -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 --gpu a100
expect "perf --topo: the real Della matrix's NICs are at NODE (no GPUDirect RDMA)" 0 'GPU1->mlx5_1 NODE host-bounce' -- \
  "$BIN" perf all_reduce -b 8M -e 8M -g 2 --nodes 2 -n 1 -w 0 --gpu a100 --topo tests/fixtures/real/topo/della_a100_2gpu_2nic_tabs.txt
expect "perf --topo output is read by audit nccl" 0 'overall verdict' -- \
  bash -c "\"$BIN\" perf all_reduce -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 --topo tests/fixtures/topo/dgx_h100_8gpu_8nic.txt | \"$BIN\" audit nccl -"
expect "perf --pcie-gen 6 lifts the Gen5 cap" 0 '^# lossless: node: b200, 8 GPUs, NVLink 900 GB/s per direction, PCIe Gen6 x16 \(116\.9 GB/s payload\)' -- \
  "$BIN" perf all_reduce -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 --fabric ib-xdr --gpu b200 --pcie-gen 6
expect "perf: --pcie-gen 7" 2 '^error: <cli>: --pcie-gen: expected an integer from 1 to 6' -- \
  "$BIN" perf all_reduce -g 8 --nodes 2 --pcie-gen 7
expect "perf: -g above the preset's GPUs" 2 '^error: <cli>: -g: expected at most 8 GPUs per node' -- \
  "$BIN" perf all_reduce -g 9 --nodes 2
expect "perf: -g above the matrix's GPUs" 2 '^error: <cli>: -g: expected at most 2 GPUs per node .*della' -- \
  "$BIN" perf all_reduce -g 4 --nodes 2 --topo tests/fixtures/real/topo/della_a100_2gpu_2nic_tabs.txt
expect "perf: unknown --gpu" 2 '^error: <cli>: --gpu: expected a100, h100, h200 or b200' -- \
  "$BIN" perf all_reduce -g 8 --nodes 2 --gpu v100
expect "perf: a NIC map that is not one per GPU" 2 '^error: <cli>: --nic-map: expected 8 NIC indices' -- \
  "$BIN" perf all_reduce -g 8 --nodes 2 --nic-map 0,1
expect "perf: unknown collective" 2 '^error: <cli>: collective: .*did you mean .all_gather.' -- \
  "$BIN" perf allgatherz -g 8 --nodes 2
expect "perf: a root beyond the ranks" 2 '^error: <cli>: -r: root 16 is not one of the 16 ranks' -- \
  "$BIN" perf broadcast -r 16 -g 8 --nodes 2
expect "perf --algo tree" 0 '^# +8388608 +Tree ' -- \
  "$BIN" perf all_reduce -b 8M -e 8M -g 8 --nodes 2 -n 1 -w 0 --algo tree
expect "perf: NCCL_ALGO=Tree" 0 'forced: NCCL_ALGO=tree' -- \
  env NCCL_ALGO=Tree "$BIN" perf all_reduce -b 256M -e 256M -g 8 --nodes 2 -n 1 -w 0
expect "perf: Tree for broadcast" 2 '^error: <cli>: --algo: Tree is an all_reduce algorithm' -- \
  "$BIN" perf broadcast --algo tree -g 8 --nodes 2
expect "perf: NCCL_ALGO=NVLS" 2 '^error: <env>: NCCL_ALGO: expected Ring or Tree' -- \
  env NCCL_ALGO=NVLS "$BIN" perf all_reduce -g 8 --nodes 2
expect "perf: one rank" 2 '^error: <cli>: -g: expected 2 or more ranks' -- "$BIN" perf all_reduce
expect "perf: -b above -e" 2 '^error: <cli>: -b' -- "$BIN" perf all_reduce -b 1G -e 8M
expect "perf: unknown fabric" 2 'unknown profile' -- "$BIN" perf all_reduce --fabric nope
cat > "$tmp/lossy.yaml" <<'YAML'
fabric: {preset: infiniband, link_rate: 400Gbps, cut_through: true}
transport: {retry_cnt: 0}
topology: {kind: rail-optimized, gpus: 16, gpus_per_node: 8, radix: 64}
faults:
  link_loss: {link: host0<->leaf0, every: 50}
YAML
expect "perf: a QP out of retries exits 1 and names it" 1 'retry count 0 exhausted' -- \
  "$BIN" perf all_reduce -b 64M -e 64M -g 8 --nodes 2 --scenario "$tmp/lossy.yaml"
# Issue 16 items 15/21/24: `--json -` puts the JSON on standard output (the
# nccl-tests text on standard error); an unwritable --json path is refused
# before anything is simulated; a progress line on a terminal only; Ctrl-C
# ends the sweep with the rows finished so far, marked interrupted, exit 130.
"$BIN" "${run[@]}" --json - >"$tmp/stdout.json" 2>"$tmp/stderr.txt"
if python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["schema"]=="lossless.perf/1" and j["interrupted"] is False' "$tmp/stdout.json" &&
   grep -q '^# Avg bus bandwidth' "$tmp/stderr.txt"; then echo "ok   perf --json -"
else echo "FAIL perf --json -"; head -c 300 "$tmp/stdout.json"; fail=1; fi
expect "perf: unwritable --json before simulating" 2 '^error: .*--json' -- \
  "$BIN" perf all_reduce -b 4G -e 4G -g 8 --nodes 64 --json /nonexistent-dir/p.json
if command -v script >/dev/null; then
  # A run longer than the progress line's 250 ms interval: 512 MiB takes about 3 s here,
  # 128 MiB as long under ASan (LOSSLESS_SANITIZED=1).
  tty_bytes=536870912
  [ "${LOSSLESS_SANITIZED:-0}" = 1 ] && tty_bytes=134217728
  script -qec "$BIN perf all_reduce -b $tty_bytes -e $tty_bytes -g 8 --nodes 2 -n 3 -w 0" /dev/null >"$tmp/tty.out" 2>&1
  if grep -qE $'\rsize '"$tty_bytes"$' B \(1/1\), iteration [0-9]+/6\033\[K' "$tmp/tty.out"; then echo "ok   perf progress on a terminal"
  else echo "FAIL perf progress on a terminal"; head -c 400 "$tmp/tty.out" | cat -v; echo; fail=1; fi
fi
if grep -q 'iteration' "$tmp/first"; then echo "FAIL perf: progress when piped"; fail=1
else echo "ok   perf: no progress when piped"; fi
# Ctrl-C once the first row has finished: the run sits on a terminal (a pty)
# so that its progress line says when the second row starts; no fixed sleep,
# so a slow (sanitizer) build or a loaded machine cannot leave 0 rows done.
rc=$(python3 - "$BIN" "$tmp/int.json" "$tmp/int.txt" <<'PY'
import os, pty, signal, sys, time
binary, json_path, text_path = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.execv(binary, [binary, "perf", "all_reduce", "-b", "64M", "-e", "64G", "-f", "2", "-g", "8",
                      "--nodes", "2", "-n", "5", "-w", "0", "--json", json_path])
out, sent, deadline = b"", False, time.time() + 600
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not sent and b"(2/11)" in out:
        os.kill(pid, signal.SIGINT)
        sent = True
    if not sent and time.time() > deadline:
        os.kill(pid, signal.SIGKILL)
_, status = os.waitpid(pid, 0)
open(text_path, "wb").write(out.replace(b"\r\n", b"\n"))
print(os.waitstatus_to_exitcode(status))
PY
)
if [ $rc = 130 ] && grep -q '^# interrupted (Ctrl-C): [0-9]* of the sweep.s rows finished' "$tmp/int.txt"; then echo "ok   perf interrupt-exit-130"
else echo "FAIL perf interrupt-exit-130: exit $rc"; head -20 "$tmp/int.txt"; fail=1; fi
python3 - "$tmp/int.json" <<'PY' || { echo "FAIL perf interrupt json"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["interrupted"] is True
assert 0 < len(j["results"]) < 11, len(j["results"])
PY
exit $fail
