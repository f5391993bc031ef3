/* A process's life under the shim, the hard parts, one mode per run
 * (process_life.sh runs them all and checks that nothing is printed):
 *  fork     4 threads inside sgemm loops while the main thread forks 20
 *           times; each child's first product is lowered and exact, and the
 *           child has its own block (process.pid is its pid)
 *  spawn    vfork+exec and posix_spawn of this program ("child" mode) while
 *           threads are busy; exec inherits the shim: the child lowers
 *  atexit   products from an atexit handler and a destructor, which run
 *           after main returns (and, for the destructor, after the shim's own
 *           exit report): exact; a wrong one exits 3
 *  cancel   a thread cancelled while it makes products, its cleanup handler
 *           making one more; threads cancelled right at their first call
 *           (set-up reads files: cancellation points) must not leave a lock
 *           held: the main thread's products after that finish (alarm: 20 s)
 *  rlimit   address space limited so the rounded copies cannot be had: the
 *           product falls back to exact fp32, silently
 * usage: process_life MODE */
#include <dlfcn.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/probe_product.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
/* The shim's API, found at run time (the program is not linked to it). */
static int ampshim_ctl(const char *name, void *oldp, size_t *oldlenp, const void *newp,
                       size_t newlen)
{
    int (*f)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                            "ampshim_ctl");
    return f ? f(name, oldp, oldlenp, newp, newlen) : -1;
}

static int api(const char *name)
{
    int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, name);
    return f ? f() : -1;
}

extern char **environ;

static float product(void)
{
    return probe_product(cblas_sgemm);
}
static const float lowered = PROBE_LOWERED;

static _Atomic int stop;

static void *busy(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        if (product() != lowered)
            return (void *)1;
    return NULL;
}

static int child_checks(void)
{
    uint64_t pid = 0;
    size_t len = sizeof pid;
    int ok = product() == lowered;
    ok &= ampshim_ctl("process.pid", &pid, &len, NULL, 0) == 0 && pid == (uint64_t)getpid();
    return ok ? 0 : 1;
}

static void start_busy(pthread_t *t, int n)
{
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, busy, NULL);
}

static void stop_busy(pthread_t *t, int n)
{
    atomic_store(&stop, 1);
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        CHECK(r == NULL, "busy thread %d got a wrong product", i);
    }
}

static int wait_ok(pid_t pid, const char *what)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return 0;
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status %#x", what, status);
    return 1;
}

static void mode_fork(void)
{
    pthread_t t[4];
    start_busy(t, 4);
    for (int i = 0; i < 20; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_checks());
        wait_ok(pid, "fork");
    }
    stop_busy(t, 4);
}

static void mode_spawn(const char *self)
{
    pthread_t t[2];
    start_busy(t, 2);
    char *argv[] = {(char *)self, "child", NULL};
    for (int i = 0; i < 5; i++) {
        pid_t pid = vfork();
        if (pid == 0) {
            execve(self, argv, environ);
            _exit(127);
        }
        wait_ok(pid, "vfork+exec");
        pid_t spawned;
        CHECK(posix_spawn(&spawned, self, NULL, NULL, argv, environ) == 0, "posix_spawn");
        wait_ok(spawned, "posix_spawn");
    }
    stop_busy(t, 2);
}

static void at_exit_product(void)
{
    if (product() != lowered)
        _exit(3);
}

__attribute__((destructor)) static void destructor_product(void)
{
    if (getenv("PROCESS_LIFE_ATEXIT") && product() != lowered)
        _exit(3);
}

static void cleanup_product(void *arg)
{
    *(float *)arg = product();
}

static void *cancelled(void *arg)
{
    pthread_cleanup_push(cleanup_product, arg);
    for (;;) {
        product();
        pthread_testcancel();
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void *first_call(void *arg)
{
    (void)arg;
    for (;;) {
        product();
        pthread_testcancel();
    }
    return NULL;
}

static void mode_cancel(void)
{
    alarm(20);
    float from_cleanup = 0;
    pthread_t t;
    pthread_create(&t, NULL, cancelled, &from_cleanup);
    usleep(20000);
    pthread_cancel(t);
    void *r;
    pthread_join(t, &r);
    CHECK(r == PTHREAD_CANCELED, "the thread was cancelled");
    CHECK(from_cleanup == lowered, "the cleanup handler's product is lowered (%a)", from_cleanup);
    /* Cancelled at once: the cancellation may land in the first call's set-up. */
    for (int i = 0; i < 50; i++) {
        pthread_create(&t, NULL, first_call, NULL);
        pthread_cancel(t);
        pthread_join(t, &r);
        CHECK(product() == lowered, "a product after cancelling a thread at its first call");
    }
}

static void mode_rlimit(void)
{
    enum { M = 8, N = 8, K = 2000000 }; /* A and B: 64 MB each; rounded copies need 64 MB more */
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    static float c[M * N], exact[M * N];
    for (size_t i = 0; i < (size_t)M * K; i++)
        a[i] = b[i] = 1.0f + (float)(i % 7) * 0x1p-9f;
    api("ampshim_fp32_push");
    cblas_sgemm(102, 111, 111, M, N, K, 1.0f, a, M, b, K, 0.0f, exact, M);
    api("ampshim_fp32_pop");
    /* No room for anything large any more. */
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    struct rlimit lim = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (16 << 20), RLIM_INFINITY};
    lim.rlim_max = lim.rlim_cur;
    CHECK(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit");
    cblas_sgemm(102, 111, 111, M, N, K, 1.0f, a, M, b, K, 0.0f, c, M);
    CHECK(memcmp(c, exact, sizeof c) == 0, "without scratch the product is exact fp32");
    CHECK(product() == lowered, "a small product is still lowered");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "child") == 0)
        return child_checks();
    CHECK_SHIM_LOADED();
    if (strcmp(mode, "fork") == 0)
        mode_fork();
    else if (strcmp(mode, "spawn") == 0)
        mode_spawn(argv[0]);
    else if (strcmp(mode, "atexit") == 0)
        atexit(at_exit_product);
    else if (strcmp(mode, "cancel") == 0)
        mode_cancel();
    else if (strcmp(mode, "rlimit") == 0)
        mode_rlimit();
    else
        return 2;
    printf("process_life %s: %d passed, %d failed\n", mode, checks - failures, (int)failures);
    return failures ? 1 : 0;
}
