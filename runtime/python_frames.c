/* Reads the calling thread's CPython frames in place (see python_frames.h).
 * Every offset below is one CPython minor version's own layout, and
 * tests/unit/python_layouts.sh compiles each version's headers to check
 * them. Only the calling thread's frames are read: the thread is inside
 * this call, so none of its frames can be popped or freed meanwhile, and
 * no other thread writes them; nothing here allocates, takes a lock or
 * runs Python code. */
#include "runtime/python_frames.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* How a version keeps its frames. */
enum frame_model {
    FRAMES_OBJECTS, /* 3.9, 3.10: PyFrameObject chain from tstate->frame */
    FRAMES_CFRAME,  /* 3.11, 3.12: tstate->cframe->current_frame */
    FRAMES_TSTATE,  /* 3.13: tstate->current_frame */
};

struct layout {
    unsigned version; /* 0xMMmm */
    enum frame_model model;
    unsigned ts_frame;       /* tstate -> frame, cframe or current_frame */
    unsigned cframe_current; /* cframe -> current frame (FRAMES_CFRAME) */
    unsigned frame_code, frame_previous, frame_instr, frame_owner; /* owner: 0 when none */
    unsigned lasti_scale; /* FRAMES_OBJECTS: bytes per f_lasti unit */
    unsigned code_filename, code_name, code_firsttraceable, code_adaptive;
    unsigned ascii_size, compact_size; /* sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) */
};

/* PyObject_HEAD: ob_refcnt, ob_type (the default build). */
enum { OB_TYPE = 8, STR_LENGTH = 16, STR_STATE = 32 };
enum { OWNED_BY_GENERATOR = 1, OWNED_BY_CSTACK = 3 };

static const struct layout layouts[] = {
    {0x0309, FRAMES_OBJECTS, 24, 0, 32, 24, 104, 0, 1, 104, 112, 0, 0, 48, 72},
    {0x030a, FRAMES_OBJECTS, 24, 0, 32, 24, 96, 0, 2, 104, 112, 0, 0, 48, 72},
    {0x030b, FRAMES_CFRAME, 56, 8, 32, 48, 56, 69, 0, 112, 128, 168, 184, 48, 72},
    {0x030c, FRAMES_CFRAME, 56, 0, 0, 8, 56, 70, 0, 112, 128, 176, 192, 40, 56},
    {0x030d, FRAMES_TSTATE, 72, 0, 0, 8, 56, 70, 0, 112, 128, 184, 200, 40, 56},
};

/* What the interpreter exports that the reader calls: each a pure read
 * in every version above (a thread-specific-storage get, a flag, a walk
 * of the code object's line table). */
static struct {
    const struct layout *layout;
    void *(*this_thread_state)(void);    /* PyGILState_GetThisThreadState */
    int (*finalizing)(void);             /* _Py_IsFinalizing / Py_IsFinalizing */
    int (*addr2line)(const void *, int); /* PyCode_Addr2Line */
    const void *code_type, *unicode_type;
    unsigned version;
    enum amp_py_state state;
} py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;

static void py_init(void)
{
    py.state = AMP_PY_NONE;
    void *tstate_fn = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    if (!tstate_fn)
        return;
    py.state = AMP_PY_UNPROVEN;
    /* Py_Version (3.11+), else the interpreter's file name (python3.N). A
     * free-threaded build (python3.13t) has another object header: none of
     * the layouts below. */
    const unsigned long *hex = dlsym(RTLD_DEFAULT, "Py_Version");
    Dl_info info;
    unsigned named = 0;
    int free_threaded = 0;
    if (dladdr(tstate_fn, &info) && info.dli_fname) {
        const char *p = strstr(info.dli_fname, "python3.");
        if (p && p[8] >= '0' && p[8] <= '9') {
            const char *d = p + 8;
            while (*d >= '0' && *d <= '9')
                named = named * 10 + (unsigned)(*d++ - '0');
            named |= 0x0300;
            free_threaded = *d == 't';
        }
    }
    py.version = hex ? (unsigned)(*hex >> 16) : named;
    if (free_threaded)
        return;
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (layouts[i].version == py.version)
            py.layout = &layouts[i];
    py.this_thread_state = (void *(*)(void))tstate_fn;
    py.finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
    if (!py.finalizing)
        py.finalizing = (int (*)(void))dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    py.addr2line = (int (*)(const void *, int))dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
    py.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    py.unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    if (py.layout && py.finalizing && py.addr2line && py.code_type && py.unicode_type)
        py.state = AMP_PY_READABLE;
}

enum amp_py_state amp_py_state(unsigned *version)
{
    pthread_once(&py_once, py_init);
    if (version)
        *version = py.version;
    return py.state;
}

static inline const void *load_ptr(const void *base, unsigned offset)
{
    const void *p;
    memcpy(&p, (const char *)base + offset, sizeof p);
    return p;
}

static inline int is_code(const void *code)
{
    return code && load_ptr(code, OB_TYPE) == py.code_type;
}

/* The current frame of the thread state: a PyFrameObject (3.9, 3.10) or an
 * _PyInterpreterFrame. */
