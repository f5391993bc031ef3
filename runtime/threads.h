/* Process-wide and per-thread state the hooks read on every call, kept small
 * and branch-light: one global mode word, one thread-local pointer, one
 * category byte per hook; and the thread registry that keeps it
 * (runtime/threads.c). The lock helpers are runtime/lock.h's. */
#ifndef AMPSHIM_THREADS_H
#define AMPSHIM_THREADS_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "loader/loader.h"
#include "runtime/callers.h"
#include "runtime/config.h"
#include "runtime/control.h"
#include "runtime/lock.h"

/* Settings ampctl may change while other threads run are read and written
 * with these: relaxed atomic accesses (plain moves on x86-64). */
#define amp_live_load(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define amp_live_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

#define amp_likely(x) __builtin_expect(!!(x), 1)
#define amp_unlikely(x) __builtin_expect(!!(x), 0)

enum amp_mode { AMP_MODE_UNINIT, AMP_MODE_INERT, AMP_MODE_ACTIVE };

/* One per hook: what its entry point reads before anything else. The x86-64
 * entry stubs (shim/hook_stub_x86_64.h) read these fields by offset. */
struct amp_slot {
    void *_Atomic real;           /* the real function; published after ilp64. NULL while
                                     unresolved, and when several libraries define it */
    uint32_t passthrough_counter; /* offset of this hook's passthrough counter in amp_thread */
    uint8_t ilp64;                /* the real function takes 64-bit integers */
    uint8_t passes;               /* the policy passes it through whatever beta is */
    _Atomic uint8_t several;      /* more than one loaded library defines the name: each
                                     call goes to its caller's own (shim/resolve.c) */
};


#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta)                                    \
    extern struct amp_slot amp_slot_##sym;
AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
extern struct amp_slot *const amp_slot_of[AMP_HOOK_COUNT];

/* The integer width of the function the current call of a "several" hook
 * was resolved to (set by the per-caller resolution), and whether that was
 * a guess (its caller links none of the libraries that define it). */
extern __thread uint8_t amp_tls_real_ilp64 __attribute__((tls_model("initial-exec")));
extern __thread uint8_t amp_tls_real_guessed __attribute__((tls_model("initial-exec")));

/* Whether the current call of hook takes 64-bit integers. */
static inline int amp_hook_ilp64(int hook)
{
    return amp_slot_of[hook]->several ? amp_tls_real_ilp64 : amp_slot_of[hook]->ilp64;
}

struct amp_runtime {
    _Atomic int mode;
    struct amp_config cfg;
    /* Effective category after overrides: [device][hook][accumulates]. */
    uint8_t category[AMP_DEVICE_COUNT][AMP_HOOK_COUNT][2];
    /* 1 where a policy entry naming the hook's symbol or routine lowers it
     * (an explicit request: runtime/decide.h), [device][hook]. */
    uint8_t named_lower[AMP_DEVICE_COUNT][AMP_HOOK_COUNT];
};

extern struct amp_runtime amp_rt;

_Static_assert(AMP_HOOK_COUNT <= AMP_CTL_MAX_HOOKS, "raise AMP_CTL_MAX_HOOKS");
_Static_assert(AMP_OP_COUNT <= AMP_CTL_MAX_OPS, "raise AMP_CTL_MAX_OPS");


/* Re-reads the block after its generation changed: process-wide settings
 * once per change, then this thread's own state. */
void amp_ctl_refresh(struct amp_thread *t);

/* Recomputes whether autocast is on for t after its region stack changed. */
void amp_thread_recompute(struct amp_thread *t);

/* pthread_setname_np renamed a thread: it re-reads its name (AMPSHIM_THREADS
 * matches names) at its next call. */
void amp_thread_renamed(unsigned long pthread_id);

/* The return address of the hooked call being decided. */
extern __thread void *amp_tls_caller __attribute__((tls_model("initial-exec")));

/* Every hook's C entry notes its return address first thing (a stub in
 * front of it jumps, so it is the program's call site). */
#define AMP_NOTE_CALLER() (amp_tls_caller = __builtin_return_address(0))

/* Marks a change made in this process (region push/pop, ampshim_ctl, a
 * rename) so every thread re-reads at its next call. */
void amp_ctl_bump(void);

