/* oneDNN 2.x: a twin made from the program's primitive descriptor (the
 * design is twin.h's): its key, its op descriptor with low inputs, the
 * reorders that convert them, its scratch. */
#ifdef AMPSHIM_HAVE_ONEDNN

#include "shim/onednn/v2_twin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "policy/policy.h"
#include "runtime/log.h"

static int digest_attr(const_dnnl_primitive_attr_t attr, struct digest *g)
{
    const_dnnl_post_ops_t po;
    dnnl_fpmath_mode_t fpmath;
    const float *scales;
    dnnl_dim_t count;
    int mask;
    if (amp_dn.dnnl_primitive_attr_get_fpmath_mode(attr, &fpmath) != dnnl_success ||
        amp_dn.dnnl_primitive_attr_get_output_scales(attr, &count, &mask, &scales) !=
            dnnl_success ||
        amp_dn.dnnl_primitive_attr_get_post_ops(attr, &po) != dnnl_success)
        return -1;
    g->fpmath = (int32_t)fpmath;
    g->scale_count = (int32_t)count;
    g->scale_mask = mask;
    g->scale_hash = scales && count > 0 ? amp_dn_hash(scales, (size_t)count * sizeof *scales) : 0;
    g->n_post = amp_dn.dnnl_post_ops_len(po);
    if (g->n_post > MAX_POST_OPS)
        return -1;
    for (int i = 0; i < g->n_post; i++) {
        dnnl_primitive_kind_t k = amp_dn.dnnl_post_ops_get_kind(po, i);
        dnnl_alg_kind_t alg = dnnl_alg_kind_undef;
        dnnl_data_type_t dt;
        const dnnl_memory_desc_t *md;
        g->kinds[i] = (int32_t)k;
        if (k == dnnl_sum) {
            if (amp_dn.dnnl_post_ops_get_params_sum_v2(po, i, &g->params[i][0], &dt) !=
                dnnl_success)
                return -1;
            g->params[i][1] = (float)dt;
        } else if (k == dnnl_eltwise) {
            if (amp_dn.dnnl_post_ops_get_params_eltwise(po, i, &g->params[i][0], &alg,
                                                        &g->params[i][1],
                                                        &g->params[i][2]) != dnnl_success)
                return -1;
        } else if (k == dnnl_binary) {
            if (amp_dn.dnnl_post_ops_get_params_binary(po, i, &alg, &md) != dnnl_success)
                return -1;
            g->md_hash[i] = amp_dn_hash(md, sizeof *md);
        } else {
            return -1;
        }
        g->algs[i] = (int32_t)alg;
    }
    return 0;
}

/* Whether a digest's post-ops read the output before writing it (sum). */
static int digest_has_sum(const struct digest *g)
{
    for (int i = 0; i < g->n_post; i++)
        if (g->kinds[i] == dnnl_sum)
            return 1;
    return 0;
}

int amp_dn_reads_outputs(const_dnnl_primitive_desc_t pd)
{
    const_dnnl_primitive_attr_t attr;
    struct digest g;
    return amp_dn.dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success ||
           digest_attr(attr, &g) < 0 || digest_has_sum(&g);
}

/* Where each argument's memory descriptor lives in an op descriptor. */
static dnnl_memory_desc_t *desc_md(union op_desc *o, enum pkind k, int arg)
{
    if (k == P_MATMUL)
        switch (arg) {
        case DNNL_ARG_SRC:
            return &o->mm.src_desc;
        case DNNL_ARG_WEIGHTS:
            return &o->mm.weights_desc;
        case DNNL_ARG_BIAS:
            return &o->mm.bias_desc;
        case DNNL_ARG_DST:
            return &o->mm.dst_desc;
        default:
            return NULL;
        }
#define AMP_MD_OF(d)                                                                               \
    switch (arg) {                                                                                 \
    case DNNL_ARG_SRC:                                                                             \
        return &(d).src_desc;                                                                      \
    case DNNL_ARG_DIFF_SRC:                                                                        \
        return &(d).diff_src_desc;                                                                 \
    case DNNL_ARG_WEIGHTS:                                                                         \
        return &(d).weights_desc;                                                                  \
    case DNNL_ARG_DIFF_WEIGHTS:                                                                    \
        return &(d).diff_weights_desc;                                                             \
    case DNNL_ARG_BIAS:                                                                            \
        return &(d).bias_desc;                                                                     \
    case DNNL_ARG_DIFF_BIAS:                                                                       \
        return &(d).diff_bias_desc;                                                                \
    case DNNL_ARG_DST:                                                                             \
        return &(d).dst_desc;                                                                      \
    case DNNL_ARG_DIFF_DST:                                                                        \
        return &(d).diff_dst_desc;                                                                 \
    default:                                                                                       \
        return NULL;                                                                               \
    }
    if (k == P_IP)
        AMP_MD_OF(o->ip)
    AMP_MD_OF(o->conv)
#undef AMP_MD_OF
}

