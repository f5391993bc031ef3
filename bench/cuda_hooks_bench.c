/* What a CUDA hook adds to each call, side by side in one run: the same
 * call made directly (the library's function through a dlopen handle) and
 * through the shim, alternating in small batches; the extra cost is the
 * median of the per-round differences. The libraries are the test-only CPU
 * fakes (tests/fakes), whose own work on 1-element problems is a few tens
 * of nanoseconds, so the difference is the hook: its decision and the
 * descriptor or handle queries it makes. For a lowered call the direct side
 * is the call the library ends up running (GemmEx with the fast compute
 * type, the convolution with the converting math type). On a GPU the real getters cost what
 * cuBLAS's and cuDNN's own do; a kernel launch costs microseconds.
 * Settings are switched in-process with ampshim_ctl. The lowered sgemm
 * runs with the GPU timing as it is by default (events on every 64th call),
 * off, and on every call (what one timed call costs). cuDNN's graph API:
 * cudnnBackendExecute of a 1x1x1x1 convolution plan as made and lowered
 * (the private plan; direct: the library's execute of the program's plan),
 * and the variant pack PyTorch builds for every execute (create, three
 * attributes, finalize, execute, destroy), which the descriptor book sees.
 * Run under LD_PRELOAD=libampshim.so (the benchmark definition does). */
#include <cublas_v2.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "tests/cudnn_graph/cudnn_graph_build.h"

typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);
static ctl_fn ctl;

static void set(const char *name, const char *value)
{
    if (ctl(name, NULL, NULL, value, strlen(value)) != 0)
        fprintf(stderr, "cuda_hooks_bench: cannot set %s=%s\n", name, value);
}

static void set_enabled(int on)
{
    if (ctl("opt.enabled", NULL, NULL, &on, sizeof on) != 0)
        fprintf(stderr, "cuda_hooks_bench: cannot set opt.enabled=%d\n", on);
}

static void set_u64(const char *name, uint64_t value)
{
    if (ctl(name, NULL, NULL, &value, sizeof value) != 0)
        fprintf(stderr, "cuda_hooks_bench: cannot set %s=%llu\n", name, (unsigned long long)value);
}

enum { CALLS = 2000, ROUNDS = 201 };

/* A call made directly (hooked = 0) or through the shim (hooked = 1). */
typedef void (*call_fn)(int hooked);

static void measure(const char *label, call_fn call)
{
    static double direct[ROUNDS], hooked[ROUNDS], diff[ROUNDS];
    for (int i = 0; i < 2000; i++) {
        call(0);
        call(1);
    }
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now();
        for (int i = 0; i < CALLS; i++)
            call(0);
        double t1 = now();
        for (int i = 0; i < CALLS; i++)
            call(1);
        double t2 = now();
        direct[r] = (t1 - t0) / CALLS * 1e9;
        hooked[r] = (t2 - t1) / CALLS * 1e9;
        diff[r] = hooked[r] - direct[r];
    }
    printf("| %-58s | %9.1f | %9.1f | %+9.1f |\n", label, median(direct, ROUNDS),
           median(hooked, ROUNDS), median(diff, ROUNDS));
}

static void *cublas_lib, *cudnn_lib;
static cublasHandle_t blas;
static cudnnHandle_t dnn;
static float a[4], b[4], c[4], one = 1.0f, zero = 0.0f;

static void sgemm(int hooked)
{
    static __typeof__(&cublasSgemm_v2) direct;
    if (!direct)
        direct = (__typeof__(&cublasSgemm_v2))dlsym(cublas_lib, "cublasSgemm_v2");
    (hooked ? cublasSgemm_v2 : direct)(blas, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, a, 1, b, 1,
                                       &zero, c, 1);
}

/* Lowered: the direct side is the call the library ends up running. */
static void sgemm_lowered(int hooked)
{
    static __typeof__(&cublasGemmEx) direct;
    if (!direct)
        direct = (__typeof__(&cublasGemmEx))dlsym(cublas_lib, "cublasGemmEx");
    if (hooked)
        cublasSgemm_v2(blas, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, a, 1, b, 1, &zero, c, 1);
    else
        direct(blas, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, a, CUDA_R_32F, 1, b, CUDA_R_32F, 1,
               &zero, c, CUDA_R_32F, 1, CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_GEMM_DEFAULT);
}

static cudnnTensorDescriptor_t t1, t1h;
static cudnnFilterDescriptor_t f1;
static cudnnConvolutionDescriptor_t conv, conv16;
static _Float16 h1[1], h2[1];

