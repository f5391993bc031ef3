/* libampscaler-cuda.so: GradScaler's device-side kernels, like torch's
 * _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_. The
 * scale, its reciprocal, found_inf and the growth tracker stay in device
 * memory, so unscale and update only enqueue work on the caller's stream.
 * Linked with the static CUDA runtime: the plugin needs only the driver. */
#include <new>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime/export.h"
#include "kernels/cuda/scaler_cuda.h"

struct amp_cuda_state {
    float scale;
    float inv_scale;
    int found_inf;
    int pad;
    int64_t tracker;
};

struct amp_cuda_scaler {
    struct amp_cuda_state *dev;
    int device;
    int sm_count;
};

template <typename T> __device__ inline float widen(T v);
template <> __device__ inline float widen<float>(float v)
{
    return v;
}
template <> __device__ inline float widen<__half>(__half v)
{
    return __half2float(v);
}
template <> __device__ inline float widen<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

template <typename T> __device__ inline T narrow(float v);
template <> __device__ inline float narrow<float>(float v)
{
    return v;
}
template <> __device__ inline __half narrow<__half>(float v)
{
    return __float2half_rn(v);
}
template <> __device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

__device__ inline bool nonfinite(float v)
{
    return (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u;
}

/* Each element widened to fp32, multiplied, rounded back (RNE). 16-byte
 * vector accesses where the buffer is aligned; found_inf is set (a benign
 * race: every writer writes 1) when an input is Inf or NaN. */
template <typename T>
__global__ void multiply_kernel(T *data, size_t n, const float *factor, int *found_inf)
{
    constexpr int VEC = 16 / sizeof(T);
    const float f = *factor;
    bool bad = false;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nvec = ((uintptr_t)data % 16 == 0) ? n / VEC : 0;
    uint4 *vec = reinterpret_cast<uint4 *>(data);
    for (size_t i = first; i < nvec; i += stride) {
        uint4 raw = vec[i];
        T *e = reinterpret_cast<T *>(&raw);
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            float v = widen(e[j]);
            bad |= nonfinite(v);
            e[j] = narrow<T>(v * f);
        }
        vec[i] = raw;
    }
    for (size_t i = nvec * VEC + first; i < n; i += stride) {
        float v = widen(data[i]);
        bad |= nonfinite(v);
        data[i] = narrow<T>(v * f);
    }
    if (found_inf && __syncthreads_or(bad) && threadIdx.x == 0)
        *found_inf = 1;
}

__global__ void begin_unscale_kernel(amp_cuda_state *s)
{
    s->inv_scale = (float)(1.0 / (double)s->scale);
    s->found_inf = 0;
}

/* torch's _amp_update_scale_: factors in double, the scale a float. */
__global__ void update_kernel(amp_cuda_state *s, double growth, double backoff, int64_t interval)
{
    if (s->found_inf) {
        s->scale = (float)((double)s->scale * backoff);
        s->tracker = 0;
    } else {
        int64_t successful = s->tracker + 1;
        if (successful == interval) {
            float grown = (float)((double)s->scale * growth);
            if (isfinite(grown))
                s->scale = grown;
            s->tracker = 0;
        } else {
            s->tracker = successful;
        }
    }
}

static int cuda_fail(cudaError_t e, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
    cudaGetLastError(); /* clear a non-sticky error */
    return e == cudaErrorMemoryAllocation ? -ENOMEM : e == cudaErrorNoDevice ? -ENODEV : -EIO;
}

static int create(amp_cuda_scaler **out, float scale, int64_t tracker, char *err, size_t errlen)
{
    amp_cuda_scaler *st = new (std::nothrow) amp_cuda_scaler();
    if (!st)
        return -ENOMEM;
    cudaError_t e = cudaGetDevice(&st->device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&st->sm_count, cudaDevAttrMultiProcessorCount, st->device);
    if (e == cudaSuccess)
        e = cudaMalloc(&st->dev, sizeof *st->dev);
    if (e != cudaSuccess) {
        delete st;
        return cuda_fail(e, "cannot set up the scaler on the device", err, errlen);
    }
    amp_cuda_state init = {scale, 1.0f, 0, 0, tracker};
    e = cudaMemcpy(st->dev, &init, sizeof init, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(st->dev);
        delete st;
        return cuda_fail(e, "cannot set up the scaler on the device", err, errlen);
    }
    *out = st;
    return 0;
}

