#!/usr/bin/env bash
# zrec append-files with real tools: find -print0 | sort -z | zrec append-files --null,
# then every record equals its file (cmp), the manifest maps IDs to the right paths and
# sizes, and the concatenated records equal the concatenated files. Also: newline lists
# (--files-from), FILE operands, list order, missing / unreadable / empty / directory
# entries with and without --skip-missing / --skip-empty, the schema check, --skip-first
# resuming, the manifest following publication (rolled back on failure, checkpointed
# lines kept), a few thousand small files, and usage errors.
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_append_files.sh  (CTest sets ZREC).
set -u

source "$(dirname "$0")/testlib.sh"
require_zrec
cd "$tmp" || exit 1

new_store() {  # new_store NAME [create options...]
  local name=$1
  shift
  "$zrec" create --ragged --dtype '|u1' --ndim 1 "$@" "$name" || fail "create $name"
}
length() { "$zrec" info --json "$1" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["length"])'; }
fingerprint() { (cd "$1" && cksum meta.zr data_*.zr); }

# --- a tree of files: nested dirs, spaces, a newline and a tab in names, binary data --
mkdir -p tree/a/b tree/c "tree/with space"
printf 'hello\n' >tree/a/one.txt
printf 'x' >tree/a/b/tiny
head -c 70000 /dev/urandom >tree/a/b/random.bin
head -c 2500000 /dev/urandom >tree/c/big.bin
printf '{"k": 1}\r\n' >"tree/with space/crlf.json"
printf 'newline name\n' >"tree/c/new
line"
printf 'tab name' >"tree/c/ta	b"
printf '\\ back\\slash' >'tree/c/back\slash'
for i in $(seq 1 40); do head -c $((i * 37)) /dev/urandom >"tree/a/f$i"; done

