/* The exported cuDNN entry points (legacy API), expanded from
 * AMPSHIM_HOOK_LIST_CUDNN.
 *
 * Convolutions (category lower) on fp32 tensors with an fp32 convolution
 * descriptor:
 *   fp16  the descriptor's math type becomes CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
 *         for the call (cuDNN converts to fp16 itself), then is restored;
 *   tf32  the call runs as made: cuDNN's default math on fp32 data already
 *         uses TF32 tensor cores on Ampere and later;
 *   bf16  explicit conversion: inputs are converted with cudnnTransformTensor
 *         into device scratch, the convolution runs on bf16 descriptors into
 *         bf16 scratch, and the result is blended into the program's output
 *         (alpha, beta) by one more cudnnTransformTensor.
 * A math type the program set itself (CUDNN_FMA_MATH, or ALLOW_CONVERSION)
 * and non-fp32 data or compute types leave the call unchanged.
 *
 * fp32-list calls (softmax, reduction, normalisation) on half or bf16
 * tensors are computed in fp32: inputs converted into fp32 scratch, the call
 * made on fp32 descriptors into fp32 scratch, the result blended back in the
 * program's type. A reduction asks cuDNN itself, by setting the reduce
 * descriptor's compute type to fp32 for the call. On fp32 tensors these
 * calls run unchanged, counted as fp32. CTC loss (fp32 only in cuDNN) is an
 * fp32 region.
 *
 * Whatever fails on the way (a missing cuDNN or CUDA runtime symbol, no
 * device memory, an algorithm the new types do not support) makes the hook
 * run the call exactly as the program made it. Descriptors the shim changes
 * are the caller's and are restored before the hook returns; a program that
 * shares one between threads calling at once would see the change. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/decide.h"
#include "shim/cuda/cuda_scratch.h"
#include "shim/cuda/cudnn_abi.h"
#include "shim/hook_stub.h"
#include "shim/region_hook.h"
#include "shim/resolve.h"

#define OK AMP_CUDNN_STATUS_SUCCESS

/* The cuDNN functions the hooks call besides the hooked ones. */
#define AMP_DNN_FUNCTIONS(X)                                                                       \
    X(get_tensor, cudnnGetTensorNdDescriptor, void *, int, int *, int *, int *, int *)             \
    X(set_tensor, cudnnSetTensorNdDescriptor, void *, int, int, const int *, const int *)          \
    X(create_tensor, cudnnCreateTensorDescriptor, void **)                                         \
    X(destroy_tensor, cudnnDestroyTensorDescriptor, void *)                                        \
    X(get_filter, cudnnGetFilterNdDescriptor, void *, int, int *, int *, int *, int *)             \
    X(set_filter, cudnnSetFilterNdDescriptor, void *, int, int, int, const int *)                  \
    X(create_filter, cudnnCreateFilterDescriptor, void **)                                         \
    X(destroy_filter, cudnnDestroyFilterDescriptor, void *)                                        \
    X(get_conv, cudnnGetConvolutionNdDescriptor, void *, int, int *, int *, int *, int *, int *,   \
      int *)                                                                                       \
    X(get_math, cudnnGetConvolutionMathType, void *, int *)                                        \
    X(set_math, cudnnSetConvolutionMathType, void *, int)                                          \
    X(get_stream, cudnnGetStream, void *, void **)                                                 \
    X(transform, cudnnTransformTensor, void *, const void *, void *, const void *, const void *,   \
      void *, void *)                                                                              \
    X(ws_fwd, cudnnGetConvolutionForwardWorkspaceSize, void *, void *, void *, void *, void *,     \
      int, size_t *)                                                                               \
    X(ws_bwd_data, cudnnGetConvolutionBackwardDataWorkspaceSize, void *, void *, void *, void *,   \
      void *, int, size_t *)                                                                       \
    X(ws_bwd_filter, cudnnGetConvolutionBackwardFilterWorkspaceSize, void *, void *, void *,       \
      void *, void *, int, size_t *)                                                               \
    X(get_reduce, cudnnGetReduceTensorDescriptor, void *, int *, int *, int *, int *, int *)       \
    X(set_reduce, cudnnSetReduceTensorDescriptor, void *, int, int, int, int, int)                 \
    X(ws_reduce, cudnnGetReductionWorkspaceSize, void *, void *, void *, void *, size_t *)         \
    X(get_rnn, cudnnGetRNNDescriptor_v8, void *, int *, int *, int *, int *, int *, int *, int *,  \
      int *, int32_t *, int32_t *, int32_t *, int32_t *, void **, uint32_t *)                      \
    X(set_rnn, cudnnSetRNNDescriptor_v8, void *, int, int, int, int, int, int, int, int, int32_t,  \
      int32_t, int32_t, int32_t, void *, uint32_t)                                                 \
    X(ws_rnn, cudnnGetRNNTempSpaceSizes, void *, void *, int, void *, size_t *, size_t *)          \
    X(ws_norm_train, cudnnGetNormalizationForwardTrainingWorkspaceSize, void *, int, int, int,     \
      void *, void *, void *, void *, void *, void *, size_t *, int)

