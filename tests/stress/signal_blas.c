/* BLAS from a signal handler: a timer interrupts a thread in the middle of
 * lowered products, and the handler makes products of its own. Each result,
 * the interrupted ones and the handler's, must be exact: the interrupted
 * call's rounded operands are its own (a nested call of the same thread
 * never takes the scratch buffer in use; it runs in fp32), and the handler's
 * is either lowered (no call was in progress) or fp32 (one was). Bounded in
 * time: one second of products.
 *
 * The BLAS is Debian's reference BLAS (its path the argument), opened at
 * run time and called through the shim's hook: its products take no lock
 * and allocate nothing, so a product interrupted anywhere inside it can be
 * followed by the handler's. OpenBLAS cannot promise that: with
 * OPENBLAS_CORETYPE=Haswell even its 64x64 sgemm takes its allocator's lock,
 * and the handler's call then waits forever for the call it interrupted.
 * usage: signal_blas LIBBLAS */
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "tests/check.h"
#include "tests/oracle.h"

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
static sgemm_fn cblas_sgemm; /* the shim's hook, found at run time */

enum { N = 64, H = 8 };
static float a[N * N], b[N * N], want[N * N];
static float ha[H * H], hb[H * H], h_lowered[H * H], h_plain[H * H];
static _Atomic long handler_calls, handler_wrong;
static sgemm_fn real_sgemm; /* the library's own, past the shim */

static void on_alarm(int sig)
{
    (void)sig;
    float c[H * H];
    cblas_sgemm(102, 111, 111, H, H, H, 1.0f, ha, H, hb, H, 0.0f, c, H);
    handler_calls++;
    if (memcmp(c, h_lowered, sizeof c) != 0 && memcmp(c, h_plain, sizeof c) != 0)
        handler_wrong++;
}

static void product_of_rounded(int n, const float *x, const float *y, float *out)
{
    static float rx[N * N], ry[N * N];
    for (int i = 0; i < n * n; i++) {
        rx[i] = oracle_bf16(x[i]);
        ry[i] = oracle_bf16(y[i]);
    }
    real_sgemm(102, 111, 111, n, n, n, 1.0f, rx, n, ry, n, 0.0f, out, n);
}

int main(int argc, char **argv)
{
    CHECK_SHIM_LOADED();
    void *lib = argc == 2 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    *(void **)&real_sgemm = lib ? dlsym(lib, "cblas_sgemm") : NULL;
    *(void **)&cblas_sgemm = dlsym(RTLD_DEFAULT, "cblas_sgemm");
    if (!real_sgemm || !cblas_sgemm || cblas_sgemm == real_sgemm) {
        printf("FAIL: no cblas_sgemm in %s, or no hook in front of it\n", argc == 2 ? argv[1] : "?");
        return 1;
    }
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)((i * 7919) % 1013) / 317.0f - 1.6f;
        b[i] = (float)((i * 6271) % 991) / 211.0f - 2.3f;
    }
    for (int i = 0; i < H * H; i++) {
        ha[i] = 1.0f + (float)i / 3.0f;
        hb[i] = 0.5f - (float)i / 7.0f;
    }
    product_of_rounded(N, a, b, want);
    product_of_rounded(H, ha, hb, h_lowered);
    real_sgemm(102, 111, 111, H, H, H, 1.0f, ha, H, hb, H, 0.0f, h_plain, H);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 200}, {0, 200}}; /* every 200 us */
    setitimer(ITIMER_REAL, &every, NULL);
    long products = 0, wrong = 0;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        float c[N * N];
        cblas_sgemm(102, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
        wrong += memcmp(c, want, sizeof c) != 0;
        products++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec + 1e-9 * (double)(now.tv_nsec - start.tv_nsec) < 1.0);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    CHECK(wrong == 0, "%ld of %ld interrupted products wrong", wrong, products);
    CHECK(handler_wrong == 0, "%ld of %ld signal-handler products wrong", (long)handler_wrong,
          (long)handler_calls);
    CHECK(handler_calls > 10, "the handler ran (%ld times)", (long)handler_calls);
    printf("signal_blas: %ld products, %ld from the handler; %d passed, %d failed\n", products,
           (long)handler_calls, checks - failures, (int)failures);
    return failures ? 1 : 0;
}
