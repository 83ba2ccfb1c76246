#!/usr/bin/env bash
# `lossless what-if` end to end (docs/what-if.md#what-if-quarantine-now-or-wait): the three cases on
# the rail check's fixture (text, JSON with its schema, same bytes twice),
# links from an optics store through a port map, and bad input (unknown link
# with the nearest name, BER out of range, a quarantined port missing from the
# port map, a malformed port map line): one error line, exit 2.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

cat >"$tmp/rail.yaml" <<YAML
name: rail
fabric: {preset: roce, routing: adaptive}
topology: {kind: file, file: $PWD/tests/fixtures/topology/rail_2su_thin_uplinks.topo, gpus_per_node: 2}
YAML
W=(what-if --scenario "$tmp/rail.yaml" --sizes 32M -n 1 --train-model none)

expect "what-if degraded vs quarantined" 0 "^answer: wait for the maintenance window: [0-9.]+ % busbw lost left in service vs [0-9.]+ % if quarantined now" -- \
  "$BIN" "${W[@]}" --degrade su0-rail0-spine0=1e-6
grep -qE '^busbw lost at 32 MiB \(%\) +0\.0 +[0-9.]+ +2[0-9]\.[0-9]$' "$tmp/out" && echo "ok   what-if: busbw lost row" ||
  { echo "FAIL what-if: busbw lost row"; cat "$tmp/out"; fail=1; }
expect "what-if --json" 0 '"schema": "lossless.whatif/1"' -- \
  "$BIN" "${W[@]}" --degrade su0-rail0-spine0=1e-6 --json
cp "$tmp/out" "$tmp/a.json"
"$BIN" "${W[@]}" --degrade su0-rail0-spine0=1e-6 --json -o "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" && echo "ok   what-if --json: same bytes twice" ||
  { echo "FAIL what-if --json differs between runs"; fail=1; }
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert [c["case"] for c in j["cases"]] == ["healthy", "in_service", "quarantined"], j["cases"]
h, s, q = (c["busbw_gbs"] for c in j["cases"])
assert abs(q / h - 0.75) < 0.04, (h, q)  # (u - 1)/u, docs/what-if.md#the-rail-check
assert j["answer"]["better"] == "in_service", j["answer"]
assert j["links"][0] == {"link": "su0-rail0-spine0", "kind": "degraded", "ber": 1e-6,
  "in_service": "post-FEC BER 1e-06", "quarantined": "down", "source": "--degrade"}, j["links"][0]
' "$tmp/a.json" && echo "ok   what-if --json: cases, rail share, answer" || { echo "FAIL what-if --json content"; fail=1; }

# From the optics store: a quarantined port becomes its link down; ports on
# watch without post-FEC errors measured are named in a note.
F=tests/fixtures/optics
"$BIN" optics ingest --db "$tmp/o.db" --at 2026-03-01T12:00:00Z $F/qsfp28_rx_low_alarm.txt \
  $F/qsfp28_rx_low_warning.txt >/dev/null || { echo "FAIL optics ingest"; fail=1; }
printf '# optics port -> link\nqsfp28_rx_low_alarm  spine3-su1-rail1   # quarantined\n' >"$tmp/map.txt"
expect "what-if --from-optics" 0 "^# spine3-su1-rail1 +in service: down; quarantined: down +\(optics: qsfp28_rx_low_alarm quarantined\)" -- \
  "$BIN" "${W[@]}" --from-optics "$tmp/o.db" --port-map "$tmp/map.txt"
grep -q "^# note: optics: qsfp28_rx_low_warning is on watch with no post-FEC errors measured" "$tmp/out" &&
  echo "ok   what-if --from-optics: watch port noted" || { echo "FAIL what-if --from-optics note"; fail=1; }
# A port on watch for its post-FEC BER becomes a degraded link at that BER.
# Hand-made variant (not a real capture): tests/fixtures/optics/mlxlink_ber_watch.txt
# with the effective (post-FEC) BER set to 1E-06 and the raw BER below the watch limit.
sed -e 's/^Effective Physical BER          : 15E-255/Effective Physical BER          : 1E-06/' \
    -e 's/^Raw Physical BER                : 2.5E-05/Raw Physical BER                : 2.5E-06/' \
    $F/mlxlink_ber_watch.txt >"$tmp/mlx_postfec.txt"
