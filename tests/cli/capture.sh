#!/usr/bin/env bash
# outputs.pcap and outputs.trace end to end (docs/capture.md): tshark dissects
# the captures of a RoCE v2 run (PFC, ECN, DCQCN, RC with a lossy link) and an
# InfiniBand run (credits) without a malformed frame or an expert warning, and
# its field counts (CE marks, PFC frames per class and their quanta, CNPs,
# NAKs, flow-control packets, PSNs per QP) equal the run's JSON counters; the
# trace-event timeline follows the trace-event rules and its counts (ECN
# marks, CNPs, PFC frames, paused time, flows) equal them too (tests/cli/capture/check.py).
# Same seed, same bytes; a snap length and a size limit; bad fields exit 2.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3 tshark
BIN="$(realpath "$1")"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"
dir=tests/cli/capture

for kind in roce ib; do
  f=$dir/roce-incast-rc.yaml
  [ $kind = ib ] && f=$dir/ib-credits.yaml
  expect "$kind run with a capture and a timeline" 0 "" -- "$BIN" run "$f" --json "$tmp/$kind.json" \
    --set outputs.pcap="$tmp/$kind.pcapng" --set outputs.trace="$tmp/$kind.trace.json"
  if python3 $dir/check.py $kind "$tmp/$kind.json" "$tmp/$kind.pcapng" "$tmp/$kind.trace.json" \
      >"$tmp/check.out" 2>&1; then
    echo "ok   $kind capture and timeline match the run ($(grep -c '^ok' "$tmp/check.out") checks)"
  else
    cat "$tmp/check.out"; fail=1
  fi
  "$BIN" run "$f" --set outputs.pcap="$tmp/$kind.2.pcapng" \
    --set outputs.trace="$tmp/$kind.2.trace.json" >/dev/null 2>&1
  for o in pcapng trace.json; do
    if cmp -s "$tmp/$kind.$o" "$tmp/$kind.2.$o"; then
      echo "ok   $kind: same seed, same $o bytes"
    else
      echo "FAIL $kind: two runs wrote different $o files"; fail=1
    fi
  done
done

# E9's deadlock and, with the watchdog on, its actions: the verdict instant
# carries the witness cycle; every watchdog action is an instant on its port
# (ports act more than once here: poll 100us, restore 200us over 2ms), the
# first at the run's first action; the paused time per port and class equals
# the run's in both runs (pauses cut by an action, or in force at the end).
e9=scenarios/experiments/E9-pfc-deadlock.yaml
"$BIN" run $e9 --set stop_time=2ms --json "$tmp/e9.json" --set outputs.trace="$tmp/e9.trace.json" \
  >/dev/null 2>&1
"$BIN" run $e9 --set stop_time=2ms --set fabric.pfc.watchdog.enabled=true \
  --set fabric.pfc.watchdog.poll=100us --set fabric.pfc.watchdog.restore=200us \
  --json "$tmp/e9w.json" --set outputs.trace="$tmp/e9w.trace.json" >/dev/null 2>&1
if python3 - "$tmp" <<'PY'
import collections, json, sys
d = sys.argv[1]


def paused_ok(run, trace):
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    got = collections.Counter()
    for e in trace["traceEvents"]:
        if e["name"] == "paused":
            got[(names[e["pid"]], e["args"]["class"])] += e["args"]["ps"]
    bad = [(p["link"], c["class"], got[(p["link"], c["class"])], c["paused_fraction"] * run["sim_time_ps"])
           for p in run["ports"] for c in p["classes"]
           if abs(got[(p["link"], c["class"])] - c["paused_fraction"] * run["sim_time_ps"])
           > 1 + 1e-9 * c["paused_fraction"] * run["sim_time_ps"]]
    assert not bad, bad
    return sum(got.values())


run, trace = json.load(open(f"{d}/e9.json")), json.load(open(f"{d}/e9.trace.json"))
v = [e for e in trace["traceEvents"] if e["name"] == "PFC deadlock"]
assert run["deadlock"]["detected"] and len(run["deadlock"]["cycle"]) == 4, run["deadlock"]
assert len(v) == 1 and v[0]["args"]["cycle"] == run["deadlock"]["cycle"], v
assert round(v[0]["ts"] * 1e6) == run["deadlock"]["confirmed_ps"], v
assert v[0]["args"]["formed_ps"] == run["deadlock"]["formed_ps"], v
p0 = paused_ok(run, trace)
run, trace = json.load(open(f"{d}/e9w.json")), json.load(open(f"{d}/e9w.trace.json"))
names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
acts = collections.defaultdict(list)
restores = collections.Counter()
for e in trace["traceEvents"]:
    if e["name"] == "watchdog action":
        acts[names[e["pid"]]].append(round(e["ts"] * 1e6))
    elif e["name"] == "watchdog restore":
        restores[names[e["pid"]]] += 1
got = sorted((port, len(ts), min(ts)) for port, ts in acts.items())
want = sorted((p["link"], p["watchdog_actions"], p["watchdog_first_action_ps"])
              for p in run["ports"] if p["watchdog_actions"] > 0)
assert got == want and len(want) > 0, (got, want)
assert max(n for _, n, _ in want) > 1, "no port acted twice: the test needs one"
assert all(0 < restores[port] <= n for port, n, _ in want), (restores, want)
p1 = paused_ok(run, trace)
print(f"ok   E9: the deadlock instant names the cycle {v[0]['args']['cycle']}; "
      f"watchdog instants per port = the run's actions {[(p, n) for p, n, _ in got]}, "
      f"{sum(restores.values())} restores; paused time = the run's ({p0} ps, {p1} ps with the watchdog)")
