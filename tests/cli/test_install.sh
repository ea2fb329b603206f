#!/usr/bin/env bash
# cmake --install into a temporary prefix, then use what was installed as a user would:
# - the layout: bin/zrec, a man page per subcommand (from `zrec --help`), bash and zsh
#   completion, headers, libzrec.a, the CMake package and zrec.pc; zrec view's server
#   module in lib*/zrec/, where the installed zrec view finds it;
# - every installed header compiles on its own with only the prefix's include/;
# - tests/install_consumer (opens a store, prints its length) builds with
#   find_package(zrec) and with `pkg-config --cflags --libs --static zrec`, and both
#   print the length of a store the installed zrec made; its two_streams builds a dataset
#   of two streams through zrec/dataset.h, is killed between two streams' publications,
#   and its rerun recovers both to one committed length, which it reads back through
#   zrec::Dataset;
# - the bash completion completes subcommands, flags, codec and format names, and only
#   directories for store arguments; the zsh completion parses and names every command.
#
# Usage: ZREC=path/to/build/zrec bash tests/cli/test_install.sh  (CTest sets ZREC; the
# build directory is the one holding $ZREC).
set -u

source "$(dirname "$0")/testlib.sh"
require_zrec
build=$(cd "$(dirname "$zrec")" && pwd)
prefix=$tmp/prefix

if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  fail "cmake --install $build failed: $(tail -n 5 "$tmp/install.log")"
  finish
fi
izrec=$prefix/bin/zrec

# --- layout ----------------------------------------------------------------------------
for f in bin/zrec share/man/man1/zrec.1 share/bash-completion/completions/zrec \
         share/zsh/site-functions/_zrec share/doc/zrec/format.md share/doc/zrec/LICENSE \
         include/zrec/store.h include/zrec/status.h; do
  check "installed $f" test -s "$prefix/$f"
