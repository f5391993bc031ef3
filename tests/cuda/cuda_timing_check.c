/* GPU time per hooked call (AMPSHIM_CUDA_TIMING=events), against the
 * test-only fakes: CALLS cublasSgemm calls (lowered to fp16), then CALLS
 * cublasGemmEx calls in CUBLAS_COMPUTE_32F_PEDANTIC (as made), on a
 * non-blocking stream, then CALLS more cublasSgemm calls while that stream
 * is captured into a graph (none may be timed: an event there would be a
 * node of the program's graph). It prints
 *
 *   syncs N                host waits made during the calls (0: the timing
 *                          reads back only when asked or at exit)
 *   events_in_capture N    events recorded on a captured stream
 *
 * (CHECK_NO_CAPTURE=1 leaves the captured calls out: the fake CUPTI
 * reports every call's kernel, captured or not), and with an argument runs
 * `ampctl --json stats PID` into that file while
 * making hooked calls, so the events are read back on ampctl's request.
 * tests/cuda/cuda_timing_check.py checks what the report and ampctl say. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/ampctl_self.h"

enum { N = 32, CALLS = 256 };
static cublasHandle_t handle;
static float a[N * N], b[N * N], c[N * N];
static const float one = 1.0f, zero = 0.0f;

static void sgemm(void)
{
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
}

static void pedantic(void)
{
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, CUDA_R_32F, N, b, CUDA_R_32F,
                 N, &zero, c, CUDA_R_32F, N, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
}

int main(int argc, char **argv)
{
    void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    long (*syncs)(void) = rt ? (long (*)(void))dlsym(rt, "fake_cudart_syncs") : NULL;
    long (*in_capture)(void) =
        rt ? (long (*)(void))dlsym(rt, "fake_cudart_events_in_capture") : NULL;
    cudaStream_t stream;
    if (!syncs || !in_capture || cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS ||
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
        cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) {
        printf("FAIL: not linked to the fake cuBLAS and CUDA runtime\n");
        return 1;
    }
    for (int i = 0; i < N * N; i++)
        a[i] = b[i] = (float)(i % 7) / 8.0f;
    long before = syncs();
    for (int i = 0; i < CALLS; i++)
        sgemm();
    for (int i = 0; i < CALLS; i++)
        pedantic();
    const char *no_capture = getenv("CHECK_NO_CAPTURE");
    cudaGraph_t graph;
    if (!no_capture && cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess) {
        printf("FAIL: no capture\n");
        return 1;
    }
    for (int i = 0; !no_capture && i < CALLS; i++)
        sgemm();
    if (!no_capture)
        cudaStreamEndCapture(stream, &graph);
    printf("syncs %ld\nevents_in_capture %ld\n", syncs() - before, in_capture());
    fflush(stdout);
    if (argc > 1 && ampctl_self("stats", argv[1], pedantic) != 0) {
        printf("FAIL: ampctl stats\n");
        return 1;
    }
    cublasDestroy(handle);
    return 0;
}
