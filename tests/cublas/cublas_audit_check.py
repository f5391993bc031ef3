"""The accuracy audit of cuBLAS calls against the test-only fakes
(tests/cublas/cublas_audit_sites.c: cublasSgemm from three call sites of
different conditioning and cublasGemmEx from a fourth, lowered to fp16):

- errors read live with `ampctl --json audit` (the process reads its device
  results back on ampctl's request) equal the program's own computation
  with the fake, the sites ranked overflows, cancels, then the two
  well-scaled ones; on_device, no elementwise error;
- no call that makes the host wait during the audited calls, and every
  scratch buffer given back (each site's result array is kept);
- the default audit leaves C as the program's own call makes it; follow
  leaves the lowered product;
- the generated policy keeps exactly the two bad sites in fp32, and a run
  with it lowers only the good ones;
- a site called on two devices keeps each device's norms on that device,
  written by a handle of that device (the fake cuBLAS sees no call touch
  another device's memory), and the audit still finds the same errors;
- a graph another stream captures in the default global mode all along
  (from before the first audited call until after ampctl read the results
  back) is not invalidated, and the results are read back all the same.

usage: cublas_audit_check.py PROGRAM PRELOAD AMPCTL LIBRARY_PATH"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

checker = Checker("cublas_audit_check")
check = checker.check
program, preload, ampctl, libpath = sys.argv[1:5]
work = tempfile.mkdtemp(prefix="cublas_audit_")
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
# The audit of small products: the size rule off (AMPSHIM_LOWER_MIN=0).
base.update(LD_LIBRARY_PATH=libpath, AMPCTL=ampctl, AMPSHIM_LOWER_MIN="0")
shim = dict(base, LD_PRELOAD=preload, AMPSHIM_CUDA_DTYPE="fp16")


def audit_json(path):
    with open(path) as f:
        return {s["function"]: s for s in json.load(f)["sites"]}


def same_errors(label, got, want):
    """Each site of got (ampctl's JSON) has want's (the program's) error
    and 3 audited calls."""
    for name, w in want.items():
        s = got.get(name)
        err = float(w["err"])
        e = s and (s["err_max"] if s["err_max"] is not None else math.inf)
        ok = s is not None and s["audited"] == 3 and (
            (math.isinf(e) and math.isinf(err)) or abs(e - err) <= 1e-4 * max(err, 1e-30))
        check(f"{label}: {name} audited 3 times, err {e} is the program's {err}", ok, str(s))


def run(env, *args):
    r = subprocess.run([program, *args], env=env, capture_output=True, text=True)
    check("exit status 0", r.returncode == 0, f"({r.returncode}: {r.stdout}{r.stderr})")
    sites, other = {}, {}
    for line in r.stdout.splitlines():
        p = line.split()
        if p and p[0] == "site":
            sites[p[1]] = dict(zip(p[2::2], p[3::2]))
        elif len(p) == 2:
            other[p[0]] = p[1]
    return sites, other, r


# AMPSHIM_AUDIT=auto, probation 2: each site's verdicts are read back as
# soon as the (fake) device has them (an event query at its next call): the
# well-scaled sites run their third call lowered, the bad ones stay fp32
# from their first audit.
auto, other, r = run(dict(shim, AMPSHIM_AUDIT="auto", AMPSHIM_AUDIT_PROBATION="2",
                          AMPSHIM_REPORT="/dev/null"))
for s in sorted(auto):
    want = "low" if s in ("well_scaled", "ex_site") else "made"
    check(f"auto: {s}'s last call {'lowered' if want == 'low' else 'fp32'}",
          auto[s]["hash"] == auto[s][want], str(auto[s]))
# The only waits: the read stream's, after an event query said a site's
# norms were there (one per site that changed its state here: 4 sites, one
# read-back each before its decision).
check("auto: a read-back only of norms already computed", int(other.get("syncs", "99")) <= 4,
      str(other))

report_json, policy = os.path.join(work, "audit.json"), os.path.join(work, "audit.policy")
audited, other, r = run(dict(shim, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_POLICY=policy), report_json)
names = {"well_scaled", "overflows", "cancels", "ex_site"}
check("four sites ran", set(audited) == names, str(audited))
check("default audit: C is the program's own product",
      all(audited[s]["hash"] == audited[s]["made"] for s in audited), str(audited))
check("lowering changes every site's product",
      all(audited[s]["low"] != audited[s]["made"] for s in audited), str(audited))
check("no host synchronisation during the audited calls", other.get("syncs") == "0", str(other))
# What stays: each site's result array (one per site and device, kept for
# the process); every call's scratch is given back.
check("every scratch buffer given back, the four sites' arrays kept",
      other.get("outstanding") == "4", str(other))
with open(report_json) as f:
    sites = json.load(f)["sites"]
order = [s["function"] for s in sites]
check("ranked overflows, cancels, then the well-scaled sites",
      order[:2] == ["overflows", "cancels"] and set(order[2:]) == {"well_scaled", "ex_site"}, str(order))
for s in sites:
    want = audited[s["function"]]
    err = float(want["err"])
    got = s["err_max"] if s["err_max"] is not None else math.inf
    ok = (math.isinf(got) and math.isinf(err)) or abs(got - err) <= 1e-4 * max(err, 1e-30)
    check(f"{s['function']}: err_max {got} is the program's own {err}", ok)
    check(f"{s['function']}: 3 calls, 3 audited, on the device, no elementwise error",
          s["calls"] == 3 and s["audited"] == 3 and s["on_device"] and s["elem_max"] is None, str(s))
    check(f"{s['function']}: Inf/NaN calls", s["nonfinite_calls"] == (3 if want["nonfinite"] == "1" else 0), str(s))
    check(f"{s['function']}: symbol and dtype", s["symbol"] ==
          ("cublasGemmEx" if s["function"] == "ex_site" else "cublasSgemm_v2") and
          s["dtype"] == "fp16" and s["device"] == "cuda", str(s))
check("exit report printed", "ampshim audit, pid" in r.stderr, r.stderr)

with open(policy) as f:
    entries = sorted(line.split("#")[0].strip() for line in f if line.split("#")[0].strip())
check("the policy keeps exactly the bad sites in fp32", entries == sorted([
    "cuda:cublasSgemm_v2@cublas_audit_sites:overflows=fp32",
    "cuda:cublasSgemm_v2@cublas_audit_sites:cancels=fp32",
    "cuda:cublasSgemm_v2@cublas_audit_sites:well_scaled=lower",
    "cuda:cublasGemmEx@cublas_audit_sites:ex_site=lower"]), str(entries))

follow, _, _ = run(dict(shim, AMPSHIM_AUDIT="follow"))
check("follow: C is the lowered product", all(follow[s]["hash"] == follow[s]["low"] for s in follow),
      str(follow))
with_policy, _, r = run(dict(shim, AMPSHIM_POLICY_FILE=policy))
check("policy run: quiet", r.stderr == "", r.stderr)
for s in names:
    want = "made" if s in ("overflows", "cancels") else "low"
    check(f"policy run: {s} is {want}", with_policy[s]["hash"] == with_policy[s][want], str(with_policy[s]))
sampled, other, _ = run(dict(shim, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_SAMPLE="2"))
check("sample 2: C is still the program's own product",
      all(sampled[s]["hash"] == sampled[s]["made"] for s in sampled), str(sampled))
two_json = os.path.join(work, "two.json")
two, other, _ = run(dict(shim, AMPSHIM_AUDIT="1"), "--devices", two_json)
check("two devices: no call touched another device's memory", other.get("cross_device") == "0",
      str(other))
check("two devices: C is the program's own product", all(two[s]["hash"] == two[s]["made"] for s in two),
      str(two))
same_errors("two devices", audit_json(two_json), two)

cap_json = os.path.join(work, "capture.json")
cap, other, _ = run(dict(shim, AMPSHIM_AUDIT="1"), "--capture", cap_json)
check("capture: the program's capture survives the audit and its read-back",
      other.get("capture_invalidated") == "0" and other.get("capture_ended") == "1", str(other))
same_errors("capture", audit_json(cap_json), cap)
checker.finish()
