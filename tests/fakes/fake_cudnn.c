/* TEST-ONLY AMP_EXPORT of libcudnn.so.9: a CPU stand-in, never installed, so the
 * cuDNN hooks can be tested on machines without a GPU. Compiled against the
 * real cudnn.h (every signature is the real one), it works on host memory
 * and implements the slice of the legacy API the tests use: 4-d NCHW
 * convolutions (forward, both backward passes, bias + activation), tensor
 * transforms, softmax, reductions, inference normalisation and CTC loss
 * costs. It records the last call (function, math type, data types, compute
 * type, workspace) for the tests and emulates precision:
 *   - fp32 convolutions: CUDNN_FMA_MATH exact fp32 products; default and
 *     tensor-op math TF32 (as on Ampere and later; exact under
 *     NVIDIA_TF32_OVERRIDE=0); ALLOW_CONVERSION rounds the operands to fp16
 *     and needs 256 bytes of workspace;
 *   - half and bf16 data: operands as stored, fp32 accumulation, the result
 *     rounded to the type; bf16 convolutions need 128 bytes of workspace and
 *     are refused with FAKE_CUDNN_NO_BF16=1;
 *   - softmax and normalisation of half or bf16 tensors round every
 *     intermediate to the tensor's type (reduced-precision arithmetic, the
 *     thing an fp32-list op must avoid); reductions accumulate in their
 *     compute type and need 64 bytes of workspace for an fp32 compute type
 *     over half data.
 * Built a second time with FAKE_CUDNN_PARTIAL (tests/fakes/partial), it
 * lacks cudnnGetReductionWorkspaceSize: a cuDNN the shim cannot use.
 *
 * This file: the record, precision, handle and descriptors, convolutions,
 * element-wise and fp32-list operations; fake_cudnn_ctc.c has CTC loss and
 * fake_cudnn_rnn.c the RNNs (tests/fakes/fake_cudnn_internal.h is what they
 * share). */
#include <cudnn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "shim/cuda/cudnn_abi.h"
#include "tests/fakes/fake_cudnn_internal.h"

#define SAME(real, ours) _Static_assert((int)(real) == (int)(ours), #ours)
SAME(CUDNN_STATUS_SUCCESS, AMP_CUDNN_STATUS_SUCCESS);
SAME(CUDNN_DIM_MAX, AMP_CUDNN_DIM_MAX);
SAME(CUDNN_DATA_FLOAT, AMP_CUDNN_DATA_FLOAT);
SAME(CUDNN_DATA_HALF, AMP_CUDNN_DATA_HALF);
SAME(CUDNN_DATA_BFLOAT16, AMP_CUDNN_DATA_BFLOAT16);
SAME(CUDNN_DEFAULT_MATH, AMP_CUDNN_DEFAULT_MATH);
SAME(CUDNN_TENSOR_OP_MATH, AMP_CUDNN_TENSOR_OP_MATH);
SAME(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
SAME(CUDNN_TENSOR_NCHW, AMP_CUDNN_TENSOR_NCHW);
SAME(CUDNN_TENSOR_NHWC, AMP_CUDNN_TENSOR_NHWC);
SAME(CUDNN_FWD_MODE_INFERENCE, AMP_CUDNN_FWD_MODE_INFERENCE);
SAME(CUDNN_NORM_OPS_NORM, AMP_CUDNN_NORM_OPS_NORM);

/* Per thread, so threads calling at once each see their own last call. */
static __thread struct fake_cudnn_record last;

AMP_EXPORT const struct fake_cudnn_record *fake_cudnn_last_call(void)
{
    return &last;
}

void fake_cudnn_record(const char *function, int math, int t0, int t1, int t2, int compute,
                   size_t workspace)
{
    fake_record_name(last.function, sizeof last.function, function);
    last.math = math;
    last.type[0] = t0;
    last.type[1] = t1;
    last.type[2] = t2;
    last.compute = compute;
    last.workspace = workspace;
    last.calls++;
}

/* ---- precision ----------------------------------------------------------- */
float fake_to_type(cudnnDataType_t type, float x)
{
    switch (type) {
    case CUDNN_DATA_HALF:
        return (float)(_Float16)x;
    case CUDNN_DATA_BFLOAT16:
        return fake_round_bits(x, 16);
    default:
        return x;
    }
}

int fake_type_ok(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

float fake_load(cudnnDataType_t type, const void *p, long i)
{
    switch (type) {
    case CUDNN_DATA_HALF:
        return (float)((const _Float16 *)p)[i];
    case CUDNN_DATA_BFLOAT16: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    default:
        return ((const float *)p)[i];
    }
}

void fake_store(cudnnDataType_t type, void *p, long i, float x)
{
    switch (type) {
    case CUDNN_DATA_HALF:
        ((_Float16 *)p)[i] = (_Float16)x;
        break;
    case CUDNN_DATA_BFLOAT16: {
        float r = fake_round_bits(x, 16);
        uint32_t u;
        memcpy(&u, &r, 4);
        ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
        break;
    }
    default:
        ((float *)p)[i] = x;
    }
}

/* out = alpha * value + beta * out (out not read when beta is 0). */
void fake_blend(cudnnDataType_t type, void *p, long i, float value, float alpha, float beta)
{
    float v = alpha * value;
    if (beta != 0.0f)
        v += beta * fake_load(type, p, i);
    fake_store(type, p, i, v);
}

int fake_tf32_allowed(void)
{
    static int allowed = -1;
    if (allowed < 0) {
        const char *o = getenv("NVIDIA_TF32_OVERRIDE");
        allowed = !(o && strcmp(o, "0") == 0);
    }
    return allowed;
}

/* ---- handle and descriptors ---------------------------------------------- */
AMP_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    *h = calloc(1, sizeof **h);
    return *h ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    free(h);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t h, cudaStream_t *s)
{
    *s = h->stream;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t type,
                                              int nb, const int dims[], const int strides[])
{
    if (!d || nb < 3 || nb > CUDNN_DIM_MAX || !fake_type_ok(type))
        return BAD;
    for (int i = 0; i < nb; i++)
        if (dims[i] <= 0 || strides[i] <= 0)
            return BAD;
    d->type = type;
    d->nb = nb;
    memcpy(d->dims, dims, sizeof(int) * (size_t)nb);
    memcpy(d->strides, strides, sizeof(int) * (size_t)nb);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                              cudnnDataType_t type, int n, int c, int h, int w)
{
    int dims[4] = {n, c, h, w};
    int nchw[4] = {c * h * w, h * w, w, 1}, nhwc[4] = {h * w * c, 1, w * c, c};
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC)
        return BAD;
    return cudnnSetTensorNdDescriptor(d, type, 4, dims, format == CUDNN_TENSOR_NCHW ? nchw : nhwc);
}

