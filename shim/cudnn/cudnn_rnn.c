/* The cuDNN RNN hook: cudnnRNNForward in inference mode on fp32 data with
 * fp32 math precision. fp16 runs the call on a private RNN descriptor made
 * for it: the program's settings (cudnnGetRNNDescriptor_v8) with
 * CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, and its clip (cudnnRNNGetClip_v8),
 * with more workspace if cuDNN then wants it. The program's descriptor is
 * only read: cudnnSetRNNDescriptor_v8 re-initialises a descriptor (a clip
 * set on it is gone after, as is a dynamic build), so it is never called on
 * the program's. The persistent-dynamic algorithm runs as made (its plan is
 * built for the program's descriptor by cudnnBuildRNNDynamic); so do tf32
 * (default math on fp32 uses TF32 on Ampere and later) and training mode
 * (its reserve space must match the backward calls, which run with the
 * program's descriptor). bf16 has no path (the weight space's layout is the
 * data type's) and runs as made. */
#include "runtime/decide.h"
#include "shim/cudnn/cudnn_scope.h"
#include "shim/hook_stub.h"
#include "shim/resolve.h"

struct rnn_config {
    int algo, cell, bias, dir, input, data, prec, math;
    int32_t input_size, hidden, proj, layers;
    void *dropout;
    uint32_t aux;
};

static int rnn_get(const struct amp_cudnn_helpers *f, void *rd, struct rnn_config *c)
{
    return f->get_rnn(rd, &c->algo, &c->cell, &c->bias, &c->dir, &c->input, &c->data, &c->prec,
                      &c->math, &c->input_size, &c->hidden, &c->proj, &c->layers, &c->dropout,
                      &c->aux) == AMP_DNN_OK;
}

/* The multiply-adds of an inference pass, for the size rule: each fp32
 * weight (biases too, a few in a thousand) once per token of the batch. 0
 * when cuDNN does not describe x (the call is then small). */
static double rnn_madds(const struct amp_cudnn_helpers *f, void *xd, size_t weight_bytes)
{
    int type, layout, max_len = 0, batch = 0, vector, length;
    if (f->get_rnn_data(xd, &type, &layout, &max_len, &batch, &vector, 0, &length, NULL) !=
        AMP_DNN_OK)
        return 0;
    return (double)(weight_bytes / sizeof(float)) * (double)max_len * (double)batch;
}

/* A private descriptor owned by the scope: the program's settings with math
 * type `math`, and its clip; NULL if cuDNN refuses any of it. */
static void *rnn_private(struct amp_dnn_scope *s, void *rd, const struct rnn_config *c, int math)
{
    const struct amp_cudnn_helpers *f = s->f;
    int clip_mode, clip_nan;
    double lclip, rclip;
    void *priv = amp_dnn_scope_own(s, f->create_rnn, f->destroy_rnn);
    return priv &&
                   f->set_rnn(priv, c->algo, c->cell, c->bias, c->dir, c->input, c->data, c->prec,
                              math, c->input_size, c->hidden, c->proj, c->layers, c->dropout,
                              c->aux) == AMP_DNN_OK &&
                   f->get_clip(rd, &clip_mode, &clip_nan, &lclip, &rclip) == AMP_DNN_OK &&
                   f->set_clip(priv, clip_mode, clip_nan, lclip, rclip) == AMP_DNN_OK
               ? priv
               : NULL;
}

typedef int (*rnn_fwd_fn)(void *, void *, int, const int32_t *, void *, const void *, void *,
                          void *, void *, const void *, void *, void *, const void *, void *,
                          size_t, const void *, size_t, void *, size_t, void *);

static int rnn_fwd(enum amp_hook_id hook, rnn_fwd_fn real, void *h, void *rd, int mode,
                   const int32_t *lengths, void *xd, const void *x, void *yd, void *y, void *hd,
                   const void *hx, void *hy, void *cd, const void *cx, void *cy,
                   size_t weight_bytes, const void *weights, size_t ws_bytes, void *ws,
                   size_t reserve_bytes, void *reserve)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return real(h, rd, mode, lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy, weight_bytes,
                    weights, ws_bytes, ws, reserve_bytes, reserve);
    const struct amp_cudnn_helpers *f = amp_dnn((const void *)real);
    struct rnn_config c;
    int dtype = -1, status = -1;
    enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;
    if (f && mode == AMP_CUDNN_FWD_MODE_INFERENCE && rnn_get(f, rd, &c) &&
        c.data == AMP_CUDNN_DATA_FLOAT && c.prec == AMP_CUDNN_DATA_FLOAT &&
        (c.math == AMP_CUDNN_DEFAULT_MATH || c.math == AMP_CUDNN_TENSOR_OP_MATH))
        dtype = amp_cuda_size_rule(
            t, hook, 0, amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, hook, 0, &outcome),
            rnn_madds(f, xd, weight_bytes), &outcome);
    if (dtype == AMP_DTYPE_FP16 && c.algo != AMP_CUDNN_RNN_ALGO_PERSIST_DYNAMIC) {
        struct amp_dnn_scope s;
        size_t need = 0, reserve_need = 0, work_bytes = ws_bytes;
        void *work = ws;
        amp_dnn_scope_begin(&s, f, h);
        void *priv = rnn_private(&s, rd, &c, AMP_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
        if (priv && f->ws_rnn(h, priv, mode, xd, &need, &reserve_need) == AMP_DNN_OK &&
            amp_dnn_scope_workspace(&s, need, &work, &work_bytes))
            status = real(h, priv, mode, lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy,
                          weight_bytes, weights, work_bytes, work, reserve_bytes, reserve);
        amp_dnn_scope_end(&s);
        if (status != AMP_DNN_OK)
            outcome = amp_not_lowered_after_all(outcome);
    } else if (dtype == AMP_DTYPE_FP16 || dtype == AMP_DTYPE_BF16) {
        outcome = amp_not_lowered_after_all(outcome); /* persistent dynamic; no bf16 path */
    }
    if (status != AMP_DNN_OK) /* tf32 (cuDNN's own default on fp32), or as made */
        status = real(h, rd, mode, lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy, weight_bytes,
                      weights, ws_bytes, ws, reserve_bytes, reserve);
    amp_count(t, hook, outcome, 1);
    return status;
}

AMP_STUB(cudnnRNNForward)
int AMP_C_ENTRY(cudnnRNNForward)(void *h, void *rd, int mode, const int32_t *lengths, void *xd,
                                 const void *x, void *yd, void *y, void *hd, const void *hx,
                                 void *hy, void *cd, const void *cx, void *cy, size_t weight_bytes,
                                 const void *weights, size_t ws_bytes, void *ws,
                                 size_t reserve_bytes, void *reserve)
{
    AMP_NOTE_CALLER();
    return rnn_fwd(AMP_HOOK_cudnnRNNForward, (rnn_fwd_fn)amp_real(AMP_HOOK_cudnnRNNForward), h, rd,
                   mode, lengths, xd, x, yd, y, hd, hx, hy, cd, cx, cy, weight_bytes, weights,
                   ws_bytes, ws, reserve_bytes, reserve);
}
