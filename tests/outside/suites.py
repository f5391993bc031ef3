"""Outside test suites under the shim as shipped: numpy.linalg,
scipy.linalg, scipy.sparse.linalg, scikit-learn's linear_model and
decomposition, each run
by pytest with libampshim.so preloaded and the default settings (the size
rule, the numerical-library list). Every failure must be on the list of
expected failures (tests/outside/expected_failures.txt, each with its
reason); a failure not on it, or a listed one that now passes, fails this
test, so either shows. A failure that also happens without the shim (run
again plainly) is the suite's own and is only reported.

The list holds the failures of a CPU that lowers (native bf16 units:
avx512_bf16 or AMX); on one without, the size rule lowers nothing and no
suite may fail.

The same suites against pip's wheels (tests/pip) have their own list:
--expected names it.

usage: suites.py [--expected LIST] PATH/TO/libampshim.so [SUITE...]
       (77: pytest missing)"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402

SUITES = ["numpy.linalg", "scipy.linalg", "scipy.sparse.linalg", "sklearn.linear_model",
          "sklearn.decomposition"]
HERE = os.path.dirname(os.path.abspath(__file__))


def expected_failures(path):
    """{(suite, test id): reason} from the list."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            entry, _, reason = line.partition("  # ")
            suite, test = entry.split(None, 1)
            out[(suite, test.strip())] = reason.strip()
    return out


def run_pytest(suite, env, tests=None):
    """The ids of the tests that failed (or errored), and pytest's status."""
    with tempfile.TemporaryDirectory() as work:
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                "-W", "ignore", "--pyargs", suite] if tests is None else \
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
             "-W", "ignore"] + tests
        r = subprocess.run(args, env=env, cwd=work, capture_output=True, text=True)
    failed = set()
    for line in r.stdout.splitlines():
        m = re.match(r"(FAILED|ERROR) (\S+)", line)
        if m:
            failed.add(m.group(2))
    return failed, r.returncode, r.stdout


def main():
    args = sys.argv[1:]
    listed_in = os.path.join(HERE, "expected_failures.txt")
    if len(args) >= 2 and args[0] == "--expected":
        listed_in, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    shim = args[0]
    suites = args[1:] or SUITES
    try:
        import pytest  # noqa: F401
    except ImportError:
        print("suites: pytest is not installed; skipped")
        sys.exit(77)
    ck = Checker("outside suites")
    plain = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
    plain["OPENBLAS_NUM_THREADS"] = "1"
    shimmed = dict(plain, LD_PRELOAD=shim)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import check  # tests/check.py

    lowers = check.cpu_has_bf16_units()
    expected = expected_failures(listed_in) if lowers else {}
    print(f"CPU with native bf16 units: {lowers}; {len(expected)} expected failures listed "
          f"({os.path.basename(listed_in)})")
    for suite in suites:
        module = suite.split(".")[0]
        try:
            __import__(module)
        except ImportError:
            print(f"{suite}: {module} is not installed; skipped")
            continue
        failed, status, out = run_pytest(suite, shimmed)
        summary = out.strip().splitlines()[-1] if out.strip() else f"status {status}"
        print(f"{suite} under the shim: {summary}")
        ck.check(f"{suite} ran", status in (0, 1), f"pytest status {status}\n{out[-3000:]}")
        listed = {test for (s, test) in expected if s == suite}
        # pytest names the tests relative to the package folder it collected;
        # the list holds the same names.
        new = sorted(failed - listed)
        if new:
            again, _, _ = run_pytest(suite, plain, [f"{path_of(suite)}/{t}" for t in new])
            own = [t for t in new if any(t.endswith(a) or a.endswith(t) for a in again)]
            for t in own:
                print(f"  {t}: fails without the shim too (the suite's own)")
            new = [t for t in new if t not in own]
        for t in new:
            ck.check(f"{suite}: {t} fails under the shim and is not on the list", False,
                     f"({listed_in})")
        for t in sorted(listed - failed):
            ck.check(f"{suite}: {t} is on the list but passes now (take it off)", False)
        for t in sorted(listed & failed):
            ck.check(f"{suite}: {t} fails as listed: {expected[(suite, t)]}", True)
    ck.finish()


def path_of(suite):
    module = __import__(suite, fromlist=["_"])
    return os.path.dirname(module.__file__)


if __name__ == "__main__":
    main()
