/* An ordinary program with four named threads (worker-0 .. worker-3), each
 * calling cblas_sgemm in a loop. Each thread classifies every result it gets
 * against precomputed answers: the real routine on bf16-rounded operands (B),
 * on fp16-rounded ones (H), or on the plain fp32 operands (F); anything else
 * is X. Every 20 ms the counts are written to STATUS_FILE as
 * "name tid B H F X" lines, so a test can watch a thread's calls change
 * while ampctl steers the process. Runs until STOP_FILE exists (60 s at most).
 * usage: named_threads STATUS_FILE STOP_FILE */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/answers.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

enum { N = 24, THREADS = 4 };

static float a[N * N], b[N * N], want[3][N * N]; /* bf16, fp16, fp32 */
static _Atomic int stop;

struct worker {
    char name[16];
    _Atomic long tid;
    _Atomic unsigned long counts[4];
};
static struct worker workers[THREADS];

static void *work(void *arg)
{
    struct worker *w = arg;
    pthread_setname_np(pthread_self(), w->name);
    atomic_store(&w->tid, (long)syscall(SYS_gettid));
    float c[N * N];
    while (!atomic_load(&stop)) {
        cblas_sgemm(102, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
        int kind = 3;
        for (int k = 0; k < 3; k++)
            if (memcmp(c, want[k], sizeof c) == 0) {
                kind = k;
                break;
            }
        atomic_fetch_add(&w->counts[kind], 1);
        usleep(200);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    expected_answers(N, a, b, (float *[3]){want[0], want[1], want[2]});

    pthread_t tids[THREADS];
    for (int t = 0; t < THREADS; t++) {
        snprintf(workers[t].name, sizeof workers[t].name, "worker-%d", t);
        pthread_create(&tids[t], NULL, work, &workers[t]);
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    for (int tick = 0; tick < 3000 && access(argv[2], F_OK) != 0; tick++) {
        FILE *f = fopen(tmp, "w");
        for (int t = 0; t < THREADS; t++)
            fprintf(f, "%s %ld %lu %lu %lu %lu\n", workers[t].name, atomic_load(&workers[t].tid),
                    atomic_load(&workers[t].counts[0]), atomic_load(&workers[t].counts[1]),
                    atomic_load(&workers[t].counts[2]), atomic_load(&workers[t].counts[3]));
        fclose(f);
        rename(tmp, argv[1]);
        usleep(20000);
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < THREADS; t++)
        pthread_join(tids[t], NULL);
    return 0;
}
