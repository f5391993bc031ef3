/* libampshim.so's load and unload: read the environment once at load (so
 * AMPSHIM_STRICT can stop a misconfigured run before main), print the exit
 * report at unload. */
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/export.h"
#include "runtime/accuracy_audit.h"
#include "runtime/report.h"
#include "runtime/threads.h"
#include "runtime/log.h"
#include "runtime/control.h"
#include "shim/fork.h"
#include "shim/resolve.h"

void amp_dlopen_hook_init(void);
void amp_longjmp_hook_init(void);
static void report_at_sigterm(void);

/* A second copy of the library in one process (two LD_PRELOAD entries, a
 * program that dlopens another build): the copy found second stays inert,
 * so no call is intercepted twice and ampctl steers the one that works. */
static void notice_other_copy(void)
{
    /* Compared by object: a reference to ampshim_version from here would
     * bind to the first copy's too. */
    void *first = dlsym(RTLD_DEFAULT, "ampshim_version");
    Dl_info other, self;
    if (first && dladdr(first, &other) && dladdr((void *)notice_other_copy, &self) &&
        other.dli_fbase != self.dli_fbase)
        amp_runtime_other_copy(other.dli_fname ? other.dli_fname : "?",
                               self.dli_fname ? self.dli_fname : "?");
}

/* A thread's refresh after a dlopen: the hooked names defined again, and
 * oneDNN inside a library loaded since (patched only where no other thread
 * can have run it: the dlsym that follows a dlopen looks first). */
static void notice_new_objects(void)
{
    amp_resolve_notice_new_objects();
    amp_resolve_look_inside(1);
}

__attribute__((constructor)) static void ampshim_load(void)
{
    /* Each thread's refresh after a dlopen (whose hook bumps the
     * generation) looks for objects that define a hooked name again. */
    amp_runtime_on_refresh(notice_new_objects);
    amp_dlopen_hook_init();
    amp_longjmp_hook_init();
    notice_other_copy();
    amp_runtime_init();
    if (!amp_fork_install() && amp_mode() == AMP_MODE_ACTIVE) {
        amp_log(AMP_LOG_ERROR, "cannot set up fork handlers; autocast is off in this process");
        atomic_store_explicit(&amp_rt.mode, AMP_MODE_INERT, memory_order_release);
    }
    report_at_sigterm();
    /* Before main, no thread has run the libraries loaded with it. */
    amp_resolve_look_inside(0);
}

/* The reports (AMPSHIM_REPORT, the audit's), once per process: at unload,
 * or at _exit for a process that ends without running destructors. Only
 * the process whose block holds the counters writes them: a vfork child
 * shares its parent's memory and has another pid. */
static _Atomic long reported_by, reports_done_by;
static _Atomic int sigterm_pending; /* one came while they were written */

static void write_reports(void)
{
    long pid = (long)getpid();
    if (atomic_load(&amp_rt.mode) != AMP_MODE_ACTIVE || !amp_ctl || amp_ctl->pid != pid)
        return;
    if (atomic_exchange(&reported_by, pid) == pid) {
        /* Another thread writes them (a SIGTERM handled on a BLAS worker
         * while the main thread reaches _exit): wait for it, up to 2 s. */
        for (int i = 0; i < 2000 && atomic_load(&reports_done_by) != pid; i++)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        return;
    }
    amp_report_print();
    amp_audit_print();
    atomic_store(&reports_done_by, pid);
    /* A SIGTERM that came while they were written (a pool worker at _exit,
     * which Pool.terminate signals too) waited for them (on_sigterm). */
    if (atomic_load(&sigterm_pending))
        raise(SIGTERM);
}

__attribute__((destructor)) static void ampshim_unload(void)
{
    write_reports();
}

/* _exit and _Exit (Python's os._exit, multiprocessing's pool workers):
 * the reports first, then the next definition (another preload's, or
 * libc's), found at load. */
static void (*next_exit)(int);
static void (*next_Exit)(int);

__attribute__((constructor)) static void find_next_exits(void)
{
    *(void **)&next_exit = dlsym(RTLD_NEXT, "_exit");
    *(void **)&next_Exit = dlsym(RTLD_NEXT, "_Exit");
}

