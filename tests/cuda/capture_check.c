/* Device scratch under stream capture, against the test-only fakes. With
 * FAKE_CUDART_CAPTURING=1 every stream is being captured into a graph: a
 * call that needs scratch (an fp16 cublasSsyrk, rebuilt on GemmEx in
 * scratch) runs as the program made it and nothing is allocated, while one
 * that needs none (cublasSgemm, lowered in place) is still lowered. Without
 * capture the scratch comes from the shim's own pool (release threshold 256
 * MiB, or EXPECT_KEEP_MIB: what AMPSHIM_CUDA_POOL_KEEP asked for), never the
 * runtime's default one, and is all given back; with FAKE_CUDART_POOL_FULL=1
 * (the pool's allocations fail until it is trimmed) the shim trims its pool
 * and gets the scratch on its second try. With
 * AMPSHIM_CUDA_FP16=explicit the Sgemm needs scratch too (its fp16 copies),
 * and the shim's own cuDNN handle is never made under capture.
 * usage: capture_check capture|free */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"

enum { M = 12, K = 7 };

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int capture = strcmp(argv[1], "capture") == 0;
    const char *fp16 = getenv("AMPSHIM_CUDA_FP16");
    int explicit_fp16 = fp16 && strcmp(fp16, "explicit") == 0;
    CHECK_SHIM_LOADED();
    void *rt = dlopen("libcudart.so.13", RTLD_NOW);
    long (*allocations)(void) = rt ? (long (*)(void))dlsym(rt, "fake_cudart_allocations") : NULL;
    long (*outstanding)(void) = rt ? (long (*)(void))dlsym(rt, "fake_cudart_outstanding") : NULL;
    long (*pool_allocations)(void) =
        rt ? (long (*)(void))dlsym(rt, "fake_cudart_pool_allocations") : NULL;
    uint64_t (*threshold)(void) =
        rt ? (uint64_t(*)(void))dlsym(rt, "fake_cudart_pool_threshold") : NULL;
    long (*trims)(void) = rt ? (long (*)(void))dlsym(rt, "fake_cudart_pool_trims") : NULL;
    const char *keep = getenv("EXPECT_KEEP_MIB"), *full = getenv("FAKE_CUDART_POOL_FULL");
    uint64_t keep_bytes = (uint64_t)(keep ? strtoull(keep, NULL, 10) : 256) << 20;
    if (!allocations || !outstanding || !pool_allocations || !threshold || !trims) {
        printf("FAIL: not run with the fake CUDA runtime\n");
        return 1;
    }
    cublasHandle_t h;
    cublasCreate(&h);
    static float a[M * K], c[M * M], b[K * M], d[M * M];
    for (int i = 0; i < M * K; i++)
        a[i] = b[i] = (float)(i % 13) / 7.0f - 0.8f;
    const float one = 1.0f, zero = 0.0f;
    cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, M, K, &one, a, M, &zero, c, M);
    CHECK(strcmp(fake_cublas_last_call()->function, capture ? "cublasSsyrk_v2" : "cublasGemmEx") ==
              0,
          "fp16 Ssyrk %s: reached %s", capture ? "under capture (needs scratch)" : "free",
          fake_cublas_last_call()->function);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, M, K, &one, a, M, b, K, &zero, d, M);
    if (!explicit_fp16)
        CHECK(fake_cublas_last_call()->compute == CUBLAS_COMPUTE_32F_FAST_16F,
              "Sgemm (no scratch) lowered either way (compute %d)",
              fake_cublas_last_call()->compute);
    else if (capture)
        CHECK(strcmp(fake_cublas_last_call()->function, "cublasSgemm_v2") == 0,
              "explicit fp16 Sgemm under capture (its conversions need scratch): as made (%s)",
              fake_cublas_last_call()->function);
    /* The shim's own cuDNN handle (explicit fp16's conversions) is never
     * made while a stream is captured. */
    void *dnn = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    int (*during)(void) = dnn ? (int (*)(void))dlsym(dnn, "fake_cudnn_created_during_capture") : NULL;
    CHECK(!during || during() == 0, "no cuDNN handle made under capture (%d)",
          during ? during() : 0);
    if (capture) {
        CHECK(allocations() == 0, "under capture: no allocation (%ld)", allocations());
    } else {
        CHECK(allocations() > 0 && pool_allocations() == allocations(),
              "scratch from the shim's pool only (%ld of %ld)", pool_allocations(), allocations());
        CHECK(threshold() == keep_bytes, "the pool keeps %llu MiB (%llu bytes)",
              (unsigned long long)(keep_bytes >> 20), (unsigned long long)threshold());
        CHECK(trims() == (full && *full == '1'), "the pool trimmed %s (%ld)",
              full ? "once, on the failed allocation" : "never", trims());
    }
    CHECK(outstanding() == 0, "all scratch given back (%ld)", outstanding());
    cublasDestroy(h);
    printf("capture_check %s: %d passed, %d failed\n", argv[1], checks - failures, (int)failures);
    return failures ? 1 : 0;
}