struct dnn {
#define AMP_X_MEMBER(member, name, ...) int (*member)(__VA_ARGS__);
    AMP_DNN_FUNCTIONS(AMP_X_MEMBER)
#undef AMP_X_MEMBER
};

static struct dnn dnn_functions;
static int dnn_complete;

static void dnn_resolve(void)
{
    dnn_complete = 1;
#define AMP_X_RESOLVE(member, name, ...)                                                           \
    dnn_functions.member = (int (*)(__VA_ARGS__))amp_resolve_needed(#name, "cuDNN", &dnn_complete);
    AMP_DNN_FUNCTIONS(AMP_X_RESOLVE)
#undef AMP_X_RESOLVE
}

/* The functions, or NULL if the loaded cuDNN lacks any of them; resolved
 * once per process (pthread_once: two threads' first calls cannot race). */
static const struct dnn *dnn(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, dnn_resolve);
    return dnn_complete ? &dnn_functions : NULL;
}

/* A tensor or filter as cuDNN describes it; a filter's strides follow from
 * its format (NCHW: packed, last dimension fastest; NHWC: channels fastest). */
struct view {
    int type, nb, filter, format;
    int dims[AMP_CUDNN_DIM_MAX], strides[AMP_CUDNN_DIM_MAX];
};

static int describe(const struct dnn *f, void *desc, int filter, struct view *v)
{
    v->filter = filter;
    v->format = AMP_CUDNN_TENSOR_NCHW;
    if (!desc)
        return 0;
    if (!filter)
        return f->get_tensor(desc, AMP_CUDNN_DIM_MAX, &v->type, &v->nb, v->dims, v->strides) ==
                   OK &&
               v->nb > 0 && v->nb <= AMP_CUDNN_DIM_MAX;
    if (f->get_filter(desc, AMP_CUDNN_DIM_MAX, &v->type, &v->format, &v->nb, v->dims) != OK ||
        v->nb < 3 || v->nb > AMP_CUDNN_DIM_MAX ||
        (v->format != AMP_CUDNN_TENSOR_NCHW && v->format != AMP_CUDNN_TENSOR_NHWC))
        return 0;
    int order[AMP_CUDNN_DIM_MAX], n = 0; /* outermost first */
    order[n++] = 0;
    if (v->format == AMP_CUDNN_TENSOR_NCHW)
        order[n++] = 1;
    for (int i = 2; i < v->nb; i++)
        order[n++] = i;
    if (v->format == AMP_CUDNN_TENSOR_NHWC)
        order[n++] = 1;
    int stride = 1;
    for (int i = n; i-- > 0;) {
        v->strides[order[i]] = stride;
        stride *= v->dims[order[i]];
    }
    return 1;
}

static int is_half(int type)
{
    return type == AMP_CUDNN_DATA_HALF || type == AMP_CUDNN_DATA_BFLOAT16;
}

static size_t type_bytes(int type)
{
    return type == AMP_CUDNN_DATA_FLOAT ? 4 : is_half(type) ? 2 : 0;
}

/* Elements from the first to the last one the view addresses; 0 if empty. */
static size_t span(const struct view *v)
{
    size_t n = 1;
    for (int i = 0; i < v->nb; i++) {
        if (v->dims[i] <= 0 || v->strides[i] < 0)
            return 0;
        n += (size_t)(v->dims[i] - 1) * (size_t)v->strides[i];
    }
    return n;
}

/* What one hook call creates on the side: descriptors and device scratch,
 * all released by scope_end (scratch on the call's stream). */
struct scope {
    const struct dnn *f;
    void *handle;
    struct amp_cuda_scratch mem;
    int failed, n_tensor, n_filter;
    void *tensor[16], *filter[4];
    uint64_t converted; /* elements converted, for the counters */
};

static void scope_begin(struct scope *s, const struct dnn *f, void *handle)
{
    *s = (struct scope){.f = f, .handle = handle};
    if (f->get_stream(handle, &s->mem.stream) != OK)
        s->failed = 1;
}

static void scope_end(struct scope *s)
{
    for (int i = 0; i < s->n_tensor; i++)
        s->f->destroy_tensor(s->tensor[i]);
    for (int i = 0; i < s->n_filter; i++)
        s->f->destroy_filter(s->filter[i]);
    amp_cuda_scratch_end(&s->mem);
}

static void *scope_mem(struct scope *s, size_t bytes)
{
    void *p = s->failed ? NULL : amp_cuda_take(&s->mem, bytes);
    s->failed |= !p;
    return p;
}

/* The workspace a changed call needs: the program's own if it is large
 * enough, else scratch (*ws and *ws_bytes replaced). */
static int scope_workspace(struct scope *s, size_t need, void **ws, size_t *ws_bytes)
{
    if (need > *ws_bytes) {
        *ws = scope_mem(s, need);
        *ws_bytes = need;
    }
    return !s->failed;
}

/* A descriptor with v's shape in `type`: a filter descriptor when as_filter,
 * else a tensor descriptor with v's strides (for a filter: the strides its
 * format implies, so cudnnTransformTensor can address filter memory). */
