/* The fp32 regions of the region hooks (shim/region_hook.h): a per-thread
 * stack of frames, one per routine running in a region, each holding the
 * caller's return address that the landing gives back.
 *
 * A frame is dead when its routine will never return to the landing: an
 * xerbla that longjmps out of LAPACK (R's does), a thread's stack unwound
 * past it. It is recognised by its return slot: while the routine runs,
 * the slot (the word at the frame's stack address, above the routine's own
 * frames) holds the landing's address, which nothing but a return or an
 * unwinding overwrites; and a frame on the current stack whose slot lies
 * below the stack pointer of the program's current call (the call is not
 * nested inside the routine) has been left as well. Dead frames are dropped,
 * their regions closed, before a new one is opened; the longjmp hooks at the
 * end of this file close those a jump leaves at the jump itself, so a
 * longjmp out of LAPACK does not keep the thread in fp32 for the rest of its
 * life. (The hooks' fast path knows nothing of frames.)
 *
 * Not in the control block: ampctl can write that, and nothing it writes
 * may steer a return. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/decide.h"
#include "runtime/export.h"
#include "runtime/log.h"
#include "runtime/products.h"
#include "shim/region_hook.h"
#include "shim/resolve.h"

/* Deeper nesting of region routines (a routine calling back into the
 * program, which calls another) runs the inner ones without a region. */
#define AMP_REGION_FRAMES 16

struct amp_region_frame {
    void *ret;   /* the caller's return address */
    void **slot; /* where it was, on the caller's stack */
    uint16_t hook;
};

static __thread struct amp_region_frame frames[AMP_REGION_FRAMES]
    __attribute__((tls_model("initial-exec")));
static __thread uint32_t amp_tls_region_frames __attribute__((tls_model("initial-exec")));

#if defined(__x86_64__) && defined(__ELF__)
/* The routine returns here: rax/rdx and xmm0/xmm1 hold what it returned.
 * It has no unwind information of its own (its caller is only known at run
 * time), so an unwinder stops at a routine running in a region. */
void amp_region_landing(void);
__attribute__((used, visibility("hidden"))) void *amp_region_hook_leave(void **slot);
__asm__(".text\n"
        ".p2align 4\n"
        ".type amp_region_landing, @function\n"
        "amp_region_landing:\n"
        "  pushq %rax\n"
        "  pushq %rdx\n"
        "  subq $32, %rsp\n"
        "  movdqu %xmm0, 0(%rsp)\n"
        "  movdqu %xmm1, 16(%rsp)\n"
        "  leaq 40(%rsp), %rdi\n" /* the slot the return address was in */
        "  call amp_region_hook_leave\n"
        "  movq %rax, %r11\n"
        "  movdqu 0(%rsp), %xmm0\n"
        "  movdqu 16(%rsp), %xmm1\n"
        "  addq $32, %rsp\n"
        "  popq %rdx\n"
        "  popq %rax\n"
        "  jmp *%r11\n"
        ".size amp_region_landing, .-amp_region_landing\n");
#define AMP_LANDING ((void *)amp_region_landing)
#else
static const char landing_mark;
#define AMP_LANDING ((void *)&landing_mark)
#endif

/* A CET shadow stack checks every return against its own copy: a replaced
 * return address would end the program. With one active, region routines run
 * without the region (they are counted all the same). */
static int return_swap_allowed(void)
{
    static _Atomic int answer; /* 0 unknown, 1 yes, 2 no */
    int a = atomic_load_explicit(&answer, memory_order_relaxed);
    if (a == 0) {
        unsigned long features = 0;
#if defined(__x86_64__) && defined(SYS_arch_prctl)
        /* ARCH_SHSTK_STATUS; kernels without shadow stacks answer EINVAL. */
        if (syscall(SYS_arch_prctl, 0x5005, &features) != 0)
            features = 0;
#endif
        a = (features & 1) ? 2 : 1;
        atomic_store_explicit(&answer, a, memory_order_relaxed);
    }
    return a == 1;
}

