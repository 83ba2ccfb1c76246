#!/usr/bin/env bash
# End-to-end checks of `lossless audit qos`: exit codes and key output.
# Usage: bash tests/cli/audit_qos.sh <path-to-lossless>   (from the repo root)
set -u
BIN=${1:?usage: audit_qos.sh <lossless-binary>}
FX=tests/fixtures/qos
failures=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect <exit code> <grep pattern on stdout+stderr> <args...>
expect() {
  local want=$1 pattern=$2
  shift 2
  "$BIN" audit qos "$@" >"$out" 2>"$err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: audit qos $*: exit $got, want $want"; cat "$out" "$err"; failures=$((failures + 1)); return
  fi
  if ! cat "$out" "$err" | grep -q -- "$pattern"; then
    echo "FAIL: audit qos $*: output lacks '$pattern'"; cat "$out" "$err"; failures=$((failures + 1))
  fi
}

expect 0 'verdict: pass' $FX/sonic_healthy.json
expect 1 'verdict: fail' $FX/sonic_broken.json
expect 1 'FAIL          pfc.headroom' $FX/sonic_broken.json
expect 1 'queue 3: 1234 dropped' $FX/sonic_show_broken.txt
expect 3 'verdict: indeterminate' $FX/sonic_show_healthy.txt
expect 3 'format nvue' $FX/nvue_healthy.txt
expect 1 'ECN marking not enabled on queue 3' $FX/nvue_broken.txt
expect 3 'format onyx' $FX/onyx_healthy.txt
expect 1 '802.3x link-level pause is enabled' $FX/onyx_broken.txt
expect 3 'format eos' $FX/eos_healthy.txt
expect 1 'Kmin above Kmax' $FX/eos_broken.txt
expect 3 'CNP (DSCP 48) goes to queue 7, strict priority' $FX/nxos_healthy.txt
expect 3 'format nxos' $FX/nxos_healthy_crlf.txt
expect 1 'PFC not enabled on RoCE priority 3' $FX/nxos_broken.txt
# Flags: a cell size resolves segment thresholds; headroom inputs override the config.
expect 1 'cell size 208 B from platform preset tomahawk (unverified)' $FX/eos_broken.txt --platform tomahawk
expect 1 'headroom 55KiB < 88772B needed' $FX/sonic_healthy.json --cable-m 300
expect 0 'verdict: pass' $FX/sonic_healthy.json --port-gbps 100 --cable-m 5 --t-phy 100ns
expect 1 'PFC not enabled on RoCE priority 4' $FX/sonic_healthy.json --roce-priority 4
# JSON: one document with checks, verdict and format.
expect 1 '"verdict": "fail"' $FX/sonic_broken.json --json
expect 0 '"format": "sonic-json"' $FX/sonic_healthy.json --json
if command -v python3 >/dev/null; then
  "$BIN" audit qos $FX/sonic_broken.json --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["verdict"] == "fail" and d["format"] == "sonic-json"
assert all({"id", "verdict", "message"} <= set(c) for c in d["checks"])
assert any(c["id"] == "ecn.kmin-kmax" and c["verdict"] == "fail" for c in d["checks"])
' || { echo "FAIL: --json document"; failures=$((failures + 1)); }
fi
# Bad input: one line naming file and line, exit 2.
expect 2 "malformed_empty.txt:1: .*empty file" $FX/malformed_empty.txt
expect 2 "malformed_binary.bin:1: .*binary" $FX/malformed_binary.bin
expect 2 "malformed_topo.txt:1: format: not a switch QoS configuration" $FX/malformed_topo.txt
expect 2 "malformed_nccl.txt:1: format: not a switch QoS configuration" $FX/malformed_nccl.txt
expect 2 "malformed_truncated.json:4: .*truncated or invalid JSON" $FX/malformed_truncated.json
# A line whose unit cannot be read is skipped and reported (--verbose), not fatal.
expect 1 "skipped line 5: not interpretable as eos: .*furlongs" $FX/malformed_eos_unit.txt --verbose
expect 2 "malformed_sonic_value.json:1: BUFFER_PROFILE.p.xoff" $FX/malformed_sonic_value.json
expect 2 "cannot open" $FX/does_not_exist.json
expect 2 "is a directory" $FX
expect 2 "--format" $FX/sonic_healthy.json --format junos
expect 2 "--platform" $FX/sonic_healthy.json --platform nosuchasic
expect 2 "" $FX/sonic_healthy.json --cell-bytes 96 --platform spectrum
expect 2 "" $FX/sonic_healthy.json --roce-priority 9
# A forced format that does not fit the text is bad input, not a crash.
expect 2 "error:" $FX/eos_healthy.txt --format sonic-json
n=$(cat "$err" | wc -l)
[ "$n" = 1 ] || { echo "FAIL: error is $n lines"; failures=$((failures + 1)); }

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "audit_qos CLI: all checks passed"
