#!/usr/bin/env bash
# The progress meter: drawn on stderr under a pseudo-terminal (script -qc), never when
# stderr is a pipe or a file, forced by --progress, suppressed by -q and --no-progress;
# the line is cleared before the summary line. Covers append-stream (bytes total from a
# regular file), append-files (records total: "N/M records", a percentage), cat, and
# digest (records total and the bytes hashed).
#
# The meter first draws after about 1/6 s, so the commands are kept running until it has
# drawn what a check looks for (a producer that holds back its last line, a reader that
# starts reading only then: wait_meter.sh, up to 120 s, however slow the machine). Where
# the meter cannot be seen while zrec runs (nothing may be drawn; a file gets it only at
# the end) the producer waits until zrec has read its first lines and then gives the
# meter 1.5 s to draw; the slow reader of cat, half a second.
#
# Usage: ZREC=path/to/zrec bash tests/cli/test_progress.sh  (CTest sets ZREC).
set -u

source "$(dirname "$0")/testlib.sh"
require_zrec
if ! command -v script >/dev/null; then
  fail "script(1) from util-linux is needed"
  finish
fi
cd "$tmp" || exit 1

# raw: a zstd store of 1-byte records would add the first window's codec warning to
# the lines checked below.
"$zrec" create --ragged --dtype '|u1' --ndim 1 --codec raw s >/dev/null
# wait_meter.sh FILE PATTERN: until FILE holds a drawing of the meter that matches the
# grep PATTERN after its carriage return; 120 s at most (then the check that follows
# fails, saying what was not drawn).
cat >wait_meter.sh <<'EOF'
for _ in $(seq 1200); do
  grep -q $'\r'"$2" "$1" 2>/dev/null && exit 0
  sleep 0.1
