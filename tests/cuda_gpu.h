/* What the CUDA tests that need a GPU share (tests/cublas/cublas_gpu.c,
 * gemmex_32f_gpu.c, tests/cublaslt/cublaslt_gpu.c): the skip without a
 * device, the shim's ampshim_ctl found at run time (the program is not
 * linked to it), and the deterministic inputs. */
#ifndef AMPSHIM_TESTS_CUDA_GPU_H
#define AMPSHIM_TESTS_CUDA_GPU_H

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef int (*gpu_ctl_fn)(const char *, void *, size_t *, const void *, size_t);

/* 1 (after one line saying so) when there is no CUDA device: exit 77. */
static inline int gpu_none(const char *test)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
        return 0;
    printf("%s: no CUDA device; skipped\n", test);
    return 1;
}

static inline gpu_ctl_fn gpu_ctl(void)
{
    return (gpu_ctl_fn)dlsym(RTLD_DEFAULT, "ampshim_ctl");
}

/* n known values: (i * mul % mod) / div - shift. */
static inline void gpu_fill(float *h, size_t n, unsigned mul, unsigned mod, float div, float shift)
{
    for (size_t i = 0; i < n; i++)
        h[i] = (float)((i * mul) % mod) / div - shift;
}

#endif
