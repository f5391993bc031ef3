/* TEST-ONLY: what the fakes of the CUDA libraries share. */
#ifndef AMPSHIM_FAKE_COMMON_H
#define AMPSHIM_FAKE_COMMON_H

#include <stdint.h>
#include <string.h>

/* x rounded to nearest even with its low `drop` mantissa bits cleared
 * (16: bf16, 13: tf32); NaN stays NaN, Inf stays Inf. */
static inline float fake_round_bits(float x, unsigned drop)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u = (u + ((1u << (drop - 1)) - 1) + ((u >> drop) & 1u)) & ~((1u << drop) - 1);
    memcpy(&x, &u, 4);
    return x;
}

/* Copies a function's name into a call record's fixed field. */
static inline void fake_record_name(char *field, size_t size, const char *function)
{
    memset(field, 0, size);
    strncpy(field, function, size - 1);
}

#endif
