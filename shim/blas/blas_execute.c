/* The CPU executor: a planned BLAS call the policy lowers, through one
 * pipeline (amp_blas_lower): gate (too small to pay, counted small; no
 * native units, nounits; the site's own decision; no native kernel takes it
 * and emulation was not asked for, nonative: shim/blas/blas_native.h),
 * guard (a recurrence's next step, shim/blas/blas_recurrence.h; operands too
 * far from the origin for their spread, spread: shim/blas/blas_spread.h),
 * audit (AMPSHIM_AUDIT counts it at its site, which may keep it as made:
 * shim/blas/blas_audit.c), then run: natively, a gemm or syrk as oneDNN
 * low-precision matmuls (shim/blas/blas_native.c), else, where asked for,
 * emulated: its multiplicands rounded (round-to-nearest-even) into
 * per-thread scratch with the caller's own leading dimensions, for the
 * hook's real fp32 routine, bit for bit the real routine on rounded
 * operands. */
#include "shim/blas/blas_execute.h"

#include "shim/blas/blas_audit.h"
#include "shim/blas/blas_native.h"
#include "shim/blas/blas_recurrence.h"
#include "shim/blas/blas_spread.h"

#include "runtime/sites.h"

/* Finds the call's site (runtime/sites.h), once: the audit and the spread
 * check take it from c->site. Then what the site decides: the policy's
 * entries for Python code, else the op around the product (a float32-list
 * op's frame between the program and this call keeps it fp32, as
 * torch.autocast keeps every product inside such an op). Returns 1 when
 * the call runs as made, its outcome set. */
static int site_decides(struct amp_blas_call *c)
{
    const struct amp_site *s = c->site = amp_site_of_call(amp_tls_caller, c->hook);
    if (!s)
        return 0;
    int cat = s->category[c->acc_read != 0];
    if (cat == AMP_CAT_UNSET && s->op_around >= 0) {
        uint8_t op = amp_live_load(&amp_rt.cfg.policy.op[AMP_DEVICE_CPU][s->op_around]);
        cat = op != AMP_CAT_UNSET ? op : amp_policy_default[AMP_DEVICE_CPU][s->op_around];
        if (cat != AMP_CAT_FP32 && cat != AMP_CAT_PASSTHROUGH)
            cat = AMP_CAT_UNSET;
        else
            amp_site_kept_by_op(s);
    }
    if (cat == AMP_CAT_FP32) {
        c->outcome = AMP_OUTCOME_FP32;
        c->t->fp32_depth++;
        return 1;
    }
    if (cat == AMP_CAT_PASSTHROUGH || cat == AMP_CAT_PROMOTE) {
        c->outcome = AMP_OUTCOME_PASSTHROUGH;
        return 1;
    }
    return 0;
}

/* The lowered path is a pipeline: the planner's call (valid or not), then
 * gate, guard, audit and run, each stage either settling the call (its
 * outcome set: the hook runs it as made, or it has run lowered) and
 * returning 1, or passing it on. */

/* Gate: what the size rule, this CPU and the call's site say. Too small to
 * pay (small) or no native units (nounits) settle it before the site is
 * even looked up; then the site's own decision (policy entries for Python
 * code, the op around the product); then, under the defaults, a call no
 * native kernel takes (nonative): emulated it would be slower than fp32
 * and change the answer. */
static int gate(struct amp_blas_call *c)
{
    /* The planners count a multiply-add as 2 flops. */
    enum amp_cpu_gate gate = amp_cpu_gate(c->dtype, c->flops / 2, c->explicit_request);
    if (gate == AMP_CPU_SMALL || gate == AMP_CPU_NO_UNITS) {
        c->outcome = amp_cpu_gate_outcome(gate);
        return 1;
    }
    if (site_decides(c))
        return 1;
    c->audit_only = gate == AMP_CPU_AUDIT_ONLY;
    if (!c->audit_only && !amp_blas_emulation_asked(c) && !amp_blas_native_fits(c)) {
        c->outcome = AMP_OUTCOME_NO_NATIVE;
        return 1;
    }
    return 0;
}

