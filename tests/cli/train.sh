#!/usr/bin/env bash
# `lossless train` end to end: the per-step table and its notes, the same
# bytes twice, --json with its schema and an MFU below the compute fraction,
# DDP with tensor parallelism, pipeline stages, and bad input (exit 2, one
# line naming the flag and what does not fit).
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "$0")/lib/expect.sh"

run=(train --model 7b --strategy fsdp --nodes 2 --fabric ib-ndr)
expect "train prints a step row" 0 '^ +0 +[0-9]+\.[0-9]{3} ' -- "$BIN" "${run[@]}"
cp "$tmp/out" "$tmp/first"
expect "train says what is approximate" 0 '^# approximation: FSDP' -- "$BIN" "${run[@]}"
if ! cmp -s "$tmp/first" "$tmp/out"; then echo "FAIL train: two runs differ"; fail=1; else echo "ok   train: same bytes twice"; fi
expect "train --json" 0 '' -- "$BIN" "${run[@]}" --steps 2 --json "$tmp/t.json"
python3 - "$tmp/t.json" <<'PY' || { echo "FAIL train --json document"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "lossless.train/1", j["schema"]
assert j["config"]["recompute"] == "full", j["config"]
assert len(j["steps"]) == 2
for s in j["steps"]:
    assert 0 < s["mfu"] < j["config"]["efficiency"], s
    assert s["step_ms"] >= j["ideal_step_ms"], s
    assert abs(s["exposed_ms"] - (s["step_ms"] - s["compute_ms"])) < 1e-6, s
    for k in ("pause_frames", "paused_us", "ecn_marks", "cnps", "retransmissions"):
        assert k in s, k
PY
expect "train --json - writes the document to stdout" 0 '"schema": "lossless.train/1"' -- \
  "$BIN" "${run[@]}" --json -
expect "train ddp with tensor parallelism" 0 'tensor-parallel all-reduces are analytic over NVLink' -- \
  "$BIN" train --model 7b --strategy ddp --tp 2 --nodes 2 --bucket-mb 50
expect "train hsdp" 0 '^# approximation: HSDP' -- "$BIN" train --model 13b --strategy hsdp --nodes 2
expect "train: pipeline stages" 0 '^# pipeline: 4 stages of 8 layers \(1 node each; .* 1F1B order .* bubble \(P-1\)/\(m\+P-1\) = 27\.3% for equal stages' -- \
  "$BIN" train --model 7b --strategy ddp --nodes 4 --pp 4 --micro-batches 8 --json "$tmp/pp.json"
grep -q 'bubble(ms) pp_comm(ms)  pp_GB/GPU' "$tmp/out" || { echo "FAIL train --pp: breakdown columns"; fail=1; }
python3 - "$tmp/pp.json" <<'PY' || { echo "FAIL train --pp --json"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["config"]["pp"] == 4 and j["config"]["accumulation"] == 8, j["config"]
s = j["steps"][0]
assert s["bubble_ms"] > 0 and s["pp_comm_ms"] > 0, s
assert s["pp_bytes"] == 2 * 3 * 8 * (2 * 4096 * 4096), s
assert abs(s["exposed_ms"] - (s["step_ms"] - s["compute_ms"] - s["bubble_ms"])) < 1e-6, s
PY
expect "train: --pp not dividing the layers" 2 "^error: <cli>: --pp: expected a pipeline degree that divides the model's 32 layers, got 3 \(10 layers per stage leaves 2 over\)$" -- \
  "$BIN" train --model 7b --strategy ddp --nodes 3 --pp 3
expect "train: --pp not dividing the nodes" 2 '^error: <cli>: --pp: expected pp x tp x dp = 48 GPUs with whole nodes per stage \(stages are across nodes\): 4 stages do not divide 6 nodes$' -- \
  "$BIN" train --model 7b --strategy ddp --nodes 6 --pp 4
expect "train: --pp with fsdp" 2 '^error: <cli>: --strategy: expected ddp with --pp 2' -- \
  "$BIN" train --model 7b --nodes 2 --pp 2
expect "train: no micro-batches" 2 '^error: <cli>: --micro-batches: expected 1 or more micro-batches per step, got 0$' -- \
  "$BIN" train --model 7b --strategy ddp --nodes 2 --pp 2 --micro-batches 0
expect "train: a stalled NIC at step 1" 0 '^# stall at step 1: \+[0-9.]+ ms against step 0' -- \
  "$BIN" train --model 1.1b --nodes 2 --fabric roce-tuned --steps 2 --stall-step 1 --stall-us 300
expect "train: a slow GPU from step 1" 0 '^# cost of the faults: \+[0-9.]+ ms over 1 faulted step = \+[0-9.]+ steps of the unfaulted step' -- \
  "$BIN" train --model 1.1b --nodes 2 --steps 2 --slow-gpu 5:1.5@1 --json "$tmp/slow.json"
grep -q '^# exact steps (every collective simulated at packet level): 1$' "$tmp/out" &&
  grep -q '^# step time from step 1 on: p50 [0-9.]* p99 [0-9.]* max [0-9.]* ms over 1 step$' "$tmp/out" ||
  { echo "FAIL train --slow-gpu: exact steps and distribution lines"; fail=1; }
python3 - "$tmp/slow.json" <<'PY' || { echo "FAIL train --slow-gpu --json"; fail=1; }
import json, sys
j = json.load(open(sys.argv[1]))
f = j["faults"][0]
assert f == {"kind": "slow_gpu", "gpu": 5, "factor": 1.5, "first_step": 1, "last_step": 1}, f
s0, s1 = j["steps"]
assert not s0["faulted"] and s1["faulted"] and s1["exact"] and s1["compute_factor"] == 1.5
assert abs(s1["compute_ms"] - 1.5 * s0["compute_ms"]) < 1e-3, (s0, s1)
fs = j["fault_summary"]
assert abs(fs["lost_ms"] - (s1["step_ms"] - s0["step_ms"])) < 1e-6, fs
PY
expect "train: --slow-gpu rank out of range" 2 '^error: <cli>: --slow-gpu: expected a GPU rank from 0 to 15 \(2 nodes x 8 GPUs\), got 16$' -- \
  "$BIN" train --model 7b --nodes 2 --steps 2 --slow-gpu 16:2@1
expect "train: --degrade on a link the fabric lacks" 2 '^error: <cli>: --degrade: expected a link of this topology such as host0-leaf0' -- \
  "$BIN" train --model 7b --nodes 2 --steps 2 --degrade 'spine9<->leaf0=1e-9@1'
expect "train: --degrade BER out of range" 2 '^error: <cli>: --degrade: expected a bit error rate above 0 and below 1' -- \
  "$BIN" train --model 7b --nodes 2 --steps 2 --degrade 'host0<->leaf0=1.5@1'
expect "train: --stall-nic without a duration" 2 '^error: <cli>: --stall-nic: expected HOST@STEP:US' -- \
  "$BIN" train --model 7b --nodes 2 --steps 2 --stall-nic 3@1
expect "train: --grad-precision fp16" 2 "^error: <cli>: --grad-precision: expected bf16 or fp8, got \"fp16\"" -- \
  "$BIN" train --model 7b --nodes 2 --grad-precision fp16
expect "train: fp8 gradients" 0 '^# precision: gradients are reduced in fp8' -- \
  "$BIN" train --model 7b --strategy ddp --tp 2 --nodes 2 --grad-precision fp8
expect "train: a stall after the last step" 2 '^error: <cli>: --stall-step: expected a step from 0 to 1' -- \
  "$BIN" train --model 7b --nodes 2 --steps 2 --stall-step 2
expect "train: 70B under DDP does not fit" 2 \
  '^error: <cli>: --strategy: 70b with ddp on 128 GPUs .* GB more than the h100.s 80.0 GB of HBM' -- \
  "$BIN" train --model 70b --strategy ddp --nodes 16
expect "train: TP above the GPUs per node" 2 '^error: <cli>: --tp: expected a tensor-parallel degree that divides the 8 GPUs per node' -- \
  "$BIN" train --model 7b --tp 16 --nodes 2
expect "train: global batch not divisible" 2 '^error: <cli>: --global-batch: expected a multiple of' -- \
  "$BIN" train --model 7b --nodes 2 --global-batch 17
expect "train: unknown model" 2 "^error: <cli>: --model: expected one of 1.1b, 7b, 13b, 70b, got '8b'" -- \
  "$BIN" train --model 8b
expect "train: unknown strategy" 2 '^error: <cli>: --strategy: expected ddp, fsdp or hsdp' -- \
  "$BIN" train --strategy zero2
expect "train: unknown fabric" 2 'unknown profile' -- "$BIN" train --model 7b --nodes 2 --fabric nope
expect "train: efficiency out of range" 2 '^error: <cli>: --efficiency' -- \
  "$BIN" train --model 7b --nodes 2 --efficiency 1.5
expect "train: zero steps" 2 '^error: <cli>: --steps' -- "$BIN" train --model 7b --nodes 2 --steps 0

# Issue 16 items 15 and 24 for train: an unwritable --json is found before
# any step is simulated, a full disk is exit 2; Ctrl-C ends the run at a
# collective with the steps done so far, the JSON marked interrupted, exit 130.
expect "train: --json into no folder" 2 "^error: $tmp/none/t.json: --json: cannot write the file: No such file or directory\$" -- \
  timeout 5 "$BIN" train --model 7b --nodes 8 --steps 20 --json "$tmp/none/t.json"
expect "train: --json /dev/full" 2 '^error: /dev/full: --json: cannot write the file: No space left on device$' -- \
  "$BIN" "${run[@]}" --json /dev/full
expect "train: stdout full" 2 '^error: <stdout>: cannot write: No space left on device$' -- \
  bash -c '"$@" >/dev/full' - "$BIN" "${run[@]}"
# --exact simulates every collective of every step (minutes on any machine):
# the interrupt always comes first.
"$BIN" train --model 7b --nodes 8 --steps 20 --exact --json "$tmp/int.json" >"$tmp/int.txt" 2>&1 &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
if [ $rc = 130 ] && grep -q '^# interrupted: [0-9]* of 20 steps done' "$tmp/int.txt" &&
   python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["interrupted"] is True and len(j["steps"]) < 20' "$tmp/int.json"; then
  echo "ok   train: Ctrl-C exits 130 with a partial document"
else echo "FAIL train: Ctrl-C: exit $rc"; tail -3 "$tmp/int.txt"; fail=1; fi
exit $fail