static size_t desc_size(enum pkind k)
{
    return k == P_MATMUL ? sizeof(dnnl_matmul_desc_t)
           : k == P_IP   ? sizeof(dnnl_inner_product_desc_t)
                         : sizeof(dnnl_convolution_desc_t);
}

int amp_dn_twin_key(const struct amp_dnnl_call *c, int dtype, struct key *key, enum pkind *k,
                    enum dir *d, const union op_desc **op)
{
    memset(key, 0, sizeof *key);
    const_dnnl_primitive_attr_t attr;
    if (amp_dn_kind_of(c->pd, k, d) < 0 || *k == P_RNN ||
        amp_dn.dnnl_primitive_desc_query(c->pd, dnnl_query_engine, 0, &key->engine) !=
            dnnl_success ||
        amp_dn.dnnl_primitive_desc_query(c->pd, dnnl_query_op_d, 0, (void *)op) != dnnl_success ||
        !*op || amp_dn.dnnl_primitive_desc_get_attr(c->pd, &attr) != dnnl_success ||
        digest_attr(attr, &key->attr) < 0)
        return -1;
    key->dtype = dtype;
    key->kind = *k;
    key->dir = *d;
    dnnl_prop_kind_t prop = dnnl_prop_kind_undef;
    if (*k != P_MATMUL)
        amp_dn.dnnl_primitive_desc_query(c->pd, dnnl_query_prop_kind, 0, &prop);
    key->prop = (int32_t)prop;
    if (*k == P_CONV || *k == P_DECONV) {
        const dnnl_convolution_desc_t *cd = &(*op)->conv;
        memcpy(key->geometry[0], cd->strides, sizeof cd->strides);
        memcpy(key->geometry[1], cd->dilates, sizeof cd->dilates);
        memcpy(key->geometry[2], cd->padding[0], sizeof cd->padding[0]);
        memcpy(key->geometry[3], cd->padding[1], sizeof cd->padding[1]);
        key->alg = (int32_t)cd->alg_kind;
    }
    const struct amp_dn_roles *r = &amp_dn_roles[*d];
    int args[4] = {r->in[0], r->in[1], r->bias ? r->bias : r->out[1], r->out[0]};
    for (int i = 0; i < 4; i++) {
        const dnnl_memory_desc_t *md = args[i] ? amp_dn_arg_md(c->pd, args[i]) : NULL;
        if (md)
            key->md[i] = *md;
    }
    return 0;
}

/* A size rounded up to whole pages: each part of a twin's scratch starts on
 * its own page. */
static size_t page_up(size_t bytes)
{
    return (bytes + 4095) & ~(size_t)4095;
}

static dnnl_primitive_t reorder_of(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                                   dnnl_engine_t engine)
{
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t p = NULL;
    if (amp_dn.dnnl_reorder_primitive_desc_create(&rpd, from, engine, to, engine, NULL) !=
        dnnl_success)
        return NULL;
    if (amp_dn.dnnl_primitive_create(&p, rpd) != dnnl_success)
        p = NULL;
    amp_dn.dnnl_primitive_desc_destroy(rpd);
    return p;
}

/* A forward twin's output in a layout of oneDNN's choosing. Forced to write
 * the program's layout, oneDNN takes the first kernel that can: on a CPU
 * with AMX, ResNet-50's convolutions into torch's fp32 nChw16c got
 * avx512_core_bf16 kernels, slower than fp32's (a 3x3 convolution 17.8 ms
 * against 12.8 ms fp32 and 2.4 ms for AMX's, which write nhwc). Where the
 * kernel oneDNN picks with the output's layout left open is another one
 * and writes another layout, the twin takes it, and a reorder (a copy of
 * the fp32 output) puts its output into the program's; *tpd becomes that
 * primitive descriptor. 0, or -1 when a reorder cannot be made. */