static void *scope_desc(struct scope *s, const struct view *v, int type, int as_filter)
{
    void *d = NULL;
    if (s->failed)
        return NULL;
    if (as_filter) {
        if (s->n_filter < 4 && s->f->create_filter(&d) == OK) {
            s->filter[s->n_filter++] = d;
            if (s->f->set_filter(d, type, v->format, v->nb, v->dims) == OK)
                return d;
        }
    } else if (s->n_tensor < 16 && s->f->create_tensor(&d) == OK) {
        s->tensor[s->n_tensor++] = d;
        if (s->f->set_tensor(d, type, v->nb, v->dims, v->strides) == OK)
            return d;
    }
    s->failed = 1;
    return NULL;
}

static const float one = 1.0f, zero = 0.0f;

/* Scratch for v's elements in `type`, with *call_desc the descriptor a call
 * takes it by (tensor or filter, as v is) and *alias a tensor descriptor of
 * it for cudnnTransformTensor. */
static void *scope_buffer(struct scope *s, const struct view *v, int type, void **call_desc,
                          void **alias)
{
    void *p = scope_mem(s, span(v) * type_bytes(type));
    *alias = scope_desc(s, v, type, 0);
    *call_desc = v->filter ? scope_desc(s, v, type, 1) : *alias;
    return s->failed ? NULL : p;
}

/* A copy of src (described by v) in `type`; *call_desc describes it. */
static void *scope_convert(struct scope *s, const struct view *v, const void *src, int type,
                           void **call_desc)
{
    void *alias;
    void *dst = scope_buffer(s, v, type, call_desc, &alias);
    void *src_alias = scope_desc(s, v, v->type, 0);
    if (s->failed || s->f->transform(s->handle, &one, src_alias, src, &zero, alias, dst) != OK) {
        s->failed = 1;
        return NULL;
    }
    s->converted += span(v);
    return dst;
}

/* dst = alpha * tmp + beta * dst, tmp being scratch of v's shape in
 * tmp_type and dst the program's buffer of v's shape and type. */
static int scope_blend(struct scope *s, const struct view *v, const void *tmp, int tmp_type,
                       const void *alpha, const void *beta, void *dst)
{
    void *tmp_alias = scope_desc(s, v, tmp_type, 0);
    void *dst_alias = scope_desc(s, v, v->type, 0);
    if (s->failed || s->f->transform(s->handle, alpha, tmp_alias, tmp, beta, dst_alias, dst) != OK)
        return s->failed = 1, 0;
    s->converted += span(v);
    return 1;
}

/* ---- convolutions ---------------------------------------------------------
 * Forward, BackwardData and BackwardFilter share one shape: two inputs, an
 * output, the convolution descriptor, an algorithm and a workspace; so do
 * their workspace queries. Which operand is a filter is all that differs. */
enum conv_kind { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER };

typedef int (*conv_fn)(void *, const void *, void *, const void *, void *, const void *, void *,
                       int, void *, size_t, const void *, void *, void *);

struct conv_args {
    void *h;
    const void *alpha;
    void *d1;
    const void *p1;
    void *d2;
    const void *p2;
    void *conv;
    int algo;
    void *ws;
    size_t ws_bytes;
    const void *beta;
    void *dout;
    void *pout;
};

static int conv_call(conv_fn real, const struct conv_args *a)
{
    return real(a->h, a->alpha, a->d1, a->p1, a->d2, a->p2, a->conv, a->algo, a->ws, a->ws_bytes,
                a->beta, a->dout, a->pout);
}

static int conv_workspace(const struct dnn *f, enum conv_kind kind, const struct conv_args *a,
                          size_t *bytes)
{
    int (*query)(void *, void *, void *, void *, void *, int, size_t *) =
        kind == CONV_FWD        ? f->ws_fwd
        : kind == CONV_BWD_DATA ? f->ws_bwd_data
                                : f->ws_bwd_filter;
    return query(a->h, a->d1, a->d2, a->conv, a->dout, a->algo, bytes) == OK;
}

/* Makes sure the call has the workspace the (changed) configuration needs:
 * the program's own if it is large enough, else scratch. */
static int conv_ensure_workspace(struct scope *s, enum conv_kind kind, struct conv_args *a)
{
    size_t need = 0;
    return conv_workspace(s->f, kind, a, &need) && scope_workspace(s, need, &a->ws, &a->ws_bytes);
}

/* Whether a convolution is all fp32 with a math type the program left to
 * cuDNN (default or tensor-op); *math is that math type. */
static int conv_plain_fp32(const struct dnn *f, enum conv_kind kind, const struct conv_args *a,
                           struct view v[3], int *math)
{
    int pad[AMP_CUDNN_DIM_MAX], stride[AMP_CUDNN_DIM_MAX], dilation[AMP_CUDNN_DIM_MAX];
    int len, mode, compute = -1;
    return describe(f, a->d1, kind == CONV_BWD_DATA, &v[0]) &&
           describe(f, a->d2, kind == CONV_FWD, &v[1]) &&
           describe(f, a->dout, kind == CONV_BWD_FILTER, &v[2]) &&
           v[0].type == AMP_CUDNN_DATA_FLOAT && v[1].type == AMP_CUDNN_DATA_FLOAT &&
           v[2].type == AMP_CUDNN_DATA_FLOAT &&
           f->get_conv(a->conv, AMP_CUDNN_DIM_MAX - 2, &len, pad, stride, dilation, &mode,
                       &compute) == OK &&
           compute == AMP_CUDNN_DATA_FLOAT && f->get_math(a->conv, math) == OK &&
           (*math == AMP_CUDNN_DEFAULT_MATH || *math == AMP_CUDNN_TENSOR_OP_MATH);
}

