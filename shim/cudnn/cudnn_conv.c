/* The cuDNN convolution hooks (category lower) on fp32 tensors with an fp32
 * convolution descriptor whose math type the program left to cuDNN:
 *   fp16  the call runs on a private copy of the convolution descriptor
 *         (dimensions, padding, strides, dilation, mode, compute type, group
 *         count, reorder type) with CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
 *         (cuDNN converts to fp16 itself);
 *   tf32  the call runs as made: cuDNN's default math on fp32 data already
 *         uses TF32 tensor cores on Ampere and later;
 *   bf16  explicit conversion: inputs are converted with cudnnTransformTensor
 *         into device scratch, the convolution runs on bf16 descriptors into
 *         bf16 scratch, and the result is blended into the program's output
 *         (alpha, beta) by one more cudnnTransformTensor.
 * A math type the program set itself (CUDNN_FMA_MATH, or ALLOW_CONVERSION)
 * and non-fp32 data or compute types leave the call unchanged; whatever fails
 * on the way runs the call exactly as the program made it. The program's
 * descriptors are only read, never changed, so threads sharing them see
 * nothing. */
#include "runtime/decide.h"
#include "shim/cudnn/cudnn_scope.h"
#include "shim/cuda/cuda_timing.h"
#include "shim/hook_stub.h"
#include "shim/resolve.h"

/* Forward, BackwardData and BackwardFilter share one shape: two inputs, an
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

static int conv_workspace(const struct amp_cudnn_helpers *f, enum conv_kind kind,
                          const struct conv_args *a, size_t *bytes)
{
    int (*query)(void *, void *, void *, void *, void *, int, size_t *) =
        kind == CONV_FWD        ? f->ws_fwd
        : kind == CONV_BWD_DATA ? f->ws_bwd_data
                                : f->ws_bwd_filter;
    return query(a->h, a->d1, a->d2, a->conv, a->dout, a->algo, bytes) == AMP_DNN_OK;
}

/* Makes sure the call has the workspace the (changed) configuration needs:
 * the program's own if it is large enough, else scratch. */
static int conv_ensure_workspace(struct amp_dnn_scope *s, enum conv_kind kind, struct conv_args *a)
{
    size_t need = 0;
    return conv_workspace(s->f, kind, a, &need) &&
           amp_dnn_scope_workspace(s, need, &a->ws, &a->ws_bytes);
}

/* Whether a convolution is all fp32 with a math type the program left to
 * cuDNN (default or tensor-op); *math is that math type. */
static int conv_plain_fp32(const struct amp_cudnn_helpers *f, enum conv_kind kind,
                           const struct conv_args *a, struct amp_dnn_view v[3], int *math)
{
    int pad[AMP_CUDNN_DIM_MAX], stride[AMP_CUDNN_DIM_MAX], dilation[AMP_CUDNN_DIM_MAX];
    int len, mode, compute = -1;
    return amp_dnn_describe(f, a->d1, kind == CONV_BWD_DATA, &v[0]) &&
           amp_dnn_describe(f, a->d2, kind == CONV_FWD, &v[1]) &&
           amp_dnn_describe(f, a->dout, kind == CONV_BWD_FILTER, &v[2]) &&
           v[0].type == AMP_CUDNN_DATA_FLOAT && v[1].type == AMP_CUDNN_DATA_FLOAT &&
           v[2].type == AMP_CUDNN_DATA_FLOAT &&
           f->get_conv(a->conv, AMP_CUDNN_DIM_MAX - 2, &len, pad, stride, dilation, &mode,
                       &compute) == AMP_DNN_OK &&
           compute == AMP_CUDNN_DATA_FLOAT && f->get_math(a->conv, math) == AMP_DNN_OK &&
           (*math == AMP_CUDNN_DEFAULT_MATH || *math == AMP_CUDNN_TENSOR_OP_MATH);
}

