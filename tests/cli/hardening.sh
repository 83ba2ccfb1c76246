#!/usr/bin/env bash
# Hostile and careless inputs (issue 16): each ends in one error line and
# exit 2, quickly and in little memory, or in the documented figure.
# Usage: bash tests/cli/hardening.sh <path-to-lossless>   (from the repo root)
set -u
BIN=${1:?usage: hardening.sh <lossless binary>}
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/lib/expect.sh"

# one_line NAME: the last command's stderr is exactly one line.
one_line() {
  if [ "$(wc -l <"$tmp/err")" != 1 ]; then
    echo "FAIL $1: want one error line"; cat "$tmp/err" | head -5; fail=1
  fi
}

# Binary and endless input: refused at the first block, within seconds
# (`timeout` turns a hang into exit 124).
T="timeout 10"
expect run-dev-zero 2 '^error: /dev/zero:1: binary data \(NUL byte\): expected a scenario$' -- $T "$BIN" run /dev/zero
one_line run-dev-zero
expect qos-dev-zero 2 '^error: /dev/zero:1: binary data \(NUL byte\)' -- $T "$BIN" audit qos /dev/zero
one_line qos-dev-zero
expect optics-dev-zero 2 '/dev/zero:1: binary data \(NUL byte\)' -- $T "$BIN" optics ingest --db "$tmp/o.db" /dev/zero
expect nccl-dev-zero 2 '^error: /dev/zero:1: binary data \(NUL byte\): expected an nccl-tests log$' -- $T "$BIN" audit nccl /dev/zero
expect topology-file-dev-zero 2 '/dev/zero:1: binary data \(NUL byte\): expected a topology file' -- \
  $T "$BIN" validate scenarios/roce-incast.yaml --set topology.kind=file --set topology.file=/dev/zero
one_line topology-file-dev-zero
expect profile-dev-zero 2 'binary data' -- $T "$BIN" profiles --show /dev/zero

# A 5-line scenario that expands to 4e9 flows: refused at its line before
# any flow is built (it took 21 GB and 140 s to end in std::bad_alloc).
printf 'fabric: {preset: roce}\ntopology: {kind: leaf-spine, gpus: 64, radix: 16}\ntraffic:\n  - {pattern: all-to-all, bytes: 1KiB, repeat: 1000000, every: 1us}\n' >"$tmp/flows.yaml"
expect flow-count 2 "flows.yaml:4: traffic.0: expands to 4032000000 flows, above limits.max_flows \\(4000000\\)" -- $T "$BIN" validate "$tmp/flows.yaml"
one_line flow-count
expect flow-count-set 0 '' -- $T "$BIN" validate "$tmp/flows.yaml" --set stop_time=2us --set limits.max_flows=8064

# 300 lines of `link s0 s1 count=65536` (19.7 M links, 792 MB in validate):
# refused at the line where s0 passes 4096 ports.
{ printf 'defaults rate=400Gbps delay=100ns\nswitch s0\nswitch s1\nhost h0\nhost h1\nlink h0 s0\nlink h1 s1\n'
  for i in $(seq 300); do echo 'link s0 s1 count=65536'; done; } >"$tmp/links.topo"
printf 'fabric: {preset: roce}\ntopology: {kind: file, file: %s}\ntraffic:\n  - {pattern: flow, src: 0, dst: 1, bytes: 1MiB}\n' "$tmp/links.topo" >"$tmp/links.yaml"
expect link-count 2 'links.topo:8: link.count: "s0" has 65537 links so far: expected at most 4096 ports at one node' -- $T "$BIN" validate "$tmp/links.yaml"
one_line link-count

# audit nccl --json streams like the text mode: 16 MB of log (5,800 runs)
# held as JSON took ~180 MB before; the peak now follows one run.
python3 - "$tmp/many.log" <<'PY'
import sys
run = open("tests/fixtures/nccl/g2_allreduce_healthy.log").read()
with open(sys.argv[1], "w") as f:
    f.write(run * (16_000_000 // len(run)))
PY
peak_kib() {  # peak_kib CMD...: runs CMD (stdout to $tmp/out), prints its peak RSS in KiB
  python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$tmp/out" "$@"
}
kib=$(peak_kib "$BIN" audit nccl "$tmp/many.log" --json --preset ib-ndr --nics-per-node 8)
runs=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["files"][0]["runs"]))' "$tmp/out")
# Under AddressSanitizer (its shadow memory and quarantine) the peak says nothing about streaming.
limit=81920
if nm -C "$BIN" 2>/dev/null | grep -q "__asan_init"; then limit=2097152; fi
if [ "$runs" -gt 5000 ] && [ "$kib" -lt "$limit" ]; then echo "ok   nccl-json-streams ($runs runs, peak $kib KiB)"
else echo "FAIL nccl-json-streams: $runs runs, peak $kib KiB (want under 80 MiB)"; fail=1; fi

