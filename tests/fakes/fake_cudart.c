/* TEST-ONLY FAKE of libcudart.so.13: a CPU stand-in, never installed. It
 * gives the shim the stream-ordered allocator it uses for device scratch
 * (cudaMallocAsync / cudaFreeAsync) on host memory, counts what is
 * outstanding so tests can see every allocation given back, and fails
 * allocations on request (FAKE_CUDART_FAIL_ALLOC=1) so tests can see the
 * shim fall back. Compiled against the real cuda_runtime_api.h. */
#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdlib.h>

#define FAKE __attribute__((visibility("default")))

static _Atomic long outstanding, total;

FAKE long fake_cudart_outstanding(void)
{
    return atomic_load(&outstanding);
}

FAKE long fake_cudart_allocations(void)
{
    return atomic_load(&total);
}

#undef cudaMallocAsync
#undef cudaFreeAsync

FAKE cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
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

FAKE cudaError_t cudaFreeAsync(void *p, cudaStream_t stream)
{
    (void)stream;
    if (p) {
        free(p);
        atomic_fetch_sub(&outstanding, 1);
    }
    return cudaSuccess;
}
