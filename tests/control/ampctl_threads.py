"""ampctl steering a running, unmodified program (named_threads: four named
threads calling cblas_sgemm in loops, classifying each result as bf16 (B),
fp16 (H) or fp32 (F)). Each step changes something through ampctl, waits
until it has reached the threads, then watches a window of their calls.

usage: ampctl_threads.py AMPCTL NAMED_THREADS PRELOAD"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

checker = Checker("ampctl_threads")
check = checker.check
ampctl, program, preload = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="ampctl_test_")
status_file, stop_file = os.path.join(work, "status"), os.path.join(work, "stop")
proc = subprocess.Popen([program, status_file, stop_file], env=dict(os.environ, LD_PRELOAD=preload))
pid = str(proc.pid)


def ctl(*args, expect=0):
    r = subprocess.run([ampctl, *args], capture_output=True, text=True)
    check(f"ampctl {' '.join(args)} exits {expect}", r.returncode == expect,
          f"(got {r.returncode}: {r.stderr.strip()})")
    return r


def native_capable():
    """avx512_bf16 or AMX, and oneDNN 2 installed: native calls can run."""
    import ctypes
    import check

    try:
        ctypes.CDLL("libdnnl.so.2")
    except OSError:
        return False
    return check.cpu_has_bf16_units()


def threads():
    """{name: [tid, B, H, F, X]} from the program's own status file."""
    try:
        with open(status_file) as f:
            return {p[0]: [int(x) for x in p[1:]] for p in (line.split() for line in f) if len(p) == 6}
    except FileNotFoundError:
        return {}


