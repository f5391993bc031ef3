/* Opens a library with "oneDNN inside" (inside_lib.c) and calls into it:
 * prints what its execute and forward descriptor functions answered. Run
 * under the shim (tests/onednn/meson.build) it must print what it prints
 * without it, whether the shim reached the library by entry patches or
 * left it as made; the report says which in one line.
 * usage: inside_check LIBRARY */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: inside_check LIBRARY\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "inside_check: %s\n", dlerror());
        return 1;
    }
    int (*execute)(int) = (int (*)(int))dlsym(h, "inside_execute");
    int (*forward)(void) = (int (*)(void))dlsym(h, "inside_forward");
    if (!execute || !forward) {
        fprintf(stderr, "inside_check: %s\n", dlerror());
        return 1;
    }
    printf("execute %d %d, forward %d\n", execute(2), execute(5), forward());
    return 0;
}
