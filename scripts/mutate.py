#!/usr/bin/env python3
"""Mutation check of the test suite (`make mutate`).

Each mutant in tests/mutants/*.toml is a one-line bug planted in a scratch
copy of the tree: a code fragment that must occur exactly once in its file,
and its replacement. For each mutant the runner rebuilds incrementally
(ccache when installed), finds the fast-tier tests whose executables the
build touched (a test whose binary did not change cannot see the mutant),
and runs them until one fails. A mutant is

  killed      a fast test failed or timed out,
  survived    every fast test that reaches the mutated file passed,
  stillborn   the mutant does not compile (not counted in the kill rate),
  equivalent  marked so in the catalogue, with the reason (not run).

The kill rate is killed / (killed + survived). A mutant whose fragment is
missing or occurs more than once is an error that names it (exit 2), so the
catalogue follows code moves by content, not by line number.

Usage: scripts/mutate.py [--check] [--list] [--only GLOB] [--jobs N]
                         [--min-kill PCT] [--work DIR]
Exit status: 0 kill rate at or above --min-kill, 1 below it, 2 a catalogue
or baseline error.
"""

import argparse
import fnmatch
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "tests" / "mutants"
FIELDS = {"id", "file", "find", "replace", "breaks", "equivalent"}


def die(msg, code=2):
    print(f"mutate: {msg}", file=sys.stderr)
    sys.exit(code)


def load_catalogue():
    """Every mutant of every tests/mutants/*.toml, checked for shape and applicability."""
    mutants, seen, errors = [], {}, []
    files = sorted(CATALOGUE.glob("*.toml"))
    if not files:
        die(f"no catalogue files in {CATALOGUE}")
    for cat in files:
        try:
            data = tomllib.loads(cat.read_text())
        except tomllib.TOMLDecodeError as e:
            die(f"{cat.relative_to(ROOT)}: {e}")
        for i, m in enumerate(data.get("mutant", [])):
            where = f"{cat.relative_to(ROOT)}: mutant {i + 1}"
            unknown = set(m) - FIELDS
            missing = {"id", "file", "find", "replace", "breaks"} - set(m)
            if unknown or missing:
                errors.append(f"{where}: unknown fields {sorted(unknown)}, missing {sorted(missing)}")
                continue
            mid = m["id"]
            if mid in seen:
                errors.append(f"{where}: id '{mid}' already used in {seen[mid]}")
            seen[mid] = cat.name
            if m["find"] == m["replace"]:
                errors.append(f"{where} '{mid}': find and replace are the same")
            src = ROOT / m["file"]
            if not src.is_file():
                errors.append(f"{where} '{mid}': no file {m['file']}")
                continue
            n = src.read_text().count(m["find"])
            if n != 1:
                errors.append(
                    f"{where} '{mid}': fragment occurs {n} times in {m['file']} (must be once): {m['find']!r}"
                )
            m["catalogue"] = cat.name
            mutants.append(m)
    if errors:
        for e in errors:
            print(f"mutate: {e}", file=sys.stderr)
        die(f"{len(errors)} catalogue error(s)")
    return mutants


