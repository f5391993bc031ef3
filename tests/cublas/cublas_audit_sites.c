/* The accuracy audit of cuBLAS calls, against the test-only fake cuBLAS and
 * CUDA runtime (host memory stands for device memory). Three call sites of
 * cublasSgemm_v2 of different conditioning, as tests/preload/audit_sites.c
 * has for the CPU (well_scaled, overflows: A above fp16's range, cancels:
 * a difference of nearly equal products), and one of cublasGemmEx
 * (ex_site, well scaled). Each is its own exported function (-rdynamic).
 *
 * The program computes what the audit should find with the fake itself,
 * bypassing the shim (dlsym on the fake's own handle): the product with
 * CUBLAS_COMPUTE_32F_FAST_16F against the product as made. It prints
 *
 *   site NAME err E nonfinite 0|1 hash H made M low L
 *
 * (H: a hash of C after the site's calls; M and L: of the product as made
 * and of the lowered one),
 * and "syncs N" (calls that make the host wait, made during the calls after
 * each site's first) and "outstanding N" (scratch not given back). With an
 * argument it starts `ampctl --json audit PID` into that file and keeps
 * making hooked calls (cublasSnrm2) until ampctl is done, as a live program
 * would, so the device results are read back on ampctl's request.
 *
 * Options before it: --devices makes each site's calls alternately on the
 * fake runtime's devices 0 and 1 (a handle made on each, as one thread per
 * GPU would), and prints "cross_device N" (calls the fake cuBLAS saw touch
 * another device's memory); --capture keeps a stream of the program's
 * (a blocking one) captured into a graph in the default global mode from
 * before the first call until after ampctl is done, and prints
 * "capture_invalidated N" and "capture_ended 1" when cudaStreamEndCapture
 * succeeded. The fake runtime applies capture's rules to every thread
 * alike, so the capture is begun on this thread on a stream no hooked call
 * uses, as another thread's would be; the cuBLAS calls then run on a
 * non-blocking stream, as PyTorch's do (work on the legacy stream would
 * break the capture by itself). */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/audit_sites.h"
#include "tests/ampctl_self.h"

enum { N = AUDIT_N, CALLS = 3 };

static cublasHandle_t handle, handles[2];
static struct audit_data data;
static float c_out[N * N];
static const float one = 1.0f, zero = 0.0f;

typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
static gemmex_fn fake_gemmex;

/* Column major: C (N x N) = A (N x k) B (k x N). */
__attribute__((noinline)) void well_scaled(void)
{
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, data.a_well, N, data.b_well, N, &zero, c_out, N);
}

__attribute__((noinline)) void overflows(void)
{
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, data.a_over, N, data.b_over, N, &zero, c_out, N);
}

__attribute__((noinline)) void cancels(void)
{
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, 2 * N, &one, data.a_canc, N, data.b_canc, 2 * N, &zero,
                c_out, N);
}

