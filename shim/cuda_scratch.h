/* Device scratch for the CUDA hooks (shim/cuda_memory.c): stream-ordered,
 * one call's worth, given back at the call's end. */
#ifndef AMPSHIM_CUDA_SCRATCH_H
#define AMPSHIM_CUDA_SCRATCH_H

#include <stddef.h>

/* `bytes` of device memory ordered on `stream`, or NULL (then the caller
 * runs the call as made). */
void *amp_cuda_alloc(size_t bytes, void *stream);
/* Gives p back on `stream` (after the work queued there). NULL is ignored. */
void amp_cuda_free(void *p, void *stream);

#endif
