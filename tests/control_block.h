/* Test helper: whether a process holds its ampshim control block, found as
 * ampctl finds it: a memfd named "ampshim-control" among the descriptors in
 * /proc/PID/fd whose block names PID (runtime/control.c). */
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

/* The mode bits of PID's block, or -1 when it has none. */
static inline int control_block_mode(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int mode = -1;
    for (struct dirent *e; mode < 0 && (e = readdir(d));) {
        char path[320], target[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, "/memfd:ampshim-control (deleted)") != 0)
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        int64_t owner = 0;
        struct stat st;
        if (fd >= 0 && pread(fd, &owner, sizeof owner, 16) == sizeof owner && owner == pid &&
            fstat(fd, &st) == 0)
            mode = (int)(st.st_mode & 07777);
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return mode;
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
