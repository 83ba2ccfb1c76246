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
check leaf-spine 0 "no cyclic buffer dependency on priority 3 \(3072 buffers, 34816 dependencies\)" \
  -- "$BIN" deadlock scenarios/deadlock-leaf-spine.yaml
check leaf-spine-traffic 0 "^  traffic: known statically: the scenario's 1024 flows \(0 on explicit paths" \
  -- "$BIN" deadlock scenarios/deadlock-leaf-spine.yaml
check leaf-spine-all-pairs 0 "no cyclic buffer dependency on priority 3 \(3072 buffers, 96256 dependencies\)" \
  -- "$BIN" deadlock scenarios/deadlock-leaf-spine.yaml --all-pairs
check all-pairs-says-so 0 "^  traffic: not known statically \(--all-pairs\): every host pair" \
  -- "$BIN" deadlock scenarios/deadlock-leaf-spine.yaml --all-pairs
# E9 (docs/model/experiments.md): the flows' explicit bounce routes close the
# cycle, which the routing alone (--all-pairs) does not have; the witness
# names the flow of each dependency. Its two controls have no cycle.
E9=scenarios/experiments/E9-pfc-deadlock.yaml
check e9-cycle 1 "cyclic buffer dependency on priority 3: 4 buffers each wait for the next" -- "$BIN" deadlock $E9
check e9-witness 1 "^  spine0:leaf0:3 -> leaf1:spine0:3 -> spine1:leaf1:3 -> leaf0:spine1:3 -> spine0:leaf0:3$" -- "$BIN" deadlock $E9
check e9-names-a 1 "^  leaf1:spine0:3 -> spine1:leaf1:3: A \(host2->host3\)$" -- "$BIN" deadlock $E9
check e9-names-b 1 "^  leaf0:spine1:3 -> spine0:leaf0:3: B \(host3->host2\)$" -- "$BIN" deadlock $E9
check e9-known 1 "^  traffic: known statically: the scenario's 4 flows \(4 on explicit paths" -- "$BIN" deadlock $E9
check e9-json 1 '"A \(host2->host3\)"' -- "$BIN" deadlock $E9 --json
check e9-all-pairs 0 "no cyclic buffer dependency" -- "$BIN" deadlock $E9 --all-pairs
check e9-updown 0 "no cyclic buffer dependency on priority 3" \
  -- "$BIN" deadlock $E9 --set traffic.2.path=leaf2,spine0,leaf3 --set traffic.3.path=leaf3,spine1,leaf2
check e9-priority-change 0 "no cyclic buffer dependency on priorities 3, 4" \
  -- "$BIN" deadlock $E9 --set traffic.2.path=leaf2,spine0,leaf1/4,spine1,leaf3 --set traffic.3.path=leaf3,spine1,leaf0/4,spine0,leaf2
check fat-tree 0 "no cyclic buffer dependency on priority 0 " -- "$BIN" deadlock scenarios/ib-fat-tree.json
check ring 1 "cyclic buffer dependency on priority 3: 4 buffers" -- "$BIN" deadlock scenarios/deadlock-ring4.yaml
check ring-witness 1 "^  sw1:sw0:3 -> sw2:sw1:3 -> sw3:sw2:3 -> sw0:sw3:3 -> sw1:sw0:3$" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml
check ring-flows 1 "^  sw1:sw0:3 -> sw2:sw1:3: traffic.0 \(host0->host2\)$" -- "$BIN" deadlock scenarios/deadlock-ring4.yaml
# The ring's traffic is on priority 3: none on 5 unless every pair is assumed.
check ring-priority-traffic 0 "no cyclic buffer dependency on priority 5" -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 5
check ring-priority 1 "sw1:sw0:5 -> " -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 5 --all-pairs
check lossy-note 1 "note: PFC is off for priority 5" -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 5 --all-pairs
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
check bad-name 2 "traffic.0.name: expected a one-line name" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set traffic.0.name=
check bad-path 2 "traffic.2.path: expected consecutive switches to be linked" \
  -- "$BIN" deadlock $E9 --set traffic.2.path=leaf2,leaf1
check bad-priority 2 "--priority: expected a priority from 0 to 7" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --priority 8
check missing-file 2 "cannot open" -- "$BIN" deadlock "$tmp/nope.yaml"
check missing-topo 2 "nope.topo" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set topology.file="$tmp/nope.topo"
printf 'switch sw0\nhost h0\nlink h0 sw9\n' >"$tmp/bad.topo"
check bad-topo 2 "bad.topo:3: link" \
  -- "$BIN" deadlock scenarios/deadlock-ring4.yaml --set topology.file="$tmp/bad.topo"
exit $fail
