/* AMPSHIM_CUDA_TIMING=cupti: the GPU time of every hooked call, from CUPTI's
 * activity records (the toolkit's libcupti, opened at run time).
 *
 * Around each hooked call (the same ones events mode samples) the shim
 * pushes an external correlation id of kind CUSTOM1 (Kineto, PyTorch's
 * profiler, uses CUSTOM0) holding the call's sequence number, and pops it
 * after; the call's hook and whether it was lowered go into a ring by
 * sequence number. CUPTI then reports, in buffers it hands back on its own
 * thread, an external-correlation record tying each launch's correlation
 * id to that number, and the kernel, memcpy and memset records with their
 * start and end and the same correlation id. The durations are added to
 * the hook's row of amp_ctl->gpu_time; a call is counted once, at its first
 * record. Buffers are flushed at exit and when ampctl asks.
 *
 * When another CUPTI client holds the subscription (cuptiSubscribe answers
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: the PyTorch profiler,
 * Nsight), or libcupti cannot be opened or set up, the shim says so in one
 * info line and times with events instead. The record layouts below are
 * CUPTI 13's (CUpti_ActivityKernel10, Memcpy6, Memset4, ExternalCorrelation:
 * start and end at 16 and 24 in all three kinds of work record); the test
 * fake of libcupti checks them against the header. */
#include "shim/cuda/cuda_cupti.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "runtime/accuracy_audit.h"
#include "runtime/log.h"
#include "shim/cuda/cuda_helpers.h"

/* libcupti's functions: one list, the one resolver. */
#define AMP_CUPTI_HELPERS(X)                                                                       \
    X(subscribe, cuptiSubscribe, int, void **, void *, void *)                                     \
    X(unsubscribe, cuptiUnsubscribe, int, void *)                                                  \
    X(register_callbacks, cuptiActivityRegisterCallbacks, int, void *, void *)                     \
    X(enable, cuptiActivityEnable, int, int)                                                       \
    X(push, cuptiActivityPushExternalCorrelationId, int, int, uint64_t)                            \
    X(pop, cuptiActivityPopExternalCorrelationId, int, int, uint64_t *)                            \
    X(next_record, cuptiActivityGetNextRecord, int, uint8_t *, size_t, void **)                    \
    X(flush_all, cuptiActivityFlushAll, int, uint32_t)
struct cupti_helpers {
    AMP_CUPTI_HELPERS(AMP_HELPER_MEMBER)
};
static const char *const cupti_sonames[] = {AMP_CUPTI_SONAME, "libcupti.so.12", NULL};
AMP_HELPER_LIST(static, cupti_list, "CUPTI", cupti_sonames, struct cupti_helpers,
                AMP_CUPTI_HELPERS);

enum {
    CUPTI_OK = 0,
    CUPTI_END_OF_BUFFER = 12,    /* CUPTI_ERROR_MAX_LIMIT_REACHED */
    CUPTI_MANY_SUBSCRIBERS = 39, /* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED */
    KIND_MEMCPY = 1,
    KIND_MEMSET = 2,
    KIND_CONCURRENT_KERNEL = 10,
    KIND_EXTERNAL_CORRELATION = 39,
    EXTERNAL_CUSTOM1 = 4,
    FLUSH_FORCED = 1,
    BUFFER_BYTES = 1 << 20,
    RING = 1 << 16, /* calls whose records may still come */
    CORRELATIONS = 4096,
};

/* The fields the shim reads (byte offsets in CUPTI 13's records). */
enum {
    AT_KIND = 0,
    AT_START = 16,
    AT_END = 24,
    AT_KERNEL_CORRELATION = 92,
    AT_COPY_CORRELATION = 44, /* memcpy and memset */
    AT_EXTERNAL_KIND = 4,
    AT_EXTERNAL_ID = 8,
    AT_EXTERNAL_CORRELATION = 16,
};

static struct cupti_helpers cupti;
static _Atomic int state; /* 0: not tried, 1: on, -1: off (events instead) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t next_seq = 1;
static struct {
    uint64_t seq;
    uint16_t hook;
    uint8_t lowered, counted;
} calls[RING];
static struct {
    uint32_t correlation;
    uint64_t seq;
} correlations[CORRELATIONS];

static uint64_t u64_at(const uint8_t *r, size_t at)
{
    uint64_t v;
    memcpy(&v, r + at, sizeof v);
    return v;
}

static uint32_t u32_at(const uint8_t *r, size_t at)
{
    uint32_t v;
    memcpy(&v, r + at, sizeof v);
    return v;
}

static void noop(void *user, int domain, int id, const void *data)
{
    (void)user, (void)domain, (void)id, (void)data;
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

/* A work record's time, to the call its correlation id came from. Under lock. */
static void add_work(uint32_t correlation, uint64_t ns)
{
    uint64_t seq = correlations[correlation % CORRELATIONS].correlation == correlation
                       ? correlations[correlation % CORRELATIONS].seq
                       : 0;
    if (!seq || calls[seq % RING].seq != seq)
        return; /* not a hooked call's, or its entry was overwritten */
    amp_gpu_time_add(calls[seq % RING].hook, calls[seq % RING].lowered, ns,
                     !calls[seq % RING].counted);
    calls[seq % RING].counted = 1;
}

