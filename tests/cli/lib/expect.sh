# expect NAME STATUS PATTERN -- command...: runs the command, checks its exit
# status and (when PATTERN is not empty) that a line of its stdout or stderr
# matches PATTERN (grep -E). Uses $tmp (a scratch folder) and sets fail=1 on
# a mismatch; the command's output stays in $tmp/out and $tmp/err.
expect() {
  local name="$1" want="$2" pattern="$3"; shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want"; cat "$tmp/out" "$tmp/err" | head -20; fail=1; return
  fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" "$tmp/out" "$tmp/err"; then
    echo "FAIL $name: no line matches /$pattern/"; cat "$tmp/out" "$tmp/err" | head -20; fail=1; return
  fi
  echo "ok   $name"
}
