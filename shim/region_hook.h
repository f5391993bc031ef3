/* Forwarding a call whose arguments are all machine words (pointers,
 * integers, handles, hidden Fortran string lengths) without knowing its
 * signature: the hook takes and passes on a fixed number of words. On the
 * x86-64 and AArch64 calling conventions the callee reads only the arguments
 * it has; the extra words forwarded are the caller's stack, never used. Used
 * for LAPACK, cuSOLVER and CTC loss, whose routines have many signatures. */
#ifndef AMPSHIM_REGION_HOOK_H
#define AMPSHIM_REGION_HOOK_H

#include <stdint.h>

#include "runtime/export.h"

/* More than the longest such routine's arguments plus hidden lengths. */
#define AMP_WORDS(X)                                                                               \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)    \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
#define AMP_WORD_PARAM(i) , uintptr_t w##i
#define AMP_WORD_TYPE(i) , uintptr_t
#define AMP_WORD_ARG(i) , w##i
/* The lists start with a comma; this drops it. */
#define AMP_DROP_FIRST(first, ...) __VA_ARGS__
#define AMP_EXPAND(...) AMP_DROP_FIRST(__VA_ARGS__)

#define AMP_WORD_PARAMS AMP_EXPAND(AMP_WORDS(AMP_WORD_PARAM))
#define AMP_WORD_TYPES AMP_EXPAND(AMP_WORDS(AMP_WORD_TYPE))
#define AMP_WORD_ARGS AMP_EXPAND(AMP_WORDS(AMP_WORD_ARG))

/* A hook that runs its routine inside an fp32 region when the routine's
 * category on `device` is fp32 (or a region is open already), forwarded word
 * for word: LAPACK's routines, cuSOLVER's and cuDNN's CTC loss. It returns
 * what the routine leaves in the return register; a LAPACK subroutine's
 * callers (void in C, a subroutine in Fortran) ignore it. Needs
 * runtime/decide.h and shim/resolve.h. */
typedef int (*amp_words_status_fn)(AMP_WORD_TYPES);
#define AMP_DEFINE_FP32_REGION_HOOK(sym, device)                                                   \
    AMP_EXPORT int sym(AMP_WORD_PARAMS)                                \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        amp_words_status_fn real = (amp_words_status_fn)amp_real(AMP_HOOK_##sym);                  \
        struct amp_thread *t = amp_thread_enter();                                                 \
        if (!t)                                                                                    \
            return real(AMP_WORD_ARGS);                                                            \
        enum amp_outcome fp32 = amp_fp32_region_enter(t, device, AMP_HOOK_##sym);                \
        int status = real(AMP_WORD_ARGS);                                                          \
        amp_fp32_region_leave(t, AMP_HOOK_##sym, fp32);                                            \
        return status;                                                                             \
    }

#endif
