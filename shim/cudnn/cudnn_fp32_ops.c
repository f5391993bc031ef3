/* The cuDNN hooks of fp32-list ops: softmax (forward and backward),
 * normalisation (inference, and training in normalise-only mode) and
 * reduction. On half or bf16 tensors the call is computed in fp32: inputs
 * converted into fp32 scratch, the call made on fp32 descriptors into fp32
 * scratch, the result blended back in the program's type; a reduction asks
 * cuDNN itself, by setting the reduce descriptor's compute type to fp32 for
 * the call. On fp32 tensors these calls run unchanged, counted as fp32. CTC
 * loss (fp32 only in cuDNN) is an fp32 region. Whatever fails on the way runs
 * the call exactly as the program made it. */
#include "runtime/decide.h"
#include "shim/cudnn/cudnn_scope.h"
#include "shim/hook_stub.h"
#include "shim/region_hook.h"
#include "shim/resolve.h"

/* One fp32-list call: whether the thread wants it in fp32 (`want`), and
 * whether it has half or bf16 tensors to compute in fp32 (`half`). */
struct fp32_call {
    struct amp_thread *t;
    enum amp_hook_id hook;
    const struct amp_cudnn_helpers *f;
    int want, half;
};

static inline __attribute__((always_inline)) struct fp32_call
fp32_call_begin(enum amp_hook_id hook, const void *real, int n, void *const *descs, int eligible)
{
    struct fp32_call c = {.t = amp_thread_enter(), .hook = hook};
    c.want = c.t && amp_decide_fp32(c.t, AMP_DEVICE_CUDA, hook);
    c.f = c.want && eligible ? amp_dnn(real) : NULL;
    c.half = c.f && amp_dnn_any_half(c.f, n, descs);
    return c;
}

/* After the call was made in fp32 with `status`: counts what was converted,
 * and the call as fp32 when it succeeded; returns whether it did (else the
 * hook makes the call as made). */
static int fp32_call_done(const struct fp32_call *c, int status, uint64_t converted)
{
    amp_count(c->t, c->hook, AMP_CTL_CONVERTED, converted);
    if (status != AMP_DNN_OK)
        return 0;
    amp_count(c->t, c->hook, AMP_CTL_FP32, 1);
    return 1;
}

/* The call as the program made it: fp32 already (counted fp32 when wanted),
 * or half data not computed in fp32 after all (passthrough). */
static int fp32_call_as_made(const struct fp32_call *c, int status)
{
    if (c->t)
        amp_count(c->t, c->hook, c->want && !c->half ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH, 1);
    return status;
}

/* ---- softmax ---- */

typedef int (*softmax_fwd_fn)(void *, int, int, const void *, void *, const void *, const void *,
                              void *, void *);

static int softmax_fwd(enum amp_hook_id hook, softmax_fwd_fn real, void *h, int algo, int mode,
                       const void *alpha, void *xd, const void *x, const void *beta, void *yd,
                       void *y)
{
    void *descs[2] = {xd, yd};
    const void *ptrs[1] = {x};
    struct fp32_call c = fp32_call_begin(hook, (const void *)real, 2, descs, 1);
    if (c.half) {
        struct amp_dnn_upcast u;
        int status = amp_dnn_upcast_begin(&u, c.f, h, 1, descs, ptrs, yd)
                         ? real(h, algo, mode, &amp_dnn_one, u.desc[0], u.ptr[0], &amp_dnn_zero,
                                u.desc[3], (void *)u.ptr[3])
                         : -1;
        status = amp_dnn_upcast_end(&u, status, alpha, beta, y);
        if (fp32_call_done(&c, status, u.s.converted))
            return status;
    }
    return fp32_call_as_made(&c, real(h, algo, mode, alpha, xd, x, beta, yd, y));
}

AMP_STUB(cudnnSoftmaxForward)
int AMP_C_ENTRY(cudnnSoftmaxForward)(void *h, int algo, int mode, const void *alpha, void *xd,
                                     const void *x, const void *beta, void *yd, void *y)
{
    AMP_NOTE_CALLER();
    return softmax_fwd(AMP_HOOK_cudnnSoftmaxForward,
                       (softmax_fwd_fn)amp_real(AMP_HOOK_cudnnSoftmaxForward), h, algo, mode, alpha,
                       xd, x, beta, yd, y);
}