find tree -type f -print0 | sort -z >list0
mapfile -d '' files <list0
n=${#files[@]}

# --- find | sort | append-files --null -: every record is its file ----------------
new_store s
if find tree -type f -print0 | sort -z | "$zrec" append-files --null --manifest map.tsv s - 2>err; then ok; else
  fail "find | sort -z | append-files --null: $(cat err)"
fi
check "the store holds one record per file" [ "$(length s)" = "$n" ]
bad=0
for i in "${!files[@]}"; do
  "$zrec" cat --format raw s "$i" | cmp -s - "${files[$i]}" || { bad=1; fail "record $i differs from '${files[$i]}'"; }
done
[ $bad = 0 ] && ok
check "concatenated records equal the concatenated files" \
  cmp -s <("$zrec" cat --format raw s) <(xargs -0 cat <list0)
check "the summary line goes to stderr" grep -q "zrec append-files: appended $n records (.* in, .* stored) to 's' in .*; it now holds $n" err
check "zrec verify accepts the store" "$zrec" verify s >/dev/null

# The manifest: id<TAB>path<TAB>bytes, one line per record, paths escaped.
if /usr/bin/python3 - "$n" <<'EOF'; then ok; else fail "manifest does not map the records to their files"; fi
import os, sys
n = int(sys.argv[1])
names = open("list0", "rb").read().split(b"\0")[:-1]
lines = open("map.tsv", "rb").read().split(b"\n")
assert lines[-1] == b"" and len(lines) - 1 == n, (len(lines), n)
for i, (line, name) in enumerate(zip(lines, names)):
    esc = name.replace(b"\\", b"\\\\").replace(b"\t", b"\\t").replace(b"\n", b"\\n").replace(b"\r", b"\\r")
    fields = line.split(b"\t")
    assert fields == [b"%d" % i, esc, b"%d" % os.path.getsize(name)], (line, name)
EOF

# --- a newline-separated list, FILE operands, list order --------------------------
new_store l
printf '%s\n' tree/a/f3 tree/a/one.txt "tree/with space/crlf.json" >list.txt
check "--files-from LIST (newline-separated)" "$zrec" -q append-files --files-from list.txt l
check "FILE operands come before --files-from" "$zrec" -q append-files l tree/a/f1 tree/a/f2 --files-from list.txt
check "records follow list order" cmp -s <("$zrec" cat --format raw l) \
  <(cat tree/a/f3 tree/a/one.txt "tree/with space/crlf.json" tree/a/f1 tree/a/f2 tree/a/f3 tree/a/one.txt "tree/with space/crlf.json")
check "a CRLF file is stored byte for byte" cmp -s <("$zrec" cat --format raw l 2) "tree/with space/crlf.json"

# --- the list rule (zrec_support/file_list.h): CRLF, blank lines, NUL lists, bad lists ------
new_store crlf
printf 'tree/a/f3\r\n\r\n\ntree/a/one.txt\r\ntree/with space/crlf.json' >list-crlf.txt
check "a CRLF list with blank lines names the same files" "$zrec" -q append-files --files-from list-crlf.txt crlf
check "its records are those files, in order" cmp -s <("$zrec" cat --format raw crlf) \
  <(cat tree/a/f3 tree/a/one.txt "tree/with space/crlf.json")
printf 'cr at end\r' >"tree/c/cr-end$(printf '\r')"
new_store nul
printf 'tree/c/new\nline\0\0tree/c/cr-end\r\0tree/a/f2' | "$zrec" -q append-files -0 nul - 2>err
check "a NUL list keeps newlines and a final CR in names, skips empty names" \
  cmp -s <("$zrec" cat --format raw nul) <(cat "tree/c/new
line" "tree/c/cr-end$(printf '\r')" tree/a/f2)
before=$(fingerprint nul)
printf 'tree/a/f1\ntree/c/new\nline\0tree/a/f2\n' >list-mixed
"$zrec" append-files nul --files-from list-mixed 2>err
rc=$?
check "a NUL byte in a newline list fails (exit 1)" [ $rc = 1 ]
check "the error names the list and the line" \
  grep -qF "zrec append-files: 'list-mixed' line 3 holds a NUL byte, which no path can: one name per line (--null reads NUL-separated names, as find -print0 writes them)" err
head -c 5000 /dev/zero | tr '\0' x >list-long
"$zrec" append-files -0 nul --files-from list-long 2>err
check "an over-long name in a NUL list fails, naming its position" \
  grep -qF "zrec append-files: 'list-long' name 1 is longer than 4096 bytes, more than any path: names must be NUL-separated" err
check "bad lists leave the store unchanged" [ "$(fingerprint nul)" = "$before" ]

# --- missing, unreadable, empty, directory ---------------------------------------
new_store m
printf 'keep' >tree/keep
: >tree/empty
before=$(fingerprint m)
"$zrec" append-files m tree/keep tree/nope tree/a/f1 2>err
rc=$?
check "a missing file fails (exit 1)" [ $rc = 1 ]
check "the error names the missing file" grep -q "cannot open 'tree/nope': No such file or directory" err
check "a failed run leaves the store unchanged" [ "$(fingerprint m)" = "$before" ]
"$zrec" append-files m tree/keep tree/empty 2>err
check "an empty file fails (exit 1)" [ $? = 1 ]
check "the error names the empty file and --skip-empty" grep -q "'tree/empty' is empty.*--skip-empty" err
"$zrec" append-files m tree/keep tree/a 2>err
check "a directory fails" [ $? = 1 ]
check "the error says it is a directory" grep -q "'tree/a': Is a directory" err
if [ "$(id -u)" != 0 ]; then
  printf 'secret' >tree/locked
  chmod 000 tree/locked
  "$zrec" append-files m tree/locked 2>err
  check "an unreadable file fails" [ $? = 1 ]
  check "the error says permission denied" grep -q "Permission denied" err
fi
check "the store is still unchanged" [ "$(fingerprint m)" = "$before" ]
"$zrec" append-files --skip-missing --skip-empty m tree/keep tree/nope tree/empty tree/a tree/gone tree/a/f1 2>err
check "--skip-missing --skip-empty succeed" [ $? = 0 ]
check "each skipped file gets a warning" [ "$(grep -c "warning: skipping: " err)" = 3 ]
check "the count of missing files comes at the end" grep -q "warning: skipped 3 missing or unreadable files" err
check "the count of empty files comes at the end" grep -q "warning: skipped 1 empty file" err
check "only the readable files were appended" cmp -s <("$zrec" cat --format raw m) <(cat tree/keep tree/a/f1)

# --- the schema check --------------------------------------------------------------
"$zrec" create --dense --dtype '|u1' --shape 4 dense
"$zrec" append-files dense tree/keep 2>err
check "a Dense store is refused (exit 1)" [ $? = 1 ]
check "the error names the schema needed" grep -q "must be Ragged '|u1' with ndim 1.*zrec create --ragged --dtype '|u1' --ndim 1" err
"$zrec" create --ragged --dtype '<i4' --ndim 1 ints
"$zrec" append-files ints tree/keep 2>err
check "a '<i4' store is refused" grep -q "must be Ragged '|u1'" err

# --- --skip-first resumes; the manifest follows publication -------------------------
new_store r --codec raw
head -z -n 20 list0 | "$zrec" -q append-files --null --manifest r.tsv r -
check "a first run published 20" [ "$(length r)" = 20 ]
"$zrec" -q append-files --null --manifest r.tsv --skip-first 20 r - <list0
check "--skip-first 20 appends the rest" [ "$(length r)" = "$n" ]
check "the resumed store equals the one-shot store" cmp -s <("$zrec" cat --format raw r) <("$zrec" cat --format raw s)
check "the manifest of both runs equals the one-shot manifest" cmp -s r.tsv map.tsv

new_store f
{ printf '%s\0' tree/a/f1 tree/a/f2 tree/a/f3; printf '%s\0' tree/nope; } >bad0
"$zrec" append-files --null --manifest f.tsv f - <bad0 2>err
check "a failed run fails" [ $? = 1 ]
check "a failed run leaves no manifest lines" [ ! -s f.tsv ]
"$zrec" append-files --null --manifest f.tsv --checkpoint-every 2 f - <bad0 2>err
check "with checkpoints, the failure says what the store holds" grep -q "holds 2 records, as of the last checkpoint (resume: the same command with --from-length 0)" err
check "the checkpointed records are published" [ "$(length f)" = 2 ]
check "the manifest lists exactly the published records" [ "$(cut -f1 f.tsv | tr '\n' ' ')" = "0 1 " ]

# --- a few thousand small files ----------------------------------------------------
mkdir many
/usr/bin/python3 - <<'EOF'
import os
for i in range(3000):
    d = "many/%02d" % (i % 50)
    os.makedirs(d, exist_ok=True)
    open("%s/%05d" % (d, i), "wb").write(b"file %d " % i * (1 + i % 13))
EOF
new_store k
find many -type f -print0 | sort -z >many0
check "3000 small files append" "$zrec" -q --threads 2 append-files --null --window-mib 1 k - <many0
check "3000 records" [ "$(length k)" = 3000 ]
check "their bytes, in order" cmp -s <("$zrec" cat --format raw k) <(xargs -0 cat <many0)
check "the many-file store verifies" "$zrec" verify k >/dev/null

# --- usage errors ------------------------------------------------------------------
"$zrec" append-files k 2>err
check "no files is a usage error (exit 2)" [ $? = 2 ]
"$zrec" append-files k - --files-from - </dev/null 2>err
check "stdin twice is a usage error (exit 2)" [ $? = 2 ]

finish
