/* A C program on oneDNN's own C API (not torch), run under
 * LD_PRELOAD=libampshim.so: its fp32 convolutions (1D, 2D, 3D; strides,
 * padding, dilation, groups, 1x1; with and without bias; with eltwise and
 * sum post-ops), in all three directions, inner products in all three and a
 * matmul, each made with plain layouts and executed through
 * dnnl_primitive_execute. Every result is checked against the same primitive
 * executed by libdnnl directly (through a dlopen handle, which the shim does
 * not intercept):
 *
 *   onednn_check lowered  each call runs its bf16 twin (the primitive's
 *                         native counter moves by one a call) and its result
 *                         is within the bound below of the emulated
 *                         reference: the fp32 primitive run directly on
 *                         inputs rounded to bf16 (RNE); skipped (77) on a
 *                         CPU where oneDNN has no native bf16 kernel
 *   onednn_check audited  under AMPSHIM_AUDIT=1 (or auto on probation): each
 *                         call's twin runs (its native counter moves) and
 *                         the program keeps the result as made, bit for
 *                         bit the direct one; skipped as lowered is
 *   onednn_check same     each call's result equals the direct one bit for
 *                         bit (AMPSHIM_ENABLE=0, a passthrough policy, an
 *                         fp32 region, a CPU or ISA limit without bf16
 *                         kernels: the fallbacks)
 *   --threads N           the cases split among N threads calling at once
 *   --fork                then forks and runs every case again in the child
 *   --lower-deconv        deconvolutions are expected lowered too (they are
 *                         fp32 by autocast's lists; the test sets a policy)
 *
 * The bound, elementwise: a product of two bf16 values is exact in fp32, so
 * the twin and the reference sum the same k exact products in fp32 in
 * different orders; each is within k u S of the exact sum (u = 2^-24, S the
 * sum of |products|, computed here by running the fp32 primitive directly on
 * the absolute values of the rounded inputs), so the two are within 2 k u S;
 * the test allows (2k + 8) u S, plus the sum post-op's term. A result that
 * was not lowered differs from the reference by the rounding of the inputs,
 * about 2^-9 S: far outside. */
#include <dlfcn.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/check.h"

typedef dnnl_status_t (*exec_fn)(const_dnnl_primitive_t, dnnl_stream_t, int,
                                 const dnnl_exec_arg_t *);
static exec_fn direct_execute;
static dnnl_engine_t engine;
static int mode_lowered, mode_audited, lower_deconv,
    counted;                 /* counted: one thread, so counter deltas are its own */
static _Atomic int n_checks; /* failures: tests/check.h's */

