/* Runtime set-up (the environment, read once at load), the control block
 * and the per-thread states that live in it, their scratch buffers and
 * counters, and fork handling. */
#include "runtime/site_time.h"
#include "runtime/accuracy_audit.h"
#include "runtime/threads.h"
#include "runtime/decide.h"
#include "runtime/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

struct amp_runtime amp_rt;
__thread struct amp_thread *amp_tls_thread __attribute__((tls_model("initial-exec")));

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) struct amp_slot amp_slot_##sym;
AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
struct amp_slot *const amp_slot_of[AMP_HOOK_COUNT] = {
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) &amp_slot_##sym,
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
};

_Static_assert(offsetof(struct amp_runtime, mode) == 0, "entry stubs read the mode at 0");
_Static_assert(offsetof(struct amp_slot, real) == 0, "entry stubs read real at 0");
_Static_assert(offsetof(struct amp_slot, passthrough_counter) == 8, "entry stubs read it at 8");
_Static_assert(offsetof(struct amp_slot, passes) == 13, "entry stubs read passes at 13");


static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;
/* Threads that found no free slot live in private memory, on this list
 * (owner_private[3] is the link). */
static struct amp_thread *overflow_threads;
static uint64_t applied_generation;

enum { PRIV_SCRATCH, PRIV_SCRATCH_BYTES, PRIV_PTHREAD, PRIV_NEXT, PRIV_IN_BLOCK };

static int runs_unchanged(uint8_t category)
{
    return category != AMP_CAT_LOWER && category != AMP_CAT_FP32;
}

/* Categories: ampctl's op overrides (in the block) beat the environment's. */
void amp_runtime_apply_policy(void)
{
    for (int dev = 0; dev < AMP_DEVICE_COUNT; dev++)
        for (int h = 0; h < AMP_HOOK_COUNT; h++)
            for (int acc = 0; acc < 2; acc++) {
                uint8_t ctl = amp_ctl
                                  ? atomic_load_explicit(&amp_ctl->policy[dev][amp_hook_op[h][acc]],
                                                         memory_order_relaxed)
                                  : AMP_CTL_POLICY_NONE;
                amp_live_store(&amp_rt.category[dev][h][acc],
                               ctl < AMP_CAT_COUNT ? ctl
                                                   : (uint8_t)amp_policy_category(
                                                         &amp_rt.cfg.policy, (enum amp_device)dev,
                                                         (enum amp_hook_id)h, acc));
            }
    /* An entry naming a hook's symbol or routine that lowers it is an
     * explicit request (runtime/decide.h). */
    const struct amp_policy_overrides *ov = &amp_rt.cfg.policy;
    for (int dev = 0; dev < AMP_DEVICE_COUNT; dev++)
        for (int h = 0; h < AMP_HOOK_COUNT; h++) {
            uint8_t named =
                ov->hook[dev][h] != AMP_CAT_UNSET ? ov->hook[dev][h] : ov->routine[dev][h];
            amp_live_store(&amp_rt.named_lower[dev][h],
                           (uint8_t)(named == AMP_CAT_LOWER &&
                                     amp_live_load(&amp_rt.category[dev][h][0]) == AMP_CAT_LOWER));
        }
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        const uint8_t *cat = amp_rt.category[amp_hook_device[h]][h];
        amp_live_store(&amp_slot_of[h]->passes, (uint8_t)(runs_unchanged(amp_live_load(&cat[0])) &&
                                                          runs_unchanged(amp_live_load(&cat[1]))));
        amp_slot_of[h]->passthrough_counter =
            (uint32_t)offsetof(struct amp_thread, counters[h][AMP_CTL_PASSTHROUGH]);
    }
}

void amp_ctl_bump(void)
{
    atomic_fetch_add_explicit(amp_ctl_generation, 1, memory_order_release);
}

/* ---- per-thread state ---- */

/* Applies the process-wide fields of a new generation, once. */
static void apply_process_settings(uint64_t gen)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&registry_lock, &quiet);
    if (amp_ctl && gen != applied_generation) {
        amp_settings_apply(amp_ctl, &amp_rt.cfg);
        amp_runtime_apply_policy();
        applied_generation = gen;
    }
    amp_unlock_quietly(&registry_lock, &quiet);
}

/* Whether autocast is on for this thread, and in which dtype on each device,
 * by its sources, highest first (ampshim(7) says the same): the in-process
 * region stack, ampctl for this thread, ampctl for the process,
 * AMPSHIM_THREADS. */
