/* GPU time per hooked CUDA call: see shim/cuda/cuda_timing.h.
 *
 * Each device has a fixed set of event pairs (made at their first use,
 * with timing). A due call takes a free pair under `lock`, records its start
 * event on the call's stream before the call and its stop event after, and
 * leaves the pair pending. A pending pair is read back:
 *   - when a due call finds no free pair: the pairs the GPU has already
 *     passed (cudaEventQuery answers success) are read without waiting; if
 *     none has, the call is not timed;
 *   - at exit and when ampctl asks (amp_audit_fold's device read-back):
 *     every pending pair, waiting for its stop event, on its device, with
 *     the thread's capture mode relaxed (as the audit's read-back).
 * A call whose stream is being captured is not timed (an event recorded
 * there would become a node of the program's graph). The time goes to
 * amp_ctl->gpu_time[hook], as lowered when the thread's lowered counter for
 * the hook grew during the call, else as made. */
#include "shim/cuda/cuda_timing.h"

#include <pthread.h>
#include <stdlib.h>

#include "runtime/accuracy_audit.h"
#include "loader/loader.h"
#include "runtime/log.h"
#include "shim/cuda/cuda_cupti.h"
#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_scratch.h"

__thread uint32_t amp_cuda_timing_tick __attribute__((tls_model("initial-exec")));

enum {
    PAIRS = 256,
    READY = 0, /* cudaSuccess */
};

struct pair {
    void *start, *stop;
    uint16_t hook;
    uint8_t lowered;
};
/* Each device's pairs: the free ones on a stack, the pending ones in the
 * order they were recorded (a ring), so taking one is O(1). Under lock. */
static struct device_pairs {
    struct pair pair[PAIRS];
    int free[PAIRS], n_free, ready;
    int pending[PAIRS], head, n_pending;
} devices[AMP_CUDA_DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct amp_cudart_helpers *rt;
static int usable, finished;

static void fold(void);

static void final_fold(void)
{
    fold();
    pthread_mutex_lock(&lock);
    finished = 1; /* the runtime may be gone after */
    pthread_mutex_unlock(&lock);
}

static void find_runtime(void)
{
    rt = amp_cudart_helpers();
    usable = rt->event_create && rt->event_record && rt->event_query && rt->event_sync &&
             rt->event_elapsed && rt->is_capturing;
    if (!usable) {
        amp_log(AMP_LOG_INFO, "no CUDA runtime with events found; GPU time is not measured");
        return;
    }
    amp_audit_set_device_fold(fold);
    atexit(final_fold); /* after the runtime's own atexit: runs before it */
}

static int ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_runtime);
    return usable;
}

/* Reads the oldest pending pair back into its hook's row and frees it.
 * Under lock. */
static void harvest_oldest(struct device_pairs *dp)
{
    int i = dp->pending[dp->head];
    struct pair *p = &dp->pair[i];
    float ms = 0;
    if (rt->event_elapsed(&ms, p->start, p->stop) == READY && ms >= 0)
        amp_gpu_time_add(p->hook, p->lowered, (uint64_t)((double)ms * 1e6 + 0.5), 1);
    dp->head = (dp->head + 1) % PAIRS;
    dp->n_pending--;
    dp->free[dp->n_free++] = i;
}

/* A free pair of device d; when there is none, the oldest pending one if
 * the GPU has passed it (read back first); -1 when it has not. Under lock. */
static int take(struct device_pairs *dp)
{
    if (!dp->ready) {
        for (int i = 0; i < PAIRS; i++)
            dp->free[i] = PAIRS - 1 - i;
        dp->n_free = PAIRS;
        dp->ready = 1;
    }
    /* The query as every read-back (another thread's global-mode capture
     * must not see it). */
    struct amp_cuda_readback back;
    if (!dp->n_free && dp->n_pending && amp_cuda_readback_begin(&back)) {
        int passed = rt->event_query(dp->pair[dp->pending[dp->head]].stop) == READY;
        amp_cuda_readback_end(&back);
        if (passed)
            harvest_oldest(dp);
    }
    return dp->n_free ? dp->free[--dp->n_free] : -1;
}

