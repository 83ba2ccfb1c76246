#!/usr/bin/env bash
# `lossless scenario from-qos` end to end (docs/from-qos.md):
# one real config per vendor in tests/fixtures/real/qos/ gives a scenario that
# loads (its topology is built by `lossless links`; from_qos_test loads all
# of them in one process), one with a traffic section
# runs in `lossless run`; a value the simulator refuses is named on stderr
# with its line; bad input exits 2 with one line.
set -u
source "$(dirname "$0")/lib/require.sh"
BIN="$1"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

n=0
seen=" "
for f in tests/fixtures/real/qos/*; do
  vendor="$(basename "$f")"; vendor="${vendor%%_*}"
  case "$seen" in *" $vendor "*) continue ;; esac
  seen="$seen$vendor "
  out="$tmp/$(basename "$f").yaml"
  if ! "$BIN" scenario from-qos "$f" -o "$out" 2>"$tmp/err"; then
    echo "FAIL from-qos $f"; cat "$tmp/err"; fail=1; continue
  fi
  if ! "$BIN" links --scenario "$out" >/dev/null 2>"$tmp/err"; then
    echo "FAIL from-qos $f: the scenario does not load"; cat "$tmp/err"; fail=1; continue
  fi
  n=$((n + 1))
done
[ "$n" -ge 8 ] && echo "ok   from-qos: $n real configs (one per vendor), each a scenario that loads" ||
  { echo "FAIL from-qos: only $n real configs converted"; fail=1; }

S=tests/fixtures/real/qos/sonic_config_db_full_3_0_3.json
expect "from-qos sonic: xoff from the dynamic threshold, with its line" 0 \
  "^    xoff: 3957916B   # $S:430: PFC trigger of priority 3: dynamic threshold alpha 1/8" -- \
  "$BIN" scenario from-qos "$S"
grep -qE "^  switch_latency: 600ns   # default \(profile roce-tuned\)$" "$tmp/out" &&
  echo "ok   from-qos: defaults marked with the profile" || { echo "FAIL from-qos: default marking"; fail=1; }
grep -qE "^#   $S:1668: PFC on priority 4 \(the simulator models one lossless priority, 3\)$" "$tmp/out" &&
  echo "ok   from-qos: ignored settings listed with their line" || { echo "FAIL from-qos: ignored list"; fail=1; }
grep -qE "^from-qos: 1[0-9] value\(s\) from $S, [0-9]+ from profile roce-tuned, [0-9]+ ignored, 0 not mapped$" "$tmp/err" &&
  echo "ok   from-qos: summary on stderr" || { echo "FAIL from-qos: summary"; cat "$tmp/err"; fail=1; }
{ cat "$tmp/out"; printf 'traffic:\n  - {pattern: flow, src: 0, dst: 15, bytes: 256KiB}\n'; } >"$tmp/run.yaml"
expect "lossless run on the from-qos scenario" 0 "completed: 1/1 flows done" -- "$BIN" run "$tmp/run.yaml"

expect "from-qos: a refused value named with its line" 0 \
  "^from-qos: not mapped: tests/fixtures/real/qos/nxos_azure_local_qos_policy.md:201: fabric.ecn.kmin = 300000B not used: expected Kmin below Kmax" -- \
  "$BIN" scenario from-qos tests/fixtures/real/qos/nxos_azure_local_qos_policy.md -o "$tmp/nxos.yaml"

expect "from-qos: unknown profile" 2 '^error: <cli>: --profile: unknown profile "roce-tunned"' -- \
  "$BIN" scenario from-qos "$S" --profile roce-tunned
expect "from-qos: missing file" 2 '^error: .*nope.json' -- "$BIN" scenario from-qos "$tmp/nope.json"
expect "from-qos: bad --format" 2 '^error: <cli>: --format: expected a format audit qos reads' -- \
  "$BIN" scenario from-qos "$S" --format cisco
expect "from-qos: not a QoS config" 2 '^error: ' -- "$BIN" scenario from-qos examples/topo.txt
exit $fail
