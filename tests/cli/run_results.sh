#!/usr/bin/env bash
# What `lossless run` reports (issue 16): unfinished flows, resolved
# parameters, per-flow completion times, no wall-clock figures by default.
# Usage: bash tests/cli/run_results.sh <path-to-lossless>   (from the repo root)
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN=${1:?usage: run_results.sh <lossless binary>}
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

# jcheck NAME FILE PYTHON-EXPR: the JSON in FILE (as `j`) makes EXPR true.
jcheck() {
  if python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3"; then
    echo "ok   $1"
  else
    echo "FAIL $1: $3"; head -c 600 "$2"; echo; fail=1
  fi
}

# Item 8: E6 ends at its time limit (100 ms) before either flow finishes.
# FCTs are null (they were 0.0), the text says so, and the flows left are
# counted.
expect no-flow-finished 0 '^fct        no flow finished$' -- \
  "$BIN" run scenarios/experiments/E6-dcqcn-two-flow.yaml --set stop_time=20ms --json "$tmp/e6.json"
cp "$tmp/out" "$tmp/e6.txt"
expect no-flow-finished-count 0 '^unfinished 2 flows, [0-9]+ bytes not delivered$' -- cat "$tmp/e6.txt"
jcheck no-flow-finished-json "$tmp/e6.json" 'j["fct_us"] is None and j["flows"]["done"] == 0 and j["flows"]["unfinished"] == 2 and j["flows"]["bytes_left"] > 0'
expect all-finished 0 '' -- "$BIN" run scenarios/roce-incast.yaml --json "$tmp/incast.json"
# fct_us may be null since item 8, which changed what lossless.run/1 meant:
# the schema is lossless.run/2 (docs/run-output.md says what changed).
jcheck schema-run-2 "$tmp/e6.json" 'j["schema"] == "lossless.run/2"'
jcheck headroom-json "$tmp/incast.json" 'j["pfc"]["headroom_bytes"] == int(j["parameters"]["fabric.pfc.headroom"][:-1]) and j["pfc"]["headroom_basis"] == "default for fabric.link_delay 150ns at fabric.link_rate 400Gbps"'

jcheck all-finished-json "$tmp/incast.json" 'j["fct_us"]["max"] > 0 and j["flows"]["unfinished"] == 0 and j["flows"]["bytes_left"] == 0'
if grep -q 'no flow finished\|^unfinished' "$tmp/out"; then echo "FAIL all-finished: unfinished lines"; fail=1; fi

# Item 26: the JSON carries every resolved field with its unit and each
# flow's completion time; validate --show prints the same fields; params
# shows each field's type and range.
jcheck parameters "$tmp/incast.json" 'j["parameters"]["fabric.link_rate"] == "400Gbps" and j["parameters"]["fabric.pfc.xon"].endswith("B") and j["parameters"]["fabric.cable_length"] == "30m" and j["parameters"]["fabric.frame_overhead"] == "62B" and j["parameters"]["traffic.1"].startswith("pattern=incast bytes=2MiB start=50us")'
jcheck per-flow "$tmp/incast.json" 'len(j["per_flow"]) == j["flows"]["total"] and all(f["fct_ps"] > 0 and f["bytes_left"] == 0 for f in j["per_flow"]) and max(f["fct_ps"] for f in j["per_flow"]) / 1e6 == j["fct_us"]["max"]'
jcheck per-flow-unfinished "$tmp/e6.json" 'len(j["per_flow"]) == 2 and all(f["fct_ps"] is None and f["bytes_left"] > 0 for f in j["per_flow"])'
"$BIN" run scenarios/roce-incast.yaml --set outputs.per_flow_limit=10 --json "$tmp/capped.json" >/dev/null
jcheck per-flow-limit "$tmp/capped.json" 'j["per_flow"] is None and j["parameters"]["outputs.per_flow_limit"] == "10"'
"$BIN" validate scenarios/roce-incast.yaml --show >"$tmp/show" 2>&1
"$BIN" params --markdown >"$tmp/params.md"
python3 - "$tmp/show" "$tmp/params.md" "$tmp/incast.json" <<'PY'
import json, re, sys
show = dict(re.findall(r"^  (\S+) = (.*)$", open(sys.argv[1]).read(), re.M))
fields_table = open(sys.argv[2]).read().split("\n## ")[0]
types = dict(re.findall(r"^\| `([^`]+)` \| (\w+)", fields_table, re.M))
fields = [n for n in types if not n.startswith(("traffic", "faults.pause_inject", "faults.cnp_inject", "faults.link_loss"))]
bad = [n for n in fields if n not in show]
bad += [f"{n} = {show[n]}" for n in fields if n in show and types[n] in ("time", "rate", "size") and re.fullmatch(r"[0-9.]+", show[n]) and float(show[n]) != 0]
bad += [n for n in ("traffic.0", "traffic.1") if n not in show]
if json.load(open(sys.argv[3]))["parameters"] != {k: v for k, v in show.items() if k not in ("outputs.json", "outputs.series_csv", "outputs.pcap", "outputs.trace")}:
    bad.append("the JSON's parameters differ from validate --show")
