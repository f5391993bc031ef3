/* Unscale + Inf/NaN check of 256 MiB of gradients, in place, against memcpy
 * of the same 256 MiB, side by side in one run; fp32, fp16 and bf16 buffers,
 * vector and scalar kernels. GB/s counts the gradient bytes processed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_util.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/unscale.h"

enum { BYTES = 256 << 20, ROUNDS = 7 };

static void *big(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(p, 0, bytes);
    return p;
}

static void *grad, *copy;

/* Alternating factors keep the values bounded over the rounds. */
static double run(const struct amp_unscale_kernels *k, int dtype)
{
    double t[ROUNDS];
    for (int r = 0; r <= ROUNDS; r++) {
        float factor = r & 1 ? 1.0f / 65536.0f : 65536.0f;
        double t0 = now();
        if (dtype == 0)
            k->f32(grad, BYTES / 4, factor);
        else if (dtype == 1)
            k->f16(grad, BYTES / 2, factor);
        else if (dtype == 2)
            k->bf16(grad, BYTES / 2, factor);
        else
            memcpy(copy, grad, BYTES);
        if (r > 0)
            t[r - 1] = now() - t0;
    }
    return BYTES / median(t, ROUNDS) / 1e9;
}

int main(void)
{
    grad = big(BYTES);
    copy = big(BYTES);
    float *f = grad;
    for (size_t i = 0; i < BYTES / 4; i++)
        f[i] = (float)(i % 1009) * 0.001f;
    const struct amp_unscale_kernels *vec = amp_cpu_has_avx2_f16c() ? amp_unscale_avx2 : NULL;
    double mem = run(&amp_unscale_scalar, 3);
    printf("unscale + check, 256 MiB in place, median of %d rounds; GB/s of gradient bytes\n",
           ROUNDS);
    printf("%-22s %12s %10s %12s %10s\n", "buffer", vec ? vec->name : "(no avx2)", "vs memcpy",
           "scalar", "vs memcpy");
    printf("%-22s %12.2f %9.0f%%\n", "memcpy (256 MiB)", mem, 100.0);
    static const char *const names[] = {"fp32 gradients", "fp16 gradients", "bf16 gradients"};
    for (int d = 0; d < 3; d++) {
        if (d == 1) /* half buffers: start from finite halves */
            memset(grad, 0x3c, BYTES);
        double v = vec ? run(vec, d) : 0.0, s = run(&amp_unscale_scalar, d);
        printf("%-22s %12.2f %9.0f%% %12.2f %9.0f%%\n", names[d], v, 100.0 * v / mem, s,
               100.0 * s / mem);
    }
    return 0;
}