/* fp16: cuDNN converts, asked by the math type. */
static int conv_fp16(struct scope *s, enum conv_kind kind, conv_fn real, struct conv_args a,
                     int math)
{
    if (s->f->set_math(a.conv, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) != OK)
        return -1;
    int status = conv_ensure_workspace(s, kind, &a) ? conv_call(real, &a) : -1;
    s->f->set_math(a.conv, math);
    return status;
}

/* bf16: inputs converted into scratch, the result blended back. */
static int conv_bf16(struct scope *s, enum conv_kind kind, conv_fn real, struct conv_args a,
                     const struct view v[3])
{
    const int bf16 = AMP_CUDNN_DATA_BFLOAT16;
    struct conv_args low = a;
    void *out_alias;
    low.p1 = scope_convert(s, &v[0], a.p1, bf16, &low.d1);
    low.p2 = scope_convert(s, &v[1], a.p2, bf16, &low.d2);
    low.pout = scope_buffer(s, &v[2], bf16, &low.dout, &out_alias);
    low.alpha = &one;
    low.beta = &zero;
    if (s->failed || !conv_ensure_workspace(s, kind, &low))
        return -1;
    int status = conv_call(real, &low);
    if (status == OK && !scope_blend(s, &v[2], low.pout, bf16, a.alpha, a.beta, a.pout))
        status = -1;
    return status;
}

static int conv_hook(enum conv_kind kind, enum amp_hook_id hook, conv_fn real, struct conv_args a)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return conv_call(real, &a);
    const struct dnn *f = dnn();
    struct view v[3];
    int math = -1, dtype = -1, status = -1;
    enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;
    if (f && conv_plain_fp32(f, kind, &a, v, &math))
        dtype = amp_decide_lower_dtype(t, AMP_DEVICE_CUDA, hook, 0, &outcome);
    if (dtype == AMP_DTYPE_FP16 || dtype == AMP_DTYPE_BF16) {
        struct scope s;
        scope_begin(&s, f, a.h);
        if (!s.failed)
            status = dtype == AMP_DTYPE_FP16 ? conv_fp16(&s, kind, real, a, math)
                                             : conv_bf16(&s, kind, real, a, v);
        scope_end(&s);
        amp_count(t, hook, AMP_CTL_CONVERTED, s.converted);
        if (status != OK)
            outcome = amp_not_lowered_after_all(outcome);
    }
    if (status != OK) /* tf32 (cuDNN's own default on fp32), or as made */
        status = conv_call(real, &a);
    amp_count(t, hook, outcome, 1);
    return status;
}