PY
then :; else echo "FAIL E9 verdict or watchdog instants"; fail=1; fi

# Picosecond timestamps, a window and a snap length: headers whole, lengths on the wire kept.
roce=$dir/roce-incast-rc.yaml
expect "snaplen 64, ps resolution, window" 0 "" -- "$BIN" run $roce \
  --set outputs.pcap="$tmp/s.pcapng" --set outputs.pcap_snaplen=64 \
  --set outputs.pcap_resolution=ps --set outputs.pcap_from=10us --set outputs.pcap_until=20us \
  --set outputs.pcap_ports=leaf0-\>host0
read -r n caplen wirelen first last ifaces < <(tshark -r "$tmp/s.pcapng" -T fields \
  -e frame.cap_len -e frame.len -e frame.time_epoch -e frame.interface_name 2>/dev/null | awk '
  { n++; if ($1 > c) c = $1; if ($2 > w) w = $2; if (n == 1) f = $3; l = $3; i[$4] = 1 }
  END { k = 0; for (x in i) k++; print n, c, w, f, l, k }')
if [ "${n:-0}" -gt 0 ] && [ "$caplen" = 64 ] && [ "$wirelen" = 1086 ] && [ "$ifaces" = 1 ] &&
   awk -v f="$first" -v l="$last" 'BEGIN { exit !(f >= 0.00001 && l < 0.00002) }'; then
  echo "ok   snaplen: $n frames of one port cut to 64 of 1086 bytes, in [10us, 20us)"
else
  echo "FAIL snaplen: n=$n caplen=$caplen wirelen=$wirelen first=$first last=$last ifaces=$ifaces"; fail=1
fi
malformed=$(tshark -r "$tmp/s.pcapng" -Y _ws.malformed 2>/dev/null | wc -l)
[ "$malformed" = 0 ] && echo "ok   snaplen: no malformed frame" ||
  { echo "FAIL snaplen: $malformed malformed frames"; fail=1; }

# The limit cuts the capture and the timeline, and the run says so.
expect "pcap_limit cuts the capture" 0 "outputs.pcap: the capture reached outputs.pcap_limit \(65536 bytes\)" -- \
  "$BIN" run $roce --set outputs.pcap="$tmp/c.pcapng" --set outputs.pcap_limit=64KiB
size=$(stat -c %s "$tmp/c.pcapng")
[ "$size" -le 65536 ] && [ "$size" -gt 60000 ] && echo "ok   cut capture: $size bytes" ||
  { echo "FAIL cut capture: $size bytes"; fail=1; }
tshark -r "$tmp/c.pcapng" >/dev/null 2>&1 && echo "ok   cut capture reads whole" ||
  { echo "FAIL cut capture does not read"; fail=1; }
expect "trace_limit cuts the timeline" 0 "outputs.trace: the timeline reached outputs.trace_limit" -- \
  "$BIN" run $roce --set outputs.trace="$tmp/c.json" --set outputs.trace_limit=8KiB
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/c.json" &&
  echo "ok   cut timeline is valid JSON" || { echo "FAIL cut timeline is not JSON"; fail=1; }

# Bad values: one line naming the file, line and field; exit 2.
cat > "$tmp/bad.yaml" <<'YAML'
name: bad-capture
fabric:
  preset: roce
topology:
  kind: ls-ring
  gpus: 2
  hosts_per_leaf: 2
  spines: 1
traffic:
  - pattern: flow
    src: 0
    dst: 1
    bytes: 64KiB
outputs:
  pcap: x.pcapng
  pcap_snaplen: 70000
YAML
expect "snaplen above 65535" 2 "bad.yaml:16: outputs.pcap_snaplen" -- "$BIN" run "$tmp/bad.yaml"
sed -i 's/  pcap_snaplen: 70000/  pcap_resolution: us/' "$tmp/bad.yaml"
expect "unknown resolution" 2 "bad.yaml:16: outputs.pcap_resolution" -- "$BIN" run "$tmp/bad.yaml"
sed -i 's/  pcap_resolution: us/  pcap_limit: 100/' "$tmp/bad.yaml"
expect "limit without a unit" 2 "bad.yaml:16: outputs.pcap_limit" -- "$BIN" run "$tmp/bad.yaml"
sed -i 's/  pcap_limit: 100/  pcap_from: 5us\n  pcap_until: 2us/' "$tmp/bad.yaml"
expect "window ending before it starts" 2 "bad.yaml:17: outputs.pcap_until" -- "$BIN" run "$tmp/bad.yaml"
sed -i 's/  pcap_until: 2us/  pcap_ports: leaf0->host9/' "$tmp/bad.yaml"
expect "unknown port" 2 "bad.yaml:17: outputs.pcap_ports.*host9" -- "$BIN" run "$tmp/bad.yaml"
expect "unknown port (validate)" 2 "bad.yaml:17: outputs.pcap_ports" -- "$BIN" validate "$tmp/bad.yaml"
sed -i 's/  pcap_ports: leaf0->host9/  trace_limit: 1KiB/' "$tmp/bad.yaml"
expect "trace_limit too small" 2 "bad.yaml:17: outputs.trace_limit" -- "$BIN" run "$tmp/bad.yaml"
expect "capture into a missing folder" 2 "outputs.pcap" -- "$BIN" run "$tmp/bad.yaml" \
  --set outputs.trace_limit=1MiB --set outputs.pcap="$tmp/no/such/x.pcapng"
expect "two outputs on stdout" 2 "outputs.pcap.*standard output" -- "$BIN" run "$tmp/bad.yaml" \
  --set outputs.trace_limit=1MiB --set outputs.pcap=- --json -
exit $fail
