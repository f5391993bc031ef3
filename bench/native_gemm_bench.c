/* Lowered cblas_sgemm through the native executor (oneDNN bf16 matmul)
 * beside the emulated path (rounded operands, fp32 sgemm) and plain fp32
 * sgemm, side by side in one process under the shim: each round runs the
 * three in turn (ampshim_ctl switches opt.enabled and opt.cpu_kernel), and
 * each cell is the median over rounds. Square row-major products, one
 * thread and all of OpenBLAS's threads; then four program threads each
 * calling sgemm 1024 in a loop (aggregate GFLOP/s). After each cell the
 * shim's counters say which path ran, so a silent fallback shows.
 * Run under LD_PRELOAD=libampshim.so with AMPSHIM_LOG=info (the info line
 * names oneDNN's version and the implementation it picked).
 * usage: native_gemm_bench [max n] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "bench_util.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                 float *, int);
void cblas_ssyrk(int, int, int, int, int, float, const float *, int, float, float *, int);
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);

typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);
static ctl_fn ctl;

enum mode { FP32, EMULATED, NATIVE, MODES };
static const char *const mode_names[MODES] = {"fp32", "emulated", "native"};

static void set_mode(enum mode m)
{
    int on = m != FP32;
    ctl("opt.enabled", NULL, NULL, &on, sizeof on);
    const char *k = m == NATIVE ? "native" : "emulate";
    ctl("opt.cpu_kernel", NULL, NULL, k, strlen(k) + 1);
}

static const char *symbol = "cblas_sgemm";

static uint64_t counter(const char *which)
{
    char name[64];
    uint64_t v = 0;
    size_t len = sizeof v;
    snprintf(name, sizeof name, "stats.%s.%s", symbol, which);
    ctl(name, &v, &len, NULL, 0);
    return v;
}

static int use_syrk; /* time cblas_ssyrk (C = A A^T, upper) instead of sgemm */

