/* Process-wide and per-thread state the hooks read on every call, kept small
 * and branch-light: one global mode word, one thread-local pointer, one
 * category byte per hook. */
#ifndef AMPSHIM_STATE_H
#define AMPSHIM_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/config.h"

#define amp_likely(x) __builtin_expect(!!(x), 1)
#define amp_unlikely(x) __builtin_expect(!!(x), 0)

enum amp_mode { AMP_MODE_UNINIT, AMP_MODE_INERT, AMP_MODE_ACTIVE };

/* One per hook: what its entry point reads before anything else. The x86-64
 * entry stubs (shim/entry_x86_64.h) read these fields by offset. */
struct amp_slot {
    void *_Atomic real;           /* the real function; published after ilp64 */
    uint32_t passthrough_counter; /* offset of this hook's passthrough counter in amp_thread */
    uint8_t ilp64;                /* the real function takes 64-bit integers */
    uint8_t passes;               /* the policy passes it through whatever beta is */
};

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) extern struct amp_slot amp_slot_##sym;
AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
extern struct amp_slot *const amp_slot_of[AMP_HOOK_COUNT];

struct amp_runtime {
    _Atomic int mode;
    struct amp_config cfg;
    /* Effective category after overrides: [device][hook][accumulates]. */
    uint8_t category[AMP_DEVICE_COUNT][AMP_HOOK_COUNT][2];
};

extern struct amp_runtime amp_rt;

/* Per-hook counters of one thread. Written only by the owning thread (plain
 * load + store, no lock prefix), read by the report with relaxed loads. */
struct amp_counters {
    _Atomic uint64_t lowered, fp32, passthrough, converted;
};

enum amp_outcome { AMP_OUTCOME_PASSTHROUGH, AMP_OUTCOME_LOWERED, AMP_OUTCOME_FP32 };

/* The first two fields are read by the x86-64 entry stubs at offsets 0 and 4. */
struct amp_thread {
    uint32_t fp32_depth; /* > 0 inside LAPACK and other fp32 regions */
    uint8_t selected;    /* AMPSHIM_THREADS chose this thread */
    long tid;
    void *scratch;
    size_t scratch_bytes;
    struct amp_thread *next;
    struct amp_counters counters[AMP_HOOK_COUNT];
};

extern __thread struct amp_thread *amp_tls_thread __attribute__((tls_model("initial-exec")));

void amp_runtime_init(void);
struct amp_thread *amp_thread_create(void);

static inline int amp_mode(void)
{
    return atomic_load_explicit(&amp_rt.mode, memory_order_acquire);
}

/* The calling thread's state, or NULL when the shim is inert (disabled, or
 * the state could not be allocated): then the hook just forwards. */
static inline struct amp_thread *amp_thread_enter(void)
{
    int mode = amp_mode();
    if (amp_unlikely(mode != AMP_MODE_ACTIVE)) {
        if (mode != AMP_MODE_UNINIT)
            return NULL;
        amp_runtime_init();
        if (atomic_load_explicit(&amp_rt.mode, memory_order_acquire) != AMP_MODE_ACTIVE)
            return NULL;
    }
    struct amp_thread *t = amp_tls_thread;
    return amp_likely(t != NULL) ? t : amp_thread_create();
}

static inline void amp_counter_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* A scratch buffer of at least `bytes` owned by the thread, reused across
 * calls; NULL when it cannot be had (the caller then runs in fp32). */
void *amp_scratch(struct amp_thread *t, size_t bytes);

/* Sums of every thread's counters, live and exited, for one hook. */
void amp_counters_total(enum amp_hook_id hook, uint64_t out[4]);

/* Recomputes amp_rt.category from the configuration. */
void amp_runtime_apply_policy(void);

#endif
