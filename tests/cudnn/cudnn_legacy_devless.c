/* The real cuDNN 9 on a machine without a GPU: its legacy convolution entry
 * points are defined twice, by the dispatcher (libcudnn.so.9) and by the
 * sub-library it opens (libcudnn_cnn.so.9), which are one library. The
 * program makes fp32 descriptors (device-less calls) and calls
 * cudnnConvolutionForward, BackwardData and BackwardFilter with a NULL
 * handle, twice each: cuDNN answers each with its own error, which must
 * reach the program unchanged.
 * The fake cuDNN (tests/fakes) has no dispatcher: there the program opens
 * the fake's sub-library (SUBLIBRARY, the same names) after its first round,
 * as the dispatcher would.
 * usage: cudnn_legacy_devless lowered|asis [SUBLIBRARY]
 *   lowered: every call is decided lowered (AMPSHIM_CUDA_DTYPE=tf32 runs it
 *            as made on cuDNN's own TF32 math, so the NULL handle reaches
 *            cuDNN all the same) and the shim's log does not call the
 *            names "defined by 2 loaded libraries" (the meson test reads
 *            the log);
 *   asis:    no call is counted lowered (passthrough, disabled, no shim).
 * Exit 77 when the sub-library never loads (a cuDNN not built that way). */
#include <cudnn.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/shim_stats.h"

static int has_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    return info->dlpi_name && strstr(info->dlpi_name, (const char *)data) != NULL;
}

static int loaded(const char *name)
{
    return dl_iterate_phdr(has_object, (void *)name);
}

int main(int argc, char **argv)
{
    int lowered = argc >= 2 && strcmp(argv[1], "lowered") == 0;
    if (argc < 2 || argc > 3 || (!lowered && strcmp(argv[1], "asis") != 0)) {
        fprintf(stderr, "usage: cudnn_legacy_devless lowered|asis [SUBLIBRARY]\n");
        return 2;
    }
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    int ok = cudnnCreateTensorDescriptor(&x) == CUDNN_STATUS_SUCCESS &&
             cudnnCreateTensorDescriptor(&y) == CUDNN_STATUS_SUCCESS &&
             cudnnCreateFilterDescriptor(&w) == CUDNN_STATUS_SUCCESS &&
             cudnnCreateConvolutionDescriptor(&conv) == CUDNN_STATUS_SUCCESS &&
             cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 32, 32) ==
                 CUDNN_STATUS_SUCCESS &&
             cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 64, 64, 3, 3) ==
                 CUDNN_STATUS_SUCCESS &&
             cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 32, 32) ==
                 CUDNN_STATUS_SUCCESS &&
             cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                             CUDNN_DATA_FLOAT) == CUDNN_STATUS_SUCCESS;
    CHECK(ok, "fp32 descriptors made without a device");
    if (!ok)
        return 1;
    float one = 1, zero = 0;
    /* Device pointers are never touched: cuDNN refuses the NULL handle
     * first. */
    static float buf[3][16];
    const char *names[3] = {"cudnnConvolutionForward", "cudnnConvolutionBackwardData",
                            "cudnnConvolutionBackwardFilter"};
    for (int round = 0; round < 2; round++) {
        if (round == 1 && argc == 3 && !dlopen(argv[2], RTLD_NOW | RTLD_LOCAL))
            CHECK(0, "%s opens (%s)", argv[2], dlerror());
        cudnnStatus_t s[3] = {
            cudnnConvolutionForward(NULL, &one, x, buf[0], w, buf[1], conv,
                                    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &zero, y,
                                    buf[2]),
            cudnnConvolutionBackwardData(NULL, &one, w, buf[1], y, buf[2], conv,
                                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, NULL, 0, &zero, x,
                                         buf[0]),
            cudnnConvolutionBackwardFilter(NULL, &one, x, buf[0], y, buf[2], conv,
                                           CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, NULL, 0, &zero, w,
                                           buf[1])};
        for (int i = 0; i < 3; i++)
            CHECK(s[i] == CUDNN_STATUS_BAD_PARAM, "round %d: %s answers cuDNN's own error (%d)",
                  round, names[i], (int)s[i]);
    }
    if (!loaded("libcudnn_cnn.so")) {
        printf("libcudnn_cnn.so.9 was never loaded: no dispatcher and sub-library here; skipped\n");
        return 77;
    }
    CHECK(loaded("libcudnn.so.9"), "the dispatcher is loaded beside libcudnn_cnn.so.9");
    for (int i = 0; i < 3; i++) {
        uint64_t n = shim_stat(names[i], "lowered"), as_made = shim_stat(names[i], "passthrough");
        if (lowered)
            CHECK(n == 2 && as_made == 0, "%s: both calls decided lowered (%llu lowered, %llu "
                  "passthrough)", names[i], (unsigned long long)n, (unsigned long long)as_made);
        else
            CHECK(n == 0 || n == UINT64_MAX, "%s: no call lowered (%llu)", names[i],
                  (unsigned long long)n);
    }
    printf("cudnn_legacy_devless: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures != 0;
}
