/* The accuracy audit of a lowered oneDNN primitive (AMPSHIM_AUDIT,
 * ampshim(7) AUDIT): the call run twice on the program's own arguments,
 * its twin first (as it would have run lowered), then the program's
 * primitive as made, and the outputs compared as a BLAS call's are
 * (shim/blas/blas_audit.c). Both runs write the program's output memory, the
 * only place either can write: the twin's output (under auto a sample of
 * it) is kept aside to be compared, and, for a call that reads its outputs
 * (a sum post-op), what they held before is kept aside too and put back
 * between the runs. That shadow memory is taken for the call; without it
 * the call is not audited. The program keeps the fp32 result, the lowered
 * one with follow. */
#include "shim/onednn/primitive_audit.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/compare.h"
#include "runtime/decide.h"
#include "runtime/log.h"

/* Copies the outputs into a compact buffer (out = 1), or back (out = 0). */
static void copy_outputs(const struct amp_dnnl_output *o, int n, float *compact, int out)
{
    for (int i = 0; i < n; compact += o[i].elems, i++)
        if (out)
            memcpy(compact, o[i].p, o[i].elems * sizeof(float));
        else
            memcpy(o[i].p, compact, o[i].elems * sizeof(float));
}

/* What is compared: every value, or (AMPSHIM_AUDIT=auto, whose program
 * keeps fp32's output of an audited call anyway) a sample: blocks of
 * SAMPLE_BLOCK neighbouring values, one block in SAMPLE_EVERY, from an
 * offset that moves from audit to audit. Copying and comparing all of
 * ResNet-50's stem output (6.4 million values) cost 30 ms of its 63 ms
 * audit. */
enum { SAMPLE_BLOCK = 64, SAMPLE_EVERY = 8 };
struct sample {
    int whole;    /* every value, one block an output */
    size_t first; /* else: the first block's offset */
};

/* Block b of an output of elems values: its length, its first value at
 * *at; 0 past the last block. */
static size_t block(const struct sample *s, size_t elems, size_t b, size_t *at)
{
    if (s->whole) {
        *at = 0;
        return b == 0 ? elems : 0;
    }
    *at = (elems > s->first ? s->first : 0) + b * SAMPLE_BLOCK * SAMPLE_EVERY;
    return *at >= elems ? 0 : elems - *at < SAMPLE_BLOCK ? elems - *at : SAMPLE_BLOCK;
}

/* The values compared, copied into compact (NULL: only counted). */
static size_t copy_sample(const struct amp_dnnl_output *o, int n, const struct sample *s,
                          float *compact)
{
    size_t total = 0, at, len;
    for (int i = 0; i < n; i++)
        for (size_t b = 0; (len = block(s, o[i].elems, b, &at)); b++, total += len)
            if (compact)
                memcpy(compact + total, o[i].p + at, len * sizeof(float));
    return total;
}

static void compare(struct amp_audit_site *site, const struct amp_dnnl_output *o, int n,
                    const struct sample *s, const float *lowered, double flops, uint64_t ns_lowered,
                    uint64_t ns_fp32)
{
    struct amp_compare_sums sums = {0};
    struct amp_audit_result r = {.flops = flops};
    r.ns_lowered = ns_lowered;
    r.ns_fp32 = ns_fp32;
    r.sampled = !s->whole;
    const struct amp_compare_kernels *k = amp_compare();
    for (int pass = 0; pass < 2; pass++) {
        const float *at_low = lowered;
        size_t at, len;
        for (int i = 0; i < n; i++)
            for (size_t b = 0; (len = block(s, o[i].elems, b, &at)); b++, at_low += len)
                if (pass == 0)
                    k->sum(&sums, at_low, o[i].p + at, (int64_t)len);
                else
                    r.elem_max = k->elem_max(&sums, at_low, o[i].p + at, (int64_t)len, r.elem_max);
    }
    r.err = amp_compare_relative_error(&sums);
    r.nonfinite = sums.nonfinite;
    amp_audit_record(site, &r);
}