static void softmax(int hooked)
{
    static __typeof__(&cudnnSoftmaxForward) direct;
    if (!direct)
        direct = (__typeof__(&cudnnSoftmaxForward))dlsym(cudnn_lib, "cudnnSoftmaxForward");
    (hooked ? cudnnSoftmaxForward : direct)(dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                            &one, t1, a, &zero, t1, c);
}

static void softmax_half(int hooked)
{
    static __typeof__(&cudnnSoftmaxForward) direct;
    if (!direct)
        direct = (__typeof__(&cudnnSoftmaxForward))dlsym(cudnn_lib, "cudnnSoftmaxForward");
    (hooked ? cudnnSoftmaxForward : direct)(dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                            &one, t1h, h1, &zero, t1h, h2);
}

static void convolution(int hooked)
{
    static __typeof__(&cudnnConvolutionForward) direct;
    static char ws[256];
    if (!direct)
        direct = (__typeof__(&cudnnConvolutionForward))dlsym(cudnn_lib, "cudnnConvolutionForward");
    (hooked ? cudnnConvolutionForward : direct)(dnn, &one, t1, a, f1, b, conv, 0, ws, sizeof ws,
                                                &zero, t1, c);
}

static void convolution_lowered(int hooked)
{
    static __typeof__(&cudnnConvolutionForward) direct;
    static char ws[256];
    if (!direct)
        direct = (__typeof__(&cudnnConvolutionForward))dlsym(cudnn_lib, "cudnnConvolutionForward");
    (hooked ? cudnnConvolutionForward : direct)(dnn, &one, t1, a, f1, b, hooked ? conv : conv16, 0,
                                                ws, sizeof ws, &zero, t1, c);
}

/* cuDNN's graph API: a 1x1x1x1 forward plan (the program's), executed
 * with a variant pack made once, or made for each call as PyTorch does. */
static gdesc gplan, gpack;
static float gx[1], gw[1], gy[1];
static char gws[4096];

static gdesc make_pack(int hooked)
{
    static __typeof__(&cudnnBackendCreateDescriptor) d_create;
    static __typeof__(&cudnnBackendSetAttribute) d_set;
    static __typeof__(&cudnnBackendFinalize) d_finalize;
    if (!d_create) {
        d_create = (__typeof__(d_create))dlsym(cudnn_lib, "cudnnBackendCreateDescriptor");
        d_set = (__typeof__(d_set))dlsym(cudnn_lib, "cudnnBackendSetAttribute");
        d_finalize = (__typeof__(d_finalize))dlsym(cudnn_lib, "cudnnBackendFinalize");
    }
    int64_t uids[3] = {GB_X, GB_W, GB_Y};
    void *ptrs[3] = {gx, gw, gy}, *ws = gws;
    gdesc pack = NULL;
    (hooked ? cudnnBackendCreateDescriptor : d_create)(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
                                                       &pack);
    (hooked ? cudnnBackendSetAttribute : d_set)(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                                CUDNN_TYPE_INT64, 3, uids);
    (hooked ? cudnnBackendSetAttribute : d_set)(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                                CUDNN_TYPE_VOID_PTR, 3, ptrs);
    (hooked ? cudnnBackendSetAttribute : d_set)(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                                CUDNN_TYPE_VOID_PTR, 1, &ws);
    (hooked ? cudnnBackendFinalize : d_finalize)(pack);
    return pack;
}

static void graph_execute(int hooked)
{
    static __typeof__(&cudnnBackendExecute) direct;
    if (!direct)
        direct = (__typeof__(&cudnnBackendExecute))dlsym(cudnn_lib, "cudnnBackendExecute");
    (hooked ? cudnnBackendExecute : direct)(dnn, gplan, gpack);
}

static void graph_execute_pack_per_call(int hooked)
{
    static __typeof__(&cudnnBackendExecute) direct;
    static __typeof__(&cudnnBackendDestroyDescriptor) d_destroy;
    if (!direct) {
        direct = (__typeof__(&cudnnBackendExecute))dlsym(cudnn_lib, "cudnnBackendExecute");
        d_destroy = (__typeof__(d_destroy))dlsym(cudnn_lib, "cudnnBackendDestroyDescriptor");
    }
    gdesc pack = make_pack(hooked);
    (hooked ? cudnnBackendExecute : direct)(dnn, gplan, pack);
    (hooked ? cudnnBackendDestroyDescriptor : d_destroy)(pack);
}

