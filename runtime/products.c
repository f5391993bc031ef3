/* What a product feeds (runtime/products.h): the last lowered outputs,
 * fingerprinted, and the LAPACK routines whose matrix is one of them. */
#include "runtime/products.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/threads.h"

/* ---- products and the solves they feed ----
 *
 * The last outputs the program kept lowered, any site's: a fingerprint a
 * LAPACK routine's matrix can be matched with (amp_products_find). Over the
 * places of fingerprint() below the diagonal, so a syrk's one triangle and
 * the full symmetric matrix numpy then makes of it agree, and a ridge's
 * shift of the diagonal (X^T X + lambda I) leaves it; a
 * gemm's output is kept as it is and transposed (numpy may hand LAPACK
 * either). */
#define RING 16
static struct {
    _Atomic uint64_t print;
    struct amp_site *_Atomic site;
} ring[RING];
static _Atomic unsigned ring_next;

uint64_t amp_products_fingerprint(const float *p, const double *pd, int64_t rows, int64_t cols,
                                  int64_t rs, int64_t cs, int below)
{
    if ((!p && !pd) || rows < 2 || cols < 2 || (below && rows != cols))
        return 0;
    const int64_t is[4] = {0, rows / 3, 2 * rows / 3, rows - 1};
    const int64_t js[3] = {0, cols / 2, cols - 1};
    uint64_t h = 0xcbf29ce484222325ull;
    h = (h ^ (uint64_t)rows) * 0x100000001b3ull;
    h = (h ^ (uint64_t)cols) * 0x100000001b3ull;
    uint32_t first = 0;
    int varied = 0, n = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++) {
            if (below && is[a] <= js[b])
                continue; /* below the diagonal: ridge's shift of it changes nothing */
            int64_t at = is[a] * rs + js[b] * cs;
            float v = p ? p[at] : (float)pd[at];
            uint32_t bits;
            memcpy(&bits, &v, sizeof bits);
            if (n++ == 0)
                first = bits;
            varied |= bits != first;
            h = (h ^ bits) * 0x100000001b3ull;
        }
    return varied && h ? h : 0;
}

void amp_products_add(uint64_t print, struct amp_site *s)
{
    if (!print)
        return;
    unsigned i = atomic_fetch_add_explicit(&ring_next, 1, memory_order_relaxed) % RING;
    atomic_store_explicit(&ring[i].print, 0, memory_order_relaxed);
    atomic_store_explicit(&ring[i].site, s, memory_order_relaxed);
    atomic_store_explicit(&ring[i].print, print, memory_order_release);
}

struct amp_site *amp_products_find(uint64_t print)
{
    for (int i = 0; print && i < RING; i++)
        if (atomic_load_explicit(&ring[i].print, memory_order_acquire) == print)
            return atomic_load_explicit(&ring[i].site, memory_order_relaxed);
    return NULL;
}

/* Argument places (0-based) of a routine's rows M (-1: square), order N,
 * matrix A, LDA and workspace sizes (-1: none), named without their
 * precision letter. Only routines whose matrix is the program's own: a
 * workspace query (LWORK or LIWORK -1) may pass a dummy A, so such a call
 * is left alone, and routines not listed are never read. */
static const struct {
    const char *name;
    int8_t m, n, a, lda, lwork, liwork;
} layouts[] = {
    {"gesv", -1, 0, 2, 3, -1, -1},  /* N, NRHS, A, LDA, IPIV, B, LDB, INFO */
    {"posv", -1, 1, 3, 4, -1, -1},  /* UPLO, N, NRHS, A, LDA, B, LDB, INFO */
    {"getrf", 0, 1, 2, 3, -1, -1},  /* M, N, A, LDA, IPIV, INFO */
    {"potrf", -1, 1, 2, 3, -1, -1}, /* UPLO, N, A, LDA, INFO */
    {"syevd", -1, 2, 3, 4, 7, 9},   /* JOBZ, UPLO, N, A, LDA, W, WORK, LWORK, IWORK, LIWORK */
};

/* The layout of hook's routine (index + 1, cached per hook), or -1. */
static int layout_of(int hook)
{
    static _Atomic int8_t cache[AMP_HOOK_COUNT];
    int8_t k = atomic_load_explicit(&cache[hook], memory_order_relaxed);
    if (k)
        return k - 1;
    const char *r = amp_hook_routines[hook];
    k = 0;
    if (r[0] == 's' || r[0] == 'd')
        for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
            if (strcmp(r + 1, layouts[i].name) == 0)
                k = (int8_t)(i + 1);
    atomic_store_explicit(&cache[hook], k ? k : -1, memory_order_relaxed);
    return k ? k - 1 : -1;
}

void amp_products_consumer(int hook, void *const regs[6], void *const *stack)
{
#define ARG(i) ((i) < 6 ? regs[(i)] : stack[(i)-6])
    uint32_t audit = amp_live_load(&amp_rt.cfg.audit);
    if (audit == AMP_AUDIT_ON || audit == AMP_AUDIT_FOLLOW)
        return;
    int k = layout_of(hook);
    if (k < 0)
        return;
    /* An integer read as 32 bits is right for an ILP64 library too (little
     * endian, values below 2^31); a null or absurd argument is the
     * routine's to refuse, and it reads nothing then. */
    const int32_t *n = ARG(layouts[k].n), *lda = ARG(layouts[k].lda);
    const int32_t *m = layouts[k].m >= 0 ? ARG(layouts[k].m) : n;
    const void *a = ARG(layouts[k].a);
    if (!n || !m || !lda || !a || *n < 2 || *m != *n || *lda < *n)
        return;
    for (int w = 0; w < 2; w++) {
        int at = w ? layouts[k].liwork : layouts[k].lwork;
        const int32_t *size = at >= 0 ? ARG(at) : NULL;
        if (at >= 0 && (!size || *size == -1))
            return; /* a workspace query */
    }
    int dbl = amp_hook_routines[hook][0] == 'd';
    uint64_t print = amp_products_fingerprint(dbl ? NULL : a, dbl ? a : NULL, *n, *n, 1, *lda, 1);
    struct amp_site *s = amp_products_find(print);
    if (!s || atomic_exchange_explicit(&s->consumed, 1, memory_order_relaxed))
        return;
    atomic_store_explicit(&s->consumer_hook, (int16_t)hook, memory_order_relaxed);
    char object[64], function[96];
    amp_site_display(s, object, sizeof object, function, sizeof function);
    amp_log(AMP_LOG_INFO,
            "%s from %s:%s: its lowered output went into %s (a solve or factorisation, which "
            "carries its rounding into every result): its calls run as made in fp32 from now on",
            amp_hook_names[s->hook], object, function, amp_hook_names[hook]);
#undef ARG
}
