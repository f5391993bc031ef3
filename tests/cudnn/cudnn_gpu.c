/* The cuDNN hooks against the real cuDNN on a real GPU, run under the shim.
 * An fp32 cudnnConvolutionForward must give: under fp16, exactly what cuDNN
 * gives when asked directly (through a dlopen handle the shim cannot
 * intercept) with CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION; under tf32,
 * exactly the plain call; under bf16, a result within bf16 error of fp32,
 * counted as lowered (so cuDNN took the bf16 path, not the fallback); under
 * fp16 and bf16 a result bit-identical to fp32's fails (a conversion cuDNN
 * ignored). A
 * half-precision softmax must equal the fp32 softmax of the same input
 * rounded once. The dtype is switched in-process with ampshim_ctl. Exits 77
 * without a GPU. */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);
static ctl_fn ctl;
static void *lib;
#define DIRECT(name) ((__typeof__(&name))dlsym(lib, #name))

static uint64_t lowered(void)
{
    uint64_t v = 0;
    size_t len = sizeof v;
    return ctl("stats.cudnnConvolutionForward.lowered", &v, &len, NULL, 0) == 0 ? v : 0;
}

static double rel_err(const float *a, const float *b, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / den);
}

enum { N = 8, C = 64, H = 32, W = 32, K = 64, R = 3 };

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("cudnn_gpu: no CUDA device; skipped\n");
        return 77;
    }
    ctl = (ctl_fn)dlsym(RTLD_DEFAULT, "ampshim_ctl");
    lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    CHECK(ctl && lib, "run under the shim, with libcudnn.so.9 loaded");
    if (!ctl || !lib)
        return 1;
    size_t xn = (size_t)N * C * H * W, wn = (size_t)K * C * R * R, yn = (size_t)N * K * H * W;
    float *hx = malloc(xn * 4), *hw = malloc(wn * 4), *got = malloc(yn * 4), *want = malloc(yn * 4),
          *plain = malloc(yn * 4);
    for (size_t i = 0; i < xn; i++)
        hx[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
    for (size_t i = 0; i < wn; i++)
        hw[i] = (float)((i * 6271) % 991) / 991.0f - 0.5f;
    float *x, *w, *y;
    void *ws;
    size_t ws_bytes = (size_t)256 << 20;
    cudaMalloc((void **)&x, xn * 4);
    cudaMalloc((void **)&w, wn * 4);
    cudaMalloc((void **)&y, yn * 4);
    cudaMalloc(&ws, ws_bytes);
    cudaMemcpy(x, hx, xn * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(w, hw, wn * 4, cudaMemcpyHostToDevice);
    cudnnHandle_t h;
    cudnnCreate(&h);
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t conv, conv16;
    cudnnCreateTensorDescriptor(&xd);
    cudnnCreateTensorDescriptor(&yd);
    cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&conv);
    cudnnCreateConvolutionDescriptor(&conv16);
    cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W);
    cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W);
    cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, R);
    cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetConvolution2dDescriptor(conv16, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(conv16, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    float one = 1.0f, zero = 0.0f;

    /* plain fp32, exact (FMA math), the reference for bf16 */
    cudnnConvolutionDescriptor_t fma;
    cudnnCreateConvolutionDescriptor(&fma);
    cudnnSetConvolution2dDescriptor(fma, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(fma, CUDNN_FMA_MATH);
    CHECK(DIRECT(cudnnConvolutionForward)(h, &one, xd, x, wd, w, fma, algo, ws, ws_bytes, &zero, yd,
                                          y) == CUDNN_STATUS_SUCCESS,
          "direct fp32 convolution");
    cudaMemcpy(plain, y, yn * 4, cudaMemcpyDeviceToHost);

    static const char *const dtypes[] = {"fp16", "tf32", "bf16"};
    for (int m = 0; m < 3; m++) {
        ctl("opt.cuda_dtype", NULL, NULL, dtypes[m], strlen(dtypes[m]));
        uint64_t before = lowered();
        cudnnStatus_t st =
            cudnnConvolutionForward(h, &one, xd, x, wd, w, conv, algo, ws, ws_bytes, &zero, yd, y);
        cudaMemcpy(got, y, yn * 4, cudaMemcpyDeviceToHost);
        CHECK(st == CUDNN_STATUS_SUCCESS, "%s: status %d", dtypes[m], st);
        CHECK(lowered() == before + 1, "%s: counted as lowered", dtypes[m]);
        if (m < 2) {
            DIRECT(cudnnConvolutionForward)
            (h, &one, xd, x, wd, w, m == 0 ? conv16 : conv, algo, ws, ws_bytes, &zero, yd, y);
            cudaMemcpy(want, y, yn * 4, cudaMemcpyDeviceToHost);
            CHECK(memcmp(got, want, yn * 4) == 0, "%s: the library's own answer", dtypes[m]);
        }
        /* A conversion cuDNN ignored leaves fp32's result (which the
         * library's own answer above would equal too): not lowered. */
        if (m != 1)
            CHECK(memcmp(got, plain, yn * 4) != 0,
                  "%s: not fp32's result, bit for bit (the conversion happened)", dtypes[m]);
        double err = rel_err(got, plain, yn);
        printf("cudnn_gpu: %s convolution, relative error against fp32 %.3e\n", dtypes[m], err);
        CHECK(err < (m == 2 ? 2e-2 : 5e-3), "%s: error %.3e within the dtype's", dtypes[m], err);
    }

    /* half softmax computed in fp32 */
    enum { SN = 64, SC = 1000 };
    cudnnTensorDescriptor_t sh, sf;
    cudnnCreateTensorDescriptor(&sh);
    cudnnCreateTensorDescriptor(&sf);
    cudnnSetTensor4dDescriptor(sh, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, SN, SC, 1, 1);
    cudnnSetTensor4dDescriptor(sf, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, SN, SC, 1, 1);
    void *xh, *yh, *xf, *yf;
    cudaMalloc(&xh, SN * SC * 2);
    cudaMalloc(&yh, SN * SC * 2);
    cudaMalloc(&xf, SN * SC * 4);
    cudaMalloc(&yf, SN * SC * 4);
    cudaMemcpy(xf, hx, SN * SC * 4, cudaMemcpyHostToDevice);
    DIRECT(cudnnTransformTensor)(h, &one, sf, xf, &zero, sh, xh);
    cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, sh, xh, &zero,
                        sh, yh);
    uint16_t *g16 = malloc(SN * SC * 2), *w16 = malloc(SN * SC * 2);
    cudaMemcpy(g16, yh, SN * SC * 2, cudaMemcpyDeviceToHost);
    DIRECT(cudnnTransformTensor)(h, &one, sh, xh, &zero, sf, xf);
    DIRECT(cudnnSoftmaxForward)
    (h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, sf, xf, &zero, sf, yf);
    DIRECT(cudnnTransformTensor)(h, &one, sf, yf, &zero, sh, yh);
    cudaMemcpy(w16, yh, SN * SC * 2, cudaMemcpyDeviceToHost);
    CHECK(memcmp(g16, w16, SN * SC * 2) == 0, "half softmax equals the fp32 softmax rounded once");

    cudaDeviceSynchronize();
    cudnnDestroy(h);
    printf("cudnn_gpu: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
