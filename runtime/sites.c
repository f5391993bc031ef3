/* The one call-site map (see sites.h): the walk from a hook's return
 * address to the program's own frame, the op around the product, and the
 * sites keyed by full names. Answers that never change while code is
 * loaded are cached: per native return address (is it a framework's? an
 * fp32-list op's frame?), per Python code object (a framework's? an op?),
 * and per thread the last call's site, so a loop's calls from one line
 * read a few words and take no lock. */
#include "runtime/sites.h"

#include <dlfcn.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "loader/loader.h"
#include "runtime/addr_cache.h"
#include "runtime/python_frames.h"
#include "runtime/threads.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull ^ (h >> 29);
}

/* ---- the data: frameworks and op frames ---- */

static const char *const framework_glob[] = {
#define AMP_X_FRAMEWORK(glob, what) glob,
    AMPSHIM_FRAMEWORK_LIST(AMP_X_FRAMEWORK)
#undef AMP_X_FRAMEWORK
};
enum { FRAMEWORKS = sizeof framework_glob / sizeof *framework_glob };

static const struct {
    const char *glob;
    int op;
} op_frame[] = {
#define AMP_X_OP_FRAME(glob, op) {glob, AMP_OP_##op},
    AMPSHIM_OP_FRAME_LIST(AMP_X_OP_FRAME)
#undef AMP_X_OP_FRAME
};
enum { OP_FRAMES = sizeof op_frame / sizeof *op_frame };

/* Whether a Python module is a framework's: a py:MODULE row names the
 * module and its submodules. */
static int module_is_framework(const char *module)
{
    for (int i = 0; i < FRAMEWORKS; i++) {
        const char *g = framework_glob[i];
        if (strncmp(g, "py:", 3) != 0)
            continue;
        g += 3;
        size_t n = strlen(g);
        if (fnmatch(g, module, 0) == 0 || (strncmp(module, g, n) == 0 && module[n] == '.'))
            return 1;
    }
    return 0;
}

static int object_is_framework(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    const char *base = slash ? slash + 1 : path;
    if (!base || !*base)
        return 0;
    for (int i = 0; i < FRAMEWORKS; i++)
        if (strncmp(framework_glob[i], "py:", 3) != 0 && fnmatch(framework_glob[i], base, 0) == 0)
            return 1;
    return 0;
}

/* The interpreter's own objects: where a native walk in a Python process
 * hands over to the Python frames. */
static int object_is_interpreter(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    const char *base = slash ? slash + 1 : path;
    return base && (strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0);
}

/* An op of the CPU fp32 or lower-precision list by name, or -1. */
static int listed_op(const char *name, size_t len)
{
    char op[64];
    if (len == 0 || len >= sizeof op)
        return -1;
    memcpy(op, name, len);
    op[len] = '\0';
    int o = amp_op_from_name(op);
    if (o < 0)
        return -1;
    uint8_t cat = amp_policy_default[AMP_DEVICE_CPU][o];
    return cat == AMP_CAT_FP32 || cat == AMP_CAT_LOWER ? o : -1;
}

/* Notes an op frame met on the walk: the innermost fp32-list op is the op
 * around the product, the innermost lower-list op its autocast op. */
static void note_op(struct amp_site *f, int op)
{
    if (op < 0)
        return;
    int16_t *slot =
        amp_policy_default[AMP_DEVICE_CPU][op] == AMP_CAT_FP32 ? &f->op_around : &f->autocast_op;
    if (*slot < 0)
        *slot = (int16_t)op;
}

/* PyTorch's native ops by their mangled names: at::_ops::OP::... (the
 * dispatcher's entry) and at::native::OP(...) (the kernel). */
static int torch_op_of(const char *sym)
{
    static const char *const prefix[] = {"_ZN2at4_ops", "_ZN2at6native"};
    for (int i = 0; sym && i < 2; i++) {
        size_t n = strlen(prefix[i]);
        if (strncmp(sym, prefix[i], n) != 0)
            continue;
        char *end;
        long len = strtol(sym + n, &end, 10);
        if (len > 0 && (size_t)len <= strlen(end))
            return listed_op(end, (size_t)len);
    }
    return -1;
}

