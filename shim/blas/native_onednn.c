/* The oneDNN adapter (shim/blas/native_onednn.h): the primitive cache and
 * the choice of backend (shim/blas/native_backend.h), and the 2.x backend:
 * oneDNN 2.x's C API, every function looked up in libdnnl.so.2 at run
 * time, its header supplying only types and constants. */
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
#include "shim/blas/native_backend.h"
#include "shim/helpers.h"

int amp_onednn_impl_is_native(const char *impl, enum amp_lowp_dtype dtype)
{
    if (strstr(impl, "amx"))
        return 1;
    return strstr(impl, dtype == AMP_DTYPE_BF16 ? "_bf16" : "_fp16") != NULL;
}

#ifdef AMPSHIM_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>

#include "shim/blas/native_onednn_functions.h"

static struct { /* the list's table (shim/helpers.h) */
#define AMP_X_FIELD(f) __typeof__(f) *f;
    AMP_ONEDNN_FUNCTIONS(AMP_X_FIELD)
#undef AMP_X_FIELD
} dn;

/* The functions the adapter calls, for the one resolver (shim/helpers.h):
 * taken from the libdnnl.so.2 the adapter opens. */
AMP_HELPER_LIST_OF(static, onednn_list, "oneDNN", NULL, sizeof dn, AMP_ONEDNN_FUNCTIONS,
                   AMP_HELPER_FN_NAME);

static struct amp_onednn_backend v2;
static enum amp_onednn_status v2_status = AMP_ONEDNN_UNAVAILABLE;
static char v2_why[160];
static dnnl_engine_t engine;

struct prim2 {
    dnnl_primitive_t prim;
    dnnl_memory_desc_t x_md, y_md, d_md, scratch_md;
    size_t scratch_bytes;
};

struct run2 {
    dnnl_memory_t mem[4];
    dnnl_stream_t stream;
};

static void v2_destroy(void *state)
{
    struct prim2 *p = state;
    if (p && p->prim)
        dn.dnnl_primitive_destroy(p->prim);
    free(p);
}

static enum amp_onednn_status v2_make(const struct amp_onednn_gemm *g, void **state,
                                      size_t *scratch_bytes, char *impl, size_t impllen)
{
    struct prim2 *p = calloc(1, sizeof *p);
    if (!p)
        return AMP_ONEDNN_FAILED;
    dnnl_data_type_t lowp = g->dtype == AMP_DTYPE_BF16 ? dnnl_bf16 : dnnl_f16;
    dnnl_dims_t xd = {g->m, g->k}, yd = {g->k, g->n}, dd = {g->m, g->n};
    /* D is dense: oneDNN 2.6's native kernels want ld = N. */
    dnnl_dims_t xs = {g->k, 1}, ys = {g->n, 1}, ds = {g->n, 1};
    if (g->trans_x)
        xs[0] = 1, xs[1] = g->m;
    if (g->trans_y)
        ys[0] = 1, ys[1] = g->k;
    dnnl_matmul_desc_t md;
    dnnl_primitive_attr_t attr;
    if (dn.dnnl_memory_desc_init_by_strides(&p->x_md, 2, xd, lowp, xs) ||
        dn.dnnl_memory_desc_init_by_strides(&p->y_md, 2, yd, lowp, ys) ||
        dn.dnnl_memory_desc_init_by_strides(&p->d_md, 2, dd, dnnl_f32, ds) ||
        dn.dnnl_matmul_desc_init(&md, &p->x_md, &p->y_md, NULL, &p->d_md) ||
        dn.dnnl_primitive_attr_create(&attr)) {
        free(p);
        return AMP_ONEDNN_FAILED;
    }
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
        free(p);
        return AMP_ONEDNN_NOT_NATIVE;
    }
    if (bad || created != dnnl_success) {
        free(p);
        return AMP_ONEDNN_FAILED;
    }
    const char *name = "?";
    dn.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
    if (impl)
        snprintf(impl, impllen, "%s", name);
    enum amp_onednn_status st = AMP_ONEDNN_OK;
    if (!amp_onednn_impl_is_native(name, g->dtype)) {
        st = AMP_ONEDNN_NOT_NATIVE;
    } else {
        const dnnl_memory_desc_t *s =
            dn.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        if (s)
            p->scratch_md = *s;
        p->scratch_bytes = s ? dn.dnnl_memory_desc_get_size(s) : 0;
        if (dn.dnnl_primitive_create(&p->prim, pd))
            st = AMP_ONEDNN_FAILED, p->prim = NULL;
    }
    dn.dnnl_primitive_desc_destroy(pd);
    if (st != AMP_ONEDNN_OK) {
        v2_destroy(p);
        return st;
    }
    *state = p;
    *scratch_bytes = p->scratch_bytes;
    return st;
}

