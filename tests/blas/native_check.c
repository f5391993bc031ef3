/* The native executor against the emulated path, on an ordinary sgemm
 * program run under LD_PRELOAD=libampshim.so. For every case the expected
 * result is the emulated one, computed here: this test rounds A and B itself
 * (RNE to bf16, or _Float16 for fp16) and calls the real OpenBLAS routine
 * through a dlopen handle (which the shim does not intercept).
 *
 *   native_check native     every call runs native (the shim's native
 *                           counter moves by one per call) and its result is
 *                           within the bound of ampshim(7) of the emulated
 *                           one; skipped (77) on a CPU without avx512_bf16 /
 *                           amx_bf16 or without libdnnl.so.2
 *   native_check emulated   no call runs native, and every result equals the
 *                           emulated one bit for bit (the fallbacks)
 *   --threads N             the cases split among N threads calling at once
 *   --blas-threads N        OpenBLAS set to N threads around each call made
 *                           through the shim (the native executor then
 *                           splits a product into up to N chunks); the
 *                           reference calls keep one thread
 *   --fork                  then forks while the executor's workers exist
 *                           and runs every case again in the child (which
 *                           has no workers until it starts its own)
 *
 * The bound, elementwise: both paths sum the same k exact products (a
 * product of two bf16 or fp16 values is exact in fp32) in fp32, in different
 * orders, then scale by alpha and add beta * C. Each result is within
 * (k + 2) u (|alpha| sum|a||b| + |beta||c|) of the exact value, u = 2^-24
 * (the classic recursive-summation bound, first order), so the two are within
 * twice that; the test allows (2k + 6) u S. With AMPSHIM_OUTPUT=round both
 * results are then rounded to the dtype, which may put them one unit of the
 * dtype apart: 2^-7 |result| (bf16) or 2^-10 |result| (fp16) is added.
 * Padding of C beyond its rows or columns must be left untouched.
 *
 * Cases: odd shapes with every side 1, 7, 33 or 1000; CBLAS row and column
 * major and Fortran; transposes N, T, C; leading dimensions tight and
 * padded; alpha, beta (1, 0) and (-0.75, 0.5). With AMPSHIM_OUTPUT=round a
 * C that is read (beta != 0) is rounded before the product, on both paths. Built twice: LP64 against
 * libopenblas, ILP64 (-DCHECK_ILP64) against libopenblas64. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/cpu_units.h"

#include "tests/oracle.h"
#include "tests/blas/blas_width.h"

typedef void (*cblas_fn)(int, int, int, blasint, blasint, blasint, float, const float *, blasint,
                         const float *, blasint, float, float *, blasint);
typedef void (*f77_fn)(const char *, const char *, const blasint *, const blasint *,
                       const blasint *, const float *, const float *, const blasint *,
                       const float *, const blasint *, const float *, float *, const blasint *);
typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);

static cblas_fn real_cblas;
static f77_fn real_f77;
static ctl_fn ctl;
static int expect_native, dtype_fp16, output_round, threaded, blas_threads;
static void (*set_blas_threads)(int);
static _Atomic int checks, failures;

enum { FORM_CBLAS_ROW, FORM_CBLAS_COL, FORM_F77, FORMS };
static const char *const form_names[FORMS] = {"cblas row", "cblas col", "Fortran"};

struct gcase {
    int form;
    char ta, tb; /* 'N', 'T', 'C'; for syrk, ta is trans and tb uplo ('U', 'L') */
    blasint m, n, k, pad;
    float alpha, beta;
    int syrk;
};

void cblas_ssyrk(int, int, int, blasint, blasint, float, const float *, blasint, float, float *,
                 blasint);
void ssyrk_(const char *, const char *, const blasint *, const blasint *, const float *,
            const float *, const blasint *, const float *, float *, const blasint *);
typedef void (*cblas_syrk_fn)(int, int, int, blasint, blasint, float, const float *, blasint,
                              float, float *, blasint);
