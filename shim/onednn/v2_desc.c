/* oneDNN 2.x: convolutions lowered in their descriptors, for the callers
 * of policy/data/onednn_callers.txt (shim/onednn/desc_init.c's hooks ask):
 * the descriptor's inputs made bf16 or fp16 where oneDNN has a native kernel
 * for the shape (asked once per shape and dtype, on a copy), remembered so
 * that the primitive made from it is counted as lowered (v2_classify.c). */
#ifdef AMPSHIM_HAVE_ONEDNN

#include "shim/onednn/v2.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "policy/policy.h"
#include "runtime/log.h"

/* The data descriptors of a convolution descriptor in direction d: the
 * inputs, then the output. */
static void conv_mds(const dnnl_convolution_desc_t *cd, enum dir d, const dnnl_memory_desc_t *md[3])
{
    md[0] = d == BWD_DATA ? &cd->diff_dst_desc : &cd->src_desc;
    md[1] = d == BWD_WEIGHTS ? &cd->diff_dst_desc : &cd->weights_desc;
    md[2] = d == FWD ? &cd->dst_desc : d == BWD_DATA ? &cd->diff_src_desc : &cd->diff_weights_desc;
}

/* What identifies a lowered descriptor: its direction, geometry and the
 * dimensions of its data (not their types or layouts, which lowering and
 * the primitive change). */
static uint64_t desc_key(const dnnl_convolution_desc_t *cd, enum dir d)
{
    struct {
        int64_t dir;
        dnnl_dims_t geometry[4], dims[3];
    } k;
    const dnnl_memory_desc_t *md[3];
    memset(&k, 0, sizeof k);
    conv_mds(cd, d, md);
    k.dir = d;
    memcpy(k.geometry[0], cd->strides, sizeof cd->strides);
    memcpy(k.geometry[1], cd->dilates, sizeof cd->dilates);
    memcpy(k.geometry[2], cd->padding[0], sizeof cd->padding[0]);
    memcpy(k.geometry[3], cd->padding[1], sizeof cd->padding[1]);
    for (int i = 0; i < 3; i++)
        memcpy(k.dims[i], md[i]->dims, sizeof md[i]->dims);
    uint64_t h = amp_dn_hash(&k, sizeof k);
    return h ? h : 1;
}

/* Tables of descriptor keys, inserted once, never removed (a program has
 * few shapes; a full table remembers no more): the descriptors lowered so
 * far, and the probe's verdicts per shape and dtype (below). */
static _Atomic uint64_t lowered_keys[AMP_DNNL_KEYS], kernel_yes[AMP_DNNL_KEYS],
    kernel_no[AMP_DNNL_KEYS], kernel_elsewhere[AMP_DNNL_KEYS];

static int lowered_find(uint64_t key, int insert)
{
    return amp_dnnl_key_find(lowered_keys, key, insert);
}

int amp_dn_desc_was_lowered(const dnnl_convolution_desc_t *cd, enum dir d)
{
    return lowered_find(desc_key(cd, d), 0);
}

int amp_dnnl_desc_row(const void *desc, int dir, void *real_fn, double *madds)
{
    const dnnl_convolution_desc_t *cd = desc;
    const dnnl_memory_desc_t *md[3];
    if (!amp_dn_ready(real_fn) || dir < FWD || dir > BWD_WEIGHTS ||
        cd->primitive_kind != dnnl_convolution)
        return -1;
    conv_mds(cd, (enum dir)dir, md);
    for (int i = 0; i < 3; i++)
        if (md[i]->data_type != dnnl_f32 || (i < 2 && md[i]->format_kind != dnnl_format_kind_any))
            return -1;
    int rank = cd->src_desc.ndims - 2;
    if (rank < 1 || rank > 3)
        return -1;
    const dnnl_memory_desc_t *y = dir == FWD ? &cd->dst_desc : &cd->diff_dst_desc;
    *madds = amp_dn_conv_madds(y, dir == BWD_WEIGHTS ? &cd->diff_weights_desc : &cd->weights_desc);
    return amp_dn_rows[P_CONV][dir][rank - 1];
}

/* The shim's own CPU engine, for the probe (made once; NULL if refused). */
static dnnl_engine_t probe_engine;
static pthread_once_t probe_engine_once = PTHREAD_ONCE_INIT;

static void make_probe_engine(void)
{
    if (amp_dn.dnnl_engine_create(&probe_engine, dnnl_cpu, 0) != dnnl_success)
        probe_engine = NULL;
}

