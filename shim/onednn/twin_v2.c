/* Low-precision twins of oneDNN 2.x primitives (shim/onednn/twin.h).
 *
 * A twin is made from the program's own primitive descriptor: its op
 * descriptor copied with the inputs of its direction (forward: src and
 * weights; backward data: diff_dst and weights; backward weights: src and
 * diff_dst) turned into bf16 or fp16 in whatever layout oneDNN prefers, and
 * its outputs, bias included, left exactly as the program's primitive has
 * them (fp32, the program's layout), so the twin writes the program's memory
 * itself. Its attributes are a clone of the program's (post-ops and their
 * arguments, output scales, fpmath mode), with a scratchpad the shim owns
 * (the thread's scratch). The inputs are converted by oneDNN reorders into
 * that scratch; every other argument of the call (post-op operands, runtime
 * scales) is passed to the twin as the program passed it.
 *
 * A twin is only made where oneDNN has a native kernel for it (its
 * implementation is not a reference one): elsewhere the primitive runs as
 * made, and one info line says so. Twins are cached by what they depend on
 * (the engine, the kind, direction and geometry, the memory descriptors of
 * the program's primitive and a digest of its attributes), not by any
 * address of the program's: torch makes a primitive for every call. The
 * program's primitive descriptor, primitives and memory are only read. */
#include "shim/onednn/twin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "policy/policy.h"
#include "runtime/log.h"

#ifdef AMPSHIM_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>

/* ---- the program's libdnnl ---- */

#define AMP_DNNL_FUNCTIONS(X)                                                                      \
    X(dnnl_version)                                                                                \
    X(dnnl_primitive_get_primitive_desc)                                                           \
    X(dnnl_primitive_desc_query)                                                                   \
    X(dnnl_primitive_desc_query_md)                                                                \
    X(dnnl_primitive_desc_get_attr)                                                                \
    X(dnnl_primitive_desc_create)                                                                  \
    X(dnnl_primitive_desc_destroy)                                                                 \
    X(dnnl_primitive_attr_clone)                                                                   \
    X(dnnl_primitive_attr_destroy)                                                                 \
    X(dnnl_primitive_attr_set_scratchpad_mode)                                                     \
    X(dnnl_primitive_attr_get_fpmath_mode)                                                         \
    X(dnnl_primitive_attr_get_output_scales)                                                       \
    X(dnnl_primitive_attr_get_post_ops)                                                            \
    X(dnnl_post_ops_len)                                                                           \
    X(dnnl_post_ops_get_kind)                                                                      \
    X(dnnl_post_ops_get_params_sum_v2)                                                             \
    X(dnnl_post_ops_get_params_eltwise)                                                            \
    X(dnnl_post_ops_get_params_binary)                                                             \
    X(dnnl_engine_get_kind)                                                                        \
    X(dnnl_engine_create)                                                                          \
    X(dnnl_memory_desc_init_by_tag)                                                                \
    X(dnnl_memory_desc_get_size)                                                                   \
    X(dnnl_memory_desc_equal)                                                                      \
    X(dnnl_reorder_primitive_desc_create)                                                          \
    X(dnnl_primitive_create)                                                                       \
    X(dnnl_primitive_destroy)                                                                      \
    X(dnnl_memory_create)                                                                          \
    X(dnnl_memory_destroy)                                                                         \
    X(dnnl_memory_get_memory_desc)                                                                 \
    X(dnnl_memory_get_data_handle)

static struct {
#define AMP_X_FIELD(f) __typeof__(f) *f;
    AMP_DNNL_FUNCTIONS(AMP_X_FIELD)
#undef AMP_X_FIELD
} dn;

/* The directions, and the primitive kinds that have twins. */
enum dir { FWD, BWD_DATA, BWD_WEIGHTS, N_DIRS };
enum pkind { P_CONV, P_DECONV, P_IP, P_MATMUL, P_RNN, N_PKINDS };
static const char *const pkind_names[N_PKINDS] = {"convolution", "deconvolution", "inner_product",
                                                  "matmul", "rnn"};
static const char *const dir_names[N_DIRS] = {"forward", "backward_data", "backward_weights"};

/* The primitive rows, found by name in the generated hook list: [kind][dir][rank - 1]
 * (rank: spatial dimensions for (de)convolutions, 1 for the others). */
static int rows[N_PKINDS][N_DIRS][3];
static _Atomic int ready; /* 1: a 2.x library with every function; -1: none */
static pthread_once_t ready_once = PTHREAD_ONCE_INIT;
static void *_Atomic ready_for; /* the real dnnl_primitive_execute it is found by */

static int find_hook(const char *name)
{
    for (int h = 0; h < AMP_HOOK_COUNT; h++)
        if (strcmp(amp_hook_names[h], name) == 0)
            return h;
    return -1;
}