static void close_region(struct amp_thread *t, uint16_t hook)
{
    if (t) {
        t->fp32_depth -= t->fp32_depth > 0;
        amp_count(t, hook, AMP_CTL_FP32, 1);
    }
}

static int on_signal_stack(void)
{
    stack_t ss;
    return sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
}

/* Frames of routines left without returning are kept here a while: should
 * one be judged left wrongly (a routine on another stack, a fiber's, that
 * is only suspended), its landing still finds its return address. */
#define AMP_REGION_LEFT 16
static __thread struct amp_region_frame left_frames[AMP_REGION_LEFT]
    __attribute__((tls_model("initial-exec")));
static __thread uint32_t left_next __attribute__((tls_model("initial-exec")));

/* Drops the newest frames while dead(frame): stops at the first live one
 * (older frames lie above it on the stack and are live as well). sp: the
 * stack pointer of the program's current call (the slot of a live frame
 * lies above it); by_sp_only: sp is a jump's target, sure to be on the
 * frames' stack. */
static void prune_while(uintptr_t sp, int by_sp_only)
{
    int same_stack = by_sp_only || !on_signal_stack();
    struct amp_thread *t = amp_tls_thread;
    uint32_t n = amp_tls_region_frames;
    while (n > 0) {
        struct amp_region_frame *f = &frames[n - 1];
        int dead =
            (same_stack && (uintptr_t)f->slot < sp) || (!by_sp_only && *f->slot != AMP_LANDING);
        if (!dead)
            break;
        left_frames[left_next++ % AMP_REGION_LEFT] = *f;
        n--;
        atomic_signal_fence(memory_order_seq_cst);
        amp_tls_region_frames = n;
        atomic_signal_fence(memory_order_seq_cst);
        close_region(t, f->hook);
    }
}

void *amp_region_hook_enter(int hook, int device, void **slot)
{
    amp_tls_caller = *slot;
    void *real = amp_real((enum amp_hook_id)hook);
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return real;
#if defined(__x86_64__) && defined(__ELF__)
    /* A CPU LAPACK routine's matrix, matched with the lowered products
     * (runtime/products.h): the stub pushed the argument registers just
     * below the return address, rdi first; the seventh and later arguments
     * lie above it, on the caller's stack. */
    if (device == AMP_DEVICE_CPU && t->fp32_depth == 0 && !amp_call_from_library(amp_tls_caller)) {
        void *regs[6];
        for (int i = 0; i < 6; i++)
            regs[i] = slot[-1 - i];
        amp_products_consumer(hook, regs, (void *const *)(slot + 1));
    }
#endif
    if (amp_tls_region_frames)
        prune_while((uintptr_t)(slot + 1), 0);
    enum amp_outcome o =
        amp_decide_as(t, (enum amp_device)device, (enum amp_hook_id)hook, 0, AMP_DECIDE_REGION)
            .outcome;
    uint32_t n = amp_tls_region_frames;
    if (o != AMP_OUTCOME_FP32 || n == AMP_REGION_FRAMES || !return_swap_allowed()) {
        /* No region: counted now (a region routine is never lowered). */
        amp_count(t, (enum amp_hook_id)hook,
                  amp_outcome_counter(o == AMP_OUTCOME_LOWERED ? AMP_OUTCOME_PASSTHROUGH : o), 1);
        return real;
    }
    /* In this order: a signal handler's call in between never sees a frame
     * whose slot does not hold the landing yet. */
    frames[n] = (struct amp_region_frame){*slot, slot, (uint16_t)hook};
    *slot = AMP_LANDING;
    t->fp32_depth++;
    atomic_signal_fence(memory_order_seq_cst);
    amp_tls_region_frames = n + 1;
    return real;
}

/* The landing's half: finds the frame whose slot this is, closes its region
 * (and those of newer frames left without returning), returns the caller's
 * return address. */