__attribute__((noinline)) void ex_site(void)
{
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, data.a_well, CUDA_R_32F, N, data.b_well,
                 CUDA_R_32F, N, &zero, c_out, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static void expected(const float *a, const float *b, int k, double *err, int *nonfinite,
                     uint64_t *made, uint64_t *lowered)
{
    static float low[N * N], ref[N * N];
    fake_gemmex(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, k, &one, a, CUDA_R_32F, N, b, CUDA_R_32F, k,
                &zero, low, CUDA_R_32F, N, CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_GEMM_DEFAULT);
    fake_gemmex(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, k, &one, a, CUDA_R_32F, N, b, CUDA_R_32F, k,
                &zero, ref, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    double d2 = 0, r2 = 0;
    *nonfinite = 0;
    for (int i = 0; i < N * N; i++) {
        if (!isfinite(low[i]))
            *nonfinite = 1;
        d2 += ((double)low[i] - ref[i]) * ((double)low[i] - ref[i]);
        r2 += (double)ref[i] * ref[i];
    }
    *err = *nonfinite ? INFINITY : sqrt(d2 / r2);
    *made = audit_hash(ref, N * N);
    *lowered = audit_hash(low, N * N);
}

/* A hooked call: a request of ampctl's is served in it. */
static void hooked_call(void)
{
    float norm;
    cublasSnrm2(handle, N, data.a_well, 1, &norm);
}

static long (*fake_counter(void *lib, const char *name))(void)
{
    return lib ? (long (*)(void))dlsym(lib, name) : NULL;
}

int main(int argc, char **argv)
{
    int devices = 0, capture = 0;
    for (; argc > 1 && strncmp(argv[1], "--", 2) == 0; argc--, argv++) {
        devices |= strcmp(argv[1], "--devices") == 0;
        capture |= strcmp(argv[1], "--capture") == 0;
    }
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    /* The runtime the shim finds (it opens libcudart.so.13 itself when the
     * program does not link it, as here). */
    void *rt = dlopen("libcudart.so.13", RTLD_NOW);
    long (*syncs)(void) = fake_counter(rt, "fake_cudart_syncs");
    long (*outstanding)(void) = fake_counter(rt, "fake_cudart_outstanding");
    long (*invalidated)(void) = fake_counter(rt, "fake_cudart_captures_invalidated");
    long (*cross_device)(void) = fake_counter(lib, "fake_cublas_cross_device");
    int ok = lib && (*(void **)&fake_gemmex = dlsym(lib, "cublasGemmEx")) && syncs &&
             outstanding && invalidated && cross_device;
    for (int d = 0; ok && d < 1 + devices; d++)
        ok = cudaSetDevice(d) == cudaSuccess &&
             cublasCreate(&handles[d]) == CUBLAS_STATUS_SUCCESS;
    if (!ok || cudaSetDevice(0) != cudaSuccess) {
        printf("FAIL: not linked to the fake cuBLAS and CUDA runtime\n");
        return 1;
    }
    handle = handles[0];
    cudaStream_t captured = NULL, work = NULL;
    if (capture && (cudaStreamCreateWithFlags(&captured, cudaStreamDefault) != cudaSuccess ||
                    cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking) != cudaSuccess ||
                    cublasSetStream(handle, work) != CUBLAS_STATUS_SUCCESS ||
                    cudaStreamBeginCapture(captured, cudaStreamCaptureModeGlobal) != cudaSuccess)) {
        printf("FAIL: no capture\n");
        return 1;
    }
    audit_fill(&data, 0);
    static const struct {
        const char *name;
        void (*site)(void);
        const float *a, *b;
        int k;
    } sites[] = {{"well_scaled", well_scaled, data.a_well, data.b_well, N},
                 {"overflows", overflows, data.a_over, data.b_over, N},
                 {"cancels", cancels, data.a_canc, data.b_canc, 2 * N},
                 {"ex_site", ex_site, data.a_well, data.b_well, N}};
    enum { SITES = sizeof sites / sizeof *sites };
    uint64_t out[SITES];
    /* Call i of a site on device i % 2 with --devices, else on device 0. */
    for (int s = 0; s < SITES; s++) /* each site's first call: its results array is made */
        sites[s].site();
    long before = syncs();
    for (int s = 0; s < SITES; s++) {
        for (int i = 1; i < CALLS; i++) {
            int d = devices ? i % 2 : 0;
            cudaSetDevice(d);
            handle = handles[d];
            sites[s].site();
        }
        cudaSetDevice(0);
        handle = handles[0];
        out[s] = audit_hash(c_out, N * N);
    }
    long during = syncs() - before;
    for (int s = 0; s < SITES; s++) {
        double err;
        int nonfinite;
        uint64_t made, lowered;
        expected(sites[s].a, sites[s].b, sites[s].k, &err, &nonfinite, &made, &lowered);
        printf("site %s err %.9g nonfinite %d hash %016llx made %016llx low %016llx\n",
               sites[s].name, err, nonfinite, (unsigned long long)out[s], (unsigned long long)made,
               (unsigned long long)lowered);
    }
    printf("syncs %ld\noutstanding %ld\ncross_device %ld\n", during, outstanding(),
           cross_device());
    fflush(stdout);
    if (argc > 1 && ampctl_self("audit", argv[1], hooked_call) != 0) {
        printf("FAIL: ampctl audit\n");
        return 1;
    }
    if (capture) {
        cudaGraph_t graph = NULL;
        int ended = cudaStreamEndCapture(captured, &graph) == cudaSuccess;
        printf("capture_invalidated %ld\ncapture_ended %d\n", invalidated(), ended);
    }
    for (int d = 0; d < 1 + devices; d++)
        cublasDestroy(handles[d]);
    return 0;
}
