/* Groundwork for a native low-precision CPU path (issue 11): what oneDNN's
 * bf16 matmul (fp32 accumulation and output) gives on this CPU against
 * OpenBLAS's fp32 sgemm, side by side in one run, with the bf16 conversion
 * of both operands included in its time. oneDNN is found at run time
 * (dlopen of libdnnl.so.2, Debian's libdnnl2); its header only supplies the
 * types. Prints the CPU flags, the oneDNN version and the implementation
 * oneDNN picked for each size. Skips (77) without libdnnl.so.2.
 * usage: onednn_matmul_bench */
#include <dlfcn.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "bench_util.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

#define DNNL_FUNCTIONS(X)                                                                          \
    X(dnnl_engine_create) X(dnnl_stream_create) X(dnnl_stream_wait) X(dnnl_memory_desc_init_by_tag) \
    X(dnnl_matmul_desc_init) X(dnnl_primitive_desc_create) X(dnnl_primitive_desc_query)           \
    X(dnnl_primitive_create) X(dnnl_memory_create) X(dnnl_primitive_execute)                      \
    X(dnnl_primitive_destroy) X(dnnl_primitive_desc_destroy) X(dnnl_memory_destroy) X(dnnl_version)
#define DECLARE(f) static __typeof__(f) *p_##f;
DNNL_FUNCTIONS(DECLARE)

static uint16_t to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

int main(void)
{
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("libdnnl.so.2 not found: skipped\n");
        return 77;
    }
#define RESOLVE(f)                                                                                 \
    if (!(p_##f = (__typeof__(f) *)dlsym(h, #f))) {                                                \
        printf("libdnnl.so.2 has no %s: skipped\n", #f);                                           \
        return 77;                                                                                 \
    }
    DNNL_FUNCTIONS(RESOLVE)
    print_cpu();
    const dnnl_version_t *v = p_dnnl_version();
    printf("oneDNN %d.%d.%d; one thread each (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 recommended)\n",
           v->major, v->minor, v->patch);
    dnnl_engine_t eng;
    dnnl_stream_t st;
    if (p_dnnl_engine_create(&eng, dnnl_cpu, 0) || p_dnnl_stream_create(&st, eng, dnnl_stream_default_flags))
        return 1;
    printf("%6s %12s %14s %8s %10s  %s\n", "n", "sgemm ms", "bf16 ms (+cvt)", "ratio", "max|diff|",
           "oneDNN implementation");
    printf("(max|diff|: largest |bf16 result - fp32 result| over the largest |fp32 result|)\n");
    static const int sizes[] = {64, 128, 256, 512, 1024, 2048};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int n = sizes[si];
        size_t nn = (size_t)n * n;
        float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4), *d = malloc(nn * 4);
        uint16_t *a16 = malloc(nn * 2), *b16 = malloc(nn * 2);
        for (size_t i = 0; i < nn; i++) {
            a[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
            b[i] = (float)((i * 40503u) % 1000) / 500.0f - 1.0f;
        }
        dnnl_memory_desc_t ad, bd, cd;
        dnnl_dims_t dims = {n, n};
        p_dnnl_memory_desc_init_by_tag(&ad, 2, dims, dnnl_bf16, dnnl_ab);
        p_dnnl_memory_desc_init_by_tag(&bd, 2, dims, dnnl_bf16, dnnl_ab);
        p_dnnl_memory_desc_init_by_tag(&cd, 2, dims, dnnl_f32, dnnl_ab);
        dnnl_matmul_desc_t md;
        dnnl_primitive_desc_t pd;
        dnnl_primitive_t prim;
        const char *impl = "?";
        if (p_dnnl_matmul_desc_init(&md, &ad, &bd, NULL, &cd) ||
            p_dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL) ||
            p_dnnl_primitive_create(&prim, pd)) {
            printf("%6d  oneDNN has no bf16 matmul here\n", n);
            free(a), free(b), free(c), free(d), free(a16), free(b16);
            continue;
        }
        p_dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
        dnnl_memory_t am, bm, cm;
        p_dnnl_memory_create(&am, &ad, eng, a16);
        p_dnnl_memory_create(&bm, &bd, eng, b16);
        p_dnnl_memory_create(&cm, &cd, eng, d);
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
        int reps = n <= 256 ? 50 : n <= 1024 ? 7 : 3;
        double ts[50], tn[50];
        for (int r = 0; r < reps + 1; r++) {
            double t0 = now();
            cblas_sgemm(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            double t1 = now();
            for (size_t i = 0; i < nn; i++) {
                a16[i] = to_bf16(a[i]);
                b16[i] = to_bf16(b[i]);
            }
            p_dnnl_primitive_execute(prim, st, 3, args);
            p_dnnl_stream_wait(st);
            double t2 = now();
            if (r > 0) { /* the first round warms up both */
                ts[r - 1] = t1 - t0;
                tn[r - 1] = t2 - t1;
            }
        }
        double s = median(ts, reps), bf = median(tn, reps), diff = 0, big = 0;
        for (size_t i = 0; i < nn; i++) {
            double e = d[i] - c[i];
            diff = e * e > diff * diff ? (e < 0 ? -e : e) : diff;
            big = c[i] * c[i] > big * big ? (c[i] < 0 ? -c[i] : c[i]) : big;
        }
        printf("%6d %12.3f %14.3f %8.3f %10.2e  %s\n", n, 1e3 * s, 1e3 * bf, bf / s,
               big > 0 ? diff / big : 0.0, impl);
        p_dnnl_memory_destroy(am);
        p_dnnl_memory_destroy(bm);
        p_dnnl_memory_destroy(cm);
        p_dnnl_primitive_destroy(prim);
        p_dnnl_primitive_desc_destroy(pd);
        free(a), free(b), free(c), free(d), free(a16), free(b16);
    }
    return 0;
}
