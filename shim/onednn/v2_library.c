/* oneDNN 2.x: the program's libdnnl, found by a function of it at the
 * first call (never linked, never opened anew), and what every room asks of
 * it: a primitive's kind and direction, hashes, low descriptors, whether a
 * kernel is native. The twins' design is twin.h's. */
#ifdef AMPSHIM_HAVE_ONEDNN

#include "shim/onednn/v2.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "policy/policy.h"
#include "runtime/log.h"
#include "shim/helpers.h"

struct amp_dnnl_library amp_dn;
int amp_dn_rows[N_PKINDS][N_DIRS][3];

static const char *const pkind_names[N_PKINDS] = {"convolution", "deconvolution", "inner_product",
                                                  "matmul", "rnn"};
static const char *const dir_names[N_DIRS] = {"forward", "backward_data", "backward_weights"};

static _Atomic int ready; /* 1: a 2.x library with every function; -1: none */
static pthread_once_t ready_once = PTHREAD_ONCE_INIT;
static void *_Atomic ready_for; /* the real dnnl_primitive_execute it is found by */

const struct amp_dn_roles amp_dn_roles[N_DIRS] = {
    [FWD] = {{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS}, {DNNL_ARG_DST, 0}, DNNL_ARG_BIAS},
    [BWD_DATA] = {{DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS}, {DNNL_ARG_DIFF_SRC, 0}, 0},
    [BWD_WEIGHTS] = {{DNNL_ARG_SRC, DNNL_ARG_DIFF_DST},
                     {DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS},
                     0},
};


static int find_hook(const char *name)
{
    for (int h = 0; h < AMP_HOOK_COUNT; h++)
        if (strcmp(amp_hook_names[h], name) == 0)
            return h;
    return -1;
}

/* The program's libdnnl functions the wing calls: one list for the one
 * resolver (shim/helpers.h), taken from the object that defines the real
 * dnnl_primitive_execute. */
AMP_HELPER_LIST_OF(static, dnnl_list, "oneDNN", NULL, sizeof amp_dn, AMP_DNNL_FUNCTIONS,
                   AMP_HELPER_FN_NAME);

static int find_library(void)
{
    Dl_info info;
    void *by = atomic_load(&ready_for);
    if (!by || !dladdr(by, &info) || !info.dli_fname)
        return -1;
    if (!amp_helpers_resolve(&dnnl_list, &amp_dn, by)) {
        amp_log(AMP_LOG_INFO, "%s has no %s: its primitives run as made", info.dli_fname,
                amp_helpers_missing(&dnnl_list, &amp_dn));
        return -1;
    }
    const dnnl_version_t *v = amp_dn.dnnl_version();
    if (v->major != 2) {
        amp_log(AMP_LOG_INFO,
                "%s is oneDNN %d.%d: ampshim knows the 2.x API only, its "
                "primitives run as made",
                info.dli_fname, v->major, v->minor);
        return -1;
    }
    char name[96];
    for (int k = 0; k < N_PKINDS; k++)
        for (int d = 0; d < N_DIRS; d++)
            for (int r = 0; r < 3; r++) {
                if (k == P_CONV || k == P_DECONV)
                    snprintf(name, sizeof name, "dnnl_%s_%dd_%s", pkind_names[k], r + 1,
                             dir_names[d]);
                else if (k == P_MATMUL)
                    snprintf(name, sizeof name, "dnnl_matmul");
                else if (k == P_RNN)
                    snprintf(name, sizeof name, "dnnl_rnn_%s", d == FWD ? "forward" : "backward");
                else
                    snprintf(name, sizeof name, "dnnl_%s_%s", pkind_names[k], dir_names[d]);
                amp_dn_rows[k][d][r] = find_hook(name);
            }
    return 1;
}

/* Threads that find `ready` still 0 wait in pthread_once: it is set once. */
static void open_library(void)
{
    atomic_store_explicit(&ready, find_library(), memory_order_release);
}

/* The kind and direction of pd, or -1. */
int amp_dn_kind_of(const_dnnl_primitive_desc_t pd, enum pkind *k, enum dir *d)
{
    dnnl_primitive_kind_t kind;
    if (amp_dn.dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind) != dnnl_success)
        return -1;
    switch (kind) {
    case dnnl_convolution:
        *k = P_CONV;
        break;
    case dnnl_deconvolution:
        *k = P_DECONV;
        break;
    case dnnl_inner_product:
        *k = P_IP;
        break;
    case dnnl_matmul:
        *k = P_MATMUL;
        *d = FWD;
        return 0;
    case dnnl_rnn:
        *k = P_RNN;
        break;
    default:
        return -1;
    }
    dnnl_prop_kind_t prop;
    if (amp_dn.dnnl_primitive_desc_query(pd, dnnl_query_prop_kind, 0, &prop) != dnnl_success)
        return -1;
    if (prop == dnnl_forward_training || prop == dnnl_forward_inference)
        *d = FWD;
    else if (prop == dnnl_backward_data)
        *d = BWD_DATA;
    else if (prop == dnnl_backward_weights)
        *d = BWD_WEIGHTS;
    else if (prop == dnnl_backward && *k == P_RNN)
        *d = BWD_DATA;
    else
        return -1;
    return 0;
}

/* Whether the program's libdnnl is known (found by real_fn, one of its
 * functions, at the first call). */
int amp_dn_ready(void *real_fn)
{
    if (__builtin_expect(atomic_load_explicit(&ready, memory_order_acquire) == 0, 0)) {
        void *none = NULL;
        atomic_compare_exchange_strong(&ready_for, &none, real_fn);
        pthread_once(&ready_once, open_library);
    }
    return atomic_load_explicit(&ready, memory_order_acquire) == 1;
}

int amp_dn_known(void)
{
    return atomic_load_explicit(&ready, memory_order_acquire) == 1;
}

uint64_t amp_dn_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0x9e3779b97f4a7c15u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3u;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3u;
    return h;
}

int amp_dn_low_md(dnnl_memory_desc_t *md, const dnnl_memory_desc_t *like, int dtype)
{
    return amp_dn.dnnl_memory_desc_init_by_tag(md, like->ndims, like->dims,
                                               dtype == AMP_DTYPE_FP16 ? dnnl_f16 : dnnl_bf16,
                                               dnnl_format_tag_any) == dnnl_success
               ? 0
               : -1;
}

/* Whether oneDNN's implementation of pd is a native kernel (not a
 * reference one); why says which it is when not. Asked of a twin and of the
 * probe of a lowered descriptor. */
int amp_dn_impl_is_native(const_dnnl_primitive_desc_t pd, char *why, size_t whylen)
{
    const char *impl = NULL;
    if (amp_dn.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
        impl && !strstr(impl, "ref"))
        return 1;
    snprintf(why, whylen, "oneDNN's only kernel for it is %s", impl ? impl : "unknown");
    return 0;
}

#endif
