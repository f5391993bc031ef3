"""A report from a process ended by SIGTERM (shim/load.c; ampshim(7),
AMPSHIM_REPORT): with a report asked for and SIGTERM left at its default,
the process writes its report and still dies of SIGTERM.
- every worker of a multiprocessing.Pool left by its with-block (which
  terminates them; each makes a product as it starts, and all wait for
  work when it ends) writes one (before: 1 to 3 of 3);
- a process that kills itself: its report, exit by SIGTERM (-15);
- SIGTERM ignored by the parent: still ignored (the process lives on);
- the program's own handler: it runs, as without the shim;
- no report asked: SIGTERM is left at its default (nothing installed).
Run with LD_PRELOAD=libampshim.so; it starts its own children."""
import glob
import os
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

POOL = """import multiprocessing as mp, numpy as np, time
def f(i):
    a = np.ones((256, 256), np.float32)
    return float((a @ a)[0, 0])
def start(ready):
    f(0)
    ready.wait()  # every worker idle when the with-block ends
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(3, initializer=start, initargs=(mp.Barrier(3),)) as p:
        print(sum(p.map(f, range(12))))
        time.sleep(0.5)  # each waits for work, blocked in a system call
"""
SELF_KILL = """import os, signal, numpy as np
a = np.ones((256, 256), np.float32)
print(float((a @ a)[0, 0]), flush=True)
os.kill(os.getpid(), signal.SIGTERM)
print("alive", flush=True)
"""
OWN_HANDLER = """import os, signal, sys, numpy as np
def mine(sig, frame):
    print("mine", flush=True)
    sys.exit(3)
signal.signal(signal.SIGTERM, mine)
a = np.ones((256, 256), np.float32)
(a @ a)
os.kill(os.getpid(), signal.SIGTERM)
"""
DISPOSITION = """import signal, numpy as np
a = np.ones((256, 256), np.float32)
(a @ a)
print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
"""

ck = Checker("report-sigterm")
preload = os.environ.get("LD_PRELOAD", "")
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base.update(OPENBLAS_NUM_THREADS="1")
tmp = tempfile.mkdtemp(prefix="ampshim-sigterm-")


def run(name, code, report=True, preexec=None):
    path = os.path.join(tmp, name + ".py")
    with open(path, "w") as f:
        f.write(code)
    folder = os.path.join(tmp, name)
    os.mkdir(folder)
    env = dict(base)
    if report:
        env["AMPSHIM_REPORT"] = os.path.join(folder, "r-%p.txt")
    r = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True,
                       preexec_fn=preexec, timeout=120)
    reports = []
    for p in sorted(glob.glob(os.path.join(folder, "r-*.txt"))):
        with open(p) as f:
            reports.append(f.read())
    return r, reports


def with_sgemm(reports):
    return sum(1 for t in reports if "ampshim report" in t and "cblas_sgemm" in t)


r, reports = run("pool", POOL)
ck.check("the pool's program runs", r.returncode == 0 and r.stdout.strip() == "3072.0",
         r.stdout + r.stderr[-1500:])
ck.check("every pool worker (3) wrote a report with its products", with_sgemm(reports) == 3,
         f"{len(reports)} reports, {with_sgemm(reports)} with cblas_sgemm")

r, reports = run("self_kill", SELF_KILL)
ck.check("a process that kills itself dies of SIGTERM", r.returncode == -signal.SIGTERM,
         f"exit {r.returncode}: {r.stdout} {r.stderr[-800:]}")
ck.check("... before it prints again", "alive" not in r.stdout, r.stdout)
ck.check("... and leaves its report", with_sgemm(reports) == 1, f"{len(reports)} reports")


def ignore_sigterm():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


r, reports = run("ignored", SELF_KILL, preexec=ignore_sigterm)
ck.check("SIGTERM ignored by the parent stays ignored", r.returncode == 0 and "alive" in r.stdout,
         f"exit {r.returncode}: {r.stdout} {r.stderr[-800:]}")

r, reports = run("own_handler", OWN_HANDLER)
ck.check("the program's own SIGTERM handler runs", r.returncode == 3 and "mine" in r.stdout,
         f"exit {r.returncode}: {r.stdout} {r.stderr[-800:]}")

r, reports = run("no_report", DISPOSITION, report=False)
ck.check("no report asked: SIGTERM stays at its default", r.stdout.strip() == "True",
         r.stdout + r.stderr[-800:])
ck.finish()
