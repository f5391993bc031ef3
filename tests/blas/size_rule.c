/* The size rule on the CPU (AMPSHIM_LOWER_MIN), with an ordinary OpenBLAS
 * program: a product the policy lowers runs as made (bit for bit the real
 * fp32 routine), counted small, below the threshold, and lowered from it up
 * (its result then differs from fp32's). Run with AMPSHIM_LOWER_MIN unset
 * (auto) and AMPSHIM_CPU_KERNEL=auto: auto's threshold is the native
 * crossover, 96^3, on a CPU whose flags promise a native bf16 kernel
 * (avx512_bf16 or amx_bf16, and no ONEDNN_MAX_CPU_ISA below them); on one
 * without, lowering never pays and the products from 96^3 up run as made,
 * counted nounits. Explicit requests (a region the program pushes) are
 * lowered at every size on either. Then ampctl's settings change the rule
 * live: a number, 0 (every size), and auto under AMPSHIM_CPU_KERNEL=emulate
 * (every size).
 *   size_rule            the above
 *   size_rule named      run with AMPSHIM_POLICY=cblas_sgemm=lower (an entry
 *                        naming the symbol: explicit): every size lowered */
#include <cblas.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
static ctl_fn ctl;
static sgemm_fn direct; /* the real cblas_sgemm, past the shim */

enum { SIDE = 128 };
static float A[SIDE * SIDE], B[SIDE * SIDE], C[SIDE * SIDE], R[SIDE * SIDE];

static uint64_t stat(const char *counter)
{
    char name[64];
    uint64_t v = 0;
    size_t len = sizeof v;
    snprintf(name, sizeof name, "stats.cblas_sgemm.%s", counter);
    return ctl(name, &v, &len, NULL, 0) == 0 ? v : UINT64_MAX;
}

static int set(const char *name, const char *value)
{
    return ctl(name, NULL, NULL, value, strlen(value));
}

enum { LOWERED = 1, SMALL = 0, NOUNITS = 2, ODD = -1 };

/* An m x n x k product: LOWERED when it was counted lowered and differs
 * from the real fp32 routine's result, SMALL or NOUNITS when counted so and
 * equal to it bit for bit, ODD otherwise. */
static int product(int m, int n, int k)
{
    uint64_t low = stat("lowered"), small = stat("small"), nounits = stat("nounits");
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, A, k, B, n, 0.0f, C, n);
    direct(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, A, k, B, n, 0.0f, R, n);
    int same = memcmp(C, R, (size_t)m * (size_t)n * sizeof *C) == 0;
    int lowered = stat("lowered") == low + 1, was_small = stat("small") == small + 1,
        was_nounits = stat("nounits") == nounits + 1;
    if (lowered && !was_small && !was_nounits && !same)
        return LOWERED;
    if (was_small && !lowered && !was_nounits && same)
        return SMALL;
    if (was_nounits && !lowered && !was_small && same)
        return NOUNITS;
    printf("  %dx%dx%d: lowered %d, small %d, nounits %d, same as fp32 %d\n", m, n, k, lowered,
           was_small, was_nounits, same);
    return ODD;
}

