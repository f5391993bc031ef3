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
 * This file: the record, precision, the handle and descriptors; the
 * operations are in fake_cudnn_conv.c (convolutions), fake_cudnn_ops.c
 * (element-wise and fp32-list operations), fake_cudnn_ctc.c (CTC loss),
 * fake_cudnn_rnn.c (RNNs) and fake_cudnn_graph.c (the backend API);
 * tests/fakes/fake_cudnn_internal.h is what they share. */
#include <cudnn.h>
#include <math.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "shim/cudnn/cudnn_abi.h"
#include "tests/fakes/fake_cudnn_internal.h"

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
/* Handles made while the fake runtime says a stream is being captured
 * (FAKE_CUDART_CAPTURING=1): the real cudnnCreate allocates device memory,
 * which a capture does not allow (it invalidates the graph). */
static _Atomic int created_during_capture;
AMP_EXPORT int fake_cudnn_created_during_capture(void)
{
    return atomic_load(&created_during_capture);
}

AMP_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    const char *c = getenv("FAKE_CUDART_CAPTURING");
    if (c && *c == '1')
        atomic_fetch_add(&created_during_capture, 1);
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

AMP_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d,
                                                    cudnnTensorFormat_t format,
                                                    cudnnDataType_t type, int n, int c, int h,
                                                    int w)
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
                                                    cudnnTensorFormat_t format, int nb,
                                                    const int dims[])
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
                                                    cudnnDataType_t *type,
                                                    cudnnTensorFormat_t *format, int *nb,
                                                    int dims[])
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
void fake_filter_strides(const struct cudnnFilterStruct *f, int s[4])
{
    const int *d = f->dims;
    if (f->format == CUDNN_TENSOR_NCHW) {
        s[0] = d[1] * d[2] * d[3], s[1] = d[2] * d[3], s[2] = d[3], s[3] = 1;
    } else {
        s[0] = d[2] * d[3] * d[1], s[1] = 1, s[2] = d[3] * d[1], s[3] = d[1];
    }
}

/* How many times a descriptor was written through a setter. */
AMP_EXPORT long fake_cudnn_conv_writes(cudnnConvolutionDescriptor_t d)
{
    return d->writes;
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
                                                         int pad_w, int u, int v, int dil_h,
                                                         int dil_w, cudnnConvolutionMode_t mode,
                                                         cudnnDataType_t compute)
{
    if (pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dil_h <= 0 || dil_w <= 0)
        return BAD;
    *d = (struct cudnnConvolutionStruct){{pad_h, pad_w}, {u, v},     {dil_h, dil_w},
                                         mode,           compute,    d->math,
                                         d->groups,      d->reorder, d->writes + 1};
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

AMP_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                                     cudnnMathType_t m)
{
    if (m < CUDNN_DEFAULT_MATH || m > CUDNN_FMA_MATH)
        return BAD;
    d->math = m;
    d->writes++;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                                     cudnnMathType_t *m)
{
    *m = d->math;
    return CUDNN_STATUS_SUCCESS;
}