AMP_EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int requested,
                                              cudnnDataType_t *type, int *nb, int dims[],
                                              int strides[])
{
    if (!d || !d->nb)
        return BAD;
    *type = d->type;
    *nb = d->nb;
    for (int i = 0; i < d->nb && i < requested; i++) {
        dims[i] = d->dims[i];
        strides[i] = d->strides[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

struct cudnnFilterStruct {
    cudnnDataType_t type;
    cudnnTensorFormat_t format;
    int nb, dims[CUDNN_DIM_MAX];
};

AMP_EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                              cudnnTensorFormat_t format, int nb, const int dims[])
{
    if (!d || nb < 3 || nb > CUDNN_DIM_MAX || !fake_type_ok(type) ||
        (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC))
        return BAD;
    d->type = type;
    d->format = format;
    d->nb = nb;
    memcpy(d->dims, dims, sizeof(int) * (size_t)nb);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                              cudnnTensorFormat_t format, int k, int c, int h,
                                              int w)
{
    int dims[4] = {k, c, h, w};
    return cudnnSetFilterNdDescriptor(d, type, format, 4, dims);
}

AMP_EXPORT cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d, int requested,
                                              cudnnDataType_t *type, cudnnTensorFormat_t *format,
                                              int *nb, int dims[])
{
    if (!d || !d->nb)
        return BAD;
    *type = d->type;
    *format = d->format;
    *nb = d->nb;
    for (int i = 0; i < d->nb && i < requested; i++)
        dims[i] = d->dims[i];
    return CUDNN_STATUS_SUCCESS;
}

/* A filter's element strides, from its format. */
static void filter_strides(const struct cudnnFilterStruct *f, int s[4])
{
    const int *d = f->dims;
    if (f->format == CUDNN_TENSOR_NCHW) {
        s[0] = d[1] * d[2] * d[3], s[1] = d[2] * d[3], s[2] = d[3], s[3] = 1;
    } else {
        s[0] = d[2] * d[3] * d[1], s[1] = 1, s[2] = d[3] * d[1], s[3] = d[1];
    }
}

struct cudnnConvolutionStruct {
    int pad[2], stride[2], dilation[2];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math;
    int groups;
    cudnnReorderType_t reorder;
    long writes; /* every setter call on this descriptor: tests see none from the shim */
};

/* How many times a descriptor was written through a setter. */
AMP_EXPORT long fake_cudnn_conv_writes(cudnnConvolutionDescriptor_t d)
{
    return d->writes;
}

/* The group count and reorder type of the descriptor the last convolution
 * ran with. */
static int last_groups, last_reorder;
AMP_EXPORT void fake_cudnn_last_conv(int *groups, int *reorder)
{
    *groups = last_groups;
    *reorder = last_reorder;
}

AMP_EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    if (*d)
        (*d)->groups = 1;
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h,
                                                   int pad_w, int u, int v, int dil_h, int dil_w,
                                                   cudnnConvolutionMode_t mode,
                                                   cudnnDataType_t compute)
{
    if (pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dil_h <= 0 || dil_w <= 0)
        return BAD;
    *d = (struct cudnnConvolutionStruct){{pad_h, pad_w}, {u, v},      {dil_h, dil_w}, mode,
                                         compute,        d->math,     d->groups,      d->reorder,
                                         d->writes + 1};
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int length,
                                                         const int pad[], const int stride[],
                                                         const int dilation[],
                                                         cudnnConvolutionMode_t mode,
                                                         cudnnDataType_t compute)
{
    if (length != 2)
        return UNSUPPORTED;
    return cudnnSetConvolution2dDescriptor(d, pad[0], pad[1], stride[0], stride[1], dilation[0],
                                           dilation[1], mode, compute);
}

