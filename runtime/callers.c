/* AMPSHIM_CALLERS: which calling code a hooked call comes from, found from
 * its return address with dladdr, matched against object-basename and
 * symbol globs, and cached by return address in a small lock-free table (a
 * call site's answer never changes), so the fast path pays one load. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>

#include "runtime/hook_state.h"

__thread void *amp_tls_caller __attribute__((tls_model("initial-exec")));

enum { CACHE_SIZE = 1024 };
/* Each entry packs (address << 1) | selected in one word; 0 is empty. User
 * addresses fit in 63 bits on every 64-bit Linux. */
static _Atomic uint64_t cache[CACHE_SIZE];

int amp_caller_selected(void *return_address)
{
    uint64_t addr = (uint64_t)(uintptr_t)return_address;
    size_t slot = (size_t)((addr >> 2) * 0x9e3779b97f4a7c15ull >> 54) % CACHE_SIZE;
    uint64_t entry = atomic_load_explicit(&cache[slot], memory_order_relaxed);
    if (entry && entry >> 1 == addr)
        return (int)(entry & 1);
    Dl_info info;
    int selected = dladdr(return_address, &info)
                       ? amp_config_selects_caller(&amp_rt.cfg, info.dli_fname, info.dli_sname)
                       : amp_config_selects_caller(&amp_rt.cfg, NULL, NULL);
    atomic_store_explicit(&cache[slot], addr << 1 | (uint64_t)selected, memory_order_relaxed);
    return selected;
}