/* ---- native frames: one answer per return address ---- */

enum { ADDR_FRAMEWORK = 1, ADDR_INTERPRETER = 2, ADDR_OP_SHIFT = 2, ADDR_CACHE = 4096 };
/* (op + 1) << 2 | interpreter | framework, by frame address
 * (runtime/addr_cache.h) */
AMP_ADDR_CACHE(addr_cache, ADDR_CACHE, 12);

static unsigned addr_info(void *address)
{
    int64_t known = amp_addr_cache_get(&addr_cache, address);
    if (known >= 0)
        return (unsigned)known;
    Dl_info info;
    unsigned answer = 0;
    if (dladdr(address, &info) && info.dli_fname) {
        if (object_is_framework(info.dli_fname))
            answer |= ADDR_FRAMEWORK;
        if (object_is_interpreter(info.dli_fname))
            answer |= ADDR_INTERPRETER | ADDR_FRAMEWORK;
        int op = torch_op_of(info.dli_sname);
        if (op >= 0 && op < 1023)
            answer |= (unsigned)(op + 1) << ADDR_OP_SHIFT;
    }
    return (unsigned)amp_addr_cache_put(&addr_cache, address, answer);
}

struct unwind_state {
    void *frames[64];
    int n;
};

static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
    struct unwind_state *u = arg;
    if (u->n >= 64)
        return _URC_END_OF_STACK;
    u->frames[u->n++] = (void *)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}

/* ---- Python code objects: one answer per code object ---- */

enum { CODE_CACHE = 2048 };
static struct code_answer {
    const void *code;
    uint8_t framework;
    int16_t op;
} code_cache[CODE_CACHE];
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;

static struct code_answer code_info(const void *code)
{
    size_t slot = (size_t)(((uintptr_t)code >> 4) * 0x9e3779b97f4a7c15ull >> 53) % CODE_CACHE;
    struct amp_quiet quiet;
    amp_lock_quietly(&code_lock, &quiet);
    struct code_answer a = code_cache[slot];
    amp_unlock_quietly(&code_lock, &quiet);
    if (a.code == code)
        return a;
    struct amp_py_names n;
    char module[512], dotted[800];
    amp_py_code_names(code, &n);
    amp_py_module_of(n.file, module, sizeof module);
    snprintf(dotted, sizeof dotted, "%s.%s", module, n.function);
    a.code = code;
    a.framework = (uint8_t)module_is_framework(module);
    a.op = -1;
    for (int i = 0; i < OP_FRAMES && a.op < 0; i++)
        if (fnmatch(op_frame[i].glob + strlen("py:"), dotted, 0) == 0)
            a.op = (int16_t)op_frame[i].op;
    amp_lock_quietly(&code_lock, &quiet);
    code_cache[slot] = a;
    amp_unlock_quietly(&code_lock, &quiet);
    return a;
}

/* ---- the sites ---- */

enum { SITES = 2048, SITE_MAP = 4096 };
static struct amp_site site_pool[SITES];
static unsigned sites_used;
static struct amp_site *site_map[SITE_MAP];
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
/* Names live as long as the process: an arena that only grows. */
static char *arena;
static size_t arena_left;

static const char *keep(const char *s)
{
    size_t n = strlen(s) + 1;
    if (n > arena_left) {
        size_t size = n > 65536 ? n : 65536;
        char *block = malloc(size);
        if (!block)
            return "?";
        arena = block;
        arena_left = size;
    }
    char *out = arena;
    memcpy(out, s, n);
    arena += n;
    arena_left -= n;
    return out;
}