/* A 1x1x1x1 fp32 forward plan, finalized under the current settings. */
static gdesc graph_plan(struct gb_graph *g, gdesc *cfg)
{
    static const struct gshape one_pixel = {1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0};
    return gb_graph(g, 0, &one_pixel, CUDNN_DATA_FLOAT, 0, dnn) ? gb_plan(g, dnn, NULL, cfg) : NULL;
}

int main(void)
{
    cpu_set_t cpu;
    CPU_ZERO(&cpu);
    CPU_SET(0, &cpu);
    sched_setaffinity(0, sizeof cpu, &cpu);
    ctl = (ctl_fn)dlsym(RTLD_DEFAULT, "ampshim_ctl");
    cublas_lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    cudnn_lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    if (!ctl || !cublas_lib || !cudnn_lib) {
        fprintf(stderr, "cuda_hooks_bench: run under LD_PRELOAD=libampshim.so with the fakes\n");
        return 1;
    }
    cublasCreate(&blas);
    cudnnCreate(&dnn);
    cudnnCreateTensorDescriptor(&t1);
    cudnnSetTensor4dDescriptor(t1, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 1);
    cudnnCreateTensorDescriptor(&t1h);
    cudnnSetTensor4dDescriptor(t1h, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 1, 1, 1, 1);
    cudnnCreateFilterDescriptor(&f1);
    cudnnSetFilter4dDescriptor(f1, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 1, 1);
    cudnnCreateConvolutionDescriptor(&conv);
    cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnCreateConvolutionDescriptor(&conv16);
    cudnnSetConvolution2dDescriptor(conv16, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(conv16, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    h1[0] = (_Float16)0.5f;
    printf("CUDA hook cost per call, against the CPU fakes (ns; median of %d rounds of %d "
           "calls)\n\n",
           ROUNDS, CALLS);
    printf("| %-58s | %9s | %9s | %9s |\n", "call, setting", "direct", "hooked", "extra");
    printf("|%.60s|%.11s|%.11s|%.11s|\n",
           "------------------------------------------------------------", "-----------",
           "-----------", "-----------");
    set_enabled(0);
    measure("cublasSgemm 1x1x1, AMPSHIM_ENABLE off", sgemm);
    set_enabled(1);
    set("policy.cuda.mm", "passthrough");
    set("policy.cuda.addmm", "passthrough");
    measure("cublasSgemm 1x1x1, passthrough policy (mm, addmm)", sgemm);
    set("policy.cuda.mm", "default");
    set("policy.cuda.addmm", "default");
    set("opt.cuda_dtype", "fp16");
    measure("cublasSgemm 1x1x1, lowered (direct: GemmEx FAST_16F)", sgemm_lowered);
    /* The GPU timing (AMPSHIM_CUDA_TIMING): the row above has the default,
     * events on every 64th call; off, and events on every call. */
    set("opt.cuda_timing", "off");
    measure("cublasSgemm 1x1x1, lowered, GPU timing off", sgemm_lowered);
    set("opt.cuda_timing", "events");
    set_u64("opt.cuda_timing_sample", 1);
    measure("cublasSgemm 1x1x1, lowered, events on every call", sgemm_lowered);
    set_u64("opt.cuda_timing_sample", 64);
    measure("cudnnSoftmaxForward fp32 1x1x1x1 (fp32 op, unchanged)", softmax);
    measure("cudnnConvolutionForward 1x1x1x1, fp16 (direct: converting)", convolution_lowered);
    set("opt.cuda_dtype", "tf32");
    measure("cudnnConvolutionForward 1x1x1x1, tf32 (as made)", convolution);
    measure("cudnnSoftmaxForward half 1x1x1x1, in fp32 (3 transforms)", softmax_half);
    struct gb_graph g;
    gdesc cfg = NULL;
    set("opt.cuda_dtype", "fp16");
    set("opt.cuda_lower_min", "0");
    gplan = graph_plan(&g, &cfg);
    gpack = make_pack(0);
    gb_workspace(gplan); /* the program asks, as PyTorch does: the answer arms the private plan */
    if (!gplan) {
        fprintf(stderr, "cuda_hooks_bench: no graph plan\n");
        return 1;
    }
    measure("cudnnBackendExecute 1x1x1x1 plan, fp16 (private plan)", graph_execute);
    measure("... variant pack made for each call, fp16", graph_execute_pack_per_call);
    set("opt.cuda_dtype", "tf32");
    measure("cudnnBackendExecute 1x1x1x1 plan, tf32 (as made)", graph_execute);
    return 0;
}