#define OK(call)                                                                                   \
    do {                                                                                           \
        dnnl_status_t st_ = (call);                                                                \
        if (st_ != dnnl_success) {                                                                 \
            fprintf(stderr, "onednn_check: %s failed (%d) at line %d\n", #call, (int)st_,          \
                    __LINE__);                                                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum dir { FWD, BWD_DATA, BWD_WEIGHTS };
static const char *const dir_names[] = {"forward", "backward_data", "backward_weights"};

struct ccase {
    const char *name;
    int kind; /* dnnl_convolution, dnnl_deconvolution (fp32 by autocast's lists: lowered
                 only with --lower-deconv), dnnl_inner_product, dnnl_matmul */
    int rank; /* spatial dimensions (convolution) */
    int mb, ic, oc, groups, in_size, k, stride, pad, dilate; /* dilate: oneDNN's (0 = dense) */
    /* may_run_as_made: the directions (1 << dir) where oneDNN may have no
     * native bf16 kernel (2.6.3 has none for a plain-layout convolution with a
     * sum post-op, nor for a plain-layout deconvolution's weight gradient):
     * there it runs as made, bit for bit. */
    int bias, relu, sum, may_run_as_made;
};

static const struct ccase cases[] = {
    {"conv2d 3x3 s1 p1 bias relu", dnnl_convolution, 2, 2, 32, 48, 1, 14, 3, 1, 1, 0, 1, 1, 0, 0},
    {"conv2d 3x3 s2 p1", dnnl_convolution, 2, 2, 16, 32, 1, 15, 3, 2, 1, 0, 0, 0, 0, 0},
    {"conv2d 1x1 bias sum", dnnl_convolution, 2, 4, 64, 32, 1, 8, 1, 1, 0, 0, 1, 0, 1, 1},
    {"conv2d 3x3 dilated 2", dnnl_convolution, 2, 1, 16, 16, 1, 16, 3, 1, 2, 1, 0, 0, 0, 0},
    {"conv2d 3x3 groups 4", dnnl_convolution, 2, 2, 32, 32, 4, 12, 3, 1, 1, 0, 1, 0, 0, 0},
    {"conv1d k5 s1 p2 bias", dnnl_convolution, 1, 4, 32, 64, 1, 64, 5, 1, 2, 0, 1, 0, 0, 0},
    {"conv3d 3x3x3 p1", dnnl_convolution, 3, 1, 16, 16, 1, 8, 3, 1, 1, 0, 1, 0, 0, 0},
    {"deconv2d 3x3 s2 p1 bias", dnnl_deconvolution, 2, 2, 32, 16, 1, 8, 3, 2, 1, 0, 1, 0, 0, 4},
    {"inner product bias", dnnl_inner_product, 0, 32, 256, 128, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0},
    {"matmul", dnnl_matmul, 0, 64, 192, 96, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    /* a sum post-op with a native kernel: the audit keeps what dst held
     * and puts it back between its two runs */
    {"matmul sum", dnnl_matmul, 0, 64, 192, 96, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0},
};
enum { N_CASES = sizeof cases / sizeof *cases };

static float bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u)
        u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

struct tensor {
    dnnl_memory_desc_t md;
    float *data;
    size_t n;
    dnnl_memory_t mem;
};

static void tensor_init(struct tensor *t, int ndims, const dnnl_dim_t *dims, unsigned seed)
{
    static const dnnl_format_tag_t tags[] = {
        dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    OK(dnnl_memory_desc_init_by_tag(&t->md, ndims, dims, dnnl_f32, tags[ndims]));
    t->n = 1;
    for (int i = 0; i < ndims; i++)
        t->n *= (size_t)dims[i];
    t->data = malloc(t->n * sizeof(float));
    for (size_t i = 0; i < t->n; i++) {
        seed = seed * 1103515245u + 12345u;
        t->data[i] = ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f) * 1.7f;
    }
    OK(dnnl_memory_create(&t->mem, &t->md, engine, t->data));
}

static void tensor_free(struct tensor *t)
{
    dnnl_memory_destroy(t->mem);
    free(t->data);
}

/* The descriptors of one case and direction, and its tensors. */
struct problem {
    dnnl_primitive_t prim;
    struct tensor src, w, bias, dst; /* dst, or diff_src / diff_weights as the output */
    int in_args[2], out_arg, bias_arg;
    struct tensor *in[2], *out;
    int k; /* products summed into one output */
};

static void make(const struct ccase *c, enum dir d, struct problem *p, unsigned seed)
{
    memset(p, 0, sizeof *p);
    dnnl_dims_t sdims, wdims, bdims, ddims, strides, dilates, pad;
    int sn, wn, dn;
    int conv_like = c->kind == dnnl_convolution || c->kind == dnnl_deconvolution;
    if (conv_like) {
        int span = (c->k - 1) * (c->dilate + 1) + 1;
        int out_size = c->kind == dnnl_convolution
                           ? (c->in_size + 2 * c->pad - span) / c->stride + 1
                           : (c->in_size - 1) * c->stride - 2 * c->pad + span;
        sn = dn = c->rank + 2;
        sdims[0] = ddims[0] = c->mb;
        sdims[1] = c->ic;
        ddims[1] = c->oc;
        wn = c->rank + 2 + (c->groups > 1);
        int g = c->groups > 1;
        if (g)
            wdims[0] = c->groups;
        wdims[g] = c->oc / c->groups;
        wdims[g + 1] = c->ic / c->groups;
        for (int i = 0; i < c->rank; i++) {
            sdims[2 + i] = c->in_size;
            ddims[2 + i] = out_size;
            wdims[g + 2 + i] = c->k;
            strides[i] = c->stride;
            dilates[i] = c->dilate;
            pad[i] = c->pad;
        }
        p->k = c->ic / c->groups;
        for (int i = 0; i < c->rank; i++)
            p->k *= c->k;
    } else {
        sn = wn = dn = 2;
        sdims[0] = ddims[0] = c->mb;
        sdims[1] = c->ic;
        ddims[1] = c->oc;
        if (c->kind == dnnl_inner_product)
            wdims[0] = c->oc, wdims[1] = c->ic;
        else
            wdims[0] = c->ic, wdims[1] = c->oc;
        p->k = c->ic;
    }
    bdims[0] = c->oc;
    tensor_init(&p->src, sn, sdims, seed + 1);
    tensor_init(&p->w, wn, wdims, seed + 2);
    tensor_init(&p->dst, dn, ddims, seed + 3);
    int bias = c->bias && d != BWD_DATA;
    if (bias)
        tensor_init(&p->bias, 1, bdims, seed + 4);
    dnnl_memory_desc_t *bmd = bias ? &p->bias.md : NULL;

    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t po;
    OK(dnnl_primitive_attr_create(&attr));
    OK(dnnl_post_ops_create(&po));
    if (d == FWD && c->sum)
        OK(dnnl_post_ops_append_sum(po, 0.5f));
    if (d == FWD && c->relu)
        OK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    OK(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_post_ops_destroy(po);

    union {
        dnnl_convolution_desc_t conv;
        dnnl_inner_product_desc_t ip;
        dnnl_matmul_desc_t mm;
    } fwd, desc;
    if (c->kind == dnnl_convolution)
        OK(dnnl_dilated_convolution_forward_desc_init(
            &fwd.conv, dnnl_forward_training, dnnl_convolution_direct, &p->src.md, &p->w.md,
            bias ? bmd : NULL, &p->dst.md, strides, dilates, pad, pad));
    else if (c->kind == dnnl_deconvolution)
        OK(dnnl_dilated_deconvolution_forward_desc_init(
            &fwd.conv, dnnl_forward_training, dnnl_deconvolution_direct, &p->src.md, &p->w.md,
            bias ? bmd : NULL, &p->dst.md, strides, dilates, pad, pad));
    else if (c->kind == dnnl_inner_product)
        OK(dnnl_inner_product_forward_desc_init(&fwd.ip, dnnl_forward_training, &p->src.md,
                                                &p->w.md, bias ? bmd : NULL, &p->dst.md));
    else
        OK(dnnl_matmul_desc_init(&fwd.mm, &p->src.md, &p->w.md, NULL, &p->dst.md));
    dnnl_primitive_desc_t fpd, pd;
    OK(dnnl_primitive_desc_create(&fpd, &fwd, d == FWD ? attr : NULL, engine, NULL));
    if (d == FWD) {
        pd = fpd;
        fpd = NULL;
        p->in[0] = &p->src, p->in[1] = &p->w, p->out = &p->dst;
        p->in_args[0] = DNNL_ARG_SRC, p->in_args[1] = DNNL_ARG_WEIGHTS, p->out_arg = DNNL_ARG_DST;
        p->bias_arg = bias ? DNNL_ARG_BIAS : 0;
    } else if (d == BWD_DATA) {
        if (c->kind == dnnl_convolution)
            OK(dnnl_dilated_convolution_backward_data_desc_init(&desc.conv, dnnl_convolution_direct,
                                                                &p->src.md, &p->w.md, &p->dst.md,
                                                                strides, dilates, pad, pad));
        else if (c->kind == dnnl_deconvolution)
            OK(dnnl_dilated_deconvolution_backward_data_desc_init(
                &desc.conv, dnnl_deconvolution_direct, &p->src.md, &p->w.md, &p->dst.md, strides,
                dilates, pad, pad));
        else
            OK(dnnl_inner_product_backward_data_desc_init(&desc.ip, &p->src.md, &p->w.md,
                                                          &p->dst.md));
        OK(dnnl_primitive_desc_create(&pd, &desc, NULL, engine, fpd));
        p->in[0] = &p->dst, p->in[1] = &p->w, p->out = &p->src;
        p->in_args[0] = DNNL_ARG_DIFF_DST, p->in_args[1] = DNNL_ARG_WEIGHTS;
        p->out_arg = DNNL_ARG_DIFF_SRC;
        p->k = conv_like ? (c->oc / c->groups) * (int)pow(c->k, c->rank) : c->oc;
    } else {
        if (c->kind == dnnl_convolution)
            OK(dnnl_dilated_convolution_backward_weights_desc_init(
                &desc.conv, dnnl_convolution_direct, &p->src.md, &p->w.md, bias ? bmd : NULL,
                &p->dst.md, strides, dilates, pad, pad));
        else if (c->kind == dnnl_deconvolution)
            OK(dnnl_dilated_deconvolution_backward_weights_desc_init(
                &desc.conv, dnnl_deconvolution_direct, &p->src.md, &p->w.md, bias ? bmd : NULL,
                &p->dst.md, strides, dilates, pad, pad));
        else
            OK(dnnl_inner_product_backward_weights_desc_init(&desc.ip, &p->src.md, &p->w.md,
                                                             bias ? bmd : NULL, &p->dst.md));
        OK(dnnl_primitive_desc_create(&pd, &desc, NULL, engine, fpd));
        p->in[0] = &p->src, p->in[1] = &p->dst, p->out = &p->w;
        p->in_args[0] = DNNL_ARG_SRC, p->in_args[1] = DNNL_ARG_DIFF_DST;
        p->out_arg = DNNL_ARG_DIFF_WEIGHTS;
        p->bias_arg = bias ? DNNL_ARG_DIFF_BIAS : 0;
        size_t spatial = p->dst.n / (size_t)c->mb / (size_t)c->oc;
        p->k = (int)((size_t)c->mb * spatial);
    }
    if (fpd)
        dnnl_primitive_desc_destroy(fpd);
    OK(dnnl_primitive_create(&p->prim, pd));
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
}

static void unmake(struct problem *p)
{
    dnnl_primitive_destroy(p->prim);
    tensor_free(&p->src);
    tensor_free(&p->w);
    tensor_free(&p->dst);
    if (p->bias.data)
        tensor_free(&p->bias);
}

/* Runs p through exec with the output first set to `init`. */
static void run(struct problem *p, exec_fn exec, dnnl_stream_t s, const float *init)
{
    memcpy(p->out->data, init, p->out->n * sizeof(float));
    if (p->bias_arg == DNNL_ARG_DIFF_BIAS)
        memset(p->bias.data, 0, p->bias.n * sizeof(float));
    dnnl_exec_arg_t args[4] = {{p->in_args[0], p->in[0]->mem},
                               {p->in_args[1], p->in[1]->mem},
                               {p->out_arg, p->out->mem},
                               {p->bias_arg, p->bias.mem}};
    OK(exec(p->prim, s, p->bias_arg ? 4 : 3, args));
    OK(dnnl_stream_wait(s));
}

static unsigned long long native_count(const char *sym)
{
    char name[128];
    snprintf(name, sizeof name, "stats.%s.native", sym);
    return shim_counter(name);
}

static void check_case(int ci, enum dir d, dnnl_stream_t s)
{
    const struct ccase *c = &cases[ci];
    if (c->kind == dnnl_matmul && d != FWD)
        return;
    struct problem p;
    make(c, d, &p, 1000u * (unsigned)ci + 17u * (unsigned)d);
    size_t n = p.out->n;
    float *init = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float)),
          *ref = malloc(n * sizeof(float)), *mag = malloc(n * sizeof(float));
    memcpy(init, p.out->data, n * sizeof(float));
    float *orig[2];
    for (int i = 0; i < 2; i++) {
        orig[i] = malloc(p.in[i]->n * sizeof(float));
        memcpy(orig[i], p.in[i]->data, p.in[i]->n * sizeof(float));
    }
    char sym[96];
    if (c->kind == dnnl_matmul)
        snprintf(sym, sizeof sym, "dnnl_matmul");
    else if (c->kind == dnnl_inner_product)
        snprintf(sym, sizeof sym, "dnnl_inner_product_%s", dir_names[d]);
    else
        snprintf(sym, sizeof sym, "dnnl_%s_%dd_%s",
                 c->kind == dnnl_convolution ? "convolution" : "deconvolution", c->rank,
                 dir_names[d]);
    /* A deconvolution is fp32 (autocast's lists) unless the test lowers it. */
    int expect_lowered = mode_lowered && (c->kind != dnnl_deconvolution || lower_deconv);
    unsigned long long before = native_count(sym);
    run(&p, (exec_fn)dnnl_primitive_execute, s, init); /* through the shim */
    memcpy(got, p.out->data, n * sizeof(float));
    unsigned long long ran = native_count(sym) - before;
    int bad = 0;
    if (!expect_lowered) {
        /* audited: the twin ran too (its native count), and the program
         * kept the primitive's own result */
        int twin = mode_audited && (c->kind != dnnl_deconvolution || lower_deconv);
        int twin_optional = twin && ((c->may_run_as_made >> d) & 1);
        run(&p, direct_execute, s, init);
        bad = memcmp(got, p.out->data, n * sizeof(float)) != 0 ||
              (counted && !twin_optional && (ran != 0) != twin);
        if (bad)
            fprintf(stderr, "%s %s: not the direct result bit for bit (native %llu)\n", c->name,
                    dir_names[d], ran);
    } else if ((!counted || ran == 0) && ((c->may_run_as_made >> d) & 1) &&
               (run(&p, direct_execute, s, init),
                memcmp(got, p.out->data, n * sizeof(float)) == 0)) {
        bad = 0; /* ran as made, bit for bit */
    } else {
        for (int i = 0; i < 2; i++)
            for (size_t j = 0; j < p.in[i]->n; j++)
                p.in[i]->data[j] = bf16_round(orig[i][j]);
        run(&p, direct_execute, s, init);
        memcpy(ref, p.out->data, n * sizeof(float));
        for (int i = 0; i < 2; i++)
            for (size_t j = 0; j < p.in[i]->n; j++)
                p.in[i]->data[j] = fabsf(p.in[i]->data[j]);
        /* S: the sum of |products| (from a zero output: the sum post-op's
         * term is added to the bound below; relu only shrinks). */
        float *zero = calloc(n, sizeof(float));
        run(&p, direct_execute, s, zero);
        memcpy(mag, p.out->data, n * sizeof(float));
        free(zero);
        double tol = (2.0 * p.k + 8) * ldexp(1.0, -24);
        size_t worst = 0;
        double worst_ratio = 0;
        for (size_t j = 0; j < n; j++) {
            double allowed =
                tol * (fabs(mag[j]) + (c->sum && d == FWD ? 0.5 * fabs(init[j]) : 0)) + 1e-30;
            double ratio = fabs((double)got[j] - ref[j]) / allowed;
            if (ratio > worst_ratio)
                worst_ratio = ratio, worst = j;
        }
        bad = worst_ratio > 1 || (counted && ran != 1);
        if (bad)
            fprintf(stderr,
                    "%s %s: native %llu; worst [%zu] %.9g against %.9g (%.2f of the bound)\n",
                    c->name, dir_names[d], ran, worst, got[worst], ref[worst], worst_ratio);
    }
    atomic_fetch_add(&n_checks, 1);
    if (bad)
        atomic_fetch_add(&failures, 1);
    for (int i = 0; i < 2; i++)
        free(orig[i]);
    free(init), free(got), free(ref), free(mag);
    unmake(&p);
}

struct share {
    int id, of;
};

static void *worker(void *arg)
{
    const struct share *sh = arg;
    dnnl_stream_t s;
    OK(dnnl_stream_create(&s, engine, dnnl_stream_default_flags));
    for (int i = 0; i < N_CASES * 3; i++)
        if (i % sh->of == sh->id)
            check_case(i / 3, (enum dir)(i % 3), s);
    dnnl_stream_destroy(s);
    return NULL;
}

static void run_all(int threads)
{
    pthread_t tid[16];
    struct share sh[16];
    for (int i = 0; i < threads; i++) {
        sh[i] = (struct share){i, threads};
        pthread_create(&tid[i], NULL, worker, &sh[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
}

int main(int argc, char **argv)
{
    int threads = 1, do_fork = 0;
    if (argc < 2 ||
        (strcmp(argv[1], "lowered") && strcmp(argv[1], "same") && strcmp(argv[1], "audited"))) {
        fprintf(stderr, "usage: onednn_check lowered|same|audited [--threads N] [--fork] "
                        "[--lower-deconv]\n");
        return 2;
    }
    mode_lowered = strcmp(argv[1], "lowered") == 0;
    mode_audited = strcmp(argv[1], "audited") == 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--fork") == 0)
            do_fork = 1;
        else if (strcmp(argv[i], "--lower-deconv") == 0)
            lower_deconv = 1;
    }
    if (threads < 1 || threads > 16)
        threads = 1;
    counted = threads == 1;
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD);
    direct_execute = h ? (exec_fn)dlsym(h, "dnnl_primitive_execute") : NULL;
    if (!direct_execute) {
        fprintf(stderr, "onednn_check: libdnnl.so.2 not loaded\n");
        return 1;
    }
    OK(dnnl_engine_create(&engine, dnnl_cpu, 0));
    if (!shim_loaded()) {
        fprintf(stderr, "onednn_check: not under ampshim\n");
        return 1;
    }
    if (mode_lowered || mode_audited) {
        /* Skip where oneDNN has no native bf16 convolution on this CPU. */
        dnnl_memory_desc_t a, b, c;
        dnnl_dims_t d2 = {64, 64};
        dnnl_matmul_desc_t mm;
        dnnl_primitive_desc_t pd;
        const char *impl = "";
        dnnl_memory_desc_init_by_tag(&a, 2, d2, dnnl_bf16, dnnl_ab);
        dnnl_memory_desc_init_by_tag(&b, 2, d2, dnnl_bf16, dnnl_ab);
        dnnl_memory_desc_init_by_tag(&c, 2, d2, dnnl_f32, dnnl_ab);
        if (dnnl_matmul_desc_init(&mm, &a, &b, NULL, &c) != dnnl_success ||
            dnnl_primitive_desc_create(&pd, &mm, NULL, engine, NULL) != dnnl_success) {
            printf("SKIP: oneDNN makes no bf16 matmul here\n");
            return 77;
        }
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
        int native = !strstr(impl, "ref");
        dnnl_primitive_desc_destroy(pd);
        if (!native) {
            printf("SKIP: oneDNN's bf16 kernels here are reference ones (%s)\n", impl);
            return 77;
        }
    }
    /* This program is no listed oneDNN caller: a descriptor it leaves open
     * ("any" layout) stays fp32 (its convolutions get twins). */
    {
        dnnl_memory_desc_t src, w, dst;
        dnnl_dims_t sd = {2, 32, 16, 16}, wd = {32, 32, 3, 3}, one = {1, 1}, none = {0, 0};
        dnnl_convolution_desc_t cd;
        OK(dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_format_tag_any));
        OK(dnnl_memory_desc_init_by_tag(&w, 4, wd, dnnl_f32, dnnl_format_tag_any));
        OK(dnnl_memory_desc_init_by_tag(&dst, 4, sd, dnnl_f32, dnnl_format_tag_any));
        OK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                      dnnl_convolution_direct, &src, &w, NULL, &dst,
                                                      one, none, one, one));
        if (cd.src_desc.data_type != dnnl_f32 || cd.weights_desc.data_type != dnnl_f32) {
            fprintf(stderr, "onednn_check: its own descriptor was changed (not a listed caller)\n");
            atomic_fetch_add(&failures, 1);
        }
        atomic_fetch_add(&n_checks, 1);
    }
    run_all(threads);
    if (do_fork) {
        pid_t pid = fork();
        if (pid == 0) {
            atomic_store(&failures, 0);
            run_all(threads);
            _exit(atomic_load(&failures) ? 1 : 0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "onednn_check: the forked child failed\n");
            atomic_fetch_add(&failures, 1);
        }
    }
    checks = atomic_load(&n_checks);
    printf("onednn_check %s: %d checks, %d failures\n", argv[1], checks, atomic_load(&failures));
    return atomic_load(&failures) ? 1 : 0;
}