int amp_dnnl_audit(const struct amp_dnnl_call *c, struct amp_thread *t, int dtype,
                   amp_dnnl_execute_fn real, void *prim, void *stream, int nargs, const void *args,
                   struct amp_dnnl_audit_result *r)
{
    enum amp_hook_id hook = (enum amp_hook_id)c->hook;
    double flops = 2 * c->madds;
    int audit_this;
    r->site = amp_audit_enter(amp_site_of_call(amp_tls_caller, hook), (enum amp_lowp_dtype)dtype,
                              flops, c->shape, &audit_this);
    if (r->site && !__atomic_load_n(&r->site->twin_audits, __ATOMIC_RELAXED))
        __atomic_store_n(&r->site->twin_audits, 1, __ATOMIC_RELAXED);
    r->rc = 0;
    r->converted = 0;
    /* AMPSHIM_AUDIT=auto: a call-site entry the user wrote wins (it
     * reaches here when it lowers). */
    if (amp_audit_auto() && amp_site_entry(t, AMP_DEVICE_CPU, hook, 0) != AMP_CAT_UNSET)
        return AMP_DNNL_AUDIT_LOWER;
    struct amp_dnnl_output out[AMP_DNNL_OUTPUTS_MAX];
    int reads = 1;
    int n = r->site && audit_this ? amp_dnnl_outputs(c, nargs, args, out, &reads) : -1;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += out[i].elems;
    static _Atomic unsigned audits;
    struct sample smp = {!amp_audit_auto(),
                         atomic_fetch_add_explicit(&audits, 1, memory_order_relaxed) %
                             SAMPLE_EVERY * SAMPLE_BLOCK};
    /* what the outputs held is kept only for a call that reads it */
    size_t kept = n > 0 ? copy_sample(out, n, &smp, NULL) : 0, held = reads ? total : 0;
    float *shadow = n > 0 && total && total <= SIZE_MAX / (2 * sizeof(float))
                        ? amp_shadow_alloc((kept + held) * sizeof(float))
                        : NULL;
    if (!shadow) {
        if (n > 0) {
            static _Atomic int said;
            if (!atomic_exchange(&said, 1))
                amp_log(AMP_LOG_INFO, "audit: no memory for a primitive's shadow output; calls "
                                      "without it are not audited");
        }
        return amp_audit_keeps_lowered(r->site, flops) ? AMP_DNNL_AUDIT_LOWER
                                                       : AMP_DNNL_AUDIT_AS_MADE;
    }
    float *lowered = shadow, *before = reads ? shadow + kept : NULL;
    if (before)
        copy_outputs(out, n, before, 1);
    uint64_t mark = amp_now_ns();
    int built;
    int ran = amp_dnnl_twin_run(c, t, dtype, real, stream, nargs, args, &r->converted, &built);
    if (ran != 0) { /* nothing of the program's written */
        amp_shadow_free(shadow);
        return ran;
    }
    amp_audit_test_slow_lowered(flops);
    uint64_t ns_lowered = amp_now_ns() - mark;
    copy_sample(out, n, &smp, lowered);
    if (before)
        copy_outputs(out, n, before, 0);
    mark = amp_now_ns();
    r->rc = real(prim, stream, nargs, args);
    uint64_t ns_fp32 = amp_now_ns() - mark;
    if (r->rc == 0) { /* dnnl_success */
        /* A call that made its twin (a new shape's first) is not weighed
         * for speed: oneDNN generating the kernel is no cost of the calls
         * after it, and a model's probation may be all new shapes. */
        compare(r->site, out, n, &smp, lowered, flops, built ? 0 : ns_lowered, built ? 0 : ns_fp32);
        if (amp_audit_follows()) { /* never sampled: only auto samples */
            copy_outputs(out, n, lowered, 0);
            amp_audit_ran_lowered(r->site, flops);
        }
    }
    amp_shadow_free(shadow);
    return AMP_DNNL_AUDIT_RAN;
}
