/* Forwarding a call whose arguments are all machine words (pointers,
 * integers, handles) without spelling its signature: the function takes and
 * passes on a fixed number of words. On the x86-64 and AArch64 calling
 * conventions the callee reads only the arguments it has; the extra words
 * forwarded are read from the caller's stack, so this is only for callers
 * whose stacks have room above the arguments (the cuBLAS calls that use it
 * are made from ordinary threads). Routines with unknown signatures use
 * shim/region_hook.h, which copies nothing on x86-64. */
#ifndef AMPSHIM_FORWARD_WORDS_H
#define AMPSHIM_FORWARD_WORDS_H

#include <stdint.h>

/* More than the longest such routine's arguments plus hidden lengths. */
/* clang-format off */
#define AMP_WORDS(X)                                                                               \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)    \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
/* clang-format on */
#define AMP_WORD_PARAM(i) , uintptr_t w##i
#define AMP_WORD_TYPE(i) , uintptr_t
#define AMP_WORD_ARG(i) , w##i
/* The lists start with a comma; this drops it. */
#define AMP_DROP_FIRST(first, ...) __VA_ARGS__
#define AMP_EXPAND(...) AMP_DROP_FIRST(__VA_ARGS__)

#define AMP_WORD_PARAMS AMP_EXPAND(AMP_WORDS(AMP_WORD_PARAM))
#define AMP_WORD_TYPES AMP_EXPAND(AMP_WORDS(AMP_WORD_TYPE))
#define AMP_WORD_ARGS AMP_EXPAND(AMP_WORDS(AMP_WORD_ARG))

#endif