#define AMP_DEFINE_CONV(sym, kind)                                                                 \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, const void *alpha, void *d1, const void *p1, void *d2,           \
                         const void *p2, void *conv, int algo, void *ws, size_t ws_bytes,          \
                         const void *beta, void *dout, void *pout)                                 \
    {                                                                                              \
        struct conv_args a = {                                                                     \
            h, alpha, d1, p1, d2, p2, conv, algo, ws, ws_bytes, beta, dout, pout};                 \
        return conv_hook(kind, AMP_HOOK_##sym, (conv_fn)amp_real(AMP_HOOK_##sym), a);              \
    }
#define AMP_DEFINE_CUDNN_CUDNN_CONV_FWD(sym) AMP_DEFINE_CONV(sym, CONV_FWD)
#define AMP_DEFINE_CUDNN_CUDNN_CONV_BWD_DATA(sym) AMP_DEFINE_CONV(sym, CONV_BWD_DATA)
#define AMP_DEFINE_CUDNN_CUDNN_CONV_BWD_FILTER(sym) AMP_DEFINE_CONV(sym, CONV_BWD_FILTER)

/* The fused convolution + bias + activation: fp16 through the math type as
 * above, tf32 as made. bf16 has no library path here (the fused call would
 * need bf16 z, bias and output as well) and runs as made, counted as
 * passthrough. */
#define AMP_DEFINE_CUDNN_CUDNN_CONV_BIAS_ACT(sym)                                                  \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, const void *alpha1, void *xd, const void *x, void *wd,           \
                         const void *w, void *conv, int algo, void *ws, size_t ws_bytes,           \
                         const void *alpha2, void *zd, const void *z, void *bd, const void *bias,  \
                         void *act, void *yd, void *y)                                             \
    {                                                                                              \
        typedef int (*fn)(void *, const void *, void *, const void *, void *, const void *,        \
                          void *, int, void *, size_t, const void *, void *, const void *, void *, \
                          const void *, void *, void *, void *);                                   \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct dnn *f = t ? dnn() : NULL;                                                    \
        struct conv_args a = {h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, NULL, yd, y};     \
        struct view v[3];                                                                          \
        int math = -1, dtype = -1, status = -1;                                                    \
        enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;                                        \
        if (!t)                                                                                    \
            return real(h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, alpha2, zd, z, bd,      \
                        bias, act, yd, y);                                                         \
        if (f && conv_plain_fp32(f, CONV_FWD, &a, v, &math))                                       \
            dtype = amp_decide_lower_dtype(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym, 0, &outcome);                          \
        if (dtype == AMP_DTYPE_FP16) {                                                             \
            struct scope s;                                                                        \
            scope_begin(&s, f, h);                                                                 \
            if (!s.failed && f->set_math(conv, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) == OK) { \
                if (conv_ensure_workspace(&s, CONV_FWD, &a))                                       \
                    status = real(h, alpha1, xd, x, wd, w, conv, algo, a.ws, a.ws_bytes, alpha2,   \
                                  zd, z, bd, bias, act, yd, y);                                    \
                f->set_math(conv, math);                                                           \
            }                                                                                      \
            scope_end(&s);                                                                         \
            if (status != OK)                                                                      \
                outcome = amp_not_lowered_after_all(outcome);                                           \
        } else if (dtype == AMP_DTYPE_BF16) {                                                      \
            outcome = amp_not_lowered_after_all(outcome); /* no bf16 path */                            \
        }                                                                                          \
        if (status != OK) /* tf32 (cuDNN's own default on fp32), or as made */                     \
            status = real(h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, alpha2, zd, z, bd,    \
                          bias, act, yd, y);                                                       \
        amp_count(t, AMP_HOOK_##sym, outcome, 1);                                                  \
        return status;                                                                             \
    }

/* ---- fp32-list calls ------------------------------------------------------
 * Up to three tensor inputs and one tensor output. upcast_begin converts
 * every half or bf16 input into fp32 scratch and gives the output fp32
 * scratch; the caller then makes the call on the new descriptors and
 * pointers with alpha 1, beta 0; upcast_end blends the result into the
 * program's output with its alpha and beta. */
struct upcast {
    struct scope s;
    struct view out;
    void *desc[4];
    const void *ptr[4]; /* [0..n-1] inputs, [3] the output */
};

/* Whether any of the tensors is half or bf16 (and all are half, bf16 or
 * fp32): the calls worth converting. */
static int any_half(const struct dnn *f, int n, void *const *descs)
{
    int half = 0;
    for (int i = 0; i < n; i++) {
        struct view v;
        if (!descs[i])
            continue;
        if (!describe(f, descs[i], 0, &v) || !type_bytes(v.type))
            return 0;
        half |= is_half(v.type);
    }
    return half;
}

static int upcast_begin(struct upcast *u, const struct dnn *f, void *handle, int n_in,
                        void *const *descs, const void *const *ptrs, void *out_desc)
{
    const int fp32 = AMP_CUDNN_DATA_FLOAT;
    void *alias;
    scope_begin(&u->s, f, handle);
    for (int i = 0; i < n_in && !u->s.failed; i++) {
        struct view v;
        u->desc[i] = descs[i];
        u->ptr[i] = ptrs[i];
        if (descs[i] && describe(f, descs[i], 0, &v) && v.type != fp32)
            u->ptr[i] = scope_convert(&u->s, &v, ptrs[i], fp32, &u->desc[i]);
    }
    if (!describe(f, out_desc, 0, &u->out))
        u->s.failed = 1;
    u->ptr[3] = u->s.failed ? NULL : scope_buffer(&u->s, &u->out, fp32, &u->desc[3], &alias);
    return !u->s.failed;
}

static int upcast_end(struct upcast *u, int status, const void *alpha, const void *beta, void *out)
{
    if (status == OK &&
        !scope_blend(&u->s, &u->out, u->ptr[3], AMP_CUDNN_DATA_FLOAT, alpha, beta, out))
        status = -1;
    scope_end(&u->s);
    return status;
}

/* The control flow and counting every fp32-list hook shares. `want`: the
 * thread wants this hook in fp32; `half`: it does and the call has half or
 * bf16 tensors, so lowered_call (the call in fp32, giving its status) runs,
 * then `converted` elements are counted; if it fails, or is not run,
 * plain_call (the call as made) runs. Returns from the hook. */
#define AMP_FP32_CALL(t, hook, want, half, lowered_call, converted, plain_call)                    \
    do {                                                                                           \
        int status_ = -1;                                                                          \
        enum amp_ctl_counter outcome_ = want ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH;                 \
        if (half) {                                                                                \
            status_ = lowered_call;                                                                \
            amp_count(t, hook, AMP_CTL_CONVERTED, converted);                                      \
            if (status_ != OK)                                                                     \
                outcome_ = AMP_CTL_PASSTHROUGH; /* half, not computed in fp32 after all */         \
        }                                                                                          \
        if (status_ != OK)                                                                         \
            status_ = plain_call;                                                                  \
        if (t)                                                                                     \
            amp_count(t, hook, outcome_, 1);                                                       \
        return status_;                                                                            \
    } while (0)

#define AMP_DEFINE_CUDNN_CUDNN_SOFTMAX_FWD(sym)                                                    \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int algo, int mode, const void *alpha, void *xd, const void *x,  \
                         const void *beta, void *yd, void *y)                                      \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, const void *, void *, const void *, const void *,      \
                          void *, void *);                                                         \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct dnn *f = t ? dnn() : NULL;                                                    \
        void *descs[2] = {xd, yd};                                                                 \
        const void *ptrs[1] = {x};                                                                 \
        struct upcast u;                                                                           \
        int want = t && amp_decide_fp32(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym);                                    \
        int half = want && f && any_half(f, 2, descs);                                             \
        AMP_FP32_CALL(t, AMP_HOOK_##sym, want, half,                                               \
                      upcast_end(&u,                                                               \
                                 upcast_begin(&u, f, h, 1, descs, ptrs, yd)                        \
                                     ? real(h, algo, mode, &one, u.desc[0], u.ptr[0], &zero,       \
                                            u.desc[3], (void *)u.ptr[3])                           \
                                     : -1,                                                         \
                                 alpha, beta, y),                                                  \
                      u.s.converted, real(h, algo, mode, alpha, xd, x, beta, yd, y));              \
    }

