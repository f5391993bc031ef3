/* oneDNN 3.x inside another library (pip's libtorch_cpu.so links oneDNN in
 * and exports none of it): found by its static symbol table when the
 * library loads, reached by entry patches (shim/patch.h), lowered in its
 * convolution primitive descriptors as oneDNN 2.x's are for the callers of
 * policy/data/onednn_callers.txt (desc_init.c): the caller's inputs asked
 * for in bf16 (fp16), so its own reorders convert them, where oneDNN makes
 * a native kernel for it on this CPU; the executions of those primitives
 * counted at dnnl_primitive_execute. One library per process is reached;
 * any other, and one that cannot be (an unknown prologue, a version other
 * than 3, a missing function), runs as made, with one line in the report
 * saying so.
 *
 * oneDNN 3's header is not needed: the handful of values the wing uses are
 * below, from its C API (dnnl_types.h, dnnl_common_types.h), stable
 * across 3.x. */
#include <dirent.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/convert.h"
#include "loader/loader.h"
#include "policy/policy.h"
#include "runtime/callers.h"
#include "runtime/decide.h"
#include "runtime/log.h"
#include "runtime/report.h"
#include "shim/onednn/twin.h"
#include "shim/patch.h"
#include "shim/resolve.h"

enum {
    V3_SUCCESS = 0,
    V3_F16 = 1,
    V3_BF16 = 2,
    V3_F32 = 3,
    V3_FORMAT_KIND_ANY = 1,
    V3_FORMAT_TAG_ANY = 1,
    V3_CONVOLUTION = 5,
    V3_FORWARD_TRAINING = 64,
    V3_FORWARD_INFERENCE = 96,
    V3_BACKWARD_DATA = 160,
    V3_BACKWARD_WEIGHTS = 192,
    V3_QUERY_PRIMITIVE_KIND = 2,
    V3_QUERY_IMPL_INFO_STR = 8,
    V3_QUERY_PROP_KIND = 11,
    V3_QUERY_STRIDES = 14,
    V3_QUERY_SRC_MD = 129,
    V3_QUERY_DIFF_SRC_MD = 130,
    V3_QUERY_WEIGHTS_MD = 131,
    V3_QUERY_DIFF_WEIGHTS_MD = 132,
    V3_QUERY_DST_MD = 133,
    V3_QUERY_DIFF_DST_MD = 134,
    V3_QUERY_NDIMS = 256,
    V3_QUERY_DIMS = 257,
    V3_QUERY_DATA_TYPE = 258,
    V3_QUERY_FORMAT_KIND = 262,
    V3_QUERY_INNER_NBLKS = 263,
    V3_FORMAT_KIND_BLOCKED = 2,
    V3_MAX_NDIMS = 12,
};

typedef const void *md_t; /* const_dnnl_memory_desc_t */
typedef const int64_t *dims_t;
typedef int64_t v3_dims[V3_MAX_NDIMS];

typedef int (*fwd_fn)(void **, void *, int, int, md_t, md_t, md_t, md_t, dims_t, dims_t, dims_t,
                      dims_t, const void *);
typedef int (*bwd_data_fn)(void **, void *, int, md_t, md_t, md_t, dims_t, dims_t, dims_t, dims_t,
                           const void *, const void *);
typedef int (*bwd_weights_fn)(void **, void *, int, md_t, md_t, md_t, md_t, dims_t, dims_t, dims_t,
                              dims_t, const void *, const void *);

/* The functions found in the library: the patched ones first (their
 * trampolines replace them once patched), then the ones the wing calls. */
#define V3_PATCHED(X)                                                                              \
    X(dnnl_primitive_execute)                                                                      \
    X(dnnl_convolution_forward_primitive_desc_create)                                              \
    X(dnnl_convolution_backward_data_primitive_desc_create)                                        \
    X(dnnl_convolution_backward_weights_primitive_desc_create)
