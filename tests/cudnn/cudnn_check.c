/* An ordinary cuDNN program (compiled against the real cudnn.h, linked to
 * libcudnn.so.9 and libcudart.so.13: here the test-only fakes) run under the
 * shim. It checks what reached the library (math type, data types, compute
 * type, workspace) and that each result equals the library's own answer for
 * that configuration, asked directly through a dlopen handle the shim cannot
 * intercept; that descriptors come back as the program set them; and that
 * every scratch allocation is given back.
 * usage: cudnn_check CONV LIST
 *   CONV: fp16, bf16 or tf32 (how fp32 convolutions must reach cuDNN), or
 *         none (unchanged);
 *   LIST: fp32 (half softmax / reduction / normalisation computed in fp32)
 *         or asis (unchanged). */
#include <cudnn.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fakes/fake_cudnn.h"
#include "tests/shim_stats.h"
#include "tests/check.h"

long fake_cudnn_conv_writes(cudnnConvolutionDescriptor_t d);
long fake_cudnn_reduce_writes(cudnnReduceTensorDescriptor_t d);
void fake_cudnn_last_conv(int *groups, int *reorder);

long fake_cudart_outstanding(void);
long fake_cudart_allocations(void);

static const struct fake_cudnn_record *last(void)
{
    return fake_cudnn_last_call();
}

static void *lib;
#define REAL(name) ((__typeof__(&name))dlsym(lib, #name))


static cudnnTensorDescriptor_t tensor(cudnnDataType_t type, int n, int c, int h, int w)
{
    cudnnTensorDescriptor_t d;
    cudnnCreateTensorDescriptor(&d);
    cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, type, n, c, h, w);
    return d;
}

static void fill(float *p, int n, int seed)
{
    for (int i = 0; i < n; i++)
        p[i] = (float)(((i + seed) * 7919) % 1013) / 317.0f - 1.6f;
}

static void fill_half(_Float16 *p, int n, int seed)
{
    for (int i = 0; i < n; i++)
        p[i] = (_Float16)((float)(((i + seed) * 6271) % 991) / 97.0f - 4.1f);
}

/* x [2,3,7,6], w [4,3,3,2], pad 1, stride 1: y [2,4,7,7]. */
enum { XN = 2 * 3 * 7 * 6, WN = 4 * 3 * 3 * 2, YN = 2 * 4 * 7 * 7 };
static float x[XN], w[WN], y[YN];
static cudnnTensorDescriptor_t xd, yd;
static cudnnFilterDescriptor_t wd;
static cudnnConvolutionDescriptor_t conv;

typedef cudnnStatus_t (*conv_fn)(cudnnHandle_t, const void *, const void *, const void *,
                                 const void *, const void *, const void *, int, void *, size_t,
                                 const void *, const void *, void *);

/* The three convolution calls with the same shape: in1, in2 -> out. */
struct conv_case {
    const char *name;
    const void *d1, *p1, *d2, *p2, *dout;
    void *out;
    int n_out;
};

/* The library's answer, asked directly, for the configuration the shim
 * should have produced. bf16 is done the way the shim must: convert, run on
 * bf16 descriptors, blend back. */
