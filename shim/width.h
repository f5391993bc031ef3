/* The integer width of a hook's real function: known from the entry
 * point's name (the _64 and 64_ suffixes, CUDA's _64 forms), or probed in
 * the BLAS library that defines it (shim/width.c). */
#ifndef AMPSHIM_WIDTH_H
#define AMPSHIM_WIDTH_H

#include "policy/policy.h"

/* 1 when real (hook's real function) takes 64-bit integers. */
int amp_width_ilp64(enum amp_hook_id hook, void *real);

/* Integer width of a BLAS library, judged by calling its isamax with
 * n = 0xffffffff00000003 (libblastrampoline's probe): an LP64 library reads
 * n = 3 and answers 3, an ILP64 one reads a negative n and answers 0.
 * Returns 1 for ILP64, 0 for LP64, -1 when the answer is neither. */
int amp_probe_ilp64_fortran(void *isamax_fortran);
int amp_probe_ilp64_cblas(void *cblas_isamax);

#endif
