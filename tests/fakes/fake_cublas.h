/* TEST-ONLY: what the fake libcublas.so.13 records of the last call it ran,
 * shared by the fake and the programs that check it. */
#ifndef AMPSHIM_FAKE_CUBLAS_H
#define AMPSHIM_FAKE_CUBLAS_H

struct fake_cublas_record {
    char function[48];
    int atype, btype, ctype, compute;
    long calls;
    int major; /* the library that ran it: 13, or 12 (tests/fakes/cublas12) */
};

const struct fake_cublas_record *fake_cublas_last_call(void);

/* How many times a handle's math mode was set (struct cublasContext *). */
struct cublasContext;
long fake_cublas_math_writes(struct cublasContext *h);

#endif
