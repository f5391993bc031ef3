/* What cuBLAS's fast compute types really do to fp32 inputs, on this GPU:
 * the question ampshim's CUDA dtypes rest on (cublas_api.h says FAST_16F and
 * FAST_16BF "allow down-converting inputs to half or TF32"), asked where
 * cuBLAS picks its tensor-core kernels: a 256^3 GemmEx on fp32 buffers
 * through the real cuBLAS (a dlopen handle: the shim, if preloaded, is not
 * involved), C = A B with B the identity, so each C entry is one A entry as
 * the kernel saw it. A is random in [-1, 1) (values fp16 holds exactly)
 * with probes in a few entries:
 *
 *   range   1e5: fp16 inputs overflow (Inf); bf16, TF32 and fp32 keep it
 *   tiny    1e-8: fp16 flushes it (0, below its smallest subnormal 6e-8)
 *   bf16    1 + 2^-9: bf16 (8 significant bits) rounds it to 1
 *   tf32    1 + 2^-12: TF32 and fp16 (11 bits) round it to 1, fp32 keeps it
 *
 * so each compute type's inputs are fp16, bf16, tf32 or fp32. It prints the
 * probes and that verdict for COMPUTE_32F, _PEDANTIC, _FAST_16F, _FAST_16BF
 * and _FAST_TF32, a line "verdict FAST_16F=... FAST_16BF=... FAST_TF32=..."
 * (ampshim(7), ON A GPU, says which AMPSHIM_CUDA_FP16 default follows from
 * which), and the time of a 4096^3 product with each, next to the explicit
 * fp16 path (GemmEx on fp16 inputs with COMPUTE_32F; the conversions it
 * also needs are not included), side by side in one run. It fails only when
 * a probe matches no format, or COMPUTE_32F is not fp32 (a broken run).
 * Exits 77 without a GPU. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cublas/compute_verdict.h"

typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

static gemmex_fn gemmex;
static cublasHandle_t handle;

enum { N = 256, BIG = 4096 };
/* Where in A (column major, N x N) the probes go: spread over rows and
 * columns, away from the edges. */
static const int probe_at[PROBES] = {17 + 33 * N, 101 + 5 * N, 200 + 180 * N, 64 + 250 * N};

/* A random value in (-1, 1) that fp16 holds exactly: k / 1024, |k| < 1024. */
static float exact_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float)((int)(*s >> 40) % 2047 - 1023) / 1024.0f;
}

/* The fp16 bits of f, a value exact_uniform gives (fp16 holds it exactly,
 * normal or zero). */