static const void *current_frame(const void *tstate)
{
    const struct layout *l = py.layout;
    if (l->model != FRAMES_CFRAME)
        return load_ptr(tstate, l->ts_frame);
    const void *cframe = load_ptr(tstate, l->ts_frame);
    return cframe ? load_ptr(cframe, l->cframe_current) : NULL;
}

int amp_py_frames(struct amp_py_frame *out, int max)
{
    if (amp_py_state(NULL) != AMP_PY_READABLE || py.finalizing())
        return 0;
    const struct layout *l = py.layout;
    const void *tstate = py.this_thread_state();
    if (!tstate)
        return 0;
    int n = 0;
    /* Bounded twice: by max frames kept and by a walk of at most 256 (a
     * deep recursion's innermost frames are the ones that count). */
    const void *f = current_frame(tstate);
    for (int steps = 0; f && n < max && steps < 256; steps++, f = load_ptr(f, l->frame_previous)) {
        const void *code = load_ptr(f, l->frame_code);
        if (!is_code(code))
            continue;
        const void *instr;
        if (l->model == FRAMES_OBJECTS) {
            int lasti;
            memcpy(&lasti, (const char *)f + l->frame_instr, sizeof lasti);
            instr = (const void *)(intptr_t)((long)lasti * (long)l->lasti_scale);
        } else {
            uint8_t owner = *((const uint8_t *)f + l->frame_owner);
            instr = load_ptr(f, l->frame_instr);
            int first;
            memcpy(&first, (const char *)code + l->code_firsttraceable, sizeof first);
            const char *start = (const char *)code + l->code_adaptive;
            /* A frame still being set up (before its first RESUME), or a C
             * entry frame, is no program frame. */
            if (owner == OWNED_BY_CSTACK ||
                (owner != OWNED_BY_GENERATOR && (const char *)instr < start + 2 * first))
                continue;
            instr = (const void *)((const char *)instr - start); /* byte offset */
        }
        out[n].code = code;
        out[n].instr = instr;
        n++;
    }
    return n;
}

/* A str object's text as UTF-8 into buf, cut at a whole character where
 * it does not fit; "?" for a form not read here (not compact). */
static void unicode_utf8(const void *s, char *buf, size_t size)
{
    const struct layout *l = py.layout;
    snprintf(buf, size, "?");
    if (!s || load_ptr(s, OB_TYPE) != py.unicode_type)
        return;
    uint32_t state;
    int64_t length;
    memcpy(&state, (const char *)s + STR_STATE, sizeof state);
    memcpy(&length, (const char *)s + STR_LENGTH, sizeof length);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || (kind != 1 && kind != 2 && kind != 4) || length < 0)
        return;
    const uint8_t *data = (const uint8_t *)s + (ascii ? l->ascii_size : l->compact_size);
    size_t out = 0;
    for (int64_t i = 0; i < length; i++) {
        uint32_t c = kind == 1   ? data[i]
                     : kind == 2 ? ((const uint16_t *)(const void *)data)[i]
                                 : ((const uint32_t *)(const void *)data)[i];
        /* the encoding's length, and its first byte's marker */
        size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        static const uint8_t lead[5] = {0, 0x00, 0xc0, 0xe0, 0xf0};
        if (out + k >= size)
            break;
        for (size_t j = k; j-- > 1; c >>= 6)
            buf[out + j] = (char)(0x80 | (c & 0x3f));
        buf[out] = (char)(lead[k] | c);
        out += k;
    }
    buf[out] = '\0';
}

void amp_py_code_names(const void *code, struct amp_py_names *n)
{
    const struct layout *l = py.layout;
    n->line = 0;
    snprintf(n->file, sizeof n->file, "?");
    snprintf(n->function, sizeof n->function, "?");
    if (!l || !is_code(code))
        return;
    unicode_utf8(load_ptr(code, l->code_filename), n->file, sizeof n->file);
    unicode_utf8(load_ptr(code, l->code_name), n->function, sizeof n->function);
}

void amp_py_frame_names(const struct amp_py_frame *f, struct amp_py_names *n)
{
    amp_py_code_names(f->code, n);
    if (py.layout && is_code(f->code))
        n->line = py.addr2line(f->code, (int)(intptr_t)f->instr);
}

void amp_py_module_of(const char *file, char *module, size_t size)
{
    const char *start = file, *p;
    static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
    for (size_t r = 0; r < 2; r++)
        for (p = strstr(file, roots[r]); p; p = strstr(p + 1, roots[r]))
            start = start < p + strlen(roots[r]) ? p + strlen(roots[r]) : start;
    if (start == file) {
        /* the standard library: .../lib/python3.X/ */
        for (p = strstr(file, "/lib/python"); p; p = strstr(p + 1, "/lib/python")) {
            const char *slash = strchr(p + 11, '/');
            if (slash)
                start = slash + 1;
        }
        if (start == file) {
            const char *slash = strrchr(file, '/');
            start = slash ? slash + 1 : file;
        }
    }
    size_t n = 0;
    for (p = start; *p && n + 1 < size; p++)
        module[n++] = *p == '/' ? '.' : *p;
    module[n] = '\0';
    size_t len = strlen(module);
    if (len > 3 && strcmp(module + len - 3, ".py") == 0)
        module[len - 3] = '\0';
    len = strlen(module);
    if (len > 9 && strcmp(module + len - 9, ".__init__") == 0)
        module[len - 9] = '\0';
}
