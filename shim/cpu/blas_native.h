#ifndef AMPSHIM_BLAS_NATIVE_H
#define AMPSHIM_BLAS_NATIVE_H

#include "shim/cpu/blas_plan.h"

/* The native executor (shim/cpu/blas_native.c): runs a planned, valid,
 * lowered gemm or syrk as oneDNN low-precision matmuls when AMPSHIM_CPU_KERNEL and
 * the size allow and oneDNN has a native kernel; returns 1 when it did (the
 * call is then done), 0 to let the emulated path run it. */
int amp_blas_native(struct amp_blas_call *c);

/* What a CPU call the policy lowers to a dtype becomes before it is
 * lowered: the size rule (AMPSHIM_CPU_LOWER_MIN) and what this CPU can do. */
enum amp_cpu_gate {
    AMP_CPU_LOWER,      /* lower it */
    AMP_CPU_SMALL,      /* run as made, counted small: below the size where lowering pays */
    AMP_CPU_NO_UNITS,   /* run as made, counted nounits: no native units for the dtype here */
    AMP_CPU_AUDIT_ONLY, /* no native units, but the audit is on: measure what lowering would
                           cost (a machine with units would lower it), keep the fp32 result */
};

/* AMPSHIM_CPU_LOWER_MIN=auto's answer for a call of `madds` multiply-adds:
 * with AMPSHIM_CPU_KERNEL=auto and native units for the dtype here, small
 * below the native crossover (but under AMPSHIM_AUDIT=auto, which measures
 * what pays per site and size); without units small below it and no-units
 * (audit-only under the audit) above; with native or emulate every size is
 * lowered. Says once at info level when this CPU has no units. */
enum amp_cpu_gate amp_cpu_auto_gate(enum amp_lowp_dtype dtype, double madds);

/* Whether this CPU runs the dtype's products on native low-precision units
 * (asked of oneDNN once): 1 yes, 0 no, -1 not known yet or no oneDNN to ask.
 * why (may be NULL) gets the reason for a no. */
int amp_cpu_native_units(enum amp_lowp_dtype dtype, char *why, size_t whylen);

/* The gate for every CPU family (BLAS, oneDNN): one load when the threshold
 * is a number. An explicit request (runtime/decide.h) is never voided by
 * the size rule or the CPU: it is lowered wherever it can run lowered. */
static inline enum amp_cpu_gate amp_cpu_gate(enum amp_lowp_dtype dtype, double madds,
                                             int explicit_request)
{
    uint32_t set = amp_live_load(&amp_rt.cfg.lower_min[AMP_DEVICE_CPU]);
    if (amp_likely(set == 0) || explicit_request)
        return AMP_CPU_LOWER;
    if (set != AMP_LOWER_MIN_AUTO)
        return madds < (double)set ? AMP_CPU_SMALL : AMP_CPU_LOWER;
    return amp_cpu_auto_gate(dtype, madds);
}

/* The outcome of a call the gate keeps as made (small or no units). */
static inline enum amp_outcome amp_cpu_gate_outcome(enum amp_cpu_gate g)
{
    return g == AMP_CPU_SMALL ? AMP_OUTCOME_SMALL : AMP_OUTCOME_NO_UNITS;
}

#endif