done
commands=$("$izrec" --help | awk '/^Subcommands:/ { on = 1; next } on && /^[[:space:]]*$/ { exit }
                                   on && /^  [a-z]/ { print $1 }')
check "zrec --help lists subcommands" test -n "$commands"
for c in $commands; do
  check "man page for $c installed" test -s "$prefix/share/man/man1/zrec-$c.1"
done
libdir=$(cd "$prefix" && ls -d lib*/libzrec.a 2>/dev/null | head -n 1)
check "libzrec.a installed under lib*/" test -n "$libdir"
libdir=$prefix/$(dirname "${libdir:-lib/x}")
for f in cmake/zrec/zrecConfig.cmake cmake/zrec/zrecConfigVersion.cmake cmake/zrec/zrecTargets.cmake pkgconfig/zrec.pc; do
  check "installed $(basename "$libdir")/$f" test -s "$libdir/$f"
done
if "$izrec" --version | head -n 1 | grep -qx 'zrec [0-9.]*'; then ok; else fail "installed zrec --version"; fi

# --- installed docs: every relative link of the README and of docs/ resolves ------------
docdir=$prefix/share/doc/zrec
for md in "$docdir"/README.md "$docdir"/docs/*.md; do
  for target in $(grep -oE '\]\([^)#]+' "$md" | sed 's/^](//' | grep -v '^[a-z]*://'); do
    check "installed $(basename "$md") links $target" test -e "$(dirname "$md")/$target"
  done
done
check "installed docs/ holds every doc" test "$(ls "$docdir"/docs/*.md | wc -l)" = "$(ls "$root"/docs/*.md | wc -l)"

# --- public headers stand alone: only the prefix's include/ and the C++ library -------
for h in "$prefix"/include/zrec/*.h; do
  name=zrec/$(basename "$h")
  if echo "#include <$name>" | c++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" -x c++ - \
       2>"$tmp/header.err"; then
    ok
  else
    fail "installed $name does not compile alone: $(head -n 3 "$tmp/header.err")"
  fi
  # Standard C++ headers (<vector>), POSIX ones (<sys/uio.h>) and zrec's own; no
  # third-party (msgpack) or private ones.
  others=$(grep -E '^[[:space:]]*#[[:space:]]*include' "$h" |
           grep -vE '#[[:space:]]*include[[:space:]]*(<[a-z_]+>|<sys/[a-z_]+\.h>|"zrec/[a-z_]+\.h")')
  if [ -z "$others" ]; then ok; else fail "installed $name includes more than the standard and POSIX libraries and zrec/: $others"; fi
done

# --- a store made by the installed zrec ------------------------------------------------
"$izrec" create --ragged --dtype '<i4' --ndim 1 "$tmp/store" || fail "create"
printf '1 2\n3\n4 5 6\n7\n8 9\n' | "$izrec" append-stream --parse ints "$tmp/store" || fail "append-stream"

# --- zrec view finds its HTTP server module under the prefix ----------------------------
check "installed lib*/zrec/zrec-view-http.so" test -n "$(cd "$prefix" && ls lib*/zrec/zrec-view-http.so 2>/dev/null)"
"$izrec" view "$tmp/store" >"$tmp/view.url" 2>"$tmp/view.err" &
view_pid=$!
for _ in $(seq 100); do [ -s "$tmp/view.url" ] && break; sleep 0.1; done
kill -INT "$view_pid" 2>/dev/null
wait "$view_pid"
view_rc=$?
if [ "$view_rc" -eq 130 ] && grep -qE '^http://127\.0\.0\.1:[0-9]+/[0-9a-f]{48}/$' "$tmp/view.url"; then ok; else
  fail "installed zrec view: exit $view_rc, printed '$(cat "$tmp/view.url")' ($(head -n 2 "$tmp/view.err"))"
fi

# --- consumer through find_package(zrec) -----------------------------------------------
consumer=$root/tests/install_consumer
# Under ASan (ZREC_SANITIZED=1) the installed libzrec.a is instrumented, so its consumers
# link the sanitizer runtimes too, as any user of such a build would.
san=""
[ "${ZREC_SANITIZED:-0}" = 1 ] && san="-fsanitize=address,undefined"
if cmake -S "$consumer" -B "$tmp/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" >"$tmp/cmake.log" 2>&1 && cmake --build "$tmp/cmake-consumer" >>"$tmp/cmake.log" 2>&1; then
  out=$("$tmp/cmake-consumer/store_length" "$tmp/store")
  if [ "$out" = 5 ]; then ok; else fail "find_package consumer printed '$out', want 5"; fi
else
  fail "find_package(zrec) consumer did not build: $(tail -n 15 "$tmp/cmake.log")"
fi

# --- a dataset of two streams through the public API, crashed and recovered -----------
# two_streams publishes every 10 samples; --crash-after 37 publishes stream txt alone
# (37 records) and SIGKILLs itself: the root committed 30. The rerun cuts txt back to 30
# and goes on to 100, then reads the root back through zrec::Dataset (printing its 100
# committed samples); the installed zrec then reads a root of two aligned streams.
ds=$tmp/two-streams
if [ -x "$tmp/cmake-consumer/two_streams" ]; then
  "$tmp/cmake-consumer/two_streams" "$ds" 100 --crash-after 37 >/dev/null 2>&1
  rc=$?
  check "two_streams --crash-after 37 died by SIGKILL (exit $rc)" test "$rc" -eq 137
  committed=$("$izrec" info --json "$ds" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["committed_length"])')
  check "the crashed run committed 30 samples (got $committed)" test "$committed" = 30
  check "the crash left txt past the commit" test "$("$izrec" info --json "$ds/txt" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["length"])')" = 37
  out=$("$tmp/cmake-consumer/two_streams" "$ds" 100 2>&1)
  check "the rerun recovers and finishes ($out)" test "$out" = "$(printf 'recovered: cut txt from 37 to 30\n100')"
  check "zrec verify accepts the root" "$izrec" verify -q "$ds"
  labels=$("$izrec" cat --format text "$ds/cls" | cut -f2 | tr '\n' ' ')
  check "cls holds 0..99 once each" test "$labels" = "$(seq -s ' ' 0 99) "
  texts=$("$izrec" cat --format text "$ds/txt" | cut -f2 | sed -n '1p;31p;100p' | tr '\n' '|')
  check "txt holds sample 0..99 once each ($texts)" test "$texts" = "sample 0|sample 30|sample 99|"
  check "txt holds 100 records" test "$("$izrec" cat --format text "$ds/txt" | wc -l)" = 100
else
  fail "two_streams was not built"
fi

# --- consumer through pkg-config -------------------------------------------------------
# Only a static library ships: the plain `pkg-config --cflags --libs zrec` links too.
flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs zrec)
if [ -n "$flags" ] && c++ -std=c++20 -O1 $san "$consumer/main.cc" $flags -o "$tmp/pc-plain" 2>"$tmp/pc-plain.log" &&
   [ "$("$tmp/pc-plain" "$tmp/store")" = 5 ]; then ok; else
  fail "pkg-config consumer without --static did not build or run with '$flags': $(head -n 15 "$tmp/pc-plain.log")"
fi
flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs --static zrec)
if [ -n "$flags" ] && c++ -std=c++20 -O1 $san "$consumer/main.cc" $flags -o "$tmp/pc-consumer" 2>"$tmp/pc.log"; then
  out=$("$tmp/pc-consumer" "$tmp/store")
  if [ "$out" = 5 ]; then ok; else fail "pkg-config consumer printed '$out', want 5"; fi
else
  fail "pkg-config consumer did not build with '$flags': $(head -n 15 "$tmp/pc.log")"
fi
"$tmp/pc-consumer" "$tmp/nostore" >/dev/null 2>"$tmp/err"
if [ $? -eq 1 ] && grep -q "nostore" "$tmp/err"; then ok; else fail "consumer on a missing store: want exit 1 and an error naming it"; fi