static int find_library(void)
{
    Dl_info info;
    void *h = NULL, *by = atomic_load(&ready_for);
    if (!by || !dladdr(by, &info) || !info.dli_fname ||
        !(h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
        return -1;
#define AMP_X_LOOKUP(f)                                                                            \
    if (!(*(void **)&dn.f = dlsym(h, #f))) {                                                       \
        amp_log(AMP_LOG_INFO, "%s has no %s: its primitives run as made", info.dli_fname, #f);     \
        return -1;                                                                                 \
    }
    AMP_DNNL_FUNCTIONS(AMP_X_LOOKUP)
#undef AMP_X_LOOKUP
    const dnnl_version_t *v = dn.dnnl_version();
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
                rows[k][d][r] = find_hook(name);
            }
    return 1;
}

/* Threads that find `ready` still 0 wait in pthread_once: it is set once. */
static void open_library(void)
{
    atomic_store_explicit(&ready, find_library(), memory_order_release);
}

static uint64_t hash_bytes(const void *p, size_t n);
static int low_md(dnnl_memory_desc_t *md, const dnnl_memory_desc_t *like, int dtype);

/* ---- what a primitive is ---- */

/* The arguments of each direction: inputs converted, then the rest. */
struct roles {
    int in[2];
    int out[2]; /* outputs, 0 where none */
    int bias;   /* the bias input kept in fp32 (forward), 0 where none */
};
static const struct roles roles_of[N_DIRS] = {
    [FWD] = {{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS}, {DNNL_ARG_DST, 0}, DNNL_ARG_BIAS},
    [BWD_DATA] = {{DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS}, {DNNL_ARG_DIFF_SRC, 0}, 0},
    [BWD_WEIGHTS] = {{DNNL_ARG_SRC, DNNL_ARG_DIFF_DST},
                     {DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS},
                     0},
};

static const dnnl_memory_desc_t *arg_md(const_dnnl_primitive_desc_t pd, int arg)
{
    const dnnl_memory_desc_t *md = dn.dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    return md && md->ndims > 0 ? md : NULL;
}

static double elems(const dnnl_memory_desc_t *md)
{
    double n = 1;
    for (int i = 0; i < md->ndims; i++)
        n *= (double)md->dims[i];
    return n;
}

/* The kind and direction of pd, or -1. */
static int kind_of(const_dnnl_primitive_desc_t pd, enum pkind *k, enum dir *d)
{
    dnnl_primitive_kind_t kind;
    if (dn.dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind) != dnnl_success)
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
    if (dn.dnnl_primitive_desc_query(pd, dnnl_query_prop_kind, 0, &prop) != dnnl_success)
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
static int library_ready(void *real_fn)
{
    if (__builtin_expect(atomic_load_explicit(&ready, memory_order_acquire) == 0, 0)) {
        void *none = NULL;
        atomic_compare_exchange_strong(&ready_for, &none, real_fn);
        pthread_once(&ready_once, open_library);
    }
    return atomic_load_explicit(&ready, memory_order_acquire) == 1;
}

/* ---- convolutions lowered in their descriptors ---- */

static int low_type(dnnl_data_type_t t)
{
    return t == dnnl_bf16 || t == dnnl_f16;
}

/* The data descriptors of a convolution descriptor in direction d: the
 * inputs, then the output. */
static void conv_mds(const dnnl_convolution_desc_t *cd, enum dir d, const dnnl_memory_desc_t *md[3])
{
    md[0] = d == BWD_DATA ? &cd->diff_dst_desc : &cd->src_desc;
    md[1] = d == BWD_WEIGHTS ? &cd->diff_dst_desc : &cd->weights_desc;
    md[2] = d == FWD ? &cd->dst_desc : d == BWD_DATA ? &cd->diff_src_desc : &cd->diff_weights_desc;
}

/* What identifies a lowered descriptor: its direction, geometry and the
 * dimensions of its data (not their types or layouts, which lowering and
 * the primitive change). */
static uint64_t desc_key(const dnnl_convolution_desc_t *cd, enum dir d)
{
    struct {
        int64_t dir;
        dnnl_dims_t geometry[4], dims[3];
    } k;
    const dnnl_memory_desc_t *md[3];
    memset(&k, 0, sizeof k);
    conv_mds(cd, d, md);
    k.dir = d;
    memcpy(k.geometry[0], cd->strides, sizeof cd->strides);
    memcpy(k.geometry[1], cd->dilates, sizeof cd->dilates);
    memcpy(k.geometry[2], cd->padding[0], sizeof cd->padding[0]);
    memcpy(k.geometry[3], cd->padding[1], sizeof cd->padding[1]);
    for (int i = 0; i < 3; i++)
        memcpy(k.dims[i], md[i]->dims, sizeof md[i]->dims);
    uint64_t h = hash_bytes(&k, sizeof k);
    return h ? h : 1;
}

/* Tables of descriptor keys, inserted once, never removed (a program has
 * few shapes; a full table remembers no more): the descriptors lowered so
 * far, and the probe's verdicts per shape and dtype (below). */
enum { LOWERED_KEYS = 4096 };
static _Atomic uint64_t lowered_keys[LOWERED_KEYS], kernel_yes[LOWERED_KEYS],
    kernel_no[LOWERED_KEYS];

static int key_find(_Atomic uint64_t *table, uint64_t key, int insert)
{
    for (unsigned i = 0, slot = (unsigned)key % LOWERED_KEYS; i < LOWERED_KEYS;
         i++, slot = (slot + 1) % LOWERED_KEYS) {
        uint64_t seen = atomic_load_explicit(&table[slot], memory_order_acquire);
        if (seen == key)
            return 1;
        if (seen == 0) {
            if (!insert)
                return 0;
            if (atomic_compare_exchange_strong(&table[slot], &seen, key) || seen == key)
                return 1;
        }
    }
    return 0;
}

static int lowered_find(uint64_t key, int insert)
{
    return key_find(lowered_keys, key, insert);
}

static double conv_madds(const dnnl_memory_desc_t *y, const dnnl_memory_desc_t *w)
{
    return y->dims[1] > 0 ? elems(y) * elems(w) / (double)y->dims[1] : 0;
}

int amp_dnnl_desc_row(const void *desc, int dir, void *real_fn, double *madds)
{
    const dnnl_convolution_desc_t *cd = desc;
    const dnnl_memory_desc_t *md[3];
    if (!library_ready(real_fn) || dir < FWD || dir > BWD_WEIGHTS ||
        cd->primitive_kind != dnnl_convolution)
        return -1;
    conv_mds(cd, (enum dir)dir, md);
    for (int i = 0; i < 3; i++)
        if (md[i]->data_type != dnnl_f32 || (i < 2 && md[i]->format_kind != dnnl_format_kind_any))
            return -1;
    int rank = cd->src_desc.ndims - 2;
    if (rank < 1 || rank > 3)
        return -1;
    const dnnl_memory_desc_t *y = dir == FWD ? &cd->dst_desc : &cd->diff_dst_desc;
    *madds = conv_madds(y, dir == BWD_WEIGHTS ? &cd->diff_weights_desc : &cd->weights_desc);
    return rows[P_CONV][dir][rank - 1];
}

/* The shim's own CPU engine, for the probe (made once; NULL if refused). */
static dnnl_engine_t probe_engine;
static pthread_once_t probe_engine_once = PTHREAD_ONCE_INIT;

static void make_probe_engine(void)
{
    if (dn.dnnl_engine_create(&probe_engine, dnnl_cpu, 0) != dnnl_success)
        probe_engine = NULL;
}

/* Whether oneDNN's implementation of pd is a native kernel (not a
 * reference one); why says which it is when not. Asked of a twin and of the
 * probe of a lowered descriptor. */
static int impl_is_native(const_dnnl_primitive_desc_t pd, char *why, size_t whylen)
{
    const char *impl = NULL;
    if (dn.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
        impl && !strstr(impl, "ref"))
        return 1;
    snprintf(why, whylen, "oneDNN's only kernel for it is %s", impl ? impl : "unknown");
    return 0;
}

/* Whether oneDNN makes a native kernel for the lowered convolution cd (its
 * inputs already low) in direction d on this CPU: 1, or 0 with why. A
 * backward one is made with its forward twin as the hint, as callers do. */
static int conv_kernel_exists(const dnnl_convolution_desc_t *cd, enum dir d, int dtype, char *why,
                              size_t whylen)
{
    const dnnl_version_t *v = dn.dnnl_version();
    pthread_once(&probe_engine_once, make_probe_engine);
    if (!probe_engine) {
        snprintf(why, whylen, "oneDNN made no CPU engine to ask");
        return 0;
    }
    dnnl_primitive_desc_t hint = NULL, pd = NULL;
    int yes = 0;
    if (d != FWD) {
        dnnl_convolution_desc_t h = *cd;
        const dnnl_memory_desc_t *src = d == BWD_DATA ? &cd->diff_src_desc : &cd->src_desc,
                                 *w = d == BWD_WEIGHTS ? &cd->diff_weights_desc : &cd->weights_desc;
        memset(&h.src_desc, 0, sizeof h.src_desc);
        memset(&h.diff_src_desc, 0, sizeof h.diff_src_desc);
        memset(&h.weights_desc, 0, sizeof h.weights_desc);
        memset(&h.diff_weights_desc, 0, sizeof h.diff_weights_desc);
        memset(&h.bias_desc, 0, sizeof h.bias_desc);
        memset(&h.diff_bias_desc, 0, sizeof h.diff_bias_desc);
        memset(&h.dst_desc, 0, sizeof h.dst_desc);
        memset(&h.diff_dst_desc, 0, sizeof h.diff_dst_desc);
        h.prop_kind = dnnl_forward_training;
        if (low_md(&h.src_desc, src, dtype) < 0 || low_md(&h.weights_desc, w, dtype) < 0 ||
            low_md(&h.dst_desc, &cd->diff_dst_desc, dtype) < 0 ||
            dn.dnnl_primitive_desc_create(&hint, &h, NULL, probe_engine, NULL) != dnnl_success) {
            snprintf(why, whylen, "oneDNN %d.%d.%d makes no %s forward convolution of its shape",
                     v->major, v->minor, v->patch, amp_dtype_names[dtype]);
            goto out;
        }
    }
    if (dn.dnnl_primitive_desc_create(&pd, cd, NULL, probe_engine, hint) != dnnl_success) {
        snprintf(why, whylen, "oneDNN %d.%d.%d makes no %s convolution of its shape", v->major,
                 v->minor, v->patch, amp_dtype_names[dtype]);
        goto out;
    }
    yes = impl_is_native(pd, why, whylen);
out:
    if (pd)
        dn.dnnl_primitive_desc_destroy(pd);
    if (hint)
        dn.dnnl_primitive_desc_destroy(hint);
    return yes;
}

/* The last descriptors this thread lowered, for the fallback at primitive
 * descriptor creation (amp_dnnl_desc_unlowered). */
enum { RECENT = 4 };
static __thread const void *recent_lowered[RECENT];
static __thread unsigned recent_next;
static uint8_t told_no_kernel[AMP_HOOK_COUNT][AMP_DTYPE_COUNT];

int amp_dnnl_desc_lower(void *desc, int dir, int dtype)
{
    dnnl_convolution_desc_t *cd = desc;
    const dnnl_memory_desc_t *md[3];
    conv_mds(cd, (enum dir)dir, md);
    dnnl_memory_desc_t low[3];
    for (int i = 0; i < 2; i++)
        if (low_md(&low[i], md[i], dtype) < 0)
            return -1;
    /* AMPSHIM_OUTPUT=round: the output is stored in the low dtype too (as
     * torch.autocast stores it) where the caller left its layout open; the
     * caller's reorder back to its own fp32 memory widens it. */
    int round_output = amp_live_load(&amp_rt.cfg.output_round) &&
                       md[2]->format_kind == dnnl_format_kind_any &&
                       low_md(&low[2], md[2], dtype) == 0;
    uint64_t key = desc_key(cd, (enum dir)dir);
    /* oneDNN is asked first, on a copy, once per shape, dtype and output rule. */
    uint64_t probe_words[2] = {key, (uint64_t)(dtype * 2 + round_output)};
    uint64_t probe_key = hash_bytes(probe_words, sizeof probe_words);
    probe_key = probe_key ? probe_key : 1;
    if (key_find(kernel_no, probe_key, 0))
        return AMP_DNNL_NO_KERNEL;
    if (!key_find(kernel_yes, probe_key, 0)) {
        dnnl_convolution_desc_t *copy = malloc(sizeof *copy);
        char why[160] = "";
        if (!copy)
            return -1;
        *copy = *cd;
        const dnnl_memory_desc_t *cmd[3];
        conv_mds(copy, (enum dir)dir, cmd);
        for (int i = 0; i < 2 + round_output; i++)
            *(dnnl_memory_desc_t *)cmd[i] = low[i];
        int yes = conv_kernel_exists(copy, (enum dir)dir, dtype, why, sizeof why);
        free(copy);
        key_find(yes ? kernel_yes : kernel_no, probe_key, 1);
        if (!yes) {
            int row = rows[P_CONV][dir][cd->src_desc.ndims - 3];
            if (row >= 0 && !__atomic_exchange_n(&told_no_kernel[row][dtype], 1, __ATOMIC_RELAXED))
                amp_log(AMP_LOG_INFO,
                        "%s in %s: %s on this CPU; such convolutions run as made in fp32, counted "
                        "nounits",
                        amp_hook_names[row], amp_dtype_names[dtype], why);
            return AMP_DNNL_NO_KERNEL;
        }
    }
    if (!lowered_find(key, 1))
        return -1; /* no room to remember it: not lowered, so every execution counts right */
    for (int i = 0; i < 2 + round_output; i++)
        *(dnnl_memory_desc_t *)md[i] = low[i];
    recent_lowered[recent_next++ % RECENT] = desc;
    return 0;
}

size_t amp_dnnl_conv_desc_size(void)
{
    return sizeof(dnnl_convolution_desc_t);
}

int amp_dnnl_desc_unlowered(const void *op_desc, void *fp32, size_t fp32_size)
{
    const dnnl_convolution_desc_t *cd = op_desc;
    int mine = 0;
    for (int i = 0; i < RECENT; i++)
        mine |= op_desc && recent_lowered[i] == op_desc;
    if (!mine || fp32_size < sizeof *cd || atomic_load(&ready) != 1 ||
        cd->primitive_kind != dnnl_convolution)
        return 0;
    enum dir d = cd->prop_kind == dnnl_backward_data      ? BWD_DATA
                 : cd->prop_kind == dnnl_backward_weights ? BWD_WEIGHTS
                                                          : FWD;
    dnnl_convolution_desc_t *out = fp32;
    *out = *cd;
    const dnnl_memory_desc_t *md[3];
    conv_mds(out, d, md);
    /* The caller made them fp32 in "any" layout (amp_dnnl_desc_row): what
     * lowering changed is the data type alone. */
    for (int i = 0; i < 3; i++)
        if (low_type(md[i]->data_type) && md[i]->format_kind == dnnl_format_kind_any &&
            dn.dnnl_memory_desc_init_by_tag((dnnl_memory_desc_t *)md[i], md[i]->ndims, md[i]->dims,
                                            dnnl_f32, dnnl_format_tag_any) != dnnl_success)
            return 0;
    return 1;
}

/* A convolution with low inputs and fp32 outputs that the shim lowered in
 * its descriptor: its row, or -1. */
static int lowered_row(const_dnnl_primitive_desc_t pd, enum dir d, int rank)
{
    const dnnl_convolution_desc_t *cd = NULL;
    if (dn.dnnl_primitive_desc_query(pd, dnnl_query_op_d, 0, (void *)&cd) != dnnl_success || !cd ||
        !lowered_find(desc_key(cd, d), 0))
        return -1;
    return rows[P_CONV][d][rank - 1];
}

void amp_dnnl_classify(void *prim, amp_dnnl_execute_fn real_execute, struct amp_dnnl_call *c)
{
    c->hook = -1;
    c->lowered = 0;
    c->shape[0] = c->shape[1] = c->shape[2] = 0;
    const_dnnl_primitive_desc_t pd;
    enum pkind k;
    enum dir d;
    if (!library_ready((void *)real_execute) || !prim ||
        dn.dnnl_primitive_get_primitive_desc(prim, &pd) != dnnl_success || kind_of(pd, &k, &d) < 0)
        return;
    c->pd = pd;
    if (k == P_RNN) { /* no twin (f32 outputs are refused): classified to be counted */
        c->hook = rows[k][d][0];
        c->madds = 1e300;
        return;
    }
    const struct roles *r = &roles_of[d];
    const dnnl_memory_desc_t *in0 = arg_md(pd, r->in[0]), *in1 = arg_md(pd, r->in[1]),
                             *out = arg_md(pd, r->out[0]);
    if (!in0 || !in1 || !out)
        return;
    int row = -1;
    if (k == P_CONV && low_type(in0->data_type) && low_type(in1->data_type) &&
        (out->data_type == dnnl_f32 || low_type(out->data_type))) {
        /* lowered in its descriptor: its row, sized below as any */
        row = in0->ndims >= 3 && in0->ndims <= 5 ? lowered_row(pd, d, in0->ndims - 2) : -1;
        if (row < 0)
            return;
    } else {
        if (in0->data_type != dnnl_f32 || in1->data_type != dnnl_f32 || out->data_type != dnnl_f32)
            return;
        dnnl_engine_t engine;
        dnnl_engine_kind_t ek;
        if (dn.dnnl_primitive_desc_query(pd, dnnl_query_engine, 0, &engine) != dnnl_success ||
            dn.dnnl_engine_get_kind(engine, &ek) != dnnl_success || ek != dnnl_cpu)
            return;
    }
    /* Multiply-adds: every element of the large side (forward dst, the
     * backward passes' diff_dst; a deconvolution's src) meets one filter
     * slice: the weights over their output channels (over their input
     * channels for a deconvolution); a matmul's dst, K each. */
    const dnnl_memory_desc_t *src = d == BWD_DATA ? out : in0;
    const dnnl_memory_desc_t *w = d == BWD_WEIGHTS ? out : in1;
    const dnnl_memory_desc_t *y = d == FWD ? out : d == BWD_DATA ? in0 : in1;
    int rank = 1;
    if (k == P_CONV || k == P_DECONV) {
        rank = src->ndims - 2;
        if (rank < 1 || rank > 3)
            return;
        c->madds = conv_madds(k == P_CONV ? y : src, w);
    } else if (k == P_IP) {
        c->madds = elems(w) * (double)src->dims[0];
    } else {
        c->madds = elems(y) * (double)src->dims[src->ndims - 1];
    }
    /* Its shape as the product it is: rows by columns of the large side
     * (channels, a matmul's last dimension) by the multiply-adds each
     * element takes. */
    double ys = elems(y);
    int64_t cols = y->dims[k == P_MATMUL ? y->ndims - 1 : 1];
    c->shape[1] = cols > 0 ? cols : 1;
    c->shape[0] = (int64_t)(ys / (double)c->shape[1]);
    c->shape[2] = ys > 0 ? (int64_t)(c->madds / ys + 0.5) : 0;
    c->hook = row >= 0 ? row : rows[k][d][rank - 1];
    c->lowered = row >= 0;
}

int amp_dnnl_outputs(const struct amp_dnnl_call *c, int nargs, const void *args_,
                     struct amp_dnnl_output out[AMP_DNNL_OUTPUTS_MAX])
{
    const dnnl_exec_arg_t *args = args_;
    enum pkind k;
    enum dir d;
    if (c->hook < 0 || c->lowered || !c->pd || kind_of(c->pd, &k, &d) < 0 || k == P_RNN)
        return -1;
    int n = 0;
    for (int i = 0; i < 2; i++) {
        int arg = roles_of[d].out[i];
        if (!arg)
            continue;
        dnnl_memory_t mem = NULL;
        for (int a = 0; a < nargs; a++)
            if (args[a].arg == arg)
                mem = args[a].memory;
        if (!mem) /* an optional output (diff_bias) the call does not ask for */
            continue;
        const dnnl_memory_desc_t *md = NULL;
        void *p = NULL;
        if (n == AMP_DNNL_OUTPUTS_MAX || dn.dnnl_memory_get_memory_desc(mem, &md) != dnnl_success ||
            !md || md->data_type != dnnl_f32 ||
            dn.dnnl_memory_get_data_handle(mem, &p) != dnnl_success || !p)
            return -1;
        out[n].p = p;
        out[n].elems = dn.dnnl_memory_desc_get_size(md) / sizeof(float);
        n++;
    }
    return n;
}

/* ---- twins ---- */

/* A digest of the attributes a twin must copy (its clone copies them all;
 * the digest tells twins apart). Post-ops other than sum, eltwise and
 * binary (a fused depthwise convolution, prelu) get no twin. */
enum { MAX_POST_OPS = 8 };
struct digest {
    int32_t n_post, fpmath, scale_count, scale_mask;
    int32_t kinds[MAX_POST_OPS], algs[MAX_POST_OPS];
    float params[MAX_POST_OPS][3];
    uint64_t md_hash[MAX_POST_OPS], scale_hash;
};

struct key {
    void *engine;
    int32_t dtype, kind, dir, prop; /* prop: oneDNN's propagation kind (0 for a matmul) */
    dnnl_dims_t geometry[4];        /* strides, dilates, padding left and right */
    int32_t alg, pad2;
    dnnl_memory_desc_t md[4]; /* the program's inputs, bias or second output, output */
    struct digest attr;
};

struct twin {
    struct key key;
    uint64_t hash, last_use;
    int state; /* 1 ready, -1 none, AMP_DNNL_NO_KERNEL none: no native kernel here */
    int running;
    dnnl_primitive_t prim, reorder[2];
    int in_arg[2];
    dnnl_memory_desc_t in_md[2], scratchpad_md;
    size_t in_off[2], scratchpad_off, bytes;
    uint64_t in_elems;
};

static uint64_t hash_bytes(const void *p, size_t n)
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

static int digest_attr(const_dnnl_primitive_attr_t attr, struct digest *g)
{
    const_dnnl_post_ops_t po;
    dnnl_fpmath_mode_t fpmath;
    const float *scales;
    dnnl_dim_t count;
    int mask;
    if (dn.dnnl_primitive_attr_get_fpmath_mode(attr, &fpmath) != dnnl_success ||
        dn.dnnl_primitive_attr_get_output_scales(attr, &count, &mask, &scales) != dnnl_success ||
        dn.dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success)
        return -1;
    g->fpmath = (int32_t)fpmath;
    g->scale_count = (int32_t)count;
    g->scale_mask = mask;
    g->scale_hash = scales && count > 0 ? hash_bytes(scales, (size_t)count * sizeof *scales) : 0;
    g->n_post = dn.dnnl_post_ops_len(po);
    if (g->n_post > MAX_POST_OPS)
        return -1;
    for (int i = 0; i < g->n_post; i++) {
        dnnl_primitive_kind_t k = dn.dnnl_post_ops_get_kind(po, i);
        dnnl_alg_kind_t alg = dnnl_alg_kind_undef;
        dnnl_data_type_t dt;
        const dnnl_memory_desc_t *md;
        g->kinds[i] = (int32_t)k;
        if (k == dnnl_sum) {
            if (dn.dnnl_post_ops_get_params_sum_v2(po, i, &g->params[i][0], &dt) != dnnl_success)
                return -1;
            g->params[i][1] = (float)dt;
        } else if (k == dnnl_eltwise) {
            if (dn.dnnl_post_ops_get_params_eltwise(po, i, &g->params[i][0], &alg, &g->params[i][1],
                                                    &g->params[i][2]) != dnnl_success)
                return -1;
        } else if (k == dnnl_binary) {
            if (dn.dnnl_post_ops_get_params_binary(po, i, &alg, &md) != dnnl_success)
                return -1;
            g->md_hash[i] = hash_bytes(md, sizeof *md);
        } else {
            return -1;
        }
        g->algs[i] = (int32_t)alg;
    }
    return 0;
}

/* The op descriptors that have twins, and where each argument's memory
 * descriptor lives in them. */
union op_desc {
    dnnl_convolution_desc_t conv; /* deconvolution's too */
    dnnl_inner_product_desc_t ip;
    dnnl_matmul_desc_t mm;
};

static dnnl_memory_desc_t *desc_md(union op_desc *o, enum pkind k, int arg)
{
    if (k == P_MATMUL)
        switch (arg) {
        case DNNL_ARG_SRC:
            return &o->mm.src_desc;
        case DNNL_ARG_WEIGHTS:
            return &o->mm.weights_desc;
        case DNNL_ARG_BIAS:
            return &o->mm.bias_desc;
        case DNNL_ARG_DST:
            return &o->mm.dst_desc;
        default:
            return NULL;
        }
#define AMP_MD_OF(d)                                                                               \
    switch (arg) {                                                                                 \
    case DNNL_ARG_SRC:                                                                             \
        return &(d).src_desc;                                                                      \
    case DNNL_ARG_DIFF_SRC:                                                                        \
        return &(d).diff_src_desc;                                                                 \
    case DNNL_ARG_WEIGHTS:                                                                         \
        return &(d).weights_desc;                                                                  \
    case DNNL_ARG_DIFF_WEIGHTS:                                                                    \
        return &(d).diff_weights_desc;                                                             \
    case DNNL_ARG_BIAS:                                                                            \
        return &(d).bias_desc;                                                                     \
    case DNNL_ARG_DIFF_BIAS:                                                                       \
        return &(d).diff_bias_desc;                                                                \
    case DNNL_ARG_DST:                                                                             \
        return &(d).dst_desc;                                                                      \
    case DNNL_ARG_DIFF_DST:                                                                        \
        return &(d).diff_dst_desc;                                                                 \
    default:                                                                                       \
        return NULL;                                                                               \
    }
    if (k == P_IP)
        AMP_MD_OF(o->ip)
    AMP_MD_OF(o->conv)
#undef AMP_MD_OF
}

static size_t desc_size(enum pkind k)
{
    return k == P_MATMUL ? sizeof(dnnl_matmul_desc_t)
           : k == P_IP   ? sizeof(dnnl_inner_product_desc_t)
                         : sizeof(dnnl_convolution_desc_t);
}

static int low_md(dnnl_memory_desc_t *md, const dnnl_memory_desc_t *like, int dtype)
{
    return dn.dnnl_memory_desc_init_by_tag(md, like->ndims, like->dims,
                                           dtype == AMP_DTYPE_FP16 ? dnnl_f16 : dnnl_bf16,
                                           dnnl_format_tag_any) == dnnl_success
               ? 0
               : -1;
}

/* Fills the key of c's twin in dtype; -1 when it can have none. */
static int make_key(const struct amp_dnnl_call *c, int dtype, struct key *key, enum pkind *k,
                    enum dir *d, const union op_desc **op)
{
    memset(key, 0, sizeof *key);
    const_dnnl_primitive_attr_t attr;
    if (kind_of(c->pd, k, d) < 0 || *k == P_RNN ||
        dn.dnnl_primitive_desc_query(c->pd, dnnl_query_engine, 0, &key->engine) != dnnl_success ||
        dn.dnnl_primitive_desc_query(c->pd, dnnl_query_op_d, 0, (void *)op) != dnnl_success ||
        !*op || dn.dnnl_primitive_desc_get_attr(c->pd, &attr) != dnnl_success ||
        digest_attr(attr, &key->attr) < 0)
        return -1;
    key->dtype = dtype;
    key->kind = *k;
    key->dir = *d;
    dnnl_prop_kind_t prop = dnnl_prop_kind_undef;
    if (*k != P_MATMUL)
        dn.dnnl_primitive_desc_query(c->pd, dnnl_query_prop_kind, 0, &prop);
    key->prop = (int32_t)prop;
    if (*k == P_CONV || *k == P_DECONV) {
        const dnnl_convolution_desc_t *cd = &(*op)->conv;
        memcpy(key->geometry[0], cd->strides, sizeof cd->strides);
        memcpy(key->geometry[1], cd->dilates, sizeof cd->dilates);
        memcpy(key->geometry[2], cd->padding[0], sizeof cd->padding[0]);
        memcpy(key->geometry[3], cd->padding[1], sizeof cd->padding[1]);
        key->alg = (int32_t)cd->alg_kind;
    }
    const struct roles *r = &roles_of[*d];
    int args[4] = {r->in[0], r->in[1], r->bias ? r->bias : r->out[1], r->out[0]};
    for (int i = 0; i < 4; i++) {
        const dnnl_memory_desc_t *md = args[i] ? arg_md(c->pd, args[i]) : NULL;
        if (md)
            key->md[i] = *md;
    }
    return 0;
}

/* Makes the twin of the program's primitive descriptor pd into tw (key
 * filled): 0, or -1 or AMP_DNNL_NO_KERNEL with why. */
static int build(struct twin *tw, const_dnnl_primitive_desc_t pd, enum pkind k, enum dir d,
                 const union op_desc *op, char *why, size_t whylen)
{
    const struct roles *r = &roles_of[d];
    dnnl_engine_t engine = tw->key.engine;
    union op_desc desc, hint_desc;
    dnnl_primitive_desc_t hint = NULL, tpd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    const_dnnl_primitive_attr_t pattr;
    int ok = -1;
    memset(&desc, 0, sizeof desc);
    memcpy(&desc, op, desc_size(k));
    /* Inputs in the low dtype, any layout; outputs and bias as the program's. */
    for (int i = 0; i < 2; i++)
        if (low_md(desc_md(&desc, k, r->in[i]), arg_md(pd, r->in[i]), tw->key.dtype) < 0)
            goto out;
    int keep[3] = {r->out[0], r->out[1], r->bias};
    for (int i = 0; i < 3; i++) {
        const dnnl_memory_desc_t *md = keep[i] ? arg_md(pd, keep[i]) : NULL;
        if (md)
            *desc_md(&desc, k, keep[i]) = *md;
    }
    if (dn.dnnl_primitive_desc_get_attr(pd, &pattr) != dnnl_success ||
        dn.dnnl_primitive_attr_clone(&attr, pattr) != dnnl_success ||
        dn.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success)
        goto out;
    if (d != FWD) {
        /* A backward primitive is made with the forward one it follows as
         * its hint: the same geometry, forward_training, low inputs. */
        hint_desc = desc;
        dnnl_memory_desc_t *hs = desc_md(&hint_desc, k, DNNL_ARG_SRC),
                           *hw = desc_md(&hint_desc, k, DNNL_ARG_WEIGHTS),
                           *hd = desc_md(&hint_desc, k, DNNL_ARG_DST);
        const dnnl_memory_desc_t *src =
                                     arg_md(pd, d == BWD_DATA ? DNNL_ARG_DIFF_SRC : DNNL_ARG_SRC),
                                 *w = arg_md(pd, d == BWD_DATA ? DNNL_ARG_WEIGHTS
                                                               : DNNL_ARG_DIFF_WEIGHTS),
                                 *dst = arg_md(pd, DNNL_ARG_DIFF_DST);
        if (!src || !w || !dst || low_md(hs, src, tw->key.dtype) < 0 ||
            low_md(hw, w, tw->key.dtype) < 0 || low_md(hd, dst, tw->key.dtype) < 0)
            goto out;
        memset(desc_md(&hint_desc, k, DNNL_ARG_BIAS), 0, sizeof(dnnl_memory_desc_t));
        int diffs[4] = {DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS,
                        DNNL_ARG_DIFF_DST};
        for (int i = 0; i < 4; i++)
            memset(desc_md(&hint_desc, k, diffs[i]), 0, sizeof(dnnl_memory_desc_t));
        if (k == P_IP)
            hint_desc.ip.prop_kind = dnnl_forward_training;
        else
            hint_desc.conv.prop_kind = dnnl_forward_training;
        if (dn.dnnl_primitive_desc_create(&hint, &hint_desc, NULL, engine, NULL) != dnnl_success) {
            snprintf(why, whylen, "oneDNN makes no such forward primitive on this CPU");
            ok = AMP_DNNL_NO_KERNEL;
            goto out;
        }
    }
    if (dn.dnnl_primitive_desc_create(&tpd, &desc, attr, engine, hint) != dnnl_success) {
        snprintf(why, whylen, "oneDNN makes no such primitive on this CPU");
        ok = AMP_DNNL_NO_KERNEL;
        goto out;
    }
    if (!impl_is_native(tpd, why, whylen)) {
        ok = AMP_DNNL_NO_KERNEL;
        goto out;
    }
    size_t off = 0;
    for (int i = 0; i < 2; i++) {
        const dnnl_memory_desc_t *want = arg_md(tpd, r->in[i]);
        dnnl_primitive_desc_t rpd;
        if (!want)
            goto out;
        tw->in_arg[i] = r->in[i];
        tw->in_md[i] = *want;
        tw->in_off[i] = off;
        tw->in_elems += (uint64_t)elems(want);
        off += (dn.dnnl_memory_desc_get_size(want) + 4095) & ~(size_t)4095;
        if (dn.dnnl_reorder_primitive_desc_create(&rpd, arg_md(pd, r->in[i]), engine, want, engine,
                                                  NULL) != dnnl_success)
            goto out;
        dnnl_status_t st = dn.dnnl_primitive_create(&tw->reorder[i], rpd);
        dn.dnnl_primitive_desc_destroy(rpd);
        if (st != dnnl_success)
            goto out;
    }
    const dnnl_memory_desc_t *sp =
        dn.dnnl_primitive_desc_query_md(tpd, dnnl_query_scratchpad_md, 0);
    if (sp && sp->ndims > 0) {
        tw->scratchpad_md = *sp;
        tw->scratchpad_off = off;
        off += dn.dnnl_memory_desc_get_size(sp);
    }
    tw->bytes = off;
    /* The twin writes the program's outputs in the program's layouts. */
    for (int i = 0; i < 2; i++) {
        const dnnl_memory_desc_t *mine = r->out[i] ? arg_md(pd, r->out[i]) : NULL,
                                 *its = r->out[i] ? arg_md(tpd, r->out[i]) : NULL;
        if ((mine != NULL) != (its != NULL) || (mine && !dn.dnnl_memory_desc_equal(mine, its)))
            goto out;
    }
    if (dn.dnnl_primitive_create(&tw->prim, tpd) == dnnl_success)
        ok = 0;
out:
    if (tpd)
        dn.dnnl_primitive_desc_destroy(tpd);
    if (hint)
        dn.dnnl_primitive_desc_destroy(hint);
    if (attr)
        dn.dnnl_primitive_attr_destroy(attr);
    return ok;
}

static void release(struct twin *tw)
{
    for (int i = 0; i < 2; i++)
        if (tw->reorder[i])
            dn.dnnl_primitive_destroy(tw->reorder[i]);
    if (tw->prim)
        dn.dnnl_primitive_destroy(tw->prim);
    free(tw);
}

/* The cache: twins by key. Programs use few shapes (a model's layers);
 * past this many the least recently used twin not running is dropped. */
enum { CACHE = 256 };
static struct twin *cache[CACHE];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t told[AMP_HOOK_COUNT];

void amp_dnnl_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&cache_lock, phase);
}

/* The twin for key (made if new), marked running; NULL if it has none
 * (*refused: -1, or AMP_DNNL_NO_KERNEL). */
static struct twin *twin_take(const struct amp_dnnl_call *c, const struct key *key, enum pkind k,
                              enum dir d, const union op_desc *op, int *refused, int *built)
{
    *refused = -1;
    *built = 0;
    uint64_t h = hash_bytes(key, sizeof *key);
    struct amp_quiet quiet;
    struct twin *tw = NULL;
    int free_slot = -1, lru = -1;
    amp_lock_quietly(&cache_lock, &quiet);
    for (int i = 0; i < CACHE; i++) {
        struct twin *e = cache[i];
        if (!e) {
            if (free_slot < 0)
                free_slot = i;
        } else if (e->hash == h && memcmp(&e->key, key, sizeof *key) == 0) {
            tw = e;
            break;
        } else if (!e->running && (lru < 0 || e->last_use < cache[lru]->last_use)) {
            lru = i;
        }
    }
    if (!tw && (free_slot >= 0 || lru >= 0) && (tw = calloc(1, sizeof *tw))) {
        char why[160] = "";
        tw->key = *key;
        tw->hash = h;
        int made = build(tw, c->pd, k, d, op, why, sizeof why);
        tw->state = made == 0 ? 1 : made;
        *built = 1;
        if (tw->state < 0 && !__atomic_exchange_n(&told[c->hook], 1, __ATOMIC_RELAXED)) {
            amp_log(AMP_LOG_INFO, "%s in %s: no native twin (%s); such calls run as made in fp32%s",
                    amp_hook_names[c->hook], amp_dtype_names[key->dtype],
                    why[0] ? why : "oneDNN refused it",
                    tw->state == AMP_DNNL_NO_KERNEL ? ", counted nounits" : "");
        }
        if (free_slot < 0) {
            release(cache[lru]);
            free_slot = lru;
        }
        cache[free_slot] = tw;
    }
    if (tw) {
        tw->last_use = ++cache_clock;
        if (tw->state == 1) {
            tw->running++;
        } else {
            *refused = tw->state;
            tw = NULL;
        }
    }
    amp_unlock_quietly(&cache_lock, &quiet);
    return tw;
}

static void twin_give(struct twin *tw)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&cache_lock, &quiet);
    tw->running--;
    amp_unlock_quietly(&cache_lock, &quiet);
}