#define AMP_DEFINE_CUDNN_CUDNN_SOFTMAX_BWD(sym)                                                    \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int algo, int mode, const void *alpha, void *yd, const void *y,  \
                         void *dyd, const void *dy, const void *beta, void *dxd, void *dx)         \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, const void *, void *, const void *, void *,            \
                          const void *, const void *, void *, void *);                             \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct dnn *f = t ? dnn() : NULL;                                                    \
        void *descs[3] = {yd, dyd, dxd};                                                           \
        const void *ptrs[2] = {y, dy};                                                             \
        struct upcast u;                                                                           \
        int want = t && amp_decide_fp32(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym);                                    \
        int half = want && f && any_half(f, 3, descs);                                             \
        AMP_FP32_CALL(t, AMP_HOOK_##sym, want, half,                                               \
                      upcast_end(&u,                                                               \
                                 upcast_begin(&u, f, h, 2, descs, ptrs, dxd)                       \
                                     ? real(h, algo, mode, &one, u.desc[0], u.ptr[0], u.desc[1],   \
                                            u.ptr[1], &zero, u.desc[3], (void *)u.ptr[3])          \
                                     : -1,                                                         \
                                 alpha, beta, dx),                                                 \
                      u.s.converted, real(h, algo, mode, alpha, yd, y, dyd, dy, beta, dxd, dx));   \
    }

/* Layer-norm style inference normalisation: x and z (if any) in fp32, the
 * scale, bias, mean and variance (fp32 already for half data) as they are. */
#define AMP_DEFINE_CUDNN_CUDNN_NORM_FWD_INFERENCE(sym)                                             \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int mode, int ops, int algo, const void *alpha,                  \
                         const void *beta, void *xd, const void *x, void *sbd, const void *scale,  \
                         const void *bias, void *mvd, const void *mean, const void *var, void *zd, \
                         const void *z, void *act, void *yd, void *y, double epsilon, int groups)  \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, int, const void *, const void *, void *, const void *, \
                          void *, const void *, const void *, void *, const void *, const void *,  \
                          void *, const void *, void *, void *, void *, double, int);              \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct dnn *f = t ? dnn() : NULL;                                                    \
        void *descs[3] = {xd, zd, yd};                                                             \
        const void *ptrs[2] = {x, z};                                                              \
        struct upcast u;                                                                           \
        int want = t && amp_decide_fp32(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym);                                    \
        int half = want && f && any_half(f, 3, descs);                                             \
        AMP_FP32_CALL(t, AMP_HOOK_##sym, want, half,                                               \
                      upcast_end(&u,                                                               \
                                 upcast_begin(&u, f, h, 2, descs, ptrs, yd)                        \
                                     ? real(h, mode, ops, algo, &one, &zero, u.desc[0], u.ptr[0],  \
                                            sbd, scale, bias, mvd, mean, var, u.desc[1], u.ptr[1], \
                                            act, u.desc[3], (void *)u.ptr[3], epsilon, groups)     \
                                     : -1,                                                         \
                                 alpha, beta, y),                                                  \
                      u.s.converted,                                                               \
                      real(h, mode, ops, algo, alpha, beta, xd, x, sbd, scale, bias, mvd, mean,    \
                           var, zd, z, act, yd, y, epsilon, groups));                              \
    }

/* Training normalisation, normalisation only (CUDNN_NORM_OPS_NORM: no
 * activation, so no reserve space whose layout the backward call would
 * read): x and z in fp32, y into fp32 scratch, with the workspace cuDNN
 * wants for the fp32 descriptors. The running and saved statistics are fp32
 * already and are written as they are. With an activation, as made. */
static int norm_train_fp32(const struct dnn *f, struct upcast *u, void *h, int mode, int ops,
                           int algo, void *sbd, void *act, void *mvd, void **ws, size_t *ws_bytes,
                           int groups)
{
    size_t need = 0;
    return ops == AMP_CUDNN_NORM_OPS_NORM &&
           f->ws_norm_train(h, mode, ops, algo, u->desc[0], u->desc[1], u->desc[3], sbd, act, mvd,
                            &need, groups) == OK &&
           scope_workspace(&u->s, need, ws, ws_bytes);
}