AMP_EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups)
{
    if (groups < 1)
        return BAD;
    d->groups = groups;
    d->writes++;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int *groups)
{
    *groups = d->groups;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetConvolutionReorderType(cudnnConvolutionDescriptor_t d,
                                                        cudnnReorderType_t reorder)
{
    d->reorder = reorder;
    d->writes++;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionReorderType(cudnnConvolutionDescriptor_t d,
                                                        cudnnReorderType_t *reorder)
{
    *reorder = d->reorder;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t d,
                                                   int requested, int *length, int pad[],
                                                   int stride[], int dilation[],
                                                   cudnnConvolutionMode_t *mode,
                                                   cudnnDataType_t *compute)
{
    if (requested < 2 || requested > CUDNN_DIM_MAX - 2)
        return BAD;
    *length = 2;
    for (int i = 0; i < 2; i++)
        pad[i] = d->pad[i], stride[i] = d->stride[i], dilation[i] = d->dilation[i];
    *mode = d->mode;
    *compute = d->compute;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m)
{
    if (m < CUDNN_DEFAULT_MATH || m > CUDNN_FMA_MATH)
        return BAD;
    d->math = m;
    d->writes++;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t *m)
{
    *m = d->math;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- convolutions ---------------------------------------------------------- */
enum { FWD, BWD_DATA, BWD_FILTER };

/* The three operands: x (tensor), w (filter), y (tensor). */
struct conv_ops {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    const struct cudnnConvolutionStruct *conv;
};

static int conv_valid(const struct conv_ops *o)
{
    const int *x = o->x->dims, *w = o->w->dims, *y = o->y->dims;
    if (o->x->nb != 4 || o->y->nb != 4 || o->w->nb != 4 || x[1] != w[1] || y[1] != w[0] ||
        y[0] != x[0] || o->x->type != o->w->type || o->x->type != o->y->type)
        return 0;
    for (int i = 0; i < 2; i++) {
        int ext = o->conv->dilation[i] * (w[2 + i] - 1) + 1;
        if (y[2 + i] != (x[2 + i] + 2 * o->conv->pad[i] - ext) / o->conv->stride[i] + 1)
            return 0;
    }
    return 1;
}

static size_t conv_workspace(const struct conv_ops *o)
{
    if (o->x->type == CUDNN_DATA_BFLOAT16)
        return 128;
    return o->x->type == CUDNN_DATA_FLOAT && o->conv->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
               ? 256
               : 0;
}

/* How fp32 operands are rounded under the descriptor's math type. */
static float operand(const struct conv_ops *o, float v)
{
    if (o->x->type != CUDNN_DATA_FLOAT || o->conv->math == CUDNN_FMA_MATH)
        return v;
    if (o->conv->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return (float)(_Float16)v;
    return fake_tf32_allowed() ? fake_round_bits(v, 13) : v;
}

/* One of the three products. `a` and `b` are the two inputs in the order the
 * API takes them; the output (y, x or w) is blended with alpha and beta. */
static cudnnStatus_t conv_run(const char *name, int kind, const struct conv_ops *o, const void *xp,
                              const void *wp, const void *yp, void *out, float alpha, float beta,
                              size_t ws, const void *workspace)
{
    if (!conv_valid(o))
        return BAD;
    last_groups = o->conv->groups;
    last_reorder = (int)o->conv->reorder;
    if (o->x->type == CUDNN_DATA_BFLOAT16 && getenv("FAKE_CUDNN_NO_BF16"))
        return UNSUPPORTED;
    size_t need = conv_workspace(o);
    if (ws < need || (need && !workspace))
        return BAD;
    fake_cudnn_record(name, o->conv->math, kind == BWD_DATA ? o->w->type : o->x->type,
           kind == FWD ? o->w->type : o->y->type,
           kind == BWD_FILTER ? o->w->type
           : kind == FWD      ? o->y->type
                              : o->x->type,
           o->conv->compute, ws);
    const int *X = o->x->dims, *W = o->w->dims, *Y = o->y->dims;
    const int *xs = o->x->strides, *ys = o->y->strides;
    int wsd[4];
    filter_strides(o->w, wsd);
    long n_out = kind == FWD        ? (long)Y[0] * Y[1] * Y[2] * Y[3]
                 : kind == BWD_DATA ? (long)X[0] * X[1] * X[2] * X[3]
                                    : (long)W[0] * W[1] * W[2] * W[3];
    float *acc = calloc((size_t)n_out, sizeof *acc);
    if (!acc)
        return CUDNN_STATUS_ALLOC_FAILED;
    cudnnDataType_t t = o->x->type;
    for (int n = 0; n < X[0]; n++)
        for (int k = 0; k < W[0]; k++)
            for (int c = 0; c < W[1]; c++)
                for (int p = 0; p < Y[2]; p++)
                    for (int q = 0; q < Y[3]; q++)
                        for (int r = 0; r < W[2]; r++)
                            for (int s = 0; s < W[3]; s++) {
                                int rr = o->conv->mode == CUDNN_CONVOLUTION ? W[2] - 1 - r : r;
                                int ss = o->conv->mode == CUDNN_CONVOLUTION ? W[3] - 1 - s : s;
                                int h = p * o->conv->stride[0] - o->conv->pad[0] +
                                        rr * o->conv->dilation[0];
                                int w = q * o->conv->stride[1] - o->conv->pad[1] +
                                        ss * o->conv->dilation[1];
                                if (h < 0 || h >= X[2] || w < 0 || w >= X[3])
                                    continue;
                                long xi = (long)n * xs[0] + (long)c * xs[1] + (long)h * xs[2] +
                                          (long)w * xs[3];
                                long wi = (long)k * wsd[0] + (long)c * wsd[1] + (long)r * wsd[2] +
                                          (long)s * wsd[3];
                                long yi = (long)n * ys[0] + (long)k * ys[1] + (long)p * ys[2] +
                                          (long)q * ys[3];
                                if (kind == FWD)
                                    acc[((long)(n * Y[1] + k) * Y[2] + p) * Y[3] + q] +=
                                        operand(o, fake_load(t, xp, xi)) * operand(o, fake_load(t, wp, wi));
                                else if (kind == BWD_DATA)
                                    acc[((long)(n * X[1] + c) * X[2] + h) * X[3] + w] +=
                                        operand(o, fake_load(t, yp, yi)) * operand(o, fake_load(t, wp, wi));
                                else
                                    acc[((long)(k * W[1] + c) * W[2] + r) * W[3] + s] +=
                                        operand(o, fake_load(t, xp, xi)) * operand(o, fake_load(t, yp, yi));
                            }
    /* Blend into the output at its own strides. */
    const int *D = kind == FWD ? Y : kind == BWD_DATA ? X : W;
    const int *ds = kind == FWD ? ys : kind == BWD_DATA ? xs : wsd;
    long i = 0;
    for (int a = 0; a < D[0]; a++)
        for (int b = 0; b < D[1]; b++)
            for (int c = 0; c < D[2]; c++)
                for (int d = 0; d < D[3]; d++, i++)
                    fake_blend(t, out,
                          (long)a * ds[0] + (long)b * ds[1] + (long)c * ds[2] + (long)d * ds[3],
                          acc[i], alpha, beta);
    free(acc);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y,
    cudnnConvolutionFwdAlgo_t algo, size_t *size)
{
    (void)h, (void)algo;
    struct conv_ops o = {x, y, w, conv};
    if (!conv_valid(&o))
        return BAD;
    *size = conv_workspace(&o);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *size)
{
    (void)h, (void)algo;
    struct conv_ops o = {dx, dy, w, conv};
    if (!conv_valid(&o))
        return BAD;
    *size = conv_workspace(&o);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *size)
{
    (void)h, (void)algo;
    struct conv_ops o = {x, dy, dw, conv};
    if (!conv_valid(&o))
        return BAD;
    *size = conv_workspace(&o);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
                                           const cudnnTensorDescriptor_t xd, const void *x,
                                           const cudnnFilterDescriptor_t wd, const void *w,
                                           const cudnnConvolutionDescriptor_t conv,
                                           cudnnConvolutionFwdAlgo_t algo, void *ws,
                                           size_t ws_bytes, const void *beta,
                                           const cudnnTensorDescriptor_t yd, void *y)
{
    (void)h, (void)algo;
    struct conv_ops o = {xd, yd, wd, conv};
    return conv_run(__func__, FWD, &o, x, w, NULL, y, *(const float *)alpha, *(const float *)beta,
                    ws_bytes, ws);
}

AMP_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
                                                const cudnnFilterDescriptor_t wd, const void *w,
                                                const cudnnTensorDescriptor_t dyd, const void *dy,
                                                const cudnnConvolutionDescriptor_t conv,
                                                cudnnConvolutionBwdDataAlgo_t algo, void *ws,
                                                size_t ws_bytes, const void *beta,
                                                const cudnnTensorDescriptor_t dxd, void *dx)
{
    (void)h, (void)algo;
    struct conv_ops o = {dxd, dyd, wd, conv};
    return conv_run(__func__, BWD_DATA, &o, NULL, w, dy, dx, *(const float *)alpha,
                    *(const float *)beta, ws_bytes, ws);
}

AMP_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
                                                  const cudnnTensorDescriptor_t xd, const void *x,
                                                  const cudnnTensorDescriptor_t dyd, const void *dy,
                                                  const cudnnConvolutionDescriptor_t conv,
                                                  cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
                                                  size_t ws_bytes, const void *beta,
                                                  const cudnnFilterDescriptor_t dwd, void *dw)
{
    (void)h, (void)algo;
    struct conv_ops o = {xd, dyd, dwd, conv};
    return conv_run(__func__, BWD_FILTER, &o, x, NULL, dy, dw, *(const float *)alpha,
                    *(const float *)beta, ws_bytes, ws);
}

struct cudnnActivationStruct {
    cudnnActivationMode_t mode;
};

AMP_EXPORT cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d,
                                                cudnnActivationMode_t mode,
                                                cudnnNanPropagation_t nan, double coef)
{
    (void)nan, (void)coef;
    if (mode != CUDNN_ACTIVATION_RELU && mode != CUDNN_ACTIVATION_IDENTITY)
        return UNSUPPORTED;
    d->mode = mode;
    return CUDNN_STATUS_SUCCESS;
}

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias), bias one value a channel. */
AMP_EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes, const void *alpha2,
    const cudnnTensorDescriptor_t zd, const void *z, const cudnnTensorDescriptor_t bd,
    const void *bias, const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t yd,
    void *y)
{
    (void)h, (void)algo;
    struct conv_ops o = {xd, yd, wd, conv};
    const int *Y = yd->dims;
    if (zd->type != yd->type || memcmp(zd->dims, Y, sizeof(int) * 4) != 0 || bd->dims[1] != Y[1])
        return BAD;
    long n = (long)Y[0] * Y[1] * Y[2] * Y[3];
    struct cudnnTensorStruct packed = {
        CUDNN_DATA_FLOAT, 4, {Y[0], Y[1], Y[2], Y[3]}, {Y[1] * Y[2] * Y[3], Y[2] * Y[3], Y[3], 1}};
    struct conv_ops into_tmp = o;
    /* The convolution in the operands' type, into fp32. */
    packed.type = yd->type;
    into_tmp.y = &packed;
    float *typed = calloc((size_t)n, 4);
    cudnnStatus_t st =
        typed ? conv_run(__func__, FWD, &into_tmp, x, w, NULL, typed, 1.0f, 0.0f, ws_bytes, ws)
              : CUDNN_STATUS_ALLOC_FAILED;
    if (st == CUDNN_STATUS_SUCCESS) {
        long i = 0;
        for (int a = 0; a < Y[0]; a++)
            for (int b = 0; b < Y[1]; b++)
                for (int c = 0; c < Y[2]; c++)
                    for (int d = 0; d < Y[3]; d++, i++) {
                        long yi = (long)a * yd->strides[0] + (long)b * yd->strides[1] +
                                  (long)c * yd->strides[2] + (long)d * yd->strides[3];
                        long zi = (long)a * zd->strides[0] + (long)b * zd->strides[1] +
                                  (long)c * zd->strides[2] + (long)d * zd->strides[3];
                        float v = *(const float *)alpha1 * fake_load(yd->type, typed, i) +
                                  *(const float *)alpha2 * fake_load(zd->type, z, zi) +
                                  fake_load(bd->type, bias, (long)b * bd->strides[1]);
                        if (act->mode == CUDNN_ACTIVATION_RELU && v < 0.0f)
                            v = 0.0f;
                        fake_store(yd->type, y, yi, v);
                    }
    }
    free(typed);
    return st;
}