static void reference(cudnnHandle_t h, const struct conv_case *c, const char *mode, float *out)
{
    float alpha = 1.5f, beta = 0.5f, one = 1.0f, zero = 0.0f;
    conv_fn fn = (conv_fn)dlsym(lib, c->name);
    static char ws[256];
    cudnnConvolutionDescriptor_t cd;
    cudnnCreateConvolutionDescriptor(&cd);
    cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetConvolutionMathType(
        cd, strcmp(mode, "fp16") == 0 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : CUDNN_DEFAULT_MATH);
    fill(out, c->n_out, 99);
    if (strcmp(mode, "bf16") != 0) {
        fn(h, &alpha, c->d1, c->p1, c->d2, c->p2, cd, 0, ws, sizeof ws, &beta, c->dout, out);
    } else {
        /* bf16 copies of the operands in their own layouts; a filter is
         * converted through a tensor alias of its memory */
        cudnnTensorDescriptor_t xb = tensor(CUDNN_DATA_BFLOAT16, 2, 3, 7, 6),
                                yb = tensor(CUDNN_DATA_BFLOAT16, 2, 4, 7, 7),
                                wt = tensor(CUDNN_DATA_FLOAT, 4, 3, 3, 2),
                                wtb = tensor(CUDNN_DATA_BFLOAT16, 4, 3, 3, 2);
        cudnnFilterDescriptor_t wb;
        cudnnCreateFilterDescriptor(&wb);
        cudnnSetFilter4dDescriptor(wb, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NCHW, 4, 3, 3, 2);
        const void *descs[3] = {c->d1, c->d2, c->dout}, *ptrs[2] = {c->p1, c->p2};
        const void *call[3];
        cudnnTensorDescriptor_t from[3], to[3];
        void *mem[3];
        for (int i = 0; i < 3; i++) {
            int filter = descs[i] == (const void *)wd;
            call[i] = filter ? (const void *)wb : descs[i] == (const void *)xd ? xb : yb;
            from[i] = filter ? wt : (cudnnTensorDescriptor_t)descs[i];
            to[i] = filter ? wtb : (cudnnTensorDescriptor_t)call[i];
            mem[i] = calloc(YN, 2);
            if (i < 2)
                REAL(cudnnTransformTensor)(h, &one, from[i], ptrs[i], &zero, to[i], mem[i]);
        }
        fn(h, &one, call[0], mem[0], call[1], mem[1], cd, 0, ws, sizeof ws, &zero, call[2], mem[2]);
        REAL(cudnnTransformTensor)(h, &alpha, to[2], mem[2], &beta, from[2], out);
        for (int i = 0; i < 3; i++)
            free(mem[i]);
        cudnnDestroyFilterDescriptor(wb);
        cudnnDestroyTensorDescriptor(xb);
        cudnnDestroyTensorDescriptor(yb);
        cudnnDestroyTensorDescriptor(wt);
        cudnnDestroyTensorDescriptor(wtb);
    }
    cudnnDestroyConvolutionDescriptor(cd);
}