done
exit 1
EOF
# A producer that writes, waits, writes again (an ASan build on a loaded machine starts
# slowly): "bash slow.sh FILE" holds back its last line until the meter drawn into FILE
# shows the first two records; plain "bash slow.sh" until zrec has read the first two
# lines (the pipe holds no byte: FIONREAD; 120 s at most), then 1.5 s more, the meter's
# time to draw.
cat >slow.sh <<'EOF'
printf 'a\nb\n'
if [ $# -gt 0 ]; then
  bash wait_meter.sh "$1" 'append-stream: 2 records'
else
  for _ in $(seq 1200); do
    /usr/bin/python3 -c 'import fcntl, struct, sys, termios
sys.exit(struct.unpack("i", fcntl.ioctl(1, termios.FIONREAD, b"\0" * 4))[0] != 0)' && break
    sleep 0.1
  done
  sleep 1.5
fi
printf 'c\n'
EOF

# Runs "$@" with its stdin, stdout and stderr on a pseudo-terminal; the terminal's
# output (stdout and stderr together) lands in $1.
under_tty() {
  local out=$1
  shift
  local cmd="" a
  for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
  script -qec "$cmd" /dev/null >"$out" 2>&1 </dev/null
}

# --- append-stream under a terminal: the meter is drawn, then cleared -------------
under_tty tty.out bash -c "bash slow.sh tty.out | '$zrec' append-stream s"
check "append-stream under a TTY exits 0" [ $? = 0 ]
check "a progress line is drawn under a TTY" grep -q $'\rappend-stream: 2 records, 4 B, .* records/s, .*/s, 0:0' tty.out
check "the progress line is cleared before the summary" grep -q $'\r\033\\[Kzrec append-stream: appended 3 records' tty.out

# --- never when stderr is a pipe or a file ----------------------------------------
bash slow.sh | "$zrec" append-stream s 2>pipe.err
check "no progress when stderr is a file" bash -c "! grep -q \$'\\r' pipe.err"
check "only the summary line when stderr is a file" [ "$(wc -l <pipe.err)" = 1 ]
bash slow.sh | "$zrec" append-stream s 2>&1 | cat >piped.err
check "no progress when stderr is a pipe" bash -c "! grep -q \$'\\r' piped.err"

# --- --progress forces it; -q and --no-progress suppress it -------------------------
bash slow.sh | "$zrec" --progress append-stream s 2>forced.err
check "--progress draws even into a file" grep -q $'\rappend-stream: 2 records' forced.err
under_tty quiet.out bash -c "bash slow.sh | '$zrec' -q append-stream s"
check "-q under a TTY: no progress, no summary" [ ! -s quiet.out ]
under_tty noprog.out bash -c "bash slow.sh | '$zrec' --no-progress append-stream s"
check "--no-progress under a TTY: no progress" bash -c "! grep -q 'append-stream: [0-9,]* records, ' noprog.out"
check "--no-progress keeps the summary line" grep -q "zrec append-stream: appended 3 records" noprog.out

# --- a known total: a percentage (append-stream -i FILE: its bytes) ----------------
# Checkpoints after every record (each one syncs the store) keep zrec busy long enough
# to draw; on a disk fast enough to finish first, there is nothing to check.
for i in $(seq 1 80); do printf "line %d\n" "$i"; done >lines.txt
"$zrec" --progress append-stream --checkpoint-every 1 -i lines.txt s 2>total.err
check "append-stream -i FILE with checkpoints exits 0" [ $? = 0 ]
if grep -q $'\r' total.err; then
  check "a regular-file input shows its byte total and a percentage" grep -q $'\rappend-stream: [0-9,]* records, [0-9.]* [KiB]*/[0-9.]* B ([0-9]*%)' total.err
else
  ok
fi

# --- append-tar of tar files: their sizes are the total (a percentage and an ETA) -----
/usr/bin/python3 - <<'PY'
import io, tarfile
with tarfile.open("shard.tar", "w") as t:
    for k in range(80):
        for ext in ("txt", "cls"):
            data = b"%d %s" % (k, ext.encode())
            info = tarfile.TarInfo("s%03d.%s" % (k, ext))
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
PY
"$zrec" --progress append-tar --checkpoint-every 1 tarroot shard.tar 2>tar.err
check "append-tar with checkpoints exits 0" [ $? = 0 ]
if grep -q $'\r' tar.err; then
  check "append-tar of tar files shows their byte total and a percentage" grep -q $'\rappend-tar: [0-9,]* records, [0-9.]* [KiB]*/[0-9.]* [KiB]* ([0-9]*%)' tar.err
else
  ok
fi

# --- append-files: the meter while the list is read, then a records total ----------
mkdir files
for i in $(seq 1 80); do printf "file %d\n" "$i" >"files/$i"; done
under_tty files.out bash -c "(ls -d files/* | head -40; bash wait_meter.sh files.out 'append-files: 0 records'; ls -d files/* | tail -40) | '$zrec' append-files --checkpoint-every 1 s -"
check "append-files under a TTY exits 0" [ $? = 0 ]
check "append-files draws while it reads the list" grep -q $'\rappend-files: 0 records' files.out
check "append-files' summary line" grep -q "zrec append-files: appended 80 records" files.out
if grep -q $'\rappend-files: [0-9,]*/' files.out; then
  check "append-files shows files out of the list's total" grep -q $'\rappend-files: [0-9,]*/80 records, .* ([0-9]*%)' files.out
else
  ok
fi

# --- cat: records total, drawn while the consumer is slow ---------------------------
"$zrec" create --ragged --dtype '|u1' --ndim 1 --codec raw big >/dev/null
head -c 8000000 /dev/zero | tr '\0' 'y' | fold -w 1000 | "$zrec" -q append-stream big
"$zrec" --progress cat --format raw big 2>cat.err | (bash wait_meter.sh cat.err 'cat: [0-9,]*/8,000 records, .* ('; cat >/dev/null)
check "cat draws records out of the total" grep -q $'\rcat: [0-9,]*/8,000 records, .* (' cat.err
"$zrec" cat --format raw big 2>cat2.err | (sleep 0.5; cat >/dev/null)
check "cat draws nothing when stderr is not a terminal" [ ! -s cat2.err ]

# --- digest: records out of the total and the bytes hashed, while the reader is slow --
# 100,000 --per-record lines (7 MB) outgrow the output buffer and the pipe long before the
# last record, so digest waits on the reader midway, its meter drawn.
"$zrec" create --ragged --dtype '|u1' --ndim 1 --codec raw many >/dev/null
head -c 1000000 /dev/zero | tr '\0' 'y' | fold -w 10 | "$zrec" -q append-stream many
"$zrec" --progress digest --per-record many 2>digest.err |
  (bash wait_meter.sh digest.err 'digest: [0-9,]*/100,000 records, [1-9][0-9.]* [KM]iB'; cat >/dev/null)
check "digest draws records out of the total" grep -q $'\rdigest: [0-9,]*/100,000 records, ' digest.err
check "digest counts the bytes it hashed (not 0 B)" \
  grep -q $'\rdigest: [0-9,]*/100,000 records, [1-9][0-9.]* [KM]iB' digest.err

finish
