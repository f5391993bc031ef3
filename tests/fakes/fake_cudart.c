/* TEST-ONLY AMP_EXPORT of libcudart.so.13: a CPU stand-in, never installed. It
 * gives the shim the stream-ordered allocator it uses for device scratch
 * (cudaMallocAsync / cudaFreeAsync, cudaMemsetAsync / cudaMemset2DAsync) on
 * host memory, counts what is
 * outstanding so tests can see every allocation given back, counts the
 * calls that would make the host wait for the device (cudaMemcpy,
 * cudaDeviceSynchronize, cudaMalloc) so tests can see none on a hot path,
 * and fails
 * allocations on request (FAKE_CUDART_FAIL_ALLOC=1) so tests can see the
 * shim fall back. Compiled against the real cuda_runtime_api.h. */
#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "shim/cuda/cuda_scratch.h"

/* The shim's copy of cudaMemPoolProps and the enum values it uses must be
 * the header's. */
_Static_assert(sizeof(struct cudaMemPoolProps) == sizeof(struct amp_cuda_pool_props), "props");
_Static_assert(offsetof(struct cudaMemPoolProps, location) ==
                   offsetof(struct amp_cuda_pool_props, location), "props");
_Static_assert(offsetof(struct cudaMemPoolProps, maxSize) ==
                   offsetof(struct amp_cuda_pool_props, max_size), "props");
_Static_assert(offsetof(struct cudaMemPoolProps, usage) ==
                   offsetof(struct amp_cuda_pool_props, usage), "props");
_Static_assert((int)cudaMemAllocationTypePinned == (int)AMP_CUDA_MEM_ALLOCATION_PINNED, "enum");
_Static_assert((int)cudaMemLocationTypeDevice == (int)AMP_CUDA_MEM_LOCATION_DEVICE, "enum");
_Static_assert((int)cudaMemPoolAttrReleaseThreshold == (int)AMP_CUDA_POOL_ATTR_RELEASE_THRESHOLD,
               "enum");
_Static_assert((int)cudaStreamCaptureStatusNone == (int)AMP_CUDA_STREAM_CAPTURE_NONE, "enum");

static _Atomic long outstanding, total, syncs, pool_allocations;
static uint64_t pool_threshold;

/* Allocations from a pool made with cudaMemPoolCreate, and the release
 * threshold set on it. */
AMP_EXPORT long fake_cudart_pool_allocations(void)
{
    return atomic_load(&pool_allocations);
}

AMP_EXPORT uint64_t fake_cudart_pool_threshold(void)
{
    return pool_threshold;
}

AMP_EXPORT long fake_cudart_syncs(void)
{
    return atomic_load(&syncs);
}

AMP_EXPORT long fake_cudart_outstanding(void)
{
    return atomic_load(&outstanding);
}

AMP_EXPORT long fake_cudart_allocations(void)
{
    return atomic_load(&total);
}

#undef cudaMallocAsync
#undef cudaFreeAsync
#undef cudaMemsetAsync
#undef cudaMemset2DAsync
#undef cudaMemcpy2DAsync
#undef cudaMemcpy
#undef cudaMalloc
#undef cudaFree
#undef cudaDeviceSynchronize
#undef cudaStreamIsCapturing
#undef cudaMallocFromPoolAsync

AMP_EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
{
    (void)stream;
    const char *fail = getenv("FAKE_CUDART_FAIL_ALLOC");
    if (!p)
        return cudaErrorInvalidValue;
    *p = fail && *fail == '1' ? NULL : malloc(size ? size : 1);
    if (!*p)
        return cudaErrorMemoryAllocation;
    atomic_fetch_add(&outstanding, 1);
    atomic_fetch_add(&total, 1);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t stream)
{
    (void)stream;
    if (p) {
        free(p);
        atomic_fetch_sub(&outstanding, 1);
    }
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    memset(p, value, count);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream)
{
    (void)stream;
    if (width > pitch)
        return cudaErrorInvalidValue;
    for (size_t r = 0; r < height; r++)
        memset((char *)p + r * pitch, value, width);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                         size_t width, size_t height, enum cudaMemcpyKind kind,
                                         cudaStream_t stream)
{
    (void)kind;
    (void)stream;
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    for (size_t r = 0; r < height; r++)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    (void)kind;
    atomic_fetch_add(&syncs, 1);
    memmove(dst, src, count);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
    atomic_fetch_add(&syncs, 1);
    if (!p)
        return cudaErrorInvalidValue;
    *p = malloc(size ? size : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

AMP_EXPORT cudaError_t cudaFree(void *p)
{
    atomic_fetch_add(&syncs, 1);
    free(p);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    atomic_fetch_add(&syncs, 1);
    return cudaSuccess;
}

/* FAKE_CUDART_CAPTURING=1: every stream is being captured into a graph. */
AMP_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    (void)stream;
    const char *c = getenv("FAKE_CUDART_CAPTURING");
    *status = c && *c == '1' ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

/* Two devices; each thread's current one, as the real runtime keeps it. */
static __thread int current_device;

AMP_EXPORT cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device > 1)
        return cudaErrorInvalidDevice;
    current_device = device;
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaGetDevice(int *device)
{
    *device = current_device;
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    static char token;
    if (props->allocType != cudaMemAllocationTypePinned ||
        props->location.type != cudaMemLocationTypeDevice || props->location.id != 0)
        return cudaErrorInvalidValue;
    *pool = (cudaMemPool_t)&token;
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    (void)pool;
    if (attr != cudaMemPoolAttrReleaseThreshold)
        return cudaErrorInvalidValue;
    memcpy(&pool_threshold, value, sizeof pool_threshold);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool,
                                               cudaStream_t stream)
{
    cudaError_t e = cudaMallocAsync(p, size, stream);
    (void)pool;
    if (e == cudaSuccess)
        atomic_fetch_add(&pool_allocations, 1);
    return e;
}
