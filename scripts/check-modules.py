#!/usr/bin/env python3
"""The module map in docs/architecture.md against the tree.

Reads the table under "## Modules (src/)" (columns: folder, library, holds,
depends on) and checks that
  1. every folder under src/ that holds sources has a row, and every row a folder;
  2. every `#include "module/..."` of a source in a folder names the folder
     itself or a module it may depend on (the backticked names of the
     "depends on" column, followed transitively); tests (*_test.cpp, *_slowtest.cpp, *_benchmark.cpp) may
     also include `testing/`, and library code may not include gtest.
Exit 0 when both hold, 1 with one line per violation, 2 if the table is missing.
Run from the repository root (a fast CTest, `module_map`).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
SRC = ROOT / "src"


def read_table():
    text = DOC.read_text()
    m = re.search(r"^## Modules \(src/\)\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        print(f"check-modules: {DOC}: no '## Modules (src/)' section", file=sys.stderr)
        sys.exit(2)
    deps = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`"):
            continue
        folder = cells[0].strip("`").rstrip("/")
        # Modules are written in backticks; external libraries in plain text.
        deps[folder] = {n.rstrip("/") for n in re.findall(r"`([a-z][a-z0-9_/-]*)`", cells[3])}
    return deps


def closure(deps, folder):
    seen, todo = set(), [folder]
    while todo:
        f = todo.pop()
        for d in deps.get(f, ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def folder_of(path, folders):
    rel = path.relative_to(SRC).as_posix()
    best = None
    for f in folders:
        if rel.startswith(f + "/") and (best is None or len(f) > len(best)):
            best = f
    return best


def main():
    deps = read_table()
    errors = []
    source_dirs = {p.parent for p in SRC.rglob("*") if p.suffix in (".cpp", ".hpp", ".in")}
    folders = set(deps)
    for d in sorted(source_dirs):
        rel = d.relative_to(SRC).as_posix()
        if not any(rel == f or rel.startswith(f + "/") for f in folders):
            errors.append(f"src/{rel}: a source folder with no row in the module table")
    for f in sorted(folders):
        if not (SRC / f).is_dir():
            errors.append(f"docs/architecture.md: row `{f}` names no folder under src/")
    include = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".cpp", ".hpp"):
            continue
        own = folder_of(path, folders)
        if own is None:
            continue
        allowed = closure(deps, own) | {own}
        is_test = re.search(r"_(test|slowtest|benchmark)\.cpp$", path.name) or own == "testing"
        for inc in include.findall(path.read_text(errors="replace")):
            if inc.startswith("gtest/") or inc.startswith("gmock/"):
                if not is_test:
                    errors.append(f"{path.relative_to(ROOT)}: library code includes {inc}")
                continue
            if "/" not in inc:
                continue
            target = folder_of(SRC / inc, folders)
            if target is None or target in allowed:
                continue
            if target == "testing" and is_test:
                continue
            errors.append(
                f"{path.relative_to(ROOT)}: includes {inc}, but `{own}` may depend only on "
                f"{', '.join(sorted(allowed - {own})) or 'nothing'}")
    for e in errors:
        print(e)
    if errors:
        print(f"check-modules: {len(errors)} violation(s) of docs/architecture.md", file=sys.stderr)
        return 1
    print(f"check-modules: {len(folders)} modules, every include within the map")
    return 0


if __name__ == "__main__":
    sys.exit(main())