static void gemm(int n, const float *a, const float *b, float *c)
{
    if (use_syrk)
        cblas_ssyrk(101, 121, 111, n, n, 1.0f, a, n, 0.0f, c, n);
    else
        cblas_sgemm(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

/* Median milliseconds per mode for one size; checks the path by counters. */
static void row(int n, int rounds, const char *threads_label)
{
    size_t nn = (size_t)n * n;
    float *a = filled(nn, 1), *b = filled(nn, 2), *c = malloc(nn * sizeof *c);
    double t[MODES][16];
    int reps = n <= 128 ? 200 : n <= 256 ? 40 : n <= 512 ? 8 : 1;
    uint64_t native0 = counter("native"), emulated0 = counter("emulated");
    for (int m = 0; m < MODES; m++) { /* warm: primitives made, pages touched */
        set_mode((enum mode)m);
        gemm(n, a, b, c);
    }
    for (int r = 0; r < rounds; r++)
        for (int m = 0; m < MODES; m++) {
            set_mode((enum mode)m);
            /* OpenBLAS's worker threads spin for a while (up to about
             * 0.1 s) after an fp32 call before they sleep, and would take
             * the cores the next path's threads need: with more than one
             * thread each path is timed after a pause longer than that. */
            nanosleep(&(struct timespec){0, openblas_get_num_threads() > 1 ? 150000000 : 20000000},
                      NULL);
            double t0 = now();
            for (int i = 0; i < reps; i++)
                gemm(n, a, b, c);
            t[m][r] = (now() - t0) / reps;
        }
    uint64_t native = counter("native") - native0, emulated = counter("emulated") - emulated0;
    double ms[MODES];
    for (int m = 0; m < MODES; m++)
        ms[m] = 1e3 * median(t[m], rounds);
    double gf = (use_syrk ? 1.0 : 2.0) * n * n * (double)n / 1e9; /* syrk: one triangle */
    printf("%5d %8s %10.3f %10.3f %10.3f %9.2f %9.2f %8.1f %8.1f %9llu %9llu\n", n, threads_label,
           ms[FP32], ms[EMULATED], ms[NATIVE], ms[NATIVE] / ms[FP32], ms[NATIVE] / ms[EMULATED],
           gf / ms[FP32] * 1e3, gf / ms[NATIVE] * 1e3, (unsigned long long)native,
           (unsigned long long)emulated);
    free(a), free(b), free(c);
}

/* Four program threads, each looping over its own sgemm 1024. */
static _Atomic int stop;
struct worker {
    pthread_t id;
    long calls;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    int n = 1024;
    size_t nn = (size_t)n * n;
    float *a = filled(nn, 3), *b = filled(nn, 4), *c = malloc(nn * sizeof *c);
    while (!stop) {
        gemm(n, a, b, c);
        w->calls++;
    }
    free(a), free(b), free(c);
    return NULL;
}

static double aggregate(enum mode m, double seconds)
{
    set_mode(m);
    struct worker w[4] = {{0}};
    stop = 0;
    for (int i = 0; i < 4; i++)
        pthread_create(&w[i].id, NULL, work, &w[i]);
    double t0 = now();
    while (now() - t0 < seconds)
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    stop = 1;
    long calls = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(w[i].id, NULL);
        calls += w[i].calls;
    }
    return calls * 2.0 * 1024 * 1024 * 1024 / (now() - t0) / 1e9;
}

int main(int argc, char **argv)
{
    int max_n = argc > 1 ? atoi(argv[1]) : 4096;
    *(void **)&ctl = dlsym(RTLD_DEFAULT, "ampshim_ctl");
    if (!ctl) {
        printf("run under LD_PRELOAD=libampshim.so: skipped\n");
        return 77;
    }
    print_cpu();
    int all = openblas_get_num_threads();
    /* The first lowered call opens oneDNN and says which kernel it uses. */
    float one[16 * 16] = {0}, out[16 * 16];
    set_mode(NATIVE);
    cblas_sgemm(101, 111, 111, 16, 16, 16, 1.0f, one, 16, one, 16, 0.0f, out, 16);
    fflush(stderr);
    printf("lowered cblas_sgemm (bf16, row major, NN, alpha 1, beta 0), square n; "
           "median ms per call over rounds alternating the three paths\n");
    printf("%5s %8s %10s %10s %10s %9s %9s %8s %8s %9s %9s\n", "n", "threads", "fp32 ms", "emul ms",
           "native ms", "nat/fp32", "nat/emul", "fp32 GF", "nat GF", "#native", "#emulated");
    static const int sizes[] = {32, 48, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096};
    for (int pass = 0; pass < 2; pass++) {
        int threads = pass == 0 ? 1 : all;
        if (pass == 1 && all == 1)
            break;
        openblas_set_num_threads(threads);
        char label[16];
        snprintf(label, sizeof label, "%d", threads);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max_n; i++)
            row(sizes[i], sizes[i] >= 2048 ? 3 : 5, label);
    }
    printf("\nlowered cblas_ssyrk (C = A A^T, upper, row major), one thread: native runs it as "
           "row blocks of C, about half a GEMM\n");
    use_syrk = 1;
    symbol = "cblas_ssyrk";
    openblas_set_num_threads(1);
    static const int syrk_sizes[] = {128, 256, 512, 1024, 2048};
    for (size_t i = 0; i < sizeof syrk_sizes / sizeof *syrk_sizes && syrk_sizes[i] <= max_n; i++)
        row(syrk_sizes[i], 5, "1");
    use_syrk = 0;
    symbol = "cblas_sgemm";
    openblas_set_num_threads(all);
    printf("\nfour program threads each calling sgemm 1024 in a loop (OpenBLAS threads %d), "
           "aggregate GFLOP/s over 3 s each:\n",
           all);
    double g[MODES];
    for (int m = 0; m < MODES; m++)
        g[m] = aggregate((enum mode)m, 3.0);
    printf("fp32 %.1f  emulated %.1f  native %.1f  (native/fp32 %.2fx)\n", g[FP32], g[EMULATED],
           g[NATIVE], g[NATIVE] / g[FP32]);
    (void)mode_names;
    return 0;
}