/* Gives a pair back unused, or queues it as pending. Under lock. */
static void put(struct device_pairs *dp, int i, int pending)
{
    if (pending)
        dp->pending[(dp->head + dp->n_pending++) % PAIRS] = i;
    else
        dp->free[dp->n_free++] = i;
}

void amp_cuda_time_start(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook,
                         void *stream)
{
    tm->pair = -1;
    tm->cupti = 0;
    if (amp_live_load(&amp_rt.cfg.cuda_timing) == AMP_CUDA_TIMING_CUPTI) {
        if (amp_cupti_on()) {
            tm->cupti = 1;
            amp_cupti_begin(tm, t, hook);
            return;
        }
        /* CUPTI could not be had: events, sampled as in events mode. */
        if (++amp_cuda_timing_tick < amp_live_load(&amp_rt.cfg.cuda_timing_sample))
            return;
        amp_cuda_timing_tick = 0;
    }
    int capturing = 1;
    if (!ready() || (tm->device = amp_cuda_device()) < 0 ||
        rt->is_capturing(stream, &capturing) != 0 || capturing)
        return;
    struct device_pairs *dp = &devices[tm->device];
    /* A try: a signal handler's hooked call while this thread holds the
     * lock is simply not timed (and the end below runs only after a start
     * that got it), so no signal is blocked and nothing can deadlock. */
    if (pthread_mutex_trylock(&lock) != 0)
        return;
    int i = finished ? -1 : take(dp);
    struct pair *p = i >= 0 ? &dp->pair[i] : NULL;
    if (p && !p->start &&
        (rt->event_create(&p->start, 0) != READY || rt->event_create(&p->stop, 0) != READY)) {
        p->start = p->stop = NULL; /* (one made is lost: a failure to make an event is rare) */
        put(dp, i, 0);
        p = NULL;
    }
    pthread_mutex_unlock(&lock);
    if (!p)
        return;
    if (rt->event_record(p->start, stream) != READY) {
        pthread_mutex_lock(&lock);
        put(dp, i, 0);
        pthread_mutex_unlock(&lock);
        return;
    }
    tm->pair = i;
    tm->lowered_before =
        atomic_load_explicit(&t->counters[hook][AMP_CTL_LOWERED], memory_order_relaxed);
}

void amp_cuda_time_end(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook,
                       void *stream)
{
    if (tm->cupti) {
        amp_cupti_end(tm, t, hook);
        return;
    }
    if (tm->pair < 0)
        return;
    struct device_pairs *dp = &devices[tm->device];
    struct pair *p = &dp->pair[tm->pair];
    int recorded = rt->event_record(p->stop, stream) == READY;
    pthread_mutex_lock(&lock);
    p->hook = (uint16_t)hook;
    p->lowered = atomic_load_explicit(&t->counters[hook][AMP_CTL_LOWERED], memory_order_relaxed) >
                 tm->lowered_before;
    put(dp, tm->pair, recorded);
    pthread_mutex_unlock(&lock);
}

/* Reads every pending pair back, waiting for each. */
static void fold(void)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&lock, &quiet);
    struct amp_cuda_readback back;
    if (!finished && amp_cuda_readback_begin(&back)) {
        for (int d = 0; d < AMP_CUDA_DEVICES; d++) {
            struct device_pairs *dp = &devices[d];
            if (!dp->n_pending || rt->set_device(d) != READY)
                continue;
            /* In order; one the GPU cannot finish stays, with those after it. */
            while (dp->n_pending && rt->event_sync(dp->pair[dp->pending[dp->head]].stop) == READY)
                harvest_oldest(dp);
        }
        amp_cuda_readback_end(&back);
    }
    amp_unlock_quietly(&lock, &quiet);
}

void amp_cuda_timing_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&lock, phase);
    if (phase == AMP_FORK_CHILD)
        finished = 1;
}