# --- bin/zrec-slurm-build: a relative link, so a relocated prefix still finds the driver --
link=$(readlink "$prefix/bin/zrec-slurm-build")
check "bin/zrec-slurm-build links relatively ($link)" test "${link#/}" = "$link"
moved=$tmp/moved-prefix
cp -a "$prefix" "$moved"
check "a relocated prefix's zrec-slurm-build resolves to its own copy" \
  test "$(readlink -f "$moved/bin/zrec-slurm-build")" = "$(readlink -f "$moved")/share/zrec/slurm/zrec-slurm-build"
rm -rf "$moved"

# --- bash completion -------------------------------------------------------------------
mkdir -p "$tmp/c/alpha" "$tmp/c/also" && : >"$tmp/c/afile"
# complete WORD...: the completions bash offers for the last word after "zrec WORD...".
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=(zrec "$@"); COMP_CWORD=$#; _zrec; printf "%s\n" "${COMPREPLY[@]}" | sort' \
    _ "$prefix/share/bash-completion/completions/zrec" "$@"
}
expect() {  # expect "WANT (newline-separated)" WORD...
  local want=$1
  shift
  local got
  got=$(complete_words "$@")
  if [ "$got" = "$want" ]; then ok; else fail "bash completion of 'zrec $*': got '$(echo $got)', want '$(echo $want)'"; fi
}
expect create cr
expect "$(printf '%s\n' $commands | sort)" ""
expect --codec create --co
expect "$(printf 'auto\nraw\nzstd\nzstd_dict\n')" create --codec ""
expect "$(printf 'zstd\nzstd_dict\n')" create --codec=zs
expect "$(printf 'jsonl\nnpy\nnpz\nraw\ntar\ntext\n')" cat "$tmp/store" --format ""
expect "$(printf 'lines\nnul\nu32le\nu64le\n')" append-stream --framing ""
expect --threads --thr
expect --threads info --thr
expect "$(printf '%s\n' "$tmp/c/alpha" "$tmp/c/also")" info "$tmp/c/a"
expect "$(printf '%s\n' "$tmp/c/alpha" "$tmp/c/also")" verify --quick "$tmp/c/a"
expect "$(printf '%s\n' "$tmp/c/afile" "$tmp/c/alpha" "$tmp/c/also")" append-npy "$tmp/c/alpha" "$tmp/c/a"
expect "$(printf '%s\n' "$tmp/c/afile" "$tmp/c/alpha" "$tmp/c/also")" cat "$tmp/store" -o "$tmp/c/a"
expect "" create --shards ""
# Every subcommand's flags, as its --help lists them, are offered after "zrec CMD -".
for c in $commands; do
  want=$("$izrec" "$c" --help | sed -n 's/^ \{1,\}\(-[^ ]*\).*/\1/p' | tr ',' '\n' | sed 's/\[=.*//' |
    grep -E '^--?[A-Za-z0-9]' | sort -u)
  got=$(complete_words "$c" - | sort -u)
  missing=$(comm -23 <(echo "$want") <(echo "$got"))
  if [ -z "$missing" ]; then ok; else fail "bash completion of 'zrec $c -' lacks: $(echo $missing)"; fi
done

# The value words the completion offers (codec, format, framing, ... names) are ones the
# command's own --help names, so a renamed value cannot linger in the completion. Not
# --dtype's: those are NumPy's names, read from the table parse_dtype checks
# (test_completion_values checks that each is accepted); --help gives examples of them.
sed -n "s/^    \([a-z-]*\):\([^)]*\)) COMPREPLY=(\$(compgen -W '\([^']*\)'.*/\1 \2 \3/p" \
  "$prefix/share/bash-completion/completions/zrec" | awk '$2 != "--dtype" { $2 = ""; print }' >"$tmp/value_words"
check "the bash completion offers value words" test -s "$tmp/value_words"
while read -r c words; do
  "$izrec" "$c" --help >"$tmp/help.$c"
  for w in $words; do
    if grep -qw -- "$w" "$tmp/help.$c"; then ok; else fail "bash completion offers '$w' for zrec $c, which its --help does not name"; fi
  done
done <"$tmp/value_words"

# --- zsh completion --------------------------------------------------------------------
zfile=$prefix/share/zsh/site-functions/_zrec
if command -v zsh >/dev/null; then
  check "_zrec parses in zsh" zsh -n "$zfile"
else
  fail "zsh is not installed (scripts/setup.sh installs it)"
fi
check "_zrec starts with #compdef zrec" test "$(head -n 1 "$zfile")" = "#compdef zrec"
for c in $commands; do
  check "_zrec completes $c" grep -q "^    '$c:" "$zfile"
  check "_zrec has a case for $c" grep -q "^    ($c)" "$zfile"
done
finish