static void check_conv(cudnnHandle_t h, const char *mode)
{
    float dx[XN], dw[WN], dy[YN];
    fill(dy, YN, 5);
    struct conv_case cases[3] = {
        {"cudnnConvolutionForward", xd, x, wd, w, yd, y, YN},
        {"cudnnConvolutionBackwardData", wd, w, yd, dy, xd, dx, XN},
        {"cudnnConvolutionBackwardFilter", xd, x, yd, dy, wd, dw, WN},
    };
    float alpha = 1.5f, beta = 0.5f;
    int expect_math =
        strcmp(mode, "fp16") == 0 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : CUDNN_DEFAULT_MATH;
    int expect_type = strcmp(mode, "bf16") == 0 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    cudnnSetConvolutionReorderType(conv, CUDNN_NO_REORDER);
    long writes = fake_cudnn_conv_writes(conv);
    for (int k = 0; k < 3; k++) {
        const struct conv_case *c = &cases[k];
        float *want = malloc(sizeof(float) * (size_t)c->n_out);
        conv_fn fn = (conv_fn)dlsym(RTLD_DEFAULT, c->name); /* the shim's, if preloaded */
        fill(c->out, c->n_out, 99);
        cudnnStatus_t st =
            fn(h, &alpha, c->d1, c->p1, c->d2, c->p2, conv, 0, NULL, 0, &beta, c->dout, c->out);
        CHECK(st == CUDNN_STATUS_SUCCESS, "%s: status %d", c->name, st);
        CHECK(strcmp(last()->function, c->name) == 0 && last()->math == expect_math &&
                  last()->type[0] == expect_type && last()->type[1] == expect_type &&
                  last()->type[2] == expect_type,
              "%s (%s) reached %s with math %d, types %d/%d/%d", c->name, mode, last()->function,
              last()->math, last()->type[0], last()->type[1], last()->type[2]);
        int groups, reorder;
        fake_cudnn_last_conv(&groups, &reorder);
        CHECK(groups == 1 && reorder == CUDNN_NO_REORDER,
              "%s: the program's group count and reorder type reached cuDNN (%d, %d)", c->name,
              groups, reorder);
        reference(h, c, mode, want);
        CHECK(memcmp(c->out, want, sizeof(float) * (size_t)c->n_out) == 0,
              "%s: the result is the library's %s answer", c->name, mode);
        cudnnMathType_t m = 99;
        cudnnGetConvolutionMathType(conv, &m);
        CHECK(m == CUDNN_DEFAULT_MATH, "%s: the math type is the program's (%d)", c->name, m);
        CHECK(fake_cudnn_conv_writes(conv) == writes,
              "%s: the program's descriptor was never written (%ld writes)", c->name,
              fake_cudnn_conv_writes(conv) - writes);
        free(want);
    }

    /* A bad call (the output's shape is wrong) gets the library's own
     * error, as without ampshim, and leaves the descriptor as it was. */
    cudnnTensorDescriptor_t bad = tensor(CUDNN_DATA_FLOAT, 2, 4, 5, 5);
    cudnnStatus_t mine =
        cudnnConvolutionForward(h, &alpha, xd, x, wd, w, conv, 0, NULL, 0, &beta, bad, y);
    cudnnStatus_t theirs =
        REAL(cudnnConvolutionForward)(h, &alpha, xd, x, wd, w, conv, 0, NULL, 0, &beta, bad, y);
    cudnnMathType_t after = 99;
    cudnnGetConvolutionMathType(conv, &after);
    CHECK(mine == theirs && mine == CUDNN_STATUS_BAD_PARAM && after == CUDNN_DEFAULT_MATH,
          "a bad convolution: status %d (library alone: %d), math %d", mine, theirs, after);
    cudnnDestroyTensorDescriptor(bad);

    /* What the program set itself stays. */
    static const cudnnMathType_t own[] = {CUDNN_FMA_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION};
    static char ws[256];
    for (int i = 0; i < 2; i++) {
        cudnnSetConvolutionMathType(conv, own[i]);
        cudnnConvolutionForward(h, &alpha, xd, x, wd, w, conv, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, ws,
                                sizeof ws, &beta, yd, y);
        CHECK(last()->math == (int)own[i] && last()->type[0] == CUDNN_DATA_FLOAT,
              "a program's own math type %d reached cuDNN as %d, type %d", own[i], last()->math,
              last()->type[0]);
    }
    cudnnSetConvolutionMathType(conv, CUDNN_DEFAULT_MATH);

    /* Half data, as the program declared it, stays. */
    cudnnTensorDescriptor_t xh = tensor(CUDNN_DATA_HALF, 2, 3, 7, 6),
                            yh = tensor(CUDNN_DATA_HALF, 2, 4, 7, 7);
    cudnnFilterDescriptor_t wh;
    cudnnCreateFilterDescriptor(&wh);
    cudnnSetFilter4dDescriptor(wh, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 4, 3, 3, 2);
    static _Float16 xs[XN], wss[WN], ys[YN];
    fill_half(xs, XN, 1);
    fill_half(wss, WN, 2);
    cudnnConvolutionForward(h, &alpha, xh, xs, wh, wss, conv, 0, NULL, 0, &beta, yh, ys);
    CHECK(last()->type[0] == CUDNN_DATA_HALF && last()->math == CUDNN_DEFAULT_MATH,
          "half convolution reached cuDNN unchanged (type %d, math %d)", last()->type[0],
          last()->math);

    /* The fused form: fp16 through the math type; bf16 and tf32 as made. */
    cudnnActivationDescriptor_t act;
    cudnnCreateActivationDescriptor(&act);
    cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);
    cudnnTensorDescriptor_t bias_d = tensor(CUDNN_DATA_FLOAT, 1, 4, 1, 1);
    float bias[4] = {0.5f, -0.25f, 0.125f, 1.0f}, z[YN], zero = 0.0f;
    fill(z, YN, 3);
    cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
        h, &alpha, xd, x, wd, w, conv, 0, NULL, 0, &zero, yd, z, bias_d, bias, act, yd, y);
    CHECK(st == CUDNN_STATUS_SUCCESS &&
              last()->math == (strcmp(mode, "fp16") == 0 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                                                         : CUDNN_DEFAULT_MATH) &&
              last()->type[0] == CUDNN_DATA_FLOAT,
          "BiasActivationForward (%s): status %d, math %d, type %d", mode, st, last()->math,
          last()->type[0]);
    cudnnDestroyActivationDescriptor(act);
    cudnnDestroyTensorDescriptor(bias_d);
    cudnnDestroyTensorDescriptor(xh);
    cudnnDestroyTensorDescriptor(yh);
    cudnnDestroyFilterDescriptor(wh);
}