/* The site with this key, made from *fresh when new. Under no lock. */
static const struct amp_site *site_for_key(const struct amp_site *fresh)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&site_lock, &quiet);
    size_t i = (size_t)(fresh->key >> 40) % SITE_MAP;
    struct amp_site *s = NULL;
    for (size_t probes = 0; probes < SITE_MAP; probes++, i = (i + 1) % SITE_MAP) {
        if (!site_map[i]) {
            if (sites_used < SITES) {
                s = &site_pool[sites_used++];
                *s = *fresh;
                s->object = keep(fresh->object);
                s->function = keep(fresh->function);
                atomic_store_explicit(&s->audit_slot, 0, memory_order_relaxed);
                atomic_store_explicit(&s->time_slot, 0, memory_order_relaxed);
                atomic_store_explicit(&s->kept_by_op, 0, memory_order_relaxed);
                atomic_store_explicit(&s->last_output, 0, memory_order_relaxed);
                atomic_store_explicit(&s->recurrent, 0, memory_order_relaxed);
                atomic_store_explicit(&s->last_a, 0, memory_order_relaxed);
                atomic_store_explicit(&s->consumed, 0, memory_order_relaxed);
                atomic_store_explicit(&s->consumer_hook, -1, memory_order_relaxed);
                atomic_store_explicit(&s->consumer_calls, 0, memory_order_relaxed);
                atomic_store_explicit(&s->last_b, 0, memory_order_relaxed);
                atomic_store_explicit(&s->recurrence_calls, 0, memory_order_relaxed);
                site_map[i] = s;
            }
            break;
        }
        if (site_map[i]->key == fresh->key) {
            s = site_map[i];
            break;
        }
    }
    amp_unlock_quietly(&site_lock, &quiet);
    return s;
}

static void set_key(struct amp_site *f)
{
    f->object_hash = amp_policy_name_hash(f->object);
    f->function_hash = amp_policy_name_hash(f->function);
    uint64_t k = mix(f->object_hash, f->function_hash);
    k = mix(k, f->python ? (uint64_t)f->line << 1 | 1 : 0);
    k = mix(k, (uint64_t)(f->op_around + 1));
    k = mix(k, (uint64_t)(f->autocast_op + 1));
    f->key = mix(k, f->hook);
}

static void native_names(void *address, struct amp_site *f, char *buf, size_t size)
{
    Dl_info info;
    const char *object = AMP_CALLER_UNNAMED, *function = "";
    uintptr_t base = 0;
    if (dladdr(address, &info) && info.dli_fname) {
        object = info.dli_fname;
        function = info.dli_sname ? info.dli_sname : "";
        base = (uintptr_t)info.dli_fbase;
    }
    const char *slash = strrchr(object, '/');
    snprintf(buf, size, "%s", slash ? slash + 1 : object);
    f->object = buf;
    f->function = function;
    f->offset = base ? (uintptr_t)address - base : 0;
}

/* The policy's entries for a Python site: by file and line or function,
 * and by the module of any of its frames up to the site's own. */
static void python_categories(struct amp_site *f, const struct amp_py_frame *pf, int site_frame)
{
    const struct amp_policy_overrides *ov = &amp_rt.cfg.policy;
    for (int acc = 0; acc < 2; acc++)
        f->category[acc] = AMP_CAT_UNSET;
    if (!ov->n_sites)
        return;
    for (int acc = 0; acc < 2; acc++)
        f->category[acc] =
            (uint8_t)amp_policy_python_category(ov, AMP_DEVICE_CPU, (enum amp_hook_id)f->hook, acc,
                                                f->object, f->function, (int)f->line, NULL);
    struct amp_py_names n;
    char module[512];
    for (int i = 0; i <= site_frame; i++) {
        amp_py_code_names(pf[i].code, &n);
        amp_py_module_of(n.file, module, sizeof module);
        for (int acc = 0; acc < 2; acc++) {
            int c = amp_policy_python_category(ov, AMP_DEVICE_CPU, (enum amp_hook_id)f->hook, acc,
                                               NULL, NULL, 0, module);
            if (c != AMP_CAT_UNSET && f->category[acc] == AMP_CAT_UNSET)
                f->category[acc] = (uint8_t)c;
        }
    }
}

/* The thread's last call: valid while its identity and the map's
 * generation hold. */
static _Atomic uint32_t generation;
static __thread struct {
    void *address;
    const void *code, *instr;
    const struct amp_site *site;
    uint32_t generation;
    uint16_t hook;
    uint8_t framework; /* the caller is a framework's: the site is found past it */
} last __attribute__((tls_model("initial-exec")));

