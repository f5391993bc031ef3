/* cuDNN's graph API on a real GPU, under the shim: a PyTorch-style fp32
 * forward convolution plan (NHWC, N 8, 64 -> 64 channels, 32x32, 3x3),
 * finalised, its workspace asked and allocated, executed. The shim must
 * have lowered it by engine substitution (counted lowered), and the result
 * must be the convolution of the fp16-rounded inputs: closer to the host's
 * fp16-rounded reference than to the fp32 one, with the probes where fp16
 * and fp32 part: a tiny input (1e-8, zero in fp16), a mantissa probe
 * (1 + 2^-12, one in fp16) and a range probe (1e5, Inf in fp16: its
 * outputs Inf). The same execute captured into a CUDA graph and launched
 * gives the same bits. Exits 77 without a GPU. */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/cudnn_graph/cudnn_graph_build.h"
#include "tests/shim_stats.h"


static const struct gshape s = {8, 64, 32, 32, 64, 3, 3, 1, 1, 1, 0, 0};

/* NHWC offsets. */
static long xo(long n, long c, long h, long w)
{
    return ((n * s.h + h) * s.w + w) * s.c + c;
}
static long wo(long k, long c, long r, long q)
{
    return ((k * s.r + r) * s.s + q) * s.c + c;
}

static void host_conv(const float *x, const float *w, float *y, int fp16)
{
    for (long n = 0; n < s.n; n++)
        for (long k = 0; k < s.k; k++)
            for (long i = 0; i < s.h; i++)
                for (long j = 0; j < s.w; j++) {
                    double acc = 0;
                    for (long r = 0; r < s.r; r++)
                        for (long q = 0; q < s.s; q++) {
                            long h = i - 1 + r, ww = j - 1 + q;
                            if (h < 0 || h >= s.h || ww < 0 || ww >= s.w)
                                continue;
                            for (long c = 0; c < s.c; c++) {
                                float a = x[xo(n, c, h, ww)], b = w[wo(k, c, r, q)];
                                if (fp16) {
                                    a = (float)(_Float16)a;
                                    b = (float)(_Float16)b;
                                }
                                acc += (double)a * b;
                            }
                        }
                    y[((n * s.h + i) * s.w + j) * s.k + k] = (float)acc;
                }
}

static double err(const float *a, const float *b, long n)
{
    double num = 0, den = 0;
    for (long i = 0; i < n; i++)
        if (isfinite(a[i]) && isfinite(b[i])) {
            num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
            den += (double)b[i] * b[i];
        }
    return sqrt(num / (den > 0 ? den : 1));
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("cudnn_graph_gpu: no CUDA device; skipped\n");
        return 77;
    }
    CHECK(shim_loaded(), "run under the shim");
    cudnnHandle_t h;
    cudaStream_t stream;
    CHECK(cudnnCreate(&h) == 0 && cudaStreamCreate(&stream) == 0 && cudnnSetStream(h, stream) == 0,
          "handle");
    long xn = s.n * s.c * s.h * s.w, wn = s.k * s.c * s.r * s.s, yn = s.n * s.k * s.h * s.w;
    float *hx = malloc(xn * 4), *hw = malloc(wn * 4), *got = malloc(yn * 4),
          *again = malloc(yn * 4), *ref16 = malloc(yn * 4), *ref32 = malloc(yn * 4);
    srand(7);
    for (long i = 0; i < xn; i++)
        hx[i] = (float)rand() / RAND_MAX * 2 - 1;
    for (long i = 0; i < wn; i++)
        hw[i] = ((float)rand() / RAND_MAX * 2 - 1) * 0.1f;
    hx[xo(0, 0, 5, 5)] = 1e-8f;              /* tiny: 0 in fp16 */
    hx[xo(0, 1, 5, 5)] = 1.0f + 1.0f / 4096; /* mantissa: 1 in fp16 */
    hx[xo(1, 2, 9, 9)] = 1e5f;               /* range: Inf in fp16 */
    host_conv(hx, hw, ref16, 1);
    host_conv(hx, hw, ref32, 0);
    float *dx, *dw, *dy;
    cudaMalloc((void **)&dx, xn * 4);
    cudaMalloc((void **)&dw, wn * 4);
    cudaMalloc((void **)&dy, yn * 4);
    cudaMemcpy(dx, hx, xn * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dw, hw, wn * 4, cudaMemcpyHostToDevice);
    struct gb_graph g;
    gdesc cfg = NULL, plan = NULL, pack = NULL;
    CHECK(gb_graph(&g, 0, &s, CUDNN_DATA_FLOAT, 0, h) && (plan = gb_plan(&g, h, NULL, &cfg)),
          "an fp32 plan");
    if (!plan)
        return 1;
    int64_t ws = gb_workspace(plan);
    printf("workspace answered: %lld bytes\n", (long long)ws);
    void *dws = NULL;
    cudaMalloc(&dws, ws > 0 ? (size_t)ws : 1);
    int64_t uids[3] = {GB_X, GB_W, GB_Y};
    void *ptrs[3] = {dx, dw, dy};
    CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack) == 0 &&
              cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                                       3, uids) == 0 &&
              cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                       CUDNN_TYPE_VOID_PTR, 3, ptrs) == 0 &&
              cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                       1, &dws) == 0 &&
              cudnnBackendFinalize(pack) == 0,
          "variant pack");
    uint64_t before = shim_stat("cudnn_graph_convolution_2d_forward", "lowered");
    CHECK(cudnnBackendExecute(h, plan, pack) == 0, "execute");
    cudaStreamSynchronize(stream);
    cudaMemcpy(got, dy, yn * 4, cudaMemcpyDeviceToHost);
    CHECK(shim_stat("cudnn_graph_convolution_2d_forward", "lowered") == before + 1,
          "counted lowered (the private down-converting plan ran)");
    double e16 = err(got, ref16, yn), e32 = err(got, ref32, yn), e_ref = err(ref16, ref32, yn);
    printf("relative error against the fp16-input reference %.3g, against fp32 %.3g (the two "
           "references differ by %.3g)\n",
           e16, e32, e_ref);
    CHECK(e16 < e_ref / 4, "closer to the fp16-input reference");
    long infs = 0, want_infs = 0;
    for (long i = 0; i < yn; i++) {
        infs += !isfinite(got[i]);
        want_infs += !isfinite(ref16[i]);
    }
    printf("non-finite outputs %ld (the fp16 reference has %ld)\n", infs, want_infs);
    CHECK(want_infs > 0 && infs == want_infs, "the range probe overflows as in fp16");
    /* the same execute under stream capture */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaMemset(dy, 0, yn * 4);
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == 0, "capture");
    int st = cudnnBackendExecute(h, plan, pack);
    CHECK(cudaStreamEndCapture(stream, &graph) == 0 && st == 0, "execute under capture");
    CHECK(cudaGraphInstantiate(&exec, graph, 0) == 0 && cudaGraphLaunch(exec, stream) == 0,
          "the captured graph runs");
    cudaStreamSynchronize(stream);
    cudaMemcpy(again, dy, yn * 4, cudaMemcpyDeviceToHost);
    CHECK(memcmp(got, again, yn * 4) == 0, "captured: the same bits");
    cudnnBackendDestroyDescriptor(pack);
    cudnnBackendDestroyDescriptor(plan);
    cudnnBackendDestroyDescriptor(cfg);
    gb_graph_destroy(&g);
    printf("%d checks, %d failed\n", checks, (int)failures);
    return failures != 0;
}