/* Softmax, forward and backward, on half tensors: computed in fp32 (the
 * library sees fp32 descriptors; the result is the fp32 computation's,
 * blended into the half output) or as made. */
static void check_softmax(cudnnHandle_t h, int fp32)
{
    enum { SN = 2 * 6 * 3 * 1 };
    cudnnTensorDescriptor_t dh = tensor(CUDNN_DATA_HALF, 2, 6, 3, 1),
                            df = tensor(CUDNN_DATA_FLOAT, 2, 6, 3, 1);
    static _Float16 xs[SN], got[SN], want[SN], asis[SN], dys[SN];
    static float xf[SN], yf[SN], dyf[SN];
    float alpha = 1.0f, beta = 0.0f, one = 1.0f, zero = 0.0f;
    fill_half(xs, SN, 7);
    fill_half(dys, SN, 8);
    cudnnStatus_t st = cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                           &alpha, dh, xs, &beta, dh, got);
    CHECK(st == CUDNN_STATUS_SUCCESS && strcmp(last()->function, "cudnnSoftmaxForward") == 0 &&
              last()->type[0] == (fp32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF),
          "half softmax reached cuDNN with type %d (status %d)", last()->type[0], st);
    /* the two answers: fp32 computation rounded once, and half arithmetic */
    REAL(cudnnTransformTensor)(h, &one, dh, xs, &zero, df, xf);
    REAL(cudnnSoftmaxForward)
    (h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, df, xf, &zero, df, yf);
    REAL(cudnnTransformTensor)(h, &alpha, df, yf, &beta, dh, want);
    REAL(cudnnSoftmaxForward)
    (h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &alpha, dh, xs, &beta, dh, asis);
    CHECK(memcmp(want, asis, sizeof want) != 0, "fp32 and half softmax differ on this input");
    CHECK(memcmp(got, fp32 ? want : asis, sizeof got) == 0, "half softmax result is the %s one",
          fp32 ? "fp32" : "half");

    /* backward: dx from y (the fp32 answer) and dy */
    static _Float16 dx[SN], dxw[SN], dxa[SN];
    st = cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &alpha, dh,
                              want, dh, dys, &beta, dh, dx);
    CHECK(st == CUDNN_STATUS_SUCCESS &&
              last()->type[0] == (fp32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF),
          "half softmax backward reached cuDNN with type %d", last()->type[0]);
    REAL(cudnnTransformTensor)(h, &one, dh, dys, &zero, df, dyf);
    REAL(cudnnTransformTensor)(h, &one, dh, want, &zero, df, xf);
    REAL(cudnnSoftmaxBackward)
    (h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, df, xf, df, dyf, &zero, df, yf);
    REAL(cudnnTransformTensor)(h, &alpha, df, yf, &beta, dh, dxw);
    REAL(cudnnSoftmaxBackward)
    (h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &alpha, dh, want, dh, dys, &beta, dh,
     dxa);
    CHECK(memcmp(dx, fp32 ? dxw : dxa, sizeof dx) == 0, "half softmax backward is the %s one",
          fp32 ? "fp32" : "half");

    /* a bad call (x and y of different shapes): the library's own error,
     * the output untouched */
    cudnnTensorDescriptor_t other = tensor(CUDNN_DATA_HALF, 2, 6, 1, 3);
    memcpy(asis, got, sizeof got);
    cudnnStatus_t bad = cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                            &alpha, dh, xs, &beta, other, got);
    CHECK(bad == REAL(cudnnSoftmaxForward)(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                           &alpha, dh, xs, &beta, other, got) &&
              bad != CUDNN_STATUS_SUCCESS && memcmp(asis, got, sizeof got) == 0,
          "a bad half softmax: the library's own error (%d), output untouched", bad);
    cudnnDestroyTensorDescriptor(other);

    /* fp32 tensors: unchanged, whatever the mode */
    cudnnSoftmaxForward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, &one, df, xf, &zero, df,
                        yf);
    CHECK(last()->type[0] == CUDNN_DATA_FLOAT, "fp32 softmax reached cuDNN as fp32");
    cudnnDestroyTensorDescriptor(dh);
    cudnnDestroyTensorDescriptor(df);
}

/* A sum of half data with a half compute type: the library is asked for an
 * fp32 compute type (and gets the workspace it wants); the descriptor comes
 * back as the program set it. */
