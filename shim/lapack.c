/* The exported LAPACK entry points, expanded from AMPSHIM_HOOK_LIST_LAPACK.
 * Each runs the real routine inside an fp32 region (category fp32, the CPU
 * float32 list's linalg ops), so the BLAS calls LAPACK makes internally are
 * not lowered and results are bit-identical to running without ampshim.
 *
 * LAPACK routines have many signatures but every argument of a Fortran
 * subroutine is a pointer or a hidden character length, each one machine
 * word. A hook therefore takes and forwards a fixed number of words: on the
 * x86-64 and AArch64 calling conventions the callee reads only the arguments
 * it has, and the extra words forwarded are the caller's stack, never used. */
#include <stdint.h>

#include "runtime/state.h"
#include "shim/resolve.h"

#define AMP_EXPORT __attribute__((visibility("default")))

/* More than the longest LAPACK subroutine's arguments plus hidden lengths. */
#define AMP_WORDS(X)                                                                               \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)    \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
#define AMP_WORD_PARAM(i) , uintptr_t w##i
#define AMP_WORD_TYPE(i) , uintptr_t
#define AMP_WORD_ARG(i) , w##i
/* The lists start with a comma; this drops it. */
#define AMP_DROP_FIRST(first, ...) __VA_ARGS__
#define AMP_EXPAND(...) AMP_DROP_FIRST(__VA_ARGS__)

typedef void (*amp_f77_subroutine)(AMP_EXPAND(AMP_WORDS(AMP_WORD_TYPE)));

/* fp32 opens a region; any other category leaves the BLAS calls inside to
 * their own policy (LAPACK itself cannot be lowered). */
static inline enum amp_outcome lapack_outcome(enum amp_hook_id hook, const struct amp_thread *t)
{
    return t->fp32_depth || amp_live_load(&amp_rt.category[AMP_DEVICE_CPU][hook][0]) == AMP_CAT_FP32
               ? AMP_OUTCOME_FP32
               : AMP_OUTCOME_PASSTHROUGH;
}

#define AMP_DEFINE_F77_LAPACK(sym)                                                                 \
    AMP_EXPORT void sym(AMP_EXPAND(AMP_WORDS(AMP_WORD_PARAM)))                                     \
    {                                                                                              \
        amp_f77_subroutine real = (amp_f77_subroutine)amp_real(AMP_HOOK_##sym);                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        if (!t) {                                                                                  \
            real(AMP_EXPAND(AMP_WORDS(AMP_WORD_ARG)));                                             \
            return;                                                                                \
        }                                                                                          \
        enum amp_outcome outcome = lapack_outcome(AMP_HOOK_##sym, t);                              \
        t->fp32_depth += outcome == AMP_OUTCOME_FP32;                                              \
        real(AMP_EXPAND(AMP_WORDS(AMP_WORD_ARG)));                                                 \
        t->fp32_depth -= outcome == AMP_OUTCOME_FP32;                                              \
        amp_count(t, AMP_HOOK_##sym,                                                               \
                  outcome == AMP_OUTCOME_FP32 ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH, 1);            \
    }

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_F77_LAPACK(sym)
AMPSHIM_HOOK_LIST_LAPACK(AMP_X_HOOK)
#undef AMP_X_HOOK