/* The multiply-adds of a convolution in any direction, for the size rule:
 * each element of y (forward's output, the backward passes' dy) takes one
 * per element of a filter of K (its first dimension). */
static double conv_madds(enum conv_kind kind, const struct amp_dnn_view v[3])
{
    const struct amp_dnn_view *w = &v[kind == CONV_FWD        ? 1
                                      : kind == CONV_BWD_DATA ? 0
                                                              : 2],
                              *y = &v[kind == CONV_FWD ? 2 : 1];
    double w_elems = 1, y_elems = 1;
    for (int i = 0; i < w->nb; i++)
        w_elems *= w->dims[i];
    for (int i = 0; i < y->nb; i++)
        y_elems *= y->dims[i];
    return w->nb > 0 && w->dims[0] > 0 ? y_elems * w_elems / w->dims[0] : 0;
}

/* A private copy of a convolution descriptor with math type `math`, owned
 * by the scope; NULL if it cannot be made. */
static void *conv_private(struct amp_dnn_scope *s, void *conv, int math)
{
    const struct amp_cudnn_helpers *f = s->f;
    int pad[AMP_CUDNN_DIM_MAX], stride[AMP_CUDNN_DIM_MAX], dilation[AMP_CUDNN_DIM_MAX];
    int len, mode, compute, groups, reorder;
    if (f->get_conv(conv, AMP_CUDNN_DIM_MAX - 2, &len, pad, stride, dilation, &mode, &compute) !=
            AMP_DNN_OK ||
        f->get_groups(conv, &groups) != AMP_DNN_OK || f->get_reorder(conv, &reorder) != AMP_DNN_OK)
        return NULL;
    void *priv = amp_dnn_scope_own(s, f->create_conv, f->destroy_conv);
    return priv && f->set_conv(priv, len, pad, stride, dilation, mode, compute) == AMP_DNN_OK &&
                   f->set_groups(priv, groups) == AMP_DNN_OK &&
                   f->set_reorder(priv, reorder) == AMP_DNN_OK &&
                   f->set_math(priv, math) == AMP_DNN_OK
               ? priv
               : NULL;
}

/* fp16: cuDNN converts, asked by the math type of a private descriptor. */
static int conv_fp16(struct amp_dnn_scope *s, enum conv_kind kind, conv_fn real, struct conv_args a)
{
    a.conv = conv_private(s, a.conv, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    return a.conv && conv_ensure_workspace(s, kind, &a) ? conv_call(real, &a) : -1;
}

/* bf16: inputs converted into scratch, the result blended back. */
static int conv_bf16(struct amp_dnn_scope *s, enum conv_kind kind, conv_fn real, struct conv_args a,
                     const struct amp_dnn_view v[3])
{
    const int bf16 = AMP_CUDNN_DATA_BFLOAT16;
    struct conv_args low = a;
    void *out_alias;
    low.p1 = amp_dnn_scope_convert(s, &v[0], a.p1, bf16, &low.d1);
    low.p2 = amp_dnn_scope_convert(s, &v[1], a.p2, bf16, &low.d2);
    low.pout = amp_dnn_scope_buffer(s, &v[2], bf16, &low.dout, &out_alias);
    low.alpha = &amp_dnn_one;
    low.beta = &amp_dnn_zero;
    if (s->failed || !conv_ensure_workspace(s, kind, &low))
        return -1;
    int status = conv_call(real, &low);
    if (status == AMP_DNN_OK &&
        !amp_dnn_scope_blend(s, &v[2], low.pout, bf16, a.alpha, a.beta, a.pout))
        status = -1;
    return status;
}

static int conv_hook(enum conv_kind kind, enum amp_hook_id hook, conv_fn real, struct conv_args a)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return conv_call(real, &a);
    const struct amp_cudnn_helpers *f = amp_dnn((const void *)real);
    struct amp_dnn_view v[3];
    int math = -1, dtype = -1, status = -1;
    enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;
    if (f && conv_plain_fp32(f, kind, &a, v, &math))
        dtype = amp_cuda_size_rule(
            t, hook, 0, amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, hook, 0, &outcome),
            conv_madds(kind, v), &outcome);
    if (dtype == AMP_DTYPE_FP16 || dtype == AMP_DTYPE_BF16) {
        struct amp_dnn_scope s;
        amp_dnn_scope_begin(&s, f, a.h);
        if (!s.failed)
            status = dtype == AMP_DTYPE_FP16 ? conv_fp16(&s, kind, real, a)
                                             : conv_bf16(&s, kind, real, a, v);
        amp_dnn_scope_end(&s);
        amp_count(t, hook, AMP_CTL_CONVERTED, s.converted);
        if (status != AMP_DNN_OK)
            outcome = amp_not_lowered_after_all(outcome);
    }
    if (status != AMP_DNN_OK) /* tf32 (cuDNN's own default on fp32), or as made */
        status = conv_call(real, &a);
    amp_count(t, hook, outcome, 1);
    return status;
}