enum { PY_FRAMES = 48 };

/* The walk for a call that is not the thread's last one (see above). */
static __attribute__((noinline)) const struct amp_site *walk(void *return_address,
                                                             enum amp_hook_id hook, unsigned info,
                                                             const void *code, const void *instr,
                                                             uint32_t gen)
{
    struct amp_py_frame pf[PY_FRAMES];
    int npf = code ? amp_py_frames(pf, PY_FRAMES) : 0;
    struct amp_site f;
    memset(&f, 0, sizeof f);
    f.hook = (uint16_t)hook;
    f.op_around = f.autocast_op = -1;
    f.category[0] = f.category[1] = AMP_CAT_UNSET;
    char object[512];
    void *native_site = return_address;
    if (info & ADDR_FRAMEWORK) {
        /* Native frames from the hook's caller outwards: an op frame on the
         * way, and the first frame outside the frameworks, up to the
         * interpreter's (where a Python process hands over). */
        struct unwind_state u;
        u.n = 0;
        _Unwind_Backtrace(collect, &u);
        int from = 0;
        while (from < u.n && u.frames[from] != return_address)
            from++;
        for (int i = from; i < u.n; i++) {
            unsigned a = i == from ? info : addr_info(u.frames[i]);
            note_op(&f, (int)(a >> ADDR_OP_SHIFT) - 1);
            /* The interpreter: its Python frames take over, or, where they
             * cannot be read, the call's own caller is the site. */
            if (a & ADDR_INTERPRETER)
                break;
            if (!(a & ADDR_FRAMEWORK)) {
                native_site = u.frames[i];
                break;
            }
        }
    }
    int site_frame = -1;
    for (int i = 0; i < npf; i++) {
        struct code_answer c = code_info(pf[i].code);
        note_op(&f, c.op);
        if (!c.framework) {
            site_frame = i;
            break;
        }
    }
    if (npf && site_frame < 0)
        site_frame = 0; /* every frame a framework's: the nearest */
    struct amp_py_names n;
    if (site_frame >= 0) {
        amp_py_frame_names(&pf[site_frame], &n);
        f.python = 1;
        f.object = n.file;
        f.function = n.function;
        f.line = n.line > 0 ? (uint32_t)n.line : 0;
        python_categories(&f, pf, site_frame);
    } else {
        native_names(native_site, &f, object, sizeof object);
    }
    set_key(&f);
    const struct amp_site *s = site_for_key(&f);
    last.address = return_address;
    last.hook = (uint16_t)hook;
    last.framework = (uint8_t)(info & ADDR_FRAMEWORK);
    last.code = code;
    last.instr = instr;
    last.generation = gen;
    last.site = s;
    return s;
}

const struct amp_site *amp_site_of_call(void *return_address, enum amp_hook_id hook)
{
    if (!return_address)
        return NULL;
    uint32_t gen = atomic_load_explicit(&generation, memory_order_acquire);
    int same =
        last.site && last.address == return_address && last.hook == hook && last.generation == gen;
    /* A program's own caller is its site: the same address, the same site. */
    if (same && !last.framework)
        return last.site;
    unsigned info = addr_info(return_address);
    /* Through a framework the site is the Python frame: the same one (its
     * code object and instruction) is the same site. */
    struct amp_py_frame innermost = {NULL, NULL};
    if (info & ADDR_FRAMEWORK)
        amp_py_frames(&innermost, 1);
    if (same && last.code == innermost.code && last.instr == innermost.instr)
        return last.site;
    return walk(return_address, hook, info, innermost.code, innermost.instr, gen);
}

void amp_site_display(const struct amp_site *s, char *object, size_t object_size, char *function,
                      size_t function_size)
{
    const char *slash = strrchr(s->object, '/');
    snprintf(object, object_size, "%s", s->python && slash ? slash + 1 : s->object);
    if (s->python)
        snprintf(function, function_size, "%u %s", s->line, s->function);
    else
        snprintf(function, function_size, "%s", s->function);
}