/* ---- element-wise and fp32-list operations --------------------------------- */
/* Calls fn(i_a, i_b, user) for every element of dims, with offsets under
 * two stride sets. */
static void each(int nb, const int *dims, const int *sa, const int *sb,
                 void (*fn)(long, long, void *), void *user)
{
    int idx[CUDNN_DIM_MAX] = {0};
    for (;;) {
        long a = 0, b = 0;
        for (int i = 0; i < nb; i++)
            a += (long)idx[i] * sa[i], b += (long)idx[i] * sb[i];
        fn(a, b, user);
        int i = nb - 1;
        while (i >= 0 && ++idx[i] == dims[i])
            idx[i--] = 0;
        if (i < 0)
            return;
    }
}

struct transform_job {
    cudnnTensorDescriptor_t xd, yd;
    const void *x;
    void *y;
    float alpha, beta;
};

static void transform_one(long xi, long yi, void *user)
{
    struct transform_job *j = user;
    fake_blend(j->yd->type, j->y, yi, fake_load(j->xd->type, j->x, xi), j->alpha, j->beta);
}

AMP_EXPORT cudnnStatus_t cudnnTransformTensor(cudnnHandle_t h, const void *alpha,
                                        const cudnnTensorDescriptor_t xd, const void *x,
                                        const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
    (void)h;
    if (xd->nb != yd->nb || memcmp(xd->dims, yd->dims, sizeof(int) * (size_t)xd->nb) != 0)
        return BAD;
    struct transform_job j = {xd, yd, x, y, *(const float *)alpha, *(const float *)beta};
    each(xd->nb, xd->dims, xd->strides, yd->strides, transform_one, &j);
    return CUDNN_STATUS_SUCCESS;
}

