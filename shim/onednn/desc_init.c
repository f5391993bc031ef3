/* The oneDNN convolution descriptor functions (2.x): lowering in the
 * descriptor, for the callers of policy/data/onednn_callers.txt (torch's
 * ideep). Each runs the real function; then, for a listed caller whose
 * convolution has fp32 inputs in "any" layout, the policy decides the
 * descriptor's primitive row (as dnnl_primitive_execute would), and a
 * lowered one asks for bf16 (fp16) inputs (shim/onednn/twin.h). The caller
 * then reorders its fp32 data into the bf16 layout the primitive chose, in
 * one pass, and gets a native bf16 convolution writing fp32 outputs: the
 * conversion costs nothing beyond the reorder it makes anyway. Its
 * executions are counted lowered at dnnl_primitive_execute. For any other
 * caller, and for libdnnl's calls to its own functions, the descriptor is
 * the program's. The policy is asked when the descriptor is made: a caller
 * that keeps primitives by shape (ideep does) runs a shape as it was first
 * decided. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/accuracy_audit.h"
#include "runtime/callers.h"
#include "runtime/decide.h"
#include "runtime/export.h"
#include "runtime/log.h"
#include "shim/onednn/twin.h"
#include "shim/resolve.h"

int amp_dnnl_desc_decide(struct amp_thread *t, int row, double madds, void *caller,
                         int *explicit_request, amp_dnnl_gate_fn gate)
{
    enum amp_ctl_counter outcome;
    int dtype = amp_decide_lower_unaudited(t, AMP_DEVICE_CPU, (enum amp_hook_id)row, 0, &outcome,
                                           explicit_request);
    /* AMPSHIM_AUDIT=auto: a shape first met at a call site auto has
     * decided to lower (at this size) is lowered in its descriptor, as the
     * defaults lower it: no twin, no conversion pass. Its calls are not
     * audited again (a primitive lowered in its descriptor runs one way
     * only); the shapes met before the decision keep their twins. */
    if (dtype < 0 && amp_audit_auto()) {
        struct amp_decision d = amp_decide(t, AMP_DEVICE_CPU, (enum amp_hook_id)row, 0);
        if (d.outcome == AMP_OUTCOME_LOWERED &&
            amp_audit_decided_lowered(amp_site_of_call(caller, (enum amp_hook_id)row), 2 * madds))
            dtype = (int)d.dtype;
    }
    if ((dtype == AMP_DTYPE_BF16 || dtype == AMP_DTYPE_FP16) &&
        gate((enum amp_lowp_dtype)dtype, madds, *explicit_request) == AMP_CPU_LOWER)
        return dtype;
    return -1;
}

static void lower_if_decided(enum amp_hook_id entry, void *desc, int dir, void *caller)
{
    struct amp_thread *t = amp_thread_enter();
    double madds = 0;
    int row, explicit_request = 0;
    if (!t || amp_call_from_library(caller) || !amp_caller_is_onednn_caller(caller) ||
        (row = amp_dnnl_desc_row(desc, dir, amp_real(entry), &madds)) < 0)
        return;
    int dtype = amp_dnnl_desc_decide(t, row, madds, caller, &explicit_request, amp_cpu_gate);
    if (dtype >= 0 && amp_dnnl_desc_lower(desc, dir, dtype) == AMP_DNNL_NO_KERNEL &&
        explicit_request)
        amp_refuse_explicit(row, dtype, "oneDNN has no native kernel for it on this CPU");
}

/* The fallback: a primitive descriptor the program's call could not make
 * from a descriptor the shim lowered is made again from the program's own
 * fp32 descriptor, so the program never sees an error it would not have
 * seen without the shim. */
static int pd_create(int (*real)(void *, const void *, const void *, void *, const void *),
                     void *out, const void *op_desc, const void *attr, void *engine,
                     const void *hint)
{
    int status = real(out, op_desc, attr, engine, hint);
    size_t size = amp_dnnl_conv_desc_size();
    if (status == 0 || !size || amp_mode() == AMP_MODE_INERT)
        return status;
    void *fp32 = malloc(size);
    if (fp32 && amp_dnnl_desc_unlowered(op_desc, fp32, size)) {
        static _Atomic int said;
        if (!atomic_exchange(&said, 1))
            amp_log(AMP_LOG_INFO, "oneDNN refused a convolution lowered in its descriptor with "
                                  "the caller's attributes: it is made as the caller made it, in "
                                  "fp32");
        status = real(out, fp32, attr, engine, hint);
    }
    free(fp32);
    return status;
}

/* The doors, each with its real signature: the program's call is made,
 * then the decision (after_init). */
typedef const void *md_t;
typedef const void *dims_t;

/* After the real descriptor function returned status for desc: the
 * decision, in the caller's name (libdnnl's own calls inside noted theirs). */
static int after_init(enum amp_hook_id hook, int status, void *desc, int dir, void *caller)
{
    if (status == 0) {
        amp_tls_caller = caller;
        lower_if_decided(hook, desc, dir, caller);
    }
    return status;
}

typedef int (*fwd_fn)(void *, int, int, md_t, md_t, md_t, md_t, dims_t, dims_t, dims_t);
typedef int (*fwd_dilated_fn)(void *, int, int, md_t, md_t, md_t, md_t, dims_t, dims_t, dims_t,
                              dims_t);
