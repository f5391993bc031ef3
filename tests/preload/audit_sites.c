/* Three call sites of cblas_sgemm of different conditioning, for the
 * accuracy audit (tests/preload/audit_check.py drives it):
 *
 *   well_scaled   64x64x64, entries uniform in [-1, 1): lowering costs about
 *                 one rounding of the inputs
 *   overflows     the same with A scaled to 1e5 and B to 1e-3: the product
 *                 is finite (about 64 * 100), but A is above fp16's 65504
 *   cancels       C = sum (1 + r 2^-12) b - sum 1 b: the difference of two
 *                 nearly equal products; 1 + r 2^-12 rounds to 1 in fp16 (and
 *                 bf16), so the lowered result is all error
 *
 * Each site is its own function (exported: the program is linked with
 * -rdynamic so dladdr names them) and makes CALLS calls. The program then
 * computes what the audit should find, independently of the shim: the
 * lowered result as the emulated path makes it (its own rounding of A and B,
 * then the real OpenBLAS through a dlopen handle, which the shim does not
 * intercept) against the fp32 one, and prints one line per site:
 *
 *   site NAME err E elem X nonfinite N hash H lowered L fp32 F
 *
 * with H a hash of the output the program got at the last call, and L and F
 * the shim's lowered and fp32 counters of cblas_sgemm after the site's calls
 * (differences). With an argument, it runs `ampctl --json audit PID` on
 * itself into that file before exiting (AMPCTL names ampctl).
 *
 * AUDIT_DTYPE=fp16 or bf16 (default fp16) says how the test rounds. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "tests/audit_sites.h"
#include "tests/oracle.h"

enum { N = AUDIT_N, CALLS = 3 };

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);

static sgemm_fn real_sgemm;
static ctl_fn ctl;
static int fp16 = 1;

static struct audit_data data;
static float c_out[N * N];
static float c_out[N * N];

static float round_value(float x)
{
    return fp16 ? (float)(_Float16)x : oracle_bf16(x);
}

static uint64_t counter(const char *name)
{
    uint64_t v = 0;
    size_t len = sizeof v;
    if (ctl)
        ctl(name, &v, &len, NULL, 0);
    return v;
}

/* The three sites: one call each, C = A B (beta 0). */
__attribute__((noinline)) void well_scaled(void)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, data.a_well, N, data.b_well, N,
                0.0f, c_out, N);
}

__attribute__((noinline)) void overflows(void)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, data.a_over, N, data.b_over, N,
                0.0f, c_out, N);
}

__attribute__((noinline)) void cancels(void)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, 2 * N, 1.0f, data.a_canc, 2 * N,
                data.b_canc, N, 0.0f, c_out, N);
}

/* What the audit should measure for C = A B (m x n, inner k). */
static void expected(const float *a, const float *b, int k, double *err, double *elem,
                     long *nonfinite)
{
    float *ra = malloc(sizeof(float) * N * k), *rb = malloc(sizeof(float) * k * N);
    float *low = malloc(sizeof(float) * N * N), *ref = malloc(sizeof(float) * N * N);
    for (int i = 0; i < N * k; i++)
        ra[i] = round_value(a[i]);
    for (int i = 0; i < k * N; i++)
        rb[i] = round_value(b[i]);
    real_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, k, 1.0f, ra, k, rb, N, 0.0f, low, N);
    real_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, k, 1.0f, a, k, b, N, 0.0f, ref, N);
    double d2 = 0, r2 = 0, absmax = 0;
    *nonfinite = 0;
    for (int i = 0; i < N * N; i++) {
        if (!isfinite(low[i])) {
            ++*nonfinite;
            continue;
        }
        d2 += ((double)low[i] - ref[i]) * ((double)low[i] - ref[i]);
        r2 += (double)ref[i] * ref[i];
        absmax = fmax(absmax, fabs((double)ref[i]));
    }
    *err = *nonfinite ? INFINITY : sqrt(d2 / r2);
    *elem = 0;
    for (int i = 0; i < N * N; i++)
        if (fabs((double)ref[i]) > absmax * 0x1p-12 && isfinite(low[i]))
            *elem = fmax(*elem, fabs((double)low[i] - ref[i]) / fabs((double)ref[i]));
    free(ra);
    free(rb);
    free(low);
    free(ref);
}

static void run_site(const char *name, void (*site)(void), const float *a, const float *b, int k)
{
    uint64_t lowered = counter("stats.cblas_sgemm.lowered"), f32 = counter("stats.cblas_sgemm.fp32");
    for (int i = 0; i < CALLS; i++)
        site();
    uint64_t h = audit_hash(c_out, N * N);
    double err, elem;
    long nonfinite;
    expected(a, b, k, &err, &elem, &nonfinite);
    printf("site %s err %.9g elem %.9g nonfinite %ld hash %016llx lowered %llu fp32 %llu\n", name,
           err, elem, nonfinite, (unsigned long long)h,
           (unsigned long long)(counter("stats.cblas_sgemm.lowered") - lowered),
           (unsigned long long)(counter("stats.cblas_sgemm.fp32") - f32));
}

int main(int argc, char **argv)
{
    const char *dt = getenv("AUDIT_DTYPE");
    fp16 = !(dt && strcmp(dt, "bf16") == 0);
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!lib || !(*(void **)&real_sgemm = dlsym(lib, "cblas_sgemm"))) {
        printf("FAIL: not linked to libopenblas.so.0\n");
        return 1;
    }
    *(void **)&ctl = dlsym(RTLD_DEFAULT, "ampshim_ctl");
    audit_fill(&data, 1);
    run_site("well_scaled", well_scaled, data.a_well, data.b_well, N);
    run_site("overflows", overflows, data.a_over, data.b_over, N);
    run_site("cancels", cancels, data.a_canc, data.b_canc, 2 * N);
    fflush(stdout);
    if (argc > 1) {
        const char *ampctl = getenv("AMPCTL");
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "env -u LD_PRELOAD '%s' --json audit %ld > '%s'",
                 ampctl ? ampctl : "ampctl", (long)getpid(), argv[1]);
        if (system(cmd) != 0) {
            printf("FAIL: %s\n", cmd);
            return 1;
        }
    }
    return 0;
}
