"""The loop the Python CLI tests share: each case gets a fresh directory, every case
runs even after one fails, and the exit status says whether any did.

    import case_runner
    sys.exit(case_runner.run_cases(TESTS, "zrec-locking-", figures=FIGURES))

Cases can be listed by a decorator:

    CASES, case = case_runner.case_registry()

    @case
    def appends_in_order(d): ...

A case is a function taking its directory; it fails by raising (AssertionError with a
message for a broken expectation; anything else also prints its traceback).
"""
import os
import shutil
import tempfile
import time
import traceback


def case_registry():
    """A list and a decorator that appends the function it decorates to it (returning
    the function), so a test's cases are listed where they are defined."""
    cases = []

    def case(fn):
        cases.append(fn)
        return fn

    return cases, case


def run_cases(cases, prefix, figures=(), before_cleanup=None):
    """Runs each case in <tmp root>/<case name>/ (removed after it), printing
    "ok   NAME  SECONDS" or "FAIL NAME: ERROR" per case, then one "figure: ..." line per
    entry of figures (a list filled while the cases ran, or a function returning one),
    then "N passed, M failed". before_cleanup(root), if given, runs before the root is removed (e.g. to
    unmount what a case mounted there). Returns the exit status: 1 if any case failed."""
    passed = failed = 0
    root = tempfile.mkdtemp(prefix=prefix)
    try:
        for case in cases:
            d = os.path.join(root, case.__name__)
            os.makedirs(d)
            t0 = time.monotonic()
            try:
                case(d)
                passed += 1
                print("ok   %-45s %.2f s" % (case.__name__, time.monotonic() - t0), flush=True)
            except Exception as e:
                failed += 1
                print("FAIL %s: %s" % (case.__name__, e), flush=True)
                if not isinstance(e, AssertionError):
                    traceback.print_exc()
            finally:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        if before_cleanup is not None:
            before_cleanup(root)
        shutil.rmtree(root, ignore_errors=True)
    for line in (figures() if callable(figures) else figures):
        print("figure: " + line)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
