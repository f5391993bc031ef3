/* TEST-ONLY part of the fake libcudnn.so.9 (tests/fakes/fake_cudnn.c): the
 * RNNs. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "tests/fakes/fake_cudnn_internal.h"

/* ---- RNNs: one layer, one direction, RELU or TANH cells, linear input, no
 * projection; weight space [W (hidden x input), R (hidden x hidden), bW,
 * bR] in row-major order (this fake's own layout). Precision as for
 * convolutions: FMA math exact, default and tensor-op math TF32,
 * ALLOW_CONVERSION fp16 operands (and 512 bytes of workspace). Training
 * mode needs 1024 bytes of reserve space. -------------------------------- */
struct cudnnRNNStruct {
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t input;
    cudnnDataType_t data, prec;
    cudnnMathType_t math;
    int32_t input_size, hidden, proj, layers;
    cudnnDropoutDescriptor_t dropout;
    uint32_t aux;
    /* Set apart from the rest, and reset by cudnnSetRNNDescriptor_v8, as in
     * cuDNN 9 (a clip set before is gone after a re-set). */
    cudnnRNNClipMode_t clip;
    cudnnNanPropagation_t clip_nan;
    double lclip, rclip;
};

AMP_EXPORT cudnnStatus_t cudnnRNNSetClip_v8(cudnnRNNDescriptor_t d, cudnnRNNClipMode_t mode,
                                            cudnnNanPropagation_t nan, double lclip, double rclip)
{
    if (mode == CUDNN_RNN_CLIP_MINMAX && !(lclip <= rclip))
        return BAD;
    d->clip = mode, d->clip_nan = nan, d->lclip = lclip, d->rclip = rclip;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnRNNGetClip_v8(cudnnRNNDescriptor_t d, cudnnRNNClipMode_t *mode,
                                            cudnnNanPropagation_t *nan, double *lclip,
                                            double *rclip)
{
    *mode = d->clip, *nan = d->clip_nan, *lclip = d->lclip, *rclip = d->rclip;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t d, cudnnRNNAlgo_t algo,
                                            cudnnRNNMode_t cell, cudnnRNNBiasMode_t bias,
                                            cudnnDirectionMode_t dir, cudnnRNNInputMode_t input,
                                            cudnnDataType_t data, cudnnDataType_t prec,
                                            cudnnMathType_t math, int32_t input_size,
                                            int32_t hidden, int32_t proj, int32_t layers,
                                            cudnnDropoutDescriptor_t dropout, uint32_t aux)
{
    if ((cell != CUDNN_RNN_RELU && cell != CUDNN_RNN_TANH) || dir != CUDNN_UNIDIRECTIONAL ||
        input != CUDNN_LINEAR_INPUT || layers != 1 || proj != hidden || !fake_type_ok(data))
        return UNSUPPORTED;
    *d = (struct cudnnRNNStruct){algo,       cell,   bias, dir,    input,   data, prec,    math,
                                 input_size, hidden, proj, layers, dropout, aux,
                                 CUDNN_RNN_CLIP_NONE, CUDNN_NOT_PROPAGATE_NAN, 0.0, 0.0};
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t d, cudnnRNNAlgo_t *algo,
                                            cudnnRNNMode_t *cell, cudnnRNNBiasMode_t *bias,
                                            cudnnDirectionMode_t *dir, cudnnRNNInputMode_t *input,
                                            cudnnDataType_t *data, cudnnDataType_t *prec,
                                            cudnnMathType_t *math, int32_t *input_size,
                                            int32_t *hidden, int32_t *proj, int32_t *layers,
                                            cudnnDropoutDescriptor_t *dropout, uint32_t *aux)
{
    *algo = d->algo, *cell = d->cell, *bias = d->bias, *dir = d->dir, *input = d->input;
    *data = d->data, *prec = d->prec, *math = d->math, *input_size = d->input_size;
    *hidden = d->hidden, *proj = d->proj, *layers = d->layers, *dropout = d->dropout;
    *aux = d->aux;
    return CUDNN_STATUS_SUCCESS;
}

struct cudnnRNNDataStruct {
    cudnnDataType_t type;
    cudnnRNNDataLayout_t layout;
    int max_len, batch, vector;
};

AMP_EXPORT cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

/* Sequence-major unpacked layout, every sequence of the full length. */
AMP_EXPORT cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, cudnnDataType_t type,
                                             cudnnRNNDataLayout_t layout, int max_len, int batch,
                                             int vector, const int lengths[], void *fill)
{
    (void)fill;
    if (layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED || !fake_type_ok(type))
        return UNSUPPORTED;
    for (int b = 0; b < batch; b++)
        if (lengths[b] != max_len)
            return UNSUPPORTED;
    *d = (struct cudnnRNNDataStruct){type, layout, max_len, batch, vector};
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, cudnnDataType_t *type,
                                                   cudnnRNNDataLayout_t *layout, int *max_len,
                                                   int *batch, int *vector, int n_lengths,
                                                   int lengths[], void *fill)
{
    (void)fill;
    *type = d->type, *layout = d->layout, *max_len = d->max_len, *batch = d->batch;
    *vector = d->vector;
    for (int b = 0; b < n_lengths && b < d->batch; b++)
        lengths[b] = d->max_len;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t h, cudnnRNNDescriptor_t d, size_t *size)
{
    (void)h;
    *size = sizeof(float) * (size_t)(d->hidden * (d->input_size + d->hidden) + 2 * d->hidden);
    return CUDNN_STATUS_SUCCESS;
}

