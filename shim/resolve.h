/* Resolution of the real library functions behind each hook, done once per
 * hook at its first call (so libraries loaded after the shim are found), and
 * the integer width (LP64 or ILP64) of the library each one lives in. */
#ifndef AMPSHIM_RESOLVE_H
#define AMPSHIM_RESOLVE_H

#include <stdatomic.h>
#include <stdint.h>

#include "loader/loader.h"
#include "policy/policy.h"
#include "runtime/threads.h"

/* Slow path: finds the real function (never ampshim's own), probes its
 * library's integer width, fills the slot. If no loaded library defines the
 * symbol, says so once and exits 127, as the dynamic loader would have. */
void *amp_resolve(enum amp_hook_id hook);

/* The real function behind a hook, or NULL if no loaded library defines it
 * (for functions the shim calls on its own account, such as the GemmEx a
 * lowered Sgemm becomes: missing means do not lower). */
void *amp_real_optional(enum amp_hook_id hook);

/* The real function behind hook in the library that defines real (a
 * lowered call's other entry point: cublasGemmEx beside the program's
 * cublasSgemm), or NULL when that library lacks it. One load when one
 * library defines the name. */
void *amp_real_beside(enum amp_hook_id hook, const void *real);

/* After a dlclose: hooks resolved into an object no longer loaded resolve
 * again at their next call. Cheap when nothing was unloaded; returns
 * whether something was. */
int amp_resolve_notice_unloads(void);

/* dlopen calls so far (counted by shim/dlopen_hook.c's stub). */
extern _Atomic uint64_t amp_dlopen_calls;

/* dlsym's filter (shim/dlopen_hook.c): whether p, found for name, is a hook
 * entry point of this library that no loaded library backs, for a lookup
 * made by the code at return address caller. */
int amp_resolve_hides(void *p, const char *name, void *caller);

/* A function of the real libraries that is not hooked (cublasGetMathMode),
 * found the same way; NULL if none defines it. */
void *amp_resolve_name(const char *name);

static inline void *amp_real(enum amp_hook_id hook)
{
    void *p = atomic_load_explicit(&amp_slot_of[hook]->real, memory_order_acquire);
    return __builtin_expect(p != NULL, 1) ? p : amp_resolve(hook);
}


/* After a dlopen (its hook bumps the generation; shim/load.c has each
 * thread's refresh call this): whether an object loaded since the last look
 * defines a name a hook resolved to one library, which then becomes a
 * per-caller ("several") hook. Cheap when nothing was loaded. */
void amp_resolve_notice_new_objects(void);

/* Libraries a wing reaches inside other objects (the oneDNN inside pip's
 * libtorch_cpu.so, shim/onednn/v3_inside.c): the wing registers its look
 * at load (a constructor of higher priority than the shim's own), and the
 * core makes it at start-up, at the first dlsym after a dlopen and at a
 * thread's first call after one (late: the objects may have run). */
void amp_resolve_set_inside_look(void (*look)(int late));
void amp_resolve_look_inside(int late);

/* A oneDNN 3 reached inside a library is offered to whichever wing runs
 * products on it (the BLAS wing's native executor, shim/blas/
 * native_onednn3.c, registers at load): the library's path and load base,
 * and execute, its dnnl_primitive_execute's trampoline (the function's
 * entry is patched). The oneDNN wing makes the offer when it reaches one;
 * nothing happens when no wing registered. */
typedef void (*amp_inside_onednn_taker)(const char *path, uintptr_t base, void *execute);
void amp_resolve_set_inside_onednn_taker(amp_inside_onednn_taker take);
void amp_resolve_offer_inside_onednn(const char *path, uintptr_t base, void *execute);

/* fork's share: the resolution lock. */
void amp_resolve_atfork(enum amp_fork_phase phase);

#endif
