/* What a product feeds (ampshim(7), WHAT LOWERING CAN CHANGE). Consumers: a LAPACK solve or
 * factorisation whose matrix a lowered product made (the normal equations'
 * X^T X into a Cholesky, a Gram into an eigensolver) carries that
 * product's rounding into every coefficient, amplified by the matrix's
 * condition, where the product's own audit passes it. At a LAPACK routine's
 * entry its square matrix is fingerprinted by content (numpy copies float32
 * into a float64 Fortran buffer first: the values are the same) and matched
 * with the last lowered outputs (shim/blas/blas_recurrence.h); the product's
 * site, when found, is marked consumed: its later calls run fp32 under the
 * defaults and AMPSHIM_AUDIT=auto, and the report's consumers line names
 * it and the routine. The call that revealed it ran lowered. x86-64 only
 * (the region hook's stub keeps the argument registers where this reads
 * them). */
#ifndef AMPSHIM_PRODUCTS_H
#define AMPSHIM_PRODUCTS_H

#include <stdint.h>

#include "runtime/sites.h"

/* The fingerprint of a matrix, float (p) or double (pd) values, element
 * (i, j) at i * rs + j * cs: FNV-1a over its shape and 12 elements at fixed
 * places (rows 0, 1/3, 2/3 and last; columns 0, 1/2 and last); with below,
 * of a square one, only the 5 of them below its diagonal (a syrk's one
 * triangle and the full symmetric matrix numpy makes of it agree; a ridge's
 * shift of the diagonal leaves it). 0: none (too small, not square when
 * asked, or the places all one value: zeros just made, a constant). */
uint64_t amp_products_fingerprint(const float *p, const double *pd, int64_t rows, int64_t cols,
                                  int64_t rs, int64_t cs, int below);

/* A square output the program kept lowered, by its fingerprint, with its
 * site: the last 16 are kept, any site's (shim/blas/blas_recurrence.c adds
 * them). */
void amp_products_add(uint64_t print, struct amp_site *s);

/* The site whose recent lowered output had this fingerprint, or NULL. */
struct amp_site *amp_products_find(uint64_t print);

/* At a CPU LAPACK routine's entry (shim/region_frames.c): hook, its first
 * six arguments (pointers, as Fortran passes them, in registers) and where
 * the others lie (the caller's stack); only arguments the routine has are
 * read. A site found is
 * marked consumed (runtime/sites.h); shim/blas/blas_recurrence.c runs its
 * later calls fp32 under the defaults and auto. */
void amp_products_consumer(int hook, void *const regs[6], void *const *stack);

#endif