static int own_output(struct twin *tw, union op_desc *desc, enum pkind k,
                      const_dnnl_primitive_attr_t attr, dnnl_engine_t engine,
                      dnnl_primitive_desc_t *tpd)
{
    dnnl_memory_desc_t *dst = desc_md(desc, k, DNNL_ARG_DST), forced = *dst;
    dnnl_primitive_desc_t open = NULL;
    const char *impl = NULL, *open_impl = NULL;
    char why[96];
    if (amp_dn.dnnl_memory_desc_init_by_tag(dst, forced.ndims, forced.dims, forced.data_type,
                                            dnnl_format_tag_any) != dnnl_success ||
        amp_dn.dnnl_primitive_desc_create(&open, desc, attr, engine, NULL) != dnnl_success) {
        *dst = forced;
        return 0;
    }
    *dst = forced;
    const dnnl_memory_desc_t *its = amp_dn.dnnl_primitive_desc_query_md(open, dnnl_query_dst_md, 0);
    amp_dn.dnnl_primitive_desc_query(*tpd, dnnl_query_impl_info_str, 0, &impl);
    amp_dn.dnnl_primitive_desc_query(open, dnnl_query_impl_info_str, 0, &open_impl);
    if (!its || amp_dn.dnnl_memory_desc_equal(its, &forced) || !impl || !open_impl ||
        strcmp(impl, open_impl) == 0 || !amp_dn_impl_is_native(open, why, sizeof why)) {
        amp_dn.dnnl_primitive_desc_destroy(open);
        return 0;
    }
    int sum = digest_has_sum(&tw->key.attr);
    tw->out_md = *its;
    tw->out = reorder_of(&tw->out_md, &forced, engine);
    tw->back = sum ? reorder_of(&forced, &tw->out_md, engine) : NULL;
    if (!tw->out || (sum && !tw->back)) {
        amp_dn.dnnl_primitive_desc_destroy(open);
        return -1;
    }
    amp_dn.dnnl_primitive_desc_destroy(*tpd);
    *tpd = open;
    return 0;
}