# An allocation that fails anyway ends in one line saying what was too large.
# Under a 4 GB address-space limit (so that no machine really builds them),
# 967,680,000 flows (77 GB) under a raised limits.max_flows cannot be held.
# A sanitizer build cannot start under such a limit: then this is skipped.
printf 'fabric: {preset: roce}\ntopology: {kind: leaf-spine, gpus: 64, radix: 16}\ntraffic:\n  - {pattern: all-to-all, bytes: 1KiB, repeat: 240000, every: 1us}\n' >"$tmp/oom.yaml"
if (ulimit -v 4000000 && "$BIN" --version >/dev/null 2>&1); then
  expect out-of-memory 2 "^error: out of memory while building the 967680000 flows of .*oom.yaml's traffic \\(limits.max_flows\\)" -- \
    bash -c 'ulimit -v 4000000 && exec "$@"' - $T "$BIN" validate "$tmp/oom.yaml" --set limits.max_flows=1000000000
  one_line out-of-memory
else
  echo "skip out-of-memory: the binary does not start under ulimit -v (sanitizer build)"
fi

# The ns-3 anchor runs without a shell: a folder name is never a command. A
# missing anchor is reported by its exit status (bash: 127), not a raw wait status.
expect anchor-injection 0 "ns-3 anchor .* not available \\(exit status 127\\)" -- \
  $T "$BIN" bench ls-ring --hosts 16 --bytes 4KiB --vs-ns3 --anchors "x'; echo INJECTED > $tmp/injected; echo '"
if [ -e "$tmp/injected" ]; then echo "FAIL anchor-injection: the anchor folder ran as a command"; fail=1; fi
mkdir -p "$tmp/it's/ns3"
printf 'echo "RESULT wall_s=0.5 packet_hops=100 hops_per_wall_s=200"\n' >"$tmp/it's/ns3/run.sh"
expect anchor-with-quote 0 'ns3_packet_hops_per_s=200 ' -- $T "$BIN" bench ls-ring --hosts 16 --bytes 4KiB --vs-ns3 --anchors "$tmp/it's"

# Output paths: '-' is standard output (no file named '-'), a write error is
# exit 2, an unwritable path is found before the run.
printf 'topology: {kind: leaf-spine, gpus: 16, radix: 8}\ntraffic:\n  - {pattern: ring, bytes: 64KiB}\n' >"$tmp/small.yaml"
bin_abs="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
( cd "$tmp" && "$bin_abs" run small.yaml --json - >json.out 2>text.err )
if [ -e "$tmp/-" ] || ! grep -q 'flows' "$tmp/text.err" ||
   ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/json.out" 2>/dev/null; then
  echo "FAIL json-stdout: --json - did not write JSON to standard output"; fail=1
else echo "ok   json-stdout"; fi
expect two-on-stdout 2 '^error: -: outputs.series_csv: expected one output on standard output, got the JSON and the CSV$' -- \
  "$BIN" run "$tmp/small.yaml" --json - --set outputs.series_csv=- --set outputs.series.interval=1ms
expect json-dev-full 2 '^error: /dev/full: --json: cannot write the file: No space left on device$' -- $T "$BIN" run "$tmp/small.yaml" --json /dev/full
expect json-no-folder 2 "^error: $tmp/none/r.json: --json: cannot write the file: No such file or directory$" -- $T "$BIN" run "$tmp/small.yaml" --json "$tmp/none/r.json"
if grep -q 'flows' "$tmp/out"; then echo "FAIL json-no-folder: the run happened before the check"; fail=1; fi

# Item 9: a bare number for a rate or a byte size is bad input (it meant
# 400 bit/s); mtu stays in bytes and counts are plain.
expect bare-rate 2 '^error: <--set>: fabric.link_rate: expected a rate with a unit such as 400Gbps, got "400"$' -- \
  "$BIN" validate scenarios/roce-incast.yaml --set fabric.link_rate=400
