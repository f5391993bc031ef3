/* AMPSHIM_AUDIT=auto on one call site of cblas_sgemm (64x64x64, the
 * function product, exported: the program is linked with -rdynamic). Each
 * call's output is compared bit for bit with the real OpenBLAS's fp32
 * result (through a dlopen handle the shim does not intercept): "F" when
 * the program got the fp32 result, "L" when it got a lowered one (within
 * the dtype's error of it). The expectations follow from
 * AMPSHIM_AUDIT_PROBATION (P) and AMPSHIM_AUDIT_RECHECK (R), which the
 * meson tests set:
 *   drift       P clean calls in probation (F), then lowered (L, but F at
 *               every Rth call: it is audited again and keeps fp32); then
 *               the products start to cancel (lowering loses them): within
 *               one recheck interval the site is fp32, and stays there.
 *   underflow   the same, the operands shrinking below fp16's subnormals
 *               instead (run with AMPSHIM_CPU_DTYPE=fp16).
 *   hysteresis  after a demotion, clean products again: the site comes back
 *               only after 4 P clean audits (4 P R calls), not sooner; three
 *               demotions keep it in fp32 for good.
 *   threads     four threads call the site at once: one decision for all.
 *   entry       a call-site entry of the user's (AMPSHIM_POLICY) lowers the
 *               site from its first call: no probation.
 *   off         AMPSHIM_AUDIT=auto switched on and off live (by ampctl set
 *               when AMPCTL names it, else ampshim_ctl):
 *               off, every call lowered; auto, probation from where the
 *               site stood.
 *   slow        the probation's lowered runs are slower than fp32 (the
 *               test-only AMPSHIM_TEST_SLOW_LOWERED=P): clean, but the site
 *               goes fp32, "not faster" (AMPSHIM_LOG_FILE says so); the
 *               delay gone, it comes back after 4 P clean, faster audits.
 *   sizes       the site's calls of two sizes, 64^3 and 256^3 (size classes
 *               apart), one in three small; the small calls' lowered runs
 *               slowed in probation only (AMPSHIM_TEST_SLOW_LOWERED=3:FLOPS):
 *               the site lowered, its small calls fp32 (not faster at
 *               their size), then, weighed again after P rechecks with the
 *               delay gone, lowered too.
 *   late        probation all small calls, slowed for good
 *               (AMPSHIM_TEST_SLOW_LOWERED=...:FLOPS): the site fp32, not
 *               faster; then large calls, a size auto has not weighed: their
 *               first three audited, then the site lowered for them, its
 *               small calls still fp32.
 * Prints the calls' letters and one ok/FAIL line per check. */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/shim_stats.h"

enum { N = 64 };

static void *blas;
static __typeof__(&cblas_sgemm) direct;
static int failures;

static void expect(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

static unsigned env_u(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    return v && *v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}

/* The site: one call of cblas_sgemm from here, n^3. */
__attribute__((noinline)) void product(int n, const float *a, const float *b, float *c)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
}

/* Clean products (entries in [-1, 1)), or cancelling ones: each pair of
 * terms is (1 + r 2^-9) b - b, and 1 + r 2^-9 rounds to 1 in bf16 and loses
 * most of r in fp16: the lowered result is mostly error. */
enum { CLEAN, CANCEL, TINY };

/* ... or tiny ones (TINY: clean ones times 2^-26, as gradients shrink
 * during training): fine in fp32, below fp16's subnormals (2^-24). */
static void operands(float *a, float *b, int kind, unsigned *seed)
{
    int cancel = kind == CANCEL;
    float scale = kind == TINY ? 0x1p-26f : 1.0f;
    for (int i = 0; i < N * N; i++) {
        float r = (float)rand_r(seed) / (float)RAND_MAX;
        a[i] = cancel ? ((i % N) % 2 ? -1.0f : 1.0f + r * 0x1p-9f) : (2 * r - 1) * scale;
    }
    for (int k = 0; k < N; k++)
        for (int j = 0; j < N; j++) {
            float r = (float)rand_r(seed) / (float)RAND_MAX;
            b[k * N + j] = cancel && k % 2 ? b[(k - 1) * N + j] : (2 * r - 1) * scale;
        }
}

/* One call: 'F' when the program got the fp32 result bit for bit, 'L'
 * when a lowered one, '?' when neither (wrong). */
