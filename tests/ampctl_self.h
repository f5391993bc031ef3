/* Test helper: runs `ampctl --json VERB PID` on this process (AMPCTL names
 * ampctl, else the one on PATH) into a file, calling tick() every
 * millisecond until it is done, as a live program makes hooked calls: a
 * request that needs the process (reading device results back) is served
 * in one of them. Returns 0 when ampctl exited 0. */
#ifndef AMPSHIM_TEST_AMPCTL_SELF_H
#define AMPSHIM_TEST_AMPCTL_SELF_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static inline int ampctl_self(const char *verb, const char *path, void (*tick)(void))
{
    pid_t child = fork();
    if (child < 0)
        return -1;
    if (child == 0) {
        char pid[32];
        snprintf(pid, sizeof pid, "%ld", (long)getppid());
        if (!freopen(path, "w", stdout))
            _exit(127);
        unsetenv("LD_PRELOAD");
        const char *ampctl = getenv("AMPCTL");
        execl(ampctl ? ampctl : "ampctl", "ampctl", "--json", verb, pid, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
        tick();
        usleep(1000);
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

#endif
