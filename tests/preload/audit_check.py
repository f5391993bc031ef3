"""The accuracy audit on tests/preload/audit_sites.c, three call sites of
cblas_sgemm lowered to fp16 (a well-scaled product, one whose A overflows
fp16, one that cancels). Checks, each against an independent computation or
a run without the audit:

- the audit ranks the sites overflows, cancels, well_scaled; its errors
  (read live with `ampctl --json audit`) equal the ones the program computes
  itself; flops shares, calls and audited counts are right;
- the generated policy (AMPSHIM_AUDIT_POLICY) keeps exactly the two bad sites
  in fp32, and a run with it lowers only the good one (the shim's counters),
  the bad sites' results then bit-identical to a run without the shim;
- the default audit leaves every result bit-identical to a run without the
  shim; AMPSHIM_AUDIT=follow gives the lowered results bit for bit;
- AMPSHIM_AUDIT_SAMPLE=2 audits calls 1 and 3 of each site, the others run
  as made (follow: lowered);
- bad settings warn once and keep the defaults; AMPSHIM_STRICT=1 exits 2.

usage: audit_check.py AUDIT_SITES PRELOAD AMPCTL"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

checker = Checker("audit_check")
check = checker.check
program, preload, ampctl = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="audit_check_")
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
# The audit of small products: the size rule off (AMPSHIM_LOWER_MIN=0).
base.update(OPENBLAS_NUM_THREADS="1", AUDIT_DTYPE="fp16", AMPCTL=ampctl, AMPSHIM_LOWER_MIN="0")
# The audit measures what lowering does; "cancels" is built from values whose
# differences lie below fp16's resolution, which the spread check would keep
# as made before the audit saw them (tests/clients/spread_check.py tests that).
shim = dict(base, LD_PRELOAD=preload, AMPSHIM_CPU_DTYPE="fp16", AMPSHIM_CPU_KERNEL="emulate",
            AMPSHIM_SPREAD_LOSS="off")


def run(env, *args, expect=0):
    r = subprocess.run([program, *args], env=env, capture_output=True, text=True)
    check(f"exit status {expect}", r.returncode == expect, f"(got {r.returncode}: {r.stdout}{r.stderr})")
    sites = {}
    for line in r.stdout.splitlines():
        p = line.split()
        if p and p[0] == "site":
            sites[p[1]] = dict(zip(p[2::2], p[3::2]))
    return sites, r


def close(a, b, rel=1e-5):
    return (math.isinf(a) and math.isinf(b)) or abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


plain, _ = run(base)
lowered, _ = run(shim)
check("the sites ran", set(plain) == {"well_scaled", "overflows", "cancels"}, str(plain))
check("lowering changes every site's result",
      all(plain[s]["hash"] != lowered[s]["hash"] for s in plain), f"{plain} {lowered}")

# The audit, read live by ampctl, and its policy.
report_json, policy = os.path.join(work, "audit.json"), os.path.join(work, "audit.policy")
audited, r = run(dict(shim, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_POLICY=policy), report_json)
check("default audit: results bit-identical to a run without the shim",
      all(audited[s]["hash"] == plain[s]["hash"] for s in plain), f"{audited} {plain}")
check("the exit report names the sites", all(f"audit_sites:{s}" in r.stderr for s in plain), r.stderr)
with open(report_json) as f:
    report = json.load(f)
sites = report["sites"]
check("three sites", len(sites) == 3, str(sites))
check("ranked overflows, cancels, well_scaled",
      [s["function"] for s in sites] == ["overflows", "cancels", "well_scaled"],
      str([s["function"] for s in sites]))
for s in sites:
    want = audited[s["function"]]
    err = float(want["err"])
    got = s["err_max"] if s["err_max"] is not None else math.inf
    check(f"{s['function']}: err_max {got} is the program's own {err}", close(got, err))
    check(f"{s['function']}: err_mean equals err_max (same data each call)",
          s["err_mean"] == s["err_max"], str(s))
    check(f"{s['function']}: elem_max {s['elem_max']} is the program's {want['elem']}",
          close(s["elem_max"], float(want["elem"])))
    check(f"{s['function']}: Inf/NaN elements", s["nonfinite_elems"] == 3 * int(want["nonfinite"]), str(s))
    check(f"{s['function']}: object, symbol, dtype", s["object"] == "audit_sites" and
          s["symbol"] == "cblas_sgemm" and s["dtype"] == "fp16", str(s))
    check(f"{s['function']}: 3 calls, 3 audited", s["calls"] == 3 and s["audited"] == 3, str(s))
    share = {"cancels": 0.5}.get(s["function"], 0.25)  # cancels has k = 128
    check(f"{s['function']}: flops share {share}", abs(s["flops_share"] - share) < 1e-4, str(s))
    check(f"{s['function']}: histogram counts 3 calls", sum(s["histogram"]) == 3, str(s))
check("the bad sites are marked fp32",
      [s["keep_fp32"] for s in sites] == [True, True, False], str(sites))

with open(policy) as f:
    entries = [line.split("#")[0].strip() for line in f if line.split("#")[0].strip()]
check("the policy keeps exactly the bad sites in fp32", sorted(entries) == sorted([
    "cpu:cblas_sgemm@audit_sites:overflows=fp32",
    "cpu:cblas_sgemm@audit_sites:cancels=fp32",
    "cpu:cblas_sgemm@audit_sites:well_scaled=lower"]), str(entries))

# ampctl policy --explain lists the call-site entries of the environment.
r = subprocess.run([ampctl, "policy", "--explain", "cblas_sgemm"], capture_output=True, text=True,
                   env=dict(base, AMPSHIM_POLICY_FILE=policy))
check("ampctl policy --explain lists the call-site entries",
      all(f"cpu:cblas_sgemm@audit_sites:{s}=" in r.stdout for s in plain), r.stdout)

# A run with that policy lowers only the good site.
with_policy, r = run(dict(shim, AMPSHIM_POLICY_FILE=policy))
check("policy run: quiet", r.stderr == "", r.stderr)
check("policy run: well_scaled lowered",
      with_policy["well_scaled"]["lowered"] == "3" and with_policy["well_scaled"]["fp32"] == "0" and
      with_policy["well_scaled"]["hash"] == lowered["well_scaled"]["hash"], str(with_policy))
for s in ("overflows", "cancels"):
    check(f"policy run: {s} in fp32, as without the shim",
          with_policy[s]["lowered"] == "0" and with_policy[s]["fp32"] == "3" and
          with_policy[s]["hash"] == plain[s]["hash"], str(with_policy))

# follow: the program continues with the lowered results.
follow, _ = run(dict(shim, AMPSHIM_AUDIT="follow"))
check("follow: results bit-identical to the lowered run",
      all(follow[s]["hash"] == lowered[s]["hash"] for s in plain), f"{follow} {lowered}")

# Sampling: every 2nd call of a site (calls 1 and 3); the others run as made
# (with follow: lowered), so the results stay those of the mode.
sampled_run, _ = run(dict(shim, AMPSHIM_AUDIT="1", AMPSHIM_AUDIT_SAMPLE="2"), report_json)
check("sample 2: results bit-identical to a run without the shim",
      all(sampled_run[s]["hash"] == plain[s]["hash"] for s in plain), str(sampled_run))
sampled_follow, _ = run(dict(shim, AMPSHIM_AUDIT="follow", AMPSHIM_AUDIT_SAMPLE="2"))
check("sample 2, follow: results bit-identical to the lowered run",
      all(sampled_follow[s]["hash"] == lowered[s]["hash"] for s in plain), str(sampled_follow))
with open(report_json) as f:
    sampled = json.load(f)["sites"]
check("sample 2: 3 calls, 2 audited per site",
      all(s["calls"] == 3 and s["audited"] == 2 for s in sampled) and len(sampled) == 3, str(sampled))

# With the audit off no site is recorded and no audit report printed.
off, r = run(shim, report_json)
with open(report_json) as f:
    check("audit off: no site recorded", json.load(f)["sites"] == [])
check("audit off: no report", "ampshim audit" not in r.stderr, r.stderr)

# Bad settings: one warning each, defaults kept; STRICT stops the run.
for var, value, message in [
        ("AMPSHIM_AUDIT", "maybe", "AMPSHIM_AUDIT: 'maybe' is not 0, 1, follow or auto; using off"),
        ("AMPSHIM_AUDIT_SAMPLE", "0", "AMPSHIM_AUDIT_SAMPLE: '0' is not a whole number"),
        ("AMPSHIM_AUDIT_TOLERANCE", "-1", "AMPSHIM_AUDIT_TOLERANCE: '-1' is not a positive number"),
        ("AMPSHIM_AUDIT_POLICY", "out.policy", "AMPSHIM_AUDIT_POLICY: 'out.policy' is not a path")]:
    got, r = run(dict(shim, **{var: value}))
    lines = [line for line in r.stderr.splitlines() if line]
    check(f"{var}={value}: one warning", len(lines) == 1 and message in lines[0], r.stderr)
    check(f"{var}={value}: results as with the defaults",
          all(got[s]["hash"] == lowered[s]["hash"] for s in plain), str(got))
    run(dict(shim, AMPSHIM_STRICT="1", **{var: value}), expect=2)

checker.finish()
