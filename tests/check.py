"""The Python tests' one assertion (the twin of tests/check.h): counts
checks, prints a FAIL line for each failed one, never stops; finish() prints
the summary line and exits 1 if anything failed. Test scripts in a folder
below tests/ import it with tests/ put on sys.path."""
import os
import sys


def cpu_has_bf16_units():
    """Whether oneDNN 2.x (and so ampshim's probe) finds native bf16 units
    here: the CPU's flags (avx512_bf16 or amx_bf16), unless
    ONEDNN_MAX_CPU_ISA holds oneDNN below them (AVX2 simulates a CPU
    without them). The twin of tests/check.h's."""
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or ""
    if isa and "BF16" not in isa.upper() and "AMX" not in isa.upper() and isa.upper() != "ALL":
        return False
    with open("/proc/cpuinfo") as f:
        flags = next((line for line in f if line.startswith("flags")), "")
    return " avx512_bf16" in flags or " amx_bf16" in flags


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
