#!/usr/bin/env bash
# `lossless perf --trace / --pcap` (docs/capture.md): the timeline of a ring
# all-reduce sweep on the shared-cloud profile (tenant traffic makes PAUSE,
# ECN marks and CNPs) has, per collective, rank and channel, the step slices
# the ring plan defines (loops x 2(n-1)), never overlapping on a thread, and
# PFC frames, ECN marks and CNPs per port equal perf's JSON link counters
# (tests/cli/capture/check_perf.py); reduce_scatter (n-1 steps) the same;
# tshark reads the capture without a malformed frame; same seed, same bytes;
# a scenario's outputs.trace is honoured; bad values exit 2.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$(realpath "$1")"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"
dir=tests/cli/capture

run_check() {  # name, then perf arguments
  local name="$1"; shift
  expect "perf $name with a timeline" 0 "" -- "$BIN" perf "$@" --json "$tmp/p.json" --trace "$tmp/t.json"
  if python3 $dir/check_perf.py "$tmp/p.json" "$tmp/t.json" >"$tmp/check.out" 2>&1; then
    echo "ok   perf $name: the timeline matches the ring plan and the run ($(grep -c '^ok' "$tmp/check.out") checks)"
    grep -E "step slices over" "$tmp/check.out"
  else
    cat "$tmp/check.out"; fail=1
  fi
}
# 8 ranks (4 nodes x 2 GPUs): NVLink and network hops; 3 ranks: shares that
# do not divide evenly; 64 MiB on 3 ranks: several chunk loops per channel.
# --proto Simple: the plan check (check_perf.py) knows the ring plan of
# NCCL's Simple protocol (its chunk); NCCL's own choice would pick LL128 here.
run_check "all_reduce 8 ranks" all_reduce -b 32M -e 32M -g 2 --nodes 4 --fabric cloud-shared -n 1 -w 0 --proto Simple
run_check "all_reduce 3 ranks" all_reduce -b 16M -e 64M -f 4 -g 1 --nodes 3 --fabric cloud-shared -n 1 -w 0 --proto Simple
run_check "reduce_scatter" reduce_scatter -b 64M -e 64M -g 2 --nodes 2 --fabric cloud-shared -n 1 -w 0 --proto Simple
cp "$tmp/t.json" "$tmp/t1.json"
"$BIN" perf reduce_scatter -b 64M -e 64M -g 2 --nodes 2 --fabric cloud-shared -n 1 -w 0 \
  --trace "$tmp/t2.json" >/dev/null 2>&1
cmp -s "$tmp/t1.json" "$tmp/t2.json" && echo "ok   perf: same seed, same timeline bytes" ||
  { echo "FAIL perf: two runs wrote different timelines"; fail=1; }

# The capture: tshark dissects it whole (when tshark is there).
if command -v tshark >/dev/null 2>&1 || [ "${CI:-}" = true ]; then
  expect "perf with a capture" 0 "" -- "$BIN" perf all_reduce -b 4M -e 4M -g 1 --nodes 2 \
    --fabric roce-400g -n 1 -w 0 --pcap "$tmp/p.pcapng"
  frames=$(tshark -r "$tmp/p.pcapng" 2>/dev/null | wc -l)
  bad=$(tshark -r "$tmp/p.pcapng" -Y '_ws.malformed || _ws.expert.severity >= 0x600000' 2>/dev/null | wc -l)
  bth=$(tshark -r "$tmp/p.pcapng" -Y "infiniband.bth || macc" 2>/dev/null | wc -l)
  if [ "$frames" -gt 0 ] && [ "$bad" = 0 ] && [ "$bth" = "$frames" ]; then
    echo "ok   perf capture: $frames RoCE v2 frames, none malformed"
  else
    echo "FAIL perf capture: $frames frames, $bad malformed or with expert warnings, $bth with a BTH"; fail=1
  fi
fi

# A scenario's outputs.trace (relative to the scenario's folder) and its limit.
cat > "$tmp/fab.yaml" <<'YAML'
name: traced-fabric
fabric:
  preset: roce
topology:
  kind: ls-ring
  gpus: 2
  hosts_per_leaf: 2
  spines: 1
outputs:
  trace: from-scenario.json
  trace_limit: 16KiB
YAML
expect "outputs.trace of a --scenario, cut by its limit" 0 \
  "warning: outputs.trace: the timeline reached outputs.trace_limit" -- \
  "$BIN" perf all_reduce -b 8M -e 8M -g 1 --nodes 2 --scenario "$tmp/fab.yaml" -n 1 -w 0
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['otherData']['events_cut'] > 0" \
  "$tmp/from-scenario.json" && echo "ok   the cut timeline is valid JSON and says how much it left out" ||
  { echo "FAIL the scenario's timeline"; fail=1; }

# Bad values: exit 2 with the flag named.
expect "--trace without a file" 2 "--trace" -- "$BIN" perf all_reduce --trace ""
expect "--trace into a missing folder" 2 "--trace" -- "$BIN" perf all_reduce -b 1M -e 1M \
  --nodes 2 --trace "$tmp/no/such/t.json"
expect "--pcap and --json both on standard output" 2 "standard output" -- "$BIN" perf all_reduce \
  -b 1M -e 1M --nodes 2 --pcap - --json -
expect "--trace with --model" 2 "--trace" -- "$BIN" perf all_reduce --model --trace "$tmp/m.json"
exit $fail
