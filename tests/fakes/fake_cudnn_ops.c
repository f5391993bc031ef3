/* TEST-ONLY part of the fake libcudnn.so.9 (tests/fakes/fake_cudnn.c):
 * element-wise and fp32-list operations. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "tests/fakes/fake_cudnn_internal.h"

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
