/* How a hook is exported: the C entry itself, or on x86-64 an assembly stub
 * in front of it (shim/hook_stub_x86_64.h: it forwards disabled and passed-
 * through calls without touching an argument) with the C entry hidden as
 * sym_c. Used by every hook whose fast path is "call the real function
 * unchanged": BLAS, cuBLAS, cuBLASLt, cuDNN. */
#ifndef AMPSHIM_HOOK_STUB_H
#define AMPSHIM_HOOK_STUB_H

#include "runtime/export.h"

#if defined(__x86_64__) && defined(__ELF__)
#include "shim/hook_stub_x86_64.h"
#define AMP_C_ENTRY(sym) __attribute__((used, visibility("hidden"))) AMP_C_NAME(sym)
#define AMP_C_NAME(sym) sym##_c
#define AMP_STUB(sym) AMP_ENTRY_STUB(sym);
#else
#define AMP_C_ENTRY(sym) AMP_EXPORT sym
#define AMP_C_NAME(sym) sym
#define AMP_STUB(sym)
#endif

#endif
