/* The oneDNN adapter (shim/blas/native_onednn.h): oneDNN 2.x's C API, every
 * function looked up in libdnnl.so.2 at run time. The header supplies only
 * types and constants. */
#include "shim/blas/native_onednn.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "runtime/threads.h"
#include "shim/helpers.h"

#ifdef AMPSHIM_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>

#include "shim/blas/native_onednn_functions.h"

static struct {
    struct { /* the list's table (shim/helpers.h) */
#define AMP_X_FIELD(f) __typeof__(f) *f;
        AMP_ONEDNN_FUNCTIONS(AMP_X_FIELD)
#undef AMP_X_FIELD
    };
    /* The OpenMP runtime oneDNN runs on (libgomp, its dependency): the
     * calling thread's team size is 1 around each call, then put back. */
    int (*omp_get_max_threads)(void);
    void (*omp_set_num_threads)(int);
} dn;

/* The functions the adapter calls, for the one resolver (shim/helpers.h):
 * taken from the libdnnl.so.2 the adapter opens. */
AMP_HELPER_LIST_OF(static, onednn_list, "oneDNN", NULL,
                   offsetof(__typeof__(dn), omp_get_max_threads), AMP_ONEDNN_FUNCTIONS,
                   AMP_HELPER_FN_NAME);

static pthread_once_t open_once = PTHREAD_ONCE_INIT;
static enum amp_onednn_status open_status = AMP_ONEDNN_UNAVAILABLE;
static char open_why[160], version_text[32];
static dnnl_engine_t engine;

static void open_library(void)
{
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(open_why, sizeof open_why, "libdnnl.so.2 (oneDNN 2) was not found");
        return;
    }
    void *anchor = dlsym(h, "dnnl_version");
    if (!anchor || !amp_helpers_resolve(&onednn_list, &dn, anchor)) {
        snprintf(open_why, sizeof open_why, "libdnnl.so.2 has no %s",
                 anchor ? amp_helpers_missing(&onednn_list, &dn) : "dnnl_version");
        dlclose(h);
        return;
    }
    const dnnl_version_t *v = dn.dnnl_version();
    snprintf(version_text, sizeof version_text, "%d.%d.%d", v->major, v->minor, v->patch);
    if (v->major != 2) {
        snprintf(open_why, sizeof open_why, "libdnnl.so.2 is oneDNN %s, not 2.x", version_text);
        version_text[0] = '\0';
        dlclose(h);
        return;
    }
    *(void **)&dn.omp_get_max_threads = dlsym(h, "omp_get_max_threads");
    *(void **)&dn.omp_set_num_threads = dlsym(h, "omp_set_num_threads");
    if (dn.dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
        snprintf(open_why, sizeof open_why, "oneDNN %s has no CPU engine", version_text);
        version_text[0] = '\0';
        return;
    }
    open_status = AMP_ONEDNN_OK;
}

enum amp_onednn_status amp_onednn_open(char *why, size_t whylen)
{
    pthread_once(&open_once, open_library);
    if (open_status != AMP_ONEDNN_OK && why)
        snprintf(why, whylen, "%s", open_why);
    return open_status;
}

const char *amp_onednn_version(void)
{
    return version_text;
}

/* ---- threads ---- */

/* oneDNN sizes its work by omp_get_max_threads() when a primitive is made
 * and starts an OpenMP team when it runs one made for more than one thread.
 * With a team size of 1 it calls the kernel directly: no team, no OpenMP
 * threads spinning between calls beside the program's own threads. */
struct team {
    int old;
    int set;
};

static void team_begin(struct team *tm)
{
    tm->set = 0;
    if (!dn.omp_get_max_threads || !dn.omp_set_num_threads)
        return;
    tm->old = dn.omp_get_max_threads();
    if (tm->old != 1) {
        dn.omp_set_num_threads(1);
        tm->set = 1;
    }
}

static void team_end(const struct team *tm)
{
    if (tm->set)
        dn.omp_set_num_threads(tm->old);
}

/* ---- the primitive cache ---- */

/* Everything a primitive depends on; compared bytewise (no padding). */
struct key {
    int64_t m, n, k;
    uint32_t alpha_bits, beta_bits;
    uint8_t dtype, trans_x, trans_y, pad[5];
};
_Static_assert(sizeof(struct key) == 40, "struct key has no padding");

