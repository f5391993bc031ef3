"""The tables README.md and docs/ show are the tables the shim prints now:
every example line there that heads one of the report's tables (the
per-symbol table, the audit's, "did lowering pay?", the CPU time by call
site) has the columns, in order, of the header a run prints today (an
example cut with "..." its first columns), and every audit row under such
a header has as many fields as it has. A run of a small numpy program
(lowered by emulation, so on any CPU) gives the headers.
argv: the source root."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

root = sys.argv[1]
ck = Checker("docs-tables")
preload = os.environ.get("LD_PRELOAD", "")
env = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
env.update(OPENBLAS_NUM_THREADS="1", LD_PRELOAD=preload, AMPSHIM_CPU_KERNEL="emulate",
           AMPSHIM_LOWER_MIN="0", AMPSHIM_REPORT="1", AMPSHIM_CPU_TIMING_SAMPLE="1")
program = """import numpy as np
a = np.random.default_rng(0).standard_normal((256, 256), dtype=np.float32)
for _ in range(40):
    b = a @ a
"""
tmp = tempfile.mkdtemp(prefix="ampshim-docs-tables-")
path = os.path.join(tmp, "program.py")
with open(path, "w") as f:
    f.write(program)
headers = {}
for mode, kernel in (("1", "emulate"), ("auto", "emulate"), ("0", "auto")):
    r = subprocess.run([sys.executable, path],
                       env=dict(env, AMPSHIM_AUDIT=mode, AMPSHIM_CPU_KERNEL=kernel),
                       capture_output=True, text=True, cwd=tmp)
    for line in r.stderr.splitlines():
        words = line.split()
        if words[:2] == ["symbol", "op"]:
            headers["report"] = words
        elif words[:1] == ["rank"]:
            headers["audit"] = words
        elif words[:2] == ["symbol", "caller"] and "verdict" in words:
            headers["pay"] = words
        elif words[:2] == ["symbol", "caller"] and "timed" in words:
            headers["site time"] = words
# "did lowering pay?" needs a native product (its pay checks); without
# native units here the docs' one is not checked.
ck.check("a run prints the report's, the audit's and the call sites' headers",
         {"report", "audit", "site time"} <= set(headers), f"{sorted(headers)}")


def kind(words):
    if words[:2] == ["symbol", "op"]:
        return "report"
    if words[:1] == ["rank"]:
        return "audit"
    if words[:2] == ["symbol", "caller"]:
        return "pay" if "verdict" in words else "site time"
    return None


files = [os.path.join(root, "README.md")] + sorted(
    os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs"))
    if f.endswith(".md"))
seen = 0
for name in files:
    lines = open(name).read().splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("    "):
            continue
        words = line.split()
        k = kind(words)
        if not k or k not in headers:
            continue
        seen += 1
        want = headers[k]
        shown = words[:-1] if words[-1] == "..." else words
        where = f"{os.path.relpath(name, root)}:{i + 1}"
        ck.check(f"{where}: the {k} table's header is today's", want[:len(shown)] == shown and
                 (words[-1] == "..." or len(shown) == len(want)),
                 f"\n  docs: {' '.join(words)}\n  now:  {' '.join(want)}")
        if k != "audit":
            continue
        # its rows: the symbol where the header has it (a column missing
        # or added would move it)
        at = want.index("symbol") - 3  # the header's err max, err mean, elem max: two words each
        for row in lines[i + 1:]:
            if row.strip().startswith("|"):
                continue
            if not re.match(r"    \d+\s", row):
                break
            fields = row.split()
            ck.check(f"{where}: an audit row has today's columns",
                     len(fields) > at and re.search(r"gemm|syrk", fields[at]) is not None, row)
ck.check("README and docs show such tables", seen >= 5, str(seen))
ck.finish()
