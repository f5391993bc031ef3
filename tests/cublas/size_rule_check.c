/* The size rule on CUDA (AMPSHIM_CUDA_LOWER_MIN), with an ordinary cuBLAS
 * program against the test-only fake cuBLAS: a product the policy lowers
 * runs as made, counted small, when it has fewer multiply-adds than the
 * threshold, and lowered from the threshold up; a batched call counts its
 * whole batch; ampctl's opt.cuda_lower_min changes the threshold live. An
 * explicit request is lowered at every size: a region the program pushes,
 * or (argument "named", run with AMPSHIM_POLICY=cublasSgemm_v2=lower) an
 * entry naming the symbol. Run with AMPSHIM_CUDA_LOWER_MIN=auto (the
 * default, 256^3). */
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fakes/fake_cublas.h"

typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);
static ctl_fn ctl;

static uint64_t stat(const char *symbol, const char *counter)
{
    char name[128];
    uint64_t v = 0;
    size_t len = sizeof v;
    snprintf(name, sizeof name, "stats.%s.%s", symbol, counter);
    return ctl(name, &v, &len, NULL, 0) == 0 ? v : UINT64_MAX;
}

static int set_min(const char *value)
{
    return ctl("opt.cuda_lower_min", NULL, NULL, value, strlen(value) + 1);
}

static float *A, *B, *C;

/* One square product of side n (batch of `batch` with zero strides when
 * batch > 1); returns the cuBLAS function that ran it and whether it was
 * counted lowered (1), small (0) or neither (-1). */
static int product(cublasHandle_t h, int n, int batch, const char **ran)
{
    const char *sym = batch > 1 ? "cublasSgemmStridedBatched" : "cublasSgemm_v2";
    uint64_t low = stat(sym, "lowered"), small = stat(sym, "small");
    float alpha = 1.0f, beta = 0.0f;
    if (batch > 1)
        cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, n, 0, B, n, 0,
                                  &beta, C, n, 0, batch);
    else
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, n, B, n, &beta, C, n);
    *ran = fake_cublas_last_call()->function;
    int lowered = stat(sym, "lowered") == low + 1, was_small = stat(sym, "small") == small + 1;
    return lowered && !was_small ? 1 : was_small && !lowered ? 0 : -1;
}

int main(int argc, char **argv)
{
    CHECK_SHIM_LOADED();
    ctl = (ctl_fn)dlsym(RTLD_DEFAULT, "ampshim_ctl");
    CHECK(ctl != NULL, "ampshim_ctl is exported");
    if (!ctl)
        return 1;
    A = calloc(256 * 256, sizeof *A);
    B = calloc(256 * 256, sizeof *B);
    C = calloc(256 * 256, sizeof *C);
    for (int i = 0; i < 256 * 256; i++)
        A[i] = B[i] = (float)(i % 17) / 16.0f;
    cublasHandle_t h;
    cublasCreate(&h);
    const char *ran;

    if (argc > 1 && strcmp(argv[1], "named") == 0) {
        CHECK(product(h, 64, 1, &ran) == 1 && strcmp(ran, "cublasGemmEx") == 0,
              "64^3 under auto, the symbol named by the policy: lowered (ran %s)", ran);
        cublasDestroy(h);
        printf("size_rule_check: %d passed, %d failed\n", checks - failures, (int)failures);
        return failures != 0;
    }

    /* auto: 256^3. */
    char text[32];
    size_t len = sizeof text;
    CHECK(ctl("opt.cuda_lower_min", text, &len, NULL, 0) == 0 && strcmp(text, "auto") == 0,
          "opt.cuda_lower_min reads auto, got '%s'", text);
    CHECK(product(h, 64, 1, &ran) == 0 && strcmp(ran, "cublasSgemm_v2") == 0,
          "64^3 under auto: small, as made (ran %s)", ran);
    CHECK(product(h, 255, 1, &ran) == 0 && strcmp(ran, "cublasSgemm_v2") == 0,
          "255^3 under auto: small, as made (ran %s)", ran);
    CHECK(product(h, 256, 1, &ran) == 1 && strcmp(ran, "cublasGemmEx") == 0,
          "256^3 under auto: lowered (ran %s)", ran);

    /* A region the program pushes is explicit: lowered at every size. */
    int (*push)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "ampshim_autocast_push");
    int (*pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ampshim_autocast_pop");
    CHECK(push && pop && push(0 /* AMPSHIM_DEFAULT */) == 0, "a region pushed");
    CHECK(product(h, 64, 1, &ran) == 1 && strcmp(ran, "cublasGemmEx") == 0,
          "64^3 in a pushed region: lowered (ran %s)", ran);
    CHECK(pop && pop() == 0, "the region popped");
    CHECK(product(h, 64, 1, &ran) == 0, "64^3 after the region: small again");

    /* A threshold of exactly 64^3: 64^3 is lowered, 63^3 is not. */
    CHECK(set_min("262144") == 0, "opt.cuda_lower_min=262144 accepted");
    CHECK(product(h, 64, 1, &ran) == 1 && strcmp(ran, "cublasGemmEx") == 0,
          "64^3 at a threshold of 64^3: lowered (ran %s)", ran);
    CHECK(product(h, 63, 1, &ran) == 0 && strcmp(ran, "cublasSgemm_v2") == 0,
          "63^3 below a threshold of 64^3: small (ran %s)", ran);
    /* A batch counts whole: 4 x 40^3 = 256000 < 262144, 5 x 40^3 above. */
    CHECK(product(h, 40, 4, &ran) == 0 && strcmp(ran, "cublasSgemmStridedBatched") == 0,
          "a batch of 4 x 40^3: small (ran %s)", ran);
    CHECK(product(h, 40, 5, &ran) == 1 && strcmp(ran, "cublasGemmStridedBatchedEx") == 0,
          "a batch of 5 x 40^3: lowered (ran %s)", ran);

    /* 0: every size, as autocast does. A bad value changes nothing. */
    CHECK(set_min("0") == 0, "opt.cuda_lower_min=0 accepted");
    CHECK(product(h, 2, 1, &ran) == 1, "2^3 at a threshold of 0: lowered");
    CHECK(set_min("lots") != 0, "opt.cuda_lower_min=lots refused");
    CHECK(product(h, 2, 1, &ran) == 1, "2^3 after a refused value: still lowered");
    CHECK(set_min("auto") == 0, "opt.cuda_lower_min=auto accepted");
    CHECK(product(h, 2, 1, &ran) == 0, "2^3 back under auto: small");

    cublasDestroy(h);
    printf("size_rule_check: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures != 0;
}