static void check_reduce(cudnnHandle_t h, int fp32)
{
    enum { AN = 1 * 4 * 16 * 16 };
    cudnnTensorDescriptor_t ad = tensor(CUDNN_DATA_HALF, 1, 4, 16, 16),
                            cd = tensor(CUDNN_DATA_HALF, 1, 4, 1, 1);
    cudnnReduceTensorDescriptor_t rd, rf;
    cudnnCreateReduceTensorDescriptor(&rd);
    cudnnCreateReduceTensorDescriptor(&rf);
    cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_HALF,
                                   CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                   CUDNN_32BIT_INDICES);
    cudnnSetReduceTensorDescriptor(rf, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                   CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                   CUDNN_32BIT_INDICES);
    static _Float16 a[AN], c[4], want[4], asis[4];
    static char ws[64];
    float one = 1.0f, zero = 0.0f;
    fill_half(a, AN, 11);
    cudnnStatus_t st = cudnnReduceTensor(h, rd, NULL, 0, NULL, 0, &one, ad, a, &zero, cd, c);
    CHECK(st == CUDNN_STATUS_SUCCESS &&
              last()->compute == (fp32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF) &&
              last()->workspace == (fp32 ? 64u : 0u),
          "half sum reached cuDNN with compute type %d, workspace %zu (status %d)", last()->compute,
          last()->workspace, st);
    REAL(cudnnReduceTensor)(h, rf, NULL, 0, ws, sizeof ws, &one, ad, a, &zero, cd, want);
    REAL(cudnnReduceTensor)(h, rd, NULL, 0, NULL, 0, &one, ad, a, &zero, cd, asis);
    CHECK(memcmp(want, asis, sizeof want) != 0, "fp32 and half sums differ on this input");
    CHECK(memcmp(c, fp32 ? want : asis, sizeof c) == 0, "half sum is the %s one",
          fp32 ? "fp32" : "half");
    cudnnReduceTensorOp_t op;
    cudnnDataType_t comp = 99;
    cudnnNanPropagation_t nan;
    cudnnReduceTensorIndices_t ind;
    cudnnIndicesType_t it;
    cudnnGetReduceTensorDescriptor(rd, &op, &comp, &nan, &ind, &it);
    CHECK(comp == CUDNN_DATA_HALF, "the reduce descriptor is the program's (%d)", comp);
    CHECK(fake_cudnn_reduce_writes(rd) == 1,
          "the program's reduce descriptor was written once, "
          "by the program (%ld)",
          fake_cudnn_reduce_writes(rd));
    cudnnDestroyReduceTensorDescriptor(rd);
    cudnnDestroyReduceTensorDescriptor(rf);
    cudnnDestroyTensorDescriptor(ad);
    cudnnDestroyTensorDescriptor(cd);
}

/* Inference normalisation of a half tensor (fp32 scale, bias, mean, var). */
static void check_norm(cudnnHandle_t h, int fp32)
{
    enum { NN = 2 * 3 * 4 * 5, PN = 3 * 4 * 5 };
    cudnnTensorDescriptor_t xh = tensor(CUDNN_DATA_HALF, 2, 3, 4, 5),
                            xf = tensor(CUDNN_DATA_FLOAT, 2, 3, 4, 5),
                            pd = tensor(CUDNN_DATA_FLOAT, 1, 3, 4, 5);
    static _Float16 x16[NN], got[NN], want[NN], asis[NN];
    static float x32[NN], y32[NN], scale[PN], bias[PN], mean[PN], var[PN];
    float alpha = 1.0f, beta = 0.0f, one = 1.0f, zero = 0.0f;
    fill_half(x16, NN, 13);
    fill(scale, PN, 1);
    fill(bias, PN, 2);
    fill(mean, PN, 3);
    for (int i = 0; i < PN; i++)
        var[i] = 0.5f + (float)i / 9.0f;
    cudnnStatus_t st = cudnnNormalizationForwardInference(
        h, CUDNN_NORM_PER_ACTIVATION, CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_STANDARD, &alpha, &beta,
        xh, x16, pd, scale, bias, pd, mean, var, NULL, NULL, NULL, xh, got, 1e-5, 1);
    CHECK(st == CUDNN_STATUS_SUCCESS &&
              last()->type[0] == (fp32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF),
          "half normalisation reached cuDNN with type %d (status %d)", last()->type[0], st);
    REAL(cudnnTransformTensor)(h, &one, xh, x16, &zero, xf, x32);
    REAL(cudnnNormalizationForwardInference)
    (h, CUDNN_NORM_PER_ACTIVATION, CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_STANDARD, &one, &zero, xf,
     x32, pd, scale, bias, pd, mean, var, NULL, NULL, NULL, xf, y32, 1e-5, 1);
    REAL(cudnnTransformTensor)(h, &alpha, xf, y32, &beta, xh, want);
    REAL(cudnnNormalizationForwardInference)
    (h, CUDNN_NORM_PER_ACTIVATION, CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_STANDARD, &alpha, &beta, xh,
     x16, pd, scale, bias, pd, mean, var, NULL, NULL, NULL, xh, asis, 1e-5, 1);
    CHECK(memcmp(want, asis, sizeof want) != 0, "fp32 and half normalisation differ here");
    CHECK(memcmp(got, fp32 ? want : asis, sizeof got) == 0, "half normalisation is the %s one",
          fp32 ? "fp32" : "half");
    cudnnDestroyTensorDescriptor(xh);
    cudnnDestroyTensorDescriptor(xf);
    cudnnDestroyTensorDescriptor(pd);
}

