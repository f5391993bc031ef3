/* The interface between libampscaler and its CUDA plugin,
 * libampscaler-cuda.so, which libampscaler loads with dlopen when a device
 * buffer first appears (so libampscaler itself needs no CUDA at all). The
 * scaler's state (scale, inverse scale, found_inf, growth tracker) lives in
 * device memory; unscale and update only launch kernels on the caller's
 * stream and never wait for the device. Reading the state back (step_ok,
 * get_scale, save) synchronises that stream, as torch's .item() does.
 * Every function returns 0 or a negative errno value with a message in err. */
#ifndef AMPSHIM_SCALER_CUDA_H
#define AMPSHIM_SCALER_CUDA_H

#include <stddef.h>
#include <stdint.h>

#define AMP_SCALER_CUDA_ABI 1
#define AMP_SCALER_CUDA_OPS_SYMBOL "amp_scaler_cuda_ops_v1"

struct amp_cuda_scaler;

struct amp_scaler_cuda_ops {
    int abi;
    int (*create)(struct amp_cuda_scaler **out, float scale, int64_t tracker, char *err,
                  size_t errlen);
    void (*destroy)(struct amp_cuda_scaler *st);
    /* inv_scale = (float)(1 / (double)scale); found_inf = 0. */
    int (*begin_unscale)(struct amp_cuda_scaler *st, void *stream, char *err, size_t errlen);
    /* Multiplies count elements (dtype: 0 fp32, 1 fp16, 2 bf16) in place by
     * inv_scale (unscale: also records Inf/NaN inputs in found_inf) or by
     * scale. */
    int (*multiply)(struct amp_cuda_scaler *st, void *data, size_t count, int dtype, int unscale,
                    void *stream, char *err, size_t errlen);
    /* The dynamic rule of torch's _amp_update_scale_, on the device. */
    int (*update)(struct amp_cuda_scaler *st, double growth_factor, double backoff_factor,
                  int64_t growth_interval, void *stream, char *err, size_t errlen);
    /* Writes any of the fields given (NULL leaves one alone). */
    int (*write)(struct amp_cuda_scaler *st, const float *scale, const int64_t *tracker,
                 const int *found_inf, void *stream, char *err, size_t errlen);
    /* Waits for the stream and reads the state back. */
    int (*read)(struct amp_cuda_scaler *st, float *scale, int64_t *tracker, int *found_inf,
                void *stream, char *err, size_t errlen);
};

#endif