void amp_site_kept_by_op(const struct amp_site *s)
{
    atomic_fetch_add_explicit(&((struct amp_site *)s)->kept_by_op, 1, memory_order_relaxed);
}

void amp_sites_report(FILE *out)
{
    unsigned version;
    if (amp_py_state(&version) == AMP_PY_UNPROVEN)
        fprintf(out,
                "python %u.%u: frames not read (no layout proven for this interpreter): call "
                "sites are native objects\n",
                version >> 8, version & 0xff);
    /* by op, in the order of the op list */
    struct amp_quiet quiet;
    amp_lock_quietly(&site_lock, &quiet);
    unsigned used = sites_used;
    amp_unlock_quietly(&site_lock, &quiet);
    uint64_t by_op[AMP_OP_COUNT];
    memset(by_op, 0, sizeof by_op);
    uint64_t total = 0;
    for (unsigned i = 0; i < used; i++) {
        uint64_t n = atomic_load_explicit(&site_pool[i].kept_by_op, memory_order_relaxed);
        if (n && site_pool[i].op_around >= 0) {
            by_op[site_pool[i].op_around] += n;
            total += n;
        }
    }
    /* recurrences (shim/blas/blas_recurrence.h) and consumers (runtime/products.h) */
    for (int kind = 0; kind < 2; kind++) {
        unsigned n = 0, shown = 0;
        uint64_t kept = 0;
        for (unsigned i = 0; i < used; i++)
            if (atomic_load_explicit(kind ? &site_pool[i].consumed : &site_pool[i].recurrent,
                                     memory_order_relaxed)) {
                n++;
                kept += atomic_load_explicit(kind ? &site_pool[i].consumer_calls
                                                  : &site_pool[i].recurrence_calls,
                                             memory_order_relaxed);
            }
        if (!n)
            continue;
        if (kind)
            fprintf(out,
                    "consumers: a lowered product of %u call site%s went into a solve or "
                    "factorisation; %" PRIu64 " later calls ran fp32:",
                    n, n == 1 ? "" : "s", kept);
        else
            fprintf(out,
                    "recurrences: %" PRIu64 " calls at %u call site%s ran fp32 (an operand was "
                    "the site's own earlier output):",
                    kept, n, n == 1 ? "" : "s");
        for (unsigned i = 0; i < used && shown < 8; i++) {
            if (!atomic_load_explicit(kind ? &site_pool[i].consumed : &site_pool[i].recurrent,
                                      memory_order_relaxed))
                continue;
            char object[64], function[96];
            amp_site_display(&site_pool[i], object, sizeof object, function, sizeof function);
            fprintf(out, "%s %s %s:%s", shown ? "," : "", amp_hook_names[site_pool[i].hook], object,
                    function);
            int16_t h = atomic_load_explicit(&site_pool[i].consumer_hook, memory_order_relaxed);
            if (kind)
                fprintf(out, " into %s", h >= 0 && h < AMP_HOOK_COUNT ? amp_hook_names[h] : "?");
            shown++;
        }
        fprintf(out, "%s\n", n > shown ? ", ..." : "");
    }
    if (!total)
        return;
    fprintf(out, "kept fp32 by the op around them: %" PRIu64 " calls (", total);
    const char *sep = "";
    for (int o = 0; o < AMP_OP_COUNT; o++)
        if (by_op[o]) {
            fprintf(out, "%s%s %" PRIu64, sep, amp_op_names[o], by_op[o]);
            sep = ", ";
        }
    fputs(")\n", out);
}

void amp_sites_forget_unloaded(void)
{
    amp_addr_cache_forget_unloaded(&addr_cache);
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

void amp_sites_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&code_lock, phase);
    amp_lock_atfork(&site_lock, phase);
    /* The child makes its own block: slots into the parent's are void. */
    if (phase == AMP_FORK_CHILD) {
        for (unsigned i = 0; i < sites_used; i++) {
            atomic_store_explicit(&site_pool[i].audit_slot, 0, memory_order_relaxed);
            atomic_store_explicit(&site_pool[i].time_slot, 0, memory_order_relaxed);
        }
        atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    }
}
