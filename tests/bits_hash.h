/* Test helper: a hash of every bit of a result (FNV-1a), which programs
 * print so that run_check can compare a run under the shim with one
 * without it. */
#ifndef AMPSHIM_TEST_BITS_HASH_H
#define AMPSHIM_TEST_BITS_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
