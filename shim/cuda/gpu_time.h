/* The sink of GPU time per hooked CUDA call, which both timing modes write
 * (event pairs: shim/cuda/cuda_timing.c; CUPTI: shim/cuda/cuda_cupti.c),
 * and a call being timed. The time goes to the hook's row of the control
 * block (gpu_time), lowered or as made as its counters say. */
#ifndef AMPSHIM_GPU_TIME_H
#define AMPSHIM_GPU_TIME_H

#include <stdatomic.h>
#include <stdint.h>

#include "runtime/control.h"

/* One call being timed: its pair (-1: not timed) and what the thread's
 * lowered counter for the hook was before it. */
struct amp_cuda_timed {
    int pair, device;
    uint8_t cupti; /* timed through CUPTI (shim/cuda/cuda_cupti.c) */
    uint64_t seq;  /* ... its external correlation id */
    uint64_t lowered_before;
};

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

#endif
