#!/usr/bin/env bash
# One exit-code rule for every tool (docs/errors.md): 0 pass or
# completed, 1 a finding (a failed check), 2 bad input or usage, 3
# indeterminate. Each tool is run on an input of each kind it can meet, and
# the README states the same rule.
# Usage: bash tests/cli/exit_codes.sh <path-to-lossless>   (from the repo root)
set -u
BIN=${1:?usage: exit_codes.sh <lossless binary>}
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

N=tests/fixtures/nccl
T=tests/fixtures/topo
Q=tests/fixtures/qos
NDR=(--preset ib-ndr --nics-per-node 8)

# run: 0 when it reached its stop condition, finished or not (here the time
# limit, before any flow finished); 1 a deadlock verdict; 2 bad input.
expect run-completed 0 '^result     completed' -- "$BIN" run scenarios/roce-incast.yaml
expect run-time-limit 0 '^result     time limit: 0/' -- "$BIN" run scenarios/roce-incast.yaml --set stop_time=100ns
expect run-deadlock 1 '^DEADLOCK' -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml
expect run-bad 2 '' -- "$BIN" run scenarios/roce-incast.yaml --set fabric.link_rate=fast
expect run-usage 2 '' -- "$BIN" run
expect validate-ok 0 '' -- "$BIN" validate scenarios/roce-incast.yaml
expect validate-bad 2 '' -- "$BIN" validate "$tmp/none.yaml"
expect deadlock-none 0 '' -- "$BIN" deadlock scenarios/roce-incast.yaml
expect deadlock-cycle 1 '' -- "$BIN" deadlock scenarios/deadlock-ring4.yaml
expect deadlock-bad 2 '' -- "$BIN" deadlock scenarios/roce-incast.yaml --priority 9
# The audits: pass 0, fail 1, indeterminate 3, bad input 2, in each tool.
expect nccl-pass 0 '' -- "$BIN" audit nccl $N/g2_allreduce_healthy.log "${NDR[@]}"
expect nccl-fail 1 '' -- "$BIN" audit nccl $N/g2_wrong_elements.log "${NDR[@]}"
expect nccl-indeterminate 3 '' -- "$BIN" audit nccl $N/g2_single_node.log "${NDR[@]}"
expect nccl-bad 2 '' -- "$BIN" audit nccl $N/binary.bin
expect topo-pass 0 '' -- "$BIN" audit topo $T/dgx_h100_8gpu_8nic.txt
expect topo-fail 1 '' -- "$BIN" audit topo $T/gpu_without_local_nic.txt
expect topo-indeterminate 3 '' -- "$BIN" audit topo $T/vm_all_phb.txt
expect topo-bad 2 '' -- "$BIN" audit topo $T/empty.txt
expect qos-pass 0 '' -- "$BIN" audit qos $Q/sonic_healthy.json
expect qos-fail 1 '' -- "$BIN" audit qos $Q/sonic_broken.json
expect qos-indeterminate 3 '' -- "$BIN" audit qos $Q/sonic_show_healthy.txt
expect qos-bad 2 '' -- "$BIN" audit qos "$tmp/none.json"
# Tools without verdicts: 0 or 2.
expect profiles-ok 0 '' -- "$BIN" profiles
expect profiles-bad 2 '' -- "$BIN" profiles --show nope
expect tco-ok 0 '' -- "$BIN" tco --gpus 64 --fabric ib-ndr
expect tco-bad 2 '' -- "$BIN" tco --gpus 0 --fabric ib-ndr
expect perf-bad 2 '' -- "$BIN" perf all_reduce --fabric nope
# The benchmark's scenario without credits (docs/benchmarks.md) still loads and runs.
expect perf-bench-scenario 0 '^# Out of bounds values : 0 OK' -- "$BIN" perf all_reduce -b 1M -e 1M -g 8 --nodes 16 -n 1 -w 0 --scenario scripts/bench-ib-ndr-no-credits.yaml
# It is a copy of profiles/ib-ndr.yaml with the credits off: with them on, it
# must give ib-ndr's rows (the copy has not drifted from the profile).
sed 's/^    enabled: false/    enabled: true/' scripts/bench-ib-ndr-no-credits.yaml >"$tmp/credits-on.yaml"
rows() { "$BIN" perf all_reduce -b 1M -e 4M -f 4 -g 8 --nodes 16 -n 1 -w 0 "$@" | grep -E '^ +[0-9]'; }
on_rows=$(rows --scenario "$tmp/credits-on.yaml")
if [ -n "$on_rows" ] && [ "$on_rows" = "$(rows --fabric ib-ndr)" ]; then
  echo "ok   bench-scenario-is-ib-ndr"
else
  echo "FAIL bench-scenario-is-ib-ndr: scripts/bench-ib-ndr-no-credits.yaml drifted from profiles/ib-ndr.yaml"; fail=1
fi
expect compare-bad 2 '' -- "$BIN" compare --profiles nope
expect report-bad 2 '' -- "$BIN" report "$tmp/none.json"
expect no-command 2 '' -- "$BIN"
# An argument nobody expected is named, even where a required option is missing too.
expect unknown-before-required 2 'not expected: -k' -- "$BIN" partition -k 3
expect help 0 '' -- "$BIN" --help

# The README and docs/errors.md state the same four codes.
for doc in README.md docs/errors.md; do
  for code in '0' '1' '2' '3'; do
    if ! grep -qE "(^\| $code \||\b$code (success|findings|bad input|indeterminate))" "$doc"; then
      echo "FAIL $doc does not state exit code $code"; fail=1
    fi
  done
done
[ $fail = 0 ] && echo "ok   docs state the rule"
exit $fail