print("ok   validate-show-every-field" if not bad else "FAIL validate-show-every-field: " + ", ".join(bad[:8]))
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || fail=1
"$BIN" run scenarios/experiments/E1-pfc-pause-timing.yaml --json "$tmp/e1.json" >/dev/null
jcheck parameters-faults "$tmp/e1.json" 'j["parameters"]["faults.pause_inject.0"] == "port=leaf0->host0 at=10us class_enable=0x08 quanta=65535"'
expect params-type-range 0 '^fabric\.mtu +integer, 64\.\.65536 +4096 ' -- "$BIN" params

# Item 27: same bytes out by default: no wall-clock figures in the JSON
# unless --timing asks for them.
jcheck no-timing-by-default "$tmp/incast.json" '"timing" not in j'
"$BIN" run scenarios/roce-incast.yaml --timing --json "$tmp/timed.json" >/dev/null
jcheck timing-on-request "$tmp/timed.json" 'j["timing"]["run_s"] >= 0'

# Item 24: on a terminal a progress line (simulated time, share of
# stop_time, flows done, rate) is redrawn on stderr and erased before the
# report; piped or with --quiet there is none. Ctrl-C ends the run at an
# event boundary with the partial result, marked interrupted, exit 130.
# The progress checks need a run longer than the line's 250 ms interval: 64 MiB per flow
# takes about 1.7 s here; under ASan (LOSSLESS_SANITIZED=1) 16 MiB lasts as long.
long_bytes=64MiB
[ "${LOSSLESS_SANITIZED:-0}" = 1 ] && long_bytes=16MiB
long=(run scenarios/roce-incast.yaml --set traffic.0.bytes=$long_bytes)
if command -v script >/dev/null; then
  script -qec "$BIN ${long[*]} --json $tmp/tty.json" /dev/null >"$tmp/tty.out" 2>&1
  if grep -qE $'\rsimulated [0-9.]+[pnum]?s of stop_time 10s \([0-9.]+%\), [0-9]+/144 flows done, [0-9.]+[pnum]?s simulated per second\033\[K' "$tmp/tty.out" &&
     grep -q $'\r\033\[Kscenario   roce-incast' "$tmp/tty.out"; then echo "ok   progress-on-tty"
  else echo "FAIL progress-on-tty"; head -c 400 "$tmp/tty.out" | cat -v; echo; fail=1; fi
  script -qec "$BIN ${long[*]} --quiet" /dev/null >"$tmp/quiet.out" 2>&1
  if grep -q 'simulated per second' "$tmp/quiet.out"; then echo "FAIL progress-quiet: a line with --quiet"; fail=1
  else echo "ok   progress-quiet"; fi
else
  echo "skip progress-on-tty: no script(1)"
fi
"$BIN" "${long[@]}" >"$tmp/piped.out" 2>"$tmp/piped.err"
if grep -q 'simulated per second' "$tmp/piped.out" "$tmp/piped.err" || [ -s "$tmp/piped.err" ]; then
  echo "FAIL progress-piped: progress output when piped"; fail=1
else echo "ok   progress-piped"; fi
"$BIN" run scenarios/roce-incast.yaml --set traffic.0.bytes=1GiB --json "$tmp/int.json" >"$tmp/int.txt" 2>&1 &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
if [ $rc = 130 ] && grep -q '^result     interrupted: [0-9]*/144 flows done' "$tmp/int.txt"; then echo "ok   interrupt-exit-130"
else echo "FAIL interrupt-exit-130: exit $rc"; head -5 "$tmp/int.txt"; fail=1; fi
jcheck interrupt-json "$tmp/int.json" 'j["interrupted"] is True and j["result"] == "interrupted" and j["flows"]["unfinished"] > 0'
jcheck not-interrupted-json "$tmp/incast.json" 'j["interrupted"] is False'

exit $fail
