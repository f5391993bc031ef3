/* The exported cuSOLVER entry points, expanded from
 * AMPSHIM_HOOK_LIST_CUSOLVER. Each runs the real routine inside an fp32
 * region (category fp32: policy/data/cuda_float32_linalg.txt), so the cuBLAS
 * calls cuSOLVER makes inside are not lowered. Their arguments are all
 * machine words and they return a status: shim/forward_words.h forwards
 * them. */
#include "runtime/state.h"
#include "shim/forward_words.h"
#include "shim/resolve.h"

#define AMP_EXPORT __attribute__((visibility("default")))

typedef int (*amp_cusolver_fn)(AMP_WORD_TYPES);

#define AMP_DEFINE_CUSOLVER(sym)                                                                   \
    AMP_EXPORT int sym(AMP_WORD_PARAMS)                                                            \
    {                                                                                              \
        amp_cusolver_fn real = (amp_cusolver_fn)amp_real(AMP_HOOK_##sym);                          \
        struct amp_thread *t = amp_thread_enter();                                                 \
        if (!t)                                                                                    \
            return real(AMP_WORD_ARGS);                                                            \
        int fp32 = amp_fp32_region_enter(t, AMP_HOOK_##sym);                                       \
        int status = real(AMP_WORD_ARGS);                                                          \
        amp_fp32_region_leave(t, AMP_HOOK_##sym, fp32);                                            \
        return status;                                                                             \
    }

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_CUSOLVER(sym)
AMPSHIM_HOOK_LIST_CUSOLVER(AMP_X_HOOK)
#undef AMP_X_HOOK
