/* ampctl's access to other processes: their ids, their control blocks
 * (found by runtime/control_find.h, mapped and checked here) and their
 * command lines. */
#include "blocks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/control_find.h"

/* A process or thread id: digits only, within pid_t (a larger number is no
 * id at all, not the largest one). */
long ampctl_parse_pid(const char *s)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return !*end && errno == 0 && v > 0 && v <= INT_MAX ? v : -1;
}

/* Maps the block behind one descriptor of PID (/proc/PID/fd/N), checked:
 * NULL with a reason in why. */
static struct amp_ctl_block *map_block(long pid, const char *fd_path, int writable, char *why,
                                       size_t whylen)
{
    /* A /proc magic link: opened through (O_NOFOLLOW would refuse it); what it
     * leads to is checked below. */
    int fd = open(fd_path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open the control block of %ld: %s", pid, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077)) {
        close(fd);
        snprintf(why, whylen,
                 "the control block of %ld is not owned by you with mode 0600: refused", pid);
        return NULL;
    }
    /* The header first: a block of another release has another size, and
     * its layout version says so better than its length. */
    struct {
        uint64_t magic;
        uint32_t version;
    } head; /* the block's first fields (the block itself is megabytes: not on a stack) */
    _Static_assert(offsetof(struct amp_ctl_block, magic) == 0 &&
                       offsetof(struct amp_ctl_block, version) == 8,
                   "the header's place");
    ssize_t got = pread(fd, &head, sizeof head, 0);
    if (got == (ssize_t)sizeof head && head.magic == AMP_CTL_MAGIC &&
        head.version != AMP_CTL_VERSION) {
        close(fd);
        snprintf(why, whylen,
                 "the control block of %ld has layout version %u; this ampctl reads version %u "
                 "(another ampshim release: use the ampctl of the program's shim)",
                 pid, head.version, AMP_CTL_VERSION);
        return NULL;
    }
    if ((size_t)st.st_size < sizeof(struct amp_ctl_block)) {
        close(fd);
        snprintf(why, whylen, "the control block of %ld is truncated (%lld bytes)", pid,
                 (long long)st.st_size);
        return NULL;
    }
    void *mem = mmap(NULL, sizeof(struct amp_ctl_block),
                     writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED) {
        snprintf(why, whylen, "cannot map the control block of %ld: %s", pid, strerror(errno));
        return NULL;
    }
    const char *problem = amp_ctl_block_problem(mem, (size_t)st.st_size);
    if (!problem && ((const struct amp_ctl_block *)mem)->pid != pid)
        problem = "it names another process";
    if (problem) {
        munmap(mem, sizeof(struct amp_ctl_block));
        snprintf(why, whylen, "the control block of %ld is refused: %s", pid, problem);
        return NULL;
    }
    return mem;
}

/* Maps PID's control block: the memfd named AMP_CTL_MEMFD_NAME among its
 * descriptors whose block names PID (a forked child may still hold its
 * parent's until it makes its own). NULL with a reason in why. */
struct found {
    long pid;
    int writable;
    struct amp_ctl_block *b;
    char why[256];
};

static int try_block(const char *fd_path, void *arg)
{
    struct found *f = arg;
    f->b = map_block(f->pid, fd_path, f->writable, f->why, sizeof f->why);
    return f->b != NULL;
}

struct amp_ctl_block *ampctl_open_block(long pid, int writable, char *why, size_t whylen)
{
    struct found f = {.pid = pid, .writable = writable};
    if (amp_ctl_each_block_fd(pid, try_block, &f) < 0) {
        int err = errno;
        char proc[64];
        struct stat st;
        snprintf(proc, sizeof proc, "/proc/%ld", pid);
        if (stat(proc, &st) != 0)
            snprintf(why, whylen, "no such process: %ld", pid);
        else if (st.st_uid != getuid())
            snprintf(why, whylen, "process %ld belongs to another user", pid);
        else
            snprintf(why, whylen, "cannot list the descriptors of process %ld: %s", pid,
                     strerror(err));
        return NULL;
    }
    if (!f.b) {
        if (f.why[0])
            snprintf(why, whylen, "%s", f.why);
        else
            snprintf(why, whylen,
                     "process %ld has no ampshim control block (not under the shim, "
                     "AMPSHIM_CONTROL=0, or no BLAS call yet)",
                     pid);
    }
    return f.b;
}

void ampctl_close_block(struct amp_ctl_block *b)
{
    munmap(b, sizeof *b);
}

/* A process's command line, its arguments joined by spaces (control
 * characters shown as '?'), cut at size - 1; "" when it cannot be read. */
void ampctl_command_line(long pid, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, size - 1);
    close(fd);
    if (n <= 0)
        return;
    while (n > 0 && out[n - 1] == 0) /* the last argument's end */
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == 0)
            out[i] = ' ';
        else if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
            out[i] = '?';
    out[n] = 0;
}
