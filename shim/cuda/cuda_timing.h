/* GPU time per hooked CUDA call (shim/cuda/cuda_timing.c): every Nth call
 * of a thread (AMPSHIM_CUDA_TIMING_SAMPLE) is bracketed by a pair of CUDA
 * events on its stream; the pairs are read back (cudaEventElapsedTime) at
 * exit and when ampctl asks, or reused once the GPU has passed them, never
 * with a host wait in a hooked call, and never while the stream is being
 * captured into a graph. The time goes to the hook's row of the control
 * block (gpu_time), lowered or as made as its counters say. */
#ifndef AMPSHIM_CUDA_TIMING_H
#define AMPSHIM_CUDA_TIMING_H

#include <stdint.h>

#include "runtime/threads.h"

/* One call being timed: its pair (-1: not timed) and what the thread's
 * lowered counter for the hook was before it. */
struct amp_cuda_timed {
    int pair, device;
    uint8_t cupti; /* timed through CUPTI (shim/cuda/cuda_cupti.c) */
    uint64_t seq;  /* ... its external correlation id */
    uint64_t lowered_before;
};

extern __thread uint32_t amp_cuda_timing_tick __attribute__((tls_model("initial-exec")));

/* Whether this call of the thread is one to time (the fast path: a load
 * and an increment); with cupti, every call. */
static inline int amp_cuda_timing_due(void)
{
    uint32_t mode = amp_live_load(&amp_rt.cfg.cuda_timing);
    if (__builtin_expect(mode != AMP_CUDA_TIMING_EVENTS, 0))
        return mode == AMP_CUDA_TIMING_CUPTI;
    if (__builtin_expect(++amp_cuda_timing_tick < amp_live_load(&amp_rt.cfg.cuda_timing_sample), 1))
        return 0;
    amp_cuda_timing_tick = 0;
    return 1;
}

/* Adds ns of GPU time, and `calls` timed calls, to hook's row of the
 * block, lowered or as made (both timing modes' one writer). */
static inline void amp_gpu_time_add(unsigned hook, int lowered, uint64_t ns, uint64_t calls)
{
    if (!amp_ctl)
        return;
    _Atomic uint64_t *row = amp_ctl->gpu_time[hook];
    atomic_fetch_add_explicit(&row[lowered ? AMP_GPU_NS_LOWERED : AMP_GPU_NS_MADE], ns,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&row[lowered ? AMP_GPU_TIMED_LOWERED : AMP_GPU_TIMED_MADE], calls,
                              memory_order_relaxed);
}

/* Records the start of a due call of hook on stream (tm->pair stays -1
 * when it cannot: no runtime, no free pair, a captured stream). */
void amp_cuda_time_start(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook,
                         void *stream);
/* Records its end, after the call was made on the same stream. */
void amp_cuda_time_end(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook,
                       void *stream);

/* CUPTI mode (shim/cuda/cuda_cupti.c): whether CUPTI is set up (at the
 * first call: 0 when it cannot be, or another client holds it, then
 * events are used), and a call's external correlation id pushed and popped
 * around it. */
int amp_cupti_on(void);
void amp_cupti_begin(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook);
void amp_cupti_end(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook);
/* fork's share: its lock; a child uses events, and flushes nothing. */
void amp_cupti_atfork(enum amp_fork_phase phase);

/* fork's share (shim/fork.c): the pairs' lock; a child has none of the
 * parent's events (CUDA does not survive fork) and reads nothing back. */
void amp_cuda_timing_atfork(enum amp_fork_phase phase);

#endif
