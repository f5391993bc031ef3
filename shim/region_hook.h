/* Hooks that run a routine inside an fp32 region without knowing its
 * signature: LAPACK's routines, cuSOLVER's and cuDNN's CTC loss, which have
 * hundreds of signatures between them.
 *
 * On x86-64 the hook is an assembly stub that touches no argument: it asks
 * amp_region_hook_enter (shim/region_frames.c) for the real function, which,
 * when the call is to run in an fp32 region, opens it, keeps the caller's
 * return address in a small per-thread stack of frames and puts the address
 * of amp_region_landing in its place; the stub then jumps to the real
 * function with the stack exactly as the caller left it. The routine returns
 * to the landing, which closes the region and returns to the caller with the
 * routine's return registers intact. Nothing is copied, so a caller whose
 * stack ends right after its arguments (a fiber's) is safe, and a frame
 * whose routine never returned (an xerbla that longjmps out of LAPACK, as R's
 * does) is recognised as dead and its region closed (region_frames.c).
 *
 * Elsewhere the hook is C and forwards a fixed number of machine words
 * (shim/forward_words.h). */
#ifndef AMPSHIM_REGION_HOOK_H
#define AMPSHIM_REGION_HOOK_H

#include <stdint.h>

#include "runtime/export.h"

/* Returns the real function of hook; opens the fp32 region when decided
 * (then *return_slot, the caller's return address, is replaced by the
 * landing's). */
void *amp_region_hook_enter(int hook, int device, void **return_slot);

#if defined(__x86_64__) && defined(__ELF__)

#ifdef __CET__
#define AMP_REGION_ENDBR "  endbr64\n"
#else
#define AMP_REGION_ENDBR ""
#endif

/* Saves the argument registers (the six integer ones and xmm0-7; %al is only
 * meaningful to variadic functions, which these are not), calls the enter
 * function with the address of the return address, restores them, jumps. */
/* clang-format off */
#define AMP_DEFINE_FP32_REGION_HOOK(sym, device)                                                   \
    __attribute__((used, visibility("hidden"))) void *sym##_region_enter(void **slot)             \
    {                                                                                              \
        return amp_region_hook_enter(AMP_HOOK_##sym, device, slot);                               \
    }                                                                                              \
    __asm__(".text\n"                                                                              \
            ".globl " #sym "\n"                                                                    \
            ".type " #sym ", @function\n"                                                          \
            ".p2align 4\n" #sym ":\n"                                                              \
            "  .cfi_startproc\n" AMP_REGION_ENDBR                                                  \
            "  pushq %rdi\n  .cfi_adjust_cfa_offset 8\n"                                           \
            "  pushq %rsi\n  .cfi_adjust_cfa_offset 8\n"                                           \
            "  pushq %rdx\n  .cfi_adjust_cfa_offset 8\n"                                           \
            "  pushq %rcx\n  .cfi_adjust_cfa_offset 8\n"                                           \
            "  pushq %r8\n  .cfi_adjust_cfa_offset 8\n"                                            \
            "  pushq %r9\n  .cfi_adjust_cfa_offset 8\n"                                            \
            "  subq $136, %rsp\n  .cfi_adjust_cfa_offset 136\n" /* 8 xmm + realign */             \
            "  movdqu %xmm0, 0(%rsp)\n  movdqu %xmm1, 16(%rsp)\n"                                  \
            "  movdqu %xmm2, 32(%rsp)\n  movdqu %xmm3, 48(%rsp)\n"                                 \
            "  movdqu %xmm4, 64(%rsp)\n  movdqu %xmm5, 80(%rsp)\n"                                 \
            "  movdqu %xmm6, 96(%rsp)\n  movdqu %xmm7, 112(%rsp)\n"                                \
            "  leaq 184(%rsp), %rdi\n" /* the return address's slot */                            \
            "  call " #sym "_region_enter\n"                                                       \
            "  movdqu 0(%rsp), %xmm0\n  movdqu 16(%rsp), %xmm1\n"                                  \
            "  movdqu 32(%rsp), %xmm2\n  movdqu 48(%rsp), %xmm3\n"                                 \
            "  movdqu 64(%rsp), %xmm4\n  movdqu 80(%rsp), %xmm5\n"                                 \
            "  movdqu 96(%rsp), %xmm6\n  movdqu 112(%rsp), %xmm7\n"                                \
            "  addq $136, %rsp\n  .cfi_adjust_cfa_offset -136\n"                                   \
            "  popq %r9\n  .cfi_adjust_cfa_offset -8\n"                                            \
            "  popq %r8\n  .cfi_adjust_cfa_offset -8\n"                                            \
            "  popq %rcx\n  .cfi_adjust_cfa_offset -8\n"                                           \
            "  popq %rdx\n  .cfi_adjust_cfa_offset -8\n"                                           \
            "  popq %rsi\n  .cfi_adjust_cfa_offset -8\n"                                           \
            "  popq %rdi\n  .cfi_adjust_cfa_offset -8\n"                                           \
            "  jmp *%rax\n"                                                                        \
            "  .cfi_endproc\n"                                                                     \
            ".size " #sym ", .-" #sym "\n");
/* clang-format on */

#else

#include "shim/forward_words.h"

typedef uintptr_t (*amp_words_fn)(AMP_WORD_TYPES);
void amp_region_hook_leave_c(int hook, int opened);
#define AMP_DEFINE_FP32_REGION_HOOK(sym, device)                                                   \
    AMP_EXPORT uintptr_t sym(AMP_WORD_PARAMS)                                                      \
    {                                                                                              \
        void *ret = __builtin_return_address(0);                                                   \
        amp_words_fn real = (amp_words_fn)amp_region_hook_enter(AMP_HOOK_##sym, device, &ret);     \
        int opened = ret != __builtin_return_address(0);                                           \
        uintptr_t status = real(AMP_WORD_ARGS);                                                    \
        amp_region_hook_leave_c(AMP_HOOK_##sym, opened);                                           \
        return status;                                                                             \
    }

#endif

#endif
