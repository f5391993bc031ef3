/* Device scratch for the CUDA hooks that convert tensors (the cuDNN bf16 and
 * fp32 paths): stream-ordered allocations from the CUDA runtime's pool
 * (cudaMallocAsync / cudaFreeAsync on the call's own stream, zeroed with
 * cudaMemsetAsync / cudaMemset2DAsync where needed), taken for one
 * call and given back at its end, so the shim holds no device memory between
 * calls and never synchronises. The runtime is found among the loaded
 * objects first (a program linked to libcudart.so.13); a program with the
 * static runtime gets libcudart.so.13 opened here. Without either, or
 * when an allocation fails or would pass AMP_CUDA_SCRATCH_MAX, the hook runs
 * the call as the program made it. */
#include <dlfcn.h>
#include <pthread.h>

#include "runtime/log.h"
#include "shim/cuda/cuda_scratch.h"
#include "shim/resolve.h"

typedef int (*malloc_async_fn)(void **, size_t, void *);
typedef int (*free_async_fn)(void *, void *);
typedef int (*memset_async_fn)(void *, int, size_t, void *);
typedef int (*memset2d_async_fn)(void *, size_t, int, size_t, size_t, void *);

static malloc_async_fn malloc_async;
static free_async_fn free_async;
static memset_async_fn memset_async;
static memset2d_async_fn memset2d_async;
typedef int (*memcpy2d_async_fn)(void *, size_t, const void *, size_t, size_t, size_t, int, void *);
static memcpy2d_async_fn memcpy2d_async;
static int available;

static void *runtime_symbol(void **lib, const char *name)
{
    void *p = amp_resolve_name(name);
    if (!p) {
        if (!*lib)
            *lib = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
        p = *lib ? dlsym(*lib, name) : NULL;
    }
    return p;
}

static void *runtime_lib;

static void find_runtime(void)
{
    void **lib = &runtime_lib;
    malloc_async = (malloc_async_fn)runtime_symbol(lib, "cudaMallocAsync");
    free_async = (free_async_fn)runtime_symbol(lib, "cudaFreeAsync");
    memset_async = (memset_async_fn)runtime_symbol(lib, "cudaMemsetAsync");
    memset2d_async = (memset2d_async_fn)runtime_symbol(lib, "cudaMemset2DAsync");
    memcpy2d_async = (memcpy2d_async_fn)runtime_symbol(lib, "cudaMemcpy2DAsync");
    available = malloc_async && free_async && memset_async && memset2d_async;
    if (!available)
        amp_log(AMP_LOG_INFO, "no CUDA runtime with cudaMallocAsync found; cuDNN calls that "
                              "need conversion run as made");
}

/* Once per process (pthread_once): two threads' first calls cannot race. */
static int ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_runtime);
    return available;
}

void *amp_cuda_take(struct amp_cuda_scratch *s, size_t bytes)
{
    void *p = NULL;
    if (!bytes || bytes > AMP_CUDA_SCRATCH_MAX || s->n == (int)(sizeof s->p / sizeof *s->p) ||
        !ready() || malloc_async(&p, bytes, s->stream) != 0)
        return NULL;
    return s->p[s->n++] = p;
}

int amp_cuda_zero(void *p, size_t bytes, void *stream)
{
    return ready() && memset_async(p, 0, bytes, stream) == 0;
}

int amp_cuda_zero_strided(void *p, size_t pitch, size_t width, size_t rows, void *stream)
{
    return ready() && memset2d_async(p, pitch, 0, width, rows, stream) == 0;
}

void amp_cuda_scratch_end(struct amp_cuda_scratch *s)
{
    for (int i = 0; i < s->n; i++)
        free_async(s->p[i], s->stream);
    s->n = 0;
}

int amp_cuda_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                     size_t rows, void *stream)
{
    enum { DEVICE_TO_DEVICE = 3 }; /* cudaMemcpyDeviceToDevice */
    return ready() && memcpy2d_async && memcpy2d_async(dst, dpitch, src, spitch, width, rows, DEVICE_TO_DEVICE,
                                     stream) == 0;
}

void *amp_cuda_runtime(const char *name)
{
    return ready() ? runtime_symbol(&runtime_lib, name) : NULL;
}
