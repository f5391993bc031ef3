/* How long a control-block change takes to reach four busy threads: four
 * threads call a 4x4 cblas_sgemm in a loop while the main thread flips
 * opt.enabled through ampshim_ctl (as ampctl does: write, bump the
 * generation) and spins until every thread's active flag shows the change.
 * Also the hook's fast-path cost with the block live, for reference.
 * usage: control_bench PATH/TO/libampshim.so (re-runs itself preloaded) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_util.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                 float *, int);
typedef int (*ctl_fn)(const char *, void *, size_t *, const void *, size_t);

enum { MAX_THREADS = 4, FLIPS = 201 };
static _Atomic int stop;
static _Atomic long tids[MAX_THREADS];
static int threads;

static void *busy(void *arg)
{
    long i = (long)(intptr_t)arg;
    atomic_store(&tids[i], (long)syscall(SYS_gettid));
    float a[16] = {1}, c[16];
    while (!atomic_load(&stop))
        cblas_sgemm(102, 111, 111, 4, 4, 4, 1.0f, a, 4, a, 4, 0.0f, c, 4);
    return NULL;
}

static int all_active(ctl_fn ctl, int want)
{
    for (int i = 0; i < threads; i++) {
        char name[64];
        int active = -1;
        size_t len = sizeof active;
        snprintf(name, sizeof name, "thread.%ld.active", atomic_load(&tids[i]));
        if (ctl(name, &active, &len, NULL, 0) != 0 || active != want)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !getenv("LD_PRELOAD")) {
        setenv("LD_PRELOAD", argv[1], 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    ctl_fn ctl = (ctl_fn)dlsym(RTLD_DEFAULT, "ampshim_ctl");
    if (!ctl) {
        fprintf(stderr, "usage: control_bench PATH/TO/libampshim.so\n");
        return 2;
    }
    printf("a change (opt.enabled flipped %d times) reaching threads busy in 4x4 sgemm loops, "
           "on %ld cores\n",
           FLIPS, sysconf(_SC_NPROCESSORS_ONLN));
    printf("%-16s %12s %12s %12s\n", "busy threads", "median", "p90", "max");
    static const int counts[] = {1, 4};
    for (int k = 0; k < 2; k++) {
        threads = counts[k];
        atomic_store(&stop, 0);
        pthread_t th[MAX_THREADS];
        for (long i = 0; i < threads; i++) {
            atomic_store(&tids[i], 0);
            pthread_create(&th[i], NULL, busy, (void *)(intptr_t)i);
        }
        while (!all_active(ctl, 1))
            usleep(1000);
        double us[FLIPS];
        for (int f = 0; f < FLIPS; f++) {
            int want = f % 2 == 0 ? 0 : 1;
            double t0 = now();
            ctl("opt.enabled", NULL, NULL, &want, sizeof want);
            while (!all_active(ctl, want))
                ;
            us[f] = (now() - t0) * 1e6;
        }
        atomic_store(&stop, 1);
        for (int i = 0; i < threads; i++)
            pthread_join(th[i], NULL);
        int on = 1;
        ctl("opt.enabled", NULL, NULL, &on, sizeof on);
        double med = median(us, FLIPS);
        printf("%-16d %9.1f us %9.1f us %9.1f us\n", threads, med, us[FLIPS * 9 / 10],
               us[FLIPS - 1]);
    }
    printf("(more busy threads than cores: a thread learns of the change when it is next\n"
           " scheduled; the fast-path cost with the block live is blas_bench's passthrough row)\n");
    return 0;
}