static size_t rnn_workspace(const struct cudnnRNNStruct *d)
{
    return d->data == CUDNN_DATA_FLOAT && d->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? 512
                                                                                           : 0;
}

AMP_EXPORT cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t h, cudnnRNNDescriptor_t d,
                                             cudnnForwardMode_t mode, cudnnRNNDataDescriptor_t x,
                                             size_t *ws, size_t *reserve)
{
    (void)h, (void)x;
    *ws = rnn_workspace(d);
    if (reserve)
        *reserve = mode == CUDNN_FWD_MODE_INFERENCE ? 0 : 1024;
    return CUDNN_STATUS_SUCCESS;
}

static float rnn_operand(const struct cudnnRNNStruct *d, float v)
{
    if (d->data != CUDNN_DATA_FLOAT || d->math == CUDNN_FMA_MATH)
        return v;
    if (d->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
        return (float)(_Float16)v;
    return fake_tf32_allowed() ? fake_round_bits(v, 13) : v;
}

AMP_EXPORT cudnnStatus_t cudnnRNNForward(cudnnHandle_t h, cudnnRNNDescriptor_t d, cudnnForwardMode_t mode,
                                   const int32_t lengths[], cudnnRNNDataDescriptor_t xd,
                                   const void *x, cudnnRNNDataDescriptor_t yd, void *y,
                                   cudnnTensorDescriptor_t hd, const void *hx, void *hy,
                                   cudnnTensorDescriptor_t cd, const void *cx, void *cy,
                                   size_t weight_bytes, const void *weights, size_t ws_bytes,
                                   void *ws, size_t reserve_bytes, void *reserve)
{
    (void)h, (void)lengths, (void)hd, (void)cd, (void)cx, (void)cy;
    size_t need_ws = rnn_workspace(d), need_weights = 0;
    cudnnGetRNNWeightSpaceSize(h, d, &need_weights);
    if (ws_bytes < need_ws || (need_ws && !ws) || weight_bytes < need_weights ||
        (mode != CUDNN_FWD_MODE_INFERENCE && (reserve_bytes < 1024 || !reserve)) ||
        xd->vector != d->input_size || yd->vector != d->hidden || xd->batch != yd->batch ||
        xd->max_len != yd->max_len)
        return BAD;
    fake_cudnn_record(__func__, d->math, d->data, d->prec, yd->type, d->prec, ws_bytes);
    int H = d->hidden, I = d->input_size, B = xd->batch;
    const float *W = weights, *R = W + H * I, *bw = R + H * H, *br = bw + H;
    float *state = calloc((size_t)(B * H), sizeof *state), *next = calloc((size_t)H, sizeof *next);
    if (!state || !next) {
        free(state), free(next);
        return CUDNN_STATUS_ALLOC_FAILED;
    }
    for (int i = 0; i < B * H; i++)
        state[i] = hx ? fake_load(d->data, hx, i) : 0.0f;
    for (int t = 0; t < xd->max_len; t++)
        for (int b = 0; b < B; b++) {
            for (int j = 0; j < H; j++) {
                float acc = 0.0f;
                for (int i = 0; i < I; i++)
                    acc += rnn_operand(d, W[j * I + i]) *
                           rnn_operand(d, fake_load(d->data, x, ((long)t * B + b) * I + i));
                for (int i = 0; i < H; i++)
                    acc += rnn_operand(d, R[j * H + i]) * rnn_operand(d, state[b * H + i]);
                if (d->bias != CUDNN_RNN_NO_BIAS)
                    acc += bw[j] + (d->bias == CUDNN_RNN_DOUBLE_BIAS ? br[j] : 0.0f);
                if (d->clip == CUDNN_RNN_CLIP_MINMAX) /* the cell's input, clipped */
                    acc = acc < d->lclip ? (float)d->lclip : acc > d->rclip ? (float)d->rclip : acc;
                next[j] = d->cell == CUDNN_RNN_RELU ? (acc > 0.0f ? acc : 0.0f) : tanhf(acc);
            }
            for (int j = 0; j < H; j++) {
                state[b * H + j] = next[j];
                fake_store(yd->type, y, ((long)t * B + b) * H + j, next[j]);
            }
        }
    if (hy)
        for (int i = 0; i < B * H; i++)
            fake_store(d->data, hy, i, state[i]);
    free(state), free(next);
    return CUDNN_STATUS_SUCCESS;
}