typedef int (*softmax_bwd_fn)(void *, int, int, const void *, void *, const void *, void *,
                              const void *, const void *, void *, void *);

static int softmax_bwd(enum amp_hook_id hook, softmax_bwd_fn real, void *h, int algo, int mode,
                       const void *alpha, void *yd, const void *y, void *dyd, const void *dy,
                       const void *beta, void *dxd, void *dx)
{
    void *descs[3] = {yd, dyd, dxd};
    const void *ptrs[2] = {y, dy};
    struct fp32_call c = fp32_call_begin(hook, (const void *)real, 3, descs, 1);
    if (c.half) {
        struct amp_dnn_upcast u;
        int status = amp_dnn_upcast_begin(&u, c.f, h, 2, descs, ptrs, dxd)
                         ? real(h, algo, mode, &amp_dnn_one, u.desc[0], u.ptr[0], u.desc[1],
                                u.ptr[1], &amp_dnn_zero, u.desc[3], (void *)u.ptr[3])
                         : -1;
        status = amp_dnn_upcast_end(&u, status, alpha, beta, dx);
        if (fp32_call_done(&c, status, u.s.converted))
            return status;
    }
    return fp32_call_as_made(&c, real(h, algo, mode, alpha, yd, y, dyd, dy, beta, dxd, dx));
}

AMP_STUB(cudnnSoftmaxBackward)
int AMP_C_ENTRY(cudnnSoftmaxBackward)(void *h, int algo, int mode, const void *alpha, void *yd,
                                      const void *y, void *dyd, const void *dy, const void *beta,
                                      void *dxd, void *dx)
{
    AMP_NOTE_CALLER();
    return softmax_bwd(AMP_HOOK_cudnnSoftmaxBackward,
                       (softmax_bwd_fn)amp_real(AMP_HOOK_cudnnSoftmaxBackward), h, algo, mode,
                       alpha, yd, y, dyd, dy, beta, dxd, dx);
}


/* ---- normalisation ---- */

/* Layer-norm style inference normalisation: x and z (if any) in fp32, the
 * scale, bias, mean and variance (fp32 already for half data) as they are. */
typedef int (*norm_inference_fn)(void *, int, int, int, const void *, const void *, void *,
                                 const void *, void *, const void *, const void *, void *,
                                 const void *, const void *, void *, const void *, void *, void *,
                                 void *, double, int);

static int norm_inference(enum amp_hook_id hook, norm_inference_fn real, void *h, int mode, int ops,
                          int algo, const void *alpha, const void *beta, void *xd, const void *x,
                          void *sbd, const void *scale, const void *bias, void *mvd,
                          const void *mean, const void *var, void *zd, const void *z, void *act,
                          void *yd, void *y, double epsilon, int groups)
{
    void *descs[3] = {xd, zd, yd};
    const void *ptrs[2] = {x, z};
    struct fp32_call c = fp32_call_begin(hook, (const void *)real, 3, descs, 1);
    if (c.half) {
        struct amp_dnn_upcast u;
        int status = amp_dnn_upcast_begin(&u, c.f, h, 2, descs, ptrs, yd)
                         ? real(h, mode, ops, algo, &amp_dnn_one, &amp_dnn_zero, u.desc[0],
                                u.ptr[0], sbd, scale, bias, mvd, mean, var, u.desc[1], u.ptr[1],
                                act, u.desc[3], (void *)u.ptr[3], epsilon, groups)
                         : -1;
        status = amp_dnn_upcast_end(&u, status, alpha, beta, y);
        if (fp32_call_done(&c, status, u.s.converted))
            return status;
    }
    return fp32_call_as_made(&c, real(h, mode, ops, algo, alpha, beta, xd, x, sbd, scale, bias, mvd,
                                      mean, var, zd, z, act, yd, y, epsilon, groups));
}

AMP_STUB(cudnnNormalizationForwardInference)
int AMP_C_ENTRY(cudnnNormalizationForwardInference)(void *h, int mode, int ops, int algo,
                                                    const void *alpha, const void *beta, void *xd,
                                                    const void *x, void *sbd, const void *scale,
                                                    const void *bias, void *mvd, const void *mean,
                                                    const void *var, void *zd, const void *z,
                                                    void *act, void *yd, void *y, double epsilon,
                                                    int groups)
{
    AMP_NOTE_CALLER();
    return norm_inference(AMP_HOOK_cudnnNormalizationForwardInference,
                          (norm_inference_fn)amp_real(AMP_HOOK_cudnnNormalizationForwardInference),
                          h, mode, ops, algo, alpha, beta, xd, x, sbd, scale, bias, mvd, mean, var,
                          zd, z, act, yd, y, epsilon, groups);
}


