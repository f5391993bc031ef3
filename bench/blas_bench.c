/* BLAS benchmarks, side by side in one run:
 *   1. hook cost: a 4x4 cblas_sgemm / sgemm_ called directly (the real
 *      OpenBLAS function through a dlopen handle) and through the shim, with
 *      autocast disabled, with a passthrough policy, lowered (the size rule
 *      off: AMPSHIM_LOWER_MIN=0) with and without the spread check
 *      (AMPSHIM_SPREAD_LOSS=off), and as shipped (the size rule runs it as
 *      made, counted small);
 *      the same with a second BLAS (Debian's ILP64 OpenBLAS, same plain
 *      names) loaded, so each call is bound for its caller;
 *   2. lowered sgemm / fp32 sgemm at n = 256, 1024, 2048.
 * usage: blas_bench PATH/TO/libampshim.so
 * The driver re-runs itself with the shim preloaded under each setting; each
 * child interleaves direct and hooked timings and reports medians. */
#include <dlfcn.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "bench_util.h"

extern char **environ;

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                 float *, int);
void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *);
typedef void (*cblas_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*f77_fn)(const char *, const char *, const int *, const int *, const int *,
                       const float *, const float *, const int *, const float *, const int *,
                       const float *, float *, const int *);

/* ns per call of a 4x4 sgemm, direct and hooked, CBLAS and Fortran. Small
 * batches alternate direct and hooked calls; the extra cost is the median of
 * the per-round differences, which cancels the machine's slow drift. */
