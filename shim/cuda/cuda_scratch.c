/* Device scratch for the CUDA hooks that convert tensors (the cuDNN bf16 and
 * fp32 paths, the cuBLAS level-3 rebuilds, the audit): stream-ordered
 * allocations (cudaMallocFromPoolAsync / cudaFreeAsync on the call's own
 * stream, zeroed with cudaMemsetAsync / cudaMemset2DAsync where needed),
 * taken for one call and given back at its end, so the shim never
 * synchronises. They come from a pool of the shim's own per device, whose
 * release threshold (AMPSHIM_CUDA_POOL_KEEP) keeps freed memory for the
 * next calls instead of trimming it at every synchronisation as the
 * runtime's default pool (threshold 0) does; a failed allocation trims it
 * and tries once more; the program's pools are never reconfigured. A stream being captured into a graph gets no scratch: the
 * call runs as made, so the shim never adds memory nodes to the program's
 * graph. The runtime is found among the loaded
 * objects first (a program linked to libcudart.so.13); a program with the
 * static runtime gets libcudart.so.13 opened here. Without either, or
 * when an allocation fails or would pass AMP_CUDA_SCRATCH_MAX, the hook runs
 * the call as the program made it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/threads.h"
#include "runtime/log.h"
#include "shim/cuda/cuda_scratch.h"
#include "shim/cuda/cuda_helpers.h"

/* The runtime's functions (shim/cuda/cuda_helpers.h). */
static const struct amp_cudart_helpers *rt;
static int available;

static void find_runtime(void)
{
    rt = amp_cudart_helpers();
    /* Without cudaStreamIsCapturing there is no telling a captured stream:
     * no scratch at all then. */
    available = rt->malloc_async && rt->free_async && rt->memset_async && rt->memset2d_async &&
                rt->is_capturing;
    if (!available)
        amp_log(AMP_LOG_INFO, "no CUDA runtime with cudaMallocAsync found; cuDNN calls that "
                              "need conversion run as made");
}

/* Once per process (pthread_once): two threads' first calls cannot race. */
static int ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_runtime);
    return available;
}

/* The shim's pool for the current device, made at its first use (under
 * pool_lock, then published: later calls read it without the lock); NULL
 * when the runtime cannot make one (the default pool is used then). */
enum { POOL_DEVICES = 64 };
static void *_Atomic pools[POOL_DEVICES];
static _Atomic uint8_t pool_tried[POOL_DEVICES];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void *own_pool(void)
{
    int dev = -1;
    if (!rt->get_device || !rt->pool_create || !rt->pool_set || !rt->malloc_from_pool ||
        rt->get_device(&dev) != 0 || dev < 0 || dev >= POOL_DEVICES)
        return NULL;
    if (atomic_load_explicit(&pool_tried[dev], memory_order_acquire))
        return atomic_load_explicit(&pools[dev], memory_order_relaxed);
    pthread_mutex_lock(&pool_lock);
    if (!atomic_load_explicit(&pool_tried[dev], memory_order_relaxed)) {
        struct amp_cuda_pool_props props = {0};
        props.alloc_type = AMP_CUDA_MEM_ALLOCATION_PINNED;
        props.location.type = AMP_CUDA_MEM_LOCATION_DEVICE;
        props.location.id = dev;
        uint64_t keep = (uint64_t)amp_rt.cfg.cuda_pool_keep_mib << 20;
        void *pool = NULL;
        if (rt->pool_create(&pool, &props) == 0 && pool &&
            rt->pool_set(pool, AMP_CUDA_POOL_ATTR_RELEASE_THRESHOLD, &keep) == 0)
            atomic_store_explicit(&pools[dev], pool, memory_order_relaxed);
        else
            amp_log(AMP_LOG_INFO,
                    "device %d: no memory pool of the shim's own; scratch comes "
                    "from the runtime's default pool",
                    dev);
        atomic_store_explicit(&pool_tried[dev], 1, memory_order_release);
    }
    pthread_mutex_unlock(&pool_lock);
    return atomic_load_explicit(&pools[dev], memory_order_relaxed);
}

/* Whether work queued on the stream now would be captured into a graph (an
 * error answering counts as yes). */
static int captured(void *stream)
{
    int status = -1;
    if (rt->is_capturing(stream, &status) == 0 && status == AMP_CUDA_STREAM_CAPTURE_NONE)
        return 0;
    static _Atomic int said;
    if (!atomic_exchange(&said, 1))
        amp_log(AMP_LOG_INFO, "a stream is being captured into a CUDA graph: calls that need "
                              "device scratch run as made while it is");
    return 1;
}

