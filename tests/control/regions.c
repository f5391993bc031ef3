/* A program that adds a few lines for ampshim: it finds the in-process API
 * with dlsym(RTLD_DEFAULT, ...) so it also runs without the shim, opens
 * autocast and fp32 regions, reads and writes control names with
 * ampshim_ctl, and renames a thread (AMPSHIM_THREADS is judged again). Each
 * cblas_sgemm result is classified: bf16 (B), fp16 (H) or fp32 (F).
 * Run under the shim with AMPSHIM_THREADS=hot-*, or without the shim. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ampshim.h"
#include "tests/answers.h"
#include "tests/control_block.h"
#include "tests/check.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

enum { N = 16 };
static float a[N * N], b[N * N], want[3][N * N];

static char classify(void)
{
    float c[N * N];
    cblas_sgemm(102, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    for (int k = 0; k < 3; k++)
        if (memcmp(c, want[k], sizeof c) == 0)
            return "BHF"[k];
    return 'X';
}

static int (*push)(int), (*pop)(void), (*fp32_push)(void), (*fp32_pop)(void);
static int (*ctl)(const char *, void *, size_t *, const void *, size_t);

static void *renamed_thread(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "cold");
    CHECK(classify() == 'F', "a thread named cold is not selected by AMPSHIM_THREADS=hot-*");
    pthread_setname_np(pthread_self(), "hot-1");
    CHECK(classify() == 'B', "after renaming itself hot-1 it is");
    return NULL;
}

int main(void)
{
    expected_answers(N, a, b, (float *[3]){want[0], want[1], want[2]});

    push = (int (*)(int))dlsym(RTLD_DEFAULT, "ampshim_autocast_push");
    pop = (int (*)(void))dlsym(RTLD_DEFAULT, "ampshim_autocast_pop");
    fp32_push = (int (*)(void))dlsym(RTLD_DEFAULT, "ampshim_fp32_push");
    fp32_pop = (int (*)(void))dlsym(RTLD_DEFAULT, "ampshim_fp32_pop");
    ctl = (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                               "ampshim_ctl");
    if (!push || !pop || !fp32_push || !fp32_pop || !ctl) {
        /* Without the shim the program still runs, in plain fp32. */
        CHECK(classify() == 'F', "without ampshim every call is fp32");
        printf("regions (no ampshim): %d passed, %d failed\n", checks - failures, (int)failures);
        return failures ? 1 : 0;
    }
    pthread_setname_np(pthread_self(), "main-thread");
    CHECK(classify() == 'F', "the main thread is not selected by AMPSHIM_THREADS=hot-*");

    CHECK(push(AMPSHIM_FP16) == 0, "push fp16");
    CHECK(classify() == 'H', "an fp16 region lowers to fp16");
    CHECK(fp32_push() == 0, "push fp32");
    CHECK(classify() == 'F', "an fp32 region inside runs fp32");
    CHECK(push(AMPSHIM_BF16) == 0 && classify() == 'F', "fp32 wins over an autocast region inside it");
    CHECK(pop() == 0 && fp32_pop() == 0, "pops");
    CHECK(classify() == 'H', "back in the fp16 region");
    CHECK(push(AMPSHIM_DEFAULT) == 0 && classify() == 'B', "AMPSHIM_DEFAULT is the process dtype (bf16)");
    CHECK(pop() == 0 && classify() == 'H', "pop to fp16");
    errno = 0;
    CHECK(fp32_pop() == -1 && errno == EINVAL, "a pop that does not match the push");
    CHECK(pop() == 0 && classify() == 'F', "out of all regions");
    errno = 0;
    CHECK(pop() == -1 && errno == EINVAL, "pop with no region");
    errno = 0;
    CHECK(push(7) == -1 && errno == EINVAL, "bad dtype");
    int depth = 0;
    while (push(AMPSHIM_BF16) == 0 && depth < 40)
        depth++;
    CHECK(depth == 32 && errno == EOVERFLOW, "32 regions deep, then EOVERFLOW (depth %d)", depth);
    while (depth-- > 0)
        pop();

    char text[32];
    size_t len = sizeof text;
    CHECK(ctl("opt.dtype", text, &len, NULL, 0) == 0 && strcmp(text, "bf16") == 0 && len == 5,
          "read opt.dtype");
    CHECK(ctl("opt.dtype", NULL, NULL, "fp16", 4) == 0, "write opt.dtype");
    len = sizeof text;
    CHECK(ctl("opt.dtype", text, &len, NULL, 0) == 0 && strcmp(text, "fp16") == 0,
          "read back what was written");
    int on = 1, old = 7;
    size_t intlen = sizeof old;
    CHECK(ctl("thread.self.enabled", &old, &intlen, &on, sizeof on) == 0 && old == -1,
          "thread.self.enabled was default (-1), now 1");
    CHECK(classify() == 'H', "this thread, enabled, lowers to the process dtype fp16");
    int def = -1;
    CHECK(ctl("thread.self.enabled", NULL, NULL, &def, sizeof def) == 0 && classify() == 'F',
          "back to default: not selected");
    uint64_t pid = 0;
    size_t u64len = sizeof pid;
    CHECK(ctl("process.pid", &pid, &u64len, NULL, 0) == 0 && pid == (uint64_t)getpid(),
          "process.pid");
    CHECK(ctl("opt.colour", NULL, NULL, NULL, 0) == ENOENT, "unknown name: ENOENT");
    CHECK(ctl("process.pid", NULL, NULL, &pid, sizeof pid) == EPERM, "read-only: EPERM");
    uint64_t sample = 4, got = 0;
    CHECK(ctl("opt.audit_sample", NULL, NULL, &sample, sizeof sample) == 0 &&
              ctl("opt.audit_sample", &got, &u64len, NULL, 0) == 0 && got == 4,
          "opt.audit_sample written and read as uint64_t");
    sample = 0;
    CHECK(ctl("opt.audit_sample", NULL, NULL, &sample, sizeof sample) == EINVAL,
          "opt.audit_sample 0: EINVAL");
    CHECK(ctl("opt.audit_sample", NULL, NULL, &sample, 4) == EINVAL, "a uint64_t of 4 bytes: EINVAL");
    CHECK(ctl("opt.dtype", NULL, NULL, "fp8", 3) == EINVAL, "bad value: EINVAL");
    CHECK(ctl("thread.self.enabled", NULL, NULL, &on, 1) == EINVAL, "bad size: EINVAL");
    len = 2;
    CHECK(ctl("opt.dtype", text, &len, NULL, 0) == EINVAL && len == 5,
          "a short buffer: EINVAL and the size needed");
    ctl("opt.dtype", NULL, NULL, "bf16", 4);

    /* The block is shared (for ampctl) unless AMPSHIM_CONTROL=0 made it private. */
    const char *control = getenv("AMPSHIM_CONTROL");
    int shared_expected = !(control && strcmp(control, "0") == 0);
    CHECK(control_block_exists(getpid()) == shared_expected, "the shared block %s",
          shared_expected ? "exists (mode 0600)" : "does not exist with AMPSHIM_CONTROL=0");
    CHECK(!shared_expected || control_block_mode(getpid()) == 0600, "the block's mode is 0600");

    pthread_t th;
    pthread_create(&th, NULL, renamed_thread, NULL);
    pthread_join(th, NULL);
    printf("regions: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