/* Training normalisation of a half tensor: y from fp32 arithmetic, the
 * running and saved statistics the fp32 call's. */
static void check_norm_training(cudnnHandle_t h, int fp32)
{
    enum { NN = 4 * 3 * 2 * 2, PN = 3 };
    cudnnTensorDescriptor_t xh = tensor(CUDNN_DATA_HALF, 4, 3, 2, 2),
                            xf = tensor(CUDNN_DATA_FLOAT, 4, 3, 2, 2),
                            pd = tensor(CUDNN_DATA_FLOAT, 1, 3, 1, 1);
    static _Float16 x16[NN], got[NN], want[NN], asis[NN];
    static float x32[NN], y32[NN], scale[PN] = {1.5f, 0.5f, -1.0f}, bias[PN] = {0.1f, 0.2f, 0.3f};
    float rm[3][PN] = {{0}}, rv[3][PN] = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, sm[3][PN], si[3][PN];
    float one = 1.0f, zero = 0.0f;
    static char ws[32];
    fill_half(x16, NN, 17);
    cudnnStatus_t st = cudnnNormalizationForwardTraining(
        h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_STANDARD, &one, &zero, xh,
        x16, pd, scale, bias, 0.1, pd, rm[0], rv[0], 1e-5, sm[0], si[0], NULL, NULL, NULL, xh, got,
        NULL, 0, NULL, 0, 1);
    CHECK(st == CUDNN_STATUS_SUCCESS &&
              last()->type[0] == (fp32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF),
          "half training normalisation reached cuDNN with type %d (status %d)", last()->type[0],
          st);
    REAL(cudnnTransformTensor)(h, &one, xh, x16, &zero, xf, x32);
    REAL(cudnnNormalizationForwardTraining)
    (h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_STANDARD, &one, &zero, xf, x32,
     pd, scale, bias, 0.1, pd, rm[1], rv[1], 1e-5, sm[1], si[1], NULL, NULL, NULL, xf, y32, ws,
     sizeof ws, NULL, 0, 1);
    REAL(cudnnTransformTensor)(h, &one, xf, y32, &zero, xh, want);
    REAL(cudnnNormalizationForwardTraining)
    (h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_STANDARD, &one, &zero, xh, x16,
     pd, scale, bias, 0.1, pd, rm[2], rv[2], 1e-5, sm[2], si[2], NULL, NULL, NULL, xh, asis, NULL,
     0, NULL, 0, 1);
    int w = fp32 ? 1 : 2;
    CHECK(memcmp(want, asis, sizeof want) != 0, "fp32 and half training normalisation differ");
    CHECK(memcmp(got, fp32 ? want : asis, sizeof got) == 0 &&
              memcmp(rm[0], rm[w], sizeof rm[0]) == 0 && memcmp(rv[0], rv[w], sizeof rv[0]) == 0 &&
              memcmp(sm[0], sm[w], sizeof sm[0]) == 0 && memcmp(si[0], si[w], sizeof si[0]) == 0,
          "half training normalisation: output and statistics are the %s call's",
          fp32 ? "fp32" : "half");
    cudnnDestroyTensorDescriptor(xh);
    cudnnDestroyTensorDescriptor(xf);
    cudnnDestroyTensorDescriptor(pd);
}