struct amp_onednn_prim {
    struct key key;
    dnnl_primitive_t prim;
    dnnl_memory_desc_t x_md, y_md, d_md, scratch_md;
    size_t scratch_bytes;
    enum amp_onednn_status status; /* OK, or NOT_NATIVE kept so the shape is not asked again */
    uint64_t last_use;
    int refs;
    uint8_t cached;
};

/* Shapes a program uses are few (a model's layers; a syrk's blocks, up to
 * 32 of them); past this many the least recently used primitive not running
 * is dropped. */
#define AMP_ONEDNN_CACHE 256
static struct amp_onednn_prim *cache[AMP_ONEDNN_CACHE];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void amp_onednn_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&cache_lock, phase);
}

void amp_onednn_thread_init(void)
{
    if (amp_onednn_open(NULL, 0) == AMP_ONEDNN_OK && dn.omp_set_num_threads)
        dn.omp_set_num_threads(1);
}

static void prim_free(struct amp_onednn_prim *p)
{
    if (p->prim)
        dn.dnnl_primitive_destroy(p->prim);
    free(p);
}

static void set_key(struct key *k, const struct amp_onednn_gemm *g)
{
    memset(k, 0, sizeof *k);
    k->m = g->m;
    k->n = g->n;
    k->k = g->k;
    memcpy(&k->alpha_bits, &g->alpha, 4);
    memcpy(&k->beta_bits, &g->beta, 4);
    k->dtype = (uint8_t)g->dtype;
    k->trans_x = g->trans_x;
    k->trans_y = g->trans_y;
}

/* Native means oneDNN's kernel for this problem uses the CPU's own
 * low-precision dot products: AMX (any "amx" implementation), or
 * avx512_core_bf16 / avx512_core_fp16. A gemm:jit or ref implementation
 * converts to fp32 inside and is slower than emulation. */
static int impl_is_native(const char *impl, enum amp_lowp_dtype dtype)
{
    if (strstr(impl, "amx"))
        return 1;
    return strstr(impl, dtype == AMP_DTYPE_BF16 ? "_bf16" : "_fp16") != NULL;
}

/* oneDNN 2.6 does not survive every allocation failure while it makes a
 * primitive: with the address space nearly spent (RLIMIT_AS) it crashes
 * inside dnnl_primitive_create (its code generator writes where it could
 * not map). A primitive is made once per shape, so under an address-space
 * limit the room it may need is probed first: an address range of that
 * size, reserved without access or commit and given back at once. Without
 * it the product runs emulated. Without a limit nothing is probed (such a
 * reservation cannot fail for want of memory, and a sanitizer's mmap makes
 * one slow). */
#define AMP_ONEDNN_MAKE_ROOM ((size_t)64 << 20)