/* Softmax over C (channel mode) or C, H, W (instance mode) of 4-d tensors;
 * `q` rounds each intermediate to the tensor's type. */
struct softmax_shape {
    int groups, len;
    long base[4096], step;
};

static int softmax_shape(cudnnSoftmaxMode_t mode, const struct cudnnTensorStruct *d,
                         struct softmax_shape *s)
{
    const int *D = d->dims, *S = d->strides;
    if (d->nb != 4 || (long)D[0] * D[2] * D[3] > 4096)
        return 0;
    s->groups = 0;
    if (mode == CUDNN_SOFTMAX_MODE_CHANNEL) {
        s->len = D[1];
        s->step = S[1];
        for (int n = 0; n < D[0]; n++)
            for (int hh = 0; hh < D[2]; hh++)
                for (int w = 0; w < D[3]; w++)
                    s->base[s->groups++] = (long)n * S[0] + (long)hh * S[2] + (long)w * S[3];
        return 1;
    }
    /* instance mode: needs C, H, W packed so one step walks them */
    if (S[3] != 1 || S[2] != D[3] || S[1] != D[2] * D[3])
        return 0;
    s->len = D[1] * D[2] * D[3];
    s->step = 1;
    for (int n = 0; n < D[0]; n++)
        s->base[s->groups++] = (long)n * S[0];
    return 1;
}

static int same_layout(const struct cudnnTensorStruct *a, const struct cudnnTensorStruct *b)
{
    return a->nb == b->nb && memcmp(a->dims, b->dims, sizeof(int) * (size_t)a->nb) == 0 &&
           memcmp(a->strides, b->strides, sizeof(int) * (size_t)a->nb) == 0;
}