/* Guard: what the operands say. A recurrence's next step, or operands too
 * far from the origin for their spread, run as made. A call auto keeps
 * fp32 for speed needs no spread check (it costs microseconds on a small
 * product). */
static int guard(struct amp_blas_call *c)
{
    if (amp_blas_recurrence_keeps(c))
        return 1;
    return !(amp_unlikely(amp_live_load(&amp_rt.cfg.audit) == AMP_AUDIT_AUTO) &&
             amp_audit_slow_here(c->site, c->flops)) &&
           amp_blas_spread_keeps(c);
}

/* Audit: under AMPSHIM_AUDIT the call is counted at its site, which may
 * keep it as made: for want of units, by auto's fp32 decision for the site
 * (an fp32 region while it runs), or as AMPSHIM_AUDIT=1 keeps it. */
static int audit(struct amp_blas_call *c)
{
    if (!amp_unlikely(amp_live_load(&amp_rt.cfg.audit)) || amp_blas_audit_begin(c))
        return 0;
    c->outcome = c->audit_only                                   ? AMP_OUTCOME_NO_UNITS
                 : amp_audit_keeps_fp32(c->audit_site, c->flops) ? AMP_OUTCOME_FP32
                                                                 : AMP_OUTCOME_PASSTHROUGH;
    if (c->outcome == AMP_OUTCOME_FP32)
        c->t->fp32_depth++;
    return 1;
}

/* Run, natively: a gemm or syrk the executor takes (with its pay check and
 * auto's check). Settles the call unless it is to be emulated: the
 * executor could not run it after all (oneDNN refused, no memory), a check
 * or pay check set up for its native run is off, and the call runs
 * emulated where that was asked for, else as made, as the program would
 * have. */
static int run_native(struct amp_blas_call *c)
{
    if (!c->audit_only && amp_blas_native_takes(c)) {
        amp_blas_warm_real(c);
        amp_blas_pay_begin(c);
    }
    if (c->native_kind && !c->audit_only && amp_blas_native(c)) {
        if (amp_unlikely(c->check) && !amp_blas_audit_check(c)) {
            /* Over tolerance, or a site auto keeps fp32: run as made. */
            c->done = 0;
            c->outcome = AMP_OUTCOME_FP32;
            c->t->fp32_depth++;
        }
        return 1;
    }
    if (c->check || c->pay)
        amp_blas_audit_cancel(c);
    if (!c->audit_only && !amp_blas_emulation_asked(c)) {
        amp_blas_audit_cancel(c);
        c->outcome = AMP_OUTCOME_NO_NATIVE;
        return 1;
    }
    return 0;
}

/* Run, emulated: the multiplicands rounded into scratch (the caller's
 * leading dimensions kept) for the hook's real fp32 routine; without the
 * memory, the call runs in fp32. */
static void run_emulated(struct amp_blas_call *c)
{
    enum amp_lowp_dtype dtype = c->dtype;
    size_t offsets[2], total = 0;
    for (int i = 0; i < c->n_in; i++) {
        if (c->in_place[i])
            continue;
        offsets[i] = total;
        total += (amp_operand_span(&c->in[i]) * sizeof(float) + 63) & ~(size_t)63;
    }
    char *scratch = total ? amp_scratch(c->t, total) : NULL;
    c->holds_scratch = scratch != NULL;
    if (total && !scratch) {
        /* No memory for the rounded copies: run the call in fp32. */
        amp_blas_audit_cancel(c);
        c->outcome = AMP_OUTCOME_FP32;
        c->t->fp32_depth++;
        return;
    }
    for (int i = 0; i < c->n_in; i++) {
        float *dst = c->in_place[i] ? c->in[i].p : (float *)(scratch + offsets[i]);
        c->converted += amp_operand_round(&c->in[i], dst, dtype);
        if (!c->in_place[i])
            *c->arg[i] = dst;
    }
    amp_blas_round_accumulator(c);
}

void amp_blas_lower(struct amp_blas_call *c, int valid)
{
    if (!valid) { /* the planner's: the real routine reports it */
        c->outcome = AMP_OUTCOME_PASSTHROUGH;
        return;
    }
    if (gate(c) || guard(c) || audit(c) || run_native(c))
        return;
    run_emulated(c);
}
