"""The Python tests' one assertion (the twin of tests/check.h): counts
checks, prints a FAIL line for each failed one, never stops; finish() prints
the summary line and exits 1 if anything failed. Test scripts in a folder
below tests/ import it with tests/ put on sys.path."""
import sys


class Checker:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, what, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what} {detail}", flush=True)
        return ok

    def finish(self, extra=""):
        print(f"{self.name}: {extra}{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
