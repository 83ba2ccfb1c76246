#!/usr/bin/env bash
# End-to-end checks of lossless run / validate / params / bench: exit codes,
# one-line errors and byte-identical output per seed.
set -u
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
check() {  # check NAME EXPECTED_RC STDERR_PATTERN -- command...
  local name="$1" want="$2" pat="$3"; shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL $name: exit $rc, want $want"; cat "$tmp/err"; fail=1; return; fi
  if [ -n "$pat" ] && ! grep -qE -- "$pat" "$tmp/err" "$tmp/out"; then
    echo "FAIL $name: output lacks /$pat/"; cat "$tmp/err" "$tmp/out"; fail=1; return; fi
  if [ "$want" = 2 ] && [ "$(wc -l <"$tmp/err")" != 1 ]; then echo "FAIL $name: want one error line"; cat "$tmp/err"; fail=1; return; fi
  echo "ok   $name"
}
check version 0 "lossless 0\." -- "$BIN" --version
check run-help 0 "Scenario file" -- "$BIN" run --help
check run-help-exit 0 "Exit status: 0 the run finished .*; 1 the deadlock detector" -- "$BIN" run --help
check validate-ok 0 "ok: LS-RING" -- "$BIN" validate scenarios/ls-ring-64.yaml
check missing-file 2 "cannot open" -- "$BIN" run "$tmp/nope.yaml"
printf 'fabric:\n  link_rat: 400Gbps\ntraffic: [{pattern: ring, bytes: 1MiB}]\n' >"$tmp/typo.yaml"
check unknown-key 2 "typo.yaml:2: fabric.link_rat: unknown field; did you mean 'link_rate'" -- "$BIN" run "$tmp/typo.yaml"
check bad-unit 2 "<--set>: fabric.link_delay: expected a time" -- "$BIN" validate scenarios/ls-ring-64.yaml --set fabric.link_delay=3parsecs
check zero-rate 2 "expected a rate above zero" -- "$BIN" validate scenarios/ls-ring-64.yaml --set fabric.link_rate=0
check zero-delay 2 "expected a delay above zero" -- "$BIN" validate scenarios/ls-ring-64.yaml --set fabric.link_delay=0ns
check bad-preset 2 "did you mean 'infiniband'" -- "$BIN" validate scenarios/ls-ring-64.yaml --set fabric.preset=infinband
check radix 2 "at most 2048 GPUs" -- "$BIN" validate scenarios/roce-incast.yaml --set topology.gpus=4096 --set topology.radix=64 --set topology.tiers=2
# A parser message that quotes a control character from the input stays one
# line: control characters are printed escaped. A NUL byte makes the file
# binary, refused before the parser sees it.
printf 'a: "\\\001"\n' >"$tmp/ctl.yaml"
check control-char 2 'ctl.yaml:1: .*unknown escape character: \\x01$' -- "$BIN" run "$tmp/ctl.yaml"
printf '\340\243\000\n' >"$tmp/nul.yaml"
check nul-byte 2 'nul.yaml:1: binary data \(NUL byte\): expected a scenario$' -- "$BIN" run "$tmp/nul.yaml"
head -c 3000 /dev/urandom >"$tmp/junk.yaml"
check junk 2 "junk.yaml" -- "$BIN" run "$tmp/junk.yaml"
check bench-bad-hosts 2 "--hosts: expected a multiple of 8" -- "$BIN" bench ls-ring --hosts 12
check bench-small 0 "exact match" -- "$BIN" bench ls-ring --hosts 16 --bytes 1MiB
check bench-small-ib 0 "packet_hops [0-9]* -> hops match \(completion [0-9.]*ns later" -- "$BIN" bench ls-ring --hosts 16 --bytes 1MiB --lossless ib
# Determinism: same scenario and seed, same bytes out (text and JSON).
"$BIN" run scenarios/roce-incast.yaml --no-timing --json "$tmp/a.json" >"$tmp/a.txt"
"$BIN" run scenarios/roce-incast.yaml --no-timing --json "$tmp/b.json" >"$tmp/b.txt"
if cmp -s "$tmp/a.txt" "$tmp/b.txt" && cmp -s "$tmp/a.json" "$tmp/b.json"; then echo "ok   deterministic"; else echo "FAIL deterministic"; fail=1; fi
"$BIN" run scenarios/roce-incast.yaml --no-timing --set seed=8 >"$tmp/c.txt"
if cmp -s "$tmp/a.txt" "$tmp/c.txt"; then echo "FAIL seed changes nothing"; fail=1; else echo "ok   seed matters"; fi
grep -q '"packet_hops"' "$tmp/a.json" && echo "ok   json" || { echo "FAIL json"; fail=1; }
# The RoCE preset runs PFC: per-port PAUSE counters appear, and no lossless drops.
grep -q '"pause_rx": [1-9]' "$tmp/a.json" && echo "ok   json per-port pfc" || { echo "FAIL json per-port pfc"; fail=1; }
grep -q 'drops      0 (lossless class: 0)' "$tmp/a.txt" && echo "ok   lossless" || { echo "FAIL lossless"; fail=1; }
# E9 (PFC deadlock): the run ends with a deadlock verdict naming the four cycle
# buffers, in the text and the JSON, and exits 1 (a finding); a bad flow path
# is one error line.
check e9-deadlock 1 "^result     deadlock: 0/4 flows done" -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml --no-timing --json "$tmp/e9.json"
grep -qE '^DEADLOCK   PFC deadlock formed at .*(leaf1:spine0:3 -> spine1:leaf1:3 -> leaf0:spine1:3 -> spine0:leaf0:3)' "$tmp/out" \
  && echo "ok   e9 text verdict" || { echo "FAIL e9 text verdict"; cat "$tmp/out"; fail=1; }
