/* TEST-ONLY fake of libcudart.so.13: a CPU stand-in, never installed. It
 * gives the shim the stream-ordered allocator it uses for device scratch
 * (cudaMallocAsync / cudaFreeAsync, cudaMemsetAsync / cudaMemset2DAsync) on
 * host memory, counts what is outstanding so tests can see every
 * allocation given back, counts the calls that would make the host wait
 * for the device (cudaMemcpy, cudaDeviceSynchronize, cudaMalloc) so tests
 * can see none on a hot path, and fails allocations on request
 * (FAKE_CUDART_FAIL_ALLOC=1; FAKE_CUDART_POOL_FULL=1: a pool's until it is
 * trimmed) so tests can see the shim fall back. It models two devices
 * (each allocation remembers the device current when it was made:
 * fake_cudart_device_of, which the fake cuBLAS asks) and the rules of
 * stream capture in the default global mode: while a thread captures a
 * stream, a call that is unsafe during capture (cudaMalloc, cudaMemcpy,
 * cudaFree, cudaDeviceSynchronize) from a thread whose capture mode is not
 * relaxed, or any work on the legacy stream, invalidates that capture
 * (fake_cudart_captures_invalidated; cudaStreamEndCapture then fails).
 * Work runs at once, so events and stream waits have nothing to order.
 * Compiled against the real cuda_runtime_api.h. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/export.h"
#include "shim/cuda/cuda_scratch.h"

static _Atomic long outstanding, total, syncs, pool_allocations, pool_trims;
static uint64_t pool_threshold;

/* Allocations from a pool made with cudaMemPoolCreate, and the release
 * threshold set on it. */
AMP_EXPORT long fake_cudart_pool_allocations(void)
{
    return atomic_load(&pool_allocations);
}

AMP_EXPORT uint64_t fake_cudart_pool_threshold(void)
{
    return pool_threshold;
}

AMP_EXPORT long fake_cudart_pool_trims(void)
{
    return atomic_load(&pool_trims);
}

/* Two devices; each thread's current one, as the real runtime keeps it. */
static __thread int current_device;

/* Where each live allocation is: its device. */
enum { REGISTRY = 4096 };
static struct {
    const char *p;
    size_t size;
    int device;
} registry[REGISTRY];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static void registry_add(const void *p, size_t size)
{
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < REGISTRY; i++)
        if (!registry[i].p) {
            registry[i].p = p;
            registry[i].size = size;
            registry[i].device = current_device;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
}

static void registry_drop(const void *p)
{
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < REGISTRY; i++)
        if (registry[i].p == p)
            registry[i].p = NULL;
    pthread_mutex_unlock(&registry_lock);
}

/* The device of the allocation holding p, or -1 (the program's host
 * memory, which the fakes take for whichever device asks). */
AMP_EXPORT int fake_cudart_device_of(const void *p)
{
    int device = -1;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < REGISTRY; i++)
        if (registry[i].p && (const char *)p >= registry[i].p &&
            (const char *)p < registry[i].p + registry[i].size)
            device = registry[i].device;
    pthread_mutex_unlock(&registry_lock);
    return device;
}

/* Stream capture: the stream being captured (one at a time), its mode and
 * whether the capture was invalidated; each thread's interaction mode. */
static _Atomic(cudaStream_t) capturing;
static _Atomic int capture_global, capture_broken;
static _Atomic long invalidated;
static __thread enum cudaStreamCaptureMode thread_mode = cudaStreamCaptureModeGlobal;

AMP_EXPORT long fake_cudart_captures_invalidated(void)
{
    return atomic_load(&invalidated);
}

/* A call the CUDA documentation calls unsafe during capture: it breaks a
 * global-mode capture unless this thread's mode is relaxed; work on the
 * legacy stream (legacy != 0) breaks it in any mode (it would synchronise
 * with the captured stream). */
static int unsafe(int legacy)
{
    if (!atomic_load(&capturing) ||
        !(legacy || (atomic_load(&capture_global) && thread_mode != cudaStreamCaptureModeRelaxed)))
        return 0;
    if (!atomic_exchange(&capture_broken, 1))
        atomic_fetch_add(&invalidated, 1);
    return 1;
}

#undef cudaStreamBeginCapture
#undef cudaStreamEndCapture
#undef cudaThreadExchangeStreamCaptureMode

