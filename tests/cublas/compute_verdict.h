/* The probes of tests/cublas/compute_types_gpu and what they say about the
 * format a compute type gave fp32 inputs, shared with the unit test that
 * checks the verdict against ampshim's own rounding to each format
 * (tests/unit/test_compute_verdict.c), so the reading of a GPU's answer is
 * tested where there is no GPU. */
#ifndef AMPSHIM_TEST_COMPUTE_VERDICT_H
#define AMPSHIM_TEST_COMPUTE_VERDICT_H

#include <math.h>

enum { PROBES = 4 };
/* range: Inf in fp16; tiny: 0 in fp16 (below its smallest subnormal);
 * 1 + 2^-9: 1 in bf16 (8 significant bits); 1 + 2^-12: 1 in TF32 and fp16
 * (11 bits), kept by fp32. */
static const float probe_value[PROBES] = {1e5f, 1e-8f, 1.0f + 0x1p-9f, 1.0f + 0x1p-12f};
static const char *const probe_name[PROBES] = {"range 1e5", "tiny 1e-8", "1+2^-9", "1+2^-12"};

/* What the probes, as the product gave them back, say the inputs were:
 * "fp16", "bf16", "tf32", "fp32", or NULL when they match none. */
static inline const char *verdict(const float v[PROBES])
{
    int overflow = isinf(v[0]), flushed = v[1] == 0.0f, kept9 = v[2] == probe_value[2],
        kept12 = v[3] == probe_value[3];
    if (overflow && flushed && kept9 && !kept12)
        return "fp16";
    if (overflow || flushed)
        return (const char *)0;
    if (!kept9 && !kept12)
        return "bf16";
    if (kept9 && !kept12)
        return "tf32";
    if (kept9 && kept12)
        return "fp32";
    return (const char *)0;
}

#endif
