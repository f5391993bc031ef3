/* The integer width (LP64 or ILP64) of the function a hook resolves to
 * (shim/width.h), beside resolution (shim/resolve.c). */
#include "shim/width.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>

#include "loader/loader.h"
#include "runtime/log.h"

/* 0: the library's own width, probed; else 32 or 64, known from the name. */
static const uint8_t hook_ints[AMP_HOOK_COUNT] = {
#define AMP_INTS_WIDTH_LP 0
#define AMP_INTS_WIDTH_I32 32
#define AMP_INTS_WIDTH_I64 64
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_INTS_WIDTH_##ints,
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
};

#define PROBE_N ((int64_t)0xffffffff00000003ull)

int amp_probe_ilp64_fortran(void *isamax_fortran)
{
    int64_t n = PROBE_N, inc = 1;
    float x[3] = {1.0f, 2.0f, 3.0f};
    int64_t (*isamax)(const int64_t *, const float *, const int64_t *) =
        (int64_t(*)(const int64_t *, const float *, const int64_t *))isamax_fortran;
    int32_t answer = (int32_t)isamax(&n, x, &inc); /* LP64 fills only eax */
    return answer == 3 ? 0 : answer == 0 ? 1 : -1;
}

int amp_probe_ilp64_cblas(void *cblas_isamax)
{
    float x[3] = {1.0f, 2.0f, 3.0f};
    int64_t (*isamax)(int64_t, const float *, int64_t) =
        (int64_t(*)(int64_t, const float *, int64_t))cblas_isamax;
    /* cblas_isamax is 0-based: an LP64 library answers 2. */
    int32_t answer = (int32_t)isamax(PROBE_N, x, 1);
    return answer == 2 ? 0 : answer == 0 ? 1 : -1;
}

/* Integer width of the library that defines `real` (hook's real function),
 * probed through the isamax of the hook's own mangling (scipy_isamax_ for
 * scipy_sgemm_), else the plain ones; cached by load base, one atomic word
 * an entry (the base, page aligned, with the answer in its low bit): no
 * lock, so nothing for fork to take. */
static _Atomic uintptr_t width_cache[32];

static int library_is_ilp64(enum amp_hook_id hook, void *real)
{
    Dl_info info;
    if (!dladdr(real, &info))
        return 0;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    for (size_t i = 0; i < sizeof width_cache / sizeof *width_cache; i++) {
        uintptr_t e = atomic_load_explicit(&width_cache[i], memory_order_acquire);
        if (e && (e & ~(uintptr_t)1) == base)
            return (int)(e & 1);
    }
    int ilp64 = -1;
    void *probe =
        amp_hook_width_probe[hook] ? amp_sibling_symbol(real, amp_hook_width_probe[hook]) : NULL;
    if (probe)
        ilp64 = amp_hook_form_is_cblas[hook] ? amp_probe_ilp64_cblas(probe)
                                             : amp_probe_ilp64_fortran(probe);
    else if ((probe = amp_sibling_symbol(real, "isamax_")))
        ilp64 = amp_probe_ilp64_fortran(probe);
    else if ((probe = amp_sibling_symbol(real, "cblas_isamax")))
        ilp64 = amp_probe_ilp64_cblas(probe);
    if (ilp64 < 0) {
        amp_log(AMP_LOG_INFO, "%s: cannot tell its integer width (no isamax); assuming LP64",
                info.dli_fname);
        ilp64 = 0;
    }
    /* Two threads probing one library at once both store the same answer. */
    for (size_t i = 0; i < sizeof width_cache / sizeof *width_cache; i++) {
        uintptr_t empty = 0;
        if (atomic_compare_exchange_strong(&width_cache[i], &empty, base | (uintptr_t)ilp64) ||
            (empty & ~(uintptr_t)1) == base)
            break;
    }
    return ilp64;
}

int amp_width_ilp64(enum amp_hook_id hook, void *real)
{
    return hook_ints[hook] ? hook_ints[hook] == 64 : library_is_ilp64(hook, real);
}
