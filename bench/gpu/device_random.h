/* Random data on the device for the GPU benchmarks (a GPU clocks higher on
 * zeros): n values uniform in [-1, 1) (bench_util.h's filled()), copied as
 * fp32 to dev32 and as fp16 to dev16 (unless NULL). */
#ifndef AMPSHIM_BENCH_DEVICE_RANDOM_H
#define AMPSHIM_BENCH_DEVICE_RANDOM_H

#include <cuda_runtime.h>

#include "../bench_util.h"

static inline void device_random(void *dev32, void *dev16, size_t n, unsigned seed)
{
    float *h32 = filled(n, seed);
    _Float16 *h16 = malloc(n * sizeof *h16);
    if (h32 && h16) {
        for (size_t i = 0; i < n; i++)
            h16[i] = (_Float16)h32[i];
        cudaMemcpy(dev32, h32, n * sizeof *h32, cudaMemcpyHostToDevice);
        if (dev16)
            cudaMemcpy(dev16, h16, n * sizeof *h16, cudaMemcpyHostToDevice);
    }
    free(h32);
    free(h16);
}

#endif
