/* One large lowered product must not keep its scratch for the thread's
 * life: after a call that needed more than 64 MiB of rounded copies, the
 * process's resident memory is back near where it was (the shim kept 2 GiB
 * resident after one large product before). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/check.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

static long resident_mib(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &pages, &rss) != 2)
        rss = -1;
    if (f)
        fclose(f);
    return rss * sysconf(_SC_PAGESIZE) / (1 << 20);
}

int main(void)
{
    CHECK_SHIM_LOADED();
    enum { M = 64, N = 64, K = 300000 }; /* A and B: 73 MiB each */
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N), c[M * N];
    for (size_t i = 0; i < (size_t)M * K; i++)
        a[i] = b[i] = (float)(i % 13) * 0.25f;
    float small[16] = {1}, out[16];
    cblas_sgemm(102, 111, 111, 4, 4, 4, 1.0f, small, 4, small, 4, 0.0f, out, 4);
    long before = resident_mib();
    cblas_sgemm(102, 111, 111, M, N, K, 1.0f, a, M, b, K, 0.0f, c, M);
    long after = resident_mib();
    CHECK(after - before < 32, "resident memory grew by %ld MiB after one large product", after - before);
    printf("scratch_release: resident %ld MiB before, %ld after; %d passed, %d failed\n", before,
           after, checks - failures, (int)failures);
    free(a);
    free(b);
    return failures ? 1 : 0;
}
