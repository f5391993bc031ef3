/* Device scratch for the CUDA hooks (shim/cuda/cuda_scratch.c): stream-ordered,
 * one call's worth, given back at the call's end. */
#ifndef AMPSHIM_CUDA_SCRATCH_H
#define AMPSHIM_CUDA_SCRATCH_H

#include <stddef.h>

/* The most one scratch buffer may take: a call that would need more runs as
 * the program made it rather than crowd the program's own device memory. */
#define AMP_CUDA_SCRATCH_MAX ((size_t)1 << 30)

/* One hook call's scratch: buffers taken on the call's stream, all given
 * back (on that stream, after the work queued there) by
 * amp_cuda_scratch_end. */
struct amp_cuda_scratch {
    void *stream;
    int n;
    void *p[8];
};

/* `bytes` of device memory ordered on s->stream, or NULL (then the caller
 * runs the call as made). */
void *amp_cuda_take(struct amp_cuda_scratch *s, size_t bytes);
void amp_cuda_scratch_end(struct amp_cuda_scratch *s);

/* Zeroes `bytes` at p, or `width` bytes in each of `rows` rows `pitch`
 * bytes apart, in order on `stream`; 0 if that cannot be done. */
int amp_cuda_zero(void *p, size_t bytes, void *stream);
int amp_cuda_zero_strided(void *p, size_t pitch, size_t width, size_t rows, void *stream);

/* Copies `rows` rows of `width` bytes, device to device, in order on
 * `stream`; 0 if that cannot be done. */
int amp_cuda_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                     size_t rows, void *stream);

/* Another function of the CUDA runtime the scratch found (NULL without). */
void *amp_cuda_runtime(const char *name);

#endif
