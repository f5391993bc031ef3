/* How the shim names a call's caller, attacked (issue 21, defects 1 and 5
 * to 8). Each mode makes products through cblas_sgemm and prints, per
 * caller, L when the product was lowered (bf16 operands) or F when it is
 * exact fp32, judged against both computed here; caller_identity.sh runs
 * the modes under policies, caller filters and the audit.
 *   sites N      N exported functions (site_100 ...), one product each:
 *                prints "lowered=X fp32=Y"
 *   jit          one product called from code in an anonymous executable
 *                mapping (dladdr names no object): prints "jit=L|F"
 *   dlclose A B  libcaller-a.so's product, dlclose, then libcaller-b.so's
 *                (loaded at the same address, else exit 77): "a=. b=."
 * usage: caller_identity MODE [ARGS] */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

enum { N = 16 };
static float a[N * N], b[N * N];

/* Every operand is 1 + j 2^-10 or 1 + j 2^-11 (below half of bf16's 2^-7
 * step at 1), which bf16 rounds to
 * exactly 1: a lowered product is N everywhere, the fp32 one is larger. */
static void fill(void)
{
    for (int i = 0; i < N * N; i++) {
        a[i] = 1.0f + (float)(i % 3 + 1) * 0x1p-10f;
        b[i] = 1.0f + (float)(i % 5 + 1) * 0x1p-11f;
    }
}

static char judge(const float *c)
{
    int lowered = 1;
    for (int i = 0; i < N * N; i++)
        lowered &= c[i] == (float)N;
    return lowered ? 'L' : 'F';
}

static void product(float *c)
{
    cblas_sgemm(102, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
}

/* ---- sites: one exported function per call site ---- */

#define SITE(n)                                                                                    \
    __attribute__((noinline, visibility("default"))) void site_##n(float *c)                       \
    {                                                                                              \
        product(c);                                                                                \
        c[0] += 0.0f * (float)n; /* not a tail call: the return address is here */                 \
        __asm__ volatile("" ::: "memory");                                                         \
    }
#define SITES10(p) SITE(p##0) SITE(p##1) SITE(p##2) SITE(p##3) SITE(p##4) SITE(p##5) SITE(p##6) \
    SITE(p##7) SITE(p##8) SITE(p##9)
#define SITES100(p) SITES10(p##0) SITES10(p##1) SITES10(p##2) SITES10(p##3) SITES10(p##4)      \
    SITES10(p##5) SITES10(p##6) SITES10(p##7) SITES10(p##8) SITES10(p##9)
SITES100(1)
SITES100(2)
SITES100(3)

#define REF(n) site_##n,
#define REFS10(p) REF(p##0) REF(p##1) REF(p##2) REF(p##3) REF(p##4) REF(p##5) REF(p##6)          \
    REF(p##7) REF(p##8) REF(p##9)
#define REFS100(p) REFS10(p##0) REFS10(p##1) REFS10(p##2) REFS10(p##3) REFS10(p##4)             \
    REFS10(p##5) REFS10(p##6) REFS10(p##7) REFS10(p##8) REFS10(p##9)
static void (*const sites[])(float *) = {REFS100(1) REFS100(2) REFS100(3)};

static int mode_sites(int n)
{
    static float c[N * N];
    int lowered = 0, fp32 = 0;
    for (int i = 0; i < n && i < (int)(sizeof sites / sizeof *sites); i++) {
        sites[i](c);
        if (judge(c) == 'L')
            lowered++;
        else
            fp32++;
    }
    printf("lowered=%d fp32=%d\n", lowered, fp32);
    return 0;
}

/* ---- jit: a trampoline in an anonymous mapping calls cblas_sgemm, so its
 * return address is in no loaded object ---- */

static int mode_jit(void)
{
    /* sub $0x38,%rsp; the six stack arguments copied down; movabs $target,
     * %r11; call *%r11; add $0x38,%rsp; ret */
    static const unsigned char code[] = {
        0x48, 0x83, 0xec, 0x38, 0x48, 0x8b, 0x44, 0x24, 0x40, 0x48, 0x89, 0x04, 0x24, 0x48, 0x8b,
        0x44, 0x24, 0x48, 0x48, 0x89, 0x44, 0x24, 0x08, 0x48, 0x8b, 0x44, 0x24, 0x50, 0x48, 0x89,
        0x44, 0x24, 0x10, 0x48, 0x8b, 0x44, 0x24, 0x58, 0x48, 0x89, 0x44, 0x24, 0x18, 0x48, 0x8b,
        0x44, 0x24, 0x60, 0x48, 0x89, 0x44, 0x24, 0x20, 0x48, 0x8b, 0x44, 0x24, 0x68, 0x48, 0x89,
        0x44, 0x24, 0x28, 0x49, 0xbb, 0, 0, 0, 0, 0, 0, 0, 0, 0x41, 0xff, 0xd3, 0x48, 0x83,
        0xc4, 0x38, 0xc3};
#if defined(__x86_64__)
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
    if (page == MAP_FAILED)
        return 77;
    memcpy(page, code, sizeof code);
    uint64_t target = (uint64_t)(uintptr_t)&cblas_sgemm;
    memcpy(page + 65, &target, sizeof target);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
        return 77;
    Dl_info info;
    if (dladdr(page, &info))
        return 77; /* the loader names it after all: nothing to test */
    void (*through)(int, int, int, int, int, int, float, const float *, int, const float *, int,
                    float, float *, int);
    memcpy(&through, &page, sizeof page);
    static float c[N * N];
    through(102, 111, 111, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    printf("jit=%c\n", judge(c));
    return 0;
#else
    (void)code;
    return 77;
#endif
}

/* ---- dlclose: a library loaded where a closed one was ---- */

static int mode_dlclose(const char *lib_a, const char *lib_b)
{
    static float c[N * N];
    void *h = dlopen(lib_a, RTLD_NOW | RTLD_LOCAL);
    void (*fa)(const float *, const float *, float *, int) = h ? dlsym(h, "multiply_in_a") : NULL;
    if (!fa)
        return 2;
    Dl_info ia, ib;
    dladdr((void *)fa, &ia);
    void *base_a = ia.dli_fbase;
    fa(a, b, c, N);
    char ja = judge(c);
    dlclose(h);
    h = dlopen(lib_b, RTLD_NOW | RTLD_LOCAL);
    void (*fb)(const float *, const float *, float *, int) = h ? dlsym(h, "multiply_in_b") : NULL;
    if (!fb)
        return 2;
    dladdr((void *)fb, &ib);
    if (ib.dli_fbase != base_a || (char *)fb - (char *)ib.dli_fbase !=
                                      (char *)fa - (char *)base_a) {
        printf("SKIP: libcaller-b.so was not loaded where libcaller-a.so was\n");
        return 77;
    }
    fb(a, b, c, N);
    printf("a=%c b=%c\n", ja, judge(c));
    return 0;
}

int main(int argc, char **argv)
{
    fill();
    if (argc == 3 && strcmp(argv[1], "sites") == 0)
        return mode_sites(atoi(argv[2]));
    if (argc == 2 && strcmp(argv[1], "jit") == 0)
        return mode_jit();
    if (argc == 4 && strcmp(argv[1], "dlclose") == 0)
        return mode_dlclose(argv[2], argv[3]);
    fprintf(stderr, "usage: caller_identity sites N | jit | dlclose LIB_A LIB_B\n");
    return 2;
}