static void v2_unbind(void *state)
{
    struct run2 *r = state;
    if (!r)
        return;
    if (r->stream)
        dn.dnnl_stream_destroy(r->stream);
    for (int i = 0; i < 4; i++)
        if (r->mem[i])
            dn.dnnl_memory_destroy(r->mem[i]);
    free(r);
}

static void *v2_bind(void *state, const uint16_t *x, const uint16_t *y, float *d, void *scratch)
{
    struct prim2 *p = state;
    struct run2 *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (dn.dnnl_memory_create(&r->mem[0], &p->x_md, engine, (void *)x) ||
        dn.dnnl_memory_create(&r->mem[1], &p->y_md, engine, (void *)y) ||
        dn.dnnl_memory_create(&r->mem[2], &p->d_md, engine, d) ||
        (p->scratch_bytes && dn.dnnl_memory_create(&r->mem[3], &p->scratch_md, engine, scratch)) ||
        dn.dnnl_stream_create(&r->stream, engine, dnnl_stream_default_flags)) {
        v2_unbind(r);
        return NULL;
    }
    return r;
}

static int v2_exec(void *state, void *run)
{
    struct prim2 *p = state;
    struct run2 *r = run;
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, r->mem[0]},
                               {DNNL_ARG_WEIGHTS, r->mem[1]},
                               {DNNL_ARG_DST, r->mem[2]},
                               {DNNL_ARG_SCRATCHPAD, r->mem[3]}};
    return dn.dnnl_primitive_execute(p->prim, r->stream, p->scratch_bytes ? 4 : 3, args) ||
                   dn.dnnl_stream_wait(r->stream)
               ? -1
               : 0;
}

static void open_v2(void)
{
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(v2_why, sizeof v2_why, "libdnnl.so.2 (oneDNN 2) was not found");
        return;
    }
    void *anchor = dlsym(h, "dnnl_version");
    if (!anchor || !amp_helpers_resolve(&onednn_list, &dn, anchor)) {
        snprintf(v2_why, sizeof v2_why, "libdnnl.so.2 has no %s",
                 anchor ? amp_helpers_missing(&onednn_list, &dn) : "dnnl_version");
        dlclose(h);
        return;
    }
    const dnnl_version_t *v = dn.dnnl_version();
    if (v->major != 2) {
        snprintf(v2_why, sizeof v2_why, "libdnnl.so.2 is oneDNN %d.%d.%d, not 2.x", v->major,
                 v->minor, v->patch);
        dlclose(h);
        return;
    }
    if (dn.dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
        snprintf(v2_why, sizeof v2_why, "oneDNN %d.%d.%d has no CPU engine", v->major, v->minor,
                 v->patch);
        return;
    }
    /* The OpenMP runtime oneDNN runs on (libgomp, its dependency). */
    *(void **)&v2.omp_get_max_threads = dlsym(h, "omp_get_max_threads");
    *(void **)&v2.omp_set_num_threads = dlsym(h, "omp_set_num_threads");
    snprintf(v2.version, sizeof v2.version, "%d.%d.%d", v->major, v->minor, v->patch);
    v2.id = 2;
    v2.make = v2_make;
    v2.destroy = v2_destroy;
    v2.bind = v2_bind;
    v2.exec = v2_exec;
    v2.unbind = v2_unbind;
    v2_status = AMP_ONEDNN_OK;
}

static pthread_once_t v2_once = PTHREAD_ONCE_INIT;

/* libdnnl.so.2's backend (opened once), or NULL with why. */
static const struct amp_onednn_backend *v2_backend(char *why, size_t whylen)
{
    pthread_once(&v2_once, open_v2);
    if (v2_status == AMP_ONEDNN_OK)
        return &v2;
    if (why)
        snprintf(why, whylen, "%s", v2_why);
    return NULL;
}
#else
static const struct amp_onednn_backend *v2_backend(char *why, size_t whylen)
{
    if (why)
        snprintf(why, whylen,
                 "no oneDNN 3 inside a loaded library, and this ampshim was built without oneDNN "
                 "2's header (libdnnl-dev)");
    return NULL;
}
#endif

