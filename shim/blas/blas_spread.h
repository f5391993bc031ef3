/* The spread check (ampshim(7), WHAT LOWERING CAN CHANGE): a product whose
 * operands carry their information below the lowered type's resolution runs
 * as made. Values far from the origin for their spread lose it to rounding
 * (bf16 keeps 8 bits: near 100 its spacing is 0.5, so points 0.5 apart
 * around 100 become one), and every product of them then carries that loss
 * into what the program computes from the differences (a k-means's
 * distances |x|^2 - 2 x.c + |c|^2). The statistic is read from a sample of
 * each multiplicand before anything is rounded, so the check costs the same
 * at every size; what it cannot see (amplification after the product:
 * recurrences, Krylov methods, normal equations) ampshim(7) lists. */
#ifndef AMPSHIM_BLAS_SPREAD_H
#define AMPSHIM_BLAS_SPREAD_H

#include "shim/blas/blas_plan.h"

/* The samples the check reads of one operand. A multiplicand's summed
 * index is read whole up to AMP_SPREAD_LINE_MAX values (so a single
 * feature far from the origin among a thousand centred ones is seen), with
 * a sample that grows with the product (amp_blas_spread_keeps) up to
 * AMP_SPREAD_BUDGET, and at least AMP_SPREAD_EACH (8) per summed index
 * (a value 2024 +- 3 whose rounding errs by 0 to 3 is then seen: all 8
 * exact has odds of 7^-8);
 * an operand without a free index (a vector, a symmetric or triangular
 * matrix) a grid of up to 16 lines by 32 places, or 512 elements of a
 * vector. Costs measured by bench/spread_bench. */
#define AMP_SPREAD_LINE_MAX 1024
#define AMP_SPREAD_EACH 8
#define AMP_SPREAD_BUDGET 8192
#define AMP_SPREAD_SAMPLES 512
#define AMP_SPREAD_GRID 32

/* The share of o's spread that rounding it to dtype would erase, read from
 * about `samples` of its elements (AMP_SPREAD_SAMPLES to AMP_SPREAD_BUDGET;
 * more where its summed index needs AMP_SPREAD_EACH for each of its
 * values):
 * rms(x - round(x)) / sqrt(V) over the sampled elements x the routine
 * reads. V is the variance along the operand's free index (o->free_dir)
 * pooled over its summed index: for a product's left factor, within each
 * of its columns; for the right factor, within each row. That is what tells
 * the product's outputs apart (the k-means's distances from one point to
 * each centre differ by the centres' spread, feature by feature), and what
 * rounding erases of it every output carries. A data matrix's features are
 * thus seen one by one, in either layout: 64 features at offsets from 0 to
 * 1000, each with a spread of 1, read 0.8, where the whole matrix's
 * variance would say 0.003. For a vector, or a symmetric or triangular
 * operand, V is the smaller of the two ways. Centred normal data read
 * 0.0017 in bf16; uniform values in [1, 2), 0.008; values around 100 with a
 * spread of 1, 0.14. 0 when rounding erases nothing or the free index has
 * no spread (one output line: nothing to tell apart); non-finite values,
 * values of 2^56 and more, and values fp16 overflows are left out. Raises
 * no floating-point exception flag. */
double amp_operand_spread_loss(const struct amp_operand *o, enum amp_lowp_dtype dtype,
                               int64_t samples);

/* The sample a product of `flops` reads of each operand: about a
 * thirty-thousandth of its flops, AMP_SPREAD_SAMPLES to
 * AMP_SPREAD_BUDGET, so the check costs a few percent of the smallest
 * products lowered and microseconds of the largest (bench/spread_bench). */
static inline int64_t amp_spread_samples(double flops)
{
    return flops / 32768 < (double)AMP_SPREAD_BUDGET ? (int64_t)(flops / 32768) : AMP_SPREAD_BUDGET;
}

/* For a lowered call that is about to run lowered: whether its operands'
 * spread keeps it as made (AMPSHIM_SPREAD_LOSS; never for an explicit
 * request). Then the call's outcome is AMP_OUTCOME_SPREAD (counted spread),
 * one info line says so for the symbol, and under the audit its site notes
 * the evidence (AMPSHIM_AUDIT=auto keeps the site fp32 by it). */
int amp_blas_spread_keeps(struct amp_blas_call *c);

#endif