#define AMP_DEFINE_CUDNN_CUDNN_NORM_FWD_TRAINING(sym)                                              \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, int mode, int ops, int algo, const void *alpha,                  \
                         const void *beta, void *xd, const void *x, void *sbd, const void *scale,  \
                         const void *bias, double factor, void *mvd, void *run_mean,               \
                         void *run_var, double epsilon, void *save_mean, void *save_inv_var,       \
                         void *act, void *zd, const void *z, void *yd, void *y, void *ws,          \
                         size_t ws_bytes, void *reserve, size_t reserve_bytes, int groups)         \
    {                                                                                              \
        typedef int (*fn)(void *, int, int, int, const void *, const void *, void *, const void *, \
                          void *, const void *, const void *, double, void *, void *, void *,      \
                          double, void *, void *, void *, void *, const void *, void *, void *,    \
                          void *, size_t, void *, size_t, int);                                    \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct dnn *f = t ? dnn() : NULL;                                                    \
        void *descs[3] = {xd, zd, yd};                                                             \
        const void *ptrs[2] = {x, z};                                                              \
        struct upcast u;                                                                           \
        void *ws2 = ws;                                                                            \
        size_t ws2_bytes = ws_bytes;                                                               \
        int want = t && amp_decide_fp32(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym);                                    \
        int half = want && f && ops == AMP_CUDNN_NORM_OPS_NORM && any_half(f, 3, descs);           \
        AMP_FP32_CALL(t, AMP_HOOK_##sym, want, half,                                               \
                      upcast_end(&u,                                                               \
                                 upcast_begin(&u, f, h, 2, descs, ptrs, yd) &&                     \
                                         norm_train_fp32(f, &u, h, mode, ops, algo, sbd, act, mvd, \
                                                         &ws2, &ws2_bytes, groups)                 \
                                     ? real(h, mode, ops, algo, &one, &zero, u.desc[0], u.ptr[0],  \
                                            sbd, scale, bias, factor, mvd, run_mean, run_var,      \
                                            epsilon, save_mean, save_inv_var, act, u.desc[1],      \
                                            u.ptr[1], u.desc[3], (void *)u.ptr[3], ws2, ws2_bytes, \
                                            reserve, reserve_bytes, groups)                        \
                                     : -1,                                                         \
                                 alpha, beta, y),                                                  \
                      u.s.converted,                                                               \
                      real(h, mode, ops, algo, alpha, beta, xd, x, sbd, scale, bias, factor, mvd,  \
                           run_mean, run_var, epsilon, save_mean, save_inv_var, act, zd, z, yd, y, \
                           ws, ws_bytes, reserve, reserve_bytes, groups));                         \
    }

/* A reduction of half or bf16 data with a half compute type gets an fp32
 * compute type for the call (more workspace if cuDNN then wants it). */
static int reduce_fp32(const struct dnn *f, void *h, void *rd, void *ad, void *cd, void **ws,
                       size_t *ws_bytes, struct upcast *u, int *restore)
{
    int op, comp, nan, indices, index_type;
    size_t need = 0;
    scope_begin(&u->s, f, h);
    if (u->s.failed || f->get_reduce(rd, &op, &comp, &nan, &indices, &index_type) != OK)
        return 0;
    if (comp == AMP_CUDNN_DATA_FLOAT)
        return 1; /* fp32 already */
    if (f->set_reduce(rd, op, AMP_CUDNN_DATA_FLOAT, nan, indices, index_type) != OK)
        return 0;
    *restore = comp;
    return f->ws_reduce(h, rd, ad, cd, &need) == OK && scope_workspace(&u->s, need, ws, ws_bytes);
}

static void reduce_restore(const struct dnn *f, void *rd, int comp)
{
    int op, old, nan, indices, index_type;
    if (comp >= 0 && f->get_reduce(rd, &op, &old, &nan, &indices, &index_type) == OK)
        f->set_reduce(rd, op, comp, nan, indices, index_type);
}

#define AMP_DEFINE_CUDNN_CUDNN_REDUCE(sym)                                                         \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, void *rd, void *indices, size_t indices_bytes, void *ws,         \
                         size_t ws_bytes, const void *alpha, void *ad, const void *A,              \
                         const void *beta, void *cd, void *C)                                      \
    {                                                                                              \
        typedef int (*fn)(void *, void *, void *, size_t, void *, size_t, const void *, void *,    \
                          const void *, const void *, void *, void *);                             \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct dnn *f = t ? dnn() : NULL;                                                    \
        void *descs[2] = {ad, cd};                                                                 \
        struct upcast u = {0};                                                                     \
        void *ws2 = ws;                                                                            \
        size_t ws2_bytes = ws_bytes;                                                               \
        int restore = -1, status;                                                                  \
        int want = t && amp_decide_fp32(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym);                                    \
        int half = want && f && any_half(f, 2, descs);                                             \
        AMP_FP32_CALL(                                                                             \
            t, AMP_HOOK_##sym, want, half,                                                         \
            (status = reduce_fp32(f, h, rd, ad, cd, &ws2, &ws2_bytes, &u, &restore)                \
                          ? real(h, rd, indices, indices_bytes, ws2, ws2_bytes, alpha, ad, A,      \
                                 beta, cd, C)                                                      \
                          : -1,                                                                    \
             reduce_restore(f, rd, restore), scope_end(&u.s), status),                             \
            u.s.converted,                                                                         \
            real(h, rd, indices, indices_bytes, ws, ws_bytes, alpha, ad, A, beta, cd, C));         \
    }