/* Training normalisation, normalisation only (CUDNN_NORM_OPS_NORM: no
 * activation, so no reserve space whose layout the backward call would
 * read): x and z in fp32, y into fp32 scratch, with the workspace cuDNN
 * wants for the fp32 descriptors. The running and saved statistics are fp32
 * already and are written as they are. With an activation, as made. */
static int norm_train_fp32(const struct amp_cudnn_helpers *f, struct amp_dnn_upcast *u, void *h,
                           int mode, int ops, int algo, void *sbd, void *act, void *mvd, void **ws,
                           size_t *ws_bytes, int groups)
{
    size_t need = 0;
    return ops == AMP_CUDNN_NORM_OPS_NORM &&
           f->ws_norm_train(h, mode, ops, algo, u->desc[0], u->desc[1], u->desc[3], sbd, act, mvd,
                            &need, groups) == AMP_DNN_OK &&
           amp_dnn_scope_workspace(&u->s, need, ws, ws_bytes);
}

typedef int (*norm_training_fn)(void *, int, int, int, const void *, const void *, void *,
                                const void *, void *, const void *, const void *, double, void *,
                                void *, void *, double, void *, void *, void *, void *,
                                const void *, void *, void *, void *, size_t, void *, size_t, int);

static int norm_training(enum amp_hook_id hook, norm_training_fn real, void *h, int mode, int ops,
                         int algo, const void *alpha, const void *beta, void *xd, const void *x,
                         void *sbd, const void *scale, const void *bias, double factor, void *mvd,
                         void *run_mean, void *run_var, double epsilon, void *save_mean,
                         void *save_inv_var, void *act, void *zd, const void *z, void *yd, void *y,
                         void *ws, size_t ws_bytes, void *reserve, size_t reserve_bytes, int groups)
{
    void *descs[3] = {xd, zd, yd};
    const void *ptrs[2] = {x, z};
    struct fp32_call c =
        fp32_call_begin(hook, (const void *)real, 3, descs, ops == AMP_CUDNN_NORM_OPS_NORM);
    if (c.half) {
        struct amp_dnn_upcast u;
        void *ws2 = ws;
        size_t ws2_bytes = ws_bytes;
        int status = amp_dnn_upcast_begin(&u, c.f, h, 2, descs, ptrs, yd) &&
                             norm_train_fp32(c.f, &u, h, mode, ops, algo, sbd, act, mvd, &ws2,
                                             &ws2_bytes, groups)
                         ? real(h, mode, ops, algo, &amp_dnn_one, &amp_dnn_zero, u.desc[0],
                                u.ptr[0], sbd, scale, bias, factor, mvd, run_mean, run_var, epsilon,
                                save_mean, save_inv_var, act, u.desc[1], u.ptr[1], u.desc[3],
                                (void *)u.ptr[3], ws2, ws2_bytes, reserve, reserve_bytes, groups)
                         : -1;
        status = amp_dnn_upcast_end(&u, status, alpha, beta, y);
        if (fp32_call_done(&c, status, u.s.converted))
            return status;
    }
    return fp32_call_as_made(&c,
                             real(h, mode, ops, algo, alpha, beta, xd, x, sbd, scale, bias, factor,
                                  mvd, run_mean, run_var, epsilon, save_mean, save_inv_var, act, zd,
                                  z, yd, y, ws, ws_bytes, reserve, reserve_bytes, groups));
}

