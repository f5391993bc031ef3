/* Recurrences (ampshim(7), WHAT LOWERING CAN CHANGE): a product whose
 * operand is its own call site's earlier lowered output (a Markov chain's
 * pi <- pi P, a Kalman filter's P <- (I - KH) P, a power iteration's
 * unnormalised step) compounds lowering's error with every step, where a
 * per-call check passes each step. ampshim remembers a fingerprint of the
 * last output each site's gemm kept lowered (12 of its elements at fixed
 * places of the logical matrix, and its shape) and compares the operands of
 * the site's next gemm with it, by content (numpy copies, so an address
 * would not do). A match makes the site a recurrence: that call and every
 * later one of the site run as made in fp32 under the defaults and auto,
 * counted fp32, and the report names the site (AMPSHIM_AUDIT=1 and follow,
 * which measure each lowered call, leave its calls to the audit). So that the first step is
 * not lowered before the second shows what it is, a site's first gemm whose
 * output has the shape of one of its operands (m = k or n = k: the output
 * could take that operand's place) runs as made too, its output
 * fingerprinted; a square layer's site thus lowers from its second call.
 * A recurrence that reaches its operand through other arithmetic
 * (x <- x + x r) is not the same content: `ampctl check` is the net for
 * those. An explicit request (a region, an AMPSHIM_POLICY entry
 * that names the site) is not second-guessed. */
#ifndef AMPSHIM_BLAS_RECURRENCE_H
#define AMPSHIM_BLAS_RECURRENCE_H

#include "shim/blas/blas_plan.h"

/* For a gemm about to be lowered: whether its site is a recurrence (known,
 * or found now); then its outcome is fp32 (inside an fp32 region) and 1 is
 * returned. */
int amp_blas_recurrence_keeps(struct amp_blas_call *c);

/* amp_blas_recurrence_note, called as a lowered gemm or syrk ends, is
 * declared in blas_plan.h (amp_blas_end calls it); it also keeps the last
 * 16 square outputs the program kept lowered, any site's, for the
 * consumers below. */

/* The ring and the consumers: runtime/products.h. */

#endif