typedef void (*f77_syrk_fn)(const char *, const char *, const blasint *, const blasint *,
                            const float *, const float *, const blasint *, const float *, float *,
                            const blasint *);
static cblas_syrk_fn real_cblas_syrk;
static f77_syrk_fn real_f77_syrk;

static float round_value(float x)
{
    return dtype_fp16 ? (float)(_Float16)x : oracle_bf16(x);
}

static float random_value(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float)((int64_t)(*s >> 40) - (1 << 23)) / (float)(1 << 22); /* [-2, 2) */
}

/* The shim's native counter over the symbols this test calls. */
static uint64_t native_calls(void)
{
    static const char *const names[] = {"stats.cblas_sgemm.native", "stats.sgemm_.native",
                                        "stats.cblas_ssyrk.native", "stats.ssyrk_.native"};
    uint64_t total = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        uint64_t v = 0;
        size_t len = sizeof v;
        ctl(names[i], &v, &len, NULL, 0);
        total += v;
    }
    return total;
}

static void fail(const char *fmt, const struct gcase *g, const char *detail)
{
    char name[160];
    snprintf(name, sizeof name, "%s%s %c%c m=%lld n=%lld k=%lld pad=%lld alpha=%g beta=%g",
             g->syrk ? "syrk, " : "", form_names[g->form], g->ta, g->tb, (long long)g->m, (long long)g->n, (long long)g->k,
             (long long)g->pad, g->alpha, g->beta);
    printf("FAIL %s: %s%s\n", name, fmt, detail);
    failures++;
}

static void call(const struct gcase *g, int real, const float *a, blasint lda, const float *b,
                 blasint ldb, float *c, blasint ldc)
{
    if (g->form == FORM_F77) {
        f77_fn f = real ? real_f77 : sgemm_;
        f(&g->ta, &g->tb, &g->m, &g->n, &g->k, &g->alpha, a, &lda, b, &ldb, &g->beta, c, &ldc);
    } else {
        cblas_fn f = real ? real_cblas : cblas_sgemm;
        int t[3] = {111, 112, 113};
        f(g->form == FORM_CBLAS_ROW ? 101 : 102, t[g->ta == 'N' ? 0 : g->ta == 'T' ? 1 : 2],
          t[g->tb == 'N' ? 0 : g->tb == 'T' ? 1 : 2], g->m, g->n, g->k, g->alpha, a, lda, b, ldb,
          g->beta, c, ldc);
    }
}

/* Element (i, j) of a matrix stored in this form's layout. */
static size_t at(int row_major, blasint i, blasint j, blasint ld)
{
    return row_major ? (size_t)i * ld + j : (size_t)j * ld + i;
}

static void call_syrk(const struct gcase *g, int real, const float *a, blasint lda, float *c,
                      blasint ldc)
{
    if (g->form == FORM_F77) {
        f77_syrk_fn f = real ? real_f77_syrk : ssyrk_;
        f(&g->tb, &g->ta, &g->n, &g->k, &g->alpha, a, &lda, &g->beta, c, &ldc);
    } else {
        cblas_syrk_fn f = real ? real_cblas_syrk : cblas_ssyrk;
        f(g->form == FORM_CBLAS_ROW ? 101 : 102, g->tb == 'U' ? 121 : 122,
          g->ta == 'N' ? 111 : g->ta == 'T' ? 112 : 113, g->n, g->k, g->alpha, a, lda, g->beta, c,
          ldc);
    }
}

/* syrk: C's referenced triangle = alpha op(A) op(A)^T + beta C; the other
 * triangle and the padding must stay as they were. */
