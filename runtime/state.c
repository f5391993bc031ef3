/* Runtime set-up (read the environment once, at load), the registry of
 * per-thread states, their scratch buffers, counters and fork handling. */
#include "runtime/state.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>


struct amp_runtime amp_rt;

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) struct amp_slot amp_slot_##sym;
AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
struct amp_slot *const amp_slot_of[AMP_HOOK_COUNT] = {
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) &amp_slot_##sym,
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
};

_Static_assert(offsetof(struct amp_runtime, mode) == 0, "entry stubs read the mode at 0");
_Static_assert(offsetof(struct amp_thread, fp32_depth) == 0, "entry stubs read fp32_depth at 0");
_Static_assert(offsetof(struct amp_thread, selected) == 4, "entry stubs read selected at 4");
_Static_assert(offsetof(struct amp_slot, real) == 0, "entry stubs read real at 0");
_Static_assert(offsetof(struct amp_slot, passthrough_counter) == 8, "entry stubs read it at 8");
_Static_assert(offsetof(struct amp_slot, passes) == 13, "entry stubs read passes at 13");
__thread struct amp_thread *amp_tls_thread __attribute__((tls_model("initial-exec")));

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thread_key;
static struct amp_thread *live_threads;
/* Counters of threads that have exited, folded in at their exit. */
static struct amp_counters exited_counters[AMP_HOOK_COUNT];

static int runs_unchanged(uint8_t category)
{
    return category != AMP_CAT_LOWER && category != AMP_CAT_FP32;
}

void amp_runtime_apply_policy(void)
{
    for (int dev = 0; dev < AMP_DEVICE_COUNT; dev++)
        for (int h = 0; h < AMP_HOOK_COUNT; h++)
            for (int acc = 0; acc < 2; acc++)
                amp_rt.category[dev][h][acc] = (uint8_t)amp_policy_category(
                    &amp_rt.cfg.policy, (enum amp_device)dev, (enum amp_hook_id)h, acc);
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        const uint8_t *cat = amp_rt.category[AMP_DEVICE_CPU][h];
        amp_slot_of[h]->passes = (uint8_t)(runs_unchanged(cat[0]) && runs_unchanged(cat[1]));
        amp_slot_of[h]->passthrough_counter =
            (uint32_t)(offsetof(struct amp_thread, counters) + (size_t)h * sizeof(struct amp_counters) +
                       offsetof(struct amp_counters, passthrough));
    }
}

static void fold_counters(struct amp_counters *into, const struct amp_counters *from)
{
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        amp_counter_add(&into[h].lowered, atomic_load_explicit(&from[h].lowered, memory_order_relaxed));
        amp_counter_add(&into[h].fp32, atomic_load_explicit(&from[h].fp32, memory_order_relaxed));
        amp_counter_add(&into[h].passthrough,
                        atomic_load_explicit(&from[h].passthrough, memory_order_relaxed));
        amp_counter_add(&into[h].converted,
                        atomic_load_explicit(&from[h].converted, memory_order_relaxed));
    }
}

static void free_scratch(struct amp_thread *t)
{
    if (t->scratch)
        munmap(t->scratch, t->scratch_bytes);
    t->scratch = NULL;
    t->scratch_bytes = 0;
}

static void thread_exit(void *arg)
{
    struct amp_thread *t = arg;
    pthread_mutex_lock(&registry_lock);
    for (struct amp_thread **p = &live_threads; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    fold_counters(exited_counters, t->counters);
    pthread_mutex_unlock(&registry_lock);
    amp_tls_thread = NULL;
    free_scratch(t);
    free(t);
}

struct amp_thread *amp_thread_create(void)
{
    struct amp_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->tid = (long)gettid();
    char name[16] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    t->selected = (uint8_t)amp_config_selects_thread(&amp_rt.cfg, t->tid, (long)getpid(), name);
    pthread_mutex_lock(&registry_lock);
    t->next = live_threads;
    live_threads = t;
    pthread_mutex_unlock(&registry_lock);
    pthread_setspecific(thread_key, t);
    amp_tls_thread = t;
    return t;
}

void *amp_scratch(struct amp_thread *t, size_t bytes)
{
    if (amp_likely(bytes <= t->scratch_bytes))
        return t->scratch;
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
    t->scratch = p;
    t->scratch_bytes = want;
    return p;
}

void amp_counters_total(enum amp_hook_id hook, uint64_t out[4])
{
    pthread_mutex_lock(&registry_lock);
    const struct amp_counters *c = &exited_counters[hook];
    out[0] = atomic_load_explicit(&c->lowered, memory_order_relaxed);
    out[1] = atomic_load_explicit(&c->fp32, memory_order_relaxed);
    out[2] = atomic_load_explicit(&c->passthrough, memory_order_relaxed);
    out[3] = atomic_load_explicit(&c->converted, memory_order_relaxed);
    for (struct amp_thread *t = live_threads; t; t = t->next) {
        c = &t->counters[hook];
        out[0] += atomic_load_explicit(&c->lowered, memory_order_relaxed);
        out[1] += atomic_load_explicit(&c->fp32, memory_order_relaxed);
        out[2] += atomic_load_explicit(&c->passthrough, memory_order_relaxed);
        out[3] += atomic_load_explicit(&c->converted, memory_order_relaxed);
    }
    pthread_mutex_unlock(&registry_lock);
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&registry_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&registry_lock);
}

/* The child has only the forking thread; it starts its own counts. Other
 * threads' states are dropped (their memory belongs to the parent's image). */
static void fork_child(void)
{
    pthread_mutex_init(&registry_lock, NULL);
    struct amp_thread *self = amp_tls_thread;
    live_threads = self;
    memset(exited_counters, 0, sizeof exited_counters);
    if (self) {
        self->next = NULL;
        self->tid = (long)gettid();
        memset(self->counters, 0, sizeof self->counters);
    }
}

static const char *secure_getenv_fn(const char *name)
{
    return secure_getenv(name);
}

static void init_runtime(void)
{
    int errors = amp_config_load(&amp_rt.cfg, secure_getenv_fn);
    if (errors && amp_rt.cfg.strict) {
        amp_log(AMP_LOG_ERROR, "AMPSHIM_STRICT=1 and %d bad variable%s; exiting with status 2",
                errors, errors == 1 ? "" : "s");
        _exit(2);
    }
    amp_runtime_apply_policy();
    if (pthread_key_create(&thread_key, thread_exit) != 0 ||
        pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
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
