"""Shared by the Python benchmarks: the CPU line every table is printed
with, and the shim's counters read in the benchmark's own process."""
import ctypes
import os


def cpu_line(flags=("avx512f", "avx512_bf16", "amx_bf16", "avx512_fp16")):
    """The CPU model, its logical cores and whether it has each flag."""
    with open("/proc/cpuinfo") as f:
        info = f.read().splitlines()
    model = next((l.split(":", 1)[1].strip() for l in info if l.startswith("model name")), "?")
    have = next((l for l in info if l.startswith("flags")), "")
    return (f"CPU: {model}, {os.cpu_count()} logical cores; "
            + ", ".join(f"{x} {'yes' if ' ' + x in have else 'no'}" for x in flags))


def plain_env():
    """This process's environment without the shim and its settings, with
    one OpenBLAS thread: what each column of a side-by-side run starts from."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("AMPSHIM_")}
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def shim_counter(name):
    """One of ampshim's counters by its control name ("stats.SYMBOL.lowered"),
    or None without the shim."""
    try:
        ctl = ctypes.CDLL(None).ampshim_ctl
    except AttributeError:
        return None
    ctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                    ctypes.c_void_p, ctypes.c_size_t]
    v, n = ctypes.c_uint64(0), ctypes.c_size_t(8)
    return v.value if ctl(name.encode(), ctypes.byref(v), ctypes.byref(n), None, 0) == 0 else 0