extern __thread struct amp_thread *amp_tls_thread __attribute__((tls_model("initial-exec")));

void amp_runtime_init(void);
/* Has fn run at every thread's refresh after a generation change (the
 * hooks' layer notices new objects there; see shim/load.c). */
void amp_runtime_on_refresh(void (*fn)(void));
/* fork's share: the thread registry's lock; the child drops its parent's
 * block and thread list. */
void amp_runtime_atfork(enum amp_fork_phase phase);
/* Before amp_runtime_init: another copy of the library (first) came first in
 * the process; this one (self) will stay inert, with one warning. */
void amp_runtime_other_copy(const char *first, const char *self);
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
    if (amp_unlikely(!t) && !(t = amp_thread_create()))
        return NULL;
    if (amp_unlikely(atomic_load_explicit(&t->seen_generation, memory_order_relaxed) !=
                     atomic_load_explicit(amp_ctl_generation, memory_order_acquire)))
        amp_ctl_refresh(t);
    return t;
}

static inline void amp_counter_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* A scratch buffer of at least `bytes` owned by the thread, reused across
 * calls; NULL when it cannot be had (the caller then runs in fp32), also
 * while another call of the same thread uses it (a signal handler's BLAS
 * call interrupting a lowered one). amp_scratch_done gives it back at the
 * end of the call, and unmaps it when it is larger than
 * AMP_SCRATCH_KEEP_BYTES (one large product must not keep gigabytes
 * resident for the thread's life). */
#define AMP_SCRATCH_KEEP_BYTES ((size_t)64 << 20)
void *amp_scratch(struct amp_thread *t, size_t bytes);
void amp_scratch_done(struct amp_thread *t);

/* A buffer of the shim's own for one call (an audit's, a check's or a pay
 * check's copy of an output, the audit's spread places), zeroed, NULL
 * without memory; amp_shadow_free takes it back (NULL is fine). It is
 * mapped and unmapped directly, never taken from malloc's heap: a block
 * freed there moves glibc's mmap and trim thresholds or the heap's top,
 * and the program's own arrays then came from a heap trimmed and faulted
 * in again (a numpy script: 22k page faults under pay checks where plain
 * fp32 made 2.9k; auto's small check copies doubled the brk calls and
 * made it 15% slower than the defaults). */
void *amp_shadow_alloc(size_t bytes);
void amp_shadow_free(void *p);

static inline void amp_count(struct amp_thread *t, enum amp_hook_id hook,
                             enum amp_ctl_counter which, uint64_t n)
{
    amp_counter_add(&t->counters[hook][which], n);
}

/* Sums of every thread's counters, live and exited, for one hook. */
void amp_counters_total(enum amp_hook_id hook, uint64_t out[AMP_CTL_COUNTERS]);

/* Monotonic nanoseconds (the vDSO's clock: about 20 ns). */
static inline uint64_t amp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The process's CPU time in nanoseconds (a system call: for pay checks
 * only): every thread's, the BLAS's and the native executor's workers
 * included, and none of the time another process had the cores, so a
 * busy machine does not make a run look slower. */
static inline uint64_t amp_cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CPU hooks' sampled wall time (AMPSHIM_CPU_TIMING_SAMPLE): whether
 * this call of the thread is one to time, every Nth call that reaches a
 * hook's slow path (a pass-through's fast path is never timed and pays
 * nothing for it; the BLAS hooks and the oneDNN primitives share the
 * thread's tick) ... */
extern __thread uint32_t amp_cpu_timing_tick __attribute__((tls_model("initial-exec")));
static inline int amp_cpu_timing_due(void)
{
    uint32_t every = amp_live_load(&amp_rt.cfg.cpu_timing_sample);
    if (amp_likely(++amp_cpu_timing_tick < every))
        return 0;
    amp_cpu_timing_tick = 0;
    return every != 0; /* 0: off */
}

/* ... and a timed call's wall time and flops (0: not known) added to its
 * hook's row of the block, lowered or as made, and to its call site's (caller:
 * the call's return address; runtime/site_time.h) (out of line: one call in
 * N). */
void amp_cpu_time_record(enum amp_hook_id hook, double flops, uint64_t ns, int lowered,
                         void *caller);


/* Recomputes amp_rt.category from the configuration. */
void amp_runtime_apply_policy(void);

#endif
