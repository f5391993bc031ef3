/* A library whose constructor calls BLAS is dlopened (the loader's lock held)
 * while another thread makes the process's first BLAS call (the shim's
 * resolution, which asks the loader about objects): neither may wait for the
 * other. Runs ROUNDS fresh processes, each bounded by an alarm; both
 * products must be lowered.
 * usage: dlopen_ctor LIBRARY [ROUNDS] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/probe_product.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

static void *first_call(void *arg)
{
    *(float *)arg = probe_product(cblas_sgemm);
    return NULL;
}

static int one_round(const char *lib)
{
    alarm(10);
    float mine = 0;
    pthread_t t;
    pthread_create(&t, NULL, first_call, &mine);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    pthread_join(t, NULL);
    if (!h)
        return 3;
    float *theirs = (float *)dlsym(h, "ctor_lib_result");
    return mine == PROBE_LOWERED && theirs && *theirs == PROBE_LOWERED ? 0 : 4;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int rounds = argc > 2 ? atoi(argv[2]) : 100, bad = 0;
    for (int i = 0; i < rounds; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(one_round(argv[1]));
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bad++;
            printf("round %d: %s %d\n", i, WIFEXITED(status) ? "exit" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        }
    }
    printf("dlopen_ctor: %d rounds, %d bad\n", rounds, bad);
    return bad ? 1 : 0;
}