/* A convolution whose GPU time is taken (shim/cuda/cuda_timing.h): the
 * hook above between the events on the handle's stream. */
__attribute__((noinline)) static int conv_timed(enum conv_kind kind, enum amp_hook_id hook,
                                                conv_fn real, struct conv_args a)
{
    struct amp_thread *t = amp_thread_enter();
    const struct amp_cudnn_helpers *f = t ? amp_dnn((const void *)real) : NULL;
    struct amp_cuda_timed tm = {.pair = -1};
    void *stream = NULL;
    if (f && f->get_stream(a.h, &stream) == AMP_DNN_OK)
        amp_cuda_time_start(&tm, t, hook, stream);
    int status = conv_hook(kind, hook, real, a);
    amp_cuda_time_end(&tm, t, hook, stream);
    return status;
}

/* The exported entry points: the signature, and the hook above. */
AMP_STUB(cudnnConvolutionForward)
int AMP_C_ENTRY(cudnnConvolutionForward)(void *h, const void *alpha, void *d1, const void *p1,
                                         void *d2, const void *p2, void *conv, int algo, void *ws,
                                         size_t ws_bytes, const void *beta, void *dout, void *pout)
{
    AMP_NOTE_CALLER();
    struct conv_args a = {h, alpha, d1, p1, d2, p2, conv, algo, ws, ws_bytes, beta, dout, pout};
    conv_fn real = (conv_fn)amp_real(AMP_HOOK_cudnnConvolutionForward);
    return amp_likely(!amp_cuda_timing_due())
               ? conv_hook(CONV_FWD, AMP_HOOK_cudnnConvolutionForward, real, a)
               : conv_timed(CONV_FWD, AMP_HOOK_cudnnConvolutionForward, real, a);
}

AMP_STUB(cudnnConvolutionBackwardData)
int AMP_C_ENTRY(cudnnConvolutionBackwardData)(void *h, const void *alpha, void *d1, const void *p1,
                                              void *d2, const void *p2, void *conv, int algo,
                                              void *ws, size_t ws_bytes, const void *beta,
                                              void *dout, void *pout)
{
    AMP_NOTE_CALLER();
    struct conv_args a = {h, alpha, d1, p1, d2, p2, conv, algo, ws, ws_bytes, beta, dout, pout};
    conv_fn real = (conv_fn)amp_real(AMP_HOOK_cudnnConvolutionBackwardData);
    return amp_likely(!amp_cuda_timing_due())
               ? conv_hook(CONV_BWD_DATA, AMP_HOOK_cudnnConvolutionBackwardData, real, a)
               : conv_timed(CONV_BWD_DATA, AMP_HOOK_cudnnConvolutionBackwardData, real, a);
}