/* An RNN in inference mode: fp16 through the math type of a private copy of
 * the descriptor (the program's own, clip included, never re-set); training
 * mode as made. */
static void check_rnn(cudnnHandle_t h, const char *mode)
{
    enum { T = 3, B = 2, I = 4, H = 5 };
    cudnnRNNDescriptor_t rd;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd = NULL;
    int lengths[B] = {T, T};
    cudnnCreateRNNDescriptor(&rd);
    cudnnSetRNNDescriptor_v8(rd, CUDNN_RNN_ALGO_STANDARD, CUDNN_RNN_TANH, CUDNN_RNN_DOUBLE_BIAS,
                             CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                             CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, I, H, H, 1, NULL, 0);
    /* A clip the program set: it must hold for the lowered call and still
     * be on the descriptor after it. */
    cudnnRNNSetClip_v8(rd, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -0.5, 0.25);
    cudnnCreateRNNDataDescriptor(&xd);
    cudnnCreateRNNDataDescriptor(&yd);
    cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B,
                              I, lengths, NULL);
    cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B,
                              H, lengths, NULL);
    size_t wbytes = 0;
    cudnnGetRNNWeightSpaceSize(h, rd, &wbytes);
    float *weights = malloc(wbytes), xs[T * B * I], got[T * B * H], want[T * B * H];
    fill(weights, (int)(wbytes / sizeof(float)), 21);
    for (size_t i = 0; i < wbytes / sizeof(float); i++)
        weights[i] *= 0.3f;
    fill(xs, T * B * I, 22);
    int fp16 = strcmp(mode, "fp16") == 0;
    cudnnStatus_t st =
        cudnnRNNForward(h, rd, CUDNN_FWD_MODE_INFERENCE, NULL, xd, xs, yd, got, hd, NULL, NULL,
                        NULL, NULL, NULL, wbytes, weights, 0, NULL, 0, NULL);
    CHECK(st == CUDNN_STATUS_SUCCESS && strcmp(last()->function, "cudnnRNNForward") == 0 &&
              last()->math == (fp16 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : CUDNN_DEFAULT_MATH),
          "RNN inference (%s) reached cuDNN with math %d (status %d)", mode, last()->math, st);
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t input;
    cudnnDataType_t data, prec;
    cudnnMathType_t math = 99;
    int32_t is, hs, ps, nl;
    cudnnDropoutDescriptor_t drop;
    uint32_t aux;
    cudnnGetRNNDescriptor_v8(rd, &algo, &cell, &bias, &dir, &input, &data, &prec, &math, &is, &hs,
                             &ps, &nl, &drop, &aux);
    CHECK(math == CUDNN_DEFAULT_MATH, "the RNN descriptor is the program's (math %d)", math);
    cudnnRNNClipMode_t clip;
    cudnnNanPropagation_t clip_nan;
    double lclip, rclip;
    cudnnRNNGetClip_v8(rd, &clip, &clip_nan, &lclip, &rclip);
    CHECK(clip == CUDNN_RNN_CLIP_MINMAX && lclip == -0.5 && rclip == 0.25,
          "the program's clip is still set (mode %d, [%g, %g])", clip, lclip, rclip);
    static char ws[512];
    cudnnSetRNNDescriptor_v8(rd, algo, cell, bias, dir, input, data, prec,
                             fp16 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : CUDNN_DEFAULT_MATH, is,
                             hs, ps, nl, drop, aux);
    cudnnRNNSetClip_v8(rd, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -0.5, 0.25);
    REAL(cudnnRNNForward)
    (h, rd, CUDNN_FWD_MODE_INFERENCE, NULL, xd, xs, yd, want, hd, NULL, NULL, NULL, NULL, NULL,
     wbytes, weights, sizeof ws, ws, 0, NULL);
    CHECK(memcmp(got, want, sizeof got) == 0, "RNN inference: the library's %s answer", mode);
    cudnnSetRNNDescriptor_v8(rd, algo, cell, bias, dir, input, data, prec, CUDNN_DEFAULT_MATH, is,
                             hs, ps, nl, drop, aux);
    static char reserve[1024];
    st = cudnnRNNForward(h, rd, CUDNN_FWD_MODE_TRAINING, NULL, xd, xs, yd, got, hd, NULL, NULL,
                         NULL, NULL, NULL, wbytes, weights, 0, NULL, sizeof reserve, reserve);
    CHECK(st == CUDNN_STATUS_SUCCESS && last()->math == CUDNN_DEFAULT_MATH,
          "RNN training reached cuDNN as made (math %d, status %d)", last()->math, st);
    free(weights);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyRNNDescriptor(rd);
}

