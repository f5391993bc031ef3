/* A program calling sgemm under every name of policy/data/manglings.txt
 * (cblas_sgemm, sgemm_, cblas_sgemm64_, sgemm_64_, cblas_sgemm_64, sgemm_64,
 * scipy_cblas_sgemm, scipy_sgemm_, scipy_cblas_sgemm64_, scipy_sgemm_64_),
 * each defined by the test-only forwarder over Debian's real OpenBLAS. Under
 * ampshim every one must be lowered: equal to the real routine on
 * bf16-rounded operands and counted under its own name; and each must reach
 * a library of the right integer width (a CBLAS call of a library-width name
 * arrives with garbage above 32 bits in every integer register, as an int
 * argument may on x86-64; an LP64 library must not see it).
 * usage: mangled_check PATH/TO/libmangled-forwarder.so (opened RTLD_GLOBAL,
 * as a Python extension's BLAS may be) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ampshim_generated.h"
#include "tests/check.h"
#include "tests/oracle.h"

enum { M = 29, N = 19, K = 41 };
static float a[M * K], b[K * N], ra[M * K], rb[K * N], want[M * N];

typedef void (*cblas64_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, float,
                           const float *, int64_t, const float *, int64_t, float, float *,
                           int64_t);
typedef void (*f77_fn)(const char *, const char *, const void *, const void *, const void *,
                       const float *, const float *, const void *, const float *, const void *,
                       const float *, float *, const void *);

static int (*ctl)(const char *, void *, size_t *, const void *, size_t);

static uint64_t lowered(const char *symbol)
{
    char name[128];
    snprintf(name, sizeof name, "stats.%s.lowered", symbol);
    uint64_t v = 0;
    size_t len = sizeof v;
    return ctl && ctl(name, &v, &len, NULL, 0) == 0 ? v : UINT64_MAX;
}

static void check_result(const char *symbol, const float *got)
{
    CHECK(memcmp(got, want, sizeof want) == 0, "%s: not the product of bf16-rounded operands",
          symbol);
    CHECK(lowered(symbol) == 1, "%s: counted lowered %llu times, want 1", symbol,
          (unsigned long long)lowered(symbol));
}

static void cblas(const char *symbol, int lp)
{
    cblas64_fn f = (cblas64_fn)dlsym(RTLD_DEFAULT, symbol);
    CHECK(f != NULL, "%s: not found", symbol);
    if (!f)
        return;
    /* An int argument's register may hold anything above bit 31. */
    int64_t junk = lp ? (int64_t)0x5a5a5a5a00000000ll : 0;
    float got[M * N];
    memset(got, 0, sizeof got);
    f(junk | 102, junk | 111, junk | 111, junk | M, junk | N, junk | K, 1.0f, a, junk | M, b,
      junk | K, 0.0f, got, junk | M);
    check_result(symbol, got);
}

static void f77(const char *symbol, int lp)
{
    f77_fn f = (f77_fn)dlsym(RTLD_DEFAULT, symbol);
    CHECK(f != NULL, "%s: not found", symbol);
    if (!f)
        return;
    int32_t m32 = M, n32 = N, k32 = K;
    int64_t m64 = M, n64 = N, k64 = K;
    float one = 1.0f, zero = 0.0f, got[M * N];
    memset(got, 0, sizeof got);
    if (lp)
        f("N", "N", &m32, &n32, &k32, &one, a, &m32, b, &k32, &zero, got, &m32);
    else
        f("N", "N", &m64, &n64, &k64, &one, a, &m64, b, &k64, &zero, got, &m64);
    check_result(symbol, got);
}

int main(int argc, char **argv)
{
    if (argc != 2 || !dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        printf("FAIL: usage: mangled_check PATH/TO/libmangled-forwarder.so (%s)\n", dlerror());
        return 2;
    }
    CHECK_SHIM_LOADED();
    ctl = (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                               "ampshim_ctl");
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    void (*real)(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int) = lib ? dlsym(lib, "cblas_sgemm") : NULL;
    if (!real) {
        printf("FAIL: no libopenblas.so.0\n");
        return 1;
    }
    for (int i = 0; i < M * K; i++)
        ra[i] = oracle_bf16(a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f);
    for (int i = 0; i < K * N; i++)
        rb[i] = oracle_bf16(b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f);
    real(102, 111, 111, M, N, K, 1.0f, ra, M, rb, K, 0.0f, want, M);

#define IS_LP_LP 1
#define IS_LP_I64 0
#define STR2(x) #x
#define STR(x) STR2(x)
#define NAME3(p, r, s) STR(p##r##s)
#define CALL_CBLAS(prefix, suffix, lp) cblas(NAME3(prefix, sgemm, suffix), lp)
#define CALL_F77(prefix, suffix, lp) f77(NAME3(prefix, sgemm, suffix), lp)
#define CHECK_ONE(mangling, form, ints, lapack, prefix, suffix)                                    \
    CALL_##form(prefix, suffix, IS_LP_##ints);
    AMPSHIM_MANGLING_LIST(CHECK_ONE)

    printf("mangled_check: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
