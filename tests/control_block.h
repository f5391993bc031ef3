/* Test helper: whether a process holds its ampshim control block, found as
 * ampctl finds it (runtime/control_find.h) among the descriptors in
 * /proc/PID/fd, the one whose block names PID. */
#ifndef AMPSHIM_TEST_CONTROL_BLOCK_H
#define AMPSHIM_TEST_CONTROL_BLOCK_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "runtime/control_find.h"

/* The mode bits of PID's block, or -1 when it has none. */
struct control_block_probe {
    pid_t pid;
    int mode;
};

static inline int control_block_probe_fd(const char *path, void *arg)
{
    struct control_block_probe *p = arg;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int64_t owner = 0;
    struct stat st;
    if (fd >= 0 && pread(fd, &owner, sizeof owner, 16) == sizeof owner && owner == p->pid &&
        fstat(fd, &st) == 0)
        p->mode = (int)(st.st_mode & 07777);
    if (fd >= 0)
        close(fd);
    return p->mode >= 0;
}

static inline int control_block_mode(pid_t pid)
{
    struct control_block_probe p = {pid, -1};
    amp_ctl_each_block_fd(pid, control_block_probe_fd, &p);
    return p.mode;
}

static inline int control_block_exists(pid_t pid)
{
    return control_block_mode(pid) >= 0;
}

/* Whether anything of ampshim's is left in /dev/shm (nothing ever is). */
static inline int shm_has_ampshim_files(void)
{
    DIR *d = opendir("/dev/shm");
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        found |= strncmp(e->d_name, "ampshim", 7) == 0;
    if (d)
        closedir(d);
    return found;
}

#endif
