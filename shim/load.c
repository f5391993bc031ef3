/* libampshim.so's load and unload: read the environment once at load (so
 * AMPSHIM_STRICT can stop a misconfigured run before main), print the exit
 * report at unload. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
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

__attribute__((constructor)) static void ampshim_load(void)
{
    /* Each thread's refresh after a dlopen (whose hook bumps the
     * generation) looks for objects that define a hooked name again. */
    amp_runtime_on_refresh(amp_resolve_notice_new_objects);
    amp_dlopen_hook_init();
    amp_longjmp_hook_init();
    notice_other_copy();
    amp_runtime_init();
    if (!amp_fork_install() && amp_mode() == AMP_MODE_ACTIVE) {
        amp_log(AMP_LOG_ERROR, "cannot set up fork handlers; autocast is off in this process");
        atomic_store_explicit(&amp_rt.mode, AMP_MODE_INERT, memory_order_release);
    }
}

/* The reports (AMPSHIM_REPORT, the audit's), once per process: at unload,
 * or at _exit for a process that ends without running destructors. Only
 * the process whose block holds the counters writes them: a vfork child
 * shares its parent's memory and has another pid. */
static _Atomic long reported_by;

static void write_reports(void)
{
    long pid = (long)getpid();
    if (atomic_load(&amp_rt.mode) != AMP_MODE_ACTIVE || !amp_ctl || amp_ctl->pid != pid ||
        atomic_exchange(&reported_by, pid) == pid)
        return;
    amp_report_print();
    amp_audit_print();
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

#include "ampshim.h"

#define AMP_STR2(x) #x
#define AMP_STR(x) AMP_STR2(x)

AMP_EXPORT const char *ampshim_version(void)
{
    return AMP_STR(AMPSHIM_VERSION_MAJOR) "." AMP_STR(AMPSHIM_VERSION_MINOR) "." AMP_STR(
        AMPSHIM_VERSION_PATCH);
}
