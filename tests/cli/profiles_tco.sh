#!/usr/bin/env bash
# `lossless profiles` and `lossless tco` end to end: every built-in profile is
# listed, printed by --show and runs under `lossless run` with a small traffic
# pattern at 2 nodes (one also at 16); unknown names, price file errors and GPU
# counts no topology can host exit 2 with one line naming the field; tco's
# JSON carries its schema and is byte-identical across runs.
set -u
source "$(dirname "$0")/lib/require.sh"
require python3
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

source "$(dirname "$0")/lib/expect.sh"

names="cloud-shared ib-hdr ib-ndr ib-xdr roce-100g roce-200g roce-400g roce-800g roce-tuned roce-untuned"
expect "profiles lists every profile" 0 "^roce-untuned +400Gbps +PFC +dcqcn-firmware +ecmp" -- "$BIN" profiles
cp "$tmp/out" "$tmp/list"
for n in $names; do
  grep -qE "^$n " "$tmp/list" || { echo "FAIL profiles: $n not listed"; fail=1; }
  expect "profiles --show $n" 0 "^name: $n$" -- "$BIN" profiles --show "$n"
  cmp -s "$tmp/out" "profiles/$n.yaml" || { echo "FAIL --show $n differs from profiles/$n.yaml"; fail=1; }
  expect "run $n, 2 nodes, ring" 0 "completed: 16/16 flows done" -- \
    "$BIN" run "profiles/$n.yaml" --set topology.nodes=2 --set traffic.0.pattern=ring \
    --set traffic.0.bytes=256KiB
done
expect "run ib-ndr, 16 nodes, cross-node permutation" 0 "completed: 128/128 flows done" -- \
  "$BIN" run profiles/ib-ndr.yaml --set topology.nodes=16 --set traffic.0.pattern=permutation \
  --set traffic.0.stride=8 --set traffic.0.bytes=64KiB
expect "run cloud-shared simulates its tenants and virtualization delay" 0 "completed: 16/16 flows done" -- \
  "$BIN" run profiles/cloud-shared.yaml --set traffic.0.pattern=ring --set traffic.0.bytes=64KiB
grep -q "WARNING" "$tmp/out" "$tmp/err" && { echo "FAIL run cloud-shared: a warning"; fail=1; }
expect "unknown profile" 2 "^error: <cli>: --show: unknown profile \"ib-nrd\"; expected one of cloud-shared, .*did you mean 'ib-ndr'" -- \
  "$BIN" profiles --show ib-nrd
expect "tco unknown profile" 2 "^error: <cli>: --fabric: unknown profile \"infiniband\"" -- \
  "$BIN" tco --gpus 64 --fabric infiniband

# tco: the 1,016-GPU reference design (NVIDIA DGX SuperPOD H100 RA, Table 4).
expect "tco 1016 ib-ndr" 0 "^fabric: 2 tier\(s\), rail-optimized: 32 leaves, 16 spines \(48 switches of radix 64\)" -- \
  "$BIN" tco --gpus 1016 --fabric ib-ndr
grep -qE "^links: 1,016 host \+ 4 management, 1,024 leaf-spine" "$tmp/out" || { echo "FAIL tco 1016 links"; fail=1; }
grep -q "^warning: placeholder price_nic_400g" "$tmp/err" || { echo "FAIL tco: no grade-D warning"; fail=1; }
expect "tco --set a plain Clos" 0 "^fabric: 2 tier\(s\), leaf-spine: 4 leaves, 2 spines \(6 switches of radix 128\)" -- \
  "$BIN" tco --gpus 256 --fabric roce-tuned --set topology.kind=leaf-spine
expect "tco --set bad field" 2 "^error: <--set>: topology.kind: expected one of" -- \
  "$BIN" tco --gpus 256 --fabric roce-tuned --set topology.kind=ring
expect "tco json" 0 '"schema": "lossless.tco/1"' -- "$BIN" tco --gpus 2048 --fabric roce-tuned --json
cp "$tmp/out" "$tmp/json1"
"$BIN" tco --gpus 2048 --fabric roce-tuned --json >"$tmp/json2" 2>/dev/null
cmp -s "$tmp/json1" "$tmp/json2" && echo "ok   tco json is deterministic" || { echo "FAIL tco json differs between runs"; fail=1; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['topology']['switches']==48, d['topology']" "$tmp/json1" \
  && echo "ok   tco json parses" || { echo "FAIL tco json content"; fail=1; }
expect "tco --rate 800g" 0 "switch_ib_xdr" -- "$BIN" tco --gpus 1024 --fabric ib-ndr --rate 800g
expect "tco cloud not comparable" 0 "not comparable \(includes GPUs\)" -- "$BIN" tco --gpus 1024 --fabric cloud-shared
expect "tco cloud with server capex" 0 "comparable with on-prem all-in" -- \
  "$BIN" tco --gpus 1024 --fabric cloud-shared --server-capex 30000
expect "tco too many GPUs" 2 "^error: <cli>: --gpus: expected at most 65536 GPUs" -- \
  "$BIN" tco --gpus 70000 --fabric ib-ndr
expect "tco GPUs not whole nodes" 2 "^error: <cli>: --gpus: expected a multiple of the profile's gpus_per_node \(8\)" -- \
  "$BIN" tco --gpus 1020 --fabric roce-tuned
expect "tco bad rate" 2 "^error: <cli>: --rate: expected 400g or 800g" -- \
  "$BIN" tco --gpus 64 --fabric ib-ndr --rate 1t
printf 'pue: 1.1\nprice_switch_eth_51t:\n  value: many\n' >"$tmp/bad.yaml"
expect "tco non-numeric price" 2 "^error: $tmp/bad.yaml:3: price_switch_eth_51t.value: expected a number, got \"many\"" -- \
  "$BIN" tco --gpus 64 --fabric roce-tuned --prices "$tmp/bad.yaml"
printf 'pue: 1.1\nprice_switch_eth_51t:\n  source: a quote\n' >"$tmp/missing.yaml"
expect "tco missing price value" 2 "^error: $tmp/missing.yaml:2: price_switch_eth_51t.value: expected a number \(the field is missing\)" -- \
  "$BIN" tco --gpus 64 --fabric roce-tuned --prices "$tmp/missing.yaml"
expect "tco unreadable price file" 2 "^error: $tmp/none.yaml: cannot open: No such file or directory" -- \
  "$BIN" tco --gpus 64 --fabric roce-tuned --prices "$tmp/none.yaml"
printf 'pue: 1.1\nprice_switch_eth_51t: 30000\n' >"$tmp/good.yaml"
expect "tco override listed" 0 "price_switch_eth_51t = 30000 USD / switch \(default 36000\) from $tmp/good.yaml:2" -- \
  "$BIN" tco --gpus 1024 --fabric roce-tuned --prices "$tmp/good.yaml"
if grep -q "placeholder price_switch_eth_51t" "$tmp/err"; then echo "FAIL overridden value still warned"; fail=1; fi
exit $fail
