/* Device scratch for the CUDA hooks (shim/cuda/cuda_scratch.c): stream-ordered,
 * one call's worth, given back at the call's end. */
#ifndef AMPSHIM_CUDA_SCRATCH_H
#define AMPSHIM_CUDA_SCRATCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The most one scratch buffer may take: a call that would need more runs as
 * the program made it rather than crowd the program's own device memory. */
#define AMP_CUDA_SCRATCH_MAX ((size_t)1 << 30)

/* Devices the shim keeps state for (the audit's buffers, its own library
 * handles); a call on a device past these runs as it would without it. */
#define AMP_CUDA_DEVICES 16

/* cudaMemPoolProps as cuda_runtime_api.h lays it out (CUDA 12 and 13; the
 * fake runtime checks it against the header). */
struct amp_cuda_pool_props {
    int alloc_type;   /* cudaMemAllocationTypePinned = 1 */
    int handle_types; /* cudaMemHandleTypeNone = 0 */
    struct {
        int type; /* cudaMemLocationTypeDevice = 1 */
        int id;
    } location;
    void *win32_security_attributes;
    size_t max_size;
    unsigned short usage;
    unsigned char reserved[54];
};
enum {
    AMP_CUDA_MEM_ALLOCATION_PINNED = 1,
    AMP_CUDA_MEM_LOCATION_DEVICE = 1,
    AMP_CUDA_POOL_ATTR_RELEASE_THRESHOLD = 4,
    AMP_CUDA_STREAM_CAPTURE_NONE = 0,
};

/* One hook call's scratch: buffers taken on the call's stream, all given
 * back (on that stream, after the work queued there) by
 * amp_cuda_scratch_end. */
struct amp_cuda_scratch {
    void *stream;
    int n;
    void *p[8];
};

/* `bytes` of device memory ordered on s->stream, or NULL (then the caller
 * runs the call as made): from the shim's pool for the current device
 * (cudaMallocFromPoolAsync; the runtime's default pool where the shim's
 * cannot be made), and never while s->stream is being captured into a
 * graph (an allocation there would be a memory node of the program's
 * graph, which then can be neither cloned nor a child graph). The pool
 * keeps AMPSHIM_CUDA_POOL_KEEP MiB of freed memory past a synchronisation
 * (its release threshold); when an allocation fails it gives back what it
 * keeps (cudaMemPoolTrimTo) and tries once more. */
void *amp_cuda_take(struct amp_cuda_scratch *s, size_t bytes);
void amp_cuda_scratch_end(struct amp_cuda_scratch *s);

/* `bytes` of device memory the shim keeps for the rest of the process (the
 * audit's per-site results), taken as amp_cuda_take takes scratch (ordered
 * on `stream`, never under capture), so no call of the shim's makes the
 * host wait or breaks another thread's graph capture the way cudaMalloc
 * would; NULL when it cannot be had. */
void *amp_cuda_keep(size_t bytes, void *stream);

/* A read-back of device results outside the program's own calls (the
 * audit's norms, the GPU timing's events): begin relaxes the thread's
 * stream-capture mode (cudaThreadExchangeStreamCaptureMode), so nothing it
 * does can invalidate a graph another thread captures in the default global
 * mode, and remembers the current device; end restores both. begin answers
 * 0 (and end is not to be called) when the runtime cannot do that. */
struct amp_cuda_readback {
    int mode, device;
};
int amp_cuda_readback_begin(struct amp_cuda_readback *r);
void amp_cuda_readback_end(struct amp_cuda_readback *r);

/* The calling thread's current device, or -1 (no runtime, an error, or a
 * device past AMP_CUDA_DEVICES). */
int amp_cuda_device(void);

/* Zeroes `bytes` at p, or `width` bytes in each of `rows` rows `pitch`
 * bytes apart, in order on `stream`; 0 if that cannot be done. */
int amp_cuda_zero(void *p, size_t bytes, void *stream);
int amp_cuda_zero_strided(void *p, size_t pitch, size_t width, size_t rows, void *stream);

/* Copies `rows` rows of `width` bytes, device to device, in order on
 * `stream`; 0 if that cannot be done. */
int amp_cuda_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                     size_t rows, void *stream);

/* A handle of a CUDA library the shim makes for itself, one per thread and
 * device (cuBLAS for the audit's norms, cuDNN for explicit fp16's
 * conversions; a library handle belongs to the device current when it was
 * made): made at the thread's first use on a device by create then setup
 * (NULL: none), destroyed when the thread ends. amp_cuda_own_handle_init once, from the
 * user's one-time set-up; amp_cuda_own_handle gives the calling thread's,
 * bound to `stream`, or NULL. */
struct amp_cuda_own_handle {
    int (*create)(void **);
    int (*destroy)(void *);
    int (*set_stream)(void *, void *);
    int (*setup)(void *);
    pthread_key_t key;
};
int amp_cuda_own_handle_init(struct amp_cuda_own_handle *oh);
void *amp_cuda_own_handle(struct amp_cuda_own_handle *oh, void *stream);


#endif