enum { MAX_ARGS = 32 };

static int run(struct twin *tw, struct amp_thread *t, amp_dnnl_execute_fn exec, void *stream,
               int nargs, const dnnl_exec_arg_t *args)
{
    dnnl_memory_t from[2] = {NULL, NULL}, to[2] = {NULL, NULL}, pad = NULL;
    for (int a = 0; a < nargs; a++)
        for (int i = 0; i < 2; i++)
            if (args[a].arg == tw->in_arg[i])
                from[i] = args[a].memory;
    if (!from[0] || !from[1] || nargs + 1 > MAX_ARGS)
        return -1;
    char *scratch = amp_scratch(t, tw->bytes ? tw->bytes : 1);
    if (!scratch)
        return -1;
    int ok = -1;
    for (int i = 0; i < 2; i++) {
        dnnl_exec_arg_t conv[2] = {{DNNL_ARG_FROM, from[i]}, {DNNL_ARG_TO, NULL}};
        if (dn.dnnl_memory_create(&to[i], &tw->in_md[i], tw->key.engine, scratch + tw->in_off[i]) !=
            dnnl_success)
            goto out;
        conv[1].memory = to[i];
        if (exec(tw->reorder[i], stream, 2, conv) != dnnl_success)
            goto out;
    }
    if (tw->scratchpad_md.ndims > 0 &&
        dn.dnnl_memory_create(&pad, &tw->scratchpad_md, tw->key.engine,
                              scratch + tw->scratchpad_off) != dnnl_success)
        goto out;
    dnnl_exec_arg_t twin_args[MAX_ARGS];
    int n = 0;
    for (int a = 0; a < nargs; a++) {
        if (args[a].arg == DNNL_ARG_SCRATCHPAD)
            continue;
        twin_args[n] = args[a];
        for (int i = 0; i < 2; i++)
            if (args[a].arg == tw->in_arg[i])
                twin_args[n].memory = to[i];
        n++;
    }
    if (pad)
        twin_args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, pad};
    ok = exec(tw->prim, stream, n, twin_args) == dnnl_success ? 0 : -1;
