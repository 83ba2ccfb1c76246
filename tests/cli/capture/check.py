#!/usr/bin/env python3
"""Checks a run's pcapng capture with tshark and its trace-event timeline
against the run's own JSON counters (tests/cli/capture.sh, docs/capture.md).

usage: check.py roce|ib RUN.json CAPTURE.pcapng TRACE.json

Exits 1 with one FAIL line per mismatch. Every count must match exactly; the
paused time of the timeline to within a picosecond per port and class (the
JSON gives it as a fraction of the run).
"""
import collections
import json
import subprocess
import sys

failures = []


def check(name, got, want):
    if got != want:
        failures.append(f"FAIL {name}: capture/trace has {got}, the run's JSON says {want}")
    else:
        print(f"ok   {name}: {got}")


def tshark(path, *args):
    out = subprocess.run(["tshark", "-r", path, *args], capture_output=True, text=True, check=True)
    return out.stdout


FIELDS = ["frame.interface_name", "_ws.malformed", "_ws.short", "_ws.expert.severity", "ip.dsfield.ecn",
          "macc.opcode", "macc.cbfc.enbv", *[f"macc.cbfc.pause_time.c{c}" for c in range(8)],
          "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
          "infiniband.aeth.syndrome.opcode", "erf.types.type", "infiniband.lrh.pktlen",
          "frame.len"]
_frames = {}


def frames(path):
    """Every frame of the capture as a dict of FIELDS (one tshark run per file)."""
    if path not in _frames:
        args = ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
        for n in FIELDS:
            args += ["-e", n]
        rows = [line.split("\t") for line in tshark(path, *args).splitlines() if line]
        _frames[path] = [dict(zip(FIELDS, r)) for r in rows]
    return _frames[path]


def fields(path, match, *names):
    """Rows of the named fields of the frames for which match(frame) holds."""
    return [[f[n] for n in names] for f in frames(path) if match(f)]


def by_interface(rows):
    out = collections.Counter()
    for r in rows:
        out[r[0]] += 1
    return out


def check_dissection(pcap):
    frames = len(fields(pcap, lambda f: True, "frame.len"))
    malformed = len(fields(pcap, lambda f: f["_ws.malformed"] != "", "frame.len"))
    expert = len(fields(pcap, lambda f: f["_ws.expert.severity"] != "" and int(f["_ws.expert.severity"], 0) >= 0x600000, "frame.len"))
    print(f"     {frames} frames")
    if frames == 0:
        failures.append("FAIL capture: no frames")
    short = len(fields(pcap, lambda f: f["_ws.short"] != "", "frame.len"))
    check("frames tshark marks malformed", malformed, 0)
    check("frames tshark finds cut short", short, 0)
    check("frames with an expert warning or error", expert, 0)
    summary = tshark(pcap, "-q", "-z", "expert")
    for bad in ("Malformed", "Error", "Warning"):
        if bad in summary:
            failures.append(f"FAIL tshark -z expert reports {bad}:\n{summary}")


def check_psns(pcap, run, hosts, n_packets):
    """Data PSNs per destination QP as the sources sent them: every PSN
    0..n-1 sent, first sendings in order, resendings = the run's count."""
    rows = fields(pcap, lambda f: f["frame.interface_name"] in hosts and
                  f["infiniband.bth.opcode"] != "" and int(f["infiniband.bth.opcode"]) <= 4,
                  "infiniband.bth.destqp", "infiniband.bth.psn")
    per_qp = collections.defaultdict(list)
    for qp, psn in rows:
        per_qp[qp].append(int(psn))
    resent = 0
    ordered = True
    for qp, psns in per_qp.items():
        firsts = []
        seen = set()
        for p in psns:
            if p in seen:
                resent += 1
            else:
                seen.add(p)
                firsts.append(p)
        ordered &= firsts == sorted(firsts)
        check(f"QP {qp}: PSNs sent are 0..{n_packets - 1}", sorted(seen) == list(range(n_packets)),
              True)
    check("QPs in the capture", len(per_qp), run["flows"]["total"] if isinstance(run["flows"], dict) else run["flows"])
    check("first sendings in PSN order", ordered, True)
    want = run["transport"]["retransmitted_packets"] if "transport" in run else 0
    check("data packets sent again (PSN repeats at the sources)", resent, want)