AMP_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    cudaStream_t none = NULL;
    if (!stream || !atomic_compare_exchange_strong(&capturing, &none, stream))
        return cudaErrorIllegalState;
    atomic_store(&capture_global, mode == cudaStreamCaptureModeGlobal);
    atomic_store(&capture_broken, 0);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    static char token;
    if (atomic_load(&capturing) != stream)
        return cudaErrorIllegalState;
    atomic_store(&capturing, NULL);
    *graph = atomic_load(&capture_broken) ? NULL : (cudaGraph_t)&token;
    return *graph ? cudaSuccess : cudaErrorStreamCaptureInvalidated;
}

AMP_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    enum cudaStreamCaptureMode old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return cudaSuccess;
}

AMP_EXPORT long fake_cudart_syncs(void)
{
    return atomic_load(&syncs);
}

AMP_EXPORT long fake_cudart_outstanding(void)
{
    return atomic_load(&outstanding);
}

AMP_EXPORT long fake_cudart_allocations(void)
{
    return atomic_load(&total);
}

#undef cudaMallocAsync
#undef cudaFreeAsync
#undef cudaMemsetAsync
#undef cudaMemset2DAsync
#undef cudaMemcpy2DAsync
#undef cudaMemcpy
#undef cudaMalloc
#undef cudaFree
#undef cudaDeviceSynchronize
#undef cudaStreamIsCapturing
#undef cudaMallocFromPoolAsync

AMP_EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
{
    (void)stream;
    const char *fail = getenv("FAKE_CUDART_FAIL_ALLOC");
    if (!p)
        return cudaErrorInvalidValue;
    *p = fail && *fail == '1' ? NULL : malloc(size ? size : 1);
    if (!*p)
        return cudaErrorMemoryAllocation;
    registry_add(*p, size ? size : 1);
    atomic_fetch_add(&outstanding, 1);
    atomic_fetch_add(&total, 1);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t stream)
{
    (void)stream;
    if (p) {
        registry_drop(p);
        free(p);
        atomic_fetch_sub(&outstanding, 1);
    }
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    memset(p, value, count);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width,
                                         size_t height, cudaStream_t stream)
{
    (void)stream;
    if (width > pitch)
        return cudaErrorInvalidValue;
    for (size_t r = 0; r < height; r++)
        memset((char *)p + r * pitch, value, width);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                         size_t width, size_t height, enum cudaMemcpyKind kind,
                                         cudaStream_t stream)
{
    (void)kind;
    (void)stream;
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    for (size_t r = 0; r < height; r++)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                                  enum cudaMemcpyKind kind)
{
    (void)kind;
    atomic_fetch_add(&syncs, 1);
    if (unsafe(1))
        return cudaErrorStreamCaptureImplicit;
    memmove(dst, src, count);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemset(void *p, int value, size_t count)
{
    atomic_fetch_add(&syncs, 1);
    memset(p, value, count);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
    atomic_fetch_add(&syncs, 1);
    if (!p)
        return cudaErrorInvalidValue;
    if (unsafe(0))
        return cudaErrorStreamCaptureUnsupported;
    *p = malloc(size ? size : 1);
    if (*p)
        registry_add(*p, size ? size : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

AMP_EXPORT cudaError_t cudaFree(void *p)
{
    atomic_fetch_add(&syncs, 1);
    if (unsafe(0))
        return cudaErrorStreamCaptureUnsupported;
    registry_drop(p);
    free(p);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    atomic_fetch_add(&syncs, 1);
    if (unsafe(1))
        return cudaErrorStreamCaptureUnsupported;
    return cudaSuccess;
}

/* FAKE_CUDART_CAPTURING=1: every stream is being captured into a graph;
 * else the one cudaStreamBeginCapture began. */
AMP_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                             enum cudaStreamCaptureStatus *status)
{
    const char *c = getenv("FAKE_CUDART_CAPTURING");
    *status = (c && *c == '1') || (stream && stream == atomic_load(&capturing))
                  ? cudaStreamCaptureStatusActive
                  : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device > 1)
        return cudaErrorInvalidDevice;
    current_device = device;
    return cudaSuccess;
}

/* FAKE_CUDART_DEVICES=N: N devices (default none), so that a GPU test built
 * against the fakes runs its checks instead of skipping (tests/cublas
 * gemmex_32f_gpu.c, tests/cublaslt/cublaslt_gpu.c). */
AMP_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return cudaErrorInvalidValue;
    const char *n = getenv("FAKE_CUDART_DEVICES");
    *count = n ? atoi(n) : 0;
    return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}

