/* The exported LAPACK entry points, expanded from AMPSHIM_HOOK_LIST_LAPACK.
 * Each runs the real routine inside an fp32 region (category fp32, the CPU
 * float32 list's linalg ops), so the BLAS calls LAPACK makes internally are
 * not lowered and results are bit-identical to running without ampshim.
 *
 * LAPACK routines have many signatures; shim/region_hook.h forwards them
 * as machine words. */
#include <stdint.h>

#include "runtime/export.h"
#include "runtime/decide.h"
#include "shim/region_hook.h"
#include "shim/resolve.h"


typedef void (*amp_f77_subroutine)(AMP_WORD_TYPES);

#define AMP_DEFINE_F77_LAPACK(sym)                                                                 \
    AMP_EXPORT void sym(AMP_WORD_PARAMS)                                     \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        amp_f77_subroutine real = (amp_f77_subroutine)amp_real(AMP_HOOK_##sym);                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        if (!t) {                                                                                  \
            real(AMP_WORD_ARGS);                                             \
            return;                                                                                \
        }                                                                                          \
        /* fp32 opens a region; any other category leaves the BLAS calls    \
         * inside to their own policy (LAPACK itself cannot be lowered). */ \
        enum amp_outcome fp32 = amp_fp32_region_enter(t, AMP_DEVICE_CPU, AMP_HOOK_##sym);                                       \
        real(AMP_WORD_ARGS);                                                                       \
        amp_fp32_region_leave(t, AMP_HOOK_##sym, fp32);                                            \
    }

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_F77_LAPACK(sym)
AMPSHIM_HOOK_LIST_LAPACK(AMP_X_HOOK)
#undef AMP_X_HOOK