out:
    for (int i = 0; i < 2; i++)
        if (to[i])
            dn.dnnl_memory_destroy(to[i]);
    if (pad)
        dn.dnnl_memory_destroy(pad);
    amp_scratch_done(t);
    return ok;
}

int amp_dnnl_twin_run(const struct amp_dnnl_call *c, struct amp_thread *t, int dtype,
                      amp_dnnl_execute_fn real_execute, void *stream, int nargs, const void *args,
                      uint64_t *converted, int *built)
{
    *built = 0;
    if (dtype != AMP_DTYPE_BF16 && dtype != AMP_DTYPE_FP16)
        return -1;
    struct key key;
    enum pkind k;
    enum dir d;
    const union op_desc *op;
    if (make_key(c, dtype, &key, &k, &d, &op) < 0) {
        if (!__atomic_exchange_n(&told[c->hook], 1, __ATOMIC_RELAXED))
            amp_log(AMP_LOG_INFO,
                    "%s: no twin for this primitive (an attribute ampshim does not copy, or an "
                    "RNN, whose low-precision kernels refuse fp32 outputs); such calls run as made",
                    amp_hook_names[c->hook]);
        return -1;
    }
    int refused;
    struct twin *tw = twin_take(c, &key, k, d, op, &refused, built);
    if (!tw)
        return refused;
    int ok = run(tw, t, real_execute, stream, nargs, args);
    *converted = tw->in_elems;
    twin_give(tw);
    return ok;
}

