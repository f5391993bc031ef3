/* After fork, the child gets its own control block with fresh counters, and
 * neither its calls nor its exit touch the parent's block; a child that ends
 * with _exit or is killed leaves nothing behind (nothing in /dev/shm). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/control_block.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
static int failures, checks;
#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s\n", what);                                                             \
        }                                                                                          \
    } while (0)

static int block_exists(pid_t pid)
{
    return control_block_exists(pid);
}

static uint64_t sgemm_calls(void)
{
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT, "ampshim_ctl");
    uint64_t n = 0;
    size_t len = sizeof n;
    if (!ctl || ctl("stats.cblas_sgemm.calls", &n, &len, NULL, 0) != 0)
        return UINT64_MAX;
    return n;
}

static void multiply(void)
{
    float a[4] = {1, 2, 3, 4}, c[4];
    cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
}

int main(void)
{
    multiply();
    pid_t parent = getpid();
    CHECK(block_exists(parent), "the parent has a block after its first call");
    CHECK(sgemm_calls() == 1, "the parent counted one call");
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        int bad = 0;
        bad |= block_exists(getpid());            /* none before the child's first call */
        multiply();
        multiply();
        bad |= !block_exists(getpid()) << 1;      /* its own after */
        bad |= (sgemm_calls() != 2) << 2;         /* fresh counters: 2, not 3 */
        bad |= !block_exists(parent) << 3;        /* the parent's is untouched */
        _exit(bad); /* no exit handler runs: nothing may be left behind */
    }
    int status;
    waitpid(child, &status, 0);
    int bad = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
    CHECK(!(bad & 1), "the child has no block before its first call");
    CHECK(!(bad & 2), "the child makes its own block");
    CHECK(!(bad & 4), "the child's counters start from zero");
    CHECK(!(bad & 8), "the parent's block exists while the child runs");
    CHECK(!block_exists(child), "the child's block is gone after it exits");
    child = fork();
    if (child == 0) {
        multiply();
        pause(); /* killed below */
        _exit(0);
    }
    usleep(200000);
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    CHECK(!shm_has_ampshim_files(), "nothing of ampshim's in /dev/shm after _exit and SIGKILL");
    CHECK(block_exists(parent), "the child did not unlink the parent's block");
    CHECK(sgemm_calls() == 1, "the child's calls did not reach the parent's counters");
    printf("fork_block: %d passed, %d failed\n", checks - failures, failures);
    return failures != 0;
}
