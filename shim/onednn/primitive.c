/* The oneDNN hook: dnnl_primitive_execute, the one call every oneDNN
 * program makes to run a primitive (torch's ideep among them: libtorch_cpu
 * runs its fp32 convolutions this way). The primitive is classified (its
 * kind, direction and spatial rank pick a primitive row of
 * policy/data/bindings_onednn.txt, whose op the policy decides) and, when
 * the policy lowers it and it is large enough, its twin runs instead
 * (shim/onednn/twin.h): the inputs converted into scratch, the program's
 * fp32 outputs written by a native low-precision kernel. Anything else runs
 * the program's primitive as made. The primitive rows are never entry points
 * of their own: AMPSHIM_HOOKS_ONEDNN_PRIMITIVE defines nothing. */
#include "runtime/decide.h"
#include "runtime/export.h"
#include "shim/cpu/blas_native.h"
#include "shim/onednn/twin.h"
#include "shim/resolve.h"

static int execute(amp_dnnl_execute_fn real, void *prim, void *stream, int nargs, const void *args)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return real(prim, stream, nargs, args);
    struct amp_dnnl_call c;
    amp_dnnl_classify(prim, real, &c);
    if (c.hook < 0)
        return real(prim, stream, nargs, args);
    enum amp_hook_id hook = (enum amp_hook_id)c.hook;
    if (c.lowered) { /* lowered in its descriptor: it runs in bf16 as made */
        amp_count(t, hook, AMP_CTL_NATIVE, 1);
        amp_count(t, hook, AMP_CTL_LOWERED, 1);
        return real(prim, stream, nargs, args);
    }
    enum amp_ctl_counter outcome;
    int explicit_request;
    int dtype = amp_decide_lower_unaudited(t, AMP_DEVICE_CPU, hook, 0, &outcome, &explicit_request);
    if (dtype >= 0) {
        enum amp_cpu_gate gate =
            amp_cpu_gate((enum amp_lowp_dtype)dtype, c.madds, explicit_request);
        if (gate != AMP_CPU_LOWER) {
            outcome = amp_outcome_counter(amp_cpu_gate_outcome(gate));
            dtype = -1;
        }
    }
    uint64_t converted = 0;
    if (dtype >= 0) {
        int ran = amp_dnnl_twin_run(&c, t, dtype, real, stream, nargs, args, &converted);
        if (ran == 0) {
            amp_count(t, hook, AMP_CTL_NATIVE, 1);
            amp_count(t, hook, AMP_CTL_CONVERTED, converted);
            amp_count(t, hook, outcome, 1);
            return 0; /* dnnl_success */
        }
        if (ran == AMP_DNNL_NO_KERNEL) {
            outcome = AMP_CTL_NOUNITS;
            if (explicit_request)
                amp_refuse_explicit(hook, dtype, "oneDNN has no native kernel for it on this CPU");
        } else {
            outcome = amp_not_lowered_after_all(outcome);
        }
    }
    amp_count(t, hook, outcome, 1);
    return real(prim, stream, nargs, args);
}

#define AMP_DEFINE_EXECUTE(sym, ...)                                                               \
    AMP_EXPORT int sym(void *prim, void *stream, int nargs, const void *args)                      \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        return execute((amp_dnnl_execute_fn)amp_real(AMP_HOOK_##sym), prim, stream, nargs, args);  \
    }
AMPSHIM_HOOKS_ONEDNN_EXECUTE(AMP_DEFINE_EXECUTE)
