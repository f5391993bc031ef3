/* The exported LAPACK entry points, expanded from AMPSHIM_HOOK_LIST_LAPACK.
 * Each runs the real routine inside an fp32 region (category fp32, the CPU
 * float32 list's linalg ops), so the BLAS calls LAPACK makes internally are
 * not lowered and results are bit-identical to running without ampshim.
 *
 * LAPACK routines have many signatures; shim/forward_words.h forwards them
 * as machine words. */
#include <stdint.h>

#include "runtime/state.h"
#include "shim/forward_words.h"
#include "shim/resolve.h"

#define AMP_EXPORT __attribute__((visibility("default")))

typedef void (*amp_f77_subroutine)(AMP_WORD_TYPES);

/* fp32 opens a region; any other category leaves the BLAS calls inside to
 * their own policy (LAPACK itself cannot be lowered). */
static inline enum amp_outcome lapack_outcome(enum amp_hook_id hook, const struct amp_thread *t)
{
    return t->fp32_depth || amp_live_load(&amp_rt.category[AMP_DEVICE_CPU][hook][0]) == AMP_CAT_FP32
               ? AMP_OUTCOME_FP32
               : AMP_OUTCOME_PASSTHROUGH;
}

#define AMP_DEFINE_F77_LAPACK(sym)                                                                 \
    AMP_EXPORT void sym(AMP_WORD_PARAMS)                                     \
    {                                                                                              \
        amp_f77_subroutine real = (amp_f77_subroutine)amp_real(AMP_HOOK_##sym);                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        if (!t) {                                                                                  \
            real(AMP_WORD_ARGS);                                             \
            return;                                                                                \
        }                                                                                          \
        enum amp_outcome outcome = lapack_outcome(AMP_HOOK_##sym, t);                              \
        t->fp32_depth += outcome == AMP_OUTCOME_FP32;                                              \
        real(AMP_WORD_ARGS);                                                 \
        t->fp32_depth -= outcome == AMP_OUTCOME_FP32;                                              \
        amp_count(t, AMP_HOOK_##sym,                                                               \
                  outcome == AMP_OUTCOME_FP32 ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH, 1);            \
    }

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_F77_LAPACK(sym)
AMPSHIM_HOOK_LIST_LAPACK(AMP_X_HOOK)
#undef AMP_X_HOOK