def wait_until(what, predicate, timeout=15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    check(what, False, "(timed out)")
    return False


def active(tid):
    return subprocess.run([ampctl, "get", pid, f"thread.{tid}.active"], capture_output=True,
                          text=True).stdout.strip()


def window(seconds=0.4):
    """Calls per class per thread during a window: {name: (B, H, F, X)}."""
    before = threads()
    time.sleep(seconds)
    after = threads()
    return {n: tuple(after[n][i] - before[n][i] for i in range(1, 5)) for n in after}


def settled():
    """Waits until every thread has made two calls since now: the first call
    after a change applies it, so from then on calls show it."""
    start = {n: sum(t[1:]) for n, t in threads().items()}
    wait_until("every thread calls again",
               lambda: all(sum(t[1:]) >= start[n] + 2 for n, t in threads().items()))


def expect_classes(step, expected):
    """expected: {name: 'B'|'H'|'F'} - each thread's calls all of that class."""
    settled()
    w = window()
    for name, cls in expected.items():
        d = dict(zip("BHFX", w[name]))
        others = sum(v for k, v in d.items() if k != cls)
        check(f"{step}: {name} calls are {cls}", d[cls] > 0 and others == 0, f"(window {d})")


names = [f"worker-{i}" for i in range(4)]
try:
    wait_until("four threads lowering", lambda: len(threads()) == 4 and all(t[1] > 0 for t in threads().values()))
    tid = {n: threads()[n][0] for n in names}
    blocks = [f"/proc/{pid}/fd/{fd}" for fd in os.listdir(f"/proc/{pid}/fd")
              if os.readlink(f"/proc/{pid}/fd/{fd}") == "/memfd:ampshim-control (deleted)"]
    check("the block is a memfd of mode 0600",
          len(blocks) == 1 and os.stat(blocks[0]).st_mode & 0o777 == 0o600, str(blocks))
    try:
        os.truncate(blocks[0], 4096)
        check("the block's size is sealed (truncating it would SIGBUS the program)", False)
    except OSError:
        check("the block's size is sealed", True)
    st = json.loads(ctl("--json", "status", pid).stdout)
    check("status lists the four named threads",
          sorted(t["name"] for t in st["threads"]) == names, str(st["threads"]))
    expect_classes("start", {n: "B" for n in names})

    ctl("disable", pid, "--thread", "worker-1")
    wait_until("worker-1 off", lambda: active(tid["worker-1"]) == "0")
    lowered_before = json.loads(ctl("--json", "status", pid).stdout)
    expect_classes("worker-1 disabled by name", {"worker-0": "B", "worker-1": "F", "worker-2": "B", "worker-3": "B"})
    lowered_after = json.loads(ctl("--json", "status", pid).stdout)
    lw = {t["name"]: t["lowered"] for t in lowered_before["threads"]}
    la = {t["name"]: t["lowered"] for t in lowered_after["threads"]}
    check("worker-1's lowered counter stopped, the others' kept going",
          la["worker-1"] == lw["worker-1"] and all(la[n] > lw[n] for n in names if n != "worker-1"),
          f"{lw} -> {la}")

    ctl("disable", pid, "--thread", str(tid["worker-2"]))
    wait_until("worker-2 off", lambda: active(tid["worker-2"]) == "0")
    expect_classes("worker-2 disabled by tid", {"worker-0": "B", "worker-1": "F", "worker-2": "F", "worker-3": "B"})

    ctl("enable", pid, "--thread", "worker-1")
    wait_until("worker-1 on", lambda: active(tid["worker-1"]) == "1")
    expect_classes("worker-1 enabled again", {"worker-0": "B", "worker-1": "B", "worker-2": "F", "worker-3": "B"})

    for n in ("worker-1", "worker-2"):
        ctl("set", pid, f"thread.{tid[n]}.enabled=default")
        check(f"get returns what set wrote ({n})",
              ctl("get", pid, f"thread.{tid[n]}.enabled").stdout.strip() == "default")
    wait_until("worker-2 back", lambda: active(tid["worker-2"]) == "1")

    ctl("disable", pid)
    wait_until("all off", lambda: all(active(tid[n]) == "0" for n in names))
    expect_classes("process disabled", {n: "F" for n in names})
    ctl("enable", pid)
    wait_until("all on", lambda: all(active(tid[n]) == "1" for n in names))
    expect_classes("process enabled", {n: "B" for n in names})
    ctl("set", pid, "opt.enabled=default")

    ctl("set", pid, "policy.cpu.mm=passthrough")
    check("get policy.cpu.mm", ctl("get", pid, "policy.cpu.mm").stdout.strip() == "passthrough")
    expect_classes("policy.cpu.mm=passthrough live", {n: "F" for n in names})
    ctl("set", pid, "policy.cpu.mm=default")
    expect_classes("policy back to default", {n: "B" for n in names})
    ctl("set", pid, "policy.cpu.*=passthrough")
    check("a wildcard sets every op", ctl("get", pid, "policy.cpu.mm").stdout.strip() == "passthrough"
          and ctl("get", pid, "policy.cpu.matmul").stdout.strip() == "passthrough")
    expect_classes("policy.cpu.*=passthrough live", {n: "F" for n in names})
    ctl("set", pid, "policy.cpu.*=default")
    expect_classes("wildcard back to default", {n: "B" for n in names})

    ctl("set", pid, "opt.dtype=fp16")
    check("get opt.dtype", ctl("get", pid, "opt.dtype").stdout.strip() == "fp16")
    expect_classes("opt.dtype=fp16 live", {n: "H" for n in names})
    ctl("set", pid, "opt.dtype=bf16")
    expect_classes("opt.dtype back to bf16", {n: "B" for n in names})

    # The CPU kernel, live: forced native, the threads' calls run native
    # (where this CPU and oneDNN allow), then back to auto (24^3 products
    # are below the crossover: emulated, bit-exact bf16 again).
    check("get opt.cpu_kernel (default)", ctl("get", pid, "opt.cpu_kernel").stdout.strip() == "auto")
    ctl("set", pid, "opt.cpu_kernel=native")
    check("get opt.cpu_kernel", ctl("get", pid, "opt.cpu_kernel").stdout.strip() == "native")
    if native_capable():
        def native_calls():
            stats = json.loads(ctl("--json", "stats", pid).stdout)
            return sum(s.get("native", 0) for s in stats["symbols"] if s["symbol"] == "cblas_sgemm")
        before = native_calls()
        wait_until("opt.cpu_kernel=native: calls run native", lambda: native_calls() > before)
    ctl("set", pid, "opt.cpu_kernel=auto")
    expect_classes("opt.cpu_kernel back to auto", {n: "B" for n in names})
    r = ctl("set", pid, "opt.cpu_kernel=fast", expect=1)
    check("bad cpu kernel says so", "'fast' is not auto, native or emulate" in r.stderr, r.stderr)

    # The accuracy audit, switched on live: the threads' call site appears in
    # `ampctl audit`, audited, with a bf16-sized error; the results they keep
    # are fp32 (class F) while it is on, then bf16 again once it is off.
    check("get opt.audit (default)", ctl("get", pid, "opt.audit").stdout.strip() == "off")
    r = ctl("audit", pid)
    check("audit before it is on: says it is off", "the audit is off" in r.stderr, r.stderr)
    ctl("set", pid, "opt.audit=1")

    def audited():
        sites = json.loads(ctl("--json", "audit", pid).stdout)["sites"]
        return [s for s in sites if s["symbol"] == "cblas_sgemm" and s["audited"] > 0]
    if wait_until("opt.audit=1: the threads' site is audited", lambda: audited()):
        site = audited()[0]
        check("audit site names the program", site["object"] == "named_threads", str(site))
        check("audit error is a bf16 rounding's", 0 < site["err_max"] < 0.02, str(site))
    expect_classes("opt.audit=1: the program keeps fp32 results", {n: "F" for n in names})
    r = ctl("audit", pid, "--policy")
    check("ampctl audit --policy writes a call-site entry",
          "cpu:cblas_sgemm@named_threads:" in r.stdout and "=lower" in r.stdout, r.stdout)
    r = ctl("audit", pid, "--policy", "--tolerance", "1e-9")
    check("a tiny tolerance keeps the site in fp32", "=fp32" in r.stdout, r.stdout)
    ctl("set", pid, "opt.audit_sample=4")
    check("get opt.audit_sample", ctl("get", pid, "opt.audit_sample").stdout.strip() == "4")
    r = ctl("set", pid, "opt.audit=sometimes", expect=1)
    check("bad audit mode says so", "'sometimes' is not 0, 1, follow or auto" in r.stderr, r.stderr)
    r = ctl("set", pid, "opt.audit_sample=0", expect=1)
    check("bad audit sample says so", "'0' is not a whole number" in r.stderr, r.stderr)
    ctl("set", pid, "opt.audit=0")
    expect_classes("opt.audit=0: bf16 results again", {n: "B" for n in names})

    gen = ctl("get", pid, "process.generation").stdout.strip()
    r = ctl("set", pid, "opt.colour=blue", expect=1)
    check("unknown name says so", "unknown name 'opt.colour'" in r.stderr, r.stderr)
    r = ctl("set", pid, "process.pid=1", expect=1)
    check("read-only name says so", "read-only" in r.stderr, r.stderr)
    r = ctl("set", pid, "opt.dtype=fp8", expect=1)
    check("bad value says so", "unknown dtype 'fp8'" in r.stderr, r.stderr)
    r = ctl("set", pid, "policy.cpu.mm=fast", expect=1)
    check("bad category says so", "'fast' is not" in r.stderr, r.stderr)
    r = ctl("set", pid, "policy.cpu.zz*=fp32", expect=1)
    check("a wildcard matching nothing says so", "'zz*' matches no op" in r.stderr, r.stderr)
    ctl("get", pid, "stats.cblas_sgemm.speed", expect=1)
    check("failed sets changed nothing", ctl("get", pid, "process.generation").stdout.strip() == gen)
    ctl("set", pid, expect=2)
    ctl("status", "notapid", expect=2)
    ctl("frobnicate", expect=2)

    stats = json.loads(ctl("--json", "stats", pid).stdout)
    sgemm = [s for s in stats["symbols"] if s["symbol"] == "cblas_sgemm"]
    check("stats count cblas_sgemm calls, lowered and not",
          sgemm and sgemm[0]["lowered"] > 0 and sgemm[0]["passthrough"] > 0, str(stats))
    ps = json.loads(ctl("--json", "ps").stdout)
    check("ps lists the process", any(str(p["pid"]) == pid and p["alive"] for p in ps), str(ps))
    check("... with its command line",
          any(str(p["pid"]) == pid and p["command"] == " ".join([program, status_file, stop_file])
              for p in ps), str(ps))
    table = ctl("ps").stdout.splitlines()
    check("ps's table: a command column, the process's line ends with its command line",
          table and table[0].split()[-1] == "command" and
          any(l.split()[0] == pid and l.endswith(" ".join([program, status_file, stop_file]))
              for l in table[1:]), "\n".join(table))
finally:
    open(stop_file, "w").close()
    proc.wait(timeout=30)
check("the program ran to its end", proc.returncode == 0, str(proc.returncode))
check("nothing is left in /dev/shm after exit",
      not any(n.startswith("ampshim") for n in os.listdir("/dev/shm")))
checker.finish()
