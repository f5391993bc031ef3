/* What cuBLAS's fast compute types really do to fp32 inputs, on this GPU:
 * the question ampshim's CUDA dtypes rest on (cublas_api.h says FAST_16F and
 * FAST_16BF "allow down-converting inputs to half or TF32"). Each probe is a
 * 1-term GemmEx (m = n = k = 1, or k = 2) on fp32 buffers, through the real
 * cuBLAS (a dlopen handle: the shim, if preloaded, is not involved):
 *
 *   range   a = 1e5, b = 1: fp16 conversion overflows (Inf), TF32 and bf16
 *           keep it finite
 *   tiny    a = 1e-8, b = 1: fp16 flushes it (0, below its smallest
 *           subnormal 6e-8), TF32 and bf16 keep it
 *   bits    a = 1 + 2^-9, b = 1: bf16 rounds it to 1, fp16 and TF32 keep it
 *   sum     a = (1, 2^-26), b = (1, 1) (k = 2): any of them gives 1 (the
 *           small term is below fp32's ulp at 1 after accumulation)
 *
 * It prints, for COMPUTE_32F, _PEDANTIC, _FAST_16F, _FAST_16BF and
 * _FAST_TF32, what each probe gave and what format that matches, so the
 * results file says what "AMPSHIM_CUDA_DTYPE=fp16" really computes here.
 * It fails only if a probe contradicts every format (a broken run); the
 * answers themselves are observations for ampshim(7). Exits 77 without a
 * GPU. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>

typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

static gemmex_fn gemmex;
static cublasHandle_t handle;

/* One GemmEx of k terms a . b in fp32 buffers; NAN on failure. */
static float probe(const float *a, const float *b, int k, cublasComputeType_t compute)
{
    float *d = NULL, out = NAN, one = 1.0f, zero = 0.0f;
    if (cudaMalloc((void **)&d, 5 * sizeof(float)) != cudaSuccess)
        return NAN;
    cudaMemcpy(d, a, (size_t)k * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d + 2, b, (size_t)k * sizeof(float), cudaMemcpyHostToDevice);
    if (gemmex(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, k, &one, d, CUDA_R_32F, 1, d + 2, CUDA_R_32F,
               k, &zero, d + 4, CUDA_R_32F, 1, compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS)
        cudaMemcpy(&out, d + 4, sizeof out, cudaMemcpyDeviceToHost);
    cudaFree(d);
    return out;
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("compute_types_gpu: no CUDA device; skipped\n");
        return 77;
    }
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    gemmex = lib ? (gemmex_fn)dlsym(lib, "cublasGemmEx") : NULL;
    if (!gemmex || cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
        printf("FAIL: cuBLAS 13 not usable\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int version = 0;
    cublasGetVersion(handle, &version);
    printf("%s (sm_%d%d), cuBLAS %d: what each compute type does to fp32 inputs\n", prop.name,
           prop.major, prop.minor, version);
    static const struct {
        const char *name;
        cublasComputeType_t compute;
    } computes[] = {{"COMPUTE_32F", CUBLAS_COMPUTE_32F},
                    {"COMPUTE_32F_PEDANTIC", CUBLAS_COMPUTE_32F_PEDANTIC},
                    {"COMPUTE_32F_FAST_16F", CUBLAS_COMPUTE_32F_FAST_16F},
                    {"COMPUTE_32F_FAST_16BF", CUBLAS_COMPUTE_32F_FAST_16BF},
                    {"COMPUTE_32F_FAST_TF32", CUBLAS_COMPUTE_32F_FAST_TF32}};
    const float big[1] = {1e5f}, tiny[1] = {1e-8f}, bits[1] = {1.0f + 0x1p-9f}, one1[1] = {1.0f};
    const float sum_a[2] = {1.0f, 0x1p-26f}, sum_b[2] = {1.0f, 1.0f};
    int broken = 0;
    printf("%-22s %12s %12s %14s %12s  %s\n", "compute type", "range 1e5", "tiny 1e-8",
           "bits 1+2^-9", "sum", "inputs behave like");
    for (size_t i = 0; i < sizeof computes / sizeof *computes; i++) {
        float r = probe(big, one1, 1, computes[i].compute), t = probe(tiny, one1, 1, computes[i].compute);
        float b = probe(bits, one1, 1, computes[i].compute), s = probe(sum_a, sum_b, 2, computes[i].compute);
        int fp16 = isinf(r) && t == 0.0f && b == bits[0];
        int bf16 = isfinite(r) && t != 0.0f && b == 1.0f;
        int tf32 = isfinite(r) && t != 0.0f && b == bits[0];
        const char *like = fp16 ? "fp16" : bf16 ? "bf16" : tf32 ? "tf32 or fp32" : "none of them";
        broken |= !(fp16 || bf16 || tf32) || s != 1.0f;
        printf("%-22s %12g %12g %14.9g %12g  %s\n", computes[i].name, r, t, b, s, like);
    }
    cublasDestroy(handle);
    printf("compute_types_gpu: %s\n", broken ? "FAIL (a probe matches no format)" : "done");
    return broken;
}
