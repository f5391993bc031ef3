/* cudnnConvolutionForward on a real GPU (N=32, C=K=256, 56x56, 3x3, pad 1;
 * the implicit-precomputed-GEMM algorithm throughout), side by side in one
 * run: true fp32 (CUDNN_FMA_MATH) and cuDNN's default math (TF32 on Ampere
 * and later), both called directly through a dlopen handle; under ampshim
 * in fp16 (math type ALLOW_CONVERSION) and bf16 (conversion into scratch),
 * switched with ampshim_ctl; and native fp16 data (what a program written
 * for fp16 gets). TFLOP/s from CUDA events, median of 9, on random data (a
 * GPU clocks higher on zeros), each ampshim row next to the shim's own
 * counters for the calls it timed (lowered / passthrough), so a silent
 * fallback cannot pass for a lowered figure. Run under
 * LD_PRELOAD=libampshim.so; exits 77 without a GPU. */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_random.h"

static int cmp(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

enum { N = 32, C = 256, K = 256, H = 56, W = 56, R = 3 };

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("conv_gpu: no CUDA device; skipped\n");
        return 77;
    }
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    __typeof__(&cudnnConvolutionForward) direct = (__typeof__(&cudnnConvolutionForward))dlsym(
        dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD), "cudnnConvolutionForward");
    if (!ctl || !direct) {
        fprintf(stderr, "conv_gpu: run under LD_PRELOAD=libampshim.so\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    cudnnHandle_t h;
    cudnnCreate(&h);
    cudnnTensorDescriptor_t xd, yd, xh, yh;
    cudnnFilterDescriptor_t wd, wh;
    cudnnConvolutionDescriptor_t fma, dflt;
    cudnnCreateTensorDescriptor(&xd), cudnnCreateTensorDescriptor(&yd);
    cudnnCreateTensorDescriptor(&xh), cudnnCreateTensorDescriptor(&yh);
    cudnnCreateFilterDescriptor(&wd), cudnnCreateFilterDescriptor(&wh);
    cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W);
    cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W);
    cudnnSetTensor4dDescriptor(xh, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, N, C, H, W);
    cudnnSetTensor4dDescriptor(yh, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, N, K, H, W);
    cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, R);
    cudnnSetFilter4dDescriptor(wh, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, K, C, R, R);
    cudnnCreateConvolutionDescriptor(&fma), cudnnCreateConvolutionDescriptor(&dflt);
    cudnnSetConvolution2dDescriptor(fma, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetConvolution2dDescriptor(dflt, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(fma, CUDNN_FMA_MATH);
    size_t xn = (size_t)N * C * H * W, wn = (size_t)K * C * R * R, yn = (size_t)N * K * H * W;
    void *x, *w, *y, *x16, *w16, *y16, *ws;
    size_t ws_bytes = (size_t)512 << 20;
    cudaMalloc(&x, xn * 4), cudaMalloc(&w, wn * 4), cudaMalloc(&y, yn * 4);
    cudaMalloc(&x16, xn * 2), cudaMalloc(&w16, wn * 2), cudaMalloc(&y16, yn * 2);
    cudaMalloc(&ws, ws_bytes);
    device_random(x, x16, xn, 1);
    device_random(w, w16, wn, 2);
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    static const char *const labels[] = {"fp32 (FMA)", "default (TF32)", "ampshim fp16",
                                         "ampshim bf16", "fp16 data"};
    float one = 1.0f, zero = 0.0f, tflops[5];
    unsigned long long ran[5][2] = {{0}};
    double flops = 2.0 * N * K * H * W * (double)C * R * R;
    for (int mode = 0; mode < 5; mode++) {
        if (mode == 2 || mode == 3)
            ctl("opt.cuda_dtype", NULL, NULL, mode == 2 ? "fp16" : "bf16", 4);
        uint64_t low0 = 0, pass0 = 0;
        size_t len = sizeof low0;
        ctl("stats.cudnnConvolutionForward.lowered", &low0, &len, NULL, 0);
        ctl("stats.cudnnConvolutionForward.passthrough", &pass0, &len, NULL, 0);
        float ms[9];
        cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
        for (int r = -2; r < 9; r++) {
            cudaEventRecord(e0, 0);
            if (mode < 2)
                st = direct(h, &one, xd, x, wd, w, mode == 0 ? fma : dflt, algo, ws, ws_bytes,
                            &zero, yd, y);
            else if (mode < 4)
                st = cudnnConvolutionForward(h, &one, xd, x, wd, w, dflt, algo, ws, ws_bytes, &zero,
                                             yd, y);
            else
                st = direct(h, &one, xh, x16, wh, w16, dflt, algo, ws, ws_bytes, &zero, yh, y16);
            cudaEventRecord(e1, 0);
            cudaEventSynchronize(e1);
            if (r >= 0)
                cudaEventElapsedTime(&ms[r], e0, e1);
        }
        uint64_t low1 = 0, pass1 = 0;
        ctl("stats.cudnnConvolutionForward.lowered", &low1, &len, NULL, 0);
        ctl("stats.cudnnConvolutionForward.passthrough", &pass1, &len, NULL, 0);
        ran[mode][0] = (unsigned long long)(low1 - low0);
        ran[mode][1] = (unsigned long long)(pass1 - pass0);
        qsort(ms, 9, sizeof *ms, cmp);
        tflops[mode] = st == CUDNN_STATUS_SUCCESS ? (float)(flops / (ms[4] * 1e-3) / 1e12) : 0.0f;
    }
    printf("%s: cudnnConvolutionForward %dx%dx%dx%d, %dx%d filters x %d, TFLOP/s (median of 9)\n",
           prop.name, N, C, H, W, R, R, K);
    for (int mode = 0; mode < 5; mode++)
        printf("%-16s %8.1f   (ampshim counted %llu lowered, %llu passthrough of the 11 calls)\n",
               labels[mode], tflops[mode], ran[mode][0], ran[mode][1]);
    printf("ampshim fp16 / fp16 data: %.0f%%\n", 100.0 * tflops[2] / tflops[4]);
    return 0;
}
