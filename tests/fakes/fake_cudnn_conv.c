/* TEST-ONLY part of the fake libcudnn.so.9 (tests/fakes/fake_cudnn.c):
 * convolutions, forward, both backward passes and bias + activation. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "tests/fakes/fake_cudnn_internal.h"

/* ---- convolutions ---------------------------------------------------------- */
/* The group count and reorder type of the descriptor the last convolution
 * ran with. */
static int last_groups, last_reorder;
AMP_EXPORT void fake_cudnn_last_conv(int *groups, int *reorder)
{
    *groups = last_groups;
    *reorder = last_reorder;
}

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
    fake_filter_strides(o->w, wsd);
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
    if (!h) /* as the real one answers a NULL handle */
        return CUDNN_STATUS_BAD_PARAM;
    (void)algo;
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
    if (!h) /* as the real one answers a NULL handle */
        return CUDNN_STATUS_BAD_PARAM;
    (void)algo;
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
    if (!h) /* as the real one answers a NULL handle */
        return CUDNN_STATUS_BAD_PARAM;
    (void)algo;
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