one_line bare-rate
printf 'fabric: {preset: roce, buffer: 33554432}\ntopology: {kind: leaf-spine, gpus: 16, radix: 8}\ntraffic:\n  - {pattern: ring, bytes: 64KiB}\n' >"$tmp/bare.yaml"
expect bare-buffer 2 "^error: $tmp/bare.yaml:1: fabric.buffer: expected a size with a unit such as 9KiB or 4096B, got \"33554432\"\$" -- \
  "$BIN" validate "$tmp/bare.yaml"
expect bare-traffic-bytes 2 'traffic.0.bytes: expected a size with a unit' -- \
  "$BIN" validate scenarios/roce-incast.yaml --set traffic.0.bytes=65536
printf 'defaults rate=400 delay=100ns\nswitch s0\nhost h0\nhost h1\nlink h0 s0\nlink h1 s0\n' >"$tmp/bare.topo"
expect bare-topology-rate 2 "bare.topo:1: defaults.rate: expected a rate with a unit such as 400Gbps, got \"400\"" -- \
  "$BIN" validate scenarios/roce-incast.yaml --set topology.kind=file --set "topology.file=$tmp/bare.topo"
expect plain-mtu-and-counts 0 '' -- "$BIN" validate scenarios/roce-incast.yaml --set fabric.mtu=4096 --set limits.max_flows=1000

# Item 22: paths in a scenario are relative to its folder, not to the
# working directory: deadlock-ring4 runs from anywhere, and its outputs land
# beside it.
root="$(pwd)"
( cd "$tmp" && "$bin_abs" validate "$root/scenarios/deadlock-ring4.yaml" >ring.out 2>ring.err )
if grep -q 'ok: explicit topology from .*tests/fixtures/deadlock/ring4.topo' "$tmp/ring.out"; then echo "ok   scenario-relative-topology"
else echo "FAIL scenario-relative-topology"; cat "$tmp/ring.out" "$tmp/ring.err"; fail=1; fi
mkdir -p "$tmp/sub/out"
cp tests/fixtures/deadlock/ring4.topo "$tmp/sub/"
printf 'fabric: {preset: roce, link_rate: 100Gbps}\ntopology: {kind: file, file: ring4.topo}\ntraffic:\n  - {pattern: permutation, stride: 2, bytes: 64KiB}\noutputs: {json: out/r.json, series_csv: out/s.csv, series: {interval: 10us}}\nstop_time: 1ms\n' >"$tmp/sub/s.yaml"
( cd / && "$bin_abs" run "$tmp/sub/s.yaml" >"$tmp/sub.out" 2>&1 )
if [ -s "$tmp/sub/out/r.json" ] && [ -s "$tmp/sub/out/s.csv" ]; then echo "ok   scenario-relative-outputs"
else echo "FAIL scenario-relative-outputs"; cat "$tmp/sub.out"; fail=1; fi
# A path given with --set is the user's, relative to the working directory.
( cd "$tmp" && "$bin_abs" run sub/s.yaml --set outputs.json=cli.json >/dev/null 2>&1 )
if [ -s "$tmp/cli.json" ]; then echo "ok   set-path-relative-to-cwd"; else echo "FAIL set-path-relative-to-cwd"; fail=1; fi

# Item 10 (headroom of a topology file): the default PFC headroom follows the
# links the file declares (500 ns in ring4.topo), not fabric.cable_length's
# 50 ns: deadlock-ring4 dropped 12 lossless frames ("headroom too small") and
# left 2 flows unfinished; the run says which link the default is for.
expect file-headroom 0 '^drops      0 \(lossless class: 0\)' -- "$BIN" run scenarios/deadlock-ring4.yaml
cp "$tmp/out" "$tmp/ring4.txt"
expect file-headroom-basis 0 '^           headroom 43348 B above XOFF \(default for the topology file.s link that needs the most \(h0 -- sw0, 500ns at 100Gbps\)\)$' -- \
  cat "$tmp/ring4.txt"
expect file-headroom-given 0 '^           headroom 20000 B above XOFF \(fabric.pfc.headroom\)$' -- \
  "$BIN" run scenarios/deadlock-ring4.yaml --set fabric.pfc.headroom=20KB