#define V3_CALLED(X)                                                                               \
    X(dnnl_version)                                                                                \
    X(dnnl_memory_desc_query)                                                                      \
    X(dnnl_memory_desc_create_with_tag)                                                            \
    X(dnnl_memory_desc_create_with_strides)                                                        \
    X(dnnl_memory_desc_destroy)                                                                    \
    X(dnnl_primitive_desc_query)                                                                   \
    X(dnnl_primitive_desc_query_md)                                                                \
    X(dnnl_primitive_desc_destroy)                                                                 \
    X(dnnl_primitive_get_primitive_desc)
#define V3_NAME(f) #f,
#define V3_INDEX(f) I_##f,
enum { V3_PATCHED(V3_INDEX) V3_CALLED(V3_INDEX) V3_FUNCTIONS };
static const char *const v3_names[V3_FUNCTIONS] = {V3_PATCHED(V3_NAME) V3_CALLED(V3_NAME)};

struct v3_version {
    int major, minor, patch;
};

/* The reached library: its functions (trampolines for the patched ones),
 * written once before any of its code runs, read after. */
static struct {
    int (*execute)(void *, void *, int, const void *);
    fwd_fn fwd;
    bwd_data_fn bwd_data;
    bwd_weights_fn bwd_weights;
    const struct v3_version *(*version)(void);
    int (*md_query)(md_t, int, void *);
    int (*md_create_with_tag)(void **, int, const int64_t *, int, int);
    int (*md_create_with_strides)(void **, int, const int64_t *, int, const int64_t *);
    int (*md_destroy)(void *);
    int (*pd_query)(const void *, int, int, void *);
    md_t (*pd_query_md)(const void *, int, int);
    int (*pd_destroy)(void *);
    int (*get_pd)(void *, const void **);
} v3;

/* The primitive rows [direction][rank - 1], by name in the generated hook
 * list. */
static int rows[3][3];
static const char *const dir_names[3] = {"forward", "backward_data", "backward_weights"};

/* ---- what a convolution is ---- */

struct md_info {
    int ndims, dtype, any;
    v3_dims dims;
};

static int md_info(md_t md, struct md_info *m)
{
    const int64_t *dims = NULL;
    int kind = 0;
    memset(m, 0, sizeof *m);
    if (!md || v3.md_query(md, V3_QUERY_NDIMS, &m->ndims) != V3_SUCCESS || m->ndims < 3 ||
        m->ndims > 6 || v3.md_query(md, V3_QUERY_DATA_TYPE, &m->dtype) != V3_SUCCESS ||
        v3.md_query(md, V3_QUERY_FORMAT_KIND, &kind) != V3_SUCCESS ||
        v3.md_query(md, V3_QUERY_DIMS, &dims) != V3_SUCCESS || !dims)
        return -1;
    m->any = kind == V3_FORMAT_KIND_ANY;
    memcpy(m->dims, dims, (size_t)m->ndims * sizeof *dims);
    return 0;
}

static double elems(const struct md_info *m)
{
    double n = 1;
    for (int i = 0; i < m->ndims; i++)
        n *= (double)m->dims[i];
    return n;
}

/* A convolution's data in direction d: in[0], in[1] (the inputs lowered),
 * out (written in fp32). Its key (direction and dimensions, not types or
 * layouts) names the shapes the shim lowered. */
struct conv {
    int dir, row;
    struct md_info in[2], out;
    double madds;
    uint64_t key;
};

static uint64_t conv_key(const struct conv *c)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)c->dir;
    const struct md_info *m[3] = {&c->in[0], &c->in[1], &c->out};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < m[i]->ndims; j++) {
            h = (h ^ (uint64_t)m[i]->dims[j]) * 0x100000001b3u;
            h ^= h >> 29;
        }
    return h ? h : 1;
}

/* Fills c from the data of a convolution in direction dir: the source's
 * (or diff_dst's) rank picks the row; the multiply-adds are the larger
 * side's elements times each one's products. 0, or -1 when it is not one
 * the wing lowers. */
