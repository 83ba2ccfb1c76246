#!/usr/bin/env bash
# `lossless tune` end to end (docs/tune.md) on a small case (2 nodes, the
# coarse grid at --levels 1, a budget of 4 runs, an 8 MiB all-reduce): the
# issue's check (from roce-untuned, at least 10x fewer PAUSE frames at no more
# than 2 % busbw loss), the same bytes twice, the round trip of every switch
# snippet (audit qos, then scenario from-qos with the NIC profile, then the
# target on that scenario gives the chosen point's figures), and bad input
# (a budget below the coarse grid, an unknown fabric, InfiniBand): one line, exit 2.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

T=(tune --fabric roce-untuned --nodes 2 --levels 1 --budget 4 --allreduce-bytes 8M -n 1 --seed 1)
expect "tune from roce-untuned: goal met" 0 \
  '^verdict: goal met \(at least 10x fewer PAUSE frames at no more than 2 % busbw loss\): PAUSE frames [0-9]+ -> [0-9]+' -- \
  "$BIN" "${T[@]}" -o "$tmp/a"
grep -qE '^runs: 1 baseline \+ 1 coarse \+ 2 refinement = 4 of budget 4' "$tmp/out" && echo "ok   tune: runs line" ||
  { echo "FAIL tune: runs line"; cat "$tmp/out"; fail=1; }
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "lossless.tune/1", j["schema"]
b, c = j["baseline"]["figures"], j["chosen"]["figures"]
assert b["pause_frames"] >= 10 * max(c["pause_frames"], 1) or c["pause_frames"] == 0 and b["pause_frames"] > 0, (b, c)
assert c["busbw_gbs"] >= 0.98 * b["busbw_gbs"], (b, c)
assert j["goal_met"] is True
assert len(j["points"]) == j["runs"] == 4
assert j["chosen"]["settings"]["fabric.ecn.kmax"] and j["pareto"]
' "$tmp/a/tune.json" && echo "ok   tune.json: >= 10x fewer PAUSE frames, <= 2 % busbw lost" ||
  { echo "FAIL tune.json content"; fail=1; }
"$BIN" "${T[@]}" -o "$tmp/b" >/dev/null 2>&1
for f in tune.json sonic-config_db.json cumulus-nvue.txt arista-eos.txt cisco-nxos.txt junos.txt nic-dcqcn.txt nic-profile.yaml; do
  cmp -s "$tmp/a/$f" "$tmp/b/$f" || { echo "FAIL tune: $f differs between two runs"; fail=1; }
done
echo "ok   tune: same bytes twice"

# The round trip: each switch snippet passes the audit (exit 0; NX-OS states no
# cable length, so its audit gets the one its comment gives; NVUE states no PFC
# trigger, so the two ECN-against-trigger checks stay indeterminate, EOS no
# trigger and no headroom, so the headroom check too, Junos no headroom and
# its ECN as shares, not bytes, to set against a trigger; nothing else may be); through from-qos with the NIC profile it gives a scenario on
# which the target reproduces the chosen point's figures (Junos too: its ECN
# fill levels are read as shares of the PFC trigger).
chosen="$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["chosen"]["figures"], sort_keys=True))' "$tmp/a/tune.json")"
cable="$(sed -n 's/.*`lossless audit qos FILE --cable-m \([0-9.]*\)`.*/\1/p' "$tmp/a/cisco-nxos.txt")"
[ -n "$cable" ] || { echo "FAIL cisco-nxos.txt: no --cable-m in its comment"; fail=1; }
for f in sonic-config_db.json arista-eos.txt junos.txt cumulus-nvue.txt cisco-nxos.txt; do
  extra=(); [ "$f" = cisco-nxos.txt ] && extra=(--cable-m "$cable")
  allowed='^$'; [ "$f" = cumulus-nvue.txt ] && allowed=' (ecn\.kmin-ratio|ecn\.kmax-below-pfc) '
  [ "$f" = arista-eos.txt ] && allowed=' (pfc\.headroom|ecn\.kmin-ratio|ecn\.kmax-below-pfc) '
  [ "$f" = junos.txt ] && allowed=' (pfc\.headroom|ecn\.kmax-below-pfc) '
  "$BIN" audit qos "$tmp/a/$f" "${extra[@]}" >"$tmp/audit" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] || grep -q '^  FAIL' "$tmp/audit" ||
     grep '^  INDETERMINATE' "$tmp/audit" | grep -vqE "$allowed"; then
    echo "FAIL round trip: audit qos $f: exit $rc or an indeterminate check not allowed"; cat "$tmp/audit"; fail=1; continue
  fi
  "$BIN" scenario from-qos "$tmp/a/$f" --profile "$tmp/a/nic-profile.yaml" -o "$tmp/$f.yaml" 2>"$tmp/err" ||
    { echo "FAIL round trip: from-qos $f"; cat "$tmp/err"; fail=1; continue; }
  if [ "$f" = junos.txt ]; then
    # Junos states ECN as fill levels (shares of the queue's buffer): from-qos
    # takes them of the PFC trigger (the profile's, marked as such).
    grep -qE '^    kmin: [0-9]+B +# .*junos.txt:[0-9]+: ECN Kmin at fill level .* from the profile ' "$tmp/$f.yaml" ||
      { echo "FAIL round trip junos: Kmin not mapped from the fill level"; cat "$tmp/$f.yaml"; fail=1; }
  fi
  got="$("$BIN" tune --scenario "$tmp/$f.yaml" --evaluate --allreduce-bytes 8M -n 1 --seed 1 --json |
    python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["evaluate"], sort_keys=True))')"
  [ "$got" = "$chosen" ] && echo "ok   round trip $f: audit exit 0, from-qos reproduces the tuned figures" ||
    { echo "FAIL round trip $f: $got != $chosen"; fail=1; }
