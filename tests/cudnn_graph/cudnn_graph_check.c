/* A program of cuDNN's backend API (compiled against the real cudnn.h,
 * linked to libcudnn.so.9: here the test-only fake) run under the shim. It
 * builds fp32 convolution plans the way PyTorch's cuDNN v8 convolutions do
 * (tests/cudnn_graph/cudnn_graph_build.h), asks each plan's workspace, allocates it and
 * executes; then checks each result bit for bit against the convolution
 * computed here in the precision expected, which engine the fake ran, the
 * workspace it was told, the counters, and that every descriptor the shim
 * made is given back when the program destroys its own.
 * usage: cudnn_graph_check MODE [ENGINE]
 *   lowered ENGINE  each convolution ran down-converted (fp16 operands) on
 *                   engine ENGINE, its workspace answered, counted lowered;
 *   asis            each ran the program's plan (TF32), its own workspace;
 *                   counted as the policy would have it, never lowered;
 *   fallback        the private plan was there but failed: the program's
 *                   plan ran, counted passthrough;
 *   fused           a forward fused with a ReLU ran as made (TF32);
 *   fused-lowered ENGINE  ... ran down-converted on engine ENGINE;
 *   threads         four threads at once, each as `lowered 3`;
 *   reuse           the address-reuse sequence (gb_reuse): prints whether
 *                   graph B took graph A's address and the workspace A's
 *                   plan answers (tests/cudnn_graph/cudnn_graph_reuse.sh compares it
 *                   with the answer without the shim). */
#include <cudnn.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cudnn_graph/cudnn_graph_build.h"
#include "tests/shim_stats.h"

#define MUST(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

struct fake_cudnn_graph_record {
    void *plan;
    int64_t engine;
    int down_convert;
    long executes;
};
const struct fake_cudnn_graph_record *fake_cudnn_graph_last(void);
long fake_cudnn_graph_live(void);
float fake_to_type(cudnnDataType_t type, float x);
int fake_tf32_allowed(void);


/* x [2,8,9,7], w [16,8,3,3], pad 1, stride 1: y [2,16,9,7]; NCHW. The size
 * rule is off in the meson tests but its own (AMPSHIM_LOWER_MIN=0). */
static const struct gshape shape = {2, 8, 9, 7, 16, 3, 3, 1, 1, 0, 0, 0};
enum { XN = 2 * 8 * 9 * 7, WN = 16 * 8 * 3 * 3, YN = 2 * 16 * 9 * 7 };

/* Values fp16 and TF32 round alike (both keep 10 mantissa bits), and every
 * fifth one tiny, where fp16 has fewer (subnormal): the two results differ. */
static void fill(float *p, int n, int seed)
{
    for (int i = 0; i < n; i++)
        p[i] = ((float)(((i + seed) * 7919) % 1013) / 317.0f - 1.6f) * (i % 5 ? 1.0f : 3e-6f);
}

static float tf32(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
    memcpy(&v, &u, 4);
    return v;
}

/* The operand as the engine expected reads it. */
static float as_run(float v, int down)
{
    if (down)
        return fake_to_type(CUDNN_DATA_HALF, v);
    return fake_tf32_allowed() ? tf32(v) : v;
}

/* The convolution of direction dir on the host, in the fake's loop order
 * (so its double sums are the same): in x, w, y; out the direction's
 * output; relu after a forward when fused. */
