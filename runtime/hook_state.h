/* Process-wide and per-thread state the hooks read on every call, kept small
 * and branch-light: one global mode word, one thread-local pointer, one
 * category byte per hook. */
#ifndef AMPSHIM_HOOK_STATE_H
#define AMPSHIM_HOOK_STATE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/config.h"
#include "runtime/control.h"

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


#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) extern struct amp_slot amp_slot_##sym;
AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
extern struct amp_slot *const amp_slot_of[AMP_HOOK_COUNT];

/* The integer width of the function the current call of a "several" hook
 * was resolved to (set by the per-caller resolution). */
extern __thread uint8_t amp_tls_real_ilp64 __attribute__((tls_model("initial-exec")));

/* Whether the current call of hook takes 64-bit integers. */
static inline int amp_hook_ilp64(int hook)
{
    return amp_slot_of[hook]->several ? amp_tls_real_ilp64 : amp_slot_of[hook]->ilp64;
}

/* After a dlopen (its hook bumps the generation): whether an object loaded
 * since the last look defines a name a hook resolved to one library, which
 * then becomes a per-caller ("several") hook. Cheap when nothing was loaded. */
void amp_resolve_notice_new_objects(void);

struct amp_runtime {
    _Atomic int mode;
    struct amp_config cfg;
    /* Effective category after overrides: [device][hook][accumulates]. */
    uint8_t category[AMP_DEVICE_COUNT][AMP_HOOK_COUNT][2];
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

/* Is the code at this return address a numerical library calling itself
 * (an object that defines hooked entry points, or a CUDA library of a hooked
 * family)? Cached. */
int amp_caller_is_library(void *return_address);

/* The same, with the thread's last call site remembered in front of the
 * shared cache: a hot loop calls from one site. */
extern __thread void *amp_tls_library_site __attribute__((tls_model("initial-exec")));
extern __thread uint8_t amp_tls_library_answer __attribute__((tls_model("initial-exec")));

static inline int amp_call_from_library(void *return_address)
{
    if (__builtin_expect(return_address == amp_tls_library_site, 1))
        return amp_tls_library_answer;
    int answer = amp_caller_is_library(return_address);
    amp_tls_library_site = return_address;
    amp_tls_library_answer = (uint8_t)answer;
    return answer;
}

/* The names a caller goes by in AMPSHIM_CALLERS, call-site policy entries
 * and the audit: its object's path (matched by basename) and its function,
 * as dladdr(3) names them. Code in no loaded object (JIT code, an anonymous
 * executable mapping) is the object "?" with no function: `?`, `?:*` and
 * `*` select it. */
#define AMP_CALLER_UNNAMED "?"
struct amp_caller {
    const char *object;   /* a path, or AMP_CALLER_UNNAMED */
    const char *function; /* NULL when dladdr names none */
    uintptr_t base;       /* the object's load address; 0 when unnamed */
};
void amp_caller_name(void *return_address, struct amp_caller *c);

/* Whether p lies in a loaded object (asks the loader: never under a lock of
 * ours). */
int amp_address_loaded(const void *p);

/* After a dlclose that unloaded something: forgets every answer cached for
 * an address no loaded object holds any more, and makes every thread drop
 * its last-site answer. Never under a lock of ours (it asks the loader). */
void amp_callers_forget_unloaded(void);
/* The same for the audit's map from return addresses to call sites. */
void amp_audit_forget_unloaded(void);

/* Does AMPSHIM_CALLERS select the code at this return address? Cached. */
int amp_caller_selected(void *return_address);

/* The category the policy's call-site entries (NAME@CALLER=CATEGORY) give a
 * call of hook from this return address, or AMP_CAT_UNSET. Cached. */
int amp_caller_site_category(void *return_address, enum amp_device dev, enum amp_hook_id hook,
                             int accumulates);

/* Marks a change made in this process (region push/pop, ampshim_ctl, a
 * rename) so every thread re-reads at its next call. */
void amp_ctl_bump(void);

extern __thread struct amp_thread *amp_tls_thread __attribute__((tls_model("initial-exec")));

void amp_runtime_init(void);
/* Before amp_runtime_init: another copy of the library (first) came first in
 * the process; this one (self) will stay inert, with one warning. */
void amp_runtime_other_copy(const char *first, const char *self);
struct amp_thread *amp_thread_create(void);

/* The shim's locks are taken with every signal blocked: a signal handler that
 * makes a BLAS call while its thread holds one (the first call's set-up, a
 * resolution) would otherwise wait on itself forever. The signal is
 * delivered when the lock is let go. Cancellation is held off as well: the
 * set-up reads files (open and read are cancellation points), and a thread
 * cancelled there would end with the lock held and hang every other thread. */
struct amp_quiet {
    sigset_t mask;
    int cancel_state;
};

static inline void amp_signals_block(struct amp_quiet *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old->mask);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old->cancel_state);
}

static inline void amp_signals_restore(const struct amp_quiet *old)
{
    pthread_setcancelstate(old->cancel_state, NULL);
    pthread_sigmask(SIG_SETMASK, &old->mask, NULL);
}

static inline void amp_lock_quietly(pthread_mutex_t *lock, struct amp_quiet *old)
{
    amp_signals_block(old);
    pthread_mutex_lock(lock);
}

static inline void amp_unlock_quietly(pthread_mutex_t *lock, const struct amp_quiet *old)
{
    pthread_mutex_unlock(lock);
    amp_signals_restore(old);
}

/* fork while another thread holds one of the shim's locks (a first call
 * resolving, a caller being classified) would leave it held forever in the
 * child: each file's lock is taken before fork and released after it, in
 * the parent and in the child (the forking thread holds them in both;
 * runtime/threads.c runs them in the order the locks nest: callers,
 * resolve, registry, log). */
enum amp_fork_phase { AMP_FORK_PREPARE, AMP_FORK_PARENT, AMP_FORK_CHILD };
void amp_callers_atfork(enum amp_fork_phase phase);
void amp_resolve_atfork(enum amp_fork_phase phase);
void amp_log_atfork(enum amp_fork_phase phase);
/* The accuracy audit's site table (runtime/accuracy_audit.c). */
void amp_audit_atfork(enum amp_fork_phase phase);
/* The native executor's primitive cache (kernels/cpu/onednn.c). */
void amp_onednn_atfork(enum amp_fork_phase phase);
/* The native executor's worker queue (shim/cpu/native_pool.c); a child
 * starts with no workers. */
void amp_native_pool_atfork(enum amp_fork_phase phase);

/* dl_iterate_phdr, made so that fork waits for it (shim/resolve.c). */
struct dl_phdr_info;
int amp_walk_objects(int (*callback)(struct dl_phdr_info *, size_t, void *), void *data);

static inline void amp_lock_atfork(pthread_mutex_t *lock, enum amp_fork_phase phase)
{
    if (phase == AMP_FORK_PREPARE)
        pthread_mutex_lock(lock);
    else
        pthread_mutex_unlock(lock);
}

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

static inline void amp_count(struct amp_thread *t, enum amp_hook_id hook, enum amp_ctl_counter which,
                             uint64_t n)
{
    amp_counter_add(&t->counters[hook][which], n);
}

/* Sums of every thread's counters, live and exited, for one hook. */
void amp_counters_total(enum amp_hook_id hook, uint64_t out[AMP_CTL_COUNTERS]);


/* Recomputes amp_rt.category from the configuration. */
void amp_runtime_apply_policy(void);

#endif