/* ---- which oneDNN ---- */

/* The oneDNN a new primitive is made on: the 3.x inside a reached library
 * once offered, else libdnnl.so.2, else NULL with why. */
static const struct amp_onednn_backend *current(char *why, size_t whylen)
{
    const struct amp_onednn_backend *b = amp_onednn3_backend();
    return b ? b : v2_backend(why, whylen);
}

enum amp_onednn_status amp_onednn_open(char *why, size_t whylen)
{
    return current(why, whylen) ? AMP_ONEDNN_OK : AMP_ONEDNN_UNAVAILABLE;
}

const char *amp_onednn_version(void)
{
    const struct amp_onednn_backend *b = current(NULL, 0);
    return b ? b->version : "";
}

/* ---- threads ---- */

/* oneDNN sizes its work by omp_get_max_threads() when a primitive is made
 * and starts an OpenMP team when it runs one made for more than one thread.
 * With a team size of 1 it calls the kernel directly: no team, no OpenMP
 * threads spinning between calls beside the program's own threads. */
struct team {
    const struct amp_onednn_backend *b;
    int old;
    int set;
};

static void team_begin(struct team *tm, const struct amp_onednn_backend *b)
{
    tm->b = b;
    tm->set = 0;
    if (!b->omp_get_max_threads || !b->omp_set_num_threads)
        return;
    tm->old = b->omp_get_max_threads();
    if (tm->old != 1) {
        b->omp_set_num_threads(1);
        tm->set = 1;
    }
}

static void team_end(const struct team *tm)
{
    if (tm->set)
        tm->b->omp_set_num_threads(tm->old);
}

/* ---- the primitive cache ---- */

/* Everything a primitive depends on; compared bytewise (no padding). */
struct key {
    int64_t m, n, k;
    uint32_t alpha_bits, beta_bits;
    uint8_t dtype, trans_x, trans_y, backend, pad[4];
};
_Static_assert(sizeof(struct key) == 40, "struct key has no padding");

struct amp_onednn_prim {
    struct key key;
    const struct amp_onednn_backend *b;
    void *state; /* the backend's primitive */
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
    const struct amp_onednn_backend *b = current(NULL, 0);
    if (b && b->omp_set_num_threads)
        b->omp_set_num_threads(1);
}

static void prim_free(struct amp_onednn_prim *p)
{
    if (p->state)
        p->b->destroy(p->state);
    free(p);
}

static void set_key(struct key *k, const struct amp_onednn_gemm *g,
                    const struct amp_onednn_backend *b)
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
    k->backend = b->id;
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

static __thread unsigned made_here;

unsigned amp_onednn_made(void)
{
    return made_here;
}

struct amp_onednn_prim *amp_onednn_get(const struct amp_onednn_gemm *g, enum amp_onednn_status *st,
                                       char *impl, size_t impllen)
{
    const struct amp_onednn_backend *b = current(NULL, 0);
    if (!b) {
        *st = AMP_ONEDNN_UNAVAILABLE;
        return NULL;
    }
    struct key k;
    set_key(&k, g, b);
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
    p->b = b;
    p->refs = 1;
    struct team tm;
    team_begin(&tm, b);
    made_here++;
    *st = p->status = room_to_make() ? b->make(g, &p->state, &p->scratch_bytes, impl, impllen)
                                     : AMP_ONEDNN_FAILED;
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
    void *state;
};

struct amp_onednn_run *amp_onednn_bind(struct amp_onednn_prim *p, const uint16_t *x,
                                       const uint16_t *y, float *d, void *scratch)
{
    struct amp_onednn_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->p = p;
    if (!(r->state = p->b->bind(p->state, x, y, d, scratch))) {
        free(r);
        return NULL;
    }
    return r;
}

int amp_onednn_exec(struct amp_onednn_run *r)
{
    struct team tm;
    team_begin(&tm, r->p->b);
    int rc = r->p->b->exec(r->p->state, r->state);
    team_end(&tm);
    return rc;
}

void amp_onednn_unbind(struct amp_onednn_run *r)
{
    if (!r)
        return;
    r->p->b->unbind(r->state);
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
