#!/usr/bin/python3
"""zrec view --labels / --vocab STREAM=FILE hold their files' lines compactly: a names
file may be 16 MiB, and one of 16 M short lines is what a hostile (or merely huge)
vocabulary looks like. Each line was a std::string in a vector, copied twice more on the
way to the server: 16 M empty lines cost 1.5 GB of peak RSS as --vocab and 1.0 GB as
--labels (about 95 bytes a line). Now the file's bytes are held once with 4 bytes of
offset a line.

One case: a file of 16,777,200 lines (just under the 16 MiB a names file may have),
nearly all empty, whose line 3 is "three" and whose line 16777000 is "far", given as
--labels of a Dense scalar stream and as --vocab of a token stream. The server must name
the values and decode the tokens from those lines, and its peak RSS (VmHWM, once it is
serving) stay under 200 MiB: for each of the two, the file and 64 MiB of line ends, and
the process (157 MiB measured; 85 MiB with one of them, 13 MiB with none). Not checked
under ASan (ZREC_SANITIZED=1), whose shadow memory inflates RSS; the names and text are.

Needs: ZREC, /usr/bin/python3 with numpy.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
from cli_helpers import SANITIZED, expect, must, npy_bytes, require_zrec  # noqa: E402
from view_helpers import ViewServer  # noqa: E402

require_zrec("test_view_names_memory")
CASES, case = case_runner.case_registry()
FIGURES = []
LINES = (16 << 20) - 16  # the file, with its 8 letters, just under the 16 MiB a names file may have
FAR = 16777000
BOUND_MIB = 200


@case
def sixteen_million_lines_as_labels_and_vocab(d):
    names = os.path.join(d, "names.txt")
    with open(names, "wb") as f:
        f.write(b"\n" * 3 + b"three\n" + b"\n" * (FAR - 4) + b"far\n" + b"\n" * (LINES - FAR - 1))
    expect(os.path.getsize(names) == LINES + len(b"threefar"), "names file of %d bytes" % os.path.getsize(names))
    labels = os.path.join(d, "labels")
    must(["create", "--dense", "--dtype", "<i8", "--shape", "scalar", labels])
    must(["append-stream", "--parse", "ints", labels], stdin=b"3\n3\n%d\n" % FAR)
    tokens = os.path.join(d, "tokens")
    must(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", tokens])
    must(["append-npy", tokens, "-"], stdin=npy_bytes(np.array([3, FAR, 5], dtype=np.int32)))
    v = ViewServer([labels, tokens], ["--labels", "labels=" + names, "--vocab", "tokens=" + names])
    try:
        values = v.json("api/overview", {"path": 0})["streams"][0]["values"]
        expect(values["counts"] == [{"value": 3, "count": 2, "name": "three"},
                                    {"value": FAR, "count": 1, "name": "far"}], "values %s" % values)
        row = v.json("api/records", {"path": 1, "limit": 1})["rows"][0]
        expect(row["cells"][0]["tokens_text"] == "three far ", "tokens_text %r" % row["cells"][0])
        rss = v.peak_rss_mib()
    finally:
        v.stop()
    FIGURES.append("view --labels and --vocab of %d lines (%d MiB): peak RSS %.1f MiB (bound %d MiB)"
                   % (LINES, LINES >> 20, rss, BOUND_MIB))
    expect(SANITIZED or rss < BOUND_MIB, "peak RSS %.1f MiB, over %d MiB" % (rss, BOUND_MIB))


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-view-names-memory-", figures=FIGURES))
