/* A program whose plugin calls cblas_sgemm while no BLAS library is loaded.
 * Without ampshim the dynamic loader stops it at the call: "symbol lookup
 * error", exit status 127. With ampshim the call reaches the hook, which finds
 * no real function: it must say so in one line and exit 127 the same way,
 * never crash. usage: missing_blas PATH/TO/liblazy-caller.so */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    void *plugin = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "missing_blas: %s\n", dlerror());
        return 2;
    }
    void (*multiply)(const float *, const float *, float *) =
        (void (*)(const float *, const float *, float *))dlsym(plugin, "multiply_2x2");
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
    printf("calling cblas_sgemm with no BLAS loaded\n");
    fflush(stdout);
    multiply(a, b, c);
    printf("unreachable: c[0] = %g\n", c[0]);
    return 0;
}