static char call(int kind, unsigned *seed)
{
    static __thread float a[N * N], b[N * N], c[N * N], ref[N * N];
    operands(a, b, kind, seed);
    product(N, a, b, c);
    direct(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, ref, N);
    if (memcmp(c, ref, sizeof c) == 0)
        return 'F';
    double num = 0, den = 0;
    for (int i = 0; i < N * N; i++) {
        num += ((double)c[i] - ref[i]) * ((double)c[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    /* a lowered clean product is within a few dtype roundings; a lowered
     * cancelling or underflowing one may be all error, but is finite */
    return kind != CLEAN ? (isfinite(num) ? 'L' : '?') : sqrt(num / den) < 0.05 ? 'L' : '?';
}

/* A clean product of n^3 at the site: 'F', 'L' or '?' as call's. */
static char call_sized(int n, unsigned *seed)
{
    enum { MAX = 256 };
    static float a[MAX * MAX], b[MAX * MAX], c[MAX * MAX], ref[MAX * MAX];
    for (int i = 0; i < n * n; i++) {
        a[i] = 2 * (float)rand_r(seed) / (float)RAND_MAX - 1;
        b[i] = 2 * (float)rand_r(seed) / (float)RAND_MAX - 1;
    }
    product(n, a, b, c);
    direct(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, ref, n);
    if (memcmp(c, ref, (size_t)n * n * sizeof *c) == 0)
        return 'F';
    double num = 0, den = 0;
    for (int i = 0; i < n * n; i++) {
        num += ((double)c[i] - ref[i]) * ((double)c[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num / den) < 0.05 ? 'L' : '?';
}

/* A live setting, by `ampctl set PID NAME=VALUE` when AMPCTL names ampctl
 * (the change reaches the process at its next hooked call), else by
 * ampshim_ctl in the process. */
static int ctl_set(const char *name, const char *value)
{
    const char *ampctl = getenv("AMPCTL");
    if (ampctl) {
        char cmd[4400];
        snprintf(cmd, sizeof cmd, "env -u LD_PRELOAD '%s' set %ld %s=%s", ampctl, (long)getpid(),
                 name, value);
        return system(cmd) == 0 ? 0 : -1;
    }
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    return ctl ? ctl(name, NULL, NULL, value, strlen(value)) : -1;
}

/* Calls of kind `kind` (CLEAN, CANCEL, TINY);
 * letters appended to log. */
static void run(char *log, int *at, int calls, int kind, unsigned *seed)
{
    for (int i = 0; i < calls; i++)
        log[(*at)++] = call(kind, seed);
    log[*at] = 0;
}

static int count(const char *s, int from, int to, char letter)
{
    int n = 0;
    for (int i = from; i < to; i++)
        n += s[i] == letter;
    return n;
}

static void *thread_main(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    char *letters = calloc(41, 1);
    for (int i = 0; i < 40; i++)
        letters[i] = call(0, &seed);
    return letters;
}

int main(int argc, char **argv)
{
    blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    direct = blas ? (__typeof__(&cblas_sgemm))dlsym(blas, "cblas_sgemm") : NULL;
    if (argc != 2 || !direct) {
        fprintf(stderr,
                "usage: audit_auto drift|underflow|hysteresis|threads|entry|off|slow|sizes|late "
                "(linked to libopenblas.so.0)\n");
        return 2;
    }
    const char *mode = argv[1];
    int P = (int)env_u("AMPSHIM_AUDIT_PROBATION", 8), R = (int)env_u("AMPSHIM_AUDIT_RECHECK", 64);
    static char log[8192];
    int at = 0;
    unsigned seed = 1;
    if (strcmp(mode, "drift") == 0 || strcmp(mode, "underflow") == 0) {
        int bad = strcmp(mode, "drift") == 0 ? CANCEL : TINY;
        run(log, &at, P, 0, &seed);
        expect(count(log, 0, P, 'F') == P, "probation: every call keeps its fp32 result");
        int lowered_from = at;
        run(log, &at, 4 * R, 0, &seed);
        int ok = 1;
        for (int i = lowered_from; i < at; i++)
            ok &= log[i] == ((i + 1) % R == 0 ? 'F' : 'L');
        expect(ok, "after probation: lowered, every Rth call audited again (fp32 kept)");
        int drift = at;
        run(log, &at, 8 * R, bad, &seed);
        int first_f = drift;
        while (first_f < at && log[first_f] != 'F')
            first_f++;
        expect(first_f - drift < R, "drift: fp32 within one recheck interval");
        expect(count(log, first_f, at, 'F') == at - first_f, "... and fp32 from then on");
        /* The calls auto runs in fp32 by its decision count fp32, not
         * passthrough (the audited ones count lowered, as every audit). */
        uint64_t fp32 = shim_stat("cblas_sgemm", "fp32"),
                 through = shim_stat("cblas_sgemm", "passthrough");
        printf("counters: fp32 %llu, passthrough %llu\n", (unsigned long long)fp32,
               (unsigned long long)through);
        expect(fp32 > 0 && fp32 != UINT64_MAX && through == 0,
               "auto's fp32 decisions counted fp32, none passthrough");
    } else if (strcmp(mode, "hysteresis") == 0) {
        /* lowered, demoted by a cancelling stretch, then clean again */
        int demotions = 0, returned_after = -1;
        for (int cycle = 0; cycle < 3; cycle++) {
            run(log, &at, cycle == 0 ? P + R : 0, 0, &seed);
            run(log, &at, R, CANCEL, &seed); /* one recheck interval of cancellation */
            demotions++;
            int back = at;
            run(log, &at, 4 * P * R + 2 * R, 0, &seed);
            int first_l = back;
            while (first_l < at && log[first_l] != 'L')
                first_l++;
            if (cycle == 0)
                returned_after = first_l - back;
            if (cycle < 2) {
                char what[128];
                snprintf(what, sizeof what,
                         "demotion %d: back to lowered after %d clean calls (at least 4 P R = %d)",
                         demotions, first_l - back, 4 * P * R - R);
                expect(first_l < at && first_l - back >= 4 * P * R - R, what);
            } else {
                expect(first_l == at, "third demotion: fp32 for good, clean calls or not");
            }
        }
        (void)returned_after;
    } else if (strcmp(mode, "threads") == 0) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)(i + 11));
        int wrong = 0, lowered = 0;
        for (int i = 0; i < 4; i++) {
            char *letters;
            pthread_join(t[i], (void **)&letters);
            wrong += count(letters, 0, 40, '?');
            lowered += count(letters, 0, 40, 'L');
            printf("thread %d: %s\n", i, letters);
            free(letters);
        }
        expect(wrong == 0, "threads: every result fp32 or lowered within its error");
        /* 160 calls: P audited in probation (any thread's), the rest
         * lowered but for the rechecks */
        expect(lowered >= 160 - P - 160 / R - 4 && lowered <= 160 - P,
               "threads: one probation for the site, shared");
    } else if (strcmp(mode, "entry") == 0) {
        run(log, &at, P + 1, 0, &seed);
        expect(count(log, 0, at, 'L') == at, "a user's call-site entry wins: lowered, no audit");
    } else if (strcmp(mode, "off") == 0) {
        run(log, &at, P, 0, &seed);
        expect(count(log, 0, P, 'F') == P, "auto: probation");
        expect(ctl_set("opt.audit", "off") == 0, "ampctl's name: opt.audit=off");
        int off = at;
        run(log, &at, 2 * R, 0, &seed);
        expect(count(log, off, at, 'L') == at - off, "audit off: every call lowered");
        expect(ctl_set("opt.audit", "auto") == 0, "opt.audit=auto again");
        int on = at;
        run(log, &at, 2 * R, 0, &seed);
        int ok = 1;
        for (int i = on; i < at; i++)
            ok &= log[i] != '?';
        expect(ok, "auto again: the site goes on from its state");
    } else if (strcmp(mode, "slow") == 0) {
        if (getenv("AMPSHIM_LOG_FILE")) /* appended to: this run's lines only */
            unlink(getenv("AMPSHIM_LOG_FILE"));
        run(log, &at, P, 0, &seed);
        expect(count(log, 0, P, 'F') == P, "probation: every call keeps its fp32 result");
        /* fp32 now, "not faster"; audited every Rth call (no delay any
         * more): back after 4 P clean audits, 4 P R calls */
        int fp32_from = at;
        run(log, &at, 4 * P * R - P, 0, &seed);
        expect(count(log, fp32_from, at, 'F') == at - fp32_from,
               "not faster: fp32 until 4 P clean, faster audits");
        int back = at;
        run(log, &at, 2 * R, 0, &seed);
        expect(count(log, back, at, 'L') >= 2 * R - 3, "faster again: lowered");
        const char *path = getenv("AMPSHIM_LOG_FILE");
        FILE *f = path ? fopen(path, "r") : NULL;
        char line[512];
        int slow_said = 0, back_said = 0;
        while (f && fgets(line, sizeof line, f)) {
            slow_said |= strstr(line, "audit auto: cblas_sgemm") && strstr(line, ": fp32 after") &&
                         strstr(line, "(not faster: fp32 took");
            back_said |= strstr(line, "audit auto: cblas_sgemm") &&
                         strstr(line, ": lowered after") && strstr(line, "(clean audits");
        }
        if (f)
            fclose(f);
        expect(slow_said, "the log says why: not faster");
        expect(back_said, "... and why it came back");
    } else if (strcmp(mode, "sizes") == 0) {
        /* Call i is small when i % 3 == 0: probation (P calls) has small
         * and large ones; the rechecks (the site's calls i with (i + 1) % R
         * == 0) fall on both. */
        if (getenv("AMPSHIM_LOG_FILE"))
            unlink(getenv("AMPSHIM_LOG_FILE"));
        int total = P + (P + 2) * R;
        for (int i = 0; i < total; i++)
            log[at++] = call_sized(i % 3 ? 256 : 64, &seed);
        log[at] = 0;
        expect(count(log, 0, P, 'F') == P, "probation: every call keeps its fp32 result");
        /* Lowered from call P on, but its small calls fp32 until the site
         * is weighed again at its Pth recheck, call P R - 1. */
        int weighed = P * R - 1, large_ok = 1, small_fp32 = 1, small_back = 1, wrong = 0;
        for (int i = P; i < total; i++) {
            int recheck = (i + 1) % R == 0;
            wrong += log[i] == '?';
            if (i % 3)
                large_ok &= log[i] == (recheck ? 'F' : 'L');
            else if (i <= weighed)
                small_fp32 &= log[i] == 'F';
            else
                small_back &= log[i] == (recheck ? 'F' : 'L');
        }
        expect(wrong == 0, "every result fp32 or lowered within its error");
        expect(large_ok, "the large calls lowered after probation (fp32 at the rechecks)");
        expect(small_fp32, "the small calls fp32: not faster lowered at their size");
        expect(small_back, "weighed again, the delay gone: the small calls lowered too");
        uint64_t fp32 = shim_stat("cblas_sgemm", "fp32");
        expect(fp32 > 0 && fp32 != UINT64_MAX, "the small calls auto kept fp32 count fp32");
        const char *path = getenv("AMPSHIM_LOG_FILE");
        FILE *f = path ? fopen(path, "r") : NULL;
        char line[512];
        int said = 0, back_said = 0;
        while (f && fgets(line, sizeof line, f)) {
            said |=
                strstr(line, "calls of these sizes run fp32, not faster lowered: 5.2e+05-2.1e+06 "
                             "flops (") != NULL;
            back_said |= strstr(line, "calls of every size lowered again") != NULL;
        }
        if (f)
            fclose(f);
        expect(said, "the log names the size class kept fp32");
        expect(back_said, "... and says when it is lowered again");
    } else if (strcmp(mode, "late") == 0) {
        for (int i = 0; i < P + 10; i++)
            log[at++] = call_sized(64, &seed);
        int large = at;
        for (int i = 0; i < 3 + 2 * R; i++)
            log[at++] = call_sized(256, &seed);
        int small = at;
        for (int i = 0; i < R; i++)
            log[at++] = call_sized(64, &seed);
        log[at] = 0;
        expect(count(log, 0, large, 'F') == large,
               "small calls: probation, then fp32 (not faster)");
        expect(count(log, large, large + 3, 'F') == 3, "a new size: its first three audited");
        int ok = 1;
        for (int i = large + 3; i < small; i++)
            ok &= log[i] == ((i + 1) % R == 0 ? 'F' : 'L');
        expect(ok, "... then lowered, the site's fp32 for being slow undone by a size that pays");
        expect(count(log, small, at, 'F') == at - small, "the small calls still fp32");
    } else {
        fprintf(stderr, "audit_auto: unknown mode %s\n", mode);
        return 2;
    }
    printf("calls: %s\n", log);
    return failures != 0;
}