/* `bytes` on `stream` from the shim's pool for the current device (the
 * default pool where there is none); once more after the pool gave back
 * what it keeps, if the first try fails. */
static void *allocate(size_t bytes, void *stream)
{
    void *p = NULL, *pool = own_pool();
    if (!pool)
        return rt->malloc_async(&p, bytes, stream) == 0 ? p : NULL;
    if (rt->malloc_from_pool(&p, bytes, pool, stream) == 0)
        return p;
    if (!rt->pool_trim || rt->pool_trim(pool, 0) != 0)
        return NULL;
    p = NULL;
    return rt->malloc_from_pool(&p, bytes, pool, stream) == 0 ? p : NULL;
}

void *amp_cuda_take(struct amp_cuda_scratch *s, size_t bytes)
{
    if (!bytes || bytes > AMP_CUDA_SCRATCH_MAX || s->n == (int)(sizeof s->p / sizeof *s->p) ||
        !ready() || captured(s->stream))
        return NULL;
    void *p = allocate(bytes, s->stream);
    return p ? (s->p[s->n++] = p) : NULL;
}

void *amp_cuda_keep(size_t bytes, void *stream)
{
    if (!bytes || bytes > AMP_CUDA_SCRATCH_MAX || !ready() || captured(stream))
        return NULL;
    return allocate(bytes, stream);
}

int amp_cuda_readback_begin(struct amp_cuda_readback *r)
{
    enum { CAPTURE_MODE_RELAXED = 2 }; /* cudaStreamCaptureModeRelaxed */
    r->mode = CAPTURE_MODE_RELAXED;
    r->device = amp_cuda_device();
    return ready() && rt->exchange_capture_mode && rt->set_device &&
           rt->exchange_capture_mode(&r->mode) == 0;
}

void amp_cuda_readback_end(struct amp_cuda_readback *r)
{
    if (r->device >= 0)
        rt->set_device(r->device);
    rt->exchange_capture_mode(&r->mode);
}

int amp_cuda_device(void)
{
    int dev = -1;
    if (!ready() || !rt->get_device || rt->get_device(&dev) != 0 || dev < 0 ||
        dev >= AMP_CUDA_DEVICES)
        return -1;
    return dev;
}

int amp_cuda_zero(void *p, size_t bytes, void *stream)
{
    return ready() && rt->memset_async(p, 0, bytes, stream) == 0;
}

int amp_cuda_zero_strided(void *p, size_t pitch, size_t width, size_t rows, void *stream)
{
    return ready() && rt->memset2d_async(p, pitch, 0, width, rows, stream) == 0;
}

void amp_cuda_scratch_end(struct amp_cuda_scratch *s)
{
    for (int i = 0; i < s->n; i++)
        rt->free_async(s->p[i], s->stream);
    s->n = 0;
}

int amp_cuda_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                     size_t rows, void *stream)
{
    enum { DEVICE_TO_DEVICE = 3 }; /* cudaMemcpyDeviceToDevice */
    return ready() && rt->memcpy2d_async &&
           rt->memcpy2d_async(dst, dpitch, src, spitch, width, rows, DEVICE_TO_DEVICE, stream) == 0;
}

/* The value behind a thread's key: its handles, one per device, and whose
 * they are. */
struct own_handle_value {
    struct amp_cuda_own_handle *oh;
    void *handle[AMP_CUDA_DEVICES];
};

static void own_handle_end(void *p)
{
    struct own_handle_value *v = p;
    for (int d = 0; d < AMP_CUDA_DEVICES; d++)
        if (v->handle[d])
            v->oh->destroy(v->handle[d]);
    free(v);
}

int amp_cuda_own_handle_init(struct amp_cuda_own_handle *oh)
{
    return pthread_key_create(&oh->key, own_handle_end) == 0;
}

void *amp_cuda_own_handle(struct amp_cuda_own_handle *oh, void *stream)
{
    int dev = amp_cuda_device();
    if (dev < 0)
        return NULL;
    struct own_handle_value *v = pthread_getspecific(oh->key);
    if (!v) {
        if (!(v = calloc(1, sizeof *v)))
            return NULL;
        v->oh = oh;
        if (pthread_setspecific(oh->key, v) != 0) {
            free(v);
            return NULL;
        }
    }
    if (!v->handle[dev]) {
        void *h = NULL;
        if (oh->create(&h) != 0 || !h)
            return NULL;
        if (oh->setup && oh->setup(h) != 0) {
            oh->destroy(h);
            return NULL;
        }
        v->handle[dev] = h;
    }
    return oh->set_stream(v->handle[dev], stream) == 0 ? v->handle[dev] : NULL;
}
