/* Recurrences (blas_recurrence.h): fingerprints of a gemm's logical
 * matrices, compared by content. */
#include "shim/blas/blas_recurrence.h"

#include <stdatomic.h>

#include "runtime/log.h"
#include "runtime/products.h"
#include "runtime/sites.h"

/* A logical matrix: element (i, j) at p[i * rs + j * cs]. */
struct view {
    const float *p;
    int64_t rows, cols, rs, cs;
};

/* C (m x n), op(A) (m x k) and op(B) (k x n) of the call's arguments. */
static struct view output_view(const struct amp_gemm_args *g)
{
    int row = g->layout == 'R';
    return (struct view){g->c, g->m, g->n, row ? g->ldc : 1, row ? 1 : g->ldc};
}

static struct view operand_view(const struct amp_blas_call *c, int which)
{
    const struct amp_gemm_args *g = &c->gemm;
    int row = g->layout == 'R';
    int trans = (which == 0 ? g->ta : g->tb) != 'N';
    int64_t ld = which == 0 ? g->lda : g->ldb;
    /* stored by rows and not transposed, or by columns and transposed:
     * consecutive columns are adjacent */
    int along_rows = row != trans;
    return (struct view){c->in[which].p, which == 0 ? g->m : g->k, which == 0 ? g->k : g->n,
                         along_rows ? ld : 1, along_rows ? 1 : ld};
}

/* A fingerprint of v, all 12 places (runtime/products.h). */
static uint64_t fingerprint(const struct view *v)
{
    return amp_products_fingerprint(v->p, NULL, v->rows, v->cols, v->rs, v->cs, 0);
}

/* A square output the program keeps lowered: into the ring. */
static void products_note(const struct amp_blas_call *c, struct amp_site *s)
{
    const struct amp_gemm_args *g = &c->gemm;
    if (g->m != g->n || g->m < 2)
        return;
    int row = g->layout == 'R';
    int64_t rs = row ? g->ldc : 1, cs = row ? 1 : g->ldc;
    if (c->native_kind == AMP_NATIVE_SYRK) {
        /* its computed triangle: the lower one, or the upper read as lower */
        int upper = g->tb == 'U';
        amp_products_add(upper ? amp_products_fingerprint(g->c, NULL, g->n, g->n, cs, rs, 1)
                               : amp_products_fingerprint(g->c, NULL, g->n, g->n, rs, cs, 1),
                         s);
        return;
    }
    amp_products_add(amp_products_fingerprint(g->c, NULL, g->n, g->n, rs, cs, 1), s);
    amp_products_add(amp_products_fingerprint(g->c, NULL, g->n, g->n, cs, rs, 1), s);
}

int amp_blas_recurrence_keeps(struct amp_blas_call *c)
{
    struct amp_site *s = (struct amp_site *)c->site;
    uint32_t audit = amp_live_load(&amp_rt.cfg.audit);
    /* AMPSHIM_AUDIT=1 and follow measure every lowered call as it comes */
    if (!s || !c->native_kind || c->explicit_request || audit == AMP_AUDIT_ON ||
        audit == AMP_AUDIT_FOLLOW)
        return 0;
    if (amp_unlikely(atomic_load_explicit(&s->consumed, memory_order_relaxed))) {
        atomic_fetch_add_explicit(&s->consumer_calls, 1, memory_order_relaxed);
        c->outcome = AMP_OUTCOME_FP32;
        c->t->fp32_depth++;
        return 1;
    }
    if (c->native_kind != AMP_NATIVE_GEMM)
        return 0;
    int found = atomic_load_explicit(&s->recurrent, memory_order_relaxed);
    if (!found) {
        uint64_t last = atomic_load_explicit(&s->last_output, memory_order_relaxed);
        struct view a = operand_view(c, 0), b = operand_view(c, 1);
        uint64_t fa = fingerprint(&a), fb = fingerprint(&b);
        /* One operand the site's last output, the other the same as at its
         * last call (the operator of pi <- pi P, M <- M A): a layer chain
         * through one function (each layer's output the next one's input,
         * each with its own weights) is not a recurrence. */
        found =
            last &&
            ((fa == last && fb && fb == atomic_load_explicit(&s->last_b, memory_order_relaxed)) ||
             (fb == last && fa && fa == atomic_load_explicit(&s->last_a, memory_order_relaxed)));
        c->print_a = fa;
        c->print_b = fb;
        if (!found)
            return 0;
        atomic_store_explicit(&s->recurrent, 1, memory_order_relaxed);
        char object[64], function[96];
        amp_site_display(s, object, sizeof object, function, sizeof function);
        amp_log(AMP_LOG_INFO,
                "%s from %s:%s: an operand is this call site's own earlier lowered output (a "
                "recurrence): its calls run as made in fp32 from now on",
                amp_hook_names[c->hook], object, function);
    }
    atomic_fetch_add_explicit(&s->recurrence_calls, 1, memory_order_relaxed);
    c->outcome = AMP_OUTCOME_FP32;
    c->t->fp32_depth++;
    return 1;
}

void amp_blas_recurrence_note(const struct amp_blas_call *c)
{
    struct amp_site *s = (struct amp_site *)c->site;
    if (!s || c->audit_only)
        return;
    products_note(c, s);
    if (c->native_kind != AMP_NATIVE_GEMM ||
        atomic_load_explicit(&s->recurrent, memory_order_relaxed))
        return;
    struct view v = output_view(&c->gemm);
    atomic_store_explicit(&s->last_output, fingerprint(&v), memory_order_relaxed);
    atomic_store_explicit(&s->last_a, c->print_a, memory_order_relaxed);
    atomic_store_explicit(&s->last_b, c->print_b, memory_order_relaxed);
}
