/* The oneDNN hook: dnnl_primitive_execute, the one call every oneDNN
 * program makes to run a primitive (torch's ideep among them: libtorch_cpu
 * runs its fp32 convolutions this way). The primitive is classified (its
 * kind, direction and spatial rank pick a primitive row of
 * policy/data/bindings_onednn.txt, whose op the policy decides) and, when
 * the policy lowers it and it is large enough, its twin runs instead
 * (shim/onednn/twin.h): the inputs converted into scratch, the program's
 * fp32 outputs written by a native low-precision kernel; under AMPSHIM_AUDIT
 * the call is first counted at its site, which may run it both ways
 * (shim/onednn/primitive_audit.c) or keep it as made. Anything else runs the
 * program's primitive as made. Every AMPSHIM_CPU_TIMING_SAMPLE-th
 * classified call is timed. The primitive rows are never entry points
 * of their own: AMPSHIM_HOOKS_ONEDNN_PRIMITIVE defines nothing. */
#include "runtime/decide.h"
#include "runtime/export.h"
#include "shim/onednn/primitive_audit.h"
#include "shim/onednn/twin.h"
#include "shim/resolve.h"

/* How a call's sampled wall time counts: lowered, as made, or not at all
 * (a pass-through, never timed as the BLAS hooks' fast path is not; an
 * audited call, whose two runs the audit times). */
enum timed { TIMED_MADE, TIMED_LOWERED, TIMED_NOT };

/* Runs the classified call c: its twin when the policy and the gate lower
 * it (under the audit, as shim/onednn/primitive_audit.c says), else the
 * program's primitive as made; *timed says how its time counts. */
static int run(const struct amp_dnnl_call *c, struct amp_thread *t, amp_dnnl_execute_fn real,
               void *prim, void *stream, int nargs, const void *args, enum timed *timed)
{
    enum amp_hook_id hook = (enum amp_hook_id)c->hook;
    *timed = TIMED_MADE;
    if (c->lowered) { /* lowered in its descriptor: it runs in bf16 as made */
        amp_count(t, hook, AMP_CTL_NATIVE, 1);
        amp_count(t, hook, AMP_CTL_LOWERED, 1);
        *timed = TIMED_LOWERED;
        return real(prim, stream, nargs, args);
    }
    struct amp_decision d = amp_decide(t, AMP_DEVICE_CPU, hook, 0);
    enum amp_ctl_counter outcome = amp_outcome_counter(d.outcome);
    int explicit_request = d.explicit_request;
    int dtype = d.outcome == AMP_OUTCOME_LOWERED ? (int)d.dtype : -1;
    if (dtype >= 0) {
        enum amp_cpu_gate gate =
            amp_cpu_gate((enum amp_lowp_dtype)dtype, c->madds, explicit_request);
        if (gate != AMP_CPU_LOWER) {
            outcome = amp_outcome_counter(amp_cpu_gate_outcome(gate));
            dtype = -1;
        }
    }
    if (dtype < 0) {
        amp_count(t, hook, outcome, 1);
        *timed = outcome == AMP_CTL_PASSTHROUGH ? TIMED_NOT : TIMED_MADE;
        return real(prim, stream, nargs, args);
    }
    struct amp_dnnl_audit_result a = {NULL, 0, 0};
    int ran = AMP_DNNL_AUDIT_LOWER;
    if (amp_unlikely(amp_live_load(&amp_rt.cfg.audit)))
        ran = amp_dnnl_audit(c, t, dtype, real, prim, stream, nargs, args, &a);
    if (ran == AMP_DNNL_AUDIT_AS_MADE) {
        amp_count(t, hook,
                  amp_audit_keeps_fp32(a.site, 2 * c->madds) ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH,
                  1);
        return real(prim, stream, nargs, args);
    }
    if (ran == AMP_DNNL_AUDIT_LOWER) {
        int built;
        ran = amp_dnnl_twin_run(c, t, dtype, real, stream, nargs, args, &a.converted, &built);
        if (ran == 0) {
            amp_audit_ran_lowered(a.site, 2 * c->madds);
            *timed = TIMED_LOWERED;
        }
    } else if (ran == AMP_DNNL_AUDIT_RAN) {
        *timed = TIMED_NOT;
    }
    if (ran == 0) { /* the twin ran (and, audited, the primitive as made after it) */
        amp_count(t, hook, AMP_CTL_NATIVE, 1);
        amp_count(t, hook, AMP_CTL_CONVERTED, a.converted);
        amp_count(t, hook, outcome, 1);
        return a.rc; /* dnnl_success, or the audited primitive's own answer */
    }
    if (ran == AMP_DNNL_NO_KERNEL) {
        outcome = AMP_CTL_NOUNITS;
        if (explicit_request)
            amp_refuse_explicit(hook, dtype, "oneDNN has no native kernel for it on this CPU");
    } else {
        outcome = amp_not_lowered_after_all(outcome);
    }
    amp_count(t, hook, outcome, 1);
    return real(prim, stream, nargs, args);
}

static int execute(amp_dnnl_execute_fn real, void *prim, void *stream, int nargs, const void *args)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return real(prim, stream, nargs, args);
    struct amp_dnnl_call c;
    amp_dnnl_classify(prim, real, &c);
    if (c.hook < 0)
        return real(prim, stream, nargs, args);
    /* Every AMPSHIM_CPU_TIMING_SAMPLE-th classified call is timed, as the
     * BLAS hooks' are: its wall time and flops go to its row's CPU time. */
    uint64_t t0 = amp_unlikely(amp_cpu_timing_due()) ? amp_now_ns() : 0;
    void *caller = amp_tls_caller;
    enum timed timed;
    int rc = run(&c, t, real, prim, stream, nargs, args, &timed);
    if (amp_unlikely(t0) && timed != TIMED_NOT)
        amp_cpu_time_record((enum amp_hook_id)c.hook, 2 * c.madds, amp_now_ns() - t0,
                            timed == TIMED_LOWERED, caller);
    return rc;
}

AMP_EXPORT int dnnl_primitive_execute(void *prim, void *stream, int nargs, const void *args)
{
    AMP_NOTE_CALLER();
    return execute((amp_dnnl_execute_fn)amp_real(AMP_HOOK_dnnl_primitive_execute), prim, stream,
                   nargs, args);
}
