#!/usr/bin/env python3
"""The library has one entrance (docs/architecture.md): who may include whom.

- Nothing under apps/ or bench/include/ includes a core internal: no `#include "X/..."`
  where src/X exists (the CLI and the benchmark's public header see include/zrec only).
- A public header (include/zrec/*.h) includes only other public headers and the
  standard library: no quoted include outside include/zrec, none under src/.
- include/ holds no benchmark API (bench/include/zrec_bench.h is the benchmark's).
- The public API stays small and flat: include/zrec holds at most 16 headers, and every
  one declares its names in namespace zrec itself, none in a nested namespace
  (zrec::io::...): the tools' helpers that are no storage API live in support/.
- The public headers hold no process-wide setter: no free function named set_* and no
  extern variable (how a call waits, cancels or warns rides in its options).
- support/ (the tools' uninstalled helpers) reaches the core through include/zrec only,
  never the CLI; the core uses only its header-only parts (no support/*.cc behind them).
- The CLI's floors (apps/cli/): formats/ (pure byte formats) includes only formats/ and
  the public API, never import/, report/ or the commands; no command (cmd_*.cc)
  includes another command; the root (main, the command table, the commands and their
  helpers; at most 25 files) is the top floor: no file of app/, options/, os/, formats/,
  import/, report/ or view/ includes one of its files.
- zrec view's HTTP server module (apps/cli/view/transport/) is the only place that
  includes <httplib.h>, and it includes of the CLI only cli/view/http_transport.h.
- No header under apps/ includes CLI11's <CLI/CLI.hpp> (they include
  cli/options/cli11_fwd.h, the one forward declaration of CLI::App and the like,
  instead): it costs seconds of compiling per file, so only the .cc files that
  register options, parse or format help include it.
- The helpers' floors (options/, os/, formats/, report/) include nothing of app/.
- No file under apps/ performs a root's lock/commit protocol (RootWriter, the marker
  written): the library's DatasetWriter does, for every tool and user alike.
- Every public header compiles on its own (`c++ -std=c++20 -fsyntax-only -Iinclude`,
  warnings as errors), so a user's first include never needs another before it.

Zero exceptions. Prints one `figure:` line with the files and headers covered.
Usage: python3 tests/cli/test_layering.py [ROOT]   (default: this checkout)
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_EXT = (".h", ".hh", ".hpp", ".cc", ".cpp", ".cxx", ".c", ".inc")


def sources(top):
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXT):
                yield os.path.join(dirpath, name)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1), m.group(2)


def rel(path):
    return os.path.relpath(path, ROOT)


def main():
    internal = sorted(d for d in os.listdir(os.path.join(ROOT, "src")) if os.path.isdir(os.path.join(ROOT, "src", d)))
    if not internal:
        raise SystemExit("FAIL: no directories under src/: wrong ROOT %s" % ROOT)
    problems = []

    def reaches_in(target):
        parts = os.path.normpath(target).split(os.sep)
        return parts[0] in internal or "src" in parts

    # 1. The CLI and the benchmark's public header reach the core through include/zrec only.
    outer = [p for top in ("apps", os.path.join("bench", "include")) for p in sources(top)]
    for path in outer:
        for number, _, target in includes(path):
            if reaches_in(target):
                problems.append("%s:%d includes \"%s\", a core internal (src/%s); use include/zrec"
                                % (rel(path), number, target, target.split("/")[0]))

    # 2. Public headers include only public headers (and the standard library).
    public_dir = os.path.join(ROOT, "include", "zrec")
    public = sorted(os.path.join(public_dir, n) for n in os.listdir(public_dir) if n.endswith(".h"))
    for path in public:
        for number, kind, target in includes(path):
            if reaches_in(target):
                problems.append("%s:%d includes %s, a private header (src/)"
                                % (rel(path), number, '"%s"' % target if kind == '"' else "<%s>" % target))
            elif kind == '"' and not (target.startswith("zrec/") and os.path.isfile(os.path.join(ROOT, "include", target))):
                problems.append("%s:%d includes \"%s\", which is not a public header (include/zrec/*.h)"
                                % (rel(path), number, target))

    # 2a. At most 16 public headers, none with a nested namespace.
    if len(public) > 16:
        problems.append("include/zrec holds %d headers (at most 16): fold a small one into its neighbour, or move "
                        "what is no storage API to support/" % len(public))
    for path in public:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = re.match(r'^\s*namespace\s+([\w:]+)\s*\{', line)
                if m and m.group(1) != "zrec":
                    problems.append("%s:%d opens namespace %s: the public API is namespace zrec alone"
                                    % (rel(path), number, m.group(1)))

    # 3. No benchmark API in include/.
    for path in sources("include"):
        if "bench" in os.path.basename(path).lower():
            problems.append("%s: a benchmark header in the public API (it belongs in bench/include/)" % rel(path))
        for number, _, target in includes(path):
            if "bench" in target.lower():
                problems.append("%s:%d includes \"%s\": the public API does not depend on the benchmark"
                                % (rel(path), number, target))

    # 3a. No process-wide setter in the installed headers.
    setter = re.compile(r'^\s*(?:inline\s+|static\s+)?[\w:<>,\s\*&]*?\b(set_\w+)\s*\(')
    for path in public:
        depth = 0  # of class/struct bodies: a member set_x() configures one object, not the process
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                code = line.split("//")[0]
                if re.match(r'^\s*(class|struct)\s+\w+[^;]*$', code) and "{" in code:
                    depth += 1
                elif re.match(r'^\s*};', code) and depth > 0:
                    depth -= 1
                m = setter.match(code)
                if m and depth == 0 and not code.startswith((" ", "\t")):
                    problems.append("%s:%d declares %s(), a process-wide setter: make it a field of the options "
                                    "it affects" % (rel(path), number, m.group(1)))
                if re.match(r'^\s*extern\s+(?!"C")', code):
                    problems.append("%s:%d declares an extern variable, process-wide state in the public API"
                                    % (rel(path), number))

    # 3a'. support/: on top of the core, below the tools.
    support_files = list(sources("support"))
    header_only = {rel(p)[len("support/include/"):] for p in support_files if p.endswith(".h")} - {
        "zrec_support/" + os.path.splitext(os.path.basename(p))[0] + ".h" for p in support_files if p.endswith(".cc")}
    for path in support_files:
        for number, kind, target in includes(path):
            if reaches_in(target) or target.startswith("cli/"):
                problems.append("%s:%d includes \"%s\": support/ sees the core through include/zrec only, and "
                                "nothing of the CLI" % (rel(path), number, target))
    for path in sources("src"):
        for number, kind, target in includes(path):
            if target.startswith("zrec_support/") and target not in header_only:
                problems.append("%s:%d includes \"%s\": the core may use only support/'s header-only parts "
                                "(it is installed without support/)" % (rel(path), number, target))

    # 3b. The CLI's floors.
    cli = os.path.join(ROOT, "apps", "cli")
    for path in sources(os.path.join("apps", "cli", "formats")):
        for number, kind, target in includes(path):
            if kind == '"' and target.startswith("cli/") and not target.startswith("cli/formats/"):
                problems.append("%s:%d includes \"%s\": formats/ holds pure byte formats and includes "
                                "only formats/ and include/zrec" % (rel(path), number, target))
    for path in sources(os.path.join("apps", "cli")):
        if not os.path.basename(path).startswith("cmd_"):
            continue
        for number, kind, target in includes(path):
            if kind == '"' and target.startswith("cli/") and os.path.basename(target).startswith("cmd_"):
                problems.append("%s:%d includes \"%s\": one command never includes another"
                                % (rel(path), number, target))
    # 3b'. The CLI's root is the top floor: main, the command table, the commands and the
    # helpers only commands use. No file in a floor below (app/, options/, os/, formats/,
    # import/, report/, view/) includes a file of the root, and the root keeps at most 25.
    root_files = sorted(n for n in os.listdir(cli) if os.path.isfile(os.path.join(cli, n)) and n.endswith(SOURCE_EXT))
    if len(root_files) > 25:
        problems.append("apps/cli/ holds %d files (at most 25: main, the command table, the commands and their "
                        "helpers; the rest belong in a floor): %s" % (len(root_files), " ".join(root_files)))
    for floor in sorted(d for d in os.listdir(cli) if os.path.isdir(os.path.join(cli, d))):
        for path in sources(os.path.join("apps", "cli", floor)):
            for number, kind, target in includes(path):
                if kind == '"' and target.startswith("cli/") and target.count("/") == 1 and \
                        target[len("cli/"):] in root_files:
                    problems.append("%s:%d includes \"%s\", a file of the CLI's root: floors below it never "
                                    "include it" % (rel(path), number, target))
    # 3b''. The helpers' floors (options/, os/, formats/, report/) sit below the app: none
    # includes a file of app/ (the app fills what they read, e.g. report/'s OutputPrefs).
    for floor in ("options", "os", "formats", "report"):
        for path in sources(os.path.join("apps", "cli", floor)):
            for number, kind, target in includes(path):
                if kind == '"' and target.startswith("cli/app/"):
                    problems.append("%s:%d includes \"%s\": %s/ is below the app and includes nothing of "
                                    "cli/app/" % (rel(path), number, target, floor))
    # 3c. zrec view's HTTP server stays in its module: httplib.h only under view/transport/,
    # which includes nothing of the CLI but the seam header and itself (docs/architecture.md).
    transport = os.path.join("apps", "cli", "view", "transport")
    for path in sources("apps"):
        inside = rel(path).startswith(transport + os.sep)
        for number, kind, target in includes(path):
            if target == "httplib.h" and not inside:
                problems.append("%s:%d includes <httplib.h>: only %s/ may (zrec view's server module, which "
                                "only zrec view loads)" % (rel(path), number, transport))
            if inside and kind == '"' and target.startswith("cli/") and not (
                    target == "cli/view/http_transport.h" or target.startswith("cli/view/transport/")):
                problems.append("%s:%d includes \"%s\": the server module sees the CLI through "
                                "cli/view/http_transport.h only" % (rel(path), number, target))
    # 3d. CLI11's header only where options are registered, parsed or formatted.
    for path in sources("apps"):
        if path.endswith(".cc"):
            continue
        for number, kind, target in includes(path):
            if kind == "<" and target.startswith("CLI/"):
                problems.append("%s:%d includes <%s>: headers include cli/options/cli11_fwd.h, CLI11's classes "
                                "declared; the .cc files that need them include it" % (rel(path), number, target))
        # One forward declaration of CLI11's classes, not a copy per header.
        if rel(path) == os.path.join("apps", "cli", "options", "cli11_fwd.h"):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if re.match(r'^\s*namespace\s+CLI\s*\{', line):
                    problems.append("%s:%d declares CLI11's classes itself: include cli/options/cli11_fwd.h, "
                                    "their one forward declaration" % (rel(path), number))
    # 3e. A root's lock and commit protocol lives in the library (zrec::DatasetWriter): no
    # file under apps/ marks, locks or commits a root itself, nor writes its marker.
    protocol = re.compile(r'\bRootWriter\b|\broot_writer\.h\b|\brename(?:at)?\s*\([^;]*kRootMarkerFile'
                          r'|\b(?:open|creat|link)\s*\([^;]*kRootMarkerFile')
    for path in sources("apps"):
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if protocol.search(line.split("//")[0]):
                    problems.append("%s:%d performs a root's lock/commit protocol itself; drive zrec::DatasetWriter "
                                    "(zrec/dataset.h)" % (rel(path), number))
    cli_files = sum(1 for _ in sources(os.path.join("apps", "cli")))

    # 4. Each public header compiles alone.
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        raise SystemExit("FAIL: no C++ compiler (c++, g++, clang++) to compile the public headers with")
    def compile_alone(path, scratch):
        unit = os.path.join(scratch, os.path.basename(path) + ".cc")
        with open(unit, "w") as f:
            f.write('#include "%s"\n' % rel(path)[len("include/"):])
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                            "-I" + os.path.join(ROOT, "include"), unit], capture_output=True, text=True)
        if r.returncode == 0:
            return None
        lines = r.stderr.strip().splitlines()
        first = next((l for l in lines if "error" in l), lines[0] if lines else "(no message)")
        return "%s does not compile on its own: %s" % (rel(path), first)

    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        problems += [p for p in pool.map(lambda path: compile_alone(path, scratch), public) if p]

    print("figure: layering: %d files under apps/ and bench/include/ (%d in apps/cli, %d of them at its root), "
          "%d public headers (each compiled alone with %s, none with a process-wide setter), %d in support/, "
          "internal dirs %s"
          % (len(outer), cli_files, len(root_files), len(public), os.path.basename(cxx), len(support_files),
             ",".join(internal)))
    if problems:
        for p in problems:
            print("FAIL: " + p, file=sys.stderr)
        raise SystemExit("FAIL: %d layering violation%s" % (len(problems), "" if len(problems) == 1 else "s"))
    print("PASS: layering")


if __name__ == "__main__":
    main()