AMP_STUB(cudnnNormalizationForwardTraining)
int AMP_C_ENTRY(cudnnNormalizationForwardTraining)(
    void *h, int mode, int ops, int algo, const void *alpha, const void *beta, void *xd,
    const void *x, void *sbd, const void *scale, const void *bias, double factor, void *mvd,
    void *run_mean, void *run_var, double epsilon, void *save_mean, void *save_inv_var, void *act,
    void *zd, const void *z, void *yd, void *y, void *ws, size_t ws_bytes, void *reserve,
    size_t reserve_bytes, int groups)
{
    AMP_NOTE_CALLER();
    return norm_training(AMP_HOOK_cudnnNormalizationForwardTraining,
                         (norm_training_fn)amp_real(AMP_HOOK_cudnnNormalizationForwardTraining), h,
                         mode, ops, algo, alpha, beta, xd, x, sbd, scale, bias, factor, mvd,
                         run_mean, run_var, epsilon, save_mean, save_inv_var, act, zd, z, yd, y, ws,
                         ws_bytes, reserve, reserve_bytes, groups);
}


/* ---- reduction ---- */

/* A reduction of half or bf16 data with a half compute type runs on a
 * private reduction descriptor (owned by the scope) with an fp32 compute
 * type and the program's other settings, more workspace if cuDNN then wants
 * it: *rd is replaced by it. */
static int reduce_fp32(const struct amp_cudnn_helpers *f, void *h, void **rd, void *ad, void *cd,
                       void **ws, size_t *ws_bytes, struct amp_dnn_upcast *u)
{
    int op, comp, nan, indices, index_type;
    size_t need = 0;
    amp_dnn_scope_begin(&u->s, f, h);
    if (u->s.failed || f->get_reduce(*rd, &op, &comp, &nan, &indices, &index_type) != AMP_DNN_OK)
        return 0;
    if (comp == AMP_CUDNN_DATA_FLOAT)
        return 1; /* fp32 already */
    void *priv = amp_dnn_scope_own(&u->s, f->create_reduce, f->destroy_reduce);
    if (!priv ||
        f->set_reduce(priv, op, AMP_CUDNN_DATA_FLOAT, nan, indices, index_type) != AMP_DNN_OK)
        return 0;
    *rd = priv;
    return f->ws_reduce(h, *rd, ad, cd, &need) == AMP_DNN_OK &&
           amp_dnn_scope_workspace(&u->s, need, ws, ws_bytes);
}

typedef int (*reduce_fn)(void *, void *, void *, size_t, void *, size_t, const void *, void *,
                         const void *, const void *, void *, void *);

static int reduce(enum amp_hook_id hook, reduce_fn real, void *h, void *rd, void *indices,
                  size_t indices_bytes, void *ws, size_t ws_bytes, const void *alpha, void *ad,
                  const void *A, const void *beta, void *cd, void *C)
{
    void *descs[2] = {ad, cd};
    struct fp32_call c = fp32_call_begin(hook, (const void *)real, 2, descs, 1);
    if (c.half) {
        struct amp_dnn_upcast u = {0};
        void *ws2 = ws;
        size_t ws2_bytes = ws_bytes;
        void *run = rd;
        int status =
            reduce_fp32(c.f, h, &run, ad, cd, &ws2, &ws2_bytes, &u)
                ? real(h, run, indices, indices_bytes, ws2, ws2_bytes, alpha, ad, A, beta, cd, C)
                : -1;
        amp_dnn_scope_end(&u.s);
        if (fp32_call_done(&c, status, u.s.converted))
            return status;
    }
    return fp32_call_as_made(
        &c, real(h, rd, indices, indices_bytes, ws, ws_bytes, alpha, ad, A, beta, cd, C));
}

AMP_STUB(cudnnReduceTensor)
int AMP_C_ENTRY(cudnnReduceTensor)(void *h, void *rd, void *indices, size_t indices_bytes, void *ws,
                                   size_t ws_bytes, const void *alpha, void *ad, const void *A,
                                   const void *beta, void *cd, void *C)
{
    AMP_NOTE_CALLER();
    return reduce(AMP_HOOK_cudnnReduceTensor, (reduce_fn)amp_real(AMP_HOOK_cudnnReduceTensor), h,
                  rd, indices, indices_bytes, ws, ws_bytes, alpha, ad, A, beta, cd, C);
}


/* ---- CTC loss: cuDNN takes fp32 probabilities only; the call is an fp32
 * region (forwarded word for word: both signatures are all machine words). */
AMP_DEFINE_FP32_REGION_HOOK(cudnnCTCLoss, AMP_DEVICE_CUDA)

AMP_DEFINE_FP32_REGION_HOOK(cudnnCTCLoss_v8, AMP_DEVICE_CUDA)
