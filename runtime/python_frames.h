/* The calling thread's Python frames, read in place while the thread may
 * not hold the GIL (numpy and torch release it around BLAS calls): which
 * code object each frame runs and where, for the call-site walk
 * (runtime/sites.c). Layouts are known per CPython minor version (3.9 to
 * 3.13, checked against each version's own headers by
 * tests/unit/python_layouts.sh); any other interpreter reads as none.
 * docs/architecture.md, "Reading Python frames", says why this cannot
 * crash or deadlock the program. */
#ifndef AMPSHIM_PYTHON_FRAMES_H
#define AMPSHIM_PYTHON_FRAMES_H

#include <stddef.h>
#include <stdint.h>

/* One frame: its code object (identity only: never freed while the frame
 * runs) and the instruction it is at. */
struct amp_py_frame {
    const void *code;
    const void *instr;
};

enum amp_py_state {
    AMP_PY_NONE,     /* no Python interpreter in this process */
    AMP_PY_READABLE, /* an interpreter whose frames ampshim reads */
    AMP_PY_UNPROVEN, /* an interpreter ampshim has no proven layout for */
};

/* Whether this process runs a Python interpreter and whether its frames
 * can be read; *version gets 0xMMmm (0x030b for 3.11) when known. Asked
 * once (dlsym), then one load. */
enum amp_py_state amp_py_state(unsigned *version);

/* The calling thread's Python frames, innermost first, at most max; the
 * number read (0: none, or no readable interpreter). Reads only this
 * thread's own frames; never allocates, locks or runs Python code. */
int amp_py_frames(struct amp_py_frame *out, int max);

/* A frame's names: file (co_filename), function (co_qualname; co_name
 * before 3.11) as UTF-8 into the buffers (cut to them, NUL-terminated),
 * and its line. Strings in a form ampshim cannot read come out as "?". */
struct amp_py_names {
    char file[512];
    char function[256];
    int line;
};
void amp_py_frame_names(const struct amp_py_frame *f, struct amp_py_names *n);

/* The same code object's file and function only (no line): what the
 * walk's per-code cache keeps. */
void amp_py_code_names(const void *code, struct amp_py_names *n);

/* The module a file belongs to, from its path: the part after the last
 * site-packages/, dist-packages/ or lib/pythonX.Y/ folder, with '/' as '.'
 * and the .py dropped ("scipy/linalg/_matfuncs.py" -> "scipy.linalg._matfuncs";
 * "/home/u/kmeans.py" -> "kmeans"). */
void amp_py_module_of(const char *file, char *module, size_t size);

#endif
