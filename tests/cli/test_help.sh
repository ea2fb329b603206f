#!/usr/bin/env bash
# Golden checks of the CLI's help, version and misuse handling, and that the man pages
# keep up with --help (CONTRIBUTING.md, "Keep the man page and --help saying the same thing").
#
# For every subcommand `zrec --help` lists: `zrec <cmd> --help` exits 0, prints to
# stdout only, shows an example, and man/zrec-<cmd>.1 exists and mentions every long
# option the help lists and every example line the help ends with (after "Examples:"),
# and the description before the examples is the DESCRIPTION paragraphs the page marks.
# man/zrec.1 mentions every global long option and every subcommand. `--help` itself
# is not required in the pages (every command has it).
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_help.sh  (CTest sets ZREC).
set -u

source "$(dirname "$0")/testlib.sh"
require_zrec
man_dir="$root/man"

# Runs "$@", leaving stdout, stderr and the exit status in $tmp/out, $tmp/err, $rc.
run() {
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# Long options (--foo) from the option lines of the help text: lines that start with
# spaces and then '-', e.g. "  -o,--output FILE   Output file". Only the option's own
# names are taken (the first word), not options mentioned in its description. A
# subcommand's "Global options:" (the root's, listed again) end the list: man/zrec.1
# documents those.
long_options() {
  sed -n '/^Global options:/q; s/^ \{1,\}\(-[^ ]*\).*/\1/p' "$1" | tr ',' '\n' | grep -E '^--[A-Za-z0-9][A-Za-z0-9-]*$' |
    grep -vx -- '--help' | sort -u
}

# The subcommand names under "Subcommands:" in the root help, up to the next blank line.
subcommands() {
  awk '/^Subcommands:/ { on = 1; next } on && /^[[:space:]]*$/ { exit }
       on && /^  [a-z]/ { print $1 }' "$1"
}

# Roff source as plain text: "\-" -> "-", font escapes and "\%" dropped, so that
# "\fB\-\-window\-mib\fR" reads "--window-mib".
plain_roff() {
  sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\%//g' -e 's/\\&//g' "$1"
}

# The lines of the EXAMPLES section of man page $1 as a terminal shows them, a leading
# "$ " prompt dropped: plain_roff, then the escapes of quotes and the backslash.
man_examples() {
  plain_roff "$1" | sed -n '/^\.SH EXAMPLES/,/^\.SH /p' |
    sed -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' -e 's/\\(ga/`/g' -e 's/\\e/\\/g' -e 's/^\$ //'
}

# Checks that every example line of help file $1 (after "Examples:", less its two-space
# indent) is a line of the EXAMPLES of man page $2, and that there is at least one: the
# help's examples are the page's (cmake/help_from_man.py copies the marked ones).
check_examples_in_man() {
  local help=$1 page=$2 label=$3 line missing="" count=0
  man_examples "$page" >"$tmp/examples.txt"
  while IFS= read -r line; do
    count=$((count + 1))
    grep -qxF -- "${line#  }" "$tmp/examples.txt" || missing="$missing
  $line"
  done < <(sed -n '/^Examples:$/,$p' "$help" | tail -n +2)
  if [ "$count" -gt 0 ] && [ -z "$missing" ]; then ok; else
    fail "$label: $count example(s) after 'Examples:'; not in the EXAMPLES of ${page#"$root"/}:$missing"
  fi
}

# The DESCRIPTION paragraphs man page $1 marks with `.\" --help`, one a line, as plain
# words: font macros and escapes dropped, quotes of macro arguments removed (the two-letter
# macros join their arguments without a space). A paragraph ends at a blank line, a
# paragraph macro or the next mark. Written apart from cmake/help_from_man.py, which
# copies the same paragraphs into --help.
man_description() {
  awk -v mark='.\\" --help' '
    # The arguments of a macro line, as roff splits them, joined by `sep`.
    function join_args(s, sep,   i, c, quoted, word, have, out, n) {
      n = 0
      for (i = 1; i <= length(s) + 1; i++) {
        c = i <= length(s) ? substr(s, i, 1) : " "
        if (c == "\"") { quoted = !quoted; have = 1; continue }
        if (c == " " && !quoted) {
          if (have) { out = out (n++ ? sep : "") word }
          word = ""; have = 0; continue
        }
        word = word c; have = 1
      }
      return out
    }
    /^\.SH / { section = $0; sub(/^\.SH +/, "", section); gsub(/"/, "", section) }
    in_para && (/^[ \t]*$/ || /^\.(PP|P|LP|SH|SS|TP|IP|HP|EX|RS|RE|SY|YS)([ \t]|$)/ || $0 == mark) {
      print para; in_para = 0
    }
    in_para {
      line = $0
      if (line ~ /^\.[BI] /) line = join_args(substr(line, 4), " ")
      else if (line ~ /^\.(BR|RB|IR|RI|BI|IB) /) line = join_args(substr(line, 5), "")
      para = para (para == "" ? "" : " ") line
      next
    }
    $0 == mark && section == "DESCRIPTION" { in_para = 1; para = "" }
    END { if (in_para) print para }' "$1" |
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\[%&]//g' -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' \
        -e 's/\\([lr]q/"/g' -e 's/\\ / /g' -e 's/\\e/\\/g' -e 's/  */ /g' -e 's/^ //' -e 's/ $//'
}

# The description paragraphs of help file $1 (between the last option list, "Global
# options:" or "Subcommands:", and "Examples:"), one a line, their lines joined.
help_description() {
  awk '/^(Global options|Subcommands):$/ { list = 1; next }
       list && /^$/ { list = 0; text = 1; next }
       text && /^Examples:$/ { exit }
       text && /^$/ { if (para != "") print para; para = ""; next }
       text { para = para (para == "" ? "" : " ") $0 }
       END { if (para != "") print para }' "$1"
}

# Checks that the description help file $1 prints is the paragraphs man page $2 marks
# for it, word for word, filled to at most 90 columns.
check_description_is_man() {
  local help=$1 page=$2 label=$3
  man_description "$page" >"$tmp/man_description.txt"
  help_description "$help" >"$tmp/help_description.txt"
  if diff -u "$tmp/man_description.txt" "$tmp/help_description.txt" >"$tmp/description.diff"; then ok; else
    fail "$label: the --help description is not the paragraphs ${page#"$root"/} marks in DESCRIPTION:
$(cat "$tmp/description.diff")"
  fi
  local wide
  wide=$(awk '/^(Global options|Subcommands):$/ { list = 1; next } list && /^$/ { list = 0; text = 1; next }
              text && /^Examples:$/ { exit } text && length($0) > 90' "$help")
  if [ -z "$wide" ]; then ok; else fail "$label: description lines wider than 90 columns:
$wide"; fi
}

# Checks that every long option listed in help file $1 appears in man page $2.
check_options_in_man() {
  local help=$1 page=$2 label=$3 opt missing=""
  plain_roff "$page" >"$tmp/page.txt"
  for opt in $(long_options "$help"); do
    # The option must appear as a whole word: "--dict" does not count as "--dict-size".
    if ! grep -qE -- "(^|[^A-Za-z0-9-])${opt}([^A-Za-z0-9-]|$)" "$tmp/page.txt"; then
      missing="$missing $opt"
    fi
  done
  if [ -z "$missing" ]; then ok; else fail "$label: ${page#"$root"/} does not mention:$missing"; fi
}

# --- the root command -------------------------------------------------------------

run "$zrec" --help
cp "$tmp/out" "$tmp/root_help"
if [ "$rc" -eq 0 ] && [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ]; then ok; else
  fail "zrec --help: exit $rc, want 0 with help on stdout only"
fi

commands=$(subcommands "$tmp/root_help")
if [ -n "$commands" ]; then ok; else fail "zrec --help lists no subcommands"; fi

if [ -f "$man_dir/zrec.1" ]; then
  ok
  check_options_in_man "$tmp/root_help" "$man_dir/zrec.1" "zrec (global options)"
  check_description_is_man "$tmp/root_help" "$man_dir/zrec.1" "zrec"
  plain_roff "$man_dir/zrec.1" >"$tmp/page.txt"
  for cmd in $commands; do
    if grep -qE -- "(^|[^A-Za-z0-9-])${cmd}([^A-Za-z0-9-]|$)" "$tmp/page.txt"; then ok; else
      fail "man/zrec.1 does not mention the subcommand '$cmd'"
    fi
  done
else
  fail "man/zrec.1 is missing"
fi

# --version and -V: zrec's version, then the zstd library loaded at run time (as the
# zstd CLI of the same library reports it), the versions of fmt and spdlog compiled in
# (deps/), then every other library zrec links (libarchive, HDF5, LMDB, OpenSSL), one
# per line.
zstd_runtime=$(python3 -c 'import ctypes; z = ctypes.CDLL("libzstd.so.1"); z.ZSTD_versionString.restype = ctypes.c_char_p; print(z.ZSTD_versionString().decode())' 2>/dev/null)
for flag in --version -V; do
  run "$zrec" "$flag"
  if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(sed -n 1p "$tmp/out")" = "zrec 0.1.0" ] &&
     [ "$(sed -n 2p "$tmp/out")" = "zstd $zstd_runtime" ] && [ -n "$zstd_runtime" ] &&
     grep -qxE 'fmt [0-9]+\.[0-9]+\.[0-9]+' <(sed -n 3p "$tmp/out") &&
     grep -qxE 'spdlog [0-9]+\.[0-9]+\.[0-9]+' <(sed -n 4p "$tmp/out") &&
     grep -qxE 'libarchive [0-9]+\.[0-9]+\.[0-9]+.*' <(sed -n 5p "$tmp/out") &&
     grep -qxE 'hdf5 [0-9]+\.[0-9]+\.[0-9]+' <(sed -n 6p "$tmp/out") &&
     grep -qxE 'lmdb 0\.[0-9]+\.[0-9]+' <(sed -n 7p "$tmp/out") &&
     grep -qxE 'openssl [0-9]+\.[0-9]+\.[0-9]+.*' <(sed -n 8p "$tmp/out") && [ "$(wc -l <"$tmp/out")" -eq 8 ]; then
    ok
  else
    fail "zrec $flag: exit $rc, stdout '$(cat "$tmp/out")', want 0 and 'zrec 0.1.0', 'zstd $zstd_runtime', 'fmt X.Y.Z', 'spdlog X.Y.Z', libarchive, hdf5, lmdb, openssl"
  fi
done

run "$zrec" nosuchcmd
if [ "$rc" -eq 2 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then ok; else
  fail "zrec nosuchcmd: exit $rc, want 2 with a message on stderr only"
fi

run "$zrec"
if [ "$rc" -eq 2 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then ok; else
  fail "zrec (no command): exit $rc, want 2 with a message on stderr only"
fi

run "$zrec" --no-such-option
if [ "$rc" -eq 2 ] && [ -s "$tmp/err" ]; then ok; else
  fail "zrec --no-such-option: exit $rc, want 2 with a message on stderr"
fi

# --- cmake/help_from_man.py on pages made here ----------------------------------------

# A marked paragraph: font macros joined (two-letter ones without spaces, quotes kept
# whole), escapes decoded, the unbreakable space kept; filled to 90 columns; a marked
# example with its continuation line and without its prompt.
words=$(printf 'word %.0s' $(seq 25))
cat >"$tmp/zrec-x.1" <<PAGE
.SH DESCRIPTION
.\" --help
.B zrec x
copies
.IR src 's
records
.RB ( "a b" ", " c )
with \\-\\-level and 2\\ GiB\\ \\-\\ 9 bytes, \\(lqquoted\\(rq.
.PP
Not marked.
.PP
.\" --help
$words
.SH EXAMPLES
.EX
.\" --help
\$ zrec x a \\e
    b
.EE
PAGE
first=$(printf 'word %.0s' $(seq 17))word
rest=$(printf 'word %.0s' $(seq 6))word
if python3 "$root/cmake/help_from_man.py" "$tmp/help_text.cc" "$tmp/zrec-x.1" &&
   grep -qxF "    {\"x\", \"zrec x copies src's records (a b, c) with --level and 2 GiB - 9 bytes, \\\"quoted\\\".\\n\\n$first\\n$rest\\n\"," "$tmp/help_text.cc" &&
   grep -qxF '     "  zrec x a \\\n      b\n"},' "$tmp/help_text.cc"; then ok; else
  fail "help_from_man.py: the description and example of a page made here are not as expected:
$(grep -A1 '{"x"' "$tmp/help_text.cc" 2>&1)"
fi

# What fails the build: a mark outside DESCRIPTION and EXAMPLES, an escape or a request
# the script does not decode, each named with its page and line.
bad_page() {
  local what=$1 want=$2
  printf '%s\n' "$3" >"$tmp/zrec-bad.1"
  if python3 "$root/cmake/help_from_man.py" "$tmp/bad.cc" "$tmp/zrec-bad.1" 2>"$tmp/bad.err"; then
    fail "help_from_man.py accepted $what"
  elif grep -qF -- "$tmp/zrec-bad.1:$want" "$tmp/bad.err"; then ok; else
    fail "help_from_man.py on $what: '$(cat "$tmp/bad.err")', want '<page>:$want'"
  fi
}
bad_page "a mark in NAME" '2: ".\" --help" must stand before a paragraph of DESCRIPTION' \
  "$(printf '.SH NAME\n.\\" --help\nx')"
bad_page "a mark before .PP" '3: ".\" --help" in DESCRIPTION must stand before a paragraph' \
  "$(printf '.SH DESCRIPTION\ntext\n.\\" --help\n.PP\ny')"
bad_page "an undecodable escape" "3: a roff escape help_from_man.py does not decode" \
  "$(printf '.SH DESCRIPTION\n.\\" --help\nx \\(bu y')"
bad_page "a request inside a marked paragraph" "4: a request help_from_man.py does not copy into --help" \
  "$(printf '.SH DESCRIPTION\n.\\" --help\nx\n.sp\ny')"

# --- every subcommand -------------------------------------------------------------

for cmd in $commands; do
  run "$zrec" "$cmd" --help
  cp "$tmp/out" "$tmp/help_$cmd"
  if [ "$rc" -eq 0 ]; then ok; else fail "zrec $cmd --help: exit $rc, want 0"; fi
  if [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ]; then ok; else
    fail "zrec $cmd --help: help must go to stdout, nothing to stderr"
  fi
  if grep -q "Example" "$tmp/out"; then ok; else fail "zrec $cmd --help shows no Example"; fi
  if grep -q "zrec $cmd" "$tmp/out"; then ok; else fail "zrec $cmd --help does not show 'zrec $cmd' usage"; fi

  page="$man_dir/zrec-$cmd.1"
  if [ -f "$page" ]; then
    ok
    check_options_in_man "$tmp/help_$cmd" "$page" "zrec $cmd"
    check_examples_in_man "$tmp/help_$cmd" "$page" "zrec $cmd"
    check_description_is_man "$tmp/help_$cmd" "$page" "zrec $cmd"
  else
    fail "man/zrec-$cmd.1 is missing"
  fi

  # Misuse of a subcommand is a usage error (2) reported on stderr.
  run "$zrec" "$cmd" --no-such-option
  if [ "$rc" -eq 2 ] && [ -s "$tmp/err" ]; then ok; else
    fail "zrec $cmd --no-such-option: exit $rc, want 2 with a message on stderr"
  fi
done

finish
