/* The native executor's second oneDNN (shim/blas/native_backend.h): the
 * 3.x linked inside a library the oneDNN wing reached (pip's
 * libtorch_cpu.so), its C API taken from the library's static symbol
 * table as the wing takes it. A machine with only pip's torch has no
 * libdnnl.so.2: without this its lowered products ran emulated, slower
 * than fp32.
 *
 * oneDNN 3's header is not needed: the values below are its C API's
 * (dnnl_types.h, dnnl_common_types.h), stable across 3.x. Memory
 * descriptors are objects there (made, cloned, destroyed); output scales
 * are gone, so alpha is an eltwise linear post-op ahead of the sum. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "runtime/log.h"
#include "shim/blas/native_backend.h"
#include "shim/helpers.h"
#include "shim/resolve.h"

enum {
    D3_SUCCESS = 0,
    D3_UNIMPLEMENTED = 3,
    D3_F16 = 1,
    D3_BF16 = 2,
    D3_F32 = 3,
    D3_CPU = 1,
    D3_STREAM_DEFAULT = 1,
    D3_SCRATCHPAD_USER = 1,
    D3_ELTWISE_LINEAR = 0x26,
    D3_QUERY_IMPL_INFO_STR = 8,
    D3_QUERY_SCRATCHPAD_MD = 136,
    D3_ARG_SRC = 1,
    D3_ARG_DST = 17,
    D3_ARG_WEIGHTS = 33,
    D3_ARG_SCRATCHPAD = 80,
};

typedef int64_t d3_dims[12];
struct d3_version {
    int major, minor, patch;
};
struct d3_arg {
    int arg;
    void *memory;
};

/* Every function the backend calls, one row X(member, symbol, ret,
 * params...) as shim/helpers.h lists them. */
#define D3_FUNCTIONS(X)                                                                            \
    X(dnnl_version, dnnl_version, const struct d3_version *, void)                                 \
    X(dnnl_engine_create, dnnl_engine_create, int, void **, int, size_t)                           \
    X(dnnl_stream_create, dnnl_stream_create, int, void **, void *, unsigned)                      \
    X(dnnl_stream_wait, dnnl_stream_wait, int, void *)                                             \
    X(dnnl_stream_destroy, dnnl_stream_destroy, int, void *)                                       \
    X(dnnl_memory_desc_create_with_strides, dnnl_memory_desc_create_with_strides, int, void **,    \
      int, const int64_t *, int, const int64_t *)                                                  \
    X(dnnl_memory_desc_clone, dnnl_memory_desc_clone, int, void **, const void *)                  \
    X(dnnl_memory_desc_destroy, dnnl_memory_desc_destroy, int, void *)                             \
    X(dnnl_memory_desc_get_size, dnnl_memory_desc_get_size, size_t, const void *)                  \
    X(dnnl_matmul_primitive_desc_create, dnnl_matmul_primitive_desc_create, int, void **, void *,  \
      const void *, const void *, const void *, const void *, const void *)                        \
    X(dnnl_primitive_attr_create, dnnl_primitive_attr_create, int, void **)                        \
    X(dnnl_primitive_attr_destroy, dnnl_primitive_attr_destroy, int, void *)                       \
    X(dnnl_primitive_attr_set_scratchpad_mode, dnnl_primitive_attr_set_scratchpad_mode, int,       \
      void *, int)                                                                                 \
    X(dnnl_primitive_attr_set_post_ops, dnnl_primitive_attr_set_post_ops, int, void *,             \
      const void *)                                                                                \
    X(dnnl_post_ops_create, dnnl_post_ops_create, int, void **)                                    \
    X(dnnl_post_ops_destroy, dnnl_post_ops_destroy, int, void *)                                   \
    X(dnnl_post_ops_append_eltwise, dnnl_post_ops_append_eltwise, int, void *, int, float, float)  \
    X(dnnl_post_ops_append_sum, dnnl_post_ops_append_sum, int, void *, float, int32_t, int)        \
    X(dnnl_primitive_desc_query, dnnl_primitive_desc_query, int, const void *, int, int, void *)   \
    X(dnnl_primitive_desc_query_md, dnnl_primitive_desc_query_md, const void *, const void *, int, \
      int)                                                                                         \
    X(dnnl_primitive_desc_destroy, dnnl_primitive_desc_destroy, int, void *)                       \
    X(dnnl_primitive_create, dnnl_primitive_create, int, void **, const void *)                    \
    X(dnnl_primitive_destroy, dnnl_primitive_destroy, int, void *)                                 \
    X(dnnl_memory_create, dnnl_memory_create, int, void **, const void *, void *, void *)          \
    X(dnnl_memory_destroy, dnnl_memory_destroy, int, void *)

static struct {
    struct { /* the list's table (shim/helpers.h) */
        D3_FUNCTIONS(AMP_HELPER_MEMBER)
    } fn;
    int (*execute)(void *, void *, int, const struct d3_arg *); /* the wing's trampoline */
    void *engine;
} d3;
/* Its names, in the table's order: found in the library's static symbol
 * table (amp_object_local_functions), not by the dynamic resolver. */