static int room_to_make(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
        return 1;
    void *r = mmap(NULL, AMP_ONEDNN_MAKE_ROOM, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return 0;
    munmap(r, AMP_ONEDNN_MAKE_ROOM);
    return 1;
}

static enum amp_onednn_status make(struct amp_onednn_prim *p, const struct amp_onednn_gemm *g,
                                   char *impl, size_t impllen)
{
    if (!room_to_make())
        return AMP_ONEDNN_FAILED;
    dnnl_data_type_t lowp = g->dtype == AMP_DTYPE_BF16 ? dnnl_bf16 : dnnl_f16;
    dnnl_dims_t xd = {g->m, g->k}, yd = {g->k, g->n}, dd = {g->m, g->n};
    /* D is dense: oneDNN 2.6's native kernels want ld = N. */
    dnnl_dims_t xs = {g->k, 1}, ys = {g->n, 1}, ds = {g->n, 1};
    if (g->trans_x)
        xs[0] = 1, xs[1] = g->m;
    if (g->trans_y)
        ys[0] = 1, ys[1] = g->k;
    if (dn.dnnl_memory_desc_init_by_strides(&p->x_md, 2, xd, lowp, xs) ||
        dn.dnnl_memory_desc_init_by_strides(&p->y_md, 2, yd, lowp, ys) ||
        dn.dnnl_memory_desc_init_by_strides(&p->d_md, 2, dd, dnnl_f32, ds))
        return AMP_ONEDNN_FAILED;
    dnnl_matmul_desc_t md;
    if (dn.dnnl_matmul_desc_init(&md, &p->x_md, &p->y_md, NULL, &p->d_md))
        return AMP_ONEDNN_FAILED;
    dnnl_primitive_attr_t attr;
    if (dn.dnnl_primitive_attr_create(&attr))
        return AMP_ONEDNN_FAILED;
    dnnl_post_ops_t po = NULL;
    int bad = dn.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != 0;
    if (!bad && g->alpha != 1.0f)
        bad = dn.dnnl_primitive_attr_set_output_scales(attr, 1, 0, &g->alpha) != 0;
    if (!bad && g->beta != 0.0f)
        bad = dn.dnnl_post_ops_create(&po) || dn.dnnl_post_ops_append_sum(po, g->beta) ||
              dn.dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t created = dnnl_runtime_error;
    if (!bad)
        created = dn.dnnl_primitive_desc_create(&pd, &md, attr, engine, NULL);
    if (po)
        dn.dnnl_post_ops_destroy(po);
    dn.dnnl_primitive_attr_destroy(attr);
    if (created == dnnl_unimplemented) { /* no implementation at all on this CPU */
        if (impl)
            snprintf(impl, impllen, "no %s matmul", g->dtype == AMP_DTYPE_BF16 ? "bf16" : "fp16");
        return AMP_ONEDNN_NOT_NATIVE;
    }
    if (bad || created != dnnl_success)
        return AMP_ONEDNN_FAILED;
    const char *name = "?";
    dn.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
    if (impl)
        snprintf(impl, impllen, "%s", name);
    enum amp_onednn_status st = AMP_ONEDNN_OK;
    if (!impl_is_native(name, g->dtype)) {
        st = AMP_ONEDNN_NOT_NATIVE;
    } else {
        const dnnl_memory_desc_t *s =
            dn.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        if (s)
            p->scratch_md = *s;
        else
            memset(&p->scratch_md, 0, sizeof p->scratch_md);
        p->scratch_bytes = s ? dn.dnnl_memory_desc_get_size(s) : 0;
        if (dn.dnnl_primitive_create(&p->prim, pd))
            st = AMP_ONEDNN_FAILED, p->prim = NULL;
    }
    dn.dnnl_primitive_desc_destroy(pd);
    return st;
}

static __thread unsigned made_here;

unsigned amp_onednn_made(void)
{
    return made_here;
}

struct amp_onednn_prim *amp_onednn_get(const struct amp_onednn_gemm *g, enum amp_onednn_status *st,
                                       char *impl, size_t impllen)
{
    if (amp_onednn_open(NULL, 0) != AMP_ONEDNN_OK) {
        *st = AMP_ONEDNN_UNAVAILABLE;
        return NULL;
    }
    struct key k;
    set_key(&k, g);
    struct amp_quiet quiet;
    amp_lock_quietly(&cache_lock, &quiet);
    for (int i = 0; i < AMP_ONEDNN_CACHE; i++) {
        struct amp_onednn_prim *p = cache[i];
        if (p && memcmp(&p->key, &k, sizeof k) == 0) {
            p->last_use = ++cache_clock;
            *st = p->status;
            if (p->status == AMP_ONEDNN_OK)
                p->refs++;
            else
                p = NULL;
            amp_unlock_quietly(&cache_lock, &quiet);
            if (impl)
                impl[0] = '\0';
            return p;
        }
    }
    amp_unlock_quietly(&cache_lock, &quiet);

    /* Made outside the lock: creation takes milliseconds, and two threads
     * that make the same shape at once both keep theirs for the call. */
    struct amp_onednn_prim *p = calloc(1, sizeof *p);
    if (!p) {
        *st = AMP_ONEDNN_FAILED;
        return NULL;
    }
    p->key = k;
    p->refs = 1;
    struct team tm;
    team_begin(&tm);
    made_here++;
    *st = p->status = make(p, g, impl, impllen);
    team_end(&tm);
    if (*st == AMP_ONEDNN_FAILED) {
        prim_free(p);
        return NULL;
    }
    if (*st == AMP_ONEDNN_NOT_NATIVE)
        p->refs = 0; /* kept only as the cache's answer for this shape */
    amp_lock_quietly(&cache_lock, &quiet);
    int slot = -1;
    for (int i = 0; i < AMP_ONEDNN_CACHE; i++) {
        if (!cache[i]) {
            slot = i;
            break;
        }
        if (cache[i]->refs == 0 && (slot < 0 || cache[i]->last_use < cache[slot]->last_use))
            slot = i;
    }
    struct amp_onednn_prim *old = NULL;
    if (slot >= 0) {
        old = cache[slot];
        cache[slot] = p;
        p->cached = 1;
        p->last_use = ++cache_clock;
    }
    amp_unlock_quietly(&cache_lock, &quiet);
    if (old)
        prim_free(old);
    if (*st != AMP_ONEDNN_OK) {
        if (slot < 0)
            prim_free(p);
        return NULL;
    }
    return p;
}

size_t amp_onednn_scratch_bytes(const struct amp_onednn_prim *p)
{
    return p->scratch_bytes;
}

struct amp_onednn_run {
    struct amp_onednn_prim *p;
    dnnl_memory_t mem[4];
    dnnl_stream_t stream;
};

struct amp_onednn_run *amp_onednn_bind(struct amp_onednn_prim *p, const uint16_t *x,
                                       const uint16_t *y, float *d, void *scratch)
{
    struct amp_onednn_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->p = p;
    if (dn.dnnl_memory_create(&r->mem[0], &p->x_md, engine, (void *)x) ||
        dn.dnnl_memory_create(&r->mem[1], &p->y_md, engine, (void *)y) ||
        dn.dnnl_memory_create(&r->mem[2], &p->d_md, engine, d) ||
        (p->scratch_bytes && dn.dnnl_memory_create(&r->mem[3], &p->scratch_md, engine, scratch)) ||
        dn.dnnl_stream_create(&r->stream, engine, dnnl_stream_default_flags)) {
        amp_onednn_unbind(r);
        return NULL;
    }
    return r;
}

int amp_onednn_exec(struct amp_onednn_run *r)
{
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, r->mem[0]},
                               {DNNL_ARG_WEIGHTS, r->mem[1]},
                               {DNNL_ARG_DST, r->mem[2]},
                               {DNNL_ARG_SCRATCHPAD, r->mem[3]}};
    struct team tm;
    team_begin(&tm);
    int bad = dn.dnnl_primitive_execute(r->p->prim, r->stream, r->p->scratch_bytes ? 4 : 3, args) ||
              dn.dnnl_stream_wait(r->stream);
    team_end(&tm);
    return bad ? -1 : 0;
}

