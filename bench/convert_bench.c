/* Conversion throughput on 256 MiB of fp32 against memcpy of the same 256
 * MiB, side by side in one run: the vector kernels and the scalar reference,
 * for packing to bf16/fp16 and for rounding in fp32 storage (what a lowered
 * CPU call does). GB/s counts the fp32 bytes read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_util.h"

#include "kernels/cpu/convert.h"

enum { BYTES = 256 << 20, N = BYTES / 4, ROUNDS = 7 };

static void *big(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(p, 1, bytes); /* fault every page in before timing */
    return p;
}

static float *src, *dst;
static uint16_t *half;

typedef void (*job)(const struct amp_convert_kernels *k);

static void do_memcpy(const struct amp_convert_kernels *k)
{
    (void)k;
    memcpy(dst, src, BYTES);
}
static void do_bf16(const struct amp_convert_kernels *k)
{
    k->f32_to_bf16(src, half, N);
}
static void do_f16(const struct amp_convert_kernels *k)
{
    k->f32_to_f16(src, half, N);
}
static void do_round_bf16(const struct amp_convert_kernels *k)
{
    k->round[AMP_DTYPE_BF16](src, dst, N);
}
static void do_round_fp16(const struct amp_convert_kernels *k)
{
    k->round[AMP_DTYPE_FP16](src, dst, N);
}
static void do_round_tf32(const struct amp_convert_kernels *k)
{
    k->round[AMP_DTYPE_TF32](src, dst, N);
}

static double gbps(job j, const struct amp_convert_kernels *k)
{
    double t[ROUNDS];
    j(k);
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now();
        j(k);
        t[r] = now() - t0;
    }
    return (double)BYTES / median(t, ROUNDS) / 1e9;
}

int main(void)
{
    src = big(BYTES);
    dst = big(BYTES);
    half = big(BYTES / 2);
    for (size_t i = 0; i < N; i++)
        src[i] = (float)(i % 100003) * 1.0009765625f - 5000.0f;
    static const struct {
        const char *name;
        job j;
    } jobs[] = {
        {"fp32 -> bf16 (pack)", do_bf16},         {"fp32 -> fp16 (pack)", do_f16},
        {"round to bf16 in fp32", do_round_bf16}, {"round to fp16 in fp32", do_round_fp16},
        {"round to tf32 in fp32", do_round_tf32},
    };
    const struct amp_convert_kernels *vec = amp_cpu_has_avx2_f16c() ? amp_convert_avx2 : NULL;
    double mem = gbps(do_memcpy, NULL);
    printf("256 MiB of fp32, median of %d rounds; GB/s = fp32 bytes read per second\n", ROUNDS);
    printf("%-24s %12s %10s %12s %10s\n", "operation", vec ? vec->name : "(no avx2)", "vs memcpy",
           "scalar", "vs memcpy");
    printf("%-24s %12.2f %9.0f%% %12s %10s\n", "memcpy", mem, 100.0, "", "");
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
        double v = vec ? gbps(jobs[i].j, vec) : 0.0;
        double s = gbps(jobs[i].j, &amp_convert_scalar);
        printf("%-24s %12.2f %9.0f%% %12.2f %9.0f%%\n", jobs[i].name, v, 100.0 * v / mem, s,
               100.0 * s / mem);
    }
    return 0;
}