__attribute__((used, visibility("hidden"))) void *amp_region_hook_leave(void **slot)
{
    struct amp_thread *t = amp_tls_thread;
    uint32_t n = amp_tls_region_frames;
    while (n > 0) {
        struct amp_region_frame f = frames[n - 1];
        n--;
        amp_tls_region_frames = n;
        atomic_signal_fence(memory_order_seq_cst);
        close_region(t, f.hook);
        if (f.slot == slot)
            return f.ret;
        left_frames[left_next++ % AMP_REGION_LEFT] = f;
    }
    for (uint32_t i = 0; i < AMP_REGION_LEFT; i++)
        if (left_frames[i].slot == slot) {
            left_frames[i].slot = NULL;
            return left_frames[i].ret;
        }
    /* Only a frame this thread pushed returns here; its entry cannot be
     * missing unless memory was overwritten. */
    amp_log(AMP_LOG_ERROR, "an fp32-region routine returned without its frame; aborting");
    abort();
}

#if !(defined(__x86_64__) && defined(__ELF__))
void amp_region_hook_leave_c(int hook, int opened)
{
    (void)hook;
    if (opened && amp_tls_region_frames)
        amp_region_hook_leave(frames[amp_tls_region_frames - 1].slot);
}
#endif

/* ---- longjmp: the sure way to know which frames a jump leaves ----
 *
 * longjmp, _longjmp, siglongjmp and __longjmp_chk are interposed on x86-64
 * glibc: before the jump, every frame below the stack pointer it restores
 * is closed. glibc keeps that pointer in the jmp_buf mangled with the
 * thread's pointer guard (xor with %fs:0x30, rotated left 17 bits), which
 * is undone here as debuggers and sanitizers do. A jump to another stack
 * (a target below the current stack pointer) closes nothing. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__)
#include <setjmp.h>

typedef void (*amp_longjmp_fn)(struct __jmp_buf_tag *, int);
enum { AMP_LJ_LONGJMP, AMP_LJ__LONGJMP, AMP_LJ_SIGLONGJMP, AMP_LJ_CHK, AMP_LJ_COUNT };
static const char *const longjmp_names[AMP_LJ_COUNT] = {"longjmp", "_longjmp", "siglongjmp",
                                                        "__longjmp_chk"};
static amp_longjmp_fn real_longjmp[AMP_LJ_COUNT];

void amp_longjmp_hook_init(void)
{
    for (int i = 0; i < AMP_LJ_COUNT; i++)
        real_longjmp[i] = (amp_longjmp_fn)dlsym(RTLD_NEXT, longjmp_names[i]);
}

static void jump_leaves_frames(struct __jmp_buf_tag *env)
{
    if (!amp_tls_region_frames)
        return;
    uintptr_t guard, m = (uintptr_t)env->__jmpbuf[6];
    __asm__("movq %%fs:0x30, %0" : "=r"(guard));
    uintptr_t target_sp = ((m >> 17) | (m << 47)) ^ guard;
    if (target_sp > (uintptr_t)__builtin_frame_address(0))
        prune_while(target_sp, 1);
}

static __attribute__((noreturn)) void jump(int which, struct __jmp_buf_tag *env, int val)
{
    jump_leaves_frames(env);
    amp_longjmp_fn real = real_longjmp[which];
    if (!real)
        real = (amp_longjmp_fn)dlsym(RTLD_NEXT, longjmp_names[which]);
    real(env, val);
    __builtin_unreachable();
}

AMP_EXPORT void longjmp(struct __jmp_buf_tag env[1], int val)
{
    jump(AMP_LJ_LONGJMP, env, val);
}

AMP_EXPORT void _longjmp(struct __jmp_buf_tag env[1], int val)
{
    jump(AMP_LJ__LONGJMP, env, val);
}

AMP_EXPORT void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
    jump(AMP_LJ_SIGLONGJMP, env, val);
}

AMP_EXPORT void __longjmp_chk(struct __jmp_buf_tag env[1], int val);
AMP_EXPORT void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
    jump(AMP_LJ_CHK, env, val);
}
#else
void amp_longjmp_hook_init(void)
{
}
#endif