AMP_STUB(cudnnConvolutionBackwardFilter)
int AMP_C_ENTRY(cudnnConvolutionBackwardFilter)(void *h, const void *alpha, void *d1,
                                                const void *p1, void *d2, const void *p2,
                                                void *conv, int algo, void *ws, size_t ws_bytes,
                                                const void *beta, void *dout, void *pout)
{
    AMP_NOTE_CALLER();
    struct conv_args a = {h, alpha, d1, p1, d2, p2, conv, algo, ws, ws_bytes, beta, dout, pout};
    conv_fn real = (conv_fn)amp_real(AMP_HOOK_cudnnConvolutionBackwardFilter);
    return amp_likely(!amp_cuda_timing_due())
               ? conv_hook(CONV_BWD_FILTER, AMP_HOOK_cudnnConvolutionBackwardFilter, real, a)
               : conv_timed(CONV_BWD_FILTER, AMP_HOOK_cudnnConvolutionBackwardFilter, real, a);
}


/* The fused convolution + bias + activation: fp16 through the math type as
 * above, tf32 as made. bf16 has no library path here (the fused call would
 * need bf16 z, bias and output as well) and runs as made, counted as
 * passthrough. */
typedef int (*conv_bias_act_fn)(void *, const void *, void *, const void *, void *, const void *,
                                void *, int, void *, size_t, const void *, void *, const void *,
                                void *, const void *, void *, void *, void *);

static int conv_bias_act(enum amp_hook_id hook, conv_bias_act_fn real, void *h, const void *alpha1,
                         void *xd, const void *x, void *wd, const void *w, void *conv, int algo,
                         void *ws, size_t ws_bytes, const void *alpha2, void *zd, const void *z,
                         void *bd, const void *bias, void *act, void *yd, void *y)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return real(h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, alpha2, zd, z, bd, bias, act,
                    yd, y);
    const struct amp_cudnn_helpers *f = amp_dnn((const void *)real);
    struct conv_args a = {h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, NULL, yd, y};
    struct amp_dnn_view v[3];
    int math = -1, dtype = -1, status = -1;
    enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;
    if (f && conv_plain_fp32(f, CONV_FWD, &a, v, &math))
        dtype = amp_cuda_size_rule(
            t, hook, 0, amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, hook, 0, &outcome),
            conv_madds(CONV_FWD, v), &outcome);
    if (dtype == AMP_DTYPE_FP16) {
        struct amp_dnn_scope s;
        amp_dnn_scope_begin(&s, f, h);
        a.conv = conv_private(&s, conv, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
        if (a.conv && conv_ensure_workspace(&s, CONV_FWD, &a))
            status = real(h, alpha1, xd, x, wd, w, a.conv, algo, a.ws, a.ws_bytes, alpha2, zd, z,
                          bd, bias, act, yd, y);
        amp_dnn_scope_end(&s);
        if (status != AMP_DNN_OK)
            outcome = amp_not_lowered_after_all(outcome);
    } else if (dtype == AMP_DTYPE_BF16) {
        outcome = amp_not_lowered_after_all(outcome); /* no bf16 path */
    }
    if (status != AMP_DNN_OK) /* tf32 (cuDNN's own default on fp32), or as made */
        status = real(h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, alpha2, zd, z, bd, bias,
                      act, yd, y);
    amp_count(t, hook, outcome, 1);
    return status;
}

AMP_STUB(cudnnConvolutionBiasActivationForward)
int AMP_C_ENTRY(cudnnConvolutionBiasActivationForward)(
    void *h, const void *alpha1, void *xd, const void *x, void *wd, const void *w, void *conv,
    int algo, void *ws, size_t ws_bytes, const void *alpha2, void *zd, const void *z, void *bd,
    const void *bias, void *act, void *yd, void *y)
{
    AMP_NOTE_CALLER();
    return conv_bias_act(AMP_HOOK_cudnnConvolutionBiasActivationForward,
                         (conv_bias_act_fn)amp_real(AMP_HOOK_cudnnConvolutionBiasActivationForward),
                         h, alpha1, xd, x, wd, w, conv, algo, ws, ws_bytes, alpha2, zd, z, bd, bias,
                         act, yd, y);
}
