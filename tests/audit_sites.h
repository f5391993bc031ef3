/* The data of the accuracy audit's three call sites, shared by its CPU test
 * (tests/preload/audit_sites.c) and its cuBLAS test against the fakes
 * (tests/cublas/cublas_audit_sites.c): a well-scaled product, one whose A is
 * above fp16's range, and one that cancels (C = sum (1 + r 2^-12) b - sum b,
 * so A's first N columns round to 1 in fp16 and bf16 and the lowered result
 * is all error). A is N x N (N x 2N for the cancelling one), B N x N
 * (2N x N); `row_major` says how they are stored. Also the tests' hash of an
 * output. */
#ifndef AMPSHIM_TEST_AUDIT_SITES_H
#define AMPSHIM_TEST_AUDIT_SITES_H

#include <stddef.h>
#include <stdint.h>

enum { AUDIT_N = 64 };

struct audit_data {
    float a_well[AUDIT_N * AUDIT_N], b_well[AUDIT_N * AUDIT_N];
    float a_over[AUDIT_N * AUDIT_N], b_over[AUDIT_N * AUDIT_N];
    float a_canc[AUDIT_N * 2 * AUDIT_N], b_canc[2 * AUDIT_N * AUDIT_N];
};

static inline float audit_uniform(uint64_t *state) /* [-1, 1) */
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (float)((double)(*state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

static inline void audit_fill(struct audit_data *d, int row_major)
{
    enum { N = AUDIT_N };
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N * N; i++) {
        d->a_well[i] = audit_uniform(&s);
        d->b_well[i] = audit_uniform(&s);
        d->a_over[i] = 1e5f * audit_uniform(&s);
        d->b_over[i] = 1e-3f * audit_uniform(&s);
    }
    /* A(i, j) for j < N is 1 + r 2^-12, A(i, N + j) is -1; B's rows j and
     * N + j are equal. */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            float r = (audit_uniform(&s) + 1.0f) * 0.5f; /* [0, 1) */
            d->a_canc[row_major ? i * 2 * N + j : i + j * N] = 1.0f + r * 0x1p-12f;
            d->a_canc[row_major ? i * 2 * N + N + j : i + (N + j) * N] = -1.0f;
        }
    for (int j = 0; j < N; j++)
        for (int l = 0; l < N; l++) {
            float v = audit_uniform(&s);
            d->b_canc[row_major ? j * N + l : j + l * 2 * N] = v;
            d->b_canc[row_major ? (N + j) * N + l : N + j + l * 2 * N] = v;
        }
}

static inline uint64_t audit_hash(const float *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n * sizeof *p; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