static _Noreturn void end_process(void (*next)(int), int status)
{
    write_reports();
    if (next)
        next(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

AMP_EXPORT _Noreturn void _exit(int status)
{
    end_process(next_exit, status);
}

AMP_EXPORT _Noreturn void _Exit(int status)
{
    end_process(next_Exit ? next_Exit : next_exit, status);
}

/* SIGTERM (Pool.terminate, the end of a multiprocessing.Pool with-block,
 * kill): where a report was asked for and the program left SIGTERM at its
 * default, the process writes its reports, then dies of the same signal,
 * as it would have. The handler is installed at load only then; a handler
 * the program installs later replaces it, and exec resets it.
 *
 * Writing a report takes locks (the C library's malloc and stdio), so it is
 * written only where the interrupted thread cannot hold one of them: it
 * was not inside the C library, or was waiting in a system call there (an
 * idle worker blocked in read or a futex: the instruction before the one
 * it resumes at is a syscall). Anywhere else in the C library the process
 * dies at once, without its report, as it would have without the shim.
 * The shim's own locks are taken with signals blocked, so the handler is
 * never inside one. Should the report still wait on a lock another thread
 * holds, an alarm ends the process by SIGTERM two seconds later all the
 * same. A SIGTERM that comes while the reports are being written (at _exit,
 * or by another thread) lets them finish, the alarm behind it, and the
 * writer raises it when they are done. SA_RESETHAND puts the default back
 * on entry and SA_NODEFER leaves SIGTERM deliverable, so raising it ends
 * the process. */
enum { LIBC_RANGES = 4 };
static uintptr_t libc_text[LIBC_RANGES][2];

static int libc_segments(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    if (info->dlpi_addr != (uintptr_t)base)
        return 0;
    int n = 0;
    for (int i = 0; i < info->dlpi_phnum && n < LIBC_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            libc_text[n][0] = info->dlpi_addr + ph->p_vaddr;
            libc_text[n][1] = libc_text[n][0] + ph->p_memsz;
            n++;
        }
    }
    return 1;
}

/* Whether a report may be written from a thread interrupted at pc. */
static int report_safe_at(uintptr_t pc)
{
    for (int i = 0; i < LIBC_RANGES && libc_text[i][1]; i++)
        if (pc >= libc_text[i][0] && pc < libc_text[i][1]) {
            const unsigned char *op = (const unsigned char *)pc;
            return pc - 2 >= libc_text[i][0] && op[-2] == 0x0f && op[-1] == 0x05; /* syscall */
        }
    return 1;
}

static void end_by_sigterm(int unused)
{
    (void)unused;
    raise(SIGTERM);
}

static void on_sigterm(int sig, siginfo_t *info, void *context)
{
    (void)info;
    long pid = (long)getpid();
    if (atomic_load(&reported_by) == pid && atomic_load(&reports_done_by) != pid) {
        atomic_store(&sigterm_pending, 1);
        signal(SIGALRM, end_by_sigterm);
        alarm(2);
        return;
    }
    uintptr_t pc = 0;
#if defined(__x86_64__)
    pc = (uintptr_t)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
#else
    (void)context; /* the pc is not read here: the report is written, the alarm behind it */
#endif
    if (report_safe_at(pc)) {
        signal(SIGALRM, end_by_sigterm);
        alarm(2);
        write_reports();
    }
    raise(sig);
}

static void report_at_sigterm(void)
{
    struct sigaction old,
        sa = {.sa_sigaction = on_sigterm, .sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER};
    Dl_info libc;
    if (atomic_load(&amp_rt.mode) != AMP_MODE_ACTIVE ||
        (amp_rt.cfg.report == AMP_REPORT_OFF &&
         amp_live_load(&amp_rt.cfg.audit) == AMP_AUDIT_OFF) ||
        sigaction(SIGTERM, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
        old.sa_handler != SIG_DFL || !dladdr((void *)sigaction, &libc) || !libc.dli_fbase)
        return;
    dl_iterate_phdr(libc_segments, libc.dli_fbase);
    if (!libc_text[0][1])
        return; /* the C library's code not found: no report at SIGTERM */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

#include "ampshim.h"

#define AMP_STR2(x) #x
#define AMP_STR(x) AMP_STR2(x)

AMP_EXPORT const char *ampshim_version(void)
{
    return AMP_STR(AMPSHIM_VERSION_MAJOR) "." AMP_STR(AMPSHIM_VERSION_MINOR) "." AMP_STR(
        AMPSHIM_VERSION_PATCH);
}
