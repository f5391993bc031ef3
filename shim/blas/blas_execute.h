/* Running a planned, lowered CPU BLAS call (shim/blas/blas_execute.c). */
#ifndef AMPSHIM_BLAS_EXECUTE_H
#define AMPSHIM_BLAS_EXECUTE_H

#include "shim/blas/blas_plan.h"

/* Rounds the planned operands; on bad arguments, a trivial call or no scratch
 * memory it leaves them alone and the call runs as the program made it. A
 * gemm the native executor takes is run there and marked done. */
void amp_blas_lower(struct amp_blas_call *c, int valid);

#endif
