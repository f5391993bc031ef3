/* The preload tests' own bf16 rounding (round to nearest even, in fp32
 * storage), written independently of the shim's kernels. */
#ifndef AMPSHIM_TEST_ORACLE_H
#define AMPSHIM_TEST_ORACLE_H

#include <stdint.h>
#include <string.h>

static inline float oracle_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) <= 0x7f800000u)
        u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

#endif