static void run_syrk_case(const struct gcase *g, uint64_t seed)
{
    int row = g->form == FORM_CBLAS_ROW, t = g->ta != 'N';
    blasint ar = t ? g->k : g->n, ac = t ? g->n : g->k;
    blasint lda = (row ? ac : ar) + g->pad, ldc = g->n + g->pad;
    size_t alen = (size_t)lda * (row ? ar : ac), clen = (size_t)ldc * g->n;
    float *a = malloc(alen * 4), *a_r = malloc(alen * 4), *a_abs = malloc(alen * 4);
    float *c = malloc(clen * 4), *c0 = malloc(clen * 4), *want = malloc(clen * 4);
    float *scale = malloc(clen * 4);
    for (size_t i = 0; i < alen; i++) {
        a_r[i] = round_value(a[i] = random_value(&seed));
        a_abs[i] = fabsf(a_r[i]);
    }
    for (size_t i = 0; i < clen; i++)
        c0[i] = c[i] = random_value(&seed);
    for (size_t i = 0; i < clen; i++) {
        want[i] = output_round && g->beta != 0.0f ? round_value(c0[i]) : c0[i];
        scale[i] = fabsf(want[i]);
    }
    call_syrk(g, 1, a_r, lda, want, ldc);
    struct gcase abs_case = *g;
    abs_case.alpha = fabsf(g->alpha);
    abs_case.beta = fabsf(g->beta);
    call_syrk(&abs_case, 1, a_abs, lda, scale, ldc);
    uint64_t before = threaded ? 0 : native_calls();
    if (blas_threads)
        set_blas_threads(blas_threads);
    call_syrk(g, 0, a, lda, c, ldc);
    if (blas_threads)
        set_blas_threads(1);
    checks++;
    if (!threaded && native_calls() - before != (uint64_t)expect_native)
        fail(expect_native ? "did not run native" : "ran native", g, "");
    for (blasint i = 0; i < g->n; i++)
        for (blasint j = 0; j < ldc; j++) {
            size_t p = at(row, i, j < g->n ? j : i, ldc);
            if (j >= g->n) /* padding of the line */
                p = row ? (size_t)i * ldc + j : (size_t)i * ldc + j;
            int in_tri = j < g->n && (g->tb == 'U' ? i <= j : i >= j);
            if (!in_tri) {
                if (memcmp(&c[p], &c0[p], 4) != 0) {
                    fail("wrote outside the referenced triangle", g, "");
                    goto done;
                }
                continue;
            }
            float w = output_round ? round_value(want[p]) : want[p];
            if (!expect_native) {
                if (memcmp(&c[p], &w, 4) != 0) {
                    fail("differs from the emulated result", g, "");
                    goto done;
                }
                continue;
            }
            double bound = (2.0 * g->k + 6) * ldexp(1, -24) * scale[p] * (1.0 + g->k * ldexp(1, -23));
            if (output_round)
                bound += ldexp(1, dtype_fp16 ? -10 : -7) * fabs(w);
            if (!(fabs((double)c[p] - w) <= bound)) {
                char d[128];
                snprintf(d, sizeof d, " (element %lld,%lld: %.9g, emulated %.9g, bound %.3g)",
                         (long long)i, (long long)j, c[p], w, bound);
                fail("outside the bound", g, d);
                goto done;
            }
        }
done:
    free(a), free(a_r), free(a_abs), free(c), free(c0), free(want), free(scale);
}

