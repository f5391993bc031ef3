/* A CUDA graph captured around lowered cuBLAS calls, on a GPU under the
 * shim (exits 77 without one). A call that needs scratch (an fp16
 * cublasSsyrk, rebuilt on GemmEx in scratch) runs as made while its stream
 * is capturing, so the captured graph has no memory nodes: it can be cloned
 * and used as a child graph; a call that needs none (cublasSgemm, lowered in
 * place by its compute type) is still lowered inside the graph. The graph
 * and its clone, launched, give the same results as the same calls made
 * outside capture the same way (Ssyrk as made, Sgemm lowered). Run under
 * LD_PRELOAD=libampshim.so. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

enum { N = 256, K = 128 };


static void calls(cublasHandle_t h, const float *a, float *c_syrk, float *c_gemm)
{
    const float one = 1.0f, zero = 0.0f;
    cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, N, K, &one, a, N, &zero, c_syrk, N);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N, K, &one, a, N, a, N, &zero, c_gemm, N);
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("capture_gpu: no CUDA device; skipped\n");
        return 77;
    }
    CHECK_SHIM_LOADED();
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetStream(h, s);
    /* A workspace of the program's own, as torch gives its handles (32 MiB
     * on Hopper): without one cuBLAS allocates during capture, which may
     * fail the capture for a reason that is not the shim's. */
    void *workspace = NULL;
    const size_t workspace_bytes = (size_t)32 << 20;
    CHECK(cudaMalloc(&workspace, workspace_bytes) == cudaSuccess &&
              cublasSetWorkspace(h, workspace, workspace_bytes) == CUBLAS_STATUS_SUCCESS,
          "the handle has a 32 MiB workspace");
    float *host = malloc(sizeof(float) * N * K), *a, *c[6];
    for (int i = 0; i < N * K; i++)
        host[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
    cudaMalloc((void **)&a, sizeof(float) * N * K);
    cudaMemcpy(a, host, sizeof(float) * N * K, cudaMemcpyHostToDevice);
    for (int i = 0; i < 6; i++) {
        cudaMalloc((void **)&c[i], sizeof(float) * N * N);
        cudaMemset(c[i], 0, sizeof(float) * N * N);
    }
    /* Reference: outside capture, Ssyrk as made (the real function through
     * a dlopen handle, not the shim), Sgemm lowered (the hook). */
    typedef cublasStatus_t (*syrk_fn)(cublasHandle_t, cublasFillMode_t, cublasOperation_t, int, int,
                                      const float *, const float *, int, const float *, float *,
                                      int);
    syrk_fn real_syrk =
        (syrk_fn)dlsym(dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD), "cublasSsyrk_v2");
    const float one = 1.0f, zero = 0.0f;
    CHECK(real_syrk != NULL, "the real cublasSsyrk_v2");
    if (!real_syrk)
        return 1;
    real_syrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, N, K, &one, a, N, &zero, c[0], N);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, N, N, K, &one, a, N, a, N, &zero, c[1], N);
    cudaStreamSynchronize(s);
    uint64_t syrk_pass = shim_counter("stats.cublasSsyrk_v2.passthrough");
    uint64_t gemm_low = shim_counter("stats.cublasSgemm_v2.lowered");
    cudaGraph_t graph = NULL, clone = NULL, parent = NULL;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "capture begins");
    calls(h, a, c[2], c[3]);
    CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess && graph, "capture ends");
    CHECK(shim_counter("stats.cublasSsyrk_v2.passthrough") == syrk_pass + 1,
          "under capture, Ssyrk (needs scratch) ran as made");
    CHECK(shim_counter("stats.cublasSgemm_v2.lowered") == gemm_low + 1,
          "under capture, Sgemm (no scratch) was lowered");
    CHECK(cudaGraphClone(&clone, graph) == cudaSuccess, "the graph can be cloned (no memory nodes)");
    cudaGraphNode_t child;
    CHECK(cudaGraphCreate(&parent, 0) == cudaSuccess &&
              cudaGraphAddChildGraphNode(&child, parent, NULL, 0, graph) == cudaSuccess,
          "the graph can be a child graph");
    cudaGraphExec_t exec = NULL;
    CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess &&
              cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess,
          "the graph runs");
    float *x = malloc(sizeof(float) * N * N), *y = malloc(sizeof(float) * N * N);
    for (int k = 0; k < 2; k++) {
        cudaMemcpy(x, c[k], sizeof(float) * N * N, cudaMemcpyDeviceToHost);
        cudaMemcpy(y, c[2 + k], sizeof(float) * N * N, cudaMemcpyDeviceToHost);
        CHECK(memcmp(x, y, sizeof(float) * N * N) == 0, "%s in the graph: the same result",
              k ? "Sgemm" : "Ssyrk");
    }
    printf("capture_gpu: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
