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

/* Every GPU test's start: 77 without a device (gpu_none), else 0 with the
 * shim's ampshim_ctl in *ctl and the library soname the program linked in
 * *lib, or 1 when either is missing (the caller's check says so). */
static inline int gpu_start(const char *test, const char *soname, gpu_ctl_fn *ctl, void **lib)
{
    if (gpu_none(test))
        return 77;
    *ctl = gpu_ctl();
    *lib = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    return *ctl && *lib ? 0 : 1;
}

/* n known values: (i * mul % mod) / div - shift. */
static inline void gpu_fill(float *h, size_t n, unsigned mul, unsigned mod, float div, float shift)
{
    for (size_t i = 0; i < n; i++)
        h[i] = (float)((i * mul) % mod) / div - shift;
}

#endif