static int conv_of(struct conv *c, int dir, md_t in0, md_t in1, md_t out)
{
    c->dir = dir;
    if (md_info(in0, &c->in[0]) || md_info(in1, &c->in[1]) || md_info(out, &c->out))
        return -1;
    const struct md_info *data = dir == 2 ? &c->in[0] : &c->out; /* src, or dst */
    const struct md_info *big = dir == 0 ? &c->out : dir == 1 ? &c->in[0] : &c->in[1];
    const struct md_info *w = dir == 2 ? &c->out : &c->in[1];
    int rank = data->ndims - 2;
    if (rank < 1 || rank > 3 || big->dims[1] <= 0 || (c->row = rows[dir][rank - 1]) < 0)
        return -1;
    c->madds = elems(big) * elems(w) / (double)big->dims[1];
    c->key = conv_key(c);
    return 0;
}

/* The shapes lowered so far, and those oneDNN made no native kernel for
 * (asked once: the caller makes a descriptor at every call). Inserted
 * once, never removed; a full table lowers no more. */
static _Atomic uint64_t lowered_keys[AMP_DNNL_KEYS], no_kernel_keys[AMP_DNNL_KEYS];

/* ---- the descriptor hooks ---- */

/* The CPU gate for the library's convolutions: the size rule and the
 * settings as for every CPU call, but the units asked of the CPU itself
 * (cpuid) rather than of the shim's own oneDNN, which a machine with only
 * pip's torch lacks: the library's oneDNN says whether it has a native
 * kernel (kept(), below), and where it has none the call runs as made,
 * counted nounits. */
static enum amp_cpu_gate inside_gate(enum amp_lowp_dtype dtype, double madds, int explicit_request)
{
    enum amp_cpu_gate g = amp_cpu_gate(dtype, madds, explicit_request);
    if ((g == AMP_CPU_NO_UNITS || g == AMP_CPU_AUDIT_ONLY) && amp_cpu_may_have_units(dtype))
        return AMP_CPU_LOWER;
    return g;
}

/* The no-kernel table's key for c in dtype (never 0, the empty slot). */
static uint64_t no_kernel_key(const struct conv *c, int dtype)
{
    return (c->key ^ ((uint64_t)dtype << 40)) | 1;
}

/* The dtype c is lowered to, or -1: fp32 inputs in "any" layout and an
 * fp32 output, a listed caller, the policy's and the gate's word. */
static int decide(struct conv *c, void *caller)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t || c->in[0].dtype != V3_F32 || c->in[1].dtype != V3_F32 || c->out.dtype != V3_F32 ||
        !c->in[0].any || !c->in[1].any)
        return -1;
    if (!amp_caller_is_onednn_caller(caller))
        return -1;
    amp_tls_caller = caller;
    int explicit_request = 0;
    int dtype = amp_dnnl_desc_decide(t, c->row, c->madds, caller, &explicit_request, inside_gate);
    if (dtype >= 0 && amp_dnnl_key_find(no_kernel_keys, no_kernel_key(c, dtype), 0)) {
        if (explicit_request)
            amp_refuse_explicit(c->row, dtype, "oneDNN has no native kernel for it on this CPU");
        return -1;
    }
    return dtype;
}

/* m's dimensions in dtype, "any" layout, into *low: 0, or -1. */
static int low_md(const struct md_info *m, int dtype, void **low)
{
    *low = NULL;
    return v3.md_create_with_tag(low, m->ndims, m->dims, dtype == AMP_DTYPE_FP16 ? V3_F16 : V3_BF16,
                                 V3_FORMAT_TAG_ANY) == V3_SUCCESS
               ? 0
               : -1;
}

static void free_mds(void *low[3])
{
    for (int i = 0; i < 3; i++)
        if (low[i])
            low[i] = (v3.md_destroy(low[i]), NULL);
}