/* Whether a forward convolution's lowered kernel writes its output where
 * the caller's fp32 one would: the two primitive descriptors' dst (the
 * caller left it open). On a CPU with AMX, oneDNN's bf16 kernels write
 * nhwc where its fp32 ones write nChw16c, and torch 1.13 copies such an
 * output into its own layout with a generic strided copy: ResNet-50 at
 * batch 8 took 2.20 s lowered in its descriptors against 1.95 s on twins,
 * whose output a oneDNN reorder puts in the fp32 primitive's layout (a
 * small CNN 0.355 s against 0.209 s, fp32 0.267 s). 1 when they agree
 * (or cannot be compared: lowering in the descriptor stands). */
static int output_where_fp32s(const dnnl_convolution_desc_t *fp32, dnnl_primitive_desc_t low)
{
    dnnl_primitive_desc_t pd = NULL;
    if (fp32->dst_desc.format_kind != dnnl_format_kind_any ||
        amp_dn.dnnl_primitive_desc_create(&pd, fp32, NULL, probe_engine, NULL) != dnnl_success)
        return 1;
    const dnnl_memory_desc_t *a = amp_dn.dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                             *b = amp_dn.dnnl_primitive_desc_query_md(low, dnnl_query_dst_md, 0);
    int same = !a || !b || amp_dn.dnnl_memory_desc_equal(a, b);
    amp_dn.dnnl_primitive_desc_destroy(pd);
    return same;
}

/* Whether oneDNN makes a native kernel for the lowered convolution cd (its
 * inputs already low) in direction d on this CPU: 1, or 0 with why. A
 * backward one is made with its forward twin as the hint, as callers do.
 * A forward one whose kernel writes its output elsewhere than the fp32
 * one's (output_where_fp32s, fp32 the caller's descriptor) answers 2: it
 * runs on a twin instead. */
static int conv_kernel_exists(const dnnl_convolution_desc_t *cd,
                              const dnnl_convolution_desc_t *fp32, enum dir d, int dtype, char *why,
                              size_t whylen)
{
    const dnnl_version_t *v = amp_dn.dnnl_version();
    pthread_once(&probe_engine_once, make_probe_engine);
    if (!probe_engine) {
        snprintf(why, whylen, "oneDNN made no CPU engine to ask");
        return 0;
    }
    dnnl_primitive_desc_t hint = NULL, pd = NULL;
    int yes = 0;
    if (d != FWD) {
        dnnl_convolution_desc_t h = *cd;
        const dnnl_memory_desc_t *src = d == BWD_DATA ? &cd->diff_src_desc : &cd->src_desc,
                                 *w = d == BWD_WEIGHTS ? &cd->diff_weights_desc : &cd->weights_desc;
        memset(&h.src_desc, 0, sizeof h.src_desc);
        memset(&h.diff_src_desc, 0, sizeof h.diff_src_desc);
        memset(&h.weights_desc, 0, sizeof h.weights_desc);
        memset(&h.diff_weights_desc, 0, sizeof h.diff_weights_desc);
        memset(&h.bias_desc, 0, sizeof h.bias_desc);
        memset(&h.diff_bias_desc, 0, sizeof h.diff_bias_desc);
        memset(&h.dst_desc, 0, sizeof h.dst_desc);
        memset(&h.diff_dst_desc, 0, sizeof h.diff_dst_desc);
        h.prop_kind = dnnl_forward_training;
        if (amp_dn_low_md(&h.src_desc, src, dtype) < 0 ||
            amp_dn_low_md(&h.weights_desc, w, dtype) < 0 ||
            amp_dn_low_md(&h.dst_desc, &cd->diff_dst_desc, dtype) < 0 ||
            amp_dn.dnnl_primitive_desc_create(&hint, &h, NULL, probe_engine, NULL) !=
                dnnl_success) {
            snprintf(why, whylen, "oneDNN %d.%d.%d makes no %s forward convolution of its shape",
                     v->major, v->minor, v->patch, amp_dtype_names[dtype]);
            goto out;
        }
    }
    if (amp_dn.dnnl_primitive_desc_create(&pd, cd, NULL, probe_engine, hint) != dnnl_success) {
        snprintf(why, whylen, "oneDNN %d.%d.%d makes no %s convolution of its shape", v->major,
                 v->minor, v->patch, amp_dtype_names[dtype]);
        goto out;
    }
    yes = amp_dn_impl_is_native(pd, why, whylen);
    if (yes && d == FWD && !output_where_fp32s(fp32, pd))
        yes = 2;
out:
    if (pd)
        amp_dn.dnnl_primitive_desc_destroy(pd);
    if (hint)
        amp_dn.dnnl_primitive_desc_destroy(hint);
    return yes;
}

/* The last descriptors this thread lowered, for the fallback at primitive
 * descriptor creation (amp_dnnl_desc_unlowered). */
enum { RECENT = 4 };
static __thread const void *recent_lowered[RECENT];
static __thread unsigned recent_next;
static uint8_t told_no_kernel[AMP_HOOK_COUNT][AMP_DTYPE_COUNT];