AMP_EXPORT cudaError_t cudaGetDevice(int *device)
{
    *device = current_device;
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    static char token[2];
    if (props->allocType != cudaMemAllocationTypePinned ||
        props->location.type != cudaMemLocationTypeDevice || props->location.id < 0 ||
        props->location.id > 1)
        return cudaErrorInvalidValue;
    *pool = (cudaMemPool_t)&token[props->location.id];
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr,
                                               void *value)
{
    (void)pool;
    if (attr != cudaMemPoolAttrReleaseThreshold)
        return cudaErrorInvalidValue;
    memcpy(&pool_threshold, value, sizeof pool_threshold);
    return cudaSuccess;
}

#undef cudaMemPoolTrimTo
AMP_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    (void)pool;
    (void)keep;
    atomic_fetch_add(&pool_trims, 1);
    return cudaSuccess;
}

/* FAKE_CUDART_POOL_FULL=1: a pool's allocations fail until it is trimmed
 * (what it keeps is what the next one needs). */
AMP_EXPORT cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool,
                                               cudaStream_t stream)
{
    const char *full = getenv("FAKE_CUDART_POOL_FULL");
    (void)pool;
    if (full && *full == '1' && atomic_load(&pool_trims) == 0)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudaMallocAsync(p, size, stream);
    if (e == cudaSuccess)
        atomic_fetch_add(&pool_allocations, 1);
    return e;
}

#undef cudaEventCreateWithFlags
#undef cudaEventCreate
#undef cudaEventQuery
#undef cudaEventSynchronize
#undef cudaEventElapsedTime
#undef cudaEventRecord
#undef cudaEventDestroy
#undef cudaStreamWaitEvent
#undef cudaStreamCreateWithFlags
#undef cudaStreamDestroy
#undef cudaStreamSynchronize
#undef cudaMemcpyAsync

/* An event: when it was last recorded (the fakes run work at once, so that
 * is when the work before it ended), and whether it was. */
struct fake_event {
    struct timespec at;
    int recorded;
};
static _Atomic long events_in_capture;

/* Events recorded on a stream being captured: tests see none from the shim. */
AMP_EXPORT long fake_cudart_events_in_capture(void)
{
    return atomic_load(&events_in_capture);
}

AMP_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags)
{
    (void)flags;
    *event = calloc(1, sizeof(struct fake_event));
    return *event ? cudaSuccess : cudaErrorMemoryAllocation;
}

AMP_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, 0);
}

AMP_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    if (!event || (stream == NULL && unsafe(1)))
        return cudaErrorInvalidValue;
    enum cudaStreamCaptureStatus status;
    cudaStreamIsCapturing(stream, &status);
    if (status != cudaStreamCaptureStatusNone)
        atomic_fetch_add(&events_in_capture, 1);
    struct fake_event *e = (struct fake_event *)event;
    clock_gettime(CLOCK_MONOTONIC, &e->at);
    e->recorded = 1;
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return event && ((struct fake_event *)event)->recorded ? cudaSuccess : cudaErrorNotReady;
}

AMP_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    atomic_fetch_add(&syncs, 1);
    return event ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

AMP_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop)
{
    const struct fake_event *a = (const void *)start, *b = (const void *)stop;
    if (!a || !b || !a->recorded || !b->recorded)
        return cudaErrorInvalidResourceHandle;
    *ms = (float)((double)(b->at.tv_sec - a->at.tv_sec) * 1e3 +
                  (double)(b->at.tv_nsec - a->at.tv_nsec) / 1e6);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    free(event);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags)
{
    (void)flags;
    return event && !(stream == NULL && unsafe(1)) ? cudaSuccess : cudaErrorInvalidValue;
}

/* A stream: a token that remembers its flags (0: blocking, which work on
 * the legacy stream waits for). */
AMP_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags)
{
    unsigned *s = malloc(sizeof *s);
    if (!s)
        return cudaErrorMemoryAllocation;
    *s = flags;
    *stream = (cudaStream_t)s;
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    free(stream);
    return cudaSuccess;
}

AMP_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    atomic_fetch_add(&syncs, 1);
    return stream == NULL && unsafe(1) ? cudaErrorStreamCaptureImplicit : cudaSuccess;
}

AMP_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                       enum cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)kind;
    if (stream == NULL && unsafe(1))
        return cudaErrorStreamCaptureImplicit;
    memmove(dst, src, count);
    return cudaSuccess;
}
