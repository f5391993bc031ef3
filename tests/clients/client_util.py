"""Shared by the client tests: compute reference results in a child process
without ampshim (LD_PRELOAD removed), compare bit for bit, count results."""
import ctypes
import os
import pickle
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check  # noqa: E402  (tests/check.py)


def shim_loaded():
    try:
        return bool(ctypes.CDLL(None).ampshim_version)
    except AttributeError:
        return False


def shim_stat(symbol, which):
    """One of the shim's counters in this process (stats.SYMBOL.WHICH), -1
    without the shim."""
    try:
        ctl = ctypes.CDLL(None).ampshim_ctl
    except AttributeError:
        return -1
    ctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                    ctypes.c_void_p, ctypes.c_size_t]
    v, n = ctypes.c_uint64(0), ctypes.c_size_t(8)
    return v.value if ctl(f"stats.{symbol}.{which}".encode(), ctypes.byref(v), ctypes.byref(n),
                          None, 0) == 0 else -1


def measure_child(script, arg, base, shim=True, **settings):
    """Runs `script --measure ARG` in a child with the environment base
    plus settings (without LD_PRELOAD when not shim); returns the Python
    literal its last line prints ({} when it failed, its stderr printed)
    and its stderr (the shim's report)."""
    import ast
    env = dict(base, **settings)
    if not shim:
        env.pop("LD_PRELOAD", None)
    r = subprocess.run([sys.executable, script, "--measure", str(arg)], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        print(r.stderr)
        return {}, r.stderr
    return ast.literal_eval(r.stdout.strip().splitlines()[-1]), r.stderr


def four_ways(ck, script, base, passthrough):
    """Runs `script --measure 0` (whose dict has the hash of every result
    under "all") without the shim, with AMPSHIM_ENABLE=0, with the policy
    `passthrough` and with the defaults (the report kept); checks the
    second and third are bit for bit the first. Returns (plain, default,
    report), or None when a mode did not run."""
    plain, _ = measure_child(script, 0, base, shim=False)
    disabled, _ = measure_child(script, 0, base, AMPSHIM_ENABLE="0")
    through, _ = measure_child(script, 0, base, AMPSHIM_POLICY=passthrough)
    default, report = measure_child(script, 0, base, AMPSHIM_REPORT="1")
    if not ck.check("every mode ran", plain and disabled and through and default):
        return None
    ck.check("AMPSHIM_ENABLE=0: bit for bit the run without the shim",
             disabled["all"] == plain["all"])
    ck.check("every op the work is, passthrough: bit for bit the run without the shim",
             through["all"] == plain["all"])
    return plain, default, report


def round_bf16(x):
    """fp32 array rounded to bf16 (round to nearest even), kept as fp32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return r.view(np.float32).reshape(np.shape(x))


def reference(script, mode):
    """Runs `script --reference` without the shim; returns its pickled dict."""
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
    out = subprocess.run([sys.executable, script, "--reference", mode], env=env,
                         check=True, stdout=subprocess.PIPE).stdout
    return pickle.loads(out)


def emit_reference(results):
    sys.stdout.buffer.write(pickle.dumps(results))


class Checker(check.Checker):
    """tests/check.py's, with comparisons of float32 results."""

    def same_bits(self, what, got, want):
        got = np.ascontiguousarray(got, dtype=np.float32)
        want = np.ascontiguousarray(want, dtype=np.float32)
        ok = got.shape == want.shape and np.array_equal(got.view(np.uint32), want.view(np.uint32))
        detail = "" if ok else f"max |diff| {np.abs(got.astype(np.float64) - want).max():.3g}"
        self.check(what, ok, detail)

    def differs(self, what, got, plain):
        self.check(what + " differs from plain fp32 (lowering happened)",
                   not np.array_equal(np.asarray(got), np.asarray(plain)))


def run_program(code, folder, preload, base, shim=True, **settings):
    """Writes code to FOLDER/program.py and runs it with this Python, in the
    environment base plus settings, with preload as LD_PRELOAD when shim;
    returns (stdout, stderr), both printed when it failed."""
    path = os.path.join(folder, "program.py")
    with open(path, "w") as f:
        f.write(code)
    env = dict(base, **settings)
    if shim:
        env["LD_PRELOAD"] = preload
    r = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-3000:])
    return r.stdout, r.stderr
