/* LAPACK routines run in fp32 regions (shim/region_hook.h); two ways the
 * world breaks a region hook, both seen in the wild:
 *  - an xerbla_ that longjmps out of the routine (R installs one): the thread
 *    must not stay in an fp32 region for the rest of its life, so a product
 *    made after the jump is lowered as before it;
 *  - a routine called from a fiber whose stack ends right after the caller's
 *    frame, with a guard page above (a hook that reads words past its
 *    arguments faults there).
 * Products are checked bit for bit against the expected lowered (bf16) and
 * fp32 values. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/probe_product.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work,
             const int *lwork, int *info);

static jmp_buf escape;
static int xerbla_calls;

/* The program's own error handler, found by OpenBLAS's LAPACK instead of its
 * own: it leaves the routine by longjmp. */
void xerbla_(const char *name, const int *info, int len)
{
    (void)name, (void)info, (void)len;
    xerbla_calls++;
    longjmp(escape, 1);
}

static float product(void)
{
    return probe_product(cblas_sgemm);
}

static const float lowered = PROBE_LOWERED;
static const float exact = PROBE_EXACT;

static void qr(int m, int *info)
{
    int n = 4, lda = 4, lwork = 64;
    float a[16], tau[4], work[64];
    for (int i = 0; i < 16; i++)
        a[i] = (float)(i % 5) + (i / 4 == i % 4 ? 4.0f : 0.0f);
    sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}

static ucontext_t main_ctx, fiber_ctx;
static int fiber_info = -99;

/* Called with a frame of its own as small as can be, right under the
 * guard page: the arrays are static. */
static float fiber_a[16], fiber_tau[4], fiber_work[64];
static const int four = 4, sixty_four = 64;

static void fiber(void)
{
    for (int i = 0; i < 16; i++)
        fiber_a[i] = (float)(i % 5) + (i / 4 == i % 4 ? 4.0f : 0.0f);
    sgeqrf_(&four, &four, fiber_a, &four, fiber_tau, fiber_work, &sixty_four, &fiber_info);
}

int main(void)
{
    CHECK_SHIM_LOADED();
    CHECK(product() == lowered, "a product before any LAPACK call is lowered");

    /* xerbla longjmp: an illegal m makes sgeqrf_ call xerbla_. */
    for (int round = 0; round < 100; round++) {
        if (!setjmp(escape)) {
            int info = 0;
            qr(-1, &info);
            CHECK(0, "sgeqrf_ with m = -1 returned (info %d) instead of calling xerbla_", info);
        }
    }
    CHECK(xerbla_calls == 100, "xerbla_ was called %d times, want 100", xerbla_calls);
    float after = product();
    CHECK(after == lowered, "a product after longjmps out of LAPACK is lowered (got %a, %s)", after,
          after == exact ? "fp32: the thread stayed in an fp32 region" : "neither");
    int info = -99;
    qr(4, &info);
    CHECK(info == 0, "sgeqrf_ still works after the longjmps (info %d)", info);
    CHECK(product() == lowered, "a product after a returning LAPACK call is lowered");

    /* A fiber stack of 16 pages with an inaccessible page right above. */
    long page = sysconf(_SC_PAGESIZE);
    size_t size = 16 * (size_t)page;
    char *base = mmap(NULL, size + (size_t)page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(base != MAP_FAILED, "fiber stack mapped");
    if (base != MAP_FAILED) {
        mprotect(base + size, (size_t)page, PROT_NONE);
        getcontext(&fiber_ctx);
        fiber_ctx.uc_stack.ss_sp = base;
        fiber_ctx.uc_stack.ss_size = size;
        fiber_ctx.uc_link = &main_ctx;
        makecontext(&fiber_ctx, fiber, 0);
        swapcontext(&main_ctx, &fiber_ctx);
        CHECK(fiber_info == 0, "sgeqrf_ on a fiber stack returned info %d", fiber_info);
        munmap(base, size + (size_t)page);
    }
    printf("lapack_regions: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
