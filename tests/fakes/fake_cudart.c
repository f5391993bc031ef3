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
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"

static _Atomic long outstanding, total, syncs;

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
