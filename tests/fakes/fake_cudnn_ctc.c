/* TEST-ONLY part of the fake libcudnn.so.9 (tests/fakes/fake_cudnn.c): CTC
 * loss. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/export.h"
#include "tests/fakes/fake_cudnn_internal.h"

/* ---- CTC loss: the costs (negative log-likelihood, blank = label 0) -------- */
struct cudnnCTCLossStruct {
    cudnnDataType_t type;
};

AMP_EXPORT cudnnStatus_t cudnnCreateCTCLossDescriptor(cudnnCTCLossDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

AMP_EXPORT cudnnStatus_t cudnnDestroyCTCLossDescriptor(cudnnCTCLossDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnSetCTCLossDescriptor(cudnnCTCLossDescriptor_t d, cudnnDataType_t type)
{
    d->type = type;
    return CUDNN_STATUS_SUCCESS;
}

/* probs: T x N x A, packed, already softmax-ed; gradients are not computed
 * (this fake leaves them zero). */
AMP_EXPORT cudnnStatus_t cudnnCTCLoss(cudnnHandle_t h, const cudnnTensorDescriptor_t pd,
                                const void *probs, const int labels[], const int label_lengths[],
                                const int input_lengths[], void *costs,
                                const cudnnTensorDescriptor_t gd, void *gradients,
                                cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctc, void *ws,
                                size_t ws_bytes)
{
    (void)h, (void)algo, (void)ws, (void)ws_bytes, (void)ctc;
    if (pd->type != CUDNN_DATA_FLOAT || pd->nb != 3)
        return UNSUPPORTED;
    fake_cudnn_record(__func__, -1, pd->type, pd->type, pd->type, pd->type, ws_bytes);
    int T = pd->dims[0], N = pd->dims[1], A = pd->dims[2];
    const float *p = probs;
    if (gradients)
        memset(gradients, 0, sizeof(float) * (size_t)gd->dims[0] * gd->dims[1] * gd->dims[2]);
    for (int n = 0, off = 0; n < N; off += label_lengths[n], n++) {
        int L = 2 * label_lengths[n] + 1, Tn = input_lengths[n];
        double *alpha = calloc((size_t)L, sizeof *alpha), *next = calloc((size_t)L, sizeof *next);
        if (!alpha || !next || Tn > T) {
            free(alpha), free(next);
            return !alpha || !next ? CUDNN_STATUS_ALLOC_FAILED : BAD;
        }
#define EXT(s) ((s) % 2 ? labels[off + (s) / 2] : 0)
#define PROB(t, s) ((double)p[((long)(t)*N + n) * A + EXT(s)])
        alpha[0] = PROB(0, 0);
        if (L > 1)
            alpha[1] = PROB(0, 1);
        for (int t = 1; t < Tn; t++) {
            for (int s = 0; s < L; s++) {
                double a = alpha[s] + (s > 0 ? alpha[s - 1] : 0.0);
                if (s > 1 && EXT(s) != 0 && EXT(s) != EXT(s - 2))
                    a += alpha[s - 2];
                next[s] = a * PROB(t, s);
            }
            memcpy(alpha, next, sizeof(double) * (size_t)L);
        }
#undef PROB
#undef EXT
        double total = alpha[L - 1] + (L > 1 ? alpha[L - 2] : 0.0);
        ((float *)costs)[n] = (float)-log(total);
        free(alpha), free(next);
    }
    return CUDNN_STATUS_SUCCESS;
}

