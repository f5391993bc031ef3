/* x86-64 entry stubs for the hooks (BLAS, cuBLAS, cuBLASLt, cuDNN): assembly
 * for a measured reason. A C function cannot forward its own
 * stack-passed arguments without copying them (GCC and clang both reload and
 * re-store every one before a tail call), which costs more than the rest of
 * the fast path together. The stub below never touches an argument register
 * or the stack: it checks, in order, that the real function is resolved, the
 * shim is inert (forward) or active, this thread's state exists, no fp32
 * region is open, and either the thread is not selected or the policy passes
 * the hook through for any beta; then it counts a passthrough and jumps to the
 * real function. Anything else jumps to the hook's C entry, which decides
 * with the full arguments. Uses only rax, r10, r11 (not argument registers in
 * the SysV ABI). Field offsets are checked by _Static_assert in
 * runtime/threads.c. */
#ifndef AMPSHIM_HOOK_STUB_X86_64_H
#define AMPSHIM_HOOK_STUB_X86_64_H

#ifdef __CET__
#define AMP_ENDBR "  endbr64\n"
#else
#define AMP_ENDBR ""
#endif

/* The instructions stay one to a line, commented in a column. */
/* clang-format off */
#define AMP_ENTRY_STUB(sym)                                                                        \
    __asm__(".text\n"                                                                              \
            ".globl " #sym "\n"                                                                    \
            ".type " #sym ", @function\n"                                                          \
            ".p2align 4\n" #sym ":\n"                                                              \
            "  .cfi_startproc\n" AMP_ENDBR                                                         \
            "  movq amp_slot_" #sym "(%rip), %rax\n"     /* real */                                \
            "  testq %rax, %rax\n"                                                                 \
            "  jz 9f\n"                                                                            \
            "  movl amp_rt(%rip), %r10d\n"               /* mode */                                \
            "  cmpl $1, %r10d\n"                         /* AMP_MODE_INERT */                      \
            "  je 8f\n"                                                                            \
            "  cmpl $2, %r10d\n"                         /* AMP_MODE_ACTIVE */                     \
            "  jne 9f\n"                                                                           \
            "  movq amp_tls_thread@gottpoff(%rip), %r10\n"                                         \
            "  movq %fs:(%r10), %r10\n"                  /* this thread's state */                 \
            "  testq %r10, %r10\n"                                                                 \
            "  jz 9f\n"                                                                            \
            "  movq amp_ctl_generation(%rip), %r11\n"    /* the block's generation word */        \
            "  movq (%r11), %r11\n"                                                                \
            "  cmpq %r11, 8(%r10)\n"                     /* ... seen by this thread? */            \
            "  jne 9f\n"                                                                           \
            "  cmpl $0, (%r10)\n"                        /* fp32_depth */                          \
            "  jne 9f\n"                                                                           \
            "  cmpb $0, 4(%r10)\n"                       /* selected */                            \
            "  je 7f\n"                                                                            \
            "  cmpb $0, 5(%r10)\n"                       /* caller_filter */                       \
            "  jne 9f\n"                                                                           \
            "  cmpb $0, amp_slot_" #sym "+13(%rip)\n"    /* passes */                              \
            "  je 9f\n"                                                                            \
            "7:\n"                                                                                 \
            "  movl amp_slot_" #sym "+8(%rip), %r11d\n"  /* passthrough counter offset */          \
            "  incq (%r10,%r11)\n"                                                                 \
            "8:\n"                                                                                 \
            "  jmp *%rax\n"                                                                        \
            "9:\n"                                                                                 \
            "  jmp " #sym "_c\n"                                                                   \
            "  .cfi_endproc\n"                                                                     \
            ".size " #sym ", .-" #sym "\n")
/* clang-format on */

#endif