typedef int (*bwd_data_fn)(void *, int, md_t, md_t, md_t, dims_t, dims_t, dims_t);
typedef int (*bwd_data_dilated_fn)(void *, int, md_t, md_t, md_t, dims_t, dims_t, dims_t, dims_t);
typedef int (*bwd_weights_fn)(void *, int, md_t, md_t, md_t, md_t, dims_t, dims_t, dims_t);
typedef int (*bwd_weights_dilated_fn)(void *, int, md_t, md_t, md_t, md_t, dims_t, dims_t, dims_t,
                                      dims_t);

AMP_EXPORT int dnnl_convolution_forward_desc_init(void *desc, int prop, int alg, md_t src, md_t w,
                                                  md_t b, md_t dst, dims_t st, dims_t pl, dims_t pr)
{
    AMP_NOTE_CALLER();
    void *caller = amp_tls_caller;
    fwd_fn real = (fwd_fn)amp_real(AMP_HOOK_dnnl_convolution_forward_desc_init);
    return after_init(AMP_HOOK_dnnl_convolution_forward_desc_init,
                      real(desc, prop, alg, src, w, b, dst, st, pl, pr), desc, 0, caller);
}

AMP_EXPORT int dnnl_dilated_convolution_forward_desc_init(void *desc, int prop, int alg, md_t src,
                                                          md_t w, md_t b, md_t dst, dims_t st,
                                                          dims_t dl, dims_t pl, dims_t pr)
{
    AMP_NOTE_CALLER();
    void *caller = amp_tls_caller;
    fwd_dilated_fn real =
        (fwd_dilated_fn)amp_real(AMP_HOOK_dnnl_dilated_convolution_forward_desc_init);
    return after_init(AMP_HOOK_dnnl_dilated_convolution_forward_desc_init,
                      real(desc, prop, alg, src, w, b, dst, st, dl, pl, pr), desc, 0, caller);
}

AMP_EXPORT int dnnl_convolution_backward_data_desc_init(void *desc, int alg, md_t dsrc, md_t w,
                                                        md_t ddst, dims_t st, dims_t pl, dims_t pr)
{
    AMP_NOTE_CALLER();
    void *caller = amp_tls_caller;
    bwd_data_fn real = (bwd_data_fn)amp_real(AMP_HOOK_dnnl_convolution_backward_data_desc_init);
    return after_init(AMP_HOOK_dnnl_convolution_backward_data_desc_init,
                      real(desc, alg, dsrc, w, ddst, st, pl, pr), desc, 1, caller);
}

AMP_EXPORT int dnnl_dilated_convolution_backward_data_desc_init(void *desc, int alg, md_t dsrc,
                                                                md_t w, md_t ddst, dims_t st,
                                                                dims_t dl, dims_t pl, dims_t pr)
{
    AMP_NOTE_CALLER();
    void *caller = amp_tls_caller;
    bwd_data_dilated_fn real =
        (bwd_data_dilated_fn)amp_real(AMP_HOOK_dnnl_dilated_convolution_backward_data_desc_init);
    return after_init(AMP_HOOK_dnnl_dilated_convolution_backward_data_desc_init,
                      real(desc, alg, dsrc, w, ddst, st, dl, pl, pr), desc, 1, caller);
}

AMP_EXPORT int dnnl_convolution_backward_weights_desc_init(void *desc, int alg, md_t src, md_t dw,
                                                           md_t db, md_t ddst, dims_t st, dims_t pl,
                                                           dims_t pr)
{
    AMP_NOTE_CALLER();
    void *caller = amp_tls_caller;
    bwd_weights_fn real =
        (bwd_weights_fn)amp_real(AMP_HOOK_dnnl_convolution_backward_weights_desc_init);
    return after_init(AMP_HOOK_dnnl_convolution_backward_weights_desc_init,
                      real(desc, alg, src, dw, db, ddst, st, pl, pr), desc, 2, caller);
}

AMP_EXPORT int dnnl_dilated_convolution_backward_weights_desc_init(void *desc, int alg, md_t src,
                                                                   md_t dw, md_t db, md_t ddst,
                                                                   dims_t st, dims_t dl, dims_t pl,
                                                                   dims_t pr)
{
    AMP_NOTE_CALLER();
    void *caller = amp_tls_caller;
    bwd_weights_dilated_fn real = (bwd_weights_dilated_fn)amp_real(
        AMP_HOOK_dnnl_dilated_convolution_backward_weights_desc_init);
    return after_init(AMP_HOOK_dnnl_dilated_convolution_backward_weights_desc_init,
                      real(desc, alg, src, dw, db, ddst, st, dl, pl, pr), desc, 2, caller);
}

typedef int (*pd_create_fn)(void *, const void *, const void *, void *, const void *);

AMP_EXPORT int dnnl_primitive_desc_create(void *out, const void *op_desc, const void *attr,
                                          void *engine, const void *hint)
{
    return pd_create((pd_create_fn)amp_real(AMP_HOOK_dnnl_primitive_desc_create), out, op_desc,
                     attr, engine, hint);
}

AMP_EXPORT int dnnl_primitive_desc_iterator_create(void *out, const void *op_desc, const void *attr,
                                                   void *engine, const void *hint)
{
    return pd_create((pd_create_fn)amp_real(AMP_HOOK_dnnl_primitive_desc_iterator_create), out,
                     op_desc, attr, engine, hint);
}