[ "$(grep -cE '^ *"(leaf|spine)[0-9]:(leaf|spine)[0-9]:3",?$' "$tmp/e9.json")" = 4 ] && grep -q '"result": "deadlock"' "$tmp/e9.json" \
  && echo "ok   e9 json verdict" || { echo "FAIL e9 json verdict"; fail=1; }
check e9-bad-path 2 "<--set>: traffic.2.path: expected consecutive switches to be linked" -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml --set traffic.2.path=leaf2,leaf1
# With the watchdog the deadlock still forms (and is reported, exit 1) before
# the watchdog breaks it; with E9's up-down control routes none forms (exit 0).
check e9-watchdog 1 "^watchdog   [0-9]+ PFC watchdog actions, first at" -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml --no-timing --set fabric.pfc.watchdog.enabled=true --set fabric.pfc.watchdog.poll=1ms --set fabric.pfc.watchdog.restore=2ms --set stop_time=10ms
grep -q '^DEADLOCK   PFC deadlock formed at' "$tmp/out" \
  && echo "ok   e9 watchdog run reports the deadlock" || { echo "FAIL e9 watchdog verdict"; cat "$tmp/out"; fail=1; }
check e9-watchdog-pfc-no-restore-drops 1 "; 0 lossless drops after a watchdog restore$" -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml --no-timing --set fabric.pfc.watchdog.enabled=true --set fabric.pfc.watchdog.poll=1ms --set fabric.pfc.watchdog.restore=2ms --set stop_time=10ms
# Under global pause (A and B on class 0) the restore hazard
# (docs/deadlock.md#the-watchdog-restore-hazard): every lossless drop is one
# after a watchdog restore, counted in the text and the JSON.
check e9-global-restore-drops 1 "; 363 lossless drops after a watchdog restore$" -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml --no-timing --set fabric.pfc.mode=global --set traffic.2.class=0 --set traffic.3.class=0 --set fabric.pfc.watchdog.enabled=true --set fabric.pfc.watchdog.poll=1ms --set fabric.pfc.watchdog.restore=2ms --set stop_time=10ms --json "$tmp/gp.json"
grep -q '^drops      28990 (lossless class: 363)' "$tmp/out" && grep -q '"lossless_after_watchdog_restore": 363' "$tmp/gp.json" \
  && echo "ok   e9 global-pause restore drops in text and JSON" || { echo "FAIL e9 global-pause restore drops"; cat "$tmp/out"; fail=1; }
check e9-global-pause-memory 1 "^drops      28627 \(lossless class: 0\)" -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml --no-timing --set fabric.pfc.mode=global --set traffic.2.class=0 --set traffic.3.class=0 --set fabric.pfc.watchdog.enabled=true --set fabric.pfc.watchdog.poll=1ms --set fabric.pfc.watchdog.restore=2ms --set stop_time=10ms --set fabric.pfc.watchdog.pause_memory=true
check e9-updown 0 "^deadlock   none detected" -- "$BIN" run scenarios/experiments/E9-pfc-deadlock.yaml --no-timing --set traffic.2.path=leaf2,spine0,leaf3 --set traffic.3.path=leaf3,spine1,leaf2 --set stop_time=10ms
exit $fail