static void recompute_thread(struct amp_thread *t)
{
    /* A region the thread pushed, and ampctl's word for this thread, are
     * explicit requests (AMP_SELECTED_EXPLICIT: runtime/decide.h). */
    int selected = amp_innermost_autocast(t) >= 0 ? AMP_SELECTED_EXPLICIT : -1;
    if (selected < 0) {
        uint32_t want = atomic_load(&t->want);
        uint32_t process = amp_ctl ? atomic_load(&amp_ctl->enabled) : AMP_CTL_FOLLOW;
        if (want != AMP_CTL_FOLLOW)
            selected = want == AMP_CTL_ON ? AMP_SELECTED_EXPLICIT : 0;
        else if (process != AMP_CTL_FOLLOW)
            selected = process == AMP_CTL_ON;
        else
            selected = amp_config_selects_thread(&amp_rt.cfg, (long)atomic_load(&t->tid),
                                                 (long)getpid(), t->name);
    }
    t->selected = (uint8_t)selected;
    /* AMPSHIM_CALLERS and call-site policy entries decide in C, from the
     * caller. */
    t->caller_filter = amp_rt.cfg.callers[0] != '\0' || amp_rt.cfg.policy.n_sites != 0;
    atomic_store_explicit(&t->dtype, (uint32_t)amp_thread_dtype_on(t, AMP_DEVICE_CPU),
                          memory_order_relaxed);
    atomic_store_explicit(&t->cuda_dtype, (uint32_t)amp_thread_dtype_on(t, AMP_DEVICE_CUDA),
                          memory_order_relaxed);
}

void amp_thread_recompute(struct amp_thread *t)
{
    recompute_thread(t);
}

void amp_thread_renamed(unsigned long pthread_id)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&registry_lock, &quiet);
    if (amp_ctl)
        for (int i = 0; i < AMP_CTL_MAX_THREADS; i++)
            if (atomic_load(&amp_ctl->threads[i].tid) &&
                amp_ctl->threads[i].owner_private[PRIV_PTHREAD] == pthread_id)
                __atomic_store_n(&amp_ctl->threads[i].rename_pending, 1, __ATOMIC_RELAXED);
    for (struct amp_thread *t = overflow_threads; t;
         t = (struct amp_thread *)(uintptr_t)t->owner_private[PRIV_NEXT])
        if (t->owner_private[PRIV_PTHREAD] == pthread_id)
            __atomic_store_n(&t->rename_pending, 1, __ATOMIC_RELAXED);
    amp_unlock_quietly(&registry_lock, &quiet);
    amp_ctl_bump();
}

static void read_own_name(struct amp_thread *t)
{
    char name[16] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    memcpy(t->name, name, sizeof t->name);
}

static void amp_ctl_refresh_quietly(struct amp_thread *t);

/* What the hooks' layer runs at each refresh (shim/load.c sets it before
 * its dlopen hook can bump the generation): noticing objects a dlopen
 * brought. */
static void (*on_refresh)(void);

void amp_runtime_on_refresh(void (*fn)(void))
{
    on_refresh = fn;
}

/* Runs with signals blocked: a signal handler's BLAS call must not re-enter
 * it (it allocates and walks the loaded objects). */
void amp_ctl_refresh(struct amp_thread *t)
{
    struct amp_quiet quiet;
    amp_signals_block(&quiet);
    amp_ctl_refresh_quietly(t);
    amp_signals_restore(&quiet);
}

static void amp_ctl_refresh_quietly(struct amp_thread *t)
{
    uint64_t gen = atomic_load_explicit(amp_ctl_generation, memory_order_acquire);
    if (on_refresh)
        on_refresh();
    apply_process_settings(gen);
    /* ampctl audit asks for the audit's device results: read back here,
     * outside the registry's lock (it waits for the device). */
    if (amp_ctl && atomic_load(&amp_ctl->audit_request) != atomic_load(&amp_ctl->audit_served))
        amp_audit_fold();
    /* A generation change may come from an unload (amp_callers_forget_unloaded):
     * the thread's last call site may now be another object's code. */
    amp_tls_library_site = NULL;
    if (__atomic_load_n(&t->rename_pending, __ATOMIC_RELAXED)) {
        __atomic_store_n(&t->rename_pending, 0, __ATOMIC_RELAXED);
        read_own_name(t);
    }
    recompute_thread(t);
    atomic_store_explicit(&t->seen_generation, gen, memory_order_release);
}

static void fold_into_exited(struct amp_thread *t)
{
    if (!amp_ctl)
        return;
    for (int h = 0; h < AMP_HOOK_COUNT; h++)
        for (int c = 0; c < AMP_CTL_COUNTERS; c++)
            amp_counter_add(&amp_ctl->exited[h][c],
                            atomic_load_explicit(&t->counters[h][c], memory_order_relaxed));
}

static void free_scratch(struct amp_thread *t)
{
    if (t->owner_private[PRIV_SCRATCH])
        munmap((void *)(uintptr_t)t->owner_private[PRIV_SCRATCH],
               (size_t)t->owner_private[PRIV_SCRATCH_BYTES]);
    t->owner_private[PRIV_SCRATCH] = 0;
    t->owner_private[PRIV_SCRATCH_BYTES] = 0;
}

