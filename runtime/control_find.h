/* Finding a process's control block from outside it: the memfd named
 * AMP_CTL_MEMFD_NAME among the descriptors in /proc/PID/fd. ampctl maps
 * what it finds (tools/ampctl/blocks.c); the tests look at its mode
 * (tests/control_block.h). Header-only and libc-only, so a test program
 * that must not link the shim's core can use it. */
#ifndef AMPSHIM_CONTROL_FIND_H
#define AMPSHIM_CONTROL_FIND_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The name of the memfd that holds a process's block ("/memfd:NAME" in
 * /proc/PID/fd). */
#define AMP_CTL_MEMFD_NAME "ampshim-control"

/* Calls fn(fd_path, arg) for each descriptor of process pid that is a
 * control block memfd (a forked child may hold its parent's besides its
 * own), until fn returns non-zero; returns that, 0 when none did, or -1
 * (errno set by opendir) when pid's descriptors cannot be listed. */
static inline int amp_ctl_each_block_fd(long pid, int (*fn)(const char *fd_path, void *arg),
                                        void *arg)
{
    static const char want[] = "/memfd:" AMP_CTL_MEMFD_NAME " (deleted)";
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int done = 0;
    for (struct dirent *e; !done && (e = readdir(d));) {
        char fd_path[320], target[256];
        snprintf(fd_path, sizeof fd_path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(fd_path, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, want) == 0)
            done = fn(fd_path, arg);
    }
    closedir(d);
    return done;
}

#endif