/* A forward convolution's fp32 output of this many bytes and more, where
 * the caller left its layout open and the lowered kernel chose channels-last
 * for it, is asked for dense (row-major, the layout of the caller's own
 * tensor) instead: on AMX that kernel's choice is channels-last, which pip's
 * torch copies into its contiguous tensor element by element, and over a
 * large output (beyond the caches; each one also a fresh mapping past
 * glibc's 32 MiB mmap ceiling) that copy cost more than the faster kernel
 * saved. ResNet-50 at batch 32 (pip's torch, one thread, AMX Xeon): 4.6 s
 * against fp32's 3.97 s, 3.6 s with this; 2.9 s against 2.1 s with glibc
 * keeping its buffers. Below it the channels-last kernel pays (batch 8:
 * 0.51 s against 0.61 s dense). Where the kernel chose a blocked layout
 * (avx512_core_bf16, as on Zen 4: aBcd16b, which oneDNN's own reorder
 * unblocks) it is kept: a dense output there made the kernel slower (Zen 4,
 * batch 32: 3.68-3.83 s against 3.38-3.51 s). docs/measured.md. */
#define V3_DENSE_OUTPUT_BYTES ((double)(32 << 20))

/* Whether md is a plain layout with the channels (dimension 1) innermost:
 * nwc, nhwc, ndhwc. */
static int channels_last(md_t md)
{
    int ndims = 0, kind = 0, nblks = -1;
    const int64_t *strides = NULL;
    return md && v3.md_query(md, V3_QUERY_NDIMS, &ndims) == V3_SUCCESS && ndims >= 3 &&
           v3.md_query(md, V3_QUERY_FORMAT_KIND, &kind) == V3_SUCCESS &&
           kind == V3_FORMAT_KIND_BLOCKED &&
           v3.md_query(md, V3_QUERY_INNER_NBLKS, &nblks) == V3_SUCCESS && nblks == 0 &&
           v3.md_query(md, V3_QUERY_STRIDES, &strides) == V3_SUCCESS && strides && strides[1] == 1;
}

/* m's dimensions as a dense row-major fp32 descriptor into *out: 0, or -1. */
static int dense_md(const struct md_info *m, void **out)
{
    int64_t strides[V3_MAX_NDIMS], step = 1;
    for (int i = m->ndims - 1; i >= 0; i--) {
        strides[i] = step;
        step *= m->dims[i];
    }
    *out = NULL;
    return v3.md_create_with_strides(out, m->ndims, m->dims, V3_F32, strides) == V3_SUCCESS ? 0
                                                                                            : -1;
}

/* The lowering of a descriptor call in direction dir with inputs in0, in1
 * and output out, made at caller: fills c, puts the inputs as the dtype
 * into low[0] and low[1] and, for a forward pass under
 * AMPSHIM_OUTPUT=round, its output into low[2] where the caller left the
 * output's layout open (the caller's reorder back to its fp32 memory widens
 * it; a gradient is never rounded). Returns the dtype, or -1 with nothing
 * made (low all NULL). */
static int prepare(struct conv *c, int dir, md_t in0, md_t in1, md_t out, void *caller,
                   void *low[3])
{
    low[0] = low[1] = low[2] = NULL;
    int dtype;
    if (conv_of(c, dir, in0, in1, out) != 0 || (dtype = decide(c, caller)) < 0)
        return -1;
    if (low_md(&c->in[0], dtype, &low[0]) || low_md(&c->in[1], dtype, &low[1])) {
        free_mds(low);
        return -1;
    }
    if (dir == 0 && c->out.any && amp_live_load(&amp_rt.cfg.output_round) &&
        low_md(&c->out, dtype, &low[2]) != 0)
        low[2] = NULL; /* the caller's own output descriptor, then */
    return dtype;
}

static uint8_t told_no_kernel[AMP_HOOK_COUNT][AMP_DTYPE_COUNT];

/* Whether pd, made with status, names a kernel of its own (not oneDNN's
 * reference code); its name into *impl where it names one. */
static int native(int status, const void *pd, const char **impl)
{
    *impl = NULL;
    return status == V3_SUCCESS && pd &&
           v3.pd_query(pd, V3_QUERY_IMPL_INFO_STR, 0, impl) == V3_SUCCESS && *impl &&
           !strstr(*impl, "ref");
}

