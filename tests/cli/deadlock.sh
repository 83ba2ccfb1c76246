#!/usr/bin/env bash
# End-to-end checks of lossless deadlock: exit 0 without a cyclic buffer
# dependency, 1 with one (and the witness), 2 on bad input with one error line.
set -u
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
check() {  # check NAME EXPECTED_RC OUTPUT_PATTERN -- command...
  local name="$1" want="$2" pat="$3"; shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL $name: exit $rc, want $want"; cat "$tmp/out" "$tmp/err"; fail=1; return; fi
  if [ -n "$pat" ] && ! grep -qE -- "$pat" "$tmp/err" "$tmp/out"; then
    echo "FAIL $name: output lacks /$pat/"; cat "$tmp/err" "$tmp/out"; fail=1; return; fi
  if [ "$want" = 2 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then echo "FAIL $name: want one error line"; cat "$tmp/err"; fail=1; return; fi
  echo "ok   $name"
}
check help 0 "cyclic buffer dependency" -- "$BIN" deadlock --help
check leaf-spine 0 "no cyclic buffer dependency on priority 3 \(3072 buffers, 96256 dependencies\)" \
  -- "$BIN" deadlock scenarios/deadlock-leaf-spine.yaml
check fat-tree 0 "no cyclic buffer dependency on priority 0 " -- "$BIN" deadlock scenarios/ib-fat-tree.json
check ring 1 "cyclic buffer dependency on priority 3: 4 buffers" -- "$BIN" deadlock scenarios/deadlock-ring4.yaml
check ring-witness 1 "^  sw1:sw0:3 -> sw2:sw1:3 -> sw3:sw2:3 -> sw0:sw3:3 -> sw1:sw0:3$" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml
check ring-priority 1 "sw1:sw0:5 -> " -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 5
check lossy-note 1 "note: PFC is off for priority 5" -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 5
# Global 802.3x pause: every priority is lossless and a buffer is a whole port.
check global-witness 1 "^  sw1:sw0:all -> sw2:sw1:all -> sw3:sw2:all -> sw0:sw3:all -> sw1:sw0:all$" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 5 --set fabric.pfc.mode=global
if grep -q "note: PFC is off" "$tmp/out"; then echo "FAIL global-lossless: lossy note under global pause"; fail=1; else echo "ok   global-lossless"; fi
check global-every-priority 1 "cyclic buffer dependency on every priority \(global pause" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set fabric.pfc.mode=global
check global-json 1 '"priority": "all"' \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set fabric.pfc.mode=global --json
check ring-json 1 '"priority": 3,' -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --json
check ring-json 1 '"cyclic": true' -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --json
check leaf-spine-json 0 '"cyclic": false' -- "$BIN" deadlock scenarios/deadlock-leaf-spine.yaml --json
check set-override 0 "no cyclic buffer dependency" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set topology.file=tests/fixtures/topology/two_leaf.topo
check bad-priority 2 "--priority: expected a priority from 0 to 7" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 8
check missing-file 2 "cannot open" -- "$BIN" deadlock "$tmp/nope.yaml"
check missing-topo 2 "nope.topo" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set topology.file="$tmp/nope.topo"
printf 'switch sw0\nhost h0\nlink h0 sw9\n' >"$tmp/bad.topo"
check bad-topo 2 "bad.topo:3: link" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set topology.file="$tmp/bad.topo"
exit $fail
