/* The loader's entry points the shim interposes.
 *
 * dlclose: after an object is unloaded, hooks resolved into it resolve again
 * at their next call (shim/resolve.c), instead of jumping into unmapped code,
 * and what was cached about callers in it is forgotten (runtime/callers.c).
 *
 * dlsym: a lookup that lands on one of the shim's hook entry points for a
 * name no loaded library defines answers NULL, as it would without the
 * shim: programs probe for optional functions (cblas_sgemm, cublasLtMatmul)
 * with dlsym(RTLD_DEFAULT) or ctypes and take a fallback when absent. Only
 * lookups in the global scope can land on a hook: RTLD_DEFAULT and the
 * program's own handle (dlopen(NULL), what ctypes.CDLL(None) holds) are
 * looked up from here; every other handle, and RTLD_NEXT, is forwarded by a
 * jump, so glibc (and an LD_AUDIT module) sees the caller's own return
 * address. x86-64 only. A weak reference bound by the loader itself is not
 * covered: it binds to the hook.
 *
 * Noticing libraries loaded after the first hooked call: dlopen is
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

#include "shim/resolve.h"

#include "runtime/sites.h"
#include "runtime/site_time.h"
#include "runtime/accuracy_audit.h"
#include "runtime/control.h"
#include "runtime/export.h"
#include "runtime/threads.h"

static int (*real_dlclose)(void *);
static void *(*real_dlsym)(void *, const char *);

/* The code below may run before the program's sanitizer runtime is set up
 * (its start-up makes dlsym calls that reach this file): it is not
 * instrumented and calls nothing that is until the shim's constructor ran. */
#define AMP_LOADER_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))
static _Atomic int loader_ready;

/* Found with dlvsym, which is not interposed (dlsym here would be this
 * file's own); glibc 2.34 moved both into libc with a new version. */
AMP_LOADER_EARLY static void *next_versioned(const char *name)
{
    void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");
    return p ? p : dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
}

AMP_LOADER_EARLY static void loader_hooks_init(void)
{
    real_dlclose = (int (*)(void *))next_versioned("dlclose");
    real_dlsym = (void *(*)(void *, const char *))next_versioned("dlsym");
}

AMP_LOADER_EARLY AMP_EXPORT int dlclose(void *handle)
{
    if (!real_dlclose)
        loader_hooks_init();
    if (!real_dlclose)
        return -1;
    int status = real_dlclose(handle);
    if (atomic_load_explicit(&loader_ready, memory_order_acquire)) {
        /* Answers kept by return address (AMPSHIM_CALLERS, call-site
         * policy, "a library calling itself", the audit's sites) must not
         * pass to a library loaded later at the same address. */
        if (amp_resolve_notice_unloads()) {
            amp_callers_forget_unloaded();
            amp_audit_forget_unloaded();
            amp_sites_forget_unloaded();
        }
    }
    return status;
}

/* The dlopen count the last dlsym looked at (amp_dlsym_notice). */
__attribute__((used, visibility("hidden"))) _Atomic uint64_t amp_dlsym_looked;

/* A dlsym after a dlopen: the objects it loaded are looked at (oneDNN
 * inside one of them is reached before its code can run). */
__attribute__((used, visibility("hidden"))) void amp_dlsym_notice(void)
{
    if (!atomic_load_explicit(&loader_ready, memory_order_acquire))
        return;
    atomic_store_explicit(&amp_dlsym_looked,
                          atomic_load_explicit(&amp_dlopen_calls, memory_order_acquire),
                          memory_order_release);
    amp_resolve_look_inside(0);
}

/* dlsym in the global scope (RTLD_DEFAULT, the program's handle), and any
 * lookup made before the shim's constructor. */