/* ---- RNNs
 * -------------------------------------------------------------------
 * cudnnRNNForward in inference mode on fp32 data with fp32 math precision:
 * fp16 sets CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION on the RNN descriptor for
 * the call (rewriting the descriptor with cudnnSetRNNDescriptor_v8, then
 * back), with more workspace if cuDNN then wants it; tf32 runs as made
 * (default math on fp32 uses TF32 on Ampere and later). Training mode is
 * never changed: its reserve space must match the backward calls, which
 * run with the program's descriptor. bf16 has no path (the weight space's
 * layout is the data type's) and runs as made. */
struct rnn_config {
    int algo, cell, bias, dir, input, data, prec, math;
    int32_t input_size, hidden, proj, layers;
    void *dropout;
    uint32_t aux;
};

static int rnn_get(const struct dnn *f, void *rd, struct rnn_config *c)
{
    return f->get_rnn(rd, &c->algo, &c->cell, &c->bias, &c->dir, &c->input, &c->data, &c->prec,
                      &c->math, &c->input_size, &c->hidden, &c->proj, &c->layers, &c->dropout,
                      &c->aux) == OK;
}

static int rnn_set_math(const struct dnn *f, void *rd, const struct rnn_config *c, int math)
{
    return f->set_rnn(rd, c->algo, c->cell, c->bias, c->dir, c->input, c->data, c->prec, math,
                      c->input_size, c->hidden, c->proj, c->layers, c->dropout, c->aux) == OK;
}

#define AMP_DEFINE_CUDNN_CUDNN_RNN_FWD(sym)                                                        \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *h, void *rd, int mode, const int32_t *lengths, void *xd,            \
                         const void *x, void *yd, void *y, void *hd, const void *hx, void *hy,     \
                         void *cd, const void *cx, void *cy, size_t weight_bytes,                  \
                         const void *weights, size_t ws_bytes, void *ws, size_t reserve_bytes,     \
                         void *reserve)                                                            \
    {                                                                                              \
        typedef int (*fn)(void *, void *, int, const int32_t *, void *, const void *, void *,      \
                          void *, void *, const void *, void *, void *, const void *, void *,      \
                          size_t, const void *, size_t, void *, size_t, void *);                   \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct dnn *f = t ? dnn() : NULL;                                                    \
        struct rnn_config c;                                                                       \
        int dtype = -1, status = -1;                                                               \
        enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;                                        \
        if (!t)                                                                                    \
            return real(h, rd, mode, lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy, weight_bytes,  \
                        weights, ws_bytes, ws, reserve_bytes, reserve);                            \
        if (f && mode == AMP_CUDNN_FWD_MODE_INFERENCE && rnn_get(f, rd, &c) &&                     \
            c.data == AMP_CUDNN_DATA_FLOAT && c.prec == AMP_CUDNN_DATA_FLOAT &&                    \
            (c.math == AMP_CUDNN_DEFAULT_MATH || c.math == AMP_CUDNN_TENSOR_OP_MATH))              \
            dtype = amp_decide_lower_dtype(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym, 0, &outcome);                          \
        if (dtype == AMP_DTYPE_FP16) {                                                             \
            struct scope s;                                                                        \
            size_t need = 0, reserve_need = 0, work_bytes = ws_bytes;                              \
            void *work = ws;                                                                       \
            scope_begin(&s, f, h);                                                                 \
            if (!s.failed && rnn_set_math(f, rd, &c, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)) { \
                if (f->ws_rnn(h, rd, mode, xd, &need, &reserve_need) == OK &&                      \
                    scope_workspace(&s, need, &work, &work_bytes))                                 \
                    status =                                                                       \
                        real(h, rd, mode, lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy,           \
                             weight_bytes, weights, work_bytes, work, reserve_bytes, reserve);     \
                rnn_set_math(f, rd, &c, c.math);                                                   \
            }                                                                                      \
            scope_end(&s);                                                                         \
            if (status != OK)                                                                      \
                outcome = amp_not_lowered_after_all(outcome);                                           \
        } else if (dtype == AMP_DTYPE_BF16) {                                                      \
            outcome = amp_not_lowered_after_all(outcome); /* no bf16 path */                            \
        }                                                                                          \
        if (status != OK) /* tf32 (cuDNN's own default on fp32), or as made */                     \
            status = real(h, rd, mode, lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy,              \
                          weight_bytes, weights, ws_bytes, ws, reserve_bytes, reserve);            \
        amp_count(t, AMP_HOOK_##sym, outcome, 1);                                                  \
        return status;                                                                             \
    }

/* CTC loss: cuDNN takes fp32 probabilities only; the call is an fp32 region
 * (forwarded word for word: both signatures are all machine words). */
#define AMP_DEFINE_CUDNN_CUDNN_REGION(sym) AMP_DEFINE_FP32_REGION_HOOK(sym)

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_CUDNN_##kind(sym)
AMPSHIM_HOOK_LIST_CUDNN(AMP_X_HOOK)
#undef AMP_X_HOOK