static void destroy(amp_cuda_scaler *st)
{
    if (st) {
        cudaFree(st->dev);
        delete st;
    }
}

static int begin_unscale(amp_cuda_scaler *st, void *stream, char *err, size_t errlen)
{
    begin_unscale_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(st->dev);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : cuda_fail(e, "unscale", err, errlen);
}

template <typename T>
static void launch(amp_cuda_scaler *st, void *data, size_t count, const float *factor, int *found,
                   cudaStream_t stream)
{
    const int threads = 256;
    size_t work = (count + (16 / sizeof(T)) - 1) / (16 / sizeof(T));
    size_t blocks = (work + threads - 1) / threads;
    size_t cap = (size_t)(st->sm_count > 0 ? st->sm_count : 1) * 8;
    if (blocks > cap)
        blocks = cap;
    if (blocks == 0)
        blocks = 1;
    multiply_kernel<T><<<(unsigned)blocks, threads, 0, stream>>>((T *)data, count, factor, found);
}

static int multiply(amp_cuda_scaler *st, void *data, size_t count, int dtype, int unscale,
                    void *stream, char *err, size_t errlen)
{
    if (count == 0)
        return 0;
    const float *factor = unscale ? &st->dev->inv_scale : &st->dev->scale;
    int *found = unscale ? &st->dev->found_inf : nullptr;
    cudaStream_t s = (cudaStream_t)stream;
    if (dtype == 0)
        launch<float>(st, data, count, factor, found, s);
    else if (dtype == 1)
        launch<__half>(st, data, count, factor, found, s);
    else
        launch<__nv_bfloat16>(st, data, count, factor, found, s);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : cuda_fail(e, unscale ? "unscale" : "scale", err, errlen);
}

static int update(amp_cuda_scaler *st, double growth, double backoff, int64_t interval,
                  void *stream, char *err, size_t errlen)
{
    update_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(st->dev, growth, backoff, interval);
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : cuda_fail(e, "update", err, errlen);
}

static int write_state(amp_cuda_scaler *st, const float *scale, const int64_t *tracker,
                       const int *found_inf, void *stream, char *err, size_t errlen)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e = cudaSuccess;
    if (scale && e == cudaSuccess)
        e = cudaMemcpyAsync(&st->dev->scale, scale, sizeof *scale, cudaMemcpyHostToDevice, s);
    if (tracker && e == cudaSuccess)
        e = cudaMemcpyAsync(&st->dev->tracker, tracker, sizeof *tracker, cudaMemcpyHostToDevice, s);
    if (found_inf && e == cudaSuccess)
        e = cudaMemcpyAsync(&st->dev->found_inf, found_inf, sizeof *found_inf,
                            cudaMemcpyHostToDevice, s);
    /* The host values are the caller's locals: wait until they are copied. */
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? 0 : cuda_fail(e, "cannot write the scaler state", err, errlen);
}

static int read_state(amp_cuda_scaler *st, float *scale, int64_t *tracker, int *found_inf,
                      void *stream, char *err, size_t errlen)
{
    amp_cuda_state copy;
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e = cudaMemcpyAsync(&copy, st->dev, sizeof copy, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess)
        return cuda_fail(e, "cannot read the scaler state", err, errlen);
    if (scale)
        *scale = copy.scale;
    if (tracker)
        *tracker = copy.tracker;
    if (found_inf)
        *found_inf = copy.found_inf;
    return 0;
}

extern "C" AMP_EXPORT const amp_scaler_cuda_ops amp_scaler_cuda_ops_v1 = {
    AMP_SCALER_CUDA_ABI, create, destroy, begin_unscale, multiply, update, write_state, read_state,
};
