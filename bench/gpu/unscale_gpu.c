/* Unscale + check of 256 MiB of device gradients against a device-to-device
 * cudaMemcpy of the same 256 MiB, side by side in one run (CUDA events,
 * median of 21). GB/s counts gradient bytes. Exits 77 without a GPU. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "amp_scaler.h"

enum { BYTES = 256 << 20, ROUNDS = 21 };

static int cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("unscale_gpu: no CUDA device; skipped\n");
        return 77;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    void *grad, *copy;
    cudaMalloc(&grad, BYTES);
    cudaMalloc(&copy, BYTES);
    cudaMemset(grad, 0, BYTES);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    amp_scaler *s = amp_scaler_create(NULL);
    float ms[ROUNDS];
    printf("%s: unscale + check of 256 MiB in place vs cudaMemcpy D2D, median of %d\n", prop.name,
           ROUNDS);
    printf("%-22s %10s %10s\n", "operation", "GB/s", "vs copy");
    double copy_gbps = 0;
    static const char *const names[] = {"cudaMemcpy D2D", "fp32 gradients", "fp16 gradients",
                                        "bf16 gradients"};
    for (int mode = 0; mode < 4; mode++) {
        for (int r = 0; r < ROUNDS; r++) {
            amp_buffer b = {.data = grad,
                            .count = mode == 1 ? BYTES / 4 : BYTES / 2,
                            .dtype = mode == 1   ? AMP_F32
                                     : mode == 2 ? AMP_F16
                                                 : AMP_BF16,
                            .device = 1};
            cudaEventRecord(start, 0);
            if (mode == 0)
                cudaMemcpyAsync(copy, grad, BYTES, cudaMemcpyDeviceToDevice, 0);
            else
                amp_scaler_unscale(s, &b, 1);
            cudaEventRecord(stop, 0);
            cudaEventSynchronize(stop);
            cudaEventElapsedTime(&ms[r], start, stop);
            if (mode)
                amp_scaler_update(s, NULL);
        }
        qsort(ms, ROUNDS, sizeof *ms, cmp);
        double gbps = BYTES / (ms[ROUNDS / 2] * 1e-3) / 1e9;
        if (mode == 0)
            copy_gbps = gbps;
        printf("%-22s %10.1f %9.0f%%\n", names[mode], gbps, 100.0 * gbps / copy_gbps);
    }
    amp_scaler_destroy(s);
    return 0;
}