static void thread_exit(void *arg)
{
    struct amp_quiet quiet;
    struct amp_thread *t = arg;
    amp_lock_quietly(&registry_lock, &quiet);
    fold_into_exited(t);
    free_scratch(t);
    if (t->owner_private[PRIV_IN_BLOCK]) {
        /* Stored one by one, atomically: ampctl and ampshim_ctl read a
         * live slot's counters while its thread ends. */
        for (int h = 0; h < AMP_CTL_MAX_HOOKS; h++)
            for (int c = 0; c < AMP_CTL_COUNTER_SLOTS; c++)
                atomic_store_explicit(&t->counters[h][c], 0, memory_order_relaxed);
        atomic_store(&t->tid, 0); /* the slot is free again */
    } else {
        for (struct amp_thread **p = &overflow_threads; *p;
             p = (struct amp_thread **)&(*p)->owner_private[PRIV_NEXT])
            if (*p == t) {
                *p = (struct amp_thread *)(uintptr_t)t->owner_private[PRIV_NEXT];
                break;
            }
        free(t);
    }
    amp_unlock_quietly(&registry_lock, &quiet);
    amp_tls_thread = NULL;
}

struct amp_thread *amp_thread_create(void)
{
    struct amp_quiet quiet;
    amp_log_release_held();
    amp_lock_quietly(&registry_lock, &quiet);
    if (!amp_ctl)
        applied_generation = amp_ctl_create();
    struct amp_thread *t = NULL;
    if (amp_ctl)
        for (int i = 0; i < AMP_CTL_MAX_THREADS && !t; i++)
            if (atomic_load(&amp_ctl->threads[i].tid) == 0)
                t = &amp_ctl->threads[i];
    if (t) {
        memset(t, 0, offsetof(struct amp_thread, counters));
        t->owner_private[PRIV_IN_BLOCK] = 1;
    } else {
        /* All slots taken: private state, invisible to ampctl. */
        t = calloc(1, sizeof *t);
        if (!t) {
            amp_unlock_quietly(&registry_lock, &quiet);
            return NULL;
        }
        t->owner_private[PRIV_NEXT] = (uint64_t)(uintptr_t)overflow_threads;
        overflow_threads = t;
    }
    read_own_name(t);
    t->owner_private[PRIV_PTHREAD] = (uint64_t)pthread_self();
    atomic_store(&t->tid, (int64_t)gettid());
    amp_unlock_quietly(&registry_lock, &quiet);
    pthread_setspecific(thread_key, t);
    amp_tls_thread = t;
    amp_ctl_refresh(t);
    return t;
}

enum { SHADOW_HEADER = 64 };

void *amp_shadow_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX - SHADOW_HEADER)
        return NULL;
    size_t total = bytes + SHADOW_HEADER;
    char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, &total, sizeof total);
    return p + SHADOW_HEADER;
}

void amp_shadow_free(void *buffer)
{
    if (!buffer)
        return;
    char *p = (char *)buffer - SHADOW_HEADER;
    size_t total;
    memcpy(&total, p, sizeof total);
    munmap(p, total);
}

static void *amp_scratch_take(struct amp_thread *t, size_t bytes);

void *amp_scratch(struct amp_thread *t, size_t bytes)
{
    /* Only this thread and its signal handlers touch the flag: a compiler
     * fence orders it, no locked instruction is needed. A handler that runs
     * between the test and the set finishes with the buffer before the
     * interrupted call takes it. */
    if (amp_unlikely(__atomic_load_n(&t->scratch_busy, __ATOMIC_RELAXED)))
        return NULL; /* a nested call (a signal handler's): it runs in fp32 */
    __atomic_store_n(&t->scratch_busy, 1, __ATOMIC_RELAXED);
    atomic_signal_fence(memory_order_seq_cst);
    void *p = amp_scratch_take(t, bytes);
    if (!p)
        __atomic_store_n(&t->scratch_busy, 0, __ATOMIC_RELAXED);
    return p;
}

void amp_scratch_done(struct amp_thread *t)
{
    if (amp_unlikely(t->owner_private[PRIV_SCRATCH_BYTES] > AMP_SCRATCH_KEEP_BYTES))
        free_scratch(t);
    atomic_signal_fence(memory_order_seq_cst);
    __atomic_store_n(&t->scratch_busy, 0, __ATOMIC_RELAXED);
}

static void *amp_scratch_take(struct amp_thread *t, size_t bytes)
{
    if (amp_likely(bytes <= t->owner_private[PRIV_SCRATCH_BYTES]))
        return (void *)(uintptr_t)t->owner_private[PRIV_SCRATCH];
    /* Grow to the next 2 MiB so big buffers can be huge pages; the buffer is
     * kept for the thread's life so steady loops never fault pages in. */
    size_t want = (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
    free_scratch(t);
    void *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, want, MADV_HUGEPAGE);
#endif
    t->owner_private[PRIV_SCRATCH] = (uint64_t)(uintptr_t)p;
    t->owner_private[PRIV_SCRATCH_BYTES] = want;
    return p;
}