int amp_dn_twin_build(struct twin *tw, const_dnnl_primitive_desc_t pd, enum pkind k, enum dir d,
                      const union op_desc *op, char *why, size_t whylen)
{
    const struct amp_dn_roles *r = &amp_dn_roles[d];
    dnnl_engine_t engine = tw->key.engine;
    union op_desc desc, hint_desc;
    dnnl_primitive_desc_t hint = NULL, tpd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    const_dnnl_primitive_attr_t pattr;
    int ok = -1;
    memset(&desc, 0, sizeof desc);
    memcpy(&desc, op, desc_size(k));
    /* Inputs in the low dtype, any layout; outputs and bias as the program's. */
    for (int i = 0; i < 2; i++)
        if (amp_dn_low_md(desc_md(&desc, k, r->in[i]), amp_dn_arg_md(pd, r->in[i]), tw->key.dtype) <
            0)
            goto out;
    int keep[3] = {r->out[0], r->out[1], r->bias};
    for (int i = 0; i < 3; i++) {
        const dnnl_memory_desc_t *md = keep[i] ? amp_dn_arg_md(pd, keep[i]) : NULL;
        if (md)
            *desc_md(&desc, k, keep[i]) = *md;
    }
    if (amp_dn.dnnl_primitive_desc_get_attr(pd, &pattr) != dnnl_success ||
        amp_dn.dnnl_primitive_attr_clone(&attr, pattr) != dnnl_success ||
        amp_dn.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) !=
            dnnl_success)
        goto out;
    if (d != FWD) {
        /* A backward primitive is made with the forward one it follows as
         * its hint: the same geometry, forward_training, low inputs. */
        hint_desc = desc;
        dnnl_memory_desc_t *hs = desc_md(&hint_desc, k, DNNL_ARG_SRC),
                           *hw = desc_md(&hint_desc, k, DNNL_ARG_WEIGHTS),
                           *hd = desc_md(&hint_desc, k, DNNL_ARG_DST);
        const dnnl_memory_desc_t *src = amp_dn_arg_md(pd, d == BWD_DATA ? DNNL_ARG_DIFF_SRC
                                                                        : DNNL_ARG_SRC),
                                 *w = amp_dn_arg_md(pd, d == BWD_DATA ? DNNL_ARG_WEIGHTS
                                                                      : DNNL_ARG_DIFF_WEIGHTS),
                                 *dst = amp_dn_arg_md(pd, DNNL_ARG_DIFF_DST);
        if (!src || !w || !dst || amp_dn_low_md(hs, src, tw->key.dtype) < 0 ||
            amp_dn_low_md(hw, w, tw->key.dtype) < 0 || amp_dn_low_md(hd, dst, tw->key.dtype) < 0)
            goto out;
        memset(desc_md(&hint_desc, k, DNNL_ARG_BIAS), 0, sizeof(dnnl_memory_desc_t));
        int diffs[4] = {DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS,
                        DNNL_ARG_DIFF_DST};
        for (int i = 0; i < 4; i++)
            memset(desc_md(&hint_desc, k, diffs[i]), 0, sizeof(dnnl_memory_desc_t));
        if (k == P_IP)
            hint_desc.ip.prop_kind = dnnl_forward_training;
        else
            hint_desc.conv.prop_kind = dnnl_forward_training;
        if (amp_dn.dnnl_primitive_desc_create(&hint, &hint_desc, NULL, engine, NULL) !=
            dnnl_success) {
            snprintf(why, whylen, "oneDNN makes no such forward primitive on this CPU");
            ok = AMP_DNNL_NO_KERNEL;
            goto out;
        }
    }
    if (amp_dn.dnnl_primitive_desc_create(&tpd, &desc, attr, engine, hint) != dnnl_success) {
        snprintf(why, whylen, "oneDNN makes no such primitive on this CPU");
        ok = AMP_DNNL_NO_KERNEL;
        goto out;
    }
    if (!amp_dn_impl_is_native(tpd, why, whylen) && d == FWD) {
        /* A channels-last output (torch's channels_last) has native kernels
         * only with its input in the same plain layout: the first input in
         * the program's own layout, in the low dtype (strides count
         * elements, so only the type changes). */
        const dnnl_memory_desc_t *own = amp_dn_arg_md(pd, r->in[0]);
        if (own && own->format_kind == dnnl_blocked && own->format_desc.blocking.inner_nblks == 0) {
            dnnl_memory_desc_t *in = desc_md(&desc, k, r->in[0]);
            *in = *own;
            in->data_type = tw->key.dtype == AMP_DTYPE_FP16 ? dnnl_f16 : dnnl_bf16;
            amp_dn.dnnl_primitive_desc_destroy(tpd);
            tpd = NULL;
            if (amp_dn.dnnl_primitive_desc_create(&tpd, &desc, attr, engine, hint) != dnnl_success)
                tpd = NULL;
        }
    }
    if (!tpd || !amp_dn_impl_is_native(tpd, why, whylen)) {
        ok = AMP_DNNL_NO_KERNEL;
        goto out;
    }
    if (d == FWD && !r->out[1] && own_output(tw, &desc, k, attr, engine, &tpd) < 0)
        goto out;
    size_t off = 0;
    for (int i = 0; i < 2; i++) {
        const dnnl_memory_desc_t *want = amp_dn_arg_md(tpd, r->in[i]);
        if (!want)
            goto out;
        tw->in_arg[i] = r->in[i];
        tw->in_md[i] = *want;
        tw->in_off[i] = off;
        tw->in_elems += (uint64_t)amp_dn_elems(want);
        off += page_up(amp_dn.dnnl_memory_desc_get_size(want));
        if (!(tw->reorder[i] = reorder_of(amp_dn_arg_md(pd, r->in[i]), want, engine)))
            goto out;
    }
    if (tw->out) {
        tw->out_off = off;
        off += page_up(amp_dn.dnnl_memory_desc_get_size(&tw->out_md));
    }
    const dnnl_memory_desc_t *sp =
        amp_dn.dnnl_primitive_desc_query_md(tpd, dnnl_query_scratchpad_md, 0);
    if (sp && sp->ndims > 0) {
        tw->scratchpad_md = *sp;
        tw->scratchpad_off = off;
        off += amp_dn.dnnl_memory_desc_get_size(sp);
    }
    tw->bytes = off;
    /* The twin writes the program's outputs in the program's layouts. */
    for (int i = 0; i < 2; i++) {
        const dnnl_memory_desc_t *mine = r->out[i] ? amp_dn_arg_md(pd, r->out[i]) : NULL,
                                 *its = r->out[i] ? amp_dn_arg_md(tpd, r->out[i]) : NULL;
        if (i == 0 && tw->out)
            continue; /* its own layout, reordered into the program's */
        if ((mine != NULL) != (its != NULL) || (mine && !amp_dn.dnnl_memory_desc_equal(mine, its)))
            goto out;
    }
    if (amp_dn.dnnl_primitive_create(&tw->prim, tpd) == dnnl_success)
        ok = 0;
out:
    if (tpd)
        amp_dn.dnnl_primitive_desc_destroy(tpd);
    if (hint)
        amp_dn.dnnl_primitive_desc_destroy(hint);
    if (attr)
        amp_dn.dnnl_primitive_attr_destroy(attr);
    return ok;
}

void amp_dn_twin_release(struct twin *tw)
{
    for (int i = 0; i < 2; i++)
        if (tw->reorder[i])
            amp_dn.dnnl_primitive_destroy(tw->reorder[i]);
    if (tw->out)
        amp_dn.dnnl_primitive_destroy(tw->out);
    if (tw->back)
        amp_dn.dnnl_primitive_destroy(tw->back);
    if (tw->prim)
        amp_dn.dnnl_primitive_destroy(tw->prim);
    free(tw);
}

#endif