"$BIN" optics ingest --db "$tmp/o2.db" --at 2026-03-01T12:00:00Z "$tmp/mlx_postfec.txt" \
  $F/qsfp28_rx_low_alarm.txt >/dev/null || { echo "FAIL optics ingest variant"; fail=1; }
cp "$tmp/map.txt" "$tmp/map2.txt"
printf 'mlx5_0/p1 su0-rail0-spine0\n' >>"$tmp/map2.txt"
expect "what-if --from-optics: watch port degraded at its BER" 0 \
  "^# su0-rail0-spine0 +in service: post-FEC BER 1e-06; quarantined: down +\(optics: mlx5_0/p1 on watch, effective \(post-FEC\) BER 1e-06 as the device reports it \(mlxlink\)\)" -- \
  "$BIN" "${W[@]}" --from-optics "$tmp/o2.db" --port-map "$tmp/map2.txt"
# Rail 1 has lost a quarter of its uplinks (the quarantined port) in both
# cases, and the ring runs at its slowest rail: the degraded rail-0 link
# (which loses less, 6-8 % at this BER) costs nothing more, in or out.
grep -qE "^answer: either: 2[0-9]\.[0-9] % busbw lost quarantined vs 2[0-9]\.[0-9] % left in service" "$tmp/out" &&
  grep -qE "^frames dropped \(all sizes\) +0 +[1-9][0-9]* +0$" "$tmp/out" && echo "ok   what-if --from-optics: answer" ||
  { echo "FAIL what-if --from-optics answer"; cat "$tmp/out"; fail=1; }

# Bad input: one line, exit 2.
expect "unknown link, nearest named" 2 \
  '^error: <cli>: --degrade: expected a link of this topology such as .*su0-rail0-spine0 \(lossless links lists them\), got "su0-rail0-spine9"$' -- \
  "$BIN" "${W[@]}" --degrade su0-rail0-spine9=1e-7
expect "BER out of range" 2 '^error: <cli>: --degrade: expected a post-FEC BER in \(0, 0.01\] for su0-rail0-spine0, got 0.5$' -- \
  "$BIN" "${W[@]}" --degrade su0-rail0-spine0=0.5
expect "BER not a number" 2 '^error: <cli>: --degrade: expected a post-FEC bit error rate' -- \
  "$BIN" "${W[@]}" --degrade su0-rail0-spine0=high
expect "unknown --down link" 2 '^error: <cli>: --down: expected a link of this topology' -- \
  "$BIN" "${W[@]}" --down leaf9-spine0
printf 'other_port spine3-su1-rail1\n' >"$tmp/nomap.txt"
expect "quarantined port missing from the port map" 2 \
  "^error: $tmp/nomap.txt: port map: expected an entry for port qsfp28_rx_low_alarm \(to quarantine in $tmp/o.db\), found none$" -- \
  "$BIN" "${W[@]}" --from-optics "$tmp/o.db" --port-map "$tmp/nomap.txt"
printf 'qsfp28_rx_low_alarm\n' >"$tmp/badmap.txt"
expect "port map line with one field" 2 "^error: $tmp/badmap.txt:1: port map: expected two fields" -- \
  "$BIN" "${W[@]}" --from-optics "$tmp/o.db" --port-map "$tmp/badmap.txt"
printf '# x\nqsfp28_rx_low_alarm spine3-su9-rail1\n' >"$tmp/badlink.txt"
expect "port map link of no topology link" 2 "^error: $tmp/badlink.txt:2: link: expected a link of this topology" -- \
  "$BIN" "${W[@]}" --from-optics "$tmp/o.db" --port-map "$tmp/badlink.txt"
expect "--from-optics without --port-map" 2 '^error: <cli>: --port-map: expected --from-optics DB and --port-map FILE together$' -- \
  "$BIN" "${W[@]}" --from-optics "$tmp/o.db"
expect "no link given" 2 '^error: <cli>: --down: expected at least one link' -- "$BIN" "${W[@]}"
expect "same link twice" 2 '^error: <cli>: --degrade: expected each link once' -- \
  "$BIN" "${W[@]}" --down su0-rail0-spine0 --degrade spine0-su0-rail0=1e-7
exit $fail