int amp_dnnl_desc_lower(void *desc, int dir, int dtype)
{
    dnnl_convolution_desc_t *cd = desc;
    const dnnl_memory_desc_t *md[3];
    conv_mds(cd, (enum dir)dir, md);
    dnnl_memory_desc_t low[3];
    for (int i = 0; i < 2; i++)
        if (amp_dn_low_md(&low[i], md[i], dtype) < 0)
            return -1;
    /* AMPSHIM_OUTPUT=round: the output is stored in the low dtype too (as
     * torch.autocast stores it) where the caller left its layout open; the
     * caller's reorder back to its own fp32 memory widens it. */
    int round_output = amp_live_load(&amp_rt.cfg.output_round) &&
                       md[2]->format_kind == dnnl_format_kind_any &&
                       amp_dn_low_md(&low[2], md[2], dtype) == 0;
    uint64_t key = desc_key(cd, (enum dir)dir);
    /* oneDNN is asked first, on a copy, once per shape, dtype and output rule. */
    uint64_t probe_words[2] = {key, (uint64_t)(dtype * 2 + round_output)};
    uint64_t probe_key = amp_dn_hash(probe_words, sizeof probe_words);
    probe_key = probe_key ? probe_key : 1;
    if (amp_dnnl_key_find(kernel_no, probe_key, 0))
        return AMP_DNNL_NO_KERNEL;
    if (amp_dnnl_key_find(kernel_elsewhere, probe_key, 0))
        return -1; /* a twin runs it (conv_kernel_exists) */
    if (!amp_dnnl_key_find(kernel_yes, probe_key, 0)) {
        dnnl_convolution_desc_t *copy = malloc(sizeof *copy);
        char why[160] = "";
        if (!copy)
            return -1;
        *copy = *cd;
        const dnnl_memory_desc_t *cmd[3];
        conv_mds(copy, (enum dir)dir, cmd);
        for (int i = 0; i < 2 + round_output; i++)
            *(dnnl_memory_desc_t *)cmd[i] = low[i];
        int yes = conv_kernel_exists(copy, cd, (enum dir)dir, dtype, why, sizeof why);
        free(copy);
        amp_dnnl_key_find(yes == 2 ? kernel_elsewhere : yes ? kernel_yes : kernel_no, probe_key, 1);
        if (yes == 2)
            return -1;
        if (!yes) {
            int row = amp_dn_rows[P_CONV][dir][cd->src_desc.ndims - 3];
            if (row >= 0 && !__atomic_exchange_n(&told_no_kernel[row][dtype], 1, __ATOMIC_RELAXED))
                amp_log(AMP_LOG_INFO,
                        "%s in %s: %s on this CPU; such convolutions run as made in fp32, counted "
                        "nounits",
                        amp_hook_names[row], amp_dtype_names[dtype], why);
            return AMP_DNNL_NO_KERNEL;
        }
    }
    if (!lowered_find(key, 1))
        return -1; /* no room to remember it: not lowered, so every execution counts right */
    for (int i = 0; i < 2 + round_output; i++)
        *(dnnl_memory_desc_t *)md[i] = low[i];
    recent_lowered[recent_next++ % RECENT] = desc;
    return 0;
}

size_t amp_dnnl_conv_desc_size(void)
{
    return sizeof(dnnl_convolution_desc_t);
}

int amp_dnnl_desc_unlowered(const void *op_desc, void *fp32, size_t fp32_size)
{
    const dnnl_convolution_desc_t *cd = op_desc;
    int mine = 0;
    for (int i = 0; i < RECENT; i++)
        mine |= op_desc && recent_lowered[i] == op_desc;
    if (!mine || fp32_size < sizeof *cd || !amp_dn_known() ||
        cd->primitive_kind != dnnl_convolution)
        return 0;
    enum dir d = cd->prop_kind == dnnl_backward_data      ? BWD_DATA
                 : cd->prop_kind == dnnl_backward_weights ? BWD_WEIGHTS
                                                          : FWD;
    dnnl_convolution_desc_t *out = fp32;
    *out = *cd;
    const dnnl_memory_desc_t *md[3];
    conv_mds(out, d, md);
    /* The caller made them fp32 in "any" layout (amp_dnnl_desc_row): what
     * lowering changed is the data type alone. */
    for (int i = 0; i < 3; i++)
        if (amp_dn_low_type(md[i]->data_type) && md[i]->format_kind == dnnl_format_kind_any &&
            amp_dn.dnnl_memory_desc_init_by_tag((dnnl_memory_desc_t *)md[i], md[i]->ndims,
                                                md[i]->dims, dnnl_f32,
                                                dnnl_format_tag_any) != dnnl_success)
            return 0;
    return 1;
}

#endif
