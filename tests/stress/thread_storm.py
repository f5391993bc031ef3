"""ampctl against a thread storm (thread_storm.c): while 320 threads run and
then threads are created and destroyed in a loop, ampctl status, stats and
--json status poll the process and every listed thread is switched off and
on with `ampctl set PID thread.TID.enabled=...`, racing the thread's end.
Checks: ampctl never dies of a signal and answers 0, or 1 with one line
naming why (the thread has ended); its JSON always parses; the quoted
thread name comes back intact through `ampctl --json get`; the program's
products are all exact (bf16 or fp32) and it prints nothing unasked.

usage: thread_storm.py AMPCTL THREAD_STORM PRELOAD"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

checker = Checker("thread_storm")
check = checker.check
ampctl, program, preload = sys.argv[1:4]
proc = subprocess.Popen([program, "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        env=dict(os.environ, LD_PRELOAD=preload))
pid = str(proc.pid)


def ctl(*args):
    r = subprocess.run([ampctl, *args], capture_output=True, text=True, timeout=30)
    ok = r.returncode == 0 or (r.returncode == 1 and len(r.stderr.splitlines()) == 1)
    check(f"ampctl {' '.join(args)}", ok, f"(exit {r.returncode}: {r.stderr.strip()[:200]})")
    return r


check("the program starts", proc.stdout.readline().strip() == "ready")
rounds = toggles = ended = 0
quoted_seen = False
while proc.poll() is None:
    rounds += 1
    ctl("status", pid)
    ctl("stats", pid)
    r = ctl("--json", "status", pid)
    if r.returncode != 0:
        continue  # the process ended between two calls
    try:
        status = json.loads(r.stdout)
    except ValueError as e:
        check("--json status parses", False, f"({e}: {r.stdout[:200]!r})")
        continue
    for th in status.get("threads", []):
        tid = th["tid"]
        for value in ("0", "1", "default"):
            s = ctl("set", pid, f"thread.{tid}.enabled={value}")
            toggles += 1
            ended += s.returncode == 1
        if not quoted_seen:
            g = subprocess.run([ampctl, "--json", "get", pid, f"thread.{tid}.name"],
                               capture_output=True, text=True)
            if g.returncode == 0:
                try:
                    name = json.loads(g.stdout)[f"thread.{tid}.name"]
                except ValueError as e:
                    check("--json get parses", False, f"({e}: {g.stdout!r})")
                    continue
                if name == 'q"uo\\te':
                    quoted_seen = True
out, err = proc.communicate(timeout=60)
check("the program's products are all exact", proc.returncode == 0, f"(exit {proc.returncode}: {out.strip()})")
check("the program prints nothing on stderr", err == "", f"({err[:300]!r})")
check("the quoted thread name came back intact through --json get", quoted_seen)
check("ampctl polled while the storm ran", rounds >= 3, f"({rounds} rounds)")
checker.finish(f"{out.strip()}; ampctl rounds {rounds}, toggles {toggles} "
               f"({ended} answered 'ended'); ")
