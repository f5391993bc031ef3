/* oneDNN 2.x: what a primitive the program executes is (its hook row,
 * multiply-adds and shape, for the policy and the counters), and the memory
 * it writes (for the accuracy audit). */
#ifdef AMPSHIM_HAVE_ONEDNN

#include "shim/onednn/v2.h"
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

/* A convolution with low inputs and fp32 outputs that the shim lowered in
 * its descriptor: its row, or -1. */
static int lowered_row(const_dnnl_primitive_desc_t pd, enum dir d, int rank)
{
    const dnnl_convolution_desc_t *cd = NULL;
    if (amp_dn.dnnl_primitive_desc_query(pd, dnnl_query_op_d, 0, (void *)&cd) != dnnl_success ||
        !cd || !amp_dn_desc_was_lowered(cd, d))
        return -1;
    return amp_dn_rows[P_CONV][d][rank - 1];
}

void amp_dnnl_classify(void *prim, amp_dnnl_execute_fn real_execute, struct amp_dnnl_call *c)
{
    c->hook = -1;
    c->lowered = 0;
    c->shape[0] = c->shape[1] = c->shape[2] = 0;
    const_dnnl_primitive_desc_t pd;
    enum pkind k;
    enum dir d;
    if (!amp_dn_ready((void *)real_execute) || !prim ||
        amp_dn.dnnl_primitive_get_primitive_desc(prim, &pd) != dnnl_success ||
        amp_dn_kind_of(pd, &k, &d) < 0)
        return;
    c->pd = pd;
    if (k == P_RNN) { /* no twin (f32 outputs are refused): classified to be counted */
        c->hook = amp_dn_rows[k][d][0];
        c->madds = 1e300;
        return;
    }
    const struct amp_dn_roles *r = &amp_dn_roles[d];
    const dnnl_memory_desc_t *in0 = amp_dn_arg_md(pd, r->in[0]), *in1 = amp_dn_arg_md(pd, r->in[1]),
                             *out = amp_dn_arg_md(pd, r->out[0]);
    if (!in0 || !in1 || !out)
        return;
    int row = -1;
    if (k == P_CONV && amp_dn_low_type(in0->data_type) && amp_dn_low_type(in1->data_type) &&
        (out->data_type == dnnl_f32 || amp_dn_low_type(out->data_type))) {
        /* lowered in its descriptor: its row, sized below as any */
        row = in0->ndims >= 3 && in0->ndims <= 5 ? lowered_row(pd, d, in0->ndims - 2) : -1;
        if (row < 0)
            return;
    } else {
        if (in0->data_type != dnnl_f32 || in1->data_type != dnnl_f32 || out->data_type != dnnl_f32)
            return;
        dnnl_engine_t engine;
        dnnl_engine_kind_t ek;
        if (amp_dn.dnnl_primitive_desc_query(pd, dnnl_query_engine, 0, &engine) != dnnl_success ||
            amp_dn.dnnl_engine_get_kind(engine, &ek) != dnnl_success || ek != dnnl_cpu)
            return;
    }
    /* Multiply-adds: every element of the large side (forward dst, the
     * backward passes' diff_dst; a deconvolution's src) meets one filter
     * slice: the weights over their output channels (over their input
     * channels for a deconvolution); a matmul's dst, K each. */
    const dnnl_memory_desc_t *src = d == BWD_DATA ? out : in0;
    const dnnl_memory_desc_t *w = d == BWD_WEIGHTS ? out : in1;
    const dnnl_memory_desc_t *y = d == FWD ? out : d == BWD_DATA ? in0 : in1;
    int rank = 1;
    if (k == P_CONV || k == P_DECONV) {
        rank = src->ndims - 2;
        if (rank < 1 || rank > 3)
            return;
        c->madds = amp_dn_conv_madds(k == P_CONV ? y : src, w);
    } else if (k == P_IP) {
        c->madds = amp_dn_elems(w) * (double)src->dims[0];
    } else {
        c->madds = amp_dn_elems(y) * (double)src->dims[src->ndims - 1];
    }
    /* Its shape as the product it is: rows by columns of the large side
     * (channels, a matmul's last dimension) by the multiply-adds each
     * element takes. */
    double ys = amp_dn_elems(y);
    int64_t cols = y->dims[k == P_MATMUL ? y->ndims - 1 : 1];
    c->shape[1] = cols > 0 ? cols : 1;
    c->shape[0] = (int64_t)(ys / (double)c->shape[1]);
    c->shape[2] = ys > 0 ? (int64_t)(c->madds / ys + 0.5) : 0;
    c->hook = row >= 0 ? row : amp_dn_rows[k][d][rank - 1];
    c->lowered = row >= 0;
}

int amp_dnnl_outputs(const struct amp_dnnl_call *c, int nargs, const void *args_,
                     struct amp_dnnl_output out[AMP_DNNL_OUTPUTS_MAX], int *reads)
{
    *reads = 1;
    const dnnl_exec_arg_t *args = args_;
    enum pkind k;
    enum dir d;
    if (c->hook < 0 || c->lowered || !c->pd || amp_dn_kind_of(c->pd, &k, &d) < 0 || k == P_RNN)
        return -1;
    int n = 0;
    for (int i = 0; i < 2; i++) {
        int arg = amp_dn_roles[d].out[i];
        if (!arg)
            continue;
        dnnl_memory_t mem = NULL;
        for (int a = 0; a < nargs; a++)
            if (args[a].arg == arg)
                mem = args[a].memory;
        if (!mem) /* an optional output (diff_bias) the call does not ask for */
            continue;
        const dnnl_memory_desc_t *md = NULL;
        void *p = NULL;
        if (n == AMP_DNNL_OUTPUTS_MAX ||
            amp_dn.dnnl_memory_get_memory_desc(mem, &md) != dnnl_success || !md ||
            md->data_type != dnnl_f32 ||
            amp_dn.dnnl_memory_get_data_handle(mem, &p) != dnnl_success || !p)
            return -1;
        out[n].p = p;
        out[n].elems = amp_dn.dnnl_memory_desc_get_size(md) / sizeof(float);
        n++;
    }
    *reads = amp_dn_reads_outputs(c->pd);
    return n;
}

#endif
