#!/usr/bin/env bash
# Golden output: `zrec --help`, `zrec <cmd> --help` for every subcommand `zrec --help`
# lists, and `zrec info` on a small store made here, each compared byte for byte with
# its expected file under tests/cli/golden/ (as zstd's tests/cli-tests do). A wording
# change is then a reviewed diff of those files.
#
# After a reviewed change of the help or info text, regenerate the expected files and
# commit them with the change:
#   ZREC=build/zrec ZREC_GOLDEN_UPDATE=1 bash tests/cli/test_golden.sh
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_golden.sh  (CTest sets ZREC).
set -u

source "$(dirname "$0")/testlib.sh"
require_zrec
golden="$here/golden"
update=${ZREC_GOLDEN_UPDATE:-0}

# Compares the file $1 (what zrec printed) with golden/$2; with ZREC_GOLDEN_UPDATE=1
# writes it there instead.
compare() {
  local got=$1 name=$2
  if [ "$update" = 1 ]; then
    cp "$got" "$golden/$name"
    ok
  elif [ ! -f "$golden/$name" ]; then
    fail "$name: no expected file tests/cli/golden/$name (run with ZREC_GOLDEN_UPDATE=1 to write it)"
  elif ! diff -u "$golden/$name" "$got" >"$tmp/diff"; then
    fail "$name differs from tests/cli/golden/$name (a reviewed change: ZREC_GOLDEN_UPDATE=1):"
    cat "$tmp/diff" >&2
  else
    ok
  fi
}

# The help as a terminal of any width, or none, shows it: a fixed environment.
export COLUMNS=80 LC_ALL=C
"$zrec" --help >"$tmp/zrec.help.txt" 2>&1
compare "$tmp/zrec.help.txt" help-zrec.txt
commands=$(awk '/^Subcommands:/ { on = 1; next } on && /^[[:space:]]*$/ { exit }
                on && /^  [a-z]/ { print $1 }' "$tmp/zrec.help.txt")
count=0
for cmd in $commands; do
  "$zrec" "$cmd" --help >"$tmp/$cmd.help.txt" 2>&1
  compare "$tmp/$cmd.help.txt" "help-$cmd.txt"
  count=$((count + 1))
done

# info on a store whose every fact is fixed: a Dense <u2 (3,) zstd store of 4 records,
# and a Ragged raw one of 2, named relative to the scratch directory.
cd "$tmp" || exit 1
/usr/bin/python3 -c 'import numpy as np; np.save("a.npy", np.arange(1, 13, dtype="<u2").reshape(4, 3))'
"$zrec" -q create --dense --dtype '<u2' --shape 3 --shards 2 dense >/dev/null 2>&1 &&
  "$zrec" -q append-npy dense a.npy >/dev/null 2>&1 &&
  "$zrec" -q create --ragged --dtype '|u1' --ndim 1 --codec raw ragged >/dev/null 2>&1 &&
  printf 'one\ntwo\n' | "$zrec" -q append-stream ragged >/dev/null 2>&1
check "made the info stores" [ $? -eq 0 ]
"$zrec" info dense >info-dense.txt 2>&1
compare info-dense.txt info-dense.txt
"$zrec" info ragged >info-ragged.txt 2>&1
compare info-ragged.txt info-ragged.txt
echo "figure: golden: $((count + 1)) help texts, 2 info texts"
finish
