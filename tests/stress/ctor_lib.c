/* A library whose constructor makes a BLAS product (dlopen_ctor.c loads it). */
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

float ctor_lib_result;

__attribute__((constructor)) static void ctor_lib_init(void)
{
    float a[2] = {1.0f + 0x1p-10f, 1.0f + 0x1p-10f};
    cblas_sgemm(102, 111, 111, 1, 1, 2, 1.0f, a, 1, a, 2, 0.0f, &ctor_lib_result, 1);
}