/* After the lowered call returned status with *pd: keeps pd (1) where
 * oneDNN made it with a native kernel, else destroys it (0): the caller's
 * call is then made as it came. */
static int kept(const struct conv *c, int dtype, int status, void **pd)
{
    const char *impl;
    if (native(status, *pd, &impl)) {
        amp_dnnl_key_find(lowered_keys, c->key, 1);
        return 1;
    }
    if (status == V3_SUCCESS && *pd)
        v3.pd_destroy(*pd);
    *pd = NULL;
    amp_dnnl_key_find(no_kernel_keys, no_kernel_key(c, dtype), 1);
    if (!__atomic_exchange_n(&told_no_kernel[c->row][dtype], 1, __ATOMIC_RELAXED))
        amp_log(AMP_LOG_INFO,
                "%s in %s: the oneDNN inside the library has %s on this CPU; such convolutions "
                "run as made in fp32, counted nounits",
                amp_hook_names[c->row], amp_dtype_names[dtype],
                status != V3_SUCCESS ? "no kernel for it"
                : impl               ? "only a reference kernel for it"
                                     : "no kernel it names");
    return 0;
}

/* The three descriptor hooks: the call lowered where prepare() says, kept
 * where oneDNN made it with a native kernel, else made as it came. The
 * return address is the caller's: the patched entry jumps here. */
static int fwd_hook(void **pd, void *engine, int prop, int alg, md_t src, md_t w, md_t b, md_t dst,
                    dims_t st, dims_t dl, dims_t pl, dims_t pr, const void *attr)
{
    struct conv c;
    void *low[3];
    int dtype = prop == V3_FORWARD_TRAINING || prop == V3_FORWARD_INFERENCE
                    ? prepare(&c, 0, src, w, dst, __builtin_return_address(0), low)
                    : -1;
    if (dtype >= 0) {
        int status = v3.fwd(pd, engine, prop, alg, low[0], low[1], b, low[2] ? low[2] : dst, st, dl,
                            pl, pr, attr);
        /* A large output the kernel chose channels-last for: made again
         * dense, kept so where that has a native kernel too. */
        void *dense = NULL, *again = NULL;
        const char *impl;
        if (status == V3_SUCCESS && *pd && !low[2] && c.out.any &&
            elems(&c.out) * 4 >= V3_DENSE_OUTPUT_BYTES &&
            channels_last(v3.pd_query_md(*pd, V3_QUERY_DST_MD, 0)) &&
            dense_md(&c.out, &dense) == 0) {
            int again_status =
                v3.fwd(&again, engine, prop, alg, low[0], low[1], b, dense, st, dl, pl, pr, attr);
            if (native(again_status, again, &impl)) {
                v3.pd_destroy(*pd);
                *pd = again;
            } else if (again_status == V3_SUCCESS && again) {
                v3.pd_destroy(again);
            }
            v3.md_destroy(dense);
        }
        free_mds(low);
        if (kept(&c, dtype, status, pd))
            return status;
    }
    return v3.fwd(pd, engine, prop, alg, src, w, b, dst, st, dl, pl, pr, attr);
}

static int bwd_data_hook(void **pd, void *engine, int alg, md_t dsrc, md_t w, md_t ddst, dims_t st,
                         dims_t dl, dims_t pl, dims_t pr, const void *hint, const void *attr)
{
    struct conv c;
    void *low[3];
    int dtype = prepare(&c, 1, ddst, w, dsrc, __builtin_return_address(0), low);
    if (dtype >= 0) {
        int status = v3.bwd_data(pd, engine, alg, dsrc, low[1], low[0], st, dl, pl, pr, hint, attr);
        free_mds(low);
        if (kept(&c, dtype, status, pd))
            return status;
    }
    return v3.bwd_data(pd, engine, alg, dsrc, w, ddst, st, dl, pl, pr, hint, attr);
}

