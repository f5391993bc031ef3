#ifndef AMPSHIM_BLAS_AUDIT_H
#define AMPSHIM_BLAS_AUDIT_H

#include "shim/blas/blas_plan.h"

/* The accuracy audit of a lowered CPU BLAS call (shim/blas/blas_audit.c).
 * amp_blas_audit_begin, inside amp_blas_lower (shim/blas/blas_execute.c)
 * before anything is rounded: counts the call at its site and, when it is one to audit, keeps the
 * caller's multiplicands and a copy of the accumulator; a call the sampling
 * skips runs as made with AMPSHIM_AUDIT=1 (the audit never changes the
 * program's results) and lowered with follow. After the lowered
 * call ran, amp_blas_audit_swap keeps its output and puts back the
 * accumulator and the arguments, so the hook runs the real routine again as
 * the program made it; amp_blas_audit_finish compares the two and leaves the
 * fp32 output (or the lowered one, AMPSHIM_AUDIT=follow). Scalar results
 * (dot, nrm2, asum) go through amp_blas_audit_scalar. */
int amp_blas_audit_begin(struct amp_blas_call *c); /* 0: run the call as made */
void amp_blas_audit_cancel(struct amp_blas_call *c);
void amp_blas_audit_swap(struct amp_blas_call *c);
void amp_blas_audit_finish(struct amp_blas_call *c);
float amp_blas_audit_scalar(struct amp_blas_call *c, float lowered, float fp32);

/* After the native executor ran a call auto checks by a sample
 * (c->check): recomputes the sample in fp32 and compares. Returns 1 when
 * the program keeps the lowered result; 0 when the call must run again as
 * made (C already put back). */
int amp_blas_audit_check(struct amp_blas_call *c);

/* Before the native executor runs a call whose result the program is to
 * keep lowered: counts it for its pay checks (runtime/site_time.h) and,
 * when it is one to check, sets it up as an audit (c->audit, c->pay) whose
 * lowered output the program keeps, so the hook runs it again as made
 * after it. */
void amp_blas_pay_begin(struct amp_blas_call *c);

/* Once per process, before the first product the native executor takes
 * away from the program's BLAS: the real sgemm on a small product of the
 * shim's own, so the BLAS takes its buffers while memory is to be had.
 * Without the shim the program's first product would have; a later call
 * the executor gives back (no memory for it) would otherwise find the BLAS
 * unable to take them and (OpenBLAS 0.3.21) retrying for ever. */
void amp_blas_warm_real(struct amp_blas_call *c);

#endif