AMP_LOADER_EARLY __attribute__((used, visibility("hidden"))) void *amp_dlsym_c(void *handle,
                                                                               const char *name)
{
    if (!real_dlsym)
        loader_hooks_init();
    if (!real_dlsym)
        return NULL;
    void *p = real_dlsym(handle, name);
    if (!atomic_load_explicit(&loader_ready, memory_order_acquire))
        return p;
    if (atomic_load_explicit(&amp_dlopen_calls, memory_order_relaxed) !=
        atomic_load_explicit(&amp_dlsym_looked, memory_order_relaxed))
        amp_dlsym_notice();
    /* Reached by a jump from the stub: the return address is the caller's. */
    return amp_resolve_hides(p, name, __builtin_return_address(0)) ? NULL : p;
}

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

__attribute__((used, visibility("hidden"))) void *(*amp_real_dlsym_next)(void *, const char *);
__attribute__((used, visibility("hidden"))) void *amp_program_handle;

AMP_LOADER_EARLY __attribute__((used, visibility("hidden"))) void *amp_dlsym_early(void)
{
    loader_hooks_init();
    return (void *)real_dlsym;
}

void amp_dlopen_hook_init(void)
{
    amp_real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    loader_hooks_init();
    amp_real_dlsym_next = real_dlsym;
    amp_program_handle = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
    atomic_store_explicit(&loader_ready, 1, memory_order_release);
}

#ifdef __CET__
#define AMP_DLOPEN_ENDBR "  endbr64\n"
#else
#define AMP_DLOPEN_ENDBR ""
#endif

/* The instructions stay one to a line. */
/* clang-format off */
__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        ".p2align 4\n"
        "dlopen:\n"
        "  .cfi_startproc\n" AMP_DLOPEN_ENDBR
        "  movq amp_real_dlopen(%rip), %rax\n"
        "  testq %rax, %rax\n"
        "  jz 1f\n"
        "  lock incq amp_dlopen_calls(%rip)\n"
        "  movq amp_ctl_generation(%rip), %r11\n"
        "  lock incq (%r11)\n"
        "  jmp *%rax\n"
        "1:\n"
        "  jmp amp_dlopen_unresolved\n"
        "  .cfi_endproc\n"
        ".size dlopen, .-dlopen\n");

__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        ".p2align 4\n"
        "dlsym:\n"
        "  .cfi_startproc\n" AMP_DLOPEN_ENDBR
        "  testq %rdi, %rdi\n" /* RTLD_DEFAULT */
        "  jz 1f\n"
        "  cmpq amp_program_handle(%rip), %rdi\n"
        "  je 1f\n"
        "  movq amp_real_dlsym_next(%rip), %rax\n"
        "  testq %rax, %rax\n"
        "  jnz 2f\n"
        /* Before the constructor (a sanitizer runtime's start-up looks up
         * its interceptors' next definitions): find the real dlsym first. */
        "  pushq %rdi\n"
        "  pushq %rsi\n"
        "  subq $8, %rsp\n"
        "  call amp_dlsym_early\n"
        "  addq $8, %rsp\n"
        "  popq %rsi\n"
        "  popq %rdi\n"
        "  testq %rax, %rax\n"
        "  jz 1f\n"
        "2:\n"
        /* The first lookup after a dlopen: oneDNN inside what it loaded is
         * looked for before any of its code can run. */
        "  movq amp_dlopen_calls(%rip), %r11\n"
        "  cmpq amp_dlsym_looked(%rip), %r11\n"
        "  jne 3f\n"
        "4:\n"
        "  jmp *%rax\n"
        "3:\n"
        "  pushq %rdi\n"
        "  pushq %rsi\n"
        "  pushq %rax\n"
        "  call amp_dlsym_notice\n"
        "  popq %rax\n"
        "  popq %rsi\n"
        "  popq %rdi\n"
        "  jmp 4b\n"
        "1:\n"
        "  jmp amp_dlsym_c\n"
        "  .cfi_endproc\n"
        ".size dlsym, .-dlsym\n");
/* clang-format on */

#else

void amp_dlopen_hook_init(void)
{
}

#endif
