/* The accuracy audit of a lowered BLAS call: the same call run twice, once
 * lowered (native or emulated, as it would have run) and once as the program
 * made it (the real routine on the caller's own fp32 operands and
 * accumulator), the two outputs compared over the elements the routine
 * writes. Shadow memory is taken for the call and given back at its end:
 * the accumulator's referenced elements twice (its value before the call,
 * then the lowered output). When it cannot be had the call is simply not
 * audited. See blas_plan.h for the order of the steps. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim/blas/blas_audit.h"

/* Elements of an operand the routine references. */
static size_t referenced(const struct amp_operand *o)
{
    size_t n = 0;
    for (int64_t line = 0; line < o->outer; line++) {
        int64_t lo, hi;
        if (amp_operand_line(o, line, &lo, &hi))
            n += (size_t)(hi - lo);
    }
    return n;
}

/* Copies the referenced elements of o into a compact buffer (out = 1), or
 * back from one (out = 0). */
static void copy_referenced(const struct amp_operand *o, float *compact, int out)
{
    size_t at = 0;
    for (int64_t line = 0; line < o->outer; line++) {
        int64_t lo, hi;
        if (!amp_operand_line(o, line, &lo, &hi))
            continue;
        float *p = o->p + line * o->ld + lo;
        size_t n = (size_t)(hi - lo);
        if (out)
            memcpy(compact + at, p, n * sizeof *p);
        else
            memcpy(p, compact + at, n * sizeof *p);
        at += n;
    }
}

/* A lowered call the audit does not run both ways runs as the program
 * keeps it: as made with AMPSHIM_AUDIT=1 (the audit never changes the
 * program's results), lowered with follow, and with auto as its site
 * stands. Returns whether it runs lowered. */
static int not_audited(struct amp_blas_call *c)
{
    /* Without native units the program always keeps the fp32 result. */
    int lowered = !c->audit_only && amp_audit_keeps_lowered(c->audit_site, c->flops);
    if (lowered)
        amp_audit_ran_lowered(c->audit_site, c->flops);
    return lowered;
}

int amp_blas_audit_begin(struct amp_blas_call *c)
{
    int audit_this;
    c->audit_site = amp_audit_enter(c->site, c->dtype, c->flops, c->shape, &audit_this);
    /* A call the audit does not run both ways (the sampling skips it, or
     * it has no site to be recorded at: the site table is full) runs as the
     * program keeps it: as made (AMPSHIM_AUDIT=1: the audit never changes
     * the program's results), or lowered (follow). */
    /* AMPSHIM_AUDIT=auto: a call-site entry the user wrote for this site
     * wins over what auto would decide (it reaches here when it lowers) */
    if (amp_unlikely(amp_audit_auto()) &&
        amp_site_entry(c->t, AMP_DEVICE_CPU, c->hook, c->acc_read) != AMP_CAT_UNSET) {
        amp_audit_ran_lowered(c->audit_site, c->flops);
        return 1;
    }
    if (!c->audit_site || !audit_this)
        return not_audited(c);
    for (int i = 0; i < c->n_in; i++)
        c->saved_arg[i] = c->arg[i] ? *c->arg[i] : NULL;
    c->shadow = NULL;
    c->shadow_elems = 0;
    if (c->has_acc) {
        size_t n = referenced(&c->acc);
        /* The accumulator as it was, then the lowered output. */
        c->shadow = n && n <= SIZE_MAX / (2 * sizeof(float)) ? malloc(2 * n * sizeof(float)) : NULL;
        if (!c->shadow) {
            static _Atomic int said;
            if (!atomic_exchange(&said, 1))
                amp_log(AMP_LOG_INFO, "audit: no memory for a call's shadow output; calls "
                                      "without it are not audited");
            return not_audited(c);
        }
        c->shadow_elems = n;
        copy_referenced(&c->acc, c->shadow, 1);
    }
    c->audit = 1;
    c->audit_mark = amp_now_ns(); /* the lowered run starts */
    return 1;
}

void amp_blas_audit_cancel(struct amp_blas_call *c)
{
    if (!c->audit)
        return;
    free(c->shadow);
    c->shadow = NULL;
    c->audit = 0;
}

void amp_blas_audit_swap(struct amp_blas_call *c)
{
    amp_audit_test_slow_lowered(c->flops);
    c->ns_lowered = amp_now_ns() - c->audit_mark;
    /* What the program would have had from the lowered call. */
    if (c->has_acc && amp_live_load(&amp_rt.cfg.output_round))
        amp_blas_round_output(c);
    c->output_rounded = 1;
    for (int i = 0; i < c->n_in; i++)
        if (c->arg[i])
            *c->arg[i] = c->saved_arg[i];
    if (c->has_acc) {
        float *before = c->shadow, *lowered = c->shadow + c->shadow_elems;
        copy_referenced(&c->acc, lowered, 1);
        copy_referenced(&c->acc, before, 0);
    }
    c->audit_mark = amp_now_ns(); /* the run as made starts */
}

void amp_blas_audit_finish(struct amp_blas_call *c)
{
    uint64_t ns_fp32 = amp_now_ns() - c->audit_mark;
    if (!c->has_acc)
        return;
    const float *lowered = c->shadow + c->shadow_elems;
    struct amp_audit_sums sums = {0};
    struct amp_audit_result r = {.flops = c->flops};
    r.ns_lowered = c->ns_lowered;
    r.ns_fp32 = ns_fp32;
    /* Both passes walk the output's lines; the lowered copy is compact. */
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0;
        for (int64_t line = 0; line < c->acc.outer; line++) {
            int64_t lo, hi;
            if (!amp_operand_line(&c->acc, line, &lo, &hi))
                continue;
            const float *fp32 = c->acc.p + line * c->acc.ld + lo;
            if (pass == 0)
                amp_audit_sum(&sums, lowered + at, fp32, hi - lo);
            else
                r.elem_max = amp_audit_elem_max(&sums, lowered + at, fp32, hi - lo, r.elem_max);
            at += (size_t)(hi - lo);
        }
    }
    r.err = amp_audit_relative_error(&sums);
    r.nonfinite = sums.nonfinite;
    amp_audit_record(c->audit_site, &r);
    if (amp_audit_follows() && !c->audit_only) {
        copy_referenced(&c->acc, c->shadow + c->shadow_elems, 0);
        amp_audit_ran_lowered(c->audit_site, c->flops);
    }
    free(c->shadow);
    c->shadow = NULL;
}

float amp_blas_audit_scalar(struct amp_blas_call *c, float lowered, float fp32)
{
    struct amp_audit_sums sums = {0};
    struct amp_audit_result r = {.flops = c->flops};
    r.ns_lowered = c->ns_lowered;
    r.ns_fp32 = amp_now_ns() - c->audit_mark;
    amp_audit_sum(&sums, &lowered, &fp32, 1);
    r.elem_max = amp_audit_elem_max(&sums, &lowered, &fp32, 1, 0.0);
    r.err = amp_audit_relative_error(&sums);
    r.nonfinite = sums.nonfinite;
    amp_audit_record(c->audit_site, &r);
    if (!amp_audit_follows() || c->audit_only)
        return fp32;
    amp_audit_ran_lowered(c->audit_site, c->flops);
    return lowered;
}
