#!/usr/bin/env python3
"""Replace citations of notes kept outside the repository with the project's own docs.

The repository must stand on its own: comments and docs cite primary sources or
docs/ (docs/model/ holds the model reference), never files outside the tree.
docs/model/CITATIONS.tsv maps each old citation, exactly as it appears in the tree,
to its replacement; this script applies it.

  scripts/fix-citations.py [PATH ...]           apply the map in place, print counts
  scripts/fix-citations.py --dry-run [PATH ...] print what would change, write nothing
  scripts/fix-citations.py --check [PATH ...]   list remaining external citations;
                                                exit 1 if there is any, else 0

PATHs are files or folders (default: the whole repository). Replacement is exact
string replacement, longest old text first, so a specific entry wins over a general
one that it contains. In TSV fields, \\n, \\t and \\\\ stand for a newline, a tab and a
backslash (a citation may run over a line break).

Never touched: .git, build folders, tests/fixtures/real/ (real samples are kept byte
for byte), docs/model/ (the reference pages themselves) and this script.
Exit status: 0 done (or nothing left with --check), 1 citations left (--check),
2 bad usage or an unreadable map.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TSV = ROOT / "docs" / "model" / "CITATIONS.tsv"

SKIP_DIRS = {".git", "__pycache__", "lossless-report"}
SKIP_PREFIXES = ("build", ".cache")  # build, build-dev, build-asan, ...
SKIP_REL = (
    Path("tests/fixtures/real"),
    Path("docs/model"),
    Path("scripts/fix-citations.py"),
)
TEXT_SUFFIXES = {
    ".cpp", ".hpp", ".h", ".cc", ".in", ".md", ".txt", ".yaml", ".yml", ".json",
    ".py", ".sh", ".toml", ".tsv", ".cmake", "",
}
LONG_LINE = 100  # .clang-format ColumnLimit

# What counts as a citation of a note outside the repository.
EXTERNAL = [
    # the notes by bare name: fabric.md, experiments.md E9, tco.md §1 (not
    # docs/fabric-model.md, docs/audit-nccl.md or docs/model/experiments.md)
    re.compile(r"(?<![\w/.-])(fabric|experiments|tco|nccl|checklist)\.md\b", re.I),
    # any path into the shared folder next to the checkout
    re.compile(r"\.\./shared\b|/work/shared\b|\bshared/(reference|anchors|hooks)\b"
               r"|\bshared/(DESIGN|STYLE|DECISIONS|README)\.md"),
    re.compile(r"(?<![\w/.-])reference/[\w-]+\.md"),
    re.compile(r"(?<![\w/.-])anchors/README\.md"),
    re.compile(r"(?<![\w/.-])(DESIGN|STYLE|DECISIONS)\.md\b"),
]
# A bare section sign is a citation of a note unless the line names a primary
# source or a repository document.
SECTION = re.compile(r"§\s?\d")
SECTION_OK = re.compile(
    r"802\.|IBA\b|Vol\.|RFC\s?\d|Annex|[Cc]lause|docs/|\.md#|spec", re.I)


def load_map(path: Path) -> list[tuple[str, str]]:
    def unescape(field: str) -> str:
        out, i = [], 0
        while i < len(field):
            c = field[i]
            if c == "\\" and i + 1 < len(field):
                nxt = field[i + 1]
                out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(nxt, "\\" + nxt))
                i += 2
                continue
            out.append(c)
            i += 1
        return "".join(out)

    rows: list[tuple[str, str]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        sys.exit(f"error: {path}: {e.strerror}")
    for n, line in enumerate(lines, 1):
        if n == 1 and line.startswith("old\t"):
            continue
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0]:
            print(f"error: {path}:{n}: expected two tab-separated fields", file=sys.stderr)
            sys.exit(2)
        rows.append((unescape(parts[0]), unescape(parts[1])))
    olds = [o for o, _ in rows]
    dup = {o for o in olds if olds.count(o) > 1}
    if dup:
        print(f"error: {path}: duplicate entries: {sorted(dup)}", file=sys.stderr)
        sys.exit(2)
    # Longest first, ties in file order.
    return sorted(rows, key=lambda r: -len(r[0]))


def skipped(rel: Path) -> bool:
    if any(p in SKIP_DIRS or p.startswith(SKIP_PREFIXES) for p in rel.parts[:-1]):
        return True
    return any(rel == s or s in rel.parents for s in SKIP_REL)


def walk(top: Path) -> list[Path]:
    found: list[Path] = []
    for d, dirs, names in os.walk(top):
        # Prune build trees and the rest of SKIP_DIRS before descending into them.
        dirs[:] = sorted(x for x in dirs
                         if x not in SKIP_DIRS and not x.startswith(SKIP_PREFIXES))
        found.extend(Path(d) / n for n in sorted(names))
    return found


def files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = p.resolve()
        cands = [p] if p.is_file() else walk(p)
        for f in cands:
            try:
                rel = f.relative_to(ROOT)
            except ValueError:
                rel = Path(f.name)
            if skipped(rel) or f.suffix not in TEXT_SUFFIXES:
                continue
            out.append(f)
    return out


def read(f: Path) -> str | None:
    try:
        data = f.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def show(f: Path) -> str:
    try:
        return str(f.relative_to(ROOT))
    except ValueError:
        return str(f)


def check(targets: list[Path]) -> int:
    found = 0
    for f in targets:
        text = read(f)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            hit = any(r.search(line) for r in EXTERNAL)
            if not hit and SECTION.search(line) and not SECTION_OK.search(line):
                hit = True
            if hit:
                found += 1
                print(f"{show(f)}:{n}: {line.strip()}")
    if found:
        print(f"{found} line(s) still cite notes outside the repository "
              f"(map them in {show(TSV)} and run scripts/fix-citations.py)", file=sys.stderr)
        return 1
    print("no external citations")
    return 0


def apply(targets: list[Path], table: list[tuple[str, str]], dry: bool) -> int:
    used = {o: 0 for o, _ in table}
    changed_files = 0
    long_lines: list[str] = []
    for f in targets:
        text = read(f)
        if text is None:
            continue
        new = text
        per_file = 0
        for old, rep in table:
            k = new.count(old)
            if k:
                new = new.replace(old, rep)
                used[old] += k
                per_file += k
        if per_file:
            changed_files += 1
            print(f"{show(f)}: {per_file} replacement(s)")
            if f.suffix in {".cpp", ".hpp", ".h", ".cc"}:
                before = set(text.splitlines())
                for n, line in enumerate(new.splitlines(), 1):
                    if len(line) > LONG_LINE and line not in before:
                        long_lines.append(f"{show(f)}:{n}: {len(line)} columns")
            if not dry:
                f.write_text(new, encoding="utf-8")
    total = sum(used.values())
    print(f"{total} replacement(s) in {changed_files} file(s)"
          f"{' (dry run, nothing written)' if dry else ''}")
    for old, k in sorted(used.items(), key=lambda kv: (-kv[1], kv[0])):
        if k:
            print(f"  {k:3d}  {old!r}")
    unused = [o for o, k in used.items() if k == 0]
    if unused:
        print(f"{len(unused)} map entr(y/ies) matched nothing here (fine when a path "
              "limits the run)")
    if long_lines:
        print("lines now longer than the format limit (run clang-format on them):")
        for x in long_lines:
            print(f"  {x}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Replace citations of notes outside the repository (docs/model/CITATIONS.tsv).")
    ap.add_argument("paths", nargs="*", type=Path, help="files or folders (default: the repository)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="list remaining external citations; exit 1 if any")
    mode.add_argument("--dry-run", action="store_true", help="report counts, write nothing")
    ap.add_argument("--map", type=Path, default=TSV, help="the TSV map (default: %(default)s)")
    args = ap.parse_args()
    for p in args.paths:
        if not p.exists():
            print(f"error: {p}: no such file or folder", file=sys.stderr)
            return 2
    targets = files(args.paths or [ROOT])
    if args.check:
        return check(targets)
    return apply(targets, load_map(args.map), args.dry_run)


if __name__ == "__main__":
    sys.exit(main())