done

# Ctrl-C (docs/tune.md): the search stops after the runs in flight, tune.json
# holds the runs that finished, marked "interrupted": true, no snippet is
# written, exit 130. (The default search takes about half a minute: after 2 s
# it cannot have finished.) Piped, so no progress line either.
"$BIN" tune --fabric roce-untuned -o "$tmp/int" >"$tmp/int.txt" 2>"$tmp/int.err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
if [ $rc = 130 ]; then echo "ok   tune: Ctrl-C exits 130"
else echo "FAIL tune: Ctrl-C exit $rc"; tail -5 "$tmp/int.txt"; fail=1; fi
python3 - "$tmp/int" <<'PY' || { echo "FAIL tune: interrupted tune.json"; fail=1; }
import json, os, sys
j = json.load(open(sys.argv[1] + "/tune.json"))
assert j["interrupted"] is True and j["stop"] == "interrupted", (j["interrupted"], j["stop"])
assert j["runs"] == len(j["points"]) < j["budget"], (j["runs"], j["budget"])
assert j["verdict"].startswith("interrupted (Ctrl-C)"), j["verdict"]
assert os.listdir(sys.argv[1]) == ["tune.json"], os.listdir(sys.argv[1])
PY
grep -q '^runs: .*(interrupted (Ctrl-C))$' "$tmp/int.txt" && [ ! -s "$tmp/int.err" ] &&
  echo "ok   tune: interrupted result written, nothing on stderr when piped" ||
  { echo "FAIL tune: interrupted output"; cat "$tmp/int.txt" "$tmp/int.err"; fail=1; }
grep -q '"interrupted": false' "$tmp/a/tune.json" || { echo "FAIL tune: a finished tune.json lacks interrupted: false"; fail=1; }

# Bad input: one line, exit 2.
expect "budget below the coarse grid" 2 \
  '^error: <cli>: --budget: expected at least 25 runs \(the baseline and the 24 points of the coarse grid at --levels 2\), got 10$' -- \
  "$BIN" tune --fabric roce-untuned --budget 10 -o "$tmp/c"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL budget error: more than one line"; fail=1; }
[ ! -e "$tmp/c" ] || { echo "FAIL budget error: the output folder was created"; fail=1; }
expect "unknown fabric" 2 '^error: <cli>: --fabric: .*roce-untuned' -- "$BIN" tune --fabric roce-untund -o "$tmp/c"
expect "InfiniBand fabric" 2 '^error: <cli>: --fabric: expected a RoCE fabric' -- "$BIN" tune --fabric ib-ndr -o "$tmp/c"
expect "no -o" 2 '^error: <cli>: -o: expected -o DIR' -- "$BIN" tune --fabric roce-untuned
exit $fail