void amp_onednn_unbind(struct amp_onednn_run *r)
{
    if (!r)
        return;
    if (r->stream)
        dn.dnnl_stream_destroy(r->stream);
    for (int i = 0; i < 4; i++)
        if (r->mem[i])
            dn.dnnl_memory_destroy(r->mem[i]);
    free(r);
}

void amp_onednn_put(struct amp_onednn_prim *p)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&cache_lock, &quiet);
    int drop = --p->refs == 0 && !p->cached;
    amp_unlock_quietly(&cache_lock, &quiet);
    if (drop)
        prim_free(p);
}

#else /* built without oneDNN's header: the native path reports why */

enum amp_onednn_status amp_onednn_open(char *why, size_t whylen)
{
    if (why)
        snprintf(why, whylen, "this ampshim was built without oneDNN's header (libdnnl-dev)");
    return AMP_ONEDNN_UNAVAILABLE;
}

const char *amp_onednn_version(void)
{
    return "";
}

unsigned amp_onednn_made(void)
{
    return 0;
}

struct amp_onednn_prim *amp_onednn_get(const struct amp_onednn_gemm *g, enum amp_onednn_status *st,
                                       char *impl, size_t impllen)
{
    (void)g, (void)impl, (void)impllen;
    *st = AMP_ONEDNN_UNAVAILABLE;
    return NULL;
}

size_t amp_onednn_scratch_bytes(const struct amp_onednn_prim *p)
{
    (void)p;
    return 0;
}

struct amp_onednn_run *amp_onednn_bind(struct amp_onednn_prim *p, const uint16_t *x,
                                       const uint16_t *y, float *d, void *scratch)
{
    (void)p, (void)x, (void)y, (void)d, (void)scratch;
    return NULL;
}

int amp_onednn_exec(struct amp_onednn_run *r)
{
    (void)r;
    return -1;
}

void amp_onednn_unbind(struct amp_onednn_run *r)
{
    (void)r;
}

void amp_onednn_put(struct amp_onednn_prim *p)
{
    (void)p;
}

void amp_onednn_atfork(enum amp_fork_phase phase)
{
    (void)phase;
}

void amp_onednn_thread_init(void)
{
}

#endif
