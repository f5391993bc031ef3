/* The address-keyed answer caches: see runtime/addr_cache.h. */
#include "runtime/addr_cache.h"

#include "loader/loader.h"

uint64_t amp_addr_cache_put(const struct amp_addr_cache *c, const void *address, uint64_t answer)
{
    uint64_t a = (uint64_t)(uintptr_t)address;
    _Atomic uint64_t *set = amp_addr_cache_set(c, a), *slot = &set[(a >> 4) % AMP_ADDR_WAYS];
    for (int w = 0; w < AMP_ADDR_WAYS; w++)
        if (!atomic_load_explicit(&set[w], memory_order_relaxed)) {
            slot = &set[w];
            break;
        }
    atomic_store_explicit(slot, a << c->bits | (answer & ((1ull << c->bits) - 1)),
                          memory_order_relaxed);
    return answer;
}

void amp_addr_cache_forget_unloaded(const struct amp_addr_cache *c)
{
    for (size_t i = 0; i < c->size; i++) {
        uint64_t e = atomic_load_explicit(&c->entry[i], memory_order_relaxed);
        if (e && !amp_address_loaded((void *)(uintptr_t)(e >> c->bits)))
            atomic_compare_exchange_strong_explicit(&c->entry[i], &e, 0, memory_order_relaxed,
                                                    memory_order_relaxed);
    }
}
