/* AMPSHIM_CUDA_TIMING=cupti (shim/cuda/cuda_cupti.c): the GPU time of
 * every hooked call from CUPTI's kernel, memcpy and memset records, joined
 * to the call by an external correlation id; written to the sink
 * (shim/cuda/gpu_time.h). shim/cuda/cuda_timing.c calls it for a due call
 * in cupti mode. */
#ifndef AMPSHIM_CUDA_CUPTI_H
#define AMPSHIM_CUDA_CUPTI_H

#include "loader/atfork.h"
#include "runtime/threads.h"
#include "shim/cuda/gpu_time.h"

/* Whether CUPTI is set up (at the
 * first call: 0 when it cannot be, or another client holds it, then
 * events are used), and a call's external correlation id pushed and popped
 * around it. */
int amp_cupti_on(void);
void amp_cupti_begin(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook);
void amp_cupti_end(struct amp_cuda_timed *tm, struct amp_thread *t, enum amp_hook_id hook);
/* fork's share: its lock; a child uses events, and flushes nothing. */
void amp_cupti_atfork(enum amp_fork_phase phase);

#endif
