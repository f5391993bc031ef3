/* A small fp32 MLP (16 -> 64 ReLU -> 4) trained with plain SGD, every matrix
 * product a cblas_sgemm, plus GradScaler-style loss scaling from
 * libampscaler. Run it under ampshim's fp16 autocast to train in fp16:
 *
 *   AMPSHIM_DTYPE=fp16 AMPSHIM_OUTPUT=round LD_PRELOAD=libampshim.so ./mlp_train
 *
 * There every product rounds its operands and its result to fp16, like an
 * fp16 network with fp32 master weights. The loss carries a small weight
 * (1e-5, as auxiliary losses may) and the learning rate is divided by it, so
 * in fp32 the training is the same as without the weight; but the raw
 * gradients are 1e-5 times smaller, and as the fit improves they fall below
 * fp16's smallest subnormal (6e-8) and flush to zero. With --no-scaler the
 * loss stalls; with the scaler (the seed of backward multiplied by the scale,
 * gradients unscaled before the step) it keeps going down, as in fp32.
 *
 * usage: mlp_train [--no-scaler] [--steps N] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amp_scaler.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                 float *, int);
enum { ROW = 101, N_ = 111, T_ = 112 };
enum { BATCH = 256, IN = 16, HID = 64, OUT = 4 };

static uint64_t rng = 0x2545f4914f6cdd1dull;

static float gaussian(void)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        u[i] = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
    }
    return (float)(sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]));
}

static void fill(float *p, size_t n, float stddev)
{
    for (size_t i = 0; i < n; i++)
        p[i] = stddev * gaussian();
}

/* y = relu?(x w + b) for a batch, row major. Forward and backward are
 * functions of their own (noipa: never inlined or cloned; exported: the program is linked
 * with -rdynamic), so ampshim's audit and its call-site policy entries can
 * tell their products apart. */
__attribute__((noipa)) void layer(const float *x, const float *w, const float *b, float *y, int in,
                                  int out, int relu)
{
    for (int r = 0; r < BATCH; r++)
        memcpy(y + r * out, b, sizeof(float) * (size_t)out);
    cblas_sgemm(ROW, N_, N_, BATCH, out, in, 1.0f, x, in, w, out, 1.0f, y, out);
    if (relu)
        for (int i = 0; i < BATCH * out; i++)
            y[i] = y[i] > 0 ? y[i] : 0;
}

/* Backward: every product a cblas_sgemm. */
__attribute__((noipa)) void backward(const float *x, const float *h, const float *w2,
                                     const float *dy, float *dh, float *gw1, float *gb1, float *gw2,
                                     float *gb2)
{
    cblas_sgemm(ROW, T_, N_, HID, OUT, BATCH, 1.0f, h, HID, dy, OUT, 0.0f, gw2, OUT);
    cblas_sgemm(ROW, N_, T_, BATCH, HID, OUT, 1.0f, dy, OUT, w2, OUT, 0.0f, dh, HID);
    for (int i = 0; i < BATCH * HID; i++)
        dh[i] = h[i] > 0 ? dh[i] : 0;
    cblas_sgemm(ROW, T_, N_, IN, HID, BATCH, 1.0f, x, IN, dh, HID, 0.0f, gw1, HID);
    memset(gb1, 0, sizeof(float) * HID);
    memset(gb2, 0, sizeof(float) * OUT);
    for (int r = 0; r < BATCH; r++) {
        for (int j = 0; j < HID; j++)
            gb1[j] += dh[r * HID + j];
        for (int j = 0; j < OUT; j++)
            gb2[j] += dy[r * OUT + j];
    }
}

int main(int argc, char **argv)
{
    int use_scaler = 1, steps = 3000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-scaler") == 0)
            use_scaler = 0;
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: mlp_train [--no-scaler] [--steps N]\n");
            return 2;
        }
    }
    /* Synthetic data: a fixed random teacher network. */
    static float x[BATCH * IN], t[BATCH * OUT], th[BATCH * HID];
    static float tw1[IN * HID], tb1[HID], tw2[HID * OUT], tb2[OUT];
    fill(x, BATCH * IN, 1.0f);
    fill(tw1, IN * HID, 0.5f);
    fill(tb1, HID, 0.1f);
    fill(tw2, HID * OUT, 0.3f);
    fill(tb2, OUT, 0.1f);
    layer(x, tw1, tb1, th, IN, HID, 1);
    layer(th, tw2, tb2, t, HID, OUT, 0);

    /* The student, its activations and gradients: all fp32 arrays. */
    static float w1[IN * HID], b1[HID], w2[HID * OUT], b2[OUT];
    static float h[BATCH * HID], y[BATCH * OUT], dy[BATCH * OUT], dh[BATCH * HID];
    static float gw1[IN * HID], gb1[HID], gw2[HID * OUT], gb2[OUT];
    fill(w1, IN * HID, 0.25f);
    fill(w2, HID * OUT, 0.02f);

    amp_scaler *scaler = NULL;
    if (use_scaler) {
        scaler = amp_scaler_create(NULL); /* 65536, x2 every 2000 clean steps, /2 on overflow */
        if (!scaler) {
            perror("amp_scaler_create");
            return 1;
        }
    }
    amp_buffer grads[4] = {{.data = gw1, .count = IN * HID, .dtype = AMP_F32},
                           {.data = gb1, .count = HID, .dtype = AMP_F32},
                           {.data = gw2, .count = HID * OUT, .dtype = AMP_F32},
                           {.data = gb2, .count = OUT, .dtype = AMP_F32}};
    const float loss_weight = 1e-5f, lr = 0.1f / loss_weight;
    int skipped = 0;
    double loss = 0;
    printf("%-8s %14s %12s %8s\n", "step", "loss (mse)", "scale", "skipped");
    for (int step = 1; step <= steps; step++) {
        layer(x, w1, b1, h, IN, HID, 1);
        layer(h, w2, b2, y, HID, OUT, 0);
        loss = 0;
        float seed = scaler ? amp_scaler_get_scale(scaler) : 1.0f;
        for (int i = 0; i < BATCH * OUT; i++) {
            float r = y[i] - t[i];
            loss += (double)r * r;
            /* The seed of backward, d(weight * mean sq)/dy, times the scale. */
            dy[i] = seed * loss_weight * 2.0f * r / (BATCH * OUT);
        }
        loss /= BATCH * OUT;
        backward(x, h, w2, dy, dh, gw1, gb1, gw2, gb2);
        int ok = 1;
        if (scaler) {
            if (amp_scaler_unscale(scaler, grads, 4) != 0) {
                fprintf(stderr, "unscale: %s\n", amp_scaler_last_error(scaler));
                return 1;
            }
            ok = amp_scaler_step_ok(scaler);
        }
        if (ok) {
            for (size_t g = 0; g < 4; g++) {
                float *p = g == 0 ? w1 : g == 1 ? b1 : g == 2 ? w2 : b2;
                const float *d = grads[g].data;
                for (size_t i = 0; i < grads[g].count; i++)
                    p[i] -= lr * d[i];
            }
        } else {
            skipped++;
        }
        if (scaler)
            amp_scaler_update(scaler, NULL);
        if (step == 1 || step % (steps / 10 > 0 ? steps / 10 : 1) == 0)
            printf("%-8d %14.6e %12g %8d\n", step, loss,
                   scaler ? (double)amp_scaler_get_scale(scaler) : 1.0, skipped);
    }
    printf("final loss %.6e with%s loss scaling (%d steps skipped)\n", loss, scaler ? "" : "out",
           skipped);
    amp_scaler_destroy(scaler);
    return 0;
}