def check_trace(trace_path, run):
    with open(trace_path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    check("trace schema", doc["otherData"]["schema"], "lossless.trace/1")
    bad = []
    open_b = collections.Counter()
    for e in events:
        ph = e.get("ph")
        if ph not in ("X", "B", "E", "i", "C", "M"):
            bad.append(f"ph {ph!r}")
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            bad.append(f"pid/tid of {e}")
        if not isinstance(e.get("name"), str):
            bad.append(f"name of {e}")
        if ph != "M" and not (isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0):
            bad.append(f"ts of {e}")
        if ph == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            bad.append(f"dur of {e}")
        if ph == "i" and e.get("s") not in ("t", "p", "g"):
            bad.append(f"instant scope of {e}")
        if ph == "C" and not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
            bad.append(f"counter args of {e}")
        if ph == "B":
            open_b[(e["pid"], e["tid"])] += 1
        if ph == "E":
            open_b[(e["pid"], e["tid"])] -= 1
    check("trace events breaking the trace-event rules", bad[:3], [])
    check("unbalanced B/E pairs", [k for k, v in open_b.items() if v != 0], [])
    pids = {e["args"]["name"]: e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    name_of = {pid: name for name, pid in pids.items()}
    ecn = collections.Counter()
    cnp = collections.Counter()
    pfc = collections.Counter()
    paused = collections.defaultdict(int)
    for e in events:
        port = name_of.get(e["pid"])
        if e["name"] == "ECN mark":
            ecn[port] += 1
        elif e["name"] == "CNP":
            cnp[port] += 1
        elif e["name"] == "PFC frame":
            pfc[port] += 1
        elif e["name"] == "paused":
            paused[(port, e["args"]["class"])] += e["args"]["ps"]
    sim_ps = run["sim_time_ps"]
    for p in run["ports"]:
        check(f"trace ECN marks at {p['link']}", ecn[p["link"]], p["ecn_marks"])
        check(f"trace CNPs from {p['link']}", cnp[p["link"]], p["cnps"])
        check(f"trace PFC frames from {p['link']}", pfc[p["link"]], p.get("pause_tx", 0))
        for c in p["classes"]:
            got = paused[(p["link"], c["class"])]
            want = c["paused_fraction"] * sim_ps
            if abs(got - want) > 1 + 1e-9 * want:
                failures.append(f"FAIL trace paused time of {p['link']} class {c['class']}: "
                                f"{got} ps, the run's JSON says {want:.0f} ps")
            elif got:
                print(f"ok   trace paused time of {p['link']} class {c['class']}: {got} ps")
    flows = [e for e in events if e["ph"] == "X" and e["pid"] == pids["flows"]]
    check("trace flow slices", len(flows), len(run["per_flow"]))
    durs = [round(e["dur"] * 1e6) for e in flows]
    check("trace flow durations (ps)", durs, [f["fct_ps"] for f in run["per_flow"]])


def main():
    kind, run_path, pcap, trace = sys.argv[1:5]
    with open(run_path) as f:
        run = json.load(f)
    check_dissection(pcap)
    params = dict(run["parameters"]) if isinstance(run["parameters"], list) else run["parameters"]
    mtu = int(str(params["fabric.mtu"]).rstrip("B"))
    sizes = {f["bytes"] for f in run["per_flow"]}
    assert len(sizes) == 1, "the test scenarios give every flow one size"
    n_packets = -(-sizes.pop() // mtu)
    hosts = sorted({f["frame.interface_name"] for f in frames(pcap)
                    if f["frame.interface_name"].startswith("host")})
    if kind == "roce":
        ce = by_interface(fields(pcap, lambda f: f["ip.dsfield.ecn"] == "3", "frame.interface_name"))
        pfc = fields(pcap, lambda f: f["macc.opcode"] != "" and int(f["macc.opcode"], 0) == 0x0101, "frame.interface_name", "macc.cbfc.enbv",
                     *[f"macc.cbfc.pause_time.c{c}" for c in range(8)])
        quanta = int(params["fabric.pfc.quanta"])
        pfc_frames = collections.Counter()
        per_class = collections.Counter()
        quanta_ok = True
        for row in pfc:
            pfc_frames[row[0]] += 1
            enbv = int(row[1], 0)
            times = [int(t) for t in row[2:]]
            for c in range(8):
                if enbv >> c & 1:
                    per_class[(row[0], c)] += 1
                    quanta_ok &= times[c] in (0, quanta)
                else:
                    quanta_ok &= times[c] == 0
        check(f"PFC quanta are {quanta} (XOFF) or 0 (XON) on enabled classes, 0 elsewhere",
              quanta_ok, True)
        xoff = sum(1 for row in pfc if any(int(t) for t in row[2:]))
        print(f"     {len(pfc)} PFC frames, {xoff} XOFF")
        cnps = by_interface(fields(pcap, lambda f: f["infiniband.bth.opcode"] == "129", "frame.interface_name"))
        naks = by_interface(fields(pcap, lambda f: f["infiniband.aeth.syndrome.opcode"] == "3",
                                   "frame.interface_name"))
        for p in run["ports"]:
            name = p["link"]
            check(f"CE-marked frames sent by {name}", ce[name], p["ecn_marks"])
            check(f"PFC frames sent by {name}", pfc_frames[name], p["pause_tx"])
            for c in p["classes"]:
                check(f"PFC frames for class {c['class']} sent by {name}",
                      per_class[(name, c["class"])], c["pause_tx"])
            if name.startswith("host"):
                check(f"CNPs (opcode 129) sent by {name}", cnps[name], p["cnps"])
        check("CNPs in the capture", sum(cnps[h] for h in hosts), run["cc"]["notifications"])
        check("NAKs in the capture", sum(naks[h] for h in hosts), run["transport"]["naks"])
        check("CE-marked frames in the capture", sum(ce.values()), run["ecn_marks"])
        check("PFC frames in the capture", sum(pfc_frames.values()), run["pfc"]["pause_frames"])
        check_psns(pcap, run, set(hosts), n_packets)
    else:
        fcps = by_interface(fields(pcap, lambda f: f["erf.types.type"] == "25", "frame.interface_name"))
        lrh = fields(pcap, lambda f: f["erf.types.type"] == "21", "infiniband.lrh.pktlen", "frame.len")
        check("ERF records of type 21 carrying an LRH", len(lrh) > 0, True)
        bad_len = [r for r in lrh if int(r[0]) * 4 + 2 != int(r[1])]
        check("LRH packet lengths that disagree with the frame length", len(bad_len), 0)
        for p in run["ports"]:
            check(f"flow-control packets sent by {p['link']}", fcps[p["link"]], p["fcp_tx"])
        check("flow-control packets in the capture", sum(fcps.values()),
              run["ib_credits"]["flow_control_packets"])
        check_psns(pcap, run, set(hosts), n_packets)
    check_trace(trace, run)
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