int main(int argc, char **argv)
{
    int named = argc > 1 && strcmp(argv[1], "named") == 0;
    CHECK_SHIM_LOADED();
    ctl = (ctl_fn)dlsym(RTLD_DEFAULT, "ampshim_ctl");
    void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    direct = blas ? (sgemm_fn)dlsym(blas, "cblas_sgemm") : NULL;
    CHECK(ctl && direct, "ampshim_ctl and the real cblas_sgemm found");
    if (!ctl || !direct)
        return 1;
    for (int i = 0; i < SIDE * SIDE; i++) {
        A[i] = 1.0f + (float)((i * 7919) % 1013) / 1013.0f;
        B[i] = 1.0f - (float)((i * 6271) % 991) / 1991.0f;
    }
    char text[32];
    size_t len = sizeof text;
    CHECK(ctl("opt.cpu_lower_min", text, &len, NULL, 0) == 0 && strcmp(text, "auto") == 0,
          "opt.cpu_lower_min reads auto (got '%s')", text);

    int native = check_cpu_has_bf16_units();
    printf("size_rule: the CPU %s native bf16 units\n", native ? "has" : "has no");
    if (named) {
        /* AMPSHIM_POLICY=cblas_sgemm=lower names the symbol: explicit. */
        CHECK(product(4, 4, 4) == LOWERED, "4^3 under auto, named by the policy: lowered");
        CHECK(product(128, 128, 128) == LOWERED, "128^3 under auto, named by the policy: lowered");
        printf("size_rule: %d passed, %d failed\n", checks - failures, (int)failures);
        return failures != 0;
    }

    /* auto: 96^3 where the CPU has a native kernel; no units where not. */
    CHECK(product(4, 4, 4) == SMALL, "4^3 under auto: small");
    CHECK(product(95, 96, 96) == SMALL, "95x96x96 under auto: small");
    CHECK(product(96, 96, 96) == (native ? LOWERED : NOUNITS), "96^3 under auto: %s",
          native ? "lowered" : "nounits");
    CHECK(product(128, 128, 128) == (native ? LOWERED : NOUNITS), "128^3 under auto: %s",
          native ? "lowered" : "nounits");

    /* An explicit request: a region the program pushes is lowered at every
     * size, with or without units (emulated where there are none). */
    int (*push)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "ampshim_autocast_push");
    int (*pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ampshim_autocast_pop");
    CHECK(push && pop && push(1 /* AMPSHIM_BF16 */) == 0, "a bf16 region pushed");
    CHECK(product(4, 4, 4) == LOWERED, "4^3 in a pushed bf16 region: lowered");
    CHECK(product(128, 128, 128) == LOWERED, "128^3 in a pushed bf16 region: lowered");
    CHECK(pop && pop() == 0, "the region popped");
    CHECK(product(4, 4, 4) == SMALL, "4^3 after the region: small again");

    /* A number: at the threshold lowered, one multiply-add short small. */
    CHECK(set("opt.cpu_lower_min", "1000") == 0, "opt.cpu_lower_min=1000 accepted");
    CHECK(product(10, 10, 10) == LOWERED, "10^3 at a threshold of 1000: lowered");
    CHECK(product(10, 10, 9) == SMALL, "10x10x9 below a threshold of 1000: small");
    CHECK(set("opt.cpu_lower_min", "10^3") == 0 && product(10, 10, 10) == LOWERED,
          "opt.cpu_lower_min=10^3: 10^3 lowered");
    CHECK(set("opt.cpu_lower_min", "-1") != 0 && set("opt.cpu_lower_min", "4294967295") != 0 &&
              set("opt.cpu_lower_min", "12abc") != 0,
          "bad thresholds refused");
    CHECK(product(10, 10, 9) == SMALL, "a refused value changed nothing");

    /* 0: every size (autocast's rule), through the both-device name. */
    CHECK(set("opt.lower_min", "0") == 0, "opt.lower_min=0 accepted");
    len = sizeof text;
    CHECK(ctl("opt.cuda_lower_min", text, &len, NULL, 0) == 0 && strcmp(text, "0") == 0,
          "opt.lower_min set CUDA's too (got '%s')", text);
    CHECK(product(2, 2, 2) == LOWERED, "2^3 at a threshold of 0: lowered");

    /* auto under emulate: every size again. */
    CHECK(set("opt.cpu_lower_min", "auto") == 0 && set("opt.cpu_kernel", "emulate") == 0,
          "auto and emulate accepted");
    CHECK(product(2, 2, 2) == LOWERED, "2^3 under auto with emulate: lowered");
    CHECK(set("opt.cpu_kernel", "auto") == 0 && product(2, 2, 2) == SMALL,
          "2^3 under auto with the auto kernel: small again");

    printf("size_rule: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures != 0;
}
