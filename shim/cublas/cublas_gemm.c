/* Every GEMM-shaped cuBLAS call, whichever door it came in by
 * (shim/cublas/cublas.c), is decided and run here. A lowered fp32 GEMM is
 * handed to cuBLAS itself with a fast compute type
 * (CUBLAS_COMPUTE_32F_FAST_16F / _FAST_16BF / _FAST_TF32) on the program's
 * own fp32 buffers: no copies, no kernels of ours, no synchronisation; cuBLAS
 * down-converts the inputs (to fp16 or TF32 for FAST_16F, as it decides:
 * tests/cublas/compute_types_gpu says which). The caller's stated intent wins:
 * explicit non-fp32 data or compute types, CUBLAS_COMPUTE_32F_PEDANTIC, a
 * handle in CUBLAS_PEDANTIC_MATH or with
 * CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, and NVIDIA_TF32_OVERRIDE=0
 * (never tf32) leave the call unchanged. */
#include "shim/cublas/cublas_gemm.h"

#include "runtime/decide.h"
#include "shim/cublas/cublas_abi.h"
#include "shim/cublas/cublas_audit.h"
#include "shim/cublas/cublas_fp16.h"
#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_timing.h"
#include "shim/resolve.h"

/* The handle queries are the real function's own library's
 * (shim/cuda/cuda_helpers.h). */
int amp_cublas_math_mode(const void *real, void *handle, int *mode)
{
    const struct amp_cublas_helpers *f = amp_cublas_helpers(real);
    return f->get_math_mode && f->get_math_mode(handle, mode) == AMP_CUBLAS_STATUS_SUCCESS;
}

int amp_cublas_host_pointers(const void *real, void *handle)
{
    const struct amp_cublas_helpers *f = amp_cublas_helpers(real);
    int mode;
    return f->get_pointer_mode && f->get_pointer_mode(handle, &mode) == AMP_CUBLAS_STATUS_SUCCESS &&
           mode == AMP_CUBLAS_POINTER_MODE_HOST;
}

int amp_cublas_mode_keeps_calls(int mode)
{
    return (mode & 0xf) == AMP_CUBLAS_PEDANTIC_MATH ||
           (mode & 0xf) == AMP_CUBLAS_FP32_EMULATED_BF16X9_MATH ||
           (mode & AMP_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
}

int amp_cublas_accumulates(enum amp_hook_id hook, const void *real, void *handle, const float *beta)
{
    const uint8_t *cat = amp_rt.category[AMP_DEVICE_CUDA][hook];
    if (amp_live_load(&cat[0]) == amp_live_load(&cat[1]))
        return 0;
    return beta && amp_cublas_host_pointers(real, handle) ? *beta != 0.0f : 1;
}

/* The entry point a call of c's width is re-issued through to lower it. */
static enum amp_hook_id target_hook(const struct amp_cublas_call *c)
{
    if (c->is_ex)
        return c->hook;
    switch (c->target) {
    case AMP_CUBLAS_TO_STRIDED:
        return c->is64 ? AMP_HOOK_cublasGemmStridedBatchedEx_64
                       : AMP_HOOK_cublasGemmStridedBatchedEx;
    case AMP_CUBLAS_TO_BATCHED:
        return c->is64 ? AMP_HOOK_cublasGemmBatchedEx_64 : AMP_HOOK_cublasGemmBatchedEx;
    case AMP_CUBLAS_TO_GEMMEX:
        break;
    }
    return c->is64 ? AMP_HOOK_cublasGemmEx_64 : AMP_HOOK_cublasGemmEx;
}

/* Decides an eligible call: returns the fast compute type to run it with,
 * or 0 to run it as the program made it, and in *outcome how it counts if
 * it runs as decided (the caller counts it once, when it has run). Only a
 * call lowered through a GemmEx form can be audited
 * (shim/cublas/cublas_audit.c); the others run as made under
 * AMPSHIM_AUDIT=1. */
static int decide(struct amp_thread *t, const struct amp_cublas_call *c,
                  enum amp_ctl_counter *outcome)
{
    int acc = amp_cublas_accumulates(c->hook, c->real, c->g.h, (const float *)c->g.beta);
    int dtype = c->target == AMP_CUBLAS_TO_GEMMEX
                    ? amp_decide_lower_dtype(t, AMP_DEVICE_CUDA, c->hook, acc, outcome)
                    : amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, c->hook, acc, outcome);
    dtype = amp_cuda_size_rule(t, c->hook, acc, dtype,
                               (double)c->g.m * (double)c->g.n * (double)c->g.k * (double)c->batch,
                               outcome);
    int compute = amp_cublas_fast_compute(dtype);
    int mode;
    if (compute && amp_cublas_math_mode(c->real, c->g.h, &mode) &&
        amp_cublas_mode_keeps_calls(mode)) {
        compute = 0;
        *outcome = AMP_CTL_PASSTHROUGH;
    }
    return compute;
}

static int as_made(const struct amp_cublas_call *c)
{
    return c->as_made(c, c->g.C, c->g.ldc);
}

typedef int (*stridedex_I32)(void *, int, int, int, int, int, const void *, const void *, int, int,
                             long long, const void *, int, int, long long, const void *, void *,
                             int, int, long long, int, int, int);
typedef int (*stridedex_I64)(void *, int, int, int64_t, int64_t, int64_t, const void *,
                             const void *, int, int64_t, long long, const void *, int, int64_t,
                             long long, const void *, void *, int, int64_t, long long, int64_t, int,
                             int);
