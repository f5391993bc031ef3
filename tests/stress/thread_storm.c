/* Threads the way a busy program makes them, while ampctl polls and toggles
 * (driven by thread_storm.py):
 *  1. 320 threads at once (more than the control block's 192 slots), each
 *     calling cblas_sgemm;
 *  2. then, for SECONDS, threads created and destroyed in batches of 8 (slot
 *     reuse), each making a few products and ending at once;
 * and one long-lived thread whose name holds a quote and a backslash.
 * Every result must be an exact bf16-lowered or fp32 product (ampctl may
 * switch a thread either way at any time); anything else is counted wrong.
 * Prints "ready" once the storm is on, then "lowered L fp32 F wrong W" at
 * the end; exits 1 if W > 0.
 * usage: thread_storm SECONDS */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/answers.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

enum { N = 16, WIDE = 320, BATCH = 8 };
static float a[N * N], b[N * N], want[3][N * N];
static _Atomic unsigned long outcome[3]; /* lowered, fp32, wrong */
static _Atomic int stop;

static void products(int count)
{
    float c[N * N];
    for (int i = 0; i < count; i++) {
        cblas_sgemm(102, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
        int kind = memcmp(c, want[0], sizeof c) == 0   ? 0
                   : memcmp(c, want[2], sizeof c) == 0 ? 1
                                                       : 2;
        atomic_fetch_add(&outcome[kind], 1);
    }
}

static void *wide(void *arg)
{
    (void)arg;
    products(40);
    return NULL;
}

static void *brief(void *arg)
{
    (void)arg;
    products(5);
    return NULL;
}

static void *quoted(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "q\"uo\\te");
    while (!atomic_load(&stop)) {
        products(1);
        usleep(1000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    expected_answers(N, a, b, (float *[3]){want[0], want[1], want[2]});
    pthread_t q;
    pthread_create(&q, NULL, quoted, NULL);
    printf("ready\n");
    fflush(stdout);

    pthread_attr_t small;
    pthread_attr_init(&small);
    pthread_attr_setstacksize(&small, 256 << 10);
    pthread_t many[WIDE];
    int made = 0;
    for (int i = 0; i < WIDE; i++)
        made += pthread_create(&many[i], &small, wide, NULL) == 0 ? 1 : 0;
    for (int i = 0; i < made; i++)
        pthread_join(many[i], NULL);
    if (made < WIDE)
        fprintf(stderr, "thread_storm: made only %d of %d threads\n", made, WIDE);

    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long batches = 0;
    do {
        pthread_t batch[BATCH];
        for (int i = 0; i < BATCH; i++)
            pthread_create(&batch[i], &small, brief, NULL);
        for (int i = 0; i < BATCH; i++)
            pthread_join(batch[i], NULL);
        batches++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) < seconds);
    atomic_store(&stop, 1);
    pthread_join(q, NULL);
    printf("threads %d batches %lu lowered %lu fp32 %lu wrong %lu\n", made, batches,
           atomic_load(&outcome[0]), atomic_load(&outcome[1]), atomic_load(&outcome[2]));
    return atomic_load(&outcome[2]) || made < WIDE ? 1 : 0;
}