static void run_case(const struct gcase *g, uint64_t seed)
{
    if (g->syrk) {
        run_syrk_case(g, seed);
        return;
    }
    int row = g->form == FORM_CBLAS_ROW;
    int ta = g->ta != 'N', tb = g->tb != 'N';
    /* Stored shapes: A is m x k (k x m when transposed), B k x n (n x k). */
    blasint ar = ta ? g->k : g->m, ac = ta ? g->m : g->k;
    blasint br = tb ? g->n : g->k, bc = tb ? g->k : g->n;
    blasint lda = (row ? ac : ar) + g->pad, ldb = (row ? bc : br) + 2 * g->pad;
    blasint ldc = (row ? g->n : g->m) + g->pad;
    size_t alen = (size_t)lda * (row ? ar : ac), blen = (size_t)ldb * (row ? br : bc);
    size_t clen = (size_t)ldc * (row ? g->m : g->n);
    float *a = malloc(alen * 4), *b = malloc(blen * 4), *c = malloc(clen * 4);
    float *ar_ = malloc(alen * 4), *br_ = malloc(blen * 4), *want = malloc(clen * 4);
    float *c0 = malloc(clen * 4);
    for (size_t i = 0; i < alen; i++)
        ar_[i] = round_value(a[i] = random_value(&seed));
    for (size_t i = 0; i < blen; i++)
        br_[i] = round_value(b[i] = random_value(&seed));
    for (size_t i = 0; i < clen; i++)
        c0[i] = c[i] = random_value(&seed);
    memcpy(want, c, clen * 4);
    if (output_round && g->beta != 0.0f) /* the accumulator read is rounded first */
        for (size_t i = 0; i < clen; i++)
            want[i] = round_value(want[i]);
    call(g, 1, ar_, lda, br_, ldb, want, ldc); /* the emulated result */
    if (output_round)
        for (size_t i = 0; i < clen; i++)
            want[i] = round_value(want[i]);
    /* S = |alpha| |A||B| + |beta| |C|, the scale of the bound, by the real
     * routine on absolute values (the orders of the sums do not matter to
     * a scale; its fp32 error is allowed for below). */
    struct gcase abs_case = *g;
    abs_case.alpha = fabsf(g->alpha);
    abs_case.beta = fabsf(g->beta);
    float *aa = malloc(alen * 4), *ba = malloc(blen * 4), *scale = malloc(clen * 4);
    for (size_t i = 0; i < alen; i++)
        aa[i] = fabsf(ar_[i]);
    for (size_t i = 0; i < blen; i++)
        ba[i] = fabsf(br_[i]);
    for (size_t i = 0; i < clen; i++)
        scale[i] = fabsf(output_round && g->beta != 0.0f ? round_value(c0[i]) : c0[i]);
    call(&abs_case, 1, aa, lda, ba, ldb, scale, ldc);
    uint64_t before = threaded ? 0 : native_calls();
    if (blas_threads)
        set_blas_threads(blas_threads);
    call(g, 0, a, lda, b, ldb, c, ldc);
    if (blas_threads)
        set_blas_threads(1);
    checks++;
    if (!threaded) {
        uint64_t ran = native_calls() - before;
        if (ran != (uint64_t)expect_native) {
            char d[64];
            snprintf(d, sizeof d, " (native counter moved by %llu)", (unsigned long long)ran);
            fail(expect_native ? "did not run native" : "ran native", g, d);
        }
    }
    double worst = 0;
    int bad = 0;
    for (blasint i = 0; i < g->m && !bad; i++)
        for (blasint j = 0; j < g->n; j++) {
            size_t p = at(row, i, j, ldc);
            if (!expect_native) {
                if (memcmp(&c[p], &want[p], 4) != 0) {
                    char d[96];
                    snprintf(d, sizeof d, " (element %lld,%lld: %.9g, want %.9g)", (long long)i,
                             (long long)j, c[p], want[p]);
                    fail("differs from the emulated result", g, d);
                    bad = 1;
                    break;
                }
                continue;
            }
            double s = scale[p] * (1.0 + g->k * ldexp(1, -23)); /* its own fp32 error */
            double bound = (2.0 * g->k + 6) * ldexp(1, -24) * s;
            if (output_round)
                bound += ldexp(1, dtype_fp16 ? -10 : -7) * fabs(want[p]);
            double e = fabs((double)c[p] - want[p]);
            if (!(e <= bound)) {
                char d[128];
                snprintf(d, sizeof d, " (element %lld,%lld: %.9g, emulated %.9g, bound %.3g)",
                         (long long)i, (long long)j, c[p], want[p], bound);
                fail("outside the bound", g, d);
                bad = 1;
                break;
            }
            if (s > 0 && e / s > worst)
                worst = e / s;
        }
    /* Padding of C (past the last row or column in each line) untouched. */
    blasint lines = row ? g->m : g->n, inner = row ? g->n : g->m;
    for (blasint l = 0; l < lines && !bad; l++)
        if (memcmp(c + (size_t)l * ldc + inner, c0 + (size_t)l * ldc + inner,
                   (size_t)(ldc - inner) * 4) != 0) {
            fail("wrote into the padding of C", g, "");
            bad = 1;
        }
    free(a), free(b), free(c), free(ar_), free(br_), free(want), free(c0), free(aa), free(ba),
        free(scale);
}

