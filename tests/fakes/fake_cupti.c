/* TEST-ONLY fake of libcupti.so.13: a CPU stand-in, never installed. CUPTI
 * does nothing without a driver (its activity calls answer
 * CUPTI_ERROR_UNKNOWN on a machine with no GPU), so CI tests the shim's
 * CUPTI mode against this: the callback subscription
 * (FAKE_CUPTI_TAKEN=1: another client holds it), the activity buffers'
 * callbacks, external correlation ids pushed and popped per thread, and
 * records of the real layouts (CUpti_ActivityExternalCorrelation,
 * CUpti_ActivityKernel10) for each "kernel" the fake cuBLAS reports (each
 * of its calls, once kernel activity is enabled: this fake registers itself
 * with fake_cublas_on_launch), FAKE_CUPTI_KERNEL_NS (default 1000)
 * nanoseconds each,
 * handed back at cuptiActivityFlushAll. Compiled against the real
 * cupti.h, which checks the offsets the shim reads. */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static int enabled[64];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *records; /* records not handed back yet */
static size_t used, capacity;
static uint32_t correlation;
static uint64_t clock_ns = 1000000;
static char subscriber;

/* Each thread's stack of external ids (the top one tags launches). */
static __thread struct {
    int kind;
    uint64_t id;
} pushed[8];
static __thread int depth;

AMP_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc f, void *u)
{
    (void)f, (void)u;
    const char *taken = getenv("FAKE_CUPTI_TAKEN");
    if (taken && *taken == '1')
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    *s = (CUpti_SubscriberHandle)&subscriber;
    return CUPTI_SUCCESS;
}

AMP_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    (void)s;
    return CUPTI_SUCCESS;
}

AMP_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                      CUpti_BuffersCallbackCompleteFunc c)
{
    requested = r;
    completed = c;
    return CUPTI_SUCCESS;
}

AMP_EXPORT void fake_cupti_kernel(void);

AMP_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((int)kind < 0 || kind >= 64)
        return CUPTI_ERROR_INVALID_KIND;
    enabled[kind] = 1;
    void (*on_launch)(void (*)(void));
    *(void **)&on_launch = dlsym(RTLD_DEFAULT, "fake_cublas_on_launch");
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && on_launch)
        on_launch(fake_cupti_kernel);
    return CUPTI_SUCCESS;
}

AMP_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                              uint64_t id)
{
    if (depth == 8)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    pushed[depth].kind = kind;
    pushed[depth++].id = id;
    return CUPTI_SUCCESS;
}

AMP_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                             uint64_t *last)
{
    if (!depth || pushed[depth - 1].kind != (int)kind)
        return CUPTI_ERROR_QUEUE_EMPTY;
    *last = pushed[--depth].id;
    return CUPTI_SUCCESS;
}

static size_t record_size(const void *r)
{
    CUpti_ActivityKind kind;
    memcpy(&kind, r, sizeof kind);
    return kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION
               ? sizeof(CUpti_ActivityExternalCorrelation)
               : sizeof(CUpti_ActivityKernel10);
}

static void append(const void *r, size_t n) /* under lock */
{
    if (used + n > capacity) {
        size_t grown = capacity ? 2 * capacity : 1 << 16;
        unsigned char *p = realloc(records, grown);
        if (!p)
            return;
        records = p;
        capacity = grown;
    }
    memcpy(records + used, r, n);
    used += n;
}

/* One kernel launched by the calling thread (the fake cuBLAS calls this). */
AMP_EXPORT void fake_cupti_kernel(void)
{
    if (!enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
        return;
    const char *ns_text = getenv("FAKE_CUPTI_KERNEL_NS");
    uint64_t ns = ns_text ? strtoull(ns_text, NULL, 10) : 1000;
    pthread_mutex_lock(&lock);
    uint32_t c = ++correlation;
    if (enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION] && depth) {
        CUpti_ActivityExternalCorrelation e;
        memset(&e, 0, sizeof e);
        e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        e.externalKind = (CUpti_ExternalCorrelationKind)pushed[depth - 1].kind;
        e.externalId = pushed[depth - 1].id;
        e.correlationId = c;
        append(&e, sizeof e);
    }
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = clock_ns;
    k.end = clock_ns + ns;
    clock_ns += ns;
    k.correlationId = c;
    append(&k, sizeof k);
    pthread_mutex_unlock(&lock);
}

AMP_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    if (!requested || !completed)
        return CUPTI_SUCCESS;
    pthread_mutex_lock(&lock);
    unsigned char *held = records;
    size_t n = used;
    records = NULL;
    used = capacity = 0;
    pthread_mutex_unlock(&lock);
    for (size_t at = 0; at < n;) {
        uint8_t *buffer = NULL;
        size_t size = 0, max = 0, valid = 0;
        requested(&buffer, &size, &max);
        if (!buffer)
            break;
        while (at < n && valid + record_size(held + at) <= size) {
            size_t r = record_size(held + at);
            memcpy(buffer + valid, held + at, r);
            valid += r;
            at += r;
        }
        completed(NULL, 0, buffer, size, valid);
        if (!valid)
            break;
    }
    free(held);
    return CUPTI_SUCCESS;
}

AMP_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                                  CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + record_size(*record) : buffer;
    if (next >= buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}
