#!/usr/bin/python3
"""Usage errors name what was mistyped and suggest the real name; help reads like a Unix
tool's.

- An unknown command or option is reported before any other usage error, with the nearest
  real name when one is close ("did you mean"), exit 2, nothing on stdout, and the store
  path next to it is not blamed.
- ZREC_THREADS and --threads refuse the same values in the same words, each naming itself.
- No --help shows a parser type (UINT, TEXT, INT in [..]) or CLI11's markers (REQUIRED,
  Excludes:, [Default: ...]); defaults are written "(default: X)"; every subcommand lists
  the global options.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
from cli_helpers import expect, require_zrec, run_zrec  # noqa: E402

require_zrec("test_cli_errors")
CASES, case = case_runner.case_registry()
FIGURES = []
COMMANDS = ["create", "append-npy", "append-files", "append-stream", "append-tar", "append-lmdb", "cat", "info",
            "train-dict", "recompress", "concat", "digest", "verify", "bench", "view"]
GLOBAL_OPTIONS = ["--threads", "--quiet", "--verbose", "--wait", "--progress", "--no-progress"]


def usage_error(args, want_stderr, env=None):
    """Runs zrec args; asserts exit 2, empty stdout and exactly want_stderr on stderr."""
    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.update(env)
        rc, out, err = run_zrec(args)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    expect(rc == 2, "zrec %s: exit %d, want 2 (usage); stderr %r" % (" ".join(args), rc, err))
    expect(out == b"", "zrec %s: wrote %r to stdout" % (" ".join(args), out[:200]))
    expect(err == want_stderr, "zrec %s:\n  stderr %r\n  want   %r" % (" ".join(args), err, want_stderr))


def try_help(where):
    return "Try '%s --help' for more information.\n" % where


@case
def unknown_commands_get_the_nearest_name(d):
    listing = "Try 'zrec --help' for the list of commands.\n"
    for typed, near in [("crate", "create"), ("digets", "digest"), ("cta", "cat"), ("inof", "info"),
                        ("verfy", "verify"), ("apend-npy", "append-npy"), ("append-tra", "append-tar"),
                        ("recompres", "recompress"), ("train-dcit", "train-dict")]:
        usage_error([typed, os.path.join(d, "s")],
                    "zrec: unknown command '%s'; did you mean '%s'?\n%s" % (typed, near, listing))
    # Nothing near: no guess. Global flags before the command word do not hide it.
    usage_error(["xyzzy"], "zrec: unknown command 'xyzzy'\n" + listing)
    usage_error(["-v", "crate"], "zrec: unknown command 'crate'; did you mean 'create'?\n" + listing)
    usage_error(["--threads", "2", "crate"], "zrec: unknown command 'crate'; did you mean 'create'?\n" + listing)
    # The hidden completion command is known but never suggested.
    rc, out, _ = run_zrec(["completion", "bash"])
    expect(rc == 0 and b"complete -F _zrec zrec" in out, "zrec completion bash: rc %d" % rc)
    usage_error(["completon"], "zrec: unknown command 'completon'\n" + listing)


@case
def unknown_options_are_named_before_other_errors(d):
    s = os.path.join(d, "s")
    # create's missing --dtype used to be reported instead of the mistyped --threads.
    usage_error(["create", "--threds", "2", s],
                "zrec create: unknown option '--threds'; did you mean '--threads'?\n" + try_help("zrec create"))
    usage_error(["create", "--threds=2", s],
                "zrec create: unknown option '--threds'; did you mean '--threads'?\n" + try_help("zrec create"))
    usage_error(["create", "--ragged", "--dtyp", "<i4", "--ndim", "1", s],
                "zrec create: unknown option '--dtyp'; did you mean '--dtype'?\n" + try_help("zrec create"))
    # The store path next to the flag is not what the error is about.
    usage_error(["info", "--bogus", "store/"], "zrec info: unknown option '--bogus'\n" + try_help("zrec info"))
    usage_error(["info", "--jsno", "store/"],
                "zrec info: unknown option '--jsno'; did you mean '--json'?\n" + try_help("zrec info"))
    usage_error(["cat", s, "--fromat", "jsonl"],
                "zrec cat: unknown option '--fromat'; did you mean '--format'?\n" + try_help("zrec cat"))
    usage_error(["verify", "--quik", s],
                "zrec verify: unknown option '--quik'; did you mean '--quick'?\n" + try_help("zrec verify"))
    usage_error(["append-stream", "--checkpoint-evry", "10", s],
                "zrec append-stream: unknown option '--checkpoint-evry'; did you mean '--checkpoint-every'?\n" +
                try_help("zrec append-stream"))
    usage_error(["recompress", "--shard", "8", s, s + "2"],
                "zrec recompress: unknown option '--shard'; did you mean '--shards'?\n" + try_help("zrec recompress"))
    # Global options are suggested after the command word too, and before it.
    usage_error(["digest", "--quite", s],
                "zrec digest: unknown option '--quite'; did you mean '--quiet'?\n" + try_help("zrec digest"))
    usage_error(["--wiat", "info", s], "zrec: unknown option '--wiat'; did you mean '--wait'?\n" + try_help("zrec"))
    usage_error(["-threads", "2", "info", s],
                "zrec: unknown option '-threads'; did you mean '--threads'?\n" + try_help("zrec"))
    usage_error(["info", "-x", s], "zrec info: unknown option '-x'\n" + try_help("zrec info"))
    # Issue 36: a bad selection after digest's stores is refused before any store is
    # hashed (it was taken for a store path, after the others' whole digests), and a
    # negative --place says so in a line (CLI11's own range printed DBL_MAX's 310 digits).
    usage_error(["digest", s, "::0"], "zrec digest: invalid selection '::0': slice step cannot be zero\n" +
                try_help("zrec digest"))
    usage_error(["concat", "--place", "-1", os.path.join(d, "all.plan")],
                "zrec concat: --place: '-1' is not a non-negative integer\n" + try_help("zrec concat"))


@case
def names_that_look_like_options_but_are_values(d):
    """Values after options that take one, negative numbers and words after -- are not options."""
    s = os.path.join(d, "s")
    rc, _, err = run_zrec(["create", "--ragged", "--dtype", "<i4", "--ndim", "1", s])
    expect(rc == 0, err)
    rc, _, err = run_zrec(["append-stream", "--parse", "ints", s], stdin=b"1 2\n3\n4 5 6\n")
    expect(rc == 0, err)
    rc, out, err = run_zrec(["cat", s, "-1", "--format", "jsonl"])
    expect(rc == 0 and out == b"[4,5,6]\n", "cat s -1: %d %r %s" % (rc, out, err))
    rc, out, err = run_zrec(["cat", "-o", "-", "--format", "jsonl", s, "0"])
    expect(rc == 0 and out == b"[1,2]\n", "cat -o -: %d %r %s" % (rc, out, err))
    rc, out, err = run_zrec(["-v", "-v", "--threads=2", "cat", "--format=jsonl", "--", s, "1"])
    expect(rc == 0 and out == b"[3]\n", "cat -- s 1: %d %r %s" % (rc, out, err))
    # A value that looks like an option is the option's value, not an unknown option.
    rc, _, err = run_zrec(["cat", s, "--indices-from", "--odd-name"])
    expect(rc == 1 and "--odd-name" in err and "unknown option" not in err, "indices-from: %d %s" % (rc, err))


@case
def thread_counts_name_their_source(d):
    s = os.path.join(d, "s")
    rc, _, err = run_zrec(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s])
    expect(rc == 0, err)
    rule = "is not a whole number from 1 to 1024"
    for value in ["0", "-1", "abc", "1025", "2.5", "+3", "99999999999999999999999"]:
        usage_error(["info", s], "zrec info: ZREC_THREADS: '%s' %s\n%s" % (value, rule, try_help("zrec info")),
                    env={"ZREC_THREADS": value})
        usage_error(["--threads", value, "info", s],
                    "zrec info: --threads: '%s' %s\n%s" % (value, rule, try_help("zrec info")))
        usage_error(["info", "--threads=" + value, s],
                    "zrec info: --threads: '%s' %s\n%s" % (value, rule, try_help("zrec info")))
    # A bad ZREC_THREADS is an error even where --threads overrides it (man zrec: any
    # other value is a usage error); an empty one is as good as unset.
    usage_error(["--threads", "2", "info", s],
                "zrec info: ZREC_THREADS: '0' %s\n%s" % (rule, try_help("zrec info")), env={"ZREC_THREADS": "0"})
    for env in [{"ZREC_THREADS": ""}, {"ZREC_THREADS": "1"}, {"ZREC_THREADS": "1024"}]:
        saved = dict(os.environ)
        os.environ.update(env)
        try:
            rc, _, err = run_zrec(["info", s])
        finally:
            os.environ.clear()
            os.environ.update(saved)
        expect(rc == 0, "ZREC_THREADS=%r: rc %d %s" % (env["ZREC_THREADS"], rc, err))


def help_of(cmd):
    rc, out, err = run_zrec(([cmd] if cmd else []) + ["--help"])
    expect(rc == 0 and err == "", "zrec %s --help: rc %d, stderr %r" % (cmd or "", rc, err))
    return out.decode()


@case
def help_has_no_parser_types(d):
    parser_words = re.compile(r"\bUINT\b|\bTEXT\b|\bINT\b|\bFLOAT\b|INT in \[|\bREQUIRED\b|Excludes:|Needs:|"
                              r"\(Env:|\[Default|\(default [0-9]|(?<!\[)=[^ \]]+ {2,}")
    defaults = 0
    for cmd in [None] + COMMANDS:
        text = help_of(cmd)
        for line in text.splitlines():
            expect(not parser_words.search(line), "zrec %s --help: %r" % (cmd or "", line))
        defaults += text.count("(default: ")
    # Every option with a default says it the one way.
    expect(defaults >= 40, "only %d '(default: ' in all help texts" % defaults)
    FIGURES.append("help texts checked: %d (root + %d commands), %d defaults written '(default: X)'" %
                   (1 + len(COMMANDS), len(COMMANDS), defaults))
    # Placeholders name what a value is.
    cat = help_of("cat")
    # As issue 21 writes them: named values listed (the table the command checks), sizes BYTES.
    for line in ["Usage: zrec cat [OPTIONS] STORE [SELECTION]", "  -o,--output FILE ", "  --window-mib N ",
                 "  --format npy|raw|text|jsonl|tar|npz\n", "  --framing lines|nul|u32le|u64le\n", "  --maxcount N ",
                 "  --maxsize BYTES ", "  --sample N ", "  --wait[=SECONDS] "]:
        expect(line in cat, "zrec cat --help lacks %r" % line)
    expect("Memory budget of one read window, MiB (default: 64)" in cat, cat)
    create = help_of("create")
    expect(re.search(r"--dtype DTYPE +NumPy dtype.*\(required\)", create), create)
    expect(re.search(r"--shape SHAPE +.*\(needs --dense\)", create), create)
    expect(re.search(r"--dense +.*\(not with --ragged\)", create), create)
    expect("Usage: zrec [OPTIONS] COMMAND" in help_of(None), "root usage line")


@case
def every_subcommand_lists_the_global_options(d):
    for cmd in COMMANDS:
        text = help_of(cmd)
        expect("\nGlobal options:\n" in text, "zrec %s --help has no Global options" % cmd)
        globals_part = text.split("\nGlobal options:\n", 1)[1].split("\n\n", 1)[0]
        for opt in GLOBAL_OPTIONS:
            expect(re.search(r"^  (-\w,)?%s\b" % re.escape(opt), globals_part, re.M),
                   "zrec %s --help: %s not under Global options" % (cmd, opt))
        expect("  --threads N " in globals_part, "zrec %s --help: --threads N" % cmd)



@case
def familiar_names_and_numbers_as_options(d):
    listing = "Try 'zrec --help' for the list of commands.\n"
    for typed, command in [("ls", "info"), ("list", "info"), ("stat", "info"), ("check", "verify"),
                           ("fsck", "verify"), ("test", "verify"), ("dump", "cat"), ("export", "cat")]:
        usage_error([typed, "store/"], "zrec: unknown command '%s'; did you mean '%s'?\n%s" % (typed, command, listing))
    # A zstd-style level names itself (it used to make the next operand 'not expected').
    usage_error(["recompress", "-19", "a/", "b/"],
                "zrec recompress: unknown option '-19'; did you mean '--level 19'?\n" + try_help("zrec recompress"))
    usage_error(["info", "-19", "a/"], "zrec info: unknown option '-19'\n" + try_help("zrec info"))
    usage_error(["cat", "-1", "a/"], "zrec cat: unknown option '-1'\n" + try_help("zrec cat"))
    usage_error(["-T2", "info", "a/"], "zrec: unknown option '-T2'\n" + try_help("zrec"))
    usage_error(["info", "-T2", "a/"], "zrec info: unknown option '-T2'\n" + try_help("zrec info"))


@case
def help_and_bare_zrec(d):
    rc, out, err = run_zrec([])
    expect(rc == 2 and out == b"" and "Usage: zrec" in err and "append-tar" in err and "verify" in err,
           "bare zrec: rc %d err %r" % (rc, err[:300]))
    rc, out, err = run_zrec(["help"])
    expect(rc == 0 and out == run_zrec(["--help"])[1], "zrec help differs from zrec --help: rc %d %r" % (rc, err))
    for cmd in ("cat", "append-tar", "verify"):
        rc, out, err = run_zrec(["help", cmd])
        expect(rc == 0 and out == run_zrec([cmd, "--help"])[1], "zrec help %s: rc %d %r" % (cmd, rc, err))
    usage_error(["help", "dump"],
                "zrec help: unknown command 'dump'; did you mean 'cat'?\nTry 'zrec help' for the list of commands.\n")
    usage_error(["help", "cat", "x"],
                "zrec help: unexpected operand 'x'\nTry 'zrec help' for the list of commands.\n")
    rc, out, err = run_zrec(["-v"])
    expect(rc == 2 and out == b"" and err.startswith("zrec: no command given\n") and "Usage: zrec" in err,
           "zrec -v: rc %d %r" % (rc, err[:200]))


@case
def no_parser_wording_reaches_a_user(d):
    s = os.path.join(d, "s")
    rc, _, err = run_zrec(["create", "--ragged", "--ndim", "1", "--dtype", "<i4", s])
    expect(rc == 0, err)
    cases = [
        (["info"], "zrec info: missing operand STORE\n" + try_help("zrec info")),
        (["create", s + "2"], "zrec create: option --dtype is required\n" + try_help("zrec create")),
        (["cat", s, "0", "extra"], "zrec cat: unexpected operand 'extra'\n" + try_help("zrec cat")),
        (["cat", s, "0", "x", "y"], "zrec cat: unexpected operands 'x' 'y'\n" + try_help("zrec cat")),
        (["cat", s, "--format"], "zrec cat: option --format needs a value\n" + try_help("zrec cat")),
        (["cat", s, "--window-mib", "abc"],
         "zrec cat: --window-mib: 'abc' is not a number (1 to 1048576)\n" + try_help("zrec cat")),
        (["cat", s, "--sample", "2", "--seed", "x1"], "zrec cat: --seed: 'x1' is not a valid value\n" + try_help("zrec cat")),
        (["cat", s, "--window-mib", "0"],
         "zrec cat: --window-mib: '0' is out of range (1 to 1048576)\n" + try_help("zrec cat")),
        (["cat", s, "--sample", "2", "--shuffle"],
         "zrec cat: --sample and --shuffle cannot be used together\n" + try_help("zrec cat")),
    ]
    for args, want in cases:
        usage_error(args, want)
    FIGURES.append("usage errors in zrec's words: %d" % len(cases))


sys.exit(case_runner.run_cases(CASES, "zrec-cli-errors-", figures=FIGURES))