static int bwd_weights_hook(void **pd, void *engine, int alg, md_t src, md_t dw, md_t db, md_t ddst,
                            dims_t st, dims_t dl, dims_t pl, dims_t pr, const void *hint,
                            const void *attr)
{
    struct conv c;
    void *low[3];
    int dtype = prepare(&c, 2, src, ddst, dw, __builtin_return_address(0), low);
    if (dtype >= 0) {
        int status =
            v3.bwd_weights(pd, engine, alg, low[0], dw, db, low[1], st, dl, pl, pr, hint, attr);
        free_mds(low);
        if (kept(&c, dtype, status, pd))
            return status;
    }
    return v3.bwd_weights(pd, engine, alg, src, dw, db, ddst, st, dl, pl, pr, hint, attr);
}

/* ---- the execute hook: counting ---- */

/* The convolution a primitive descriptor describes, or -1. */
static int conv_of_pd(const void *pd, struct conv *c)
{
    int kind = 0, prop = 0;
    if (v3.pd_query(pd, V3_QUERY_PRIMITIVE_KIND, 0, &kind) != V3_SUCCESS ||
        kind != V3_CONVOLUTION || v3.pd_query(pd, V3_QUERY_PROP_KIND, 0, &prop) != V3_SUCCESS)
        return -1;
    switch (prop) {
    case V3_FORWARD_TRAINING:
    case V3_FORWARD_INFERENCE:
        return conv_of(c, 0, v3.pd_query_md(pd, V3_QUERY_SRC_MD, 0),
                       v3.pd_query_md(pd, V3_QUERY_WEIGHTS_MD, 0),
                       v3.pd_query_md(pd, V3_QUERY_DST_MD, 0));
    case V3_BACKWARD_DATA:
        return conv_of(c, 1, v3.pd_query_md(pd, V3_QUERY_DIFF_DST_MD, 0),
                       v3.pd_query_md(pd, V3_QUERY_WEIGHTS_MD, 0),
                       v3.pd_query_md(pd, V3_QUERY_DIFF_SRC_MD, 0));
    case V3_BACKWARD_WEIGHTS:
        return conv_of(c, 2, v3.pd_query_md(pd, V3_QUERY_SRC_MD, 0),
                       v3.pd_query_md(pd, V3_QUERY_DIFF_DST_MD, 0),
                       v3.pd_query_md(pd, V3_QUERY_DIFF_WEIGHTS_MD, 0));
    default:
        return -1;
    }
}

static int execute_hook(void *prim, void *stream, int nargs, const void *args)
{
    /* Every primitive the library runs comes here (reorders, eltwise,
     * pooling): only a convolution is classified further. */
    const void *pd = NULL;
    struct conv c;
    struct amp_thread *t;
    if (v3.get_pd(prim, &pd) != V3_SUCCESS || !pd || conv_of_pd(pd, &c) != 0 ||
        !(t = amp_thread_enter()))
        return v3.execute(prim, stream, nargs, args);
    void *caller = __builtin_return_address(0);
    enum amp_hook_id hook = (enum amp_hook_id)c.row;
    int lowered = (c.in[0].dtype == V3_BF16 || c.in[0].dtype == V3_F16) &&
                  amp_dnnl_key_find(lowered_keys, c.key, 0);
    if (!lowered && (c.in[0].dtype != V3_F32 || c.in[1].dtype != V3_F32 || c.out.dtype != V3_F32))
        return v3.execute(prim, stream, nargs, args); /* the program's own low precision */
    amp_tls_caller = caller;
    if (lowered) {
        amp_count(t, hook, AMP_CTL_NATIVE, 1);
        amp_count(t, hook, AMP_CTL_LOWERED, 1);
    } else {
        /* As made: what the policy says of it, and if it said lower, why
         * it was not (no native kernel here, or its inputs not in "any"
         * layout). */
        struct amp_decision d = amp_decide(t, AMP_DEVICE_CPU, hook, 0);
        enum amp_ctl_counter outcome = amp_outcome_counter(d.outcome);
        if (d.outcome == AMP_OUTCOME_LOWERED) {
            int gate = inside_gate(d.dtype, c.madds, d.explicit_request);
            outcome = gate != AMP_CPU_LOWER
                          ? amp_outcome_counter(amp_cpu_gate_outcome((enum amp_cpu_gate)gate))
                      : told_no_kernel[hook][d.dtype] ? AMP_CTL_NOUNITS
                                                      : amp_not_lowered_after_all(outcome);
        }
        amp_count(t, hook, outcome, 1);
    }
    uint64_t t0 = amp_unlikely(amp_cpu_timing_due()) ? amp_now_ns() : 0;
    int rc = v3.execute(prim, stream, nargs, args);
    if (amp_unlikely(t0))
        amp_cpu_time_record(hook, 2 * c.madds, amp_now_ns() - t0, lowered, caller);
    return rc;
}

