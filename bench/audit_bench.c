/* The accuracy audit's cost: cblas_sgemm (square, row major, one thread)
 * lowered as usual, then lowered with AMPSHIM_AUDIT on (every call, and
 * every 4th and 16th call of the site), side by side in one process under
 * the shim: each round runs every mode in turn (ampshim_ctl switches
 * opt.audit and opt.audit_sample), each cell is the median over rounds of
 * one call's time averaged over a batch of calls (a batch is as many calls
 * as the sampling period, so sampled modes average over their cycle). The
 * ratios are to the plain lowered call. AMPSHIM_AUDIT=auto's steady state
 * (the site past its probation, lowered, audited again every 16th, 64th
 * (the default) or 256th call: a batch is one such cycle) is in the same
 * rounds; the goal is within 1.15 times the lowered call at the default. The audit counters of the site are
 * printed after the table, so a silent non-audit shows.
 * Run under LD_PRELOAD=libampshim.so.
 * usage: audit_bench [n ...] (default 256 1024) */
#include <dlfcn.h>
#include <stdint.h>
#include <unistd.h>

#include "bench_util.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                 float *, int);
void openblas_set_num_threads(int);

typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);
static ctl_fn ctl;

enum mode { FP32, LOWERED, AUDIT_ALL, AUDIT_4, AUDIT_16, AUTO_16, AUTO_64, AUTO_256, MODES };
static const char *const mode_names[MODES] = {"fp32",     "lowered", "audit",   "audit/4",
                                              "audit/16", "auto/16", "auto/64", "auto/256"};
/* the sampling period (audit), or AMPSHIM_AUDIT_RECHECK (auto) */
static const unsigned sample_of[MODES] = {1, 1, 1, 4, 16, 16, 64, 256};

static void set_text(const char *name, const char *value)
{
    ctl(name, NULL, NULL, value, strlen(value) + 1);
}

static void set_mode(enum mode m)
{
    int on = m != FP32;
    ctl("opt.enabled", NULL, NULL, &on, sizeof on);
    set_text("opt.audit", m >= AUTO_16 ? "auto" : m >= AUDIT_ALL ? "1" : "0");
    uint64_t sample = m >= AUTO_16 ? 1 : sample_of[m];
    ctl("opt.audit_sample", NULL, NULL, &sample, sizeof sample);
    uint64_t recheck = sample_of[m];
    ctl("opt.audit_recheck", NULL, NULL, &recheck, sizeof recheck);
}

__attribute__((noinline)) static void product(int n, const float *a, const float *b, float *c)
{
    cblas_sgemm(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

int main(int argc, char **argv)
{
    *(void **)&ctl = dlsym(RTLD_DEFAULT, "ampshim_ctl");
    if (!ctl) {
        fprintf(stderr, "audit_bench: run under LD_PRELOAD=libampshim.so\n");
        return 1;
    }
    openblas_set_num_threads(1);
    int sizes[8] = {256, 1024}, n_sizes = 2;
    if (argc > 1) {
        n_sizes = 0;
        for (int i = 1; i < argc && n_sizes < 8; i++)
            sizes[n_sizes++] = atoi(argv[i]);
    }
    print_cpu();
    const char *kernel = getenv("AMPSHIM_CPU_KERNEL");
    printf("cblas_sgemm, row major, one OpenBLAS thread; CPU kernel %s; ms per call "
           "(median of rounds), ratio to the lowered call\n",
           kernel ? kernel : "auto");
    printf("%6s", "n");
    for (int m = 0; m < MODES; m++)
        printf(" %10s", mode_names[m]);
    for (int m = AUDIT_ALL; m < MODES; m++)
        printf(" %9s/low", mode_names[m]);
    printf("\n");
    for (int s = 0; s < n_sizes; s++) {
        int n = sizes[s];
        size_t elems = (size_t)n * n;
        float *a = filled(elems, 1), *b = filled(elems, 2), *c = filled(elems, 3);
        int rounds = n <= 256 ? 15 : 3;
        double t[MODES][16];
        set_mode(AUTO_64); /* auto's probation, before any timing */
        for (int i = 0; i < 16; i++)
            product(n, a, b, c);
        for (int r = 0; r < rounds; r++)
            for (int m = 0; m < MODES; m++) {
                set_mode((enum mode)m);
                product(n, a, b, c); /* the change reaches the thread; warm */
                unsigned batch = m >= AUTO_16 ? sample_of[m] : sample_of[m] * (n <= 256 ? 4 : 1);
                double t0 = now();
                for (unsigned i = 0; i < batch; i++)
                    product(n, a, b, c);
                t[m][r] = (now() - t0) / batch;
            }
        double med[MODES];
        printf("%6d", n);
        for (int m = 0; m < MODES; m++) {
            med[m] = median(t[m], rounds);
            printf(" %10.3f", 1e3 * med[m]);
        }
        for (int m = AUDIT_ALL; m < MODES; m++)
            printf(" %13.2f", med[m] / med[LOWERED]);
        printf("\n");
        free(a);
        free(b);
        free(c);
    }
    set_mode(FP32);
    /* What the audit recorded, from the shim's own table. */
    fflush(stdout);
    const char *ampctl = getenv("AMPCTL");
    if (ampctl) {
        char full[4200];
        snprintf(full, sizeof full, "env -u LD_PRELOAD '%s' audit %ld", ampctl, (long)getpid());
        if (system(full) != 0)
            printf("(ampctl audit failed)\n");
    }
    return 0;
}