static void child_tiny(void)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    sched_setaffinity(0, sizeof one, &one);
    /* A second library defining the same names, as an ILP64 extension
     * module would bring: the hooks then bind each call for its caller. */
    if (getenv("BLAS_BENCH_SECOND_BLAS") && !dlopen("libopenblas64.so.0", RTLD_NOW | RTLD_LOCAL))
        return;
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    cblas_fn direct = (cblas_fn)dlsym(lib, "cblas_sgemm");
    f77_fn direct77 = (f77_fn)dlsym(lib, "sgemm_");
    float a[16], b[16], c[16], one_f = 1.0f, zero = 0.0f;
    int four = 4;
    for (int i = 0; i < 16; i++)
        a[i] = b[i] = 0.25f * (float)i;
    enum { CALLS = 4000, ROUNDS = 301 };
    static double t[4][ROUNDS], diff[2][ROUNDS];
    for (int warm = 0; warm < 20000; warm++) {
        cblas_sgemm(102, 111, 111, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
        direct(102, 111, 111, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
    }
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now();
        for (int i = 0; i < CALLS; i++)
            direct(102, 111, 111, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
        double t1 = now();
        for (int i = 0; i < CALLS; i++)
            cblas_sgemm(102, 111, 111, 4, 4, 4, 1.0f, a, 4, b, 4, 0.0f, c, 4);
        double t2 = now();
        for (int i = 0; i < CALLS; i++)
            direct77("N", "N", &four, &four, &four, &one_f, a, &four, b, &four, &zero, c, &four);
        double t3 = now();
        for (int i = 0; i < CALLS; i++)
            sgemm_("N", "N", &four, &four, &four, &one_f, a, &four, b, &four, &zero, c, &four);
        double t4 = now();
        t[0][r] = (t1 - t0) / CALLS * 1e9;
        t[1][r] = (t2 - t1) / CALLS * 1e9;
        t[2][r] = (t3 - t2) / CALLS * 1e9;
        t[3][r] = (t4 - t3) / CALLS * 1e9;
        diff[0][r] = t[1][r] - t[0][r];
        diff[1][r] = t[3][r] - t[2][r];
    }
    printf("%.2f %.2f %.2f %.2f %.2f %.2f\n", median(t[0], ROUNDS), median(t[1], ROUNDS),
           median(diff[0], ROUNDS), median(t[2], ROUNDS), median(t[3], ROUNDS),
           median(diff[1], ROUNDS));
}

/* ms per n x n x n sgemm, direct (fp32) and hooked (lowered). */
static void child_large(int n)
{
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    cblas_fn direct = (cblas_fn)dlsym(lib, "cblas_sgemm");
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4);
    for (size_t i = 0; i < nn; i++) {
        a[i] = (float)(i % 1000) * 0.001f;
        b[i] = (float)(i % 997) * 0.002f;
    }
    int rounds = n <= 256 ? 41 : n <= 1024 ? 11 : 5;
    double td[64], th[64];
    direct(102, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    cblas_sgemm(102, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    for (int r = 0; r < rounds; r++) {
        int reps = n <= 256 ? 20 : 1;
        double t0 = now();
        for (int i = 0; i < reps; i++)
            direct(102, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t1 = now();
        for (int i = 0; i < reps; i++)
            cblas_sgemm(102, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t2 = now();
        td[r] = (t1 - t0) / reps * 1e3;
        th[r] = (t2 - t1) / reps * 1e3;
    }
    printf("%.3f %.3f\n", median(td, rounds), median(th, rounds));
}

/* Runs this program as a child with the shim preloaded and extra settings;
 * returns its one line of output. */
static void run_child(const char *self, const char *shim, const char *const *settings,
                      const char *arg, char *out, size_t outlen)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 8, sizeof *env);
    size_t k = 0;
    static char preload[4096];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", shim);
    env[k++] = preload;
    for (int i = 0; settings[i]; i++)
        env[k++] = (char *)settings[i];
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "AMPSHIM_", 8))
            env[k++] = environ[i];
    char path[] = "/tmp/blas_bench_XXXXXX";
    int fd = mkstemp(path);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    char *argv[] = {(char *)self, (char *)"--child", (char *)arg, NULL};
    pid_t pid;
    int status;
    posix_spawn(&pid, self, &fa, NULL, argv, env);
    waitpid(pid, &status, 0);
    FILE *f = fdopen(fd, "r");
    rewind(f);
    if (!fgets(out, (int)outlen, f))
        out[0] = '\0';
    fclose(f);
    unlink(path);
    free(env);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--child") == 0) {
        if (strcmp(argv[2], "tiny") == 0)
            child_tiny();
        else
            child_large(atoi(argv[2]));
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: blas_bench PATH/TO/libampshim.so\n");
        return 2;
    }
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return 1;
    self[len] = '\0';

    static const struct {
        const char *label;
        const char *settings[5];
    } modes[] = {
        {"disabled (AMPSHIM_ENABLE=0)", {"AMPSHIM_ENABLE=0", NULL}},
        {"passthrough (policy)", {"AMPSHIM_POLICY=cpu:mm=passthrough,cpu:addmm=passthrough", NULL}},
        {"passthrough, beta decides", {"AMPSHIM_POLICY=cpu:mm=passthrough", NULL}},
        {"lowered to bf16 (LOWER_MIN=0)", {"AMPSHIM_LOWER_MIN=0", NULL}},
        {"lowered, no spread check", {"AMPSHIM_LOWER_MIN=0", "AMPSHIM_SPREAD_LOSS=off", NULL}},
        {"small: run as made (default)", {NULL}},
        {"two BLAS loaded: disabled", {"AMPSHIM_ENABLE=0", "BLAS_BENCH_SECOND_BLAS=1", NULL}},
        {"two BLAS loaded: passthrough",
         {"AMPSHIM_POLICY=cpu:mm=passthrough,cpu:addmm=passthrough", "BLAS_BENCH_SECOND_BLAS=1",
          NULL}},
        {"two BLAS loaded: lowered", {"AMPSHIM_LOWER_MIN=0", "BLAS_BENCH_SECOND_BLAS=1", NULL}},
    };
    print_cpu();
    printf("Hook cost: 4x4x4 sgemm, ns per call; medians of 301 paired rounds of 4000 calls,\n"
           "extra = median of the per-round differences (hooked - direct)\n");
    printf("%-31s %10s %10s %8s %10s %10s %8s\n", "mode", "cblas", "+shim", "extra", "sgemm_",
           "+shim", "extra");
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        char line[256];
        double d, h, x, d77, h77, x77;
        run_child(self, argv[1], modes[m].settings, "tiny", line, sizeof line);
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf", &d, &h, &x, &d77, &h77, &x77) != 6) {
            printf("%-31s (child failed)\n", modes[m].label);
            continue;
        }
        printf("%-31s %10.2f %10.2f %+8.2f %10.2f %10.2f %+8.2f\n", modes[m].label, d, h, x, d77,
               h77, x77);
    }

    printf("\nLowered cblas_sgemm (bf16) vs the real fp32 sgemm, n x n x n, ms (median)\n");
    printf("%8s %12s %12s %8s %14s\n", "n", "fp32", "lowered", "ratio", "GFLOP/s fp32");
    static const char *const sizes[] = {"256", "1024", "2048"};
    for (size_t s = 0; s < 3; s++) {
        char line[256];
        double d, h;
        const char *none[] = {NULL};
        run_child(self, argv[1], none, sizes[s], line, sizeof line);
        if (sscanf(line, "%lf %lf", &d, &h) != 2) {
            printf("%8s (child failed)\n", sizes[s]);
            continue;
        }
        double n = atof(sizes[s]);
        printf("%8s %12.3f %12.3f %8.3f %14.1f\n", sizes[s], d, h, h / d,
               2 * n * n * n / (d * 1e6));
    }
    return 0;
}