static void add_counters(uint64_t out[AMP_CTL_COUNTERS], _Atomic uint64_t *row)
{
    for (int c = 0; c < AMP_CTL_COUNTERS; c++)
        out[c] += atomic_load_explicit(&row[c], memory_order_relaxed);
}

void amp_counters_total(enum amp_hook_id hook, uint64_t out[AMP_CTL_COUNTERS])
{
    struct amp_quiet quiet;
    memset(out, 0, AMP_CTL_COUNTERS * sizeof *out);
    amp_lock_quietly(&registry_lock, &quiet);
    if (amp_ctl) {
        add_counters(out, amp_ctl->exited[hook]);
        for (int i = 0; i < AMP_CTL_MAX_THREADS; i++)
            if (atomic_load_explicit(&amp_ctl->threads[i].tid, memory_order_relaxed))
                add_counters(out, amp_ctl->threads[i].counters[hook]);
    }
    for (struct amp_thread *t = overflow_threads; t;
         t = (struct amp_thread *)(uintptr_t)t->owner_private[PRIV_NEXT])
        add_counters(out, t->counters[hook]);
    amp_unlock_quietly(&registry_lock, &quiet);
}

void amp_runtime_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&registry_lock, phase);
    if (phase != AMP_FORK_CHILD)
        return;
    /* The child drops its parent's block (runtime/control.c) and its thread
     * list; it makes its own block at its next hooked call, with fresh
     * counters. */
    amp_ctl_drop_after_fork();
    overflow_threads = NULL;
    amp_tls_thread = NULL;
    pthread_setspecific(thread_key, NULL);
}

static const char *secure_getenv_fn(const char *name)
{
    return secure_getenv(name);
}

static char other_copy[600];

void amp_runtime_other_copy(const char *first, const char *self)
{
    snprintf(other_copy, sizeof other_copy, "%.250s is loaded already; this copy (%.250s)", first,
             self);
}

static void init_runtime(void)
{
    /* Warnings about the variables wait for the process's first hooked call
     * (amp_thread_create): a child that only inherited LD_PRELOAD stays quiet. */
    amp_log_hold();
    int errors = amp_config_load(&amp_rt.cfg, secure_getenv_fn);
    if (!getauxval(AT_SECURE)) /* a setuid program's environment is not read */
        errors += amp_config_check_names(environ);
    if ((errors && amp_rt.cfg.strict) || !amp_rt.cfg.enable)
        amp_log_release_held(); /* AMPSHIM_STRICT stops now; disabled speaks only if asked */
    if (errors && amp_rt.cfg.strict) {
        amp_log(AMP_LOG_ERROR, "AMPSHIM_STRICT=1 and %d bad variable%s; exiting with status 2",
                errors, errors == 1 ? "" : "s");
        _exit(2);
    }
    if (other_copy[0] && amp_rt.cfg.enable) {
        /* Said at once, whether or not this process calls BLAS: two copies
         * in one process are a mistake in how it was started. */
        amp_log_drop_held();
        amp_log(AMP_LOG_WARN, "another copy of libampshim: %s stays inert", other_copy);
        atomic_store_explicit(&amp_rt.mode, AMP_MODE_INERT, memory_order_release);
        return;
    }
    amp_runtime_apply_policy();
    if (pthread_key_create(&thread_key, thread_exit) != 0) {
        amp_log(AMP_LOG_ERROR, "cannot set up thread state; autocast is off in this process");
        atomic_store_explicit(&amp_rt.mode, AMP_MODE_INERT, memory_order_release);
        return;
    }
    atomic_store_explicit(&amp_rt.mode, amp_rt.cfg.enable ? AMP_MODE_ACTIVE : AMP_MODE_INERT,
                          memory_order_release);
}

void amp_runtime_init(void)
{
    pthread_once(&init_once, init_runtime);
}

__thread uint32_t amp_cpu_timing_tick __attribute__((tls_model("initial-exec")));

void amp_cpu_time_record(enum amp_hook_id hook, double flops, uint64_t ns, int lowered,
                         void *caller)
{
    struct amp_ctl_block *b = amp_ctl;
    if (!b)
        return;
    /* clamped: a flop count past 2^63 is no count (and no uint64_t) */
    uint64_t f = flops > 0 && flops < 0x1p63 ? (uint64_t)flops : 0;
    amp_cpu_time_add_row(b->cpu_time[hook][amp_cpu_time_class(f)], ns, f, lowered);
    amp_site_time_record(caller, hook, f, ns, lowered);
}
