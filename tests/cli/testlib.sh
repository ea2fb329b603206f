# Shared by the shell CLI tests: the zrec binary, pass/fail counting, a scratch
# directory removed at exit, and the summary line whose outcome is the exit status.
#
#   source "$(dirname "$0")/testlib.sh"   # sets here, root, zrec, tmp
#   require_zrec                          # fails the test unless $zrec is executable
#   check "what it shows" command...      # passes when the command succeeds (one command:
#                                         # `check W [ a ] && [ b ]` checks only [ a ])
#   check "..." same "$a" "$b"            # both non-empty and equal
#   check "..." present F... / absent F...   # every F exists / none does
#   check "..." not command...            # passes when the command fails
#   ok / fail "what broke"                # count a result by hand
#   finish                                # "N passed, M failed"; exit 1 if any failed
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
zrec=${ZREC:-$root/build/zrec}
passed=0
failed=0
ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*" >&2
}
check() {
  local what=$1
  shift
  if "$@"; then ok; else fail "$what"; fi
}
not() { ! "$@"; }
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }
present() {
  local f
  for f; do [ -e "$f" ] || return 1; done
}
absent() {
  local f
  for f; do [ ! -e "$f" ] || return 1; done
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}
require_zrec() {
  if [ ! -x "$zrec" ]; then
    fail "zrec binary not found at '$zrec' (set ZREC)"
    finish
  fi
}
tmp=$(mktemp -d)
# u+rwX first: a test may leave unreadable files behind on purpose.
trap 'chmod -R u+rwX "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
