/* Timing helpers shared by the benchmarks: a monotonic clock and medians. */
#ifndef AMPSHIM_BENCH_UTIL_H
#define AMPSHIM_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v in place and returns its median. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* n floats uniform in [-1, 1) from a small LCG (random data: a CPU or GPU
 * runs faster on zeros); the caller frees them. */
static inline float *filled(size_t n, unsigned seed)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; p && i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 9) & 0xffff) / 32768.0f - 1.0f;
    }
    return p;
}

/* Prints the CPU model and the flags that matter for low precision, as
 * every table's first line (figures compare only within one machine). */
static inline void print_cpu(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192], model[256] = "?";
    int bf16 = 0, amx = 0, fp16 = 0, avx512 = 0, cores = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            cores++;
            const char *colon = strchr(line, ':');
            if (colon)
                snprintf(model, sizeof model, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
        } else if (strncmp(line, "flags", 5) == 0) {
            avx512 = strstr(line, " avx512f") != NULL;
            bf16 = strstr(line, " avx512_bf16") != NULL;
            amx = strstr(line, " amx_bf16") != NULL;
            fp16 = strstr(line, " avx512_fp16") != NULL;
        }
    }
    if (f)
        fclose(f);
    printf("CPU: %s, %d logical cores; avx512f %s, avx512_bf16 %s, amx_bf16 %s, avx512_fp16 %s\n",
           model, cores, avx512 ? "yes" : "no", bf16 ? "yes" : "no", amx ? "yes" : "no",
           fp16 ? "yes" : "no");
}

#endif