/* ---- finding and reaching the library ---- */

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t scanned[512];
static int n_scanned;
static _Atomic int reached; /* a library's oneDNN is patched */
static _Atomic uint64_t scanned_at_dlopens = UINT64_MAX;

struct candidates {
    uintptr_t base[32];
    char *path[32];
    int count;
};

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct candidates *c = data;
    for (int i = 0; i < n_scanned; i++)
        if (scanned[i] == info->dlpi_addr)
            return 0;
    if (n_scanned < (int)(sizeof scanned / sizeof scanned[0]))
        scanned[n_scanned++] = info->dlpi_addr;
    /* An object that exports oneDNN's API is the 2.x wing's (or a 3.x
     * library the exported hooks meet); one without a file has no table. */
    if (!info->dlpi_name || !info->dlpi_name[0] ||
        amp_object_may_define(info, "dnnl_primitive_execute") || c->count >= 32)
        return 0;
    c->base[c->count] = info->dlpi_addr;
    c->path[c->count++] = strdup(info->dlpi_name);
    return 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A note for the report and the log. The process is one whose numerical
 * library the shim looked into: it is registered as a hooked call would
 * register it (its control block made, the held log lines let out), so the
 * report is written even if no hooked call comes. */
static void note(const char *line)
{
    amp_thread_enter();
    amp_log(AMP_LOG_INFO, "%s", line);
    amp_report_note(line);
}

static void unseen(const char *path, const char *why)
{
    char line[320];
    snprintf(line, sizeof line, "oneDNN inside %s: %s; its convolutions run inside it, unseen",
             base_name(path), why);
    note(line);
}

/* Whether this process has one thread (/proc/self/task). */
static int alone(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n == 1;
}

