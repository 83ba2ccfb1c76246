#!/usr/bin/env bash
# Every `build/lossless ...` command in the README runs as written (issue 16,
# item 25): each file it names exists, and it exits 0 (an audit's warn is 0),
# or 1 where the README shows a finding (`deadlock` on the ring example,
# `audit topo` on the real PCIe box of examples/topo.txt).
# Slow tier: the two `compare` commands take minutes in a non-LTO build. They run in order in a scratch folder
# that links the repository's scenarios/, examples/, tests/ and profiles/ and
# puts the binary under test at build/lossless, so the outputs they write
# (out.json, report.html, lossless-report/, lossless-optics.db) stay out of
# the checkout.
# Usage: bash tests/cli/readme_examples.sh <path-to-lossless>   (from the repo root)
set -u
BIN=${1:?usage: readme_examples.sh <lossless binary>}
fail=0
root="$(pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bin_abs="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
mkdir -p "$tmp/build"
ln -s "$bin_abs" "$tmp/build/lossless"
for d in scenarios examples tests profiles data docs; do ln -s "$root/$d" "$tmp/$d"; done
mapfile -t cmds < <(grep -E '^build/lossless ' README.md)
if [ ${#cmds[@]} -lt 10 ]; then echo "FAIL: only ${#cmds[@]} README commands found"; exit 1; fi
for c in "${cmds[@]}"; do
  start=$(date +%s)
  ( cd "$tmp" && bash -c "$c" >"$tmp/out" 2>"$tmp/err" )
  rc=$?
  secs=$(( $(date +%s) - start ))
  want=0
  case "$c" in
    "build/lossless deadlock scenarios/deadlock-ring4.yaml"*) want=1 ;;
    "build/lossless audit topo examples/topo.txt"*) want=1 ;;  # a real box that fails
  esac
  if [ $rc -ne $want ]; then
    echo "FAIL (exit $rc, want $want, ${secs}s) $c"; head -5 "$tmp/err"; fail=1
  elif grep -q '^error:' "$tmp/err"; then
    echo "FAIL (error line, ${secs}s) $c"; head -5 "$tmp/err"; fail=1
  else
    echo "ok   (${secs}s) $c"
  fi
done
exit $fail