#else /* no oneDNN headers at build time: every primitive runs as made */

void amp_dnnl_classify(void *prim, amp_dnnl_execute_fn real_execute, struct amp_dnnl_call *c)
{
    (void)prim;
    (void)real_execute;
    c->hook = -1;
    c->lowered = 0;
}

int amp_dnnl_twin_run(const struct amp_dnnl_call *c, struct amp_thread *t, int dtype,
                      amp_dnnl_execute_fn real_execute, void *stream, int nargs, const void *args,
                      uint64_t *converted, int *built)
{
    (void)c, (void)t, (void)dtype, (void)real_execute, (void)stream, (void)nargs, (void)args;
    *converted = 0;
    *built = 0;
    return -1;
}

int amp_dnnl_outputs(const struct amp_dnnl_call *c, int nargs, const void *args,
                     struct amp_dnnl_output out[AMP_DNNL_OUTPUTS_MAX])
{
    (void)c, (void)nargs, (void)args, (void)out;
    return -1;
}

int amp_dnnl_desc_row(const void *desc, int dir, void *real_fn, double *madds)
{
    (void)desc, (void)dir, (void)real_fn, (void)madds;
    return -1;
}

int amp_dnnl_desc_lower(void *desc, int dir, int dtype)
{
    (void)desc, (void)dir, (void)dtype;
    return -1;
}

int amp_dnnl_desc_unlowered(const void *op_desc, void *fp32, size_t fp32_size)
{
    (void)op_desc, (void)fp32, (void)fp32_size;
    return 0;
}

size_t amp_dnnl_conv_desc_size(void)
{
    return 0;
}

void amp_dnnl_atfork(enum amp_fork_phase phase)
{
    (void)phase;
}

#endif
