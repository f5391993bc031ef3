/* cublasSgemm on a real GPU at 4096^3 and 8192^3, side by side in one run:
 * plain fp32 (the real function, through a dlopen handle), under ampshim in
 * fp16, bf16 and tf32 (switched with ampshim_ctl), and native cublasGemmEx
 * on fp16 data (the goal: ampshim's lowered sgemm at >= 90% of it). TFLOP/s
 * from CUDA events, median of 9, on random data (a GPU clocks higher on
 * zeros). After each mode the shim's own counters for cublasSgemm_v2 are
 * printed (lowered, passthrough: how the calls really ran), so a silent
 * fallback cannot pass for a lowered figure. Then the size rule's crossover
 * (from n = 64 to 2048). Run under
 * LD_PRELOAD=libampshim.so; exits 77 without a GPU. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_random.h"

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);

static unsigned long long counter(int (*ctl)(const char *, void *, size_t *, const void *, size_t),
                                  const char *which)
{
    char name[64];
    uint64_t v = 0;
    size_t len = sizeof v;
    snprintf(name, sizeof name, "stats.cublasSgemm_v2.%s", which);
    ctl(name, &v, &len, NULL, 0);
    return (unsigned long long)v;
}

static int cmp(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

/* The size rule's CUDA crossover (AMPSHIM_CUDA_LOWER_MIN): square sgemm
 * from 64 to 2048, plain fp32 against ampshim's fp16 with the rule off, in
 * a hot loop (50 calls between two events, median of 9 such batches), and
 * the smallest n from which fp16 is at least 1.1x faster at every larger n
 * measured: the threshold to set. */
static void crossover(int (*ctl)(const char *, void *, size_t *, const void *, size_t),
                      sgemm_fn direct, cublasHandle_t h, cudaEvent_t e0, cudaEvent_t e1)
{
    static const int sizes[] = {64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048};
    enum { N_SIZES = sizeof sizes / sizeof *sizes, CALLS = 50 };
    ctl("opt.cuda_dtype", NULL, NULL, "fp16", 4);
    ctl("opt.cuda_lower_min", NULL, NULL, "0", 1);
    printf("\nThe size rule's crossover: us per cublasSgemm in a loop of %d (median of 9)\n",
           CALLS);
    printf("%-8s %12s %14s %8s\n", "n", "fp32", "ampshim fp16", "speedup");
    float *a, *b, *c;
    size_t count = (size_t)2048 * 2048;
    cudaMalloc((void **)&a, count * 4);
    cudaMalloc((void **)&b, count * 4);
    cudaMalloc((void **)&c, count * 4);
    device_random(a, NULL, count, 3);
    device_random(b, NULL, count, 4);
    float one = 1.0f, zero = 0.0f, speedup[N_SIZES];
    for (int s = 0; s < N_SIZES; s++) {
        int n = sizes[s];
        float us[2];
        for (int mode = 0; mode < 2; mode++) {
            float ms[9];
            for (int r = -2; r < 9; r++) {
                cudaEventRecord(e0, 0);
                for (int i = 0; i < CALLS; i++)
                    if (mode == 0)
                        direct(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
                    else
                        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero,
                                    c, n);
                cudaEventRecord(e1, 0);
                cudaEventSynchronize(e1);
                if (r >= 0)
                    cudaEventElapsedTime(&ms[r], e0, e1);
            }
            qsort(ms, 9, sizeof *ms, cmp);
            us[mode] = ms[4] * 1000.0f / CALLS;
        }
        speedup[s] = us[0] / us[1];
        printf("%-8d %12.2f %14.2f %7.2fx\n", n, us[0], us[1], speedup[s]);
    }
    int from = N_SIZES;
    while (from > 0 && speedup[from - 1] >= 1.1f)
        from--;
    if (from < N_SIZES)
        printf("fp16 pays (>= 1.1x) from n = %d at every larger size measured: "
               "AMPSHIM_CUDA_LOWER_MIN=%d^3 (%lld multiply-adds)\n",
               sizes[from], sizes[from], (long long)sizes[from] * sizes[from] * sizes[from]);
    else
        printf("fp16 did not pay by 1.1x at 2048: keep the default\n");
    ctl("opt.cuda_lower_min", NULL, NULL, "auto", 4);
    cudaFree(a), cudaFree(b), cudaFree(c);
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("sgemm_gpu: no CUDA device; skipped\n");
        return 77;
    }
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    sgemm_fn direct =
        (sgemm_fn)dlsym(dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD), "cublasSgemm_v2");
    if (!ctl || !direct) {
        fprintf(stderr, "sgemm_gpu: run under LD_PRELOAD=libampshim.so\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    cublasHandle_t h;
    cublasCreate(&h);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    printf("%s: cublasSgemm, TFLOP/s (median of 9)\n", prop.name);
    printf("%-8s %10s %12s %12s %12s %16s %10s\n", "n", "fp32", "ampshim fp16", "ampshim bf16",
           "ampshim tf32", "GemmEx fp16 data", "fp16/native");
    static const int sizes[] = {4096, 8192};
    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        size_t count = (size_t)n * n;
        float *a, *b, *c;
        uint16_t *ah, *bh; /* the same data in fp16, for the native row */
        cudaMalloc((void **)&a, count * 4);
        cudaMalloc((void **)&b, count * 4);
        cudaMalloc((void **)&c, count * 4);
        cudaMalloc((void **)&ah, count * 2);
        cudaMalloc((void **)&bh, count * 2);
        device_random(a, ah, count, 1);
        device_random(b, bh, count, 2);
        float one = 1.0f, zero = 0.0f, tflops[5];
        unsigned long long ran[5][2];
        for (int mode = 0; mode < 5; mode++) {
            static const char *const dtypes[] = {NULL, "fp16", "bf16", "tf32", NULL};
            if (dtypes[mode])
                ctl("opt.cuda_dtype", NULL, NULL, dtypes[mode], 4);
            float ms[9];
            unsigned long long low0 = counter(ctl, "lowered"), pass0 = counter(ctl, "passthrough");
            for (int r = -2; r < 9; r++) {
                cudaEventRecord(e0, 0);
                if (mode == 0)
                    direct(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
                else if (mode < 4)
                    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c,
                                n);
                else
                    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, ah, CUDA_R_16F, n, bh,
                                 CUDA_R_16F, n, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT);
                cudaEventRecord(e1, 0);
                cudaEventSynchronize(e1);
                if (r >= 0)
                    cudaEventElapsedTime(&ms[r], e0, e1);
            }
            ran[mode][0] = counter(ctl, "lowered") - low0;
            ran[mode][1] = counter(ctl, "passthrough") - pass0;
            qsort(ms, 9, sizeof *ms, cmp);
            tflops[mode] = (float)(2.0 * n * n * (double)n / (ms[4] * 1e-3) / 1e12);
        }
        printf("%-8d %10.1f %12.1f %12.1f %12.1f %16.1f %9.0f%%\n", n, tflops[0], tflops[1],
               tflops[2], tflops[3], tflops[4], 100.0 * tflops[1] / tflops[4]);
        printf("         ampshim's counters, cublasSgemm_v2 calls lowered/passthrough per column: "
               "fp16 %llu/%llu, bf16 %llu/%llu, tf32 %llu/%llu (11 calls each)\n",
               ran[1][0], ran[1][1], ran[2][0], ran[2][1], ran[3][0], ran[3][1]);
        cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ah), cudaFree(bh);
    }
    crossover(ctl, direct, h, e0, e1);
    return 0;
}