static uint16_t exact_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    if (!(x & 0x7fffffff))
        return sign;
    int exponent = (int)((x >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(sign | (exponent << 10) | ((x >> 13) & 0x3ff));
}

/* The probe product with `compute`: what C holds at the probes, or NAN. */
static int probe(const float *dA, const float *dB, float *dC, cublasComputeType_t compute,
                 float out[PROBES])
{
    static float host[N * N];
    const float one = 1.0f, zero = 0.0f;
    if (gemmex(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, dA, CUDA_R_32F, N, dB, CUDA_R_32F,
               N, &zero, dC, CUDA_R_32F, N, compute, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS ||
        cudaMemcpy(host, dC, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 0;
    for (int p = 0; p < PROBES; p++)
        out[p] = host[probe_at[p]];
    return 1;
}

/* Milliseconds per BIG^3 product (median of 5 after a warm-up), or -1. */
static double time_product(const void *A, const void *B, cudaDataType in, float *C,
                           cublasComputeType_t compute)
{
    const float one = 1.0f, zero = 0.0f;
    cudaEvent_t start, stop;
    double ms[5];
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess)
        return -1;
    int ok = gemmex(handle, CUBLAS_OP_N, CUBLAS_OP_N, BIG, BIG, BIG, &one, A, in, BIG, B, in, BIG,
                    &zero, C, CUDA_R_32F, BIG, compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
    for (int r = 0; ok && r < 5; r++) {
        float t = 0;
        cudaEventRecord(start, 0);
        ok = gemmex(handle, CUBLAS_OP_N, CUBLAS_OP_N, BIG, BIG, BIG, &one, A, in, BIG, B, in, BIG,
                    &zero, C, CUDA_R_32F, BIG, compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(stop, 0);
        ok = ok && cudaEventSynchronize(stop) == cudaSuccess &&
             cudaEventElapsedTime(&t, start, stop) == cudaSuccess;
        ms[r] = t;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (!ok)
        return -1;
    for (int i = 1; i < 5; i++) /* insertion sort, for the median */
        for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
            double x = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = x;
        }
    return ms[2];
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("compute_types_gpu: no CUDA device; skipped\n");
        return 77;
    }
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        lib = dlopen("libcublas.so.12", RTLD_NOW | RTLD_NOLOAD);
    gemmex = lib ? (gemmex_fn)dlsym(lib, "cublasGemmEx") : NULL;
    if (!gemmex || cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
        printf("FAIL: cuBLAS not usable\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int version = 0;
    cublasGetVersion(handle, &version);
    printf("%s (sm_%d%d), cuBLAS %d: what each compute type does to fp32 inputs (%d^3, B = I)\n",
           prop.name, prop.major, prop.minor, version, N);

    static float A[N * N], B[N * N];
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N * N; i++)
        A[i] = exact_uniform(&seed);
    for (int p = 0; p < PROBES; p++)
        A[probe_at[p]] = probe_value[p];
    for (int j = 0; j < N; j++)
        B[j + j * N] = 1.0f;
    float *dA = NULL, *dB = NULL, *dC = NULL;
    if (cudaMalloc((void **)&dA, sizeof A) != cudaSuccess ||
        cudaMalloc((void **)&dB, sizeof B) != cudaSuccess ||
        cudaMalloc((void **)&dC, sizeof A) != cudaSuccess ||
        cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice) != cudaSuccess) {
        printf("FAIL: device memory\n");
        return 1;
    }
    static const struct {
        const char *name;
        cublasComputeType_t compute;
    } computes[] = {{"COMPUTE_32F", CUBLAS_COMPUTE_32F},
                    {"COMPUTE_32F_PEDANTIC", CUBLAS_COMPUTE_32F_PEDANTIC},
                    {"COMPUTE_32F_FAST_16F", CUBLAS_COMPUTE_32F_FAST_16F},
                    {"COMPUTE_32F_FAST_16BF", CUBLAS_COMPUTE_32F_FAST_16BF},
                    {"COMPUTE_32F_FAST_TF32", CUBLAS_COMPUTE_32F_FAST_TF32}};
    enum { COMPUTES = sizeof computes / sizeof *computes };
    const char *seen[COMPUTES];
    int broken = 0;
    printf("%-22s", "compute type");
    for (int p = 0; p < PROBES; p++)
        printf(" %14s", probe_name[p]);
    printf("  inputs are\n");
    for (int i = 0; i < COMPUTES; i++) {
        float v[PROBES];
        if (!probe(dA, dB, dC, computes[i].compute, v)) {
            printf("%-22s (GemmEx failed)\n", computes[i].name);
            seen[i] = "failed";
            broken = 1;
            continue;
        }
        seen[i] = verdict(v);
        printf("%-22s", computes[i].name);
        for (int p = 0; p < PROBES; p++)
            printf(" %14.9g", v[p]);
        printf("  %s\n", seen[i] ? seen[i] : "none of them");
        broken |= !seen[i];
        seen[i] = seen[i] ? seen[i] : "none";
    }
    broken |= strcmp(seen[0], "fp32") != 0;
    printf("verdict FAST_16F=%s FAST_16BF=%s FAST_TF32=%s\n", seen[2], seen[3], seen[4]);

    /* Speed at BIG^3, side by side: each compute type on fp32 buffers, and
     * the explicit fp16 path's GEMM on fp16 copies. */
    void *bA = NULL, *bB = NULL, *hA = NULL, *hB = NULL;
    float *bC = NULL;
    size_t elems = (size_t)BIG * BIG;
    float *fill = malloc(elems * sizeof *fill);
    uint16_t *half = malloc(elems * sizeof *half);
    if (fill && half && cudaMalloc(&bA, elems * 4) == cudaSuccess &&
        cudaMalloc(&bB, elems * 4) == cudaSuccess && cudaMalloc((void **)&bC, elems * 4) == cudaSuccess &&
        cudaMalloc(&hA, elems * 2) == cudaSuccess && cudaMalloc(&hB, elems * 2) == cudaSuccess) {
        for (size_t i = 0; i < elems; i++) {
            fill[i] = exact_uniform(&seed);
            half[i] = exact_half(fill[i]);
        }
        cudaMemcpy(bA, fill, elems * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(bB, fill, elems * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(hA, half, elems * 2, cudaMemcpyHostToDevice);
        cudaMemcpy(hB, half, elems * 2, cudaMemcpyHostToDevice);
        double base = time_product(bA, bB, CUDA_R_32F, bC, CUBLAS_COMPUTE_32F);
        printf("\n%d^3 on fp32 buffers, median of 5:\n%-34s %10s %8s %10s\n", BIG, "path", "ms",
               "TFLOP/s", "vs 32F");
        for (int i = 0; i < COMPUTES + 1; i++) {
            int explicit_fp16 = i == COMPUTES;
            double ms = explicit_fp16 ? time_product(hA, hB, CUDA_R_16F, bC, CUBLAS_COMPUTE_32F)
                                      : time_product(bA, bB, CUDA_R_32F, bC, computes[i].compute);
            printf("%-34s %10.3f %8.1f %9.2fx\n",
                   explicit_fp16 ? "explicit fp16 (GEMM only)" : computes[i].name, ms,
                   ms > 0 ? 2.0 * BIG * (double)BIG * BIG / (ms * 1e9) : 0.0,
                   ms > 0 && base > 0 ? base / ms : 0.0);
        }
    } else {
        printf("(no memory for the %d^3 timings)\n", BIG);
    }
    free(fill);
    free(half);
    cudaFree(bA);
    cudaFree(bB);
    cudaFree(bC);
    cudaFree(hA);
    cudaFree(hB);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    cublasDestroy(handle);
    printf("compute_types_gpu: %s\n", broken ? "FAIL (a probe matches no format)" : "done");
    return broken;
}