/* CTC loss: forwarded word for word inside an fp32 region. T=3, N=1, A=3,
 * label "1": every path is one of 1--, -1-, --1, 11-, -11, 111, 1-- ... */
static void check_ctc(cudnnHandle_t h)
{
    cudnnTensorDescriptor_t pd;
    int dims[3] = {3, 1, 3}, strides[3] = {3, 3, 1};
    cudnnCreateTensorDescriptor(&pd);
    cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, dims, strides);
    cudnnCTCLossDescriptor_t ctc;
    cudnnCreateCTCLossDescriptor(&ctc);
    cudnnSetCTCLossDescriptor(ctc, CUDNN_DATA_FLOAT);
    float probs[9] = {0.5f, 0.3f, 0.2f, 0.25f, 0.5f, 0.25f, 0.6f, 0.3f, 0.1f}, cost = 0.0f;
    int labels[1] = {1}, label_len[1] = {1}, input_len[1] = {3};
    uint64_t before = shim_stat("cudnnCTCLoss", "fp32");
    cudnnStatus_t st = cudnnCTCLoss(h, pd, probs, labels, label_len, input_len, &cost, pd, NULL,
                                    CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, ctc, NULL, 0);
    /* P = sum over the alignments of "1" with blanks (b=p[t][0], one=p[t][1]) */
    double b[3] = {0.5, 0.25, 0.6}, o[3] = {0.3, 0.5, 0.3};
    double p = o[0] * b[1] * b[2] + b[0] * o[1] * b[2] + b[0] * b[1] * o[2] + o[0] * o[1] * b[2] +
               b[0] * o[1] * o[2] + o[0] * o[1] * o[2];
    CHECK(st == CUDNN_STATUS_SUCCESS && cost > (float)(-__builtin_log(p)) - 1e-5f &&
              cost < (float)(-__builtin_log(p)) + 1e-5f,
          "CTC cost %g, expected %g (status %d)", cost, -__builtin_log(p), st);
    if (before != UINT64_MAX)
        CHECK(shim_stat("cudnnCTCLoss", "fp32") == before + 1, "cudnnCTCLoss counted as fp32");
    cudnnDestroyCTCLossDescriptor(ctc);
    cudnnDestroyTensorDescriptor(pd);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *mode = argv[1];
    int fp32 = strcmp(argv[2], "fp32") == 0;
    CHECK_SHIM_LOADED();
    lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    CHECK(lib != NULL, "libcudnn.so.9 is loaded");
    cudnnHandle_t h;
    cudnnCreate(&h);
    cudnnSetStream(h, (cudaStream_t)(uintptr_t)0x5eed);
    fill(x, XN, 1);
    fill(w, WN, 2);
    xd = tensor(CUDNN_DATA_FLOAT, 2, 3, 7, 6);
    yd = tensor(CUDNN_DATA_FLOAT, 2, 4, 7, 7);
    cudnnCreateFilterDescriptor(&wd);
    cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 2);
    cudnnCreateConvolutionDescriptor(&conv);
    cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    check_conv(h, mode);
    check_rnn(h, mode);
    check_softmax(h, fp32);
    check_reduce(h, fp32);
    check_norm(h, fp32);
    check_norm_training(h, fp32);
    check_ctc(h);
    CHECK(fake_cudart_outstanding() == 0, "every scratch allocation was given back (%ld left)",
          fake_cudart_outstanding());
    int converts = strcmp(mode, "bf16") == 0 || fp32;
    CHECK(converts ? fake_cudart_allocations() > 0 : fake_cudart_allocations() == 0,
          "%ld scratch allocations", fake_cudart_allocations());
    cudnnDestroy(h);
    printf("cudnn_check %s %s: %d passed, %d failed\n", mode, argv[2], checks - failures,
           (int)failures);
    return failures ? 1 : 0;
}