AMP_EXPORT cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo,
                                       cudnnSoftmaxMode_t mode, const void *alpha,
                                       const cudnnTensorDescriptor_t xd, const void *x,
                                       const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
    (void)h;
    struct softmax_shape s;
    if (!same_layout(xd, yd) || !softmax_shape(mode, xd, &s))
        return UNSUPPORTED;
    fake_cudnn_record(__func__, -1, xd->type, yd->type, yd->type, xd->type, 0);
    cudnnDataType_t t = xd->type;
    for (int g = 0; g < s.groups; g++) {
        float max = -INFINITY, sum = 0.0f;
        for (int i = 0; i < s.len; i++)
            max = fmaxf(max, fake_load(t, x, s.base[g] + i * s.step));
        if (algo == CUDNN_SOFTMAX_FAST)
            max = 0.0f;
        for (int i = 0; i < s.len; i++)
            sum = fake_to_type(
                t, sum + fake_to_type(t, expf(fake_to_type(t, fake_load(t, x, s.base[g] + i * s.step) - max))));
        for (int i = 0; i < s.len; i++) {
            long at = s.base[g] + i * s.step;
            float d = fake_to_type(t, fake_load(t, x, at) - max);
            float v = algo == CUDNN_SOFTMAX_LOG ? fake_to_type(t, d - fake_to_type(t, logf(sum)))
                                                : fake_to_type(t, fake_to_type(t, expf(d)) / sum);
            fake_blend(yd->type, y, at, v, *(const float *)alpha, *(const float *)beta);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t h, cudnnSoftmaxAlgorithm_t algo,
                                        cudnnSoftmaxMode_t mode, const void *alpha,
                                        const cudnnTensorDescriptor_t yd, const void *y,
                                        const cudnnTensorDescriptor_t dyd, const void *dy,
                                        const void *beta, const cudnnTensorDescriptor_t dxd,
                                        void *dx)
{
    (void)h;
    struct softmax_shape s;
    if (!same_layout(yd, dyd) || !same_layout(yd, dxd) || !softmax_shape(mode, yd, &s))
        return UNSUPPORTED;
    fake_cudnn_record(__func__, -1, yd->type, dyd->type, dxd->type, yd->type, 0);
    cudnnDataType_t t = yd->type;
    for (int g = 0; g < s.groups; g++) {
        float dot = 0.0f;
        for (int i = 0; i < s.len; i++) {
            long at = s.base[g] + i * s.step;
            float term = algo == CUDNN_SOFTMAX_LOG ? fake_load(t, dy, at)
                                                   : fake_to_type(t, fake_load(t, dy, at) * fake_load(t, y, at));
            dot = fake_to_type(t, dot + term);
        }
        for (int i = 0; i < s.len; i++) {
            long at = s.base[g] + i * s.step;
            float yv = fake_load(t, y, at), dyv = fake_load(t, dy, at);
            float v = algo == CUDNN_SOFTMAX_LOG ? fake_to_type(t, dyv - fake_to_type(t, expf(yv) * dot))
                                                : fake_to_type(t, yv * fake_to_type(t, dyv - dot));
            fake_blend(dxd->type, dx, at, v, *(const float *)alpha, *(const float *)beta);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

struct cudnnReduceTensorStruct {
    cudnnReduceTensorOp_t op;
    cudnnDataType_t comp;
    cudnnNanPropagation_t nan;
    cudnnReduceTensorIndices_t indices;
    cudnnIndicesType_t index_type;
    long writes;
};

AMP_EXPORT long fake_cudnn_reduce_writes(cudnnReduceTensorDescriptor_t d)
{
    return d->writes;
}

AMP_EXPORT cudnnStatus_t cudnnCreateReduceTensorDescriptor(cudnnReduceTensorDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyReduceTensorDescriptor(cudnnReduceTensorDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetReduceTensorDescriptor(cudnnReduceTensorDescriptor_t d,
                                                  cudnnReduceTensorOp_t op, cudnnDataType_t comp,
                                                  cudnnNanPropagation_t nan,
                                                  cudnnReduceTensorIndices_t indices,
                                                  cudnnIndicesType_t index_type)
{
    if (!fake_type_ok(comp))
        return BAD;
    *d = (struct cudnnReduceTensorStruct){op, comp, nan, indices, index_type, d->writes + 1};
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetReduceTensorDescriptor(const cudnnReduceTensorDescriptor_t d,
                                                  cudnnReduceTensorOp_t *op, cudnnDataType_t *comp,
                                                  cudnnNanPropagation_t *nan,
                                                  cudnnReduceTensorIndices_t *indices,
                                                  cudnnIndicesType_t *index_type)
{
    *op = d->op, *comp = d->comp, *nan = d->nan, *indices = d->indices;
    *index_type = d->index_type;
    return CUDNN_STATUS_SUCCESS;
}

static size_t reduce_workspace(const struct cudnnReduceTensorStruct *r,
                               const struct cudnnTensorStruct *a)
{
    return r->comp == CUDNN_DATA_FLOAT && a->type != CUDNN_DATA_FLOAT ? 64 : 0;
}

#ifndef FAKE_CUDNN_PARTIAL /* the partial build lacks this one */
AMP_EXPORT cudnnStatus_t cudnnGetReductionWorkspaceSize(cudnnHandle_t h,
                                                  const cudnnReduceTensorDescriptor_t r,
                                                  const cudnnTensorDescriptor_t a,
                                                  const cudnnTensorDescriptor_t c, size_t *size)
{
    (void)h, (void)c;
    *size = reduce_workspace(r, a);
    return CUDNN_STATUS_SUCCESS;
}
#endif

/* C = alpha * reduce(A) + beta * C over the dimensions where C has 1; the
 * accumulator is kept in the compute type. ADD, MUL, NORM1, NORM2, AVG. */
AMP_EXPORT cudnnStatus_t cudnnReduceTensor(cudnnHandle_t h, const cudnnReduceTensorDescriptor_t r,
                                     void *indices, size_t indices_bytes, void *ws, size_t ws_bytes,
                                     const void *alpha, const cudnnTensorDescriptor_t ad,
                                     const void *A, const void *beta,
                                     const cudnnTensorDescriptor_t cd, void *C)
{
    (void)h, (void)indices, (void)indices_bytes;
    if (ad->nb != cd->nb || r->indices != CUDNN_REDUCE_TENSOR_NO_INDICES)
        return UNSUPPORTED;
    size_t need = reduce_workspace(r, ad);
    if (ws_bytes < need || (need && !ws))
        return BAD;
    if (r->op != CUDNN_REDUCE_TENSOR_ADD && r->op != CUDNN_REDUCE_TENSOR_MUL &&
        r->op != CUDNN_REDUCE_TENSOR_NORM1 && r->op != CUDNN_REDUCE_TENSOR_NORM2 &&
        r->op != CUDNN_REDUCE_TENSOR_AVG)
        return UNSUPPORTED;
    fake_cudnn_record(__func__, -1, ad->type, cd->type, cd->type, r->comp, ws_bytes);
    long outputs = 1, count = 1;
    for (int i = 0; i < cd->nb; i++) {
        if (cd->dims[i] != 1 && cd->dims[i] != ad->dims[i])
            return BAD;
        outputs *= cd->dims[i];
        count *= cd->dims[i] == 1 ? ad->dims[i] : 1;
    }
    /* Walk the outputs, and for each, every input element that maps to it. */
    int idx[CUDNN_DIM_MAX] = {0};
    for (long o = 0; o < outputs; o++) {
        long rem = o, ci = 0, abase = 0;
        int kept[CUDNN_DIM_MAX];
        for (int i = cd->nb - 1; i >= 0; i--) {
            kept[i] = (int)(rem % cd->dims[i]);
            rem /= cd->dims[i];
            ci += (long)kept[i] * cd->strides[i];
            abase += (long)kept[i] * ad->strides[i];
        }
        float acc = r->op == CUDNN_REDUCE_TENSOR_MUL ? 1.0f : 0.0f;
        memset(idx, 0, sizeof idx);
        for (long e = 0; e < count; e++) {
            long rem2 = e, ai = abase;
            for (int i = cd->nb - 1; i >= 0; i--)
                if (cd->dims[i] == 1) {
                    ai += (rem2 % ad->dims[i]) * ad->strides[i];
                    rem2 /= ad->dims[i];
                }
            float v = fake_load(ad->type, A, ai);
            switch (r->op) {
            case CUDNN_REDUCE_TENSOR_MUL:
                acc = fake_to_type(r->comp, acc * v);
                break;
            case CUDNN_REDUCE_TENSOR_NORM1:
                acc = fake_to_type(r->comp, acc + fabsf(v));
                break;
            case CUDNN_REDUCE_TENSOR_NORM2:
                acc = fake_to_type(r->comp, acc + fake_to_type(r->comp, v * v));
                break;
            default:
                acc = fake_to_type(r->comp, acc + v);
            }
        }
        if (r->op == CUDNN_REDUCE_TENSOR_NORM2)
            acc = fake_to_type(r->comp, sqrtf(acc));
        if (r->op == CUDNN_REDUCE_TENSOR_AVG)
            acc = fake_to_type(r->comp, acc / (float)count);
        fake_blend(cd->type, C, ci, acc, *(const float *)alpha, *(const float *)beta);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Inference normalisation, CUDNN_NORM_OPS_NORM only: per-activation (scale
 * etc. shaped 1,C,H,W) or per-channel (1,C,1,1) on 4-d NCHW tensors. */
AMP_EXPORT cudnnStatus_t cudnnNormalizationForwardInference(
    cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnTensorDescriptor_t sbd, const void *scale, const void *bias,
    const cudnnTensorDescriptor_t mvd, const void *mean, const void *var,
    const cudnnTensorDescriptor_t zd, const void *z, cudnnActivationDescriptor_t act,
    const cudnnTensorDescriptor_t yd, void *y, double epsilon, int groups)
{
    (void)h, (void)algo, (void)zd, (void)z, (void)act, (void)groups;
    if (ops != CUDNN_NORM_OPS_NORM || !same_layout(xd, yd) || xd->nb != 4)
        return UNSUPPORTED;
    fake_cudnn_record(__func__, -1, xd->type, sbd->type, yd->type, xd->type, 0);
    const int *D = xd->dims, *S = xd->strides;
    cudnnDataType_t t = xd->type;
    for (int n = 0; n < D[0]; n++)
        for (int c = 0; c < D[1]; c++)
            for (int hh = 0; hh < D[2]; hh++)
                for (int w = 0; w < D[3]; w++) {
                    long at = (long)n * S[0] + (long)c * S[1] + (long)hh * S[2] + (long)w * S[3];
                    long p = mode == CUDNN_NORM_PER_CHANNEL
                                 ? (long)c * sbd->strides[1]
                                 : (long)c * sbd->strides[1] + (long)hh * sbd->strides[2] +
                                       (long)w * sbd->strides[3];
                    long m = mode == CUDNN_NORM_PER_CHANNEL
                                 ? (long)c * mvd->strides[1]
                                 : (long)c * mvd->strides[1] + (long)hh * mvd->strides[2] +
                                       (long)w * mvd->strides[3];
                    float inv = fake_to_type(t, 1.0f / sqrtf(fake_load(mvd->type, var, m) + (float)epsilon));
                    float centred =
                        fake_to_type(t, fake_load(t, x, at) - fake_to_type(t, fake_load(mvd->type, mean, m)));
                    float v = fake_to_type(t, fake_to_type(t, fake_to_type(t, centred * inv) *
                                                        fake_to_type(t, fake_load(sbd->type, scale, p))) +
                                             fake_to_type(t, fake_load(sbd->type, bias, p)));
                    fake_blend(yd->type, y, at, v, *(const float *)alpha, *(const float *)beta);
                }
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetNormalizationForwardTrainingWorkspaceSize(
    cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo,
    const cudnnTensorDescriptor_t xd, const cudnnTensorDescriptor_t zd,
    const cudnnTensorDescriptor_t yd, const cudnnTensorDescriptor_t sbd,
    const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t mvd, size_t *size,
    int groups)
{
    (void)h, (void)mode, (void)ops, (void)algo, (void)zd, (void)yd, (void)sbd, (void)act;
    (void)mvd, (void)groups;
    *size = xd->type == CUDNN_DATA_FLOAT ? 32 : 0; /* so the shim must supply some */
    return CUDNN_STATUS_SUCCESS;
}

/* Training normalisation, CUDNN_NORM_OPS_NORM only, 4-d NCHW: statistics
 * over N (per-activation) or N, H, W (per-channel), biased variance; the
 * running statistics move by `factor`; intermediates rounded to x's type. */
AMP_EXPORT cudnnStatus_t cudnnNormalizationForwardTraining(
    cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnTensorDescriptor_t sbd, const void *scale, const void *bias, double factor,
    const cudnnTensorDescriptor_t mvd, void *run_mean, void *run_var, double epsilon,
    void *save_mean, void *save_inv_var, cudnnActivationDescriptor_t act,
    const cudnnTensorDescriptor_t zd, const void *z, const cudnnTensorDescriptor_t yd, void *y,
    void *ws, size_t ws_bytes, void *reserve, size_t reserve_bytes, int groups)
{
    (void)h, (void)algo, (void)act, (void)zd, (void)z, (void)reserve, (void)reserve_bytes;
    (void)groups, (void)mvd;
    size_t need = xd->type == CUDNN_DATA_FLOAT ? 32 : 0;
    if (ops != CUDNN_NORM_OPS_NORM || !same_layout(xd, yd) || xd->nb != 4)
        return UNSUPPORTED;
    if (ws_bytes < need || (need && !ws))
        return BAD;
    fake_cudnn_record(__func__, -1, xd->type, sbd->type, yd->type, xd->type, ws_bytes);
    const int *D = xd->dims, *S = xd->strides;
    cudnnDataType_t t = xd->type;
    int per_channel = mode == CUDNN_NORM_PER_CHANNEL;
    long groups_n = per_channel ? D[1] : (long)D[1] * D[2] * D[3];
    long count = per_channel ? (long)D[0] * D[2] * D[3] : D[0];
    for (long g = 0; g < groups_n; g++) {
        int c = per_channel ? (int)g : (int)(g / ((long)D[2] * D[3]));
        int h0 = per_channel ? 0 : (int)(g / D[3] % D[2]), w0 = per_channel ? 0 : (int)(g % D[3]);
        int hn = per_channel ? D[2] : 1, wn = per_channel ? D[3] : 1;
        float sum = 0.0f, sq = 0.0f;
        for (int n = 0; n < D[0]; n++)
            for (int hh = h0; hh < h0 + hn; hh++)
                for (int w = w0; w < w0 + wn; w++)
                    sum = fake_to_type(t, sum + fake_load(t, x,
                                                (long)n * S[0] + (long)c * S[1] + (long)hh * S[2] +
                                                    (long)w * S[3]));
        float mean = fake_to_type(t, sum / (float)count);
        for (int n = 0; n < D[0]; n++)
            for (int hh = h0; hh < h0 + hn; hh++)
                for (int w = w0; w < w0 + wn; w++) {
                    float d = fake_to_type(t, fake_load(t, x,
                                              (long)n * S[0] + (long)c * S[1] + (long)hh * S[2] +
                                                  (long)w * S[3]) -
                                             mean);
                    sq = fake_to_type(t, sq + fake_to_type(t, d * d));
                }
        float var = fake_to_type(t, sq / (float)count);
        float inv = fake_to_type(t, 1.0f / sqrtf(var + (float)epsilon));
        float *rm = run_mean, *rv = run_var;
        rm[g] = (float)(1.0 - factor) * rm[g] + (float)factor * mean;
        rv[g] = (float)(1.0 - factor) * rv[g] + (float)factor * var;
        if (save_mean)
            ((float *)save_mean)[g] = mean;
        if (save_inv_var)
            ((float *)save_inv_var)[g] = inv;
        for (int n = 0; n < D[0]; n++)
            for (int hh = h0; hh < h0 + hn; hh++)
                for (int w = w0; w < w0 + wn; w++) {
                    long at = (long)n * S[0] + (long)c * S[1] + (long)hh * S[2] + (long)w * S[3];
                    float v = fake_to_type(t, fake_to_type(t, fake_to_type(t, fake_load(t, x, at) - mean) * inv) *
                                             ((const float *)scale)[g]);
                    v = fake_to_type(t, v + ((const float *)bias)[g]);
                    fake_blend(yd->type, y, at, v, *(const float *)alpha, *(const float *)beta);
                }
    }
    return CUDNN_STATUS_SUCCESS;
}