static void host_conv(int dir, int down, int fused, const float *x, const float *w, const float *y,
                      float *out)
{
    const struct gshape *s = &shape;
    long P = gshape_out(s, s->h, s->r), Q = gshape_out(s, s->w, s->s);
    long n_out = dir == 0 ? YN : dir == 1 ? XN : WN;
    double *acc = calloc((size_t)n_out, sizeof *acc);
    for (long b = 0; b < s->n; b++)
        for (long k = 0; k < s->k; k++)
            for (long i = 0; i < P; i++)
                for (long j = 0; j < Q; j++)
                    for (long c = 0; c < s->c; c++)
                        for (long r = 0; r < s->r; r++)
                            for (long q = 0; q < s->s; q++) {
                                long h = i - s->pad + r, wc = j - s->pad + q;
                                if (h < 0 || h >= s->h || wc < 0 || wc >= s->w)
                                    continue;
                                long ox = ((b * s->c + c) * s->h + h) * s->w + wc,
                                     ow = ((k * s->c + c) * s->r + r) * s->s + q,
                                     oy = ((b * s->k + k) * P + i) * Q + j;
                                if (dir == 0)
                                    acc[oy] += (double)as_run(x[ox], down) * as_run(w[ow], down);
                                else if (dir == 1)
                                    acc[ox] += (double)as_run(y[oy], down) * as_run(w[ow], down);
                                else
                                    acc[ow] += (double)as_run(x[ox], down) * as_run(y[oy], down);
                            }
    for (long i = 0; i < n_out; i++) {
        float v = (float)acc[i];
        out[i] = fused && v < 0 ? 0 : v;
    }
    free(acc);
}

static const char *const rows[3] = {"cudnn_graph_convolution_2d_forward",
                                    "cudnn_graph_convolution_2d_backward_data",
                                    "cudnn_graph_convolution_2d_backward_filter"};

/* One plan of direction dir built, executed and checked; the number of
 * failures. */
static int run_one(cudnnHandle_t h, int dir, int fused, const char *mode, int64_t want_engine,
                   int quiet)
{
    int failures = 0, lowered = strcmp(mode, "lowered") == 0,
        answered = lowered || strcmp(mode, "fallback") == 0;
    static float x[XN], w[WN], y[YN];
    float *in_x = malloc(sizeof x), *in_w = malloc(sizeof w), *in_y = malloc(sizeof y),
          *out = malloc(sizeof y > sizeof x ? sizeof y : sizeof x),
          *want = malloc(sizeof y > sizeof x ? sizeof y : sizeof x);
    fill(in_x, XN, 1);
    fill(in_w, WN, 2);
    fill(in_y, YN, 3);
    struct gb_graph g;
    gdesc cfg = NULL, plan = NULL, pack = NULL;
    if (!gb_graph(&g, dir, &shape, CUDNN_DATA_FLOAT, fused, h) ||
        !(plan = gb_plan(&g, h, NULL, &cfg))) {
        printf("FAIL %s: no plan\n", rows[dir]);
        return 1;
    }
    int64_t ws = gb_workspace(plan), copies = 2 * (dir == 0   ? XN + WN
                                                   : dir == 1 ? YN + WN
                                                              : XN + YN);
    void *workspace = malloc(ws > 0 ? (size_t)ws : 1);
    /* the variant pack: x, w, y by uid (the fused output too) */
    int64_t uids[4] = {GB_X, GB_W, GB_Y, GB_OUT};
    void *ptrs[4] = {in_x, in_w, in_y, out};
    if (dir == 0)
        ptrs[2] = out;
    else if (dir == 1)
        ptrs[0] = out;
    else
        ptrs[1] = out;
    int n = fused ? 4 : 3;
    if (fused) {
        uids[2] = GB_OUT;
        ptrs[2] = out;
        n = 3;
    }
    memset(out, 0, sizeof y > sizeof x ? sizeof y : sizeof x);
    MUST(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack) == 0);
    MUST(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
                                  uids) == 0);
    MUST(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                  n, ptrs) == 0);
    MUST(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                  &workspace) == 0);
    MUST(cudnnBackendFinalize(pack) == 0);
    int status = cudnnBackendExecute(h, plan, pack);
    const struct fake_cudnn_graph_record *r = fake_cudnn_graph_last();
    host_conv(dir, lowered, fused, in_x, in_w, in_y, want);
    long n_out = dir == 0 ? YN : dir == 1 ? XN : WN, diff = 0;
    for (long i = 0; i < n_out; i++)
        diff += memcmp(&out[i], &want[i], sizeof *out) != 0;
    int engine_ok = lowered ? r->engine == want_engine && r->down_convert : r->engine == 1;
    int ws_ok = answered ? ws >= copies : ws == 64;
    if (status != 0 || diff || !engine_ok || !ws_ok || r->plan == NULL) {
        printf("FAIL %s%s: status %d, %ld of %ld elements differ, engine %lld (down-converting "
               "%d), workspace %lld\n",
               rows[dir], fused ? " + relu" : "", status, diff, n_out, (long long)r->engine,
               r->down_convert, (long long)ws);
        failures++;
    } else if (!quiet) {
        printf("ok %s%s: engine %lld%s, workspace %lld bytes, result as expected\n", rows[dir],
               fused ? " + relu" : "", (long long)r->engine,
               r->down_convert ? " (down-converting)" : "", (long long)ws);
    }
    cudnnBackendDestroyDescriptor(pack);
    cudnnBackendDestroyDescriptor(plan);
    cudnnBackendDestroyDescriptor(cfg);
    gb_graph_destroy(&g);
    free(workspace);
    free(in_x);
    free(in_w);
    free(in_y);
    free(out);
    free(want);
    return failures;
}