static void buffer_completed(void *context, uint32_t stream, uint8_t *buffer, size_t size,
                             size_t valid)
{
    (void)context, (void)stream, (void)size;
    void *record = NULL;
    pthread_mutex_lock(&lock);
    while (buffer && cupti.next_record(buffer, valid, &record) == CUPTI_OK) {
        const uint8_t *r = record;
        uint32_t kind = u32_at(r, AT_KIND);
        if (kind == KIND_EXTERNAL_CORRELATION && u32_at(r, AT_EXTERNAL_KIND) == EXTERNAL_CUSTOM1) {
            uint32_t c = u32_at(r, AT_EXTERNAL_CORRELATION);
            correlations[c % CORRELATIONS].correlation = c;
            correlations[c % CORRELATIONS].seq = u64_at(r, AT_EXTERNAL_ID);
        } else if (kind == KIND_CONCURRENT_KERNEL || kind == KIND_MEMCPY || kind == KIND_MEMSET) {
            uint64_t start = u64_at(r, AT_START), end = u64_at(r, AT_END);
            add_work(u32_at(r, kind == KIND_CONCURRENT_KERNEL ? AT_KERNEL_CORRELATION
                                                              : AT_COPY_CORRELATION),
                     end > start ? end - start : 0);
        }
    }
    pthread_mutex_unlock(&lock);
    free(buffer);
}

static void flush(void)
{
    if (atomic_load(&state) == 1)
        cupti.flush_all(FLUSH_FORCED);
}

static void start_cupti(void)
{
    void *subscriber = NULL;
    int status = -1;
    const char *why = NULL;
    if (!amp_helpers_resolve(&cupti_list, &cupti, NULL))
        why = "libcupti.so.13 or .so.12 cannot be opened or lacks a function";
    else if ((status = cupti.subscribe(&subscriber, (void *)noop, NULL)) == CUPTI_MANY_SUBSCRIBERS)
        why = "another CUPTI client (a profiler) holds CUPTI";
    else if (status != CUPTI_OK ||
             cupti.register_callbacks((void *)buffer_requested, (void *)buffer_completed) !=
                 CUPTI_OK ||
             cupti.enable(KIND_EXTERNAL_CORRELATION) != CUPTI_OK ||
             cupti.enable(KIND_CONCURRENT_KERNEL) != CUPTI_OK ||
             cupti.enable(KIND_MEMCPY) != CUPTI_OK || cupti.enable(KIND_MEMSET) != CUPTI_OK)
        why = "CUPTI's activity API refused (no driver?)";
    if (why) {
        if (status == CUPTI_OK)
            cupti.unsubscribe(subscriber); /* left for a client that can use it */
        amp_log(AMP_LOG_INFO, "AMPSHIM_CUDA_TIMING=cupti: %s; GPU time is taken with events", why);
        atomic_store(&state, -1);
        return;
    }
    atomic_store(&state, 1);
    amp_audit_set_device_fold(flush);
    atexit(flush); /* before the exit report, which runs from the destructor */
}

int amp_cupti_on(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (amp_likely(atomic_load_explicit(&state, memory_order_relaxed) != 0))
        return atomic_load_explicit(&state, memory_order_relaxed) == 1;
    pthread_once(&once, start_cupti);
    return atomic_load(&state) == 1;
}

void amp_cupti_begin(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook)
{
    tm->pair = -1;
    uint64_t seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed);
    if (cupti.push(EXTERNAL_CUSTOM1, seq) != CUPTI_OK)
        return;
    tm->pair = 0;
    tm->seq = seq;
    tm->lowered_before =
        atomic_load_explicit(&t->counters[hook][AMP_CTL_LOWERED], memory_order_relaxed);
    /* The entry before the call, in case its records come before its end
     * (as made until the end says). A try: the hot path never waits, and a
     * signal handler's call cannot deadlock on this thread's hold. */
    if (pthread_mutex_trylock(&lock) == 0) {
        calls[seq % RING].seq = seq;
        calls[seq % RING].hook = (uint16_t)hook;
        calls[seq % RING].lowered = 0;
        calls[seq % RING].counted = 0;
        pthread_mutex_unlock(&lock);
    }
}

void amp_cupti_end(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook)
{
    if (tm->pair < 0)
        return;
    uint64_t last = 0;
    cupti.pop(EXTERNAL_CUSTOM1, &last);
    int lowered = atomic_load_explicit(&t->counters[hook][AMP_CTL_LOWERED], memory_order_relaxed) >
                  tm->lowered_before;
    if (pthread_mutex_trylock(&lock) == 0) {
        if (calls[tm->seq % RING].seq == tm->seq)
            calls[tm->seq % RING].lowered = (uint8_t)lowered;
        pthread_mutex_unlock(&lock);
    }
}

void amp_cupti_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&lock, phase);
    /* A child has none of the parent's CUDA, nor its CUPTI: nothing to
     * flush, and its calls are not timed through it. */
    int on = 1;
    if (phase == AMP_FORK_CHILD)
        atomic_compare_exchange_strong(&state, &on, -1);
}