def sync_tree(dst):
    """Mirror tracked and untracked-not-ignored files into dst: unchanged files keep
    their mtime, files no longer in the tree (moved or deleted) are removed."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.decode()
    wanted = {rel for rel in out.split("\0") if rel and (ROOT / rel).is_file()}
    if dst.is_dir():
        for d in sorted(dst.rglob("*"), reverse=True):
            rel = d.relative_to(dst).as_posix()
            if d.is_file() and rel not in wanted:
                d.unlink()
            elif d.is_dir() and not any(d.iterdir()):
                d.rmdir()
    for rel in sorted(wanted):
        s, d = ROOT / rel, dst / rel
        data = s.read_bytes()
        if d.is_file() and d.read_bytes() == data:
            continue
        d.parent.mkdir(parents=True, exist_ok=True)
        d.write_bytes(data)
        shutil.copymode(s, d)


def configure(tree, build):
    flags = ["-DCMAKE_BUILD_TYPE=Release", "-DLOSSLESS_LTO=OFF", "-DLOSSLESS_WERROR=OFF"]
    if shutil.which("ccache"):
        flags.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    if not (build / "CMakeCache.txt").exists():
        subprocess.run(["cmake", "-S", tree, "-B", build, *flags], check=True, stdout=subprocess.DEVNULL)


def build_all(build, jobs):
    r = subprocess.run(["cmake", "--build", build, "-j", str(jobs)], capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


def fast_tests(build):
    out = subprocess.run(
        ["ctest", "-L", "fast", "--show-only=json-v1"], cwd=build, check=True, capture_output=True
    ).stdout
    tests = []
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests.append(
            {
                "name": t["name"],
                "command": t["command"],
                "cwd": props.get("WORKING_DIRECTORY", str(build)),
                "exes": [c for c in t["command"] if c.startswith(str(build) + "/")],
            }
        )
    return tests


def exe_mtimes(tests):
    return {e: os.stat(e).st_mtime_ns for t in tests for e in t["exes"] if os.path.exists(e)}


def start_test(t):
    return subprocess.Popen(
        t["command"], cwd=t["cwd"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def stop(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_tests(tests, jobs, timeouts, stop_at_failure):
    """Runs tests in the given order on `jobs` workers, each in its own process group.

    Returns ({name: seconds}, [(name, how) of failures]); with stop_at_failure it
    kills the running ones at the first failure and returns it alone."""
    queue = list(reversed(tests))
    running, secs, failures = [], {}, []
    while queue or running:
        while queue and len(running) < jobs:
            t = queue.pop()
            running.append((t, start_test(t), time.monotonic()))
        time.sleep(0.02)
        for item in list(running):
            t, proc, began = item
            elapsed = time.monotonic() - began
            rc = proc.poll()
            if rc is None and elapsed <= timeouts[t["name"]]:
                continue
            running.remove(item)
            if rc is None:
                stop(proc)
                how = f"timeout {timeouts[t['name']]:.0f}s"
            else:
                how = "" if rc == 0 else (f"signal {-rc}" if rc < 0 else f"exit {rc}")
            secs[t["name"]] = elapsed
            if how:
                failures.append((t["name"], how))
                if stop_at_failure:
                    for _, p, _ in running:
                        stop(p)
                    return secs, failures
    return secs, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that every mutant applies")
    ap.add_argument("--list", action="store_true", help="list the catalogue")
    ap.add_argument("--only", default="*", help="glob over mutant ids (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--min-kill", type=float, default=90.0, help="kill rate in percent for exit 0")
    ap.add_argument("--work", default=str(ROOT / "build-mutate"), help="scratch tree and build")
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args()

    mutants = load_catalogue()
    if args.check:
        print(f"mutate: {len(mutants)} mutants in {len({m['catalogue'] for m in mutants})} files, every fragment found once")
        return 0
    selected = [m for m in mutants if fnmatch.fnmatch(m["id"], args.only)]
    if args.list:
        for m in selected:
            tag = " (equivalent)" if "equivalent" in m else ""
            print(f"{m['id']:34} {m['file']}{tag}\n{'':34} {m['breaks']}")
        return 0
    if not selected:
        die(f"no mutant id matches {args.only!r}")

    t0 = time.monotonic()
    work = Path(args.work)
    tree, build = work / "tree", work / "build"
    tree.mkdir(parents=True, exist_ok=True)
    sync_tree(tree)
    configure(tree, build)
    print(f"mutate: baseline build in {build}", flush=True)
    ok, log = build_all(build, args.jobs)
    if not ok:
        print(log[-4000:], file=sys.stderr)
        die("the unmutated tree does not build")
    tests = fast_tests(build)
    print(f"mutate: baseline run of {len(tests)} fast tests", flush=True)
    durations, failed = run_tests(tests, args.jobs, {t["name"]: 900.0 for t in tests}, False)
    if failed:
        die("the unmutated tree fails fast tests: " + ", ".join(f"{n} ({h})" for n, h in failed))
    timeouts = {n: max(60.0, 10 * s) for n, s in durations.items()}
    print(f"mutate: baseline passed in {time.monotonic() - t0:.0f}s; {len(selected)} mutants", flush=True)

    # Group by file so consecutive mutants touch the same object file.
    selected.sort(key=lambda m: (m["file"], m["id"]))
    results = []
    for k, m in enumerate(selected, 1):
        start = time.monotonic()
        res = {"id": m["id"], "file": m["file"], "breaks": m["breaks"]}
        if "equivalent" in m:
            res.update(status="equivalent", reason=m["equivalent"])
            results.append(res)
            print(f"[{k}/{len(selected)}] equivalent  {m['id']}: {m['equivalent']}", flush=True)
            continue
        path = tree / m["file"]
        original = path.read_text()
        before = exe_mtimes(tests)
        path.write_text(original.replace(m["find"], m["replace"], 1))
        try:
            built, log = build_all(build, args.jobs)
            if not built:
                res["status"] = "stillborn"
            else:
                after = exe_mtimes(tests)
                changed = {e for e, t in after.items() if before.get(e) != t}
                reach = [t for t in tests if any(e in changed for e in t["exes"])]
                # Tests of the mutated module's own binary first, then the quickest.
                module = Path(m["file"]).parent.name
                reach.sort(key=lambda t: (not any(Path(e).name.startswith(module) for e in t["exes"]), durations[t["name"]]))
                res["tests_reached"] = len(reach)
                _, failures = run_tests(reach, args.jobs, timeouts, True)
                if failures:
                    res.update(status="killed", killed_by=failures[0][0], how=failures[0][1])
                else:
                    res["status"] = "survived"
        finally:
            path.write_text(original)
        res["seconds"] = round(time.monotonic() - start, 1)
        results.append(res)
        extra = {
            "killed": lambda: f"by {res['killed_by']} ({res['how']})",
            "survived": lambda: f"{res['tests_reached']} tests reached it, all passed",
            "stillborn": lambda: "does not compile",
        }[res["status"]]()
        print(f"[{k}/{len(selected)}] {res['status']:10}  {m['id']}  {extra}  [{res['seconds']:.0f}s]", flush=True)
    build_all(build, args.jobs)  # leave the scratch build unmutated

    killed = sum(r["status"] == "killed" for r in results)
    survived = [r for r in results if r["status"] == "survived"]
    counted = killed + len(survived)
    rate = 100.0 * killed / counted if counted else 0.0
    wall = time.monotonic() - t0
    print()
    for r in survived:
        print(f"SURVIVED {r['id']} ({r['file']}): {r['breaks']}")
    for r in results:
        if r["status"] == "stillborn":
            print(f"STILLBORN {r['id']} ({r['file']}): fix the mutant so that it compiles")
    eq = sum(r["status"] == "equivalent" for r in results)
    still = sum(r["status"] == "stillborn" for r in results)
    print(
        f"mutate: {killed} killed, {len(survived)} survived, {eq} equivalent, {still} stillborn; "
        f"kill rate {rate:.1f}% ({killed}/{counted}) by the fast tier; wall {wall / 60:.1f} min"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"kill_rate": round(rate, 1), "wall_s": round(wall), "mutants": results}, indent=1) + "\n"
        )
    return 0 if rate >= args.min_kill else 1


if __name__ == "__main__":
    sys.exit(main())
