/* Four threads call cblas_sgemm at once, each on its own matrices of a
 * different size, 100 times; every result must equal the real OpenBLAS
 * routine on bf16-rounded operands (computed before the threads start). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/oracle.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

enum { THREADS = 4, ITERATIONS = 100 };

struct job {
    int n;
    float *a, *b, *c, *want;
    int failures;
};

static void *work(void *arg)
{
    struct job *j = arg;
    size_t nn = (size_t)j->n * j->n;
    for (int it = 0; it < ITERATIONS; it++) {
        memset(j->c, 0, nn * sizeof(float));
        cblas_sgemm(102, 111, 111, j->n, j->n, j->n, 1.0f, j->a, j->n, j->b, j->n, 0.0f, j->c, j->n);
        if (memcmp(j->c, j->want, nn * sizeof(float)) != 0)
            j->failures++;
    }
    return NULL;
}

int main(void)
{
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    sgemm_fn real = lib ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
    if (!real) {
        fprintf(stderr, "threads_check: libopenblas.so.0 not loaded\n");
        return 1;
    }
    struct job jobs[THREADS];
    pthread_t tids[THREADS];
    for (int t = 0; t < THREADS; t++) {
        int n = 40 + 23 * t;
        size_t nn = (size_t)n * n;
        jobs[t] = (struct job){n, malloc(nn * 4), malloc(nn * 4), malloc(nn * 4), calloc(nn, 4), 0};
        float *ra = malloc(nn * 4), *rb = malloc(nn * 4);
        for (size_t i = 0; i < nn; i++) {
            jobs[t].a[i] = (float)((i * 7919 + (size_t)t * 104729) % 1000) / 333.3f - 1.5f;
            jobs[t].b[i] = (float)((i * 6271 + (size_t)t * 7) % 997) / 211.7f - 2.25f;
            ra[i] = oracle_bf16(jobs[t].a[i]);
            rb[i] = oracle_bf16(jobs[t].b[i]);
        }
        real(102, 111, 111, n, n, n, 1.0f, ra, n, rb, n, 0.0f, jobs[t].want, n);
        free(ra);
        free(rb);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_create(&tids[t], NULL, work, &jobs[t]);
    int failures = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(tids[t], NULL);
        failures += jobs[t].failures;
    }
    printf("threads_check: %d passed, %d failed\n", THREADS * ITERATIONS - failures, failures);
    return failures ? 1 : 0;
}
