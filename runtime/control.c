/* The control block's whole life: its name, the hash that ties it to one
 * build's generated lists and the check every reader runs before trusting a
 * block it did not write (shared with ampctl); and, in the process that owns
 * it, creation, mapping, the drop after fork, and the unlink at exit. */
#include "runtime/control.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "runtime/threads.h"
#include "runtime/settings.h"

const char *const amp_ctl_counter_names[AMP_CTL_COUNTERS] = {
#define AMP_X_COUNTER(name, NAME, kind, width, description) #name,
    AMPSHIM_COUNTER_LIST(AMP_X_COUNTER)
#undef AMP_X_COUNTER
};

const uint8_t amp_ctl_counter_width[AMP_CTL_COUNTERS] = {
#define AMP_X_COUNTER(name, NAME, kind, width, description) width,
    AMPSHIM_COUNTER_LIST(AMP_X_COUNTER)
#undef AMP_X_COUNTER
};

#define AMP_COUNTER_KIND_OUTCOME 1
#define AMP_COUNTER_KIND_LIBRARY 0
#define AMP_COUNTER_KIND_AMOUNT 0
const uint8_t amp_ctl_counter_is_outcome[AMP_CTL_COUNTERS] = {
#define AMP_X_COUNTER(name, NAME, kind, width, description) AMP_COUNTER_KIND_##kind,
    AMPSHIM_COUNTER_LIST(AMP_X_COUNTER)
#undef AMP_X_COUNTER
};

const uint8_t amp_ctl_counter_is_call[AMP_CTL_COUNTERS] = {
#define AMP_COUNTER_CALL_OUTCOME 1
#define AMP_COUNTER_CALL_LIBRARY 1
#define AMP_COUNTER_CALL_AMOUNT 0
#define AMP_X_COUNTER(name, NAME, kind, width, description) AMP_COUNTER_CALL_##kind,
    AMPSHIM_COUNTER_LIST(AMP_X_COUNTER)
#undef AMP_X_COUNTER
};


uint64_t amp_ctl_list_hash(void)
{
    /* FNV-1a over the names, in order: same lists, same indices. */
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < AMP_OP_COUNT + AMP_HOOK_COUNT; i++) {
        const char *name = i < AMP_OP_COUNT ? amp_op_names[i] : amp_hook_names[i - AMP_OP_COUNT];
        for (const char *p = name; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return h;
}

const char *amp_ctl_block_problem(const void *mem, size_t len)
{
    const struct amp_ctl_block *b = mem;
    if (len < offsetof(struct amp_ctl_block, exe))
        return "truncated: shorter than a block header";
    if (__atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) != AMP_CTL_MAGIC)
        return "not an ampshim control block (bad magic)";
    if (b->version != AMP_CTL_VERSION)
        return "a control block of another layout version (another ampshim release)";
    if (b->size != sizeof *b || len < sizeof *b)
        return "truncated or resized control block";
    if (b->op_count != AMP_OP_COUNT || b->hook_count != AMP_HOOK_COUNT ||
        b->max_threads != AMP_CTL_MAX_THREADS || b->list_hash != amp_ctl_list_hash())
        return "a control block of a build with other op or hook lists";
    return NULL;
}

/* ---- the owner's side ---- */

struct amp_ctl_block *amp_ctl;
static _Atomic uint64_t private_generation;
_Atomic uint64_t *_Atomic amp_ctl_generation = &private_generation;
static size_t ctl_bytes;

static void fill_header(struct amp_ctl_block *b)
{
    b->version = AMP_CTL_VERSION;
    b->size = (uint32_t)sizeof *b;
    b->pid = (int64_t)getpid();
    b->uid = (uint32_t)getuid();
    b->op_count = AMP_OP_COUNT;
    b->hook_count = AMP_HOOK_COUNT;
    b->max_threads = AMP_CTL_MAX_THREADS;
    b->list_hash = amp_ctl_list_hash();
    snprintf(b->exe, sizeof b->exe, "%s", program_invocation_short_name);
    atomic_store(&b->generation, 1);
    amp_settings_publish(b, &amp_rt.cfg);
    memset((void *)b->policy, AMP_CTL_POLICY_NONE, sizeof b->policy);
    /* The magic last, with release: a reader that sees it (with acquire)
     * sees a complete header. */
    __atomic_store_n(&b->magic, AMP_CTL_MAGIC, __ATOMIC_RELEASE);
}

/* The block is a memfd: memory the kernel frees with the last reference,
 * so nothing outlives the process however it ends (exit, _exit, a signal,
 * SIGKILL, exec: the descriptor is close-on-exec). ampctl reaches it through
 * /proc/PID/fd, which the kernel opens only for the same user (the ptrace
 * access check). Its size is sealed: nobody can truncate it under the
 * process (a shared file truncated under a mapping raises SIGBUS). */
static int ctl_fd = -1;

/* Moves fd out of the lowest numbers, which programs expect to get from
 * open() after closing theirs. */
static int out_of_the_way(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, AMP_CTL_FD_FLOOR);
    if (high < 0)
        return fd; /* a small RLIMIT_NOFILE: keep it where it is */
    close(fd);
    return high;
}

static struct amp_ctl_block *create_shared_block(void)
{
    int fd = memfd_create(AMP_CTL_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        amp_log(AMP_LOG_INFO, "no control block (memfd_create: %s); ampctl cannot see this process",
                strerror(errno));
        return NULL;
    }
    fd = out_of_the_way(fd);
    /* Reserve every page now: a block whose pages are first touched on the
     * program's hot path could fail there if memory ran short. No room
     * means no shared block, never a crash. */
    struct amp_ctl_block *b = MAP_FAILED;
    int err = fchmod(fd, 0600) != 0 ? errno : posix_fallocate(fd, 0, (off_t)sizeof *b);
    if (!err && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        err = errno;
    if (err == 0)
        b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (b == MAP_FAILED) {
        amp_log(AMP_LOG_INFO, "no control block (%s); ampctl cannot see this process",
                strerror(err ? err : errno));
        close(fd);
        return NULL;
    }
    ctl_fd = fd;
    return b;
}

uint64_t amp_ctl_create(void)
{
    struct amp_ctl_block *b = NULL;
    if (amp_rt.cfg.control && !getauxval(AT_SECURE))
        b = create_shared_block();
    if (!b) {
        void *p = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 0;
        b = p;
    }
    ctl_bytes = sizeof *b;
    fill_header(b);
    amp_ctl = b;
    atomic_store_explicit(&amp_ctl_generation, &b->generation, memory_order_release);
    return atomic_load(&b->generation);
}

/* The child must not touch its parent's block (the mapping is shared): it
 * unmaps it and closes its copy of the descriptor, and every thread state
 * goes with it. */
void amp_ctl_drop_after_fork(void)
{
    if (amp_ctl) {
        atomic_store(&amp_ctl_generation, &private_generation);
        munmap(amp_ctl, ctl_bytes);
        amp_ctl = NULL;
    }
    if (ctl_fd >= 0)
        close(ctl_fd);
    ctl_fd = -1;
    atomic_fetch_add(&private_generation, 1);
}