typedef int (*batchedex_I32)(void *, int, int, int, int, int, const void *, const void *const *,
                             int, int, const void *const *, int, int, const void *, void *const *,
                             int, int, int, int, int);
typedef int (*batchedex_I64)(void *, int, int, int64_t, int64_t, int64_t, const void *,
                             const void *const *, int, int64_t, const void *const *, int, int64_t,
                             const void *, void *const *, int, int64_t, int64_t, int, int);

/* c lowered to `compute` through a strided Ex form. */
static int run_strided(void *ex, const struct amp_cublas_call *c, int compute)
{
    const struct amp_gemmex_args *a = &c->g;
    if (c->is64)
        return ((stridedex_I64)ex)(a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A, a->at,
                                   a->lda, c->sa, a->B, a->bt, a->ldb, c->sb, a->beta, a->C, a->ct,
                                   a->ldc, c->sc, c->batch, compute, a->algo);
    return ((stridedex_I32)ex)(a->h, a->ta, a->tb, (int)a->m, (int)a->n, (int)a->k, a->alpha, a->A,
                               a->at, (int)a->lda, c->sa, a->B, a->bt, (int)a->ldb, c->sb, a->beta,
                               a->C, a->ct, (int)a->ldc, c->sc, (int)c->batch, compute, a->algo);
}

/* The same through a pointer-array Ex form (A, B and C are the arrays). */
static int run_batched(void *ex, const struct amp_cublas_call *c, int compute)
{
    const struct amp_gemmex_args *a = &c->g;
    if (c->is64)
        return ((batchedex_I64)ex)(a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha,
                                   (const void *const *)a->A, a->at, a->lda,
                                   (const void *const *)a->B, a->bt, a->ldb, a->beta,
                                   (void *const *)a->C, a->ct, a->ldc, c->batch, compute, a->algo);
    return ((batchedex_I32)ex)(
        a->h, a->ta, a->tb, (int)a->m, (int)a->n, (int)a->k, a->alpha, (const void *const *)a->A,
        a->at, (int)a->lda, (const void *const *)a->B, a->bt, (int)a->ldb, a->beta,
        (void *const *)a->C, a->ct, (int)a->ldc, (int)c->batch, compute, a->algo);
}

/* c lowered to `compute` through cublasGemmEx: plainly; in fp16 with
 * AMPSHIM_CUDA_FP16=explicit (as made when that cannot be done), unless
 * AMPSHIM_AUDIT=1 promises the program its results as made; under the audit
 * run both ways, or as made when the audit says so. A call that ran as made
 * after all counts so (*outcome). */
static int run_gemmex(void *ex, const struct amp_cublas_call *c, int compute,
                      enum amp_ctl_counter *outcome)
{
    int fp16 = amp_unlikely(amp_rt.cfg.cuda_fp16_explicit) &&
               compute == AMP_CUBLAS_COMPUTE_32F_FAST_16F &&
               amp_live_load(&amp_rt.cfg.audit) != AMP_AUDIT_ON &&
               amp_live_load(&amp_rt.cfg.audit) != AMP_AUDIT_AUTO;
    int audit = !fp16 && amp_unlikely(amp_live_load(&amp_rt.cfg.audit));
    if (amp_likely(!fp16 && !audit))
        return amp_cublas_run_gemmex(ex, c->is64, &c->g, compute);
    struct amp_gemmex_args lowered = c->g;
    lowered.compute = compute;
    const struct amp_gemmex_args *a = &lowered;
    int run_as_made = 0, status = -1;
    if (fp16) {
        status = amp_cublas_fp16_explicit(ex, c->is64, a);
        run_as_made = status < 0;
    } else {
        status = amp_cublas_audited(c, ex, a, &run_as_made);
    }
    if (!run_as_made)
        return status;
    *outcome = amp_not_lowered_after_all(*outcome);
    return as_made(c);
}

static int gemm(const struct amp_cublas_call *c)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return as_made(c);
    void *ex = c->eligible ? amp_real_beside(target_hook(c), c->real) : NULL;
    enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;
    int compute = ex ? decide(t, c, &outcome) : 0;
    int status;
    if (!compute)
        status = as_made(c);
    else if (c->target == AMP_CUBLAS_TO_STRIDED)
        status = run_strided(ex, c, compute);
    else if (c->target == AMP_CUBLAS_TO_BATCHED)
        status = run_batched(ex, c, compute);
    else
        status = run_gemmex(ex, c, compute, &outcome);
    amp_count(t, c->hook, outcome, 1);
    return status;
}

/* A call whose GPU time is taken (shim/cuda/cuda_timing.h): the same,
 * between the events on the handle's stream. */
__attribute__((noinline)) static int timed_gemm(const struct amp_cublas_call *c)
{
    struct amp_thread *t = amp_thread_enter();
    const struct amp_cublas_helpers *f = amp_cublas_helpers(c->real);
    struct amp_cuda_timed tm = {.pair = -1};
    void *stream = NULL;
    if (t && f->get_stream && f->get_stream(c->g.h, &stream) == AMP_CUBLAS_STATUS_SUCCESS)
        amp_cuda_time_start(&tm, t, c->hook, stream);
    int status = gemm(c);
    amp_cuda_time_end(&tm, t, c->hook, stream);
    return status;
}

int amp_cublas_gemm(const struct amp_cublas_call *c)
{
    return amp_likely(!amp_cuda_timing_due()) ? gemm(c) : timed_gemm(c);
}
