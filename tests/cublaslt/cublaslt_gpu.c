/* cuBLASLt on a real GPU under the shim, as torch's nn.Linear with a bias
 * calls it: fp32 A, B and D, CUBLAS_COMPUTE_32F, epilogue BIAS (the bias a
 * vector over D's rows), an algorithm the program chose from the heuristic
 * for that compute type, a workspace. For each CUDA dtype (switched
 * in-process with ampshim_ctl):
 * - lowered: D is not bit-identical to the same call asked directly
 *   (through a dlopen handle, which the shim cannot intercept) with plain
 *   32F; a result equal to fp32's means the lowering did not happen, and
 *   fails;
 * - its error against a float64 reference on the host is at the dtype's
 *   level (fp16 and tf32 within 1e-2 relative, bf16 within 3e-2) and above
 *   fp32's own;
 * - the bias is applied: D minus the float64 product, averaged along each
 *   row, is that row's bias (within 0.1; the biases are 0.5 apart).
 * Exits 77 without a GPU; built against the fakes too (FAKE_CUDART_DEVICES=1),
 * where it must fail with lowering off. */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/cuda_gpu.h"

#ifndef LT_N
#define LT_N 256 /* the fakes multiply on the CPU: their build asks for less */
#endif
enum { M = LT_N, N = LT_N / 2, K = LT_N };

typedef cublasStatus_t (*matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                    const void *, cublasLtMatrixLayout_t, const void *,
                                    cublasLtMatrixLayout_t, const void *, const void *,
                                    cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                    const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

/* Relative Frobenius error of got against the float64 reference. */
static double error(const float *got, const double *ref)
{
    double d2 = 0, r2 = 0;
    for (int i = 0; i < M * N; i++) {
        d2 += (got[i] - ref[i]) * (got[i] - ref[i]);
        r2 += ref[i] * ref[i];
    }
    return sqrt(d2 / r2);
}

int main(void)
{
    gpu_ctl_fn ctl;
    void *lib;
    int start = gpu_start("cublaslt_gpu", "libcublasLt.so.13", &ctl, &lib);
    if (start == 77)
        return 77;
    CHECK(start == 0, "run under the shim, with libcublasLt.so.13 loaded");
    if (start)
        return 1;
    matmul_fn direct = (matmul_fn)dlsym(lib, "cublasLtMatmul");
    size_t abytes = sizeof(float) * M * K, bbytes = sizeof(float) * K * N,
           dbytes = sizeof(float) * M * N;
    float *ha = malloc(abytes), *hb = malloc(bbytes), *hbias = malloc(sizeof(float) * M);
    float *got = malloc(dbytes), *plain = malloc(dbytes);
    double *ref = malloc(sizeof(double) * M * N);
    gpu_fill(ha, (size_t)M * K, 7919, 1013, 317.0f, 1.6f);
    gpu_fill(hb, (size_t)K * N, 6271, 991, 211.0f, 2.3f);
    for (int i = 0; i < M; i++)
        hbias[i] = 0.5f * (float)(i % 7) - 1.5f;
    for (int j = 0; j < N; j++) /* column-major, as cuBLASLt's layouts below */
        for (int i = 0; i < M; i++) {
            double s = 0;
            for (int p = 0; p < K; p++)
                s += (double)ha[i + p * M] * hb[p + j * K];
            ref[i + j * M] = s;
        }
    float *a, *b, *d, *bias;
    void *workspace;
    size_t ws = 1 << 22;
    cudaMalloc((void **)&a, abytes);
    cudaMalloc((void **)&b, bbytes);
    cudaMalloc((void **)&d, dbytes);
    cudaMalloc((void **)&bias, sizeof(float) * M);
    cudaMalloc(&workspace, ws);
    cudaMemcpy(a, ha, abytes, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb, bbytes, cudaMemcpyHostToDevice);
    cudaMemcpy(bias, hbias, sizeof(float) * M, cudaMemcpyHostToDevice);

    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const float *bias_ptr = bias;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                   sizeof bias_ptr);
    cublasLtMatrixLayout_t al, bl, dl;
    cublasLtMatrixLayoutCreate(&al, CUDA_R_32F, M, K, M);
    cublasLtMatrixLayoutCreate(&bl, CUDA_R_32F, K, N, K);
    cublasLtMatrixLayoutCreate(&dl, CUDA_R_32F, M, N, M);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    uint64_t max_ws = ws;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                         sizeof max_ws);
    /* The pointers' own alignment, as torch states it (16: malloc's, which
     * the fakes' cudaMalloc is). */
    uint32_t align = 16;
    for (int attr = CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES;
         attr <= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES; attr++)
        cublasLtMatmulPreferenceSetAttribute(pref, (cublasLtMatmulPreferenceAttributes_t)attr,
                                             &align, sizeof align);
    cublasLtMatmulHeuristicResult_t result;
    int count = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, desc, al, bl, dl, dl, pref, 1, &result, &count);
    CHECK(count == 1, "the heuristic answers an algorithm for 32F");
    if (count != 1)
        return 1;
    float alpha = 1.0f, beta = 0.0f;
    direct(lt, desc, &alpha, a, al, b, bl, &beta, d, dl, d, dl, &result.algo, workspace, ws, 0);
    cudaMemcpy(plain, d, dbytes, cudaMemcpyDeviceToHost);
    double plain_err = 0;
    {
        /* fp32's own error, the bias taken out */
        float *nobias = malloc(dbytes);
        for (int i = 0; i < M * N; i++)
            nobias[i] = plain[i] - hbias[i % M];
        plain_err = error(nobias, ref);
        free(nobias);
    }
    static const struct {
        const char *dtype;
        double bound;
    } modes[] = {{"fp16", 1e-2}, {"bf16", 3e-2}, {"tf32", 1e-2}};
    for (int m = 0; m < 3; m++) {
        ctl("opt.cuda_dtype", NULL, NULL, modes[m].dtype, strlen(modes[m].dtype));
        cudaMemset(d, 0, dbytes);
        CHECK(cublasLtMatmul(lt, desc, &alpha, a, al, b, bl, &beta, d, dl, d, dl, &result.algo,
                             workspace, ws, 0) == CUBLAS_STATUS_SUCCESS,
              "%s: the matmul succeeds", modes[m].dtype);
        cudaMemcpy(got, d, dbytes, cudaMemcpyDeviceToHost);
        CHECK(memcmp(got, plain, dbytes) != 0,
              "%s: not fp32's result, bit for bit (it was lowered)", modes[m].dtype);
        double row_off = 0;
        for (int i = 0; i < M; i++) {
            double mean = 0;
            for (int j = 0; j < N; j++)
                mean += got[i + j * M] - ref[i + j * M];
            row_off = fmax(row_off, fabs(mean / N - hbias[i]));
        }
        CHECK(row_off < 0.1,
              "%s: the bias applied (rows off by at most %.2g; a row without it is "
              "0.5 to 1.5 off)",
              modes[m].dtype, row_off);
        for (int i = 0; i < M * N; i++)
            got[i] -= hbias[i % M];
        double e = error(got, ref);
        CHECK(e < modes[m].bound && e > plain_err,
              "%s: error %.3g, at the dtype's level (under %.0e, above fp32's %.3g)",
              modes[m].dtype, e, modes[m].bound, plain_err);
    }
    cublasLtDestroy(lt);
    printf("cublaslt_gpu: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