AMP_HELPER_LIST_OF(static, d3_list, "oneDNN 3", NULL, sizeof d3.fn, D3_FUNCTIONS, AMP_HELPER_NAME);

static struct amp_onednn_backend backend;
static _Atomic(const struct amp_onednn_backend *) offered;
static char library_path[4096];
static pthread_once_t omp_once = PTHREAD_ONCE_INIT;

/* The OpenMP runtime the library's oneDNN runs on: the one its own
 * dependencies bring (pip's torch ships its libgomp). Looked up at the
 * first use, not in the offer: the offer comes inside the wing's look at
 * loaded objects, which a dlsym here would start again. */
static void find_omp(void)
{
    void *h = dlopen(library_path, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return;
    *(void **)&backend.omp_get_max_threads = dlsym(h, "omp_get_max_threads");
    *(void **)&backend.omp_set_num_threads = dlsym(h, "omp_set_num_threads");
    if (!backend.omp_get_max_threads || !backend.omp_set_num_threads)
        backend.omp_get_max_threads = NULL, backend.omp_set_num_threads = NULL;
    dlclose(h);
}

const struct amp_onednn_backend *amp_onednn3_backend(void)
{
    const struct amp_onednn_backend *b = atomic_load_explicit(&offered, memory_order_acquire);
    if (b)
        pthread_once(&omp_once, find_omp);
    return b;
}

/* ---- a primitive and its runs ---- */

struct prim3 {
    void *prim;
    void *md[4]; /* x, y, d, scratchpad (clones, owned) */
    size_t scratch_bytes;
};

struct run3 {
    void *mem[4];
    void *stream;
};

static void destroy(void *state)
{
    struct prim3 *p = state;
    if (!p)
        return;
    if (p->prim)
        d3.fn.dnnl_primitive_destroy(p->prim);
    for (int i = 0; i < 4; i++)
        if (p->md[i])
            d3.fn.dnnl_memory_desc_destroy(p->md[i]);
    free(p);
}

static void *make_attr(const struct amp_onednn_gemm *g)
{
    void *attr = NULL, *po = NULL;
    if (d3.fn.dnnl_primitive_attr_create(&attr) != D3_SUCCESS)
        return NULL;
    int bad = d3.fn.dnnl_primitive_attr_set_scratchpad_mode(attr, D3_SCRATCHPAD_USER) != D3_SUCCESS;
    if (!bad && (g->alpha != 1.0f || g->beta != 0.0f)) {
        /* D = alpha * XY + beta * D: the linear post-op scales the
         * product, then the sum adds the old output. */
        bad =
            d3.fn.dnnl_post_ops_create(&po) != D3_SUCCESS ||
            (g->alpha != 1.0f && d3.fn.dnnl_post_ops_append_eltwise(po, D3_ELTWISE_LINEAR, g->alpha,
                                                                    0.0f) != D3_SUCCESS) ||
            (g->beta != 0.0f && d3.fn.dnnl_post_ops_append_sum(po, g->beta, 0, 0) != D3_SUCCESS) ||
            d3.fn.dnnl_primitive_attr_set_post_ops(attr, po) != D3_SUCCESS;
        if (po)
            d3.fn.dnnl_post_ops_destroy(po);
    }
    if (bad) {
        d3.fn.dnnl_primitive_attr_destroy(attr);
        return NULL;
    }
    return attr;
}

static enum amp_onednn_status make(const struct amp_onednn_gemm *g, void **state,
                                   size_t *scratch_bytes, char *impl, size_t impllen)
{
    int lowp = g->dtype == AMP_DTYPE_BF16 ? D3_BF16 : D3_F16;
    int64_t xd[2] = {g->m, g->k}, yd[2] = {g->k, g->n}, dd[2] = {g->m, g->n};
    int64_t xs[2] = {g->k, 1}, ys[2] = {g->n, 1}, ds[2] = {g->n, 1};
    if (g->trans_x)
        xs[0] = 1, xs[1] = g->m;
    if (g->trans_y)
        ys[0] = 1, ys[1] = g->k;
    struct prim3 *p = calloc(1, sizeof *p);
    void *attr = NULL, *pd = NULL;
    if (!p || d3.fn.dnnl_memory_desc_create_with_strides(&p->md[0], 2, xd, lowp, xs) ||
        d3.fn.dnnl_memory_desc_create_with_strides(&p->md[1], 2, yd, lowp, ys) ||
        d3.fn.dnnl_memory_desc_create_with_strides(&p->md[2], 2, dd, D3_F32, ds) ||
        !(attr = make_attr(g))) {
        destroy(p);
        return AMP_ONEDNN_FAILED;
    }
    int created = d3.fn.dnnl_matmul_primitive_desc_create(&pd, d3.engine, p->md[0], p->md[1], NULL,
                                                          p->md[2], attr);
    d3.fn.dnnl_primitive_attr_destroy(attr);
    if (created == D3_UNIMPLEMENTED) {
        if (impl)
            snprintf(impl, impllen, "no %s matmul", g->dtype == AMP_DTYPE_BF16 ? "bf16" : "fp16");
        destroy(p);
        return AMP_ONEDNN_NOT_NATIVE;
    }
    if (created != D3_SUCCESS) {
        destroy(p);
        return AMP_ONEDNN_FAILED;
    }
    const char *name = "?";
    d3.fn.dnnl_primitive_desc_query(pd, D3_QUERY_IMPL_INFO_STR, 0, &name);
    if (impl)
        snprintf(impl, impllen, "%s", name ? name : "?");
    enum amp_onednn_status st = AMP_ONEDNN_OK;
    if (!name || !amp_onednn_impl_is_native(name, g->dtype)) {
        st = AMP_ONEDNN_NOT_NATIVE;
    } else {
        const void *s = d3.fn.dnnl_primitive_desc_query_md(pd, D3_QUERY_SCRATCHPAD_MD, 0);
        p->scratch_bytes = s ? d3.fn.dnnl_memory_desc_get_size(s) : 0;
        if ((p->scratch_bytes && d3.fn.dnnl_memory_desc_clone(&p->md[3], s) != D3_SUCCESS) ||
            d3.fn.dnnl_primitive_create(&p->prim, pd) != D3_SUCCESS)
            st = AMP_ONEDNN_FAILED;
    }
    d3.fn.dnnl_primitive_desc_destroy(pd);
    if (st != AMP_ONEDNN_OK) {
        destroy(p);
        return st;
    }
    *state = p;
    *scratch_bytes = p->scratch_bytes;
    return st;
}

static void unbind(void *state)
{
    struct run3 *r = state;
    if (!r)
        return;
    if (r->stream)
        d3.fn.dnnl_stream_destroy(r->stream);
    for (int i = 0; i < 4; i++)
        if (r->mem[i])
            d3.fn.dnnl_memory_destroy(r->mem[i]);
    free(r);
}

static void *bind(void *state, const uint16_t *x, const uint16_t *y, float *d, void *scratch)
{
    struct prim3 *p = state;
    struct run3 *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    void *handle[4] = {(void *)x, (void *)y, d, scratch};
    for (int i = 0; i < (p->scratch_bytes ? 4 : 3); i++)
        if (d3.fn.dnnl_memory_create(&r->mem[i], p->md[i], d3.engine, handle[i]) != D3_SUCCESS) {
            unbind(r);
            return NULL;
        }
    if (d3.fn.dnnl_stream_create(&r->stream, d3.engine, D3_STREAM_DEFAULT) != D3_SUCCESS) {
        unbind(r);
        return NULL;
    }
    return r;
}

static int exec(void *state, void *run)
{
    struct prim3 *p = state;
    struct run3 *r = run;
    const struct d3_arg args[4] = {{D3_ARG_SRC, r->mem[0]},
                                   {D3_ARG_WEIGHTS, r->mem[1]},
                                   {D3_ARG_DST, r->mem[2]},
                                   {D3_ARG_SCRATCHPAD, r->mem[3]}};
    return d3.execute(p->prim, r->stream, p->scratch_bytes ? 4 : 3, args) != D3_SUCCESS ||
                   d3.fn.dnnl_stream_wait(r->stream) != D3_SUCCESS
               ? -1
               : 0;
}

/* ---- the offer ---- */

static pthread_mutex_t offer_lock = PTHREAD_MUTEX_INITIALIZER;

/* oneDNN 3.x inside the library at path (loaded at base), offered through
 * the core (shim/resolve.h) by the oneDNN wing that reached it: execute is
 * its dnnl_primitive_execute's trampoline. Every primitive made afterwards
 * is made on it; the first offer stands. The log says why not when its
 * functions are not all there. */
static void take_offer(const char *path, uintptr_t base, void *execute)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    pthread_mutex_lock(&offer_lock);
    if (atomic_load(&offered) || !execute)
        goto out;
    if (amp_object_local_functions(path, base, d3_list.names, (int)d3_list.count,
                                   (void **)&d3.fn) != (int)d3_list.count) {
        amp_log(AMP_LOG_INFO,
                "oneDNN inside %s: not all of the matmul functions the native executor calls are "
                "there; lowered products run on libdnnl.so.2 or emulated",
                name);
        goto out;
    }
    *(void **)&d3.execute = execute;
    const struct d3_version *v = d3.fn.dnnl_version();
    if (!v || v->major != 3 || d3.fn.dnnl_engine_create(&d3.engine, D3_CPU, 0) != D3_SUCCESS) {
        amp_log(AMP_LOG_INFO, "oneDNN inside %s: no CPU engine for the native executor", name);
        goto out;
    }
    snprintf(library_path, sizeof library_path, "%s", path);
    backend.id = 3;
    snprintf(backend.version, sizeof backend.version, "%d.%d.%d inside %s", v->major, v->minor,
             v->patch, name);
    backend.make = make;
    backend.destroy = destroy;
    backend.bind = bind;
    backend.exec = exec;
    backend.unbind = unbind;
    atomic_store_explicit(&offered, &backend, memory_order_release);
out:
    pthread_mutex_unlock(&offer_lock);
}

__attribute__((constructor(101))) static void register_taker(void)
{
    amp_resolve_set_inside_onednn_taker(take_offer);
}