static void reach(const char *path, uintptr_t base, void *fn[V3_FUNCTIONS])
{
    char why[160];
    for (int i = 0; i < V3_FUNCTIONS; i++)
        if (!fn[i]) {
            snprintf(why, sizeof why, "it has no %s", v3_names[i]);
            unseen(path, why);
            return;
        }
    if (atomic_load(&reached)) {
        unseen(path, "another library's oneDNN is the one reached in this process");
        return;
    }
    *(void **)&v3.version = fn[I_dnnl_version];
    const struct v3_version *v = v3.version();
    if (!v || v->major != 3) {
        snprintf(why, sizeof why, "version %d.%d, and ampshim reaches 3.x inside a library",
                 v ? v->major : 0, v ? v->minor : 0);
        unseen(path, why);
        return;
    }
    *(void **)&v3.md_query = fn[I_dnnl_memory_desc_query];
    *(void **)&v3.md_create_with_tag = fn[I_dnnl_memory_desc_create_with_tag];
    *(void **)&v3.md_destroy = fn[I_dnnl_memory_desc_destroy];
    *(void **)&v3.md_create_with_strides = fn[I_dnnl_memory_desc_create_with_strides];
    *(void **)&v3.pd_query = fn[I_dnnl_primitive_desc_query];
    *(void **)&v3.pd_query_md = fn[I_dnnl_primitive_desc_query_md];
    *(void **)&v3.pd_destroy = fn[I_dnnl_primitive_desc_destroy];
    *(void **)&v3.get_pd = fn[I_dnnl_primitive_get_primitive_desc];
    for (int d = 0; d < 3; d++)
        for (int r = 0; r < 3; r++) {
            char name[64];
            snprintf(name, sizeof name, "dnnl_convolution_%dd_%s", r + 1, dir_names[d]);
            rows[d][r] = amp_hook_from_name(name);
        }
    /* The counting hook first: a descriptor lowered with no count of its
     * executions would be a lowering the report does not show. */
    void *hooks[4] = {(void *)execute_hook, (void *)fwd_hook, (void *)bwd_data_hook,
                      (void *)bwd_weights_hook};
    void *tramp[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; i++) {
        tramp[i] = amp_patch_entry(fn[i], hooks[i], why, sizeof why);
        if (!tramp[i]) {
            char line[224];
            snprintf(line, sizeof line, "%s: %s", v3_names[i], why);
            unseen(path, line);
            if (i == 0)
                return;
            /* That direction runs as made; its trampoline is the function. */
            tramp[i] = NULL;
        }
    }
    *(void **)&v3.execute = tramp[0];
    *(void **)&v3.fwd = tramp[1];
    *(void **)&v3.bwd_data = tramp[2];
    *(void **)&v3.bwd_weights = tramp[3];
    atomic_store(&reached, 1);
    /* Its matmul serves the lowered BLAS products too (the newer kernels,
     * and the only ones where libdnnl.so.2 is not installed). */
    amp_resolve_offer_inside_onednn(path, base, tramp[0]);
    char line[320];
    uint32_t audit = amp_live_load(&amp_rt.cfg.audit);
    snprintf(line, sizeof line,
             "oneDNN %d.%d.%d inside %s: reached by entry patches; its fp32 convolutions are "
             "decided here%s",
             v->major, v->minor, v->patch, base_name(path),
             audit == AMP_AUDIT_ON || audit == AMP_AUDIT_AUTO
                 ? " (under the audit they run as made, counted passthrough: none can be run "
                   "both ways)"
                 : "");
    note(line);
}

/* The look (amp_resolve_look_inside): the objects loaded since the last
 * look (none when no dlopen came since) searched for oneDNN's C API kept
 * as local symbols; the first such library reached. late: the objects may
 * have run already (a thread's refresh): it looks only in a process of
 * one thread and leaves them to the next dlsym otherwise. Nothing unless
 * the shim is active. */
static void scan(int late)
{
    if (amp_mode() != AMP_MODE_ACTIVE)
        return;
    uint64_t dlopens = atomic_load_explicit(&amp_dlopen_calls, memory_order_acquire);
    if (atomic_load_explicit(&scanned_at_dlopens, memory_order_acquire) == dlopens)
        return;
    /* A thread's refresh may come after other threads ran what was loaded:
     * with more than one thread it leaves the objects to the dlsym that
     * follows their dlopen. */
    if (late && !alone())
        return;
    atomic_store_explicit(&scanned_at_dlopens, dlopens, memory_order_release);
    struct candidates *c = calloc(1, sizeof *c);
    if (!c)
        return;
    pthread_mutex_lock(&scan_lock);
    amp_walk_objects(collect, c);
    for (int i = 0; i < c->count; i++) {
        void *fn[V3_FUNCTIONS];
        /* Objects without oneDNN inside (most) find none of the names. */
        if (amp_object_local_functions(c->path[i], c->base[i], v3_names, V3_FUNCTIONS, fn) > 0 &&
            fn[I_dnnl_primitive_execute])
            reach(c->path[i], c->base[i], fn);
        free(c->path[i]);
    }
    pthread_mutex_unlock(&scan_lock);
    free(c);
}

/* Registered before the shim's constructor makes its first look. */
__attribute__((constructor(101))) static void register_look(void)
{
    amp_resolve_set_inside_look(scan);
}