if ! grep -q '^warning: fabric.pfc.headroom: 20000 B is below the 43348 B' "$tmp/err" &&
   ! grep -q 'WARNING    fabric.pfc.headroom: 20000 B is below the 43348 B' "$tmp/out"; then
  echo "FAIL file-headroom-given: no warning against the file's links"; cat "$tmp/err"; fail=1
fi

# Item 14: control characters from input (an ANSI escape and a CR in a
# scenario's name, an escape in its file name) reach the terminal escaped in
# what run, validate and deadlock print. (Node names of a topology file
# cannot hold them: that parser refuses them.)
esc=$'\033'
ctl="$tmp/ctl${esc}[31m.yaml"
printf 'name: "evil\\e[2J\\rname"\nfabric: {preset: roce, link_rate: 100Gbps}\ntopology: {kind: leaf-spine, gpus: 16, radix: 8}\ntraffic:\n  - {pattern: ring, bytes: 64KiB}\n' >"$ctl"
for cmd in run validate deadlock "perf all_reduce -b 8M -e 8M --nodes 2 -g 8 --scenario" "train --model 1.1b --nodes 2 --scenario"; do
  # shellcheck disable=SC2086
  "$BIN" $cmd "$ctl" >"$tmp/ctl.out" 2>&1
  if grep -q "$esc" "$tmp/ctl.out" || grep -q $'\r' "$tmp/ctl.out"; then
    echo "FAIL control-chars-${cmd%% *}: a raw control character reached the terminal"; cat -v "$tmp/ctl.out" | head -5; fail=1
  elif ! grep -qF '\x1b' "$tmp/ctl.out"; then
    echo "FAIL control-chars-${cmd%% *}: the escape is not shown"; cat -v "$tmp/ctl.out" | head -5; fail=1
  else echo "ok   control-chars-${cmd%% *}"; fi
done

# Items 15 and 21 beyond run: '-' is standard input for validate, deadlock,
# audit topo and report, '-o -' standard output for report; a full disk
# behind standard output is an error, not exit 0.
expect validate-stdin 0 '^-: ok: ' -- bash -c '"$1" validate - <scenarios/roce-incast.yaml' - "$BIN"
expect deadlock-stdin 0 'no cyclic buffer dependency' -- bash -c '"$1" deadlock - <scenarios/roce-incast.yaml' - "$BIN"
expect topo-stdin 0 '' -- bash -c '"$1" audit topo - <tests/fixtures/topo/dgx_h100_8gpu_8nic.txt' - "$BIN"
# A profile from standard input (it was taken for a profile named "-"),
# read once though the command loads it more than once.
expect profile-stdin 0 '^# ib-ndr: ' -- bash -c '"$1" profiles --show - <profiles/ib-ndr.yaml' - "$BIN"
expect tco-profile-stdin 0 'ib-ndr' -- bash -c '"$1" tco --gpus 64 --fabric - <profiles/ib-ndr.yaml' - "$BIN"
expect stdout-full 2 '^error: <stdout>: cannot write: No space left on device$' -- bash -c '"$1" validate scenarios/roce-incast.yaml >/dev/full' - "$BIN"
one_line stdout-full
# fmt's own "cannot write to file" (tco --json, params) now names standard output.
expect nccl-json-stdout-full 2 '^error: <stdout>: cannot write: No space left on device$' -- \
  bash -c '"$1" audit nccl tests/fixtures/nccl/g2_allreduce_healthy.log --preset ib-ndr --nics-per-node 8 --json >/dev/full' - "$BIN"
expect tco-stdout-full 2 '^error: <stdout>: cannot write: No space left on device$' -- \
  bash -c '"$1" tco --gpus 64 --fabric ib-ndr --json >/dev/full' - "$BIN"
expect params-stdout-full 2 '^error: <stdout>: cannot write: No space left on device$' -- bash -c '"$1" params >/dev/full' - "$BIN"
expect report-stdin-stdout 0 '<html' -- bash -c '"$1" report - -o - <tests/fixtures/compare/sample-results.json' - "$BIN"
if [ -e "-" ]; then echo "FAIL report-stdin-stdout: a file named '-'"; fail=1; fi
expect report-dev-full 2 '^error: /dev/full: -o: cannot write the file: No space left on device$' -- \
  "$BIN" report tests/fixtures/compare/sample-results.json -o /dev/full
expect report-no-folder 2 "^error: $tmp/none/r.html: -o: cannot write the file: No such file or directory$" -- \
  "$BIN" report tests/fixtures/compare/sample-results.json -o "$tmp/none/r.html"
