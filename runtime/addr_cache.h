/* A lock-free cache of small answers by code address (a return address, a
 * stack frame), for the questions whose answer never changes while the
 * object holding the address is loaded and which the loader answers slowly
 * (dladdr scans an object's symbol table: 0.3 ms in libtorch_cpu). Each
 * entry packs (address << bits) | answer in one word, 0 empty; user
 * addresses fit in 57 bits on every 64-bit Linux. Entries come in sets of
 * AMP_ADDR_WAYS: with one entry a set, two addresses every stack walk
 * passes that hashed alike evicted each other at every call (ResNet-50
 * under auto spent 10% of its time in dladdr in the runs whose layout made
 * two collide). Users: runtime/sites.c (frames), runtime/callers.c
 * (callers). */
#ifndef AMPSHIM_ADDR_CACHE_H
#define AMPSHIM_ADDR_CACHE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { AMP_ADDR_WAYS = 4 };

/* A cache of `size` entries (a power of two, a multiple of the ways) whose
 * answers take `bits` bits. */
struct amp_addr_cache {
    _Atomic uint64_t *entry;
    size_t size;
    unsigned bits;
};

/* Defines the cache `name` of `entries` entries with answers of
 * `answer_bits` bits, in the file that uses it: every user declares it so. */
#define AMP_ADDR_CACHE(name, entries, answer_bits)                                                 \
    static _Atomic uint64_t name##_entries[entries];                                               \
    static const struct amp_addr_cache name = {name##_entries, entries, answer_bits}

/* The set an address hashes to. */
static inline _Atomic uint64_t *amp_addr_cache_set(const struct amp_addr_cache *c, uint64_t a)
{
    size_t i = (size_t)((a * 0x9e3779b97f4a7c15ull) >> 32) & (c->size - 1);
    return &c->entry[i & ~(size_t)(AMP_ADDR_WAYS - 1)];
}

/* The answer cached for address, or -1: a few loads, on hooks' paths. */
static inline int64_t amp_addr_cache_get(const struct amp_addr_cache *c, const void *address)
{
    uint64_t a = (uint64_t)(uintptr_t)address;
    _Atomic uint64_t *set = amp_addr_cache_set(c, a);
    for (int w = 0; w < AMP_ADDR_WAYS; w++) {
        uint64_t e = atomic_load_explicit(&set[w], memory_order_relaxed);
        if (e && e >> c->bits == a)
            return (int64_t)(e & ((1ull << c->bits) - 1));
    }
    return -1;
}

/* Caches answer (below 2^bits) for address: an empty way of its set, else
 * the way its low bits pick. Returns answer. */
uint64_t amp_addr_cache_put(const struct amp_addr_cache *c, const void *address, uint64_t answer);

/* After a dlclose: forgets the answers for addresses no loaded object
 * holds (a library loaded later at the same address is another). */
void amp_addr_cache_forget_unloaded(const struct amp_addr_cache *c);

#endif
