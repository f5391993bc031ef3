/* A library whose constructor makes a BLAS product (dlopen_ctor.c loads it). */
#include "tests/probe_product.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

float ctor_lib_result;

__attribute__((constructor)) static void ctor_lib_init(void)
{
    ctor_lib_result = probe_product(cblas_sgemm);
}
