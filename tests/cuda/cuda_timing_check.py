"""GPU time per hooked call against the test-only fakes
(tests/cuda/cuda_timing_check.c: 256 cublasSgemm calls lowered, 256
pedantic cublasGemmEx calls as made, 256 cublasSgemm calls under stream
capture):

- with AMPSHIM_CUDA_TIMING_SAMPLE=4, every 4th call of the thread outside
  capture is timed: 64 Sgemm calls as lowered, 64 GemmEx calls as made (and
  the GemmEx calls ampctl's wait made), each with a positive time; none under
  capture, and no host wait during the calls;
- `ampctl --json stats` reads them back live (gpu_time), and the exit
  report prints them in its GPU time table;
- with AMPSHIM_CUDA_TIMING_SAMPLE=1 every call outside capture is timed,
  more than a device's 256 event pairs: passed pairs are reused;
- AMPSHIM_CUDA_TIMING=off times nothing, and a bad value warns and keeps
  the default.

- AMPSHIM_CUDA_TIMING=cupti (against the fake libcupti; "cupti" as the last
  argument): every call is timed from CUPTI's kernel records, exactly the
  fake's 1000 ns per kernel, read live by ampctl and at exit; with another
  CUPTI client holding it, one info line and events instead.

- with the toolkit's real libcupti (REAL_CUPTI, where there is one) on a
  machine without a driver: the program runs as usual and the shim says in
  one info line that CUPTI refused, then takes events.

usage: cuda_timing_check.py PROGRAM PRELOAD AMPCTL LIBRARY_PATH cupti|no-cupti [REAL_CUPTI]"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check import Checker  # noqa: E402  (tests/check.py)

checker = Checker("cuda_timing_check")
check = checker.check
program, preload, ampctl, libpath, cupti = sys.argv[1:6]
real_cupti = sys.argv[6] if len(sys.argv) > 6 else ""
work = tempfile.mkdtemp(prefix="cuda_timing_")
base = {k: v for k, v in os.environ.items() if not k.startswith("AMPSHIM_")}
base.update(LD_LIBRARY_PATH=libpath, AMPCTL=ampctl, LD_PRELOAD=preload, AMPSHIM_LOWER_MIN="0")


def run(env, *args):
    r = subprocess.run([program, *args], env=env, capture_output=True, text=True)
    check("exit status 0", r.returncode == 0, f"({r.returncode}: {r.stdout}{r.stderr})")
    return dict(line.split() for line in r.stdout.splitlines() if len(line.split()) == 2), r


stats_json, report = os.path.join(work, "stats.json"), os.path.join(work, "report.txt")
out, r = run(dict(base, AMPSHIM_CUDA_TIMING_SAMPLE="4", AMPSHIM_REPORT=report), stats_json)
check("no host wait during the calls", out.get("syncs") == "0", str(out))
check("no event recorded on a captured stream", out.get("events_in_capture") == "0", str(out))
with open(stats_json) as f:
    live = {g["symbol"]: g for g in json.load(f)["gpu_time"]}
gemm, ex = live.get("cublasSgemm_v2"), live.get("cublasGemmEx")
check("ampctl: Sgemm's 64 timed calls outside capture, all lowered, with time",
      gemm and gemm["timed_lowered"] == 64 and gemm["timed_made"] == 0 and gemm["ns_lowered"] > 0,
      str(gemm))
check("ampctl: GemmEx's timed calls as made, with time",
      ex and ex["timed_made"] >= 64 and ex["timed_lowered"] == 0 and ex["ns_made"] > 0, str(ex))
with open(report) as f:
    text = f.read()
rows = {}
for line in text[text.find("GPU time of the timed calls"):].splitlines()[2:]:
    p = line.split()
    if len(p) >= 5:
        rows[p[0]] = p
check("report: the GPU time table", "GPU time of the timed calls (every 4-th" in text, text)
check("report: Sgemm 64 timed lowered", rows.get("cublasSgemm_v2", [None, None])[1] == "64", str(rows))
check("report: GemmEx timed as made", "cublasGemmEx" in rows and int(rows["cublasGemmEx"][3]) >= 64,
      str(rows))

# Every call timed: more calls than a device's 256 pairs, so the pairs the
# GPU has passed are read back and reused without a wait.
every_json = os.path.join(work, "every.json")
out, _ = run(dict(base, AMPSHIM_CUDA_TIMING_SAMPLE="1"), every_json)
with open(every_json) as f:
    every = {g["symbol"]: g for g in json.load(f)["gpu_time"]}
check("sample 1: all 256 Sgemm calls outside capture timed (pairs reused)",
      every.get("cublasSgemm_v2", {}).get("timed_lowered") == 256, str(every))
check("sample 1: no host wait, nothing under capture",
      out.get("syncs") == "0" and out.get("events_in_capture") == "0", str(out))

off_report = os.path.join(work, "off.txt")
run(dict(base, AMPSHIM_CUDA_TIMING="off", AMPSHIM_REPORT=off_report))
with open(off_report) as f:
    check("off: no GPU time table", "GPU time" not in f.read())
bad_report = os.path.join(work, "bad.txt")
_, r = run(dict(base, AMPSHIM_CUDA_TIMING="sometimes", AMPSHIM_CUDA_TIMING_SAMPLE="4",
                AMPSHIM_REPORT=bad_report))
check("a bad value warns in one line", r.stderr.count("AMPSHIM_CUDA_TIMING") == 1, r.stderr)
with open(bad_report) as f:
    check("a bad value keeps the default (events)", "GPU time of the timed calls" in f.read())
if cupti == "cupti":
    cupti_json = os.path.join(work, "cupti.json")
    out, r = run(dict(base, AMPSHIM_CUDA_TIMING="cupti", CHECK_NO_CAPTURE="1", AMPSHIM_LOG="info"),
                 cupti_json)
    with open(cupti_json) as f:
        got = {g["symbol"]: g for g in json.load(f)["gpu_time"]}
    gemm, ex = got.get("cublasSgemm_v2", {}), got.get("cublasGemmEx", {})
    check("cupti: every Sgemm call timed, lowered, 1000 ns each",
          gemm.get("timed_lowered") == 256 and gemm.get("ns_lowered") == 256000 and
          not gemm.get("timed_made"), str(gemm))
    check("cupti: every GemmEx call timed as made, 1000 ns each",
          ex.get("timed_made", 0) >= 256 and ex.get("ns_made") == 1000 * ex.get("timed_made", 0) and
          not ex.get("timed_lowered"), str(ex))
    check("cupti: quiet when it works", "CUPTI" not in r.stderr, r.stderr)
    taken_json = os.path.join(work, "taken.json")
    _, r = run(dict(base, AMPSHIM_CUDA_TIMING="cupti", AMPSHIM_CUDA_TIMING_SAMPLE="4",
                    FAKE_CUPTI_TAKEN="1", CHECK_NO_CAPTURE="1", AMPSHIM_LOG="info"), taken_json)
    check("cupti taken: one info line", r.stderr.count("another CUPTI client") == 1, r.stderr)
    with open(taken_json) as f:
        got = {g["symbol"]: g for g in json.load(f)["gpu_time"]}
    check("cupti taken: events instead (every 4th call)",
          got.get("cublasSgemm_v2", {}).get("timed_lowered") == 64, str(got))
if real_cupti and os.path.exists(real_cupti):
    only = os.path.join(work, "real-cupti")
    os.mkdir(only)
    os.symlink(real_cupti, os.path.join(only, os.path.basename(real_cupti)))
    real_json = os.path.join(work, "real.json")
    _, r = run(dict(base, AMPSHIM_CUDA_TIMING="cupti", CHECK_NO_CAPTURE="1", AMPSHIM_LOG="info",
                    LD_LIBRARY_PATH=only + ":" + libpath), real_json)
    lines = [line for line in r.stderr.splitlines() if "CUPTI" in line]
    gpu = os.path.exists("/dev/nvidia0")
    check("real libcupti: without a driver, one info line and events; with one, quiet",
          (len(lines) == 0) if gpu else (len(lines) == 1 and "events" in lines[0]), r.stderr)
checker.finish()
