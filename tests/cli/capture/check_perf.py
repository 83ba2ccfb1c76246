#!/usr/bin/env python3
"""Checks the timeline `lossless perf --trace` writes against the ring
algorithm and perf's own JSON (tests/cli/capture_perf.sh, docs/capture.md).

usage: check_perf.py PERF.json TRACE.json

Expected step slices come from the ring plan, not from the output: per
collective, rank and channel, loops x steps, where steps = 2(n - 1) for
all_reduce and n - 1 for reduce_scatter and all_gather (NCCL's runRing), a
loop is n x chunk bytes of the channel's share, chunk = NCCL Simple's 4
steps of NCCL_BUFFSIZE / NCCL_STEPS = 512 KiB (ALLREDUCE_CHUNKSTEPS). The
channel count is the one the run reports per row. Also: the slices of one
(rank, channel) thread never overlap; a rank's step slices carry, summed,
the bytes the ring moves per rank (2(n-1)/n x size for all_reduce); PFC
frames, ECN marks and CNPs per port equal perf's link counters.
"""
import collections
import json
import sys

failures = []


def check(name, got, want):
    if got != want:
        failures.append(f"FAIL {name}: the trace has {got}, expected {want}")
    else:
        print(f"ok   {name}: {got}")


def ps(us):
    return round(us * 1e6)


STEPS = {"all_reduce": lambda n: 2 * (n - 1), "reduce_scatter": lambda n: n - 1,
         "all_gather": lambda n: n - 1}
SEND_SHARE = {"all_reduce": lambda n: (2 * (n - 1), n), "reduce_scatter": lambda n: (n - 1, n),
              "all_gather": lambda n: (n - 1, n)}
CHUNK = 4 * (512 << 10)


def main():
    perf = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    events = doc["traceEvents"]
    check("trace schema", doc["otherData"]["schema"], "lossless.trace/1")
    check("events cut", doc["otherData"]["events_cut"], 0)
    coll = perf["collective"]
    n = perf["ranks"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    rank_pid = {int(name.split()[1]): pid for pid, name in procs.items() if name.startswith("rank ")}
    check("rank processes", sorted(rank_pid), list(range(n)))

    # One collective slice per iteration and half, in order of the rows.
    iters = perf["options"]["iters"] + perf["options"]["warmup_iters"]
    halves = 2
    colls = sorted((e for e in events if e["ph"] == "X" and e["pid"] == [p for p, v in procs.items() if v == "collectives"][0]),
                   key=lambda e: e["ts"])
    want_colls = [r["size"] for r in perf["results"] for _ in range(iters * halves)]
    check("collective slices (size of each, in order)", [e["args"]["size"] for e in colls], want_colls)

    steps = [e for e in events if e["ph"] == "X" and e["pid"] in rank_pid.values()]
    by_iteration = collections.defaultdict(list)
    for e in steps:
        by_iteration[e["args"]["iteration"]].append(e)
    # Expected slices per (rank, channel) of each collective, from the plan.
    rows = [r for r in perf["results"] for _ in range(iters * halves)]
    count_ok = bytes_ok = order_ok = True
    total_want = 0
    for it, row in enumerate(rows):
        size, channels = row["size"], row["channels"]
        per = collections.defaultdict(list)
        for e in by_iteration[it]:
            per[(e["pid"], e["args"]["channel"])].append(e)
        for ch in range(channels):
            share = size // channels + (1 if ch < size % channels else 0)
            loops = -(-share // (n * CHUNK))
            want = loops * STEPS[coll](n)
            total_want += want * n
            for r in range(n):
                got = per[(rank_pid[r], ch)]
                if len(got) != want:
                    count_ok = False
                    failures.append(f"FAIL collective {it} rank {r} channel {ch}: {len(got)} step "
                                    f"slices, the plan has {want} ({loops} loops x {STEPS[coll](n)} steps)")
                seq = [(e["args"]["loop"], e["args"]["step"]) for e in sorted(got, key=lambda e: e["ts"])]
                if seq != [(l, k) for l in range(loops) for k in range(STEPS[coll](n))]:
                    order_ok = False
        num, den = SEND_SHARE[coll](n)
        for r in range(n):
            sent = sum(e["args"]["bytes"] for (pid, _), es in per.items() if pid == rank_pid[r] for e in es)
            if size % (channels * n) == 0 and sent != num * size // den:
                bytes_ok = False
                failures.append(f"FAIL collective {it} rank {r}: step slices carry {sent} B, "
                                f"the ring sends {num}/{den} x {size} B")
    print(f"     {len(steps)} step slices over {len(rows)} collectives, {n} ranks")
    check("step slices per (collective, rank, channel) = loops x steps of the plan", count_ok, True)
    check("step slices in plan order (loop, step)", order_ok, True)
    check("bytes of a rank's step slices = what the ring sends per rank", bytes_ok, True)
    check("step slices in all", len(steps), total_want)
    overlaps = 0
    threads = collections.defaultdict(list)
    for e in steps:
        threads[(e["pid"], e["tid"])].append((ps(e["ts"]), ps(e["dur"])))
    for t in threads.values():
        t.sort()
        overlaps += sum(1 for a, b in zip(t, t[1:]) if a[0] + a[1] > b[0])
    check("overlapping slices on one (rank, channel) thread", overlaps, 0)
    check("peers differ from the rank", all(procs[e["pid"]] != f"rank {e['args']['peer']}" for e in steps), True)

    pfc, ecn, cnp = collections.Counter(), collections.Counter(), collections.Counter()
    for e in events:
        port = procs.get(e["pid"])
        if e["name"] == "PFC frame":
            pfc[port] += 1
        elif e["name"] == "ECN mark":
            ecn[port] += 1
        elif e["name"] == "CNP":
            cnp[port] += 1
    links = {l["link"]: l for l in perf["links"]}
    for name in sorted(set(links) | set(pfc) | set(ecn) | set(cnp)):
        l = links.get(name, {"pause_frames": 0, "ecn_marks": 0, "cnps": 0})
        check(f"PFC frames sent by {name}", pfc[name], l["pause_frames"])
        check(f"ECN marks at {name}", ecn[name], l["ecn_marks"])
        check(f"CNPs from {name}", cnp[name], l["cnps"])
    check("PFC frames, ECN marks and CNPs in perf's JSON (the test needs some)",
          sum(l["pause_frames"] for l in perf["links"]) > 0 and sum(l["ecn_marks"] for l in perf["links"]) > 0
          and sum(l["cnps"] for l in perf["links"]) > 0, True)
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