static struct gcase *cases;
static int n_cases;

static void build_cases(void)
{
    static const blasint shapes[][3] = {{1, 1, 1},     {7, 7, 7},    {33, 33, 33}, {7, 33, 1000},
                                        {1000, 7, 33}, {33, 1000, 7}, {1, 33, 7},   {200, 150, 1000},
                                        {333, 150, 1000}, {150, 333, 1000}};
    static const float ab[][2] = {{1.0f, 0.0f}, {-0.75f, 0.5f}};
    static const char tr[] = "NTC";
    cases = malloc(sizeof *cases * 2000);
    for (int f = 0; f < FORMS; f++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (int x = 0; x < 3; x++)
                for (int y = 0; y < 3; y++)
                    for (int pad = 0; pad < 2; pad++)
                        for (int v = 0; v < 2; v++)
                            cases[n_cases++] = (struct gcase){f, tr[x], tr[y], shapes[s][0],
                                                              shapes[s][1], shapes[s][2], pad * 3,
                                                              ab[v][0], ab[v][1], 0};
    /* One large square product. */
    cases[n_cases++] = (struct gcase){FORM_CBLAS_ROW, 'N', 'N', 1000, 1000, 1000, 0, 1.0f, 0.0f, 0};
    /* syrk: n x k shapes (one block up to n = 256, several beyond). */
    static const blasint syrk_shapes[][2] = {{1, 1},     {7, 33},   {33, 7},
                                             {150, 1000}, {333, 200}, {1000, 64}};
    for (int f = 0; f < FORMS; f++)
        for (size_t sh = 0; sh < sizeof syrk_shapes / sizeof *syrk_shapes; sh++)
            for (int u = 0; u < 2; u++)
                for (int x = 0; x < 3; x++)
                    for (int pad = 0; pad < 2; pad++)
                        for (int v = 0; v < 2; v++)
                            cases[n_cases++] = (struct gcase){
                                f, tr[x], u ? 'L' : 'U', syrk_shapes[sh][0], syrk_shapes[sh][0],
                                syrk_shapes[sh][1], pad * 3, ab[v][0], ab[v][1], 1};
    cases[n_cases++] = (struct gcase){FORM_CBLAS_COL, 'T', 'U', 1000, 1000, 1000, 0, 1.0f, 0.0f, 1};
}

struct worker {
    pthread_t id;
    int first, step;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    for (int i = w->first; i < n_cases; i += w->step)
        run_case(&cases[i], 0x9e3779b97f4a7c15ull + (uint64_t)i * 7919);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "native") != 0 && strcmp(argv[1], "emulated") != 0)) {
        fprintf(stderr, "usage: native_check native|emulated [--threads N]\n");
        return 2;
    }
    expect_native = strcmp(argv[1], "native") == 0;
    int nthreads = 1, do_fork = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--threads") == 0)
            nthreads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--blas-threads") == 0)
            blas_threads = atoi(argv[i + 1]);
    }
    for (int i = 2; i < argc; i++)
        do_fork |= strcmp(argv[i], "--fork") == 0;
    threaded = nthreads > 1;
    const char *dt = getenv("AMPSHIM_CPU_DTYPE") ? getenv("AMPSHIM_CPU_DTYPE") : getenv("AMPSHIM_DTYPE");
    dtype_fp16 = dt && strcmp(dt, "fp16") == 0;
    const char *out = getenv("AMPSHIM_OUTPUT");
    output_round = out && strcmp(out, "round") == 0;
    *(void **)&ctl = dlsym(RTLD_DEFAULT, "ampshim_ctl");
    void *lib = dlopen(REAL_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
    if (!ctl || !lib) {
        printf("FAIL: run under LD_PRELOAD=libampshim.so, linked to %s\n", REAL_LIBRARY);
        return 1;
    }
    if (expect_native && !check_cpu_has_bf16_units()) {
        printf("native_check: needs native bf16 units (avx512_bf16 or amx_bf16, not held back "
               "by ONEDNN_MAX_CPU_ISA): skipped\n");
        return 77;
    }
    void *dnnl = dlopen("libdnnl.so.2", RTLD_LAZY | RTLD_NOLOAD);
    if (expect_native && !dnnl && !(dnnl = dlopen("libdnnl.so.2", RTLD_LAZY))) {
        printf("native_check: libdnnl.so.2 (Debian's libdnnl2) is not installed: skipped\n");
        return 77;
    }
    *(void **)&real_cblas = dlsym(lib, "cblas_sgemm");
    *(void **)&real_f77 = dlsym(lib, "sgemm_");
    *(void **)&real_cblas_syrk = dlsym(lib, "cblas_ssyrk");
    *(void **)&real_f77_syrk = dlsym(lib, "ssyrk_");
    *(void **)&set_blas_threads = dlsym(lib, "openblas_set_num_threads");
    if (blas_threads && !set_blas_threads) {
        printf("FAIL: %s has no openblas_set_num_threads\n", REAL_LIBRARY);
        return 1;
    }
    if (blas_threads)
        set_blas_threads(1);
    build_cases();
    struct worker w[16];
    if (nthreads < 1 || nthreads > 16)
        nthreads = 1;
    uint64_t before = native_calls();
    for (int i = 0; i < nthreads; i++) {
        w[i] = (struct worker){0, i, nthreads};
        if (threaded)
            pthread_create(&w[i].id, NULL, work, &w[i]);
        else
            work(&w[i]);
    }
    for (int i = 0; threaded && i < nthreads; i++)
        pthread_join(w[i].id, NULL);
    uint64_t ran = native_calls() - before;
    checks++;
    if (ran != (expect_native ? (uint64_t)n_cases : 0)) {
        printf("FAIL: %llu of %d calls ran native, expected %s\n", (unsigned long long)ran, n_cases,
               expect_native ? "all" : "none");
        failures++;
    }
    if (do_fork) {
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            int before_failures = failures;
            uint64_t n0 = native_calls();
            for (int i = 0; i < n_cases; i++)
                run_case(&cases[i], 0x51ed2701u + (uint64_t)i);
            uint64_t n1 = native_calls();
            if (n1 - n0 != (expect_native ? (uint64_t)n_cases : 0))
                printf("FAIL: in the forked child %llu of %d calls ran native\n",
                       (unsigned long long)(n1 - n0), n_cases);
            _exit(failures == before_failures && n1 - n0 == (expect_native ? (uint64_t)n_cases : 0)
                      ? 0
                      : 1);
        }
        int status = 0;
        checks++;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            printf("FAIL: the forked child's cases (status %#x)\n", status);
            failures++;
        }
    }
    printf("native_check %s (%s, %d thread%s): %d passed, %d failed\n", argv[1],
           dtype_fp16 ? "fp16" : "bf16", nthreads, nthreads > 1 ? "s" : "", checks - failures,
           failures);
    return failures ? 1 : 0;
}
