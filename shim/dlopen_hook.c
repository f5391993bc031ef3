/* Noticing libraries loaded after the first hooked call: dlopen is
 * interposed by an x86-64 stub that bumps the control generation (so every
 * thread's next hooked call takes the slow path, where runtime/threads.c
 * asks shim/resolve.c whether a new object defines a hooked name that so far
 * had one definer) and then jumps to the real dlopen. A jump, not a call:
 * glibc's dlopen judges its caller by its return address (the caller's
 * RUNPATH, $ORIGIN and namespace), which must stay the program's. The bump
 * comes before the load; a thread that looks in between sees the object at
 * its next bump. Elsewhere than x86-64 dlopen is not interposed. */
#include <dlfcn.h>
#include <stdatomic.h>

#include "runtime/control.h"
#include "runtime/export.h"

#if defined(__x86_64__) && defined(__ELF__)

/* The real dlopen, found at load (shim/load.c) before any program code runs;
 * a dlopen made earlier than that (another preload's constructor) goes
 * through dlopen_unresolved. */
__attribute__((used, visibility("hidden"))) void *(*amp_real_dlopen)(const char *, int);

__attribute__((used, visibility("hidden"))) void *amp_dlopen_unresolved(const char *file, int mode)
{
    void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    return real ? real(file, mode) : NULL;
}

void amp_dlopen_hook_init(void)
{
    amp_real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
}

#ifdef __CET__
#define AMP_DLOPEN_ENDBR "  endbr64\n"
#else
#define AMP_DLOPEN_ENDBR ""
#endif

__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        ".p2align 4\n"
        "dlopen:\n"
        "  .cfi_startproc\n" AMP_DLOPEN_ENDBR
        "  movq amp_real_dlopen(%rip), %rax\n"
        "  testq %rax, %rax\n"
        "  jz 1f\n"
        "  movq amp_ctl_generation(%rip), %r11\n"
        "  lock incq (%r11)\n"
        "  jmp *%rax\n"
        "1:\n"
        "  jmp amp_dlopen_unresolved\n"
        "  .cfi_endproc\n"
        ".size dlopen, .-dlopen\n");

#else

void amp_dlopen_hook_init(void)
{
}

#endif
