/* TEST-ONLY: what the parts of the fake libcudnn.so.9 (fake_cudnn.c and
 * the fake_cudnn_*.c beside it) share: the handle and tensor
 * descriptors, the call record and the precision helpers. */
#ifndef AMPSHIM_FAKE_CUDNN_INTERNAL_H
#define AMPSHIM_FAKE_CUDNN_INTERNAL_H

#include <cudnn.h>
#include <stddef.h>

#include "tests/fakes/fake_common.h"
#include "tests/fakes/fake_cudnn.h"

#define BAD CUDNN_STATUS_BAD_PARAM
#define UNSUPPORTED CUDNN_STATUS_NOT_SUPPORTED

struct cudnnContext {
    cudaStream_t stream;
};

struct cudnnTensorStruct {
    cudnnDataType_t type;
    int nb, dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
};

struct cudnnFilterStruct {
    cudnnDataType_t type;
    cudnnTensorFormat_t format;
    int nb, dims[CUDNN_DIM_MAX];
};

struct cudnnConvolutionStruct {
    int pad[2], stride[2], dilation[2];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math;
    int groups;
    cudnnReorderType_t reorder;
    long writes; /* every setter call on this descriptor: tests see none from the shim */
};

/* A 4-d filter's strides in its own format. */
void fake_filter_strides(const struct cudnnFilterStruct *f, int s[4]);

/* Records the calling thread's last call. */
void fake_cudnn_record(const char *function, int math, int t0, int t1, int t2, int compute,
                       size_t workspace);

/* A value as a tensor of this type holds it; whether the fake takes the
 * type; element i of a tensor as a float, and stored back; out = alpha *
 * value + beta * out. */
float fake_to_type(cudnnDataType_t type, float x);
int fake_type_ok(cudnnDataType_t t);
float fake_load(cudnnDataType_t type, const void *p, long i);
void fake_store(cudnnDataType_t type, void *p, long i, float x);
void fake_blend(cudnnDataType_t type, void *p, long i, float value, float alpha, float beta);

/* Whether default and tensor-op math may use TF32 (not under
 * NVIDIA_TF32_OVERRIDE=0). */
int fake_tf32_allowed(void);

#endif
