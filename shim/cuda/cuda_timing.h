/* GPU time per hooked CUDA call (shim/cuda/cuda_timing.c): every Nth call
 * of a thread (AMPSHIM_CUDA_TIMING_SAMPLE) is bracketed by a pair of CUDA
 * events on its stream; the pairs are read back (cudaEventElapsedTime) at
 * exit and when ampctl asks, or reused once the GPU has passed them, never
 * with a host wait in a hooked call, and never while the stream is being
 * captured into a graph; with AMPSHIM_CUDA_TIMING=cupti, every call
 * through CUPTI's activity records (shim/cuda/cuda_cupti.h), which this
 * file dispatches to. Both write the one sink, shim/cuda/gpu_time.h. */
#ifndef AMPSHIM_CUDA_TIMING_H
#define AMPSHIM_CUDA_TIMING_H

#include <stdint.h>

#include "runtime/threads.h"
#include "shim/cuda/gpu_time.h"

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

/* Records the start of a due call of hook on stream (tm->pair stays -1
 * when it cannot: no runtime, no free pair, a captured stream). */
void amp_cuda_time_start(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook,
                         void *stream);
/* Records its end, after the call was made on the same stream. */
void amp_cuda_time_end(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook,
                       void *stream);

/* fork's share (shim/fork.c): the pairs' lock; a child has none of the
 * parent's events (CUDA does not survive fork) and reads nothing back. */
void amp_cuda_timing_atfork(enum amp_fork_phase phase);

#endif
