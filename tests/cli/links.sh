#!/usr/bin/env bash
# `lossless links` and faults.link_down end to end (docs/what-if.md): every
# link of a profile's topology by the name faults use (#k on parallel links),
# JSON with its schema and byte-identical across runs, a scenario's topology
# file; a link_down fault in `lossless run` loses packets that RC recovers;
# an unknown link name, a bundle without #k and a bad flag exit 2 with one
# line naming the field.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "$0")/lib/expect.sh"

expect "links ib-ndr 2 nodes" 0 "^leaf0-spine0#0 +leaf-spine +400Gbps" -- \
  "$BIN" links --fabric ib-ndr --nodes 2
# 16 host links + 8 leaves x 32 uplinks, 8 to each of 4 spines.
n=$(grep -cE '^(host|leaf)' "$tmp/out")
[ "$n" = 272 ] && echo "ok   links: 272 links" || { echo "FAIL links: $n links, expected 272"; fail=1; }
grep -qE '^leaf7-spine3#7 ' "$tmp/out" && echo "ok   links: parallel links numbered to #7" ||
  { echo "FAIL links: no leaf7-spine3#7"; fail=1; }
expect "links --json" 0 '"schema": "lossless.links/1"' -- \
  "$BIN" links --fabric roce-untuned --nodes 2 --json
cp "$tmp/out" "$tmp/a.json"
"$BIN" links --fabric roce-untuned --nodes 2 --json >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" && echo "ok   links --json: same bytes twice" ||
  { echo "FAIL links --json differs between runs"; fail=1; }
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
names = [l["name"] for l in j["links"]]
assert len(names) == len(set(names)), "duplicate names"
assert j["links"][0] == {"name": "host0-leaf0", "a": "host0", "b": "leaf0", "tiers": "host-leaf",
                         "rate_gbps": 400.0, "delay_ns": 50.0}, j["links"][0]
' "$tmp/a.json" && echo "ok   links --json: unique names, fields" || { echo "FAIL links --json content"; fail=1; }

cat >"$tmp/rail.yaml" <<YAML
name: rail
fabric: {preset: roce, routing: adaptive}
topology: {kind: file, file: $PWD/tests/fixtures/topology/rail_2su_thin_uplinks.topo}
YAML
expect "links --scenario with a topology file" 0 "^su0-rail0-spine0 +leaf-spine +100Gbps" -- \
  "$BIN" links --scenario "$tmp/rail.yaml"

# A link down mid-run: what it carried is lost and RC resends it.
cat >"$tmp/down.yaml" <<YAML
name: down
fabric: {preset: roce, link_rate: 100Gbps, routing: adaptive}
transport: {kind: rc, timeout: 4}
topology: {kind: ls-ring, gpus: 4, hosts_per_leaf: 2, spines: 2}
traffic:
  - {pattern: flow, src: 2, dst: 0, bytes: 2MB}
faults:
  link_down: {link: spine0-leaf0, at: 20us}
  reroute: {ethernet: 40us}
YAML
expect "run with a link down" 0 "completed: 1/1 flows done" -- "$BIN" run "$tmp/down.yaml"
grep -qE '^drops +[1-9]' "$tmp/out" && grep -qE '^transport +rc: .* [1-9][0-9]* data packets resent' "$tmp/out" &&
  echo "ok   run with a link down: packets lost and resent" ||
  { echo "FAIL run with a link down: no drops or no resends"; grep -E '^(drops|transport)' "$tmp/out"; fail=1; }
expect "validate --show prints the link_down entry" 0 \
  "faults.link_down.0 += +link=spine0-leaf0 at=20us up_at=never" -- "$BIN" validate "$tmp/down.yaml" --show

expect "run: unknown link" 2 \
  '^error: <--set>: faults.link_down.0.link: expected a link of this topology such as host0-leaf0, .*got "leaf0-spine9"$' -- \
  "$BIN" run "$tmp/down.yaml" --set faults.link_down.0.link=leaf0-spine9
expect "run: up_at before at" 2 '^error: <--set>: faults.link_down.0.up_at: expected a time after at \(20us\), got "10us"$' -- \
  "$BIN" run "$tmp/down.yaml" --set faults.link_down.0.up_at=10us
expect "run ib-ndr: bundle without #k" 2 \
  '^error: <--set>: faults.link_down.0.link: "leaf0-spine0" is a bundle of 8 parallel links: expected one of them by its number, leaf0-spine0#0 ... leaf0-spine0#7$' -- \
  "$BIN" run profiles/ib-ndr.yaml --set topology.nodes=2 --set traffic.0.pattern=ring \
  --set traffic.0.bytes=64KiB --set faults.link_down.0.link=leaf0-spine0 --set faults.link_down.0.at=0s
expect "links: unknown profile" 2 '^error: <cli>: --fabric: unknown profile "ib-nrd"' -- \
  "$BIN" links --fabric ib-nrd
expect "links: --fabric and --scenario" 2 '^error: <cli>: --scenario: expected --fabric or --scenario, not both' -- \
  "$BIN" links --fabric ib-ndr --scenario "$tmp/rail.yaml"
expect "links: neither" 2 '^error: <cli>: --fabric: expected --fabric NAME or --scenario FILE$' -- \
  "$BIN" links
exit $fail