one_line report-no-folder
# Item 20: the last one-line cases. A command-line mistake is one line (CLI11
# added "Run with --help" on a second); a default that does not fit is
# reported against the scenario, not a file named "<default>"; UTF-16 gets
# its hint in audit topo too.
expect cli-missing-arg 2 '^error: <cli>: FILE is required \(usage: lossless run --help\)$' -- "$BIN" run
one_line cli-missing-arg
expect cli-unknown-flag 2 '^error: <cli>: The following argument was not expected: --bogus \(usage: lossless validate --help\)$' -- "$BIN" validate x --bogus
one_line cli-unknown-flag
expect cli-help 0 'Scenario file' -- "$BIN" run --help
expect default-location 2 '^error: scenarios/roce-incast.yaml \(default\): fabric.pfc.xoff: expected XOFF plus headroom' -- \
  "$BIN" validate scenarios/roce-incast.yaml --set fabric.buffer=100KB
one_line default-location
iconv -t UTF-16 tests/fixtures/topo/dgx_h100_8gpu_8nic.txt >"$tmp/u16.txt"
expect topo-utf16 2 'u16.txt:1: UTF-16 text: expected UTF-8 or ASCII \(convert it' -- "$BIN" audit topo "$tmp/u16.txt"
one_line topo-utf16

# Item 20 over every command that reads a file: a folder, a missing file,
# binary data, UTF-16 and an empty file each give one line naming the file,
# exit 2, before any simulation (`timeout`: compare --prices was read only
# after the whole comparison).
mkdir -p "$tmp/adir"
printf 'a\0b\n' >"$tmp/nul.bin"
: >"$tmp/empty.in"
iconv -t UTF-16 scenarios/roce-incast.yaml >"$tmp/u16.in"
readers=(
  "run @" "validate @" "deadlock @" "perf all_reduce -b 8M -e 8M --nodes 2 --scenario @"
  "perf all_reduce -b 8M -e 8M --nodes 2 --fabric @" "compare --profiles ib-ndr -o $tmp/cmp --scenario @"
  "compare --profiles ib-ndr -o $tmp/cmp --prices @" "train --model 1.1b --nodes 2 --scenario @"
  "audit nccl @" "audit topo @" "audit qos @" "optics ingest --db $tmp/r.db @" "report @ -o $tmp/r.html"
  "tco --gpus 64 --fabric ib-ndr --prices @" "tco --gpus 64 --fabric @" "profiles --show @")
for r in "${readers[@]}"; do
  for input in adir missing nul.bin u16.in empty.in; do
    f="$tmp/$input"
    case $input in
      adir) want="^error: $f: is a directory: expected " ;;
      missing) want="^error: $f: cannot open: No such file or directory\$" ;;
      nul.bin) want="^error: $f:1: binary data \\(NUL byte\\): expected " ;;
      u16.in) want="^error: $f:1: UTF-16 text: expected UTF-8 or ASCII \\(convert it" ;;
      empty.in) want="^error: $f:1: (expected .*got an empty file|expected a mapping of price names)" ;;
    esac
    # shellcheck disable=SC2086
    expect "reader ${r%% @*} $input" 2 "$want" -- $T "$BIN" ${r/@/$f}
    one_line "reader ${r%% @*} $input"
  done
done
expect optics-db-folder 2 "^error: $tmp/adir: --db: is a directory: expected an optics database file" -- \
  "$BIN" optics status --db "$tmp/adir"
printf '{"schema": "lossless.compare/1",\n  oops}' >"$tmp/bad.json"
expect report-json-line 2 "^error: $tmp/bad.json:2: expected JSON" -- "$BIN" report "$tmp/bad.json" -o "$tmp/r.html"

# Writing to a device never replaces it (an output renamed over /dev/full
# replaced the device, as root).
# A binary with that bug breaks /dev/full for everyone on the machine: put the
# device back (as root) and fail.
if [ -c /dev/full ]; then echo "ok   dev-full-still-a-device"
else
  echo "FAIL dev-full-still-a-device: /dev/full was replaced by a regular file"; fail=1
  if [ "$(id -u)" = 0 ]; then rm -f /dev/full && mknod -m 666 /dev/full c 1 7 && echo "     (restored /dev/full)"; fi
fi

exit $fail
