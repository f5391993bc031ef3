/* amp_scaler: dynamic loss scaling with torch.cuda.amp.GradScaler's semantics
 * for C and C++ training loops. Link with -lampscaler (pkg-config ampscaler).
 * Works with or without libampshim.so preloaded. See amp_scaler(3).
 *
 * One iteration:
 *     seed = loss_gradient * amp_scaler_get_scale(s);   // or amp_scaler_scale()
 *     ... backward pass ...
 *     amp_scaler_unscale(s, grads, n);                   // divides, checks Inf/NaN
 *     if (amp_scaler_step_ok(s)) optimizer_step();
 *     amp_scaler_update(s, NULL);
 *
 * Every function returning int returns 0 on success and a negative errno
 * value on failure; amp_scaler_last_error() then says why. A scaler is not
 * thread-safe: use it from one thread at a time. */
#ifndef AMP_SCALER_H
#define AMP_SCALER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum amp_dtype { AMP_F32 = 0, AMP_F16 = 1, AMP_BF16 = 2 } amp_dtype;

/* A gradient (or loss) buffer. device 0: data is host memory. device 1:
 * data is CUDA device memory on the calling thread's current device, and
 * stream is its cudaStream_t (NULL: the default stream); the scaler then
 * keeps its own state on that device from then on (see amp_scaler(3)).
 * stream is ignored for host memory. */
typedef struct amp_buffer {
    void *data;
    size_t count;
    amp_dtype dtype;
    int device;
    void *stream;
} amp_buffer;

typedef struct amp_scaler_config {
    double init_scale;       /* 65536 */
    double growth_factor;    /* 2.0, must be > 1 */
    double backoff_factor;   /* 0.5, must be in (0, 1) */
    int64_t growth_interval; /* 2000, must be > 0 */
    int enabled;             /* 1; 0 makes every call a no-op with scale 1 */
} amp_scaler_config;

typedef struct amp_scaler amp_scaler;

void amp_scaler_config_default(amp_scaler_config *config);

/* NULL config means the defaults. Returns NULL with errno EINVAL for an
 * invalid configuration, ENOMEM when out of memory. */
amp_scaler *amp_scaler_create(const amp_scaler_config *config);
void amp_scaler_destroy(amp_scaler *scaler);

int amp_scaler_is_enabled(const amp_scaler *scaler);
/* The current scale; 1.0 when disabled. */
float amp_scaler_get_scale(const amp_scaler *scaler);
int64_t amp_scaler_get_growth_tracker(const amp_scaler *scaler);
double amp_scaler_get_growth_factor(const amp_scaler *scaler);
double amp_scaler_get_backoff_factor(const amp_scaler *scaler);
int64_t amp_scaler_get_growth_interval(const amp_scaler *scaler);
int amp_scaler_set_growth_factor(amp_scaler *scaler, double growth_factor);
int amp_scaler_set_backoff_factor(amp_scaler *scaler, double backoff_factor);
int amp_scaler_set_growth_interval(amp_scaler *scaler, int64_t growth_interval);

/* Multiplies n buffers in place by the scale. */
int amp_scaler_scale(amp_scaler *scaler, amp_buffer *buffers, size_t n);

/* Divides n buffers in place by the scale (multiplies by the fp32 reciprocal,
 * as torch does) and records whether any value was Inf or NaN. Once per
 * iteration: a second call before amp_scaler_update returns -EALREADY and
 * changes nothing. Bad buffers (NULL data with count > 0, unknown dtype,
 * host and device buffers or two streams in one call) return -EINVAL and
 * change nothing. With device buffers it only enqueues kernels. */
int amp_scaler_unscale(amp_scaler *scaler, amp_buffer *buffers, size_t n);

/* 1 when the optimizer step should run, 0 when it must be skipped (an Inf or
 * NaN was found by this iteration's unscale, on this or, with an agreement
 * hook, any rank). */
int amp_scaler_step_ok(const amp_scaler *scaler);

/* Ends the iteration. NULL: the dynamic rule (on Inf/NaN multiply the scale
 * by backoff_factor and reset the growth tracker; after growth_interval clean
 * steps in a row multiply it by growth_factor, unless that would not be a
 * finite float, and reset the tracker); this needs an unscale since the last
 * update, else -EINVAL. Otherwise sets the scale to *new_scale (finite, > 0). */
int amp_scaler_update(amp_scaler *scaler, const float *new_scale);

/* The five state_dict keys (scale, growth_factor, backoff_factor,
 * growth_interval, _growth_tracker) in a small text file, written atomically.
 * load rejects a malformed, truncated or foreign file (-EBADMSG) and leaves
 * the scaler unchanged. Both are no-ops on a disabled scaler. */
int amp_scaler_save(const amp_scaler *scaler, const char *path);
int amp_scaler_load(amp_scaler *scaler, const char *path);

/* Multi-rank agreement on found_inf: called at the end of every unscale with
 * this rank's flag; it must combine the flags of all ranks (logical or) into
 * *found_inf and return 0, or a negative errno value. On failure the step is
 * skipped (found_inf is taken as 1) and unscale returns the error. */
typedef int (*amp_scaler_agree_fn)(int *found_inf, void *context);
int amp_scaler_set_agreement(amp_scaler *scaler, amp_scaler_agree_fn agree, void *context);

/* A built-in agreement for programs that use MPI: MPI_Allreduce(MPI_MAX) of
 * the flag, with MPI found at run time (Open MPI and MPICH ABIs). context is
 * NULL for MPI_COMM_WORLD, or points to the program's MPI_Comm. Returns
 * -ENOSYS when the process has no initialised MPI. */
int amp_scaler_agree_mpi(int *found_inf, void *context);

/* Why the last failing call on this scaler failed; "" when none did. */
const char *amp_scaler_last_error(const amp_scaler *scaler);

#ifdef __cplusplus
}
#endif

#endif