static void *thread_main(void *arg)
{
    cudnnHandle_t h = arg;
    long failures = 0;
    for (int i = 0; i < 12; i++)
        failures += run_one(h, i % 3, 0, "lowered", 3, 1);
    return (void *)failures;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cudnn_graph_check lowered ENGINE|asis|fallback|fused|fused-lowered "
                        "ENGINE|threads|reuse\n");
        return 2;
    }
    const char *mode = argv[1];
    int64_t engine = argc > 2 ? atoll(argv[2]) : 3;
    cudnnHandle_t h;
    int failures = 0;
    MUST(cudnnCreate(&h) == 0);
    cudnnSetStream(h, (cudaStream_t)(uintptr_t)0x5eed); /* a stream of the program's */
    if (strcmp(mode, "threads") == 0) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, thread_main, h);
        for (int i = 0; i < 4; i++) {
            void *f;
            pthread_join(t[i], &f);
            failures += (int)(long)f;
        }
        uint64_t lowered = 0;
        for (int d = 0; d < 3; d++)
            lowered += shim_stat(rows[d], "lowered");
        printf("%s threads: %d failures, %llu executes counted lowered (of 48)\n",
               failures || lowered != 48 ? "FAIL" : "ok", failures, (unsigned long long)lowered);
        failures += lowered != 48;
    } else if (strcmp(mode, "reuse") == 0) {
        const struct gshape sb = {1, 4, 5, 5, 8, 3, 3, 1, 1, 0, 0, 0};
        struct gb_graph a, b;
        gdesc cfg = NULL;
        int reused = 0;
        gdesc plan = gb_reuse(&a, &b, &shape, &sb, h, NULL, &cfg, &reused);
        printf("reuse: graph B %s graph A's address; A's plan %s, workspace %lld\n",
               reused ? "took" : "did not take", plan ? "finalized" : "not finalized",
               (long long)(plan ? gb_workspace(plan) : -1));
        failures += !plan;
        if (plan) {
            cudnnBackendDestroyDescriptor(plan);
            cudnnBackendDestroyDescriptor(cfg);
        }
        gb_graph_destroy(&b);
        gb_graph_destroy(&a);
    } else if (strcmp(mode, "fused") == 0) {
        failures += run_one(h, 0, 1, "asis", 1, 0);
    } else if (strcmp(mode, "fused-lowered") == 0) {
        failures += run_one(h, 0, 1, "lowered", engine, 0);
    } else {
        for (int d = 0; d < 3; d++)
            failures += run_one(h, d, 0, mode, engine, 0);
        /* the counters, where the shim is there to count */
        for (int d = 0; d < 3; d++) {
            uint64_t low = shim_stat(rows[d], "lowered"), pass = shim_stat(rows[d], "passthrough");
            if (low == UINT64_MAX)
                continue;
            int ok = strcmp(mode, "lowered") == 0    ? low == 1
                     : strcmp(mode, "fallback") == 0 ? low == 0 && pass == 1
                                                     : low == 0;
            if (!ok) {
                printf("FAIL %s counted lowered %llu, passthrough %llu\n", rows[d],
                       (unsigned long long)low, (unsigned long long)pass);
                failures++;
            }
        }
    }
    cudnnDestroy(h);
    long live = fake_cudnn_graph_live();
    if (live != 0) {
        printf("FAIL %ld backend descriptors not given back\n", live);
        failures++;
    }
    return failures != 0;
}
