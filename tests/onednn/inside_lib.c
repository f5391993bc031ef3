/* A library with "oneDNN inside": the names of oneDNN 3's C API that
 * shim/onednn/v3_inside.c looks for, defined as local symbols (in .symtab,
 * not exported), as pip's libtorch_cpu.so keeps them. Not oneDNN: each
 * function answers a number the test program prints, so a run under the
 * shim must print what a run without it prints. Built twice: with
 * INSIDE_REACHABLE the patched functions begin with prologues the shim
 * knows (endbr64, push %rbp, mov %rsp,%rbp); without it
 * dnnl_primitive_execute begins with a RIP-relative lea, which no entry
 * patch may move, so the library cannot be reached. */
#include <stdint.h>

#ifdef INSIDE_REACHABLE
#define EXECUTE_PROLOGUE "  endbr64\n  pushq %rbp\n  movq %rsp, %rbp\n  popq %rbp\n"
#else
#define EXECUTE_PROLOGUE "  leaq 0(%rip), %rax\n"
#endif

/* The patched four: local functions (no .globl). execute answers 40 +
 * nargs; the descriptor functions answer 3 (oneDNN's "unimplemented"). */
/* clang-format off */
#define LOCAL_FUNCTION(name, body)                                                                 \
    ".text\n.type " name ", @function\n.p2align 4\n" name ":\n" body ".size " name ", .-" name "\n"
__asm__(LOCAL_FUNCTION("dnnl_primitive_execute", EXECUTE_PROLOGUE "  leal 40(%rdx), %eax\n  ret\n")
        LOCAL_FUNCTION("dnnl_convolution_forward_primitive_desc_create",
                       "  endbr64\n  pushq %rbp\n  movq %rsp, %rbp\n  movl $3, %eax\n  popq %rbp\n  ret\n")
        LOCAL_FUNCTION("dnnl_convolution_backward_data_primitive_desc_create",
                       "  endbr64\n  pushq %rbp\n  movq %rsp, %rbp\n  movl $3, %eax\n  popq %rbp\n  ret\n")
        LOCAL_FUNCTION("dnnl_convolution_backward_weights_primitive_desc_create",
                       "  endbr64\n  pushq %rbp\n  movq %rsp, %rbp\n  movl $3, %eax\n  popq %rbp\n  ret\n"));
/* clang-format on */
__attribute__((visibility("hidden"))) int dnnl_primitive_execute(void *, void *, int, const void *);
__attribute__((visibility("hidden"))) int dnnl_convolution_forward_primitive_desc_create(
    void **, void *, int, int, const void *, const void *, const void *, const void *,
    const int64_t *, const int64_t *, const int64_t *, const int64_t *, const void *);

/* The functions the shim calls: all fail but the version (3.99.0). */
struct version {
    int major, minor, patch;
    const char *hash;
    unsigned cpu_runtime, gpu_runtime;
};
static const struct version v = {3, 99, 0, "inside_lib", 0, 0};
#define UNUSED_LOCAL static __attribute__((used, noinline))
UNUSED_LOCAL const struct version *dnnl_version(void)
{
    return &v;
}
UNUSED_LOCAL int dnnl_memory_desc_query(const void *md, int what, void *out)
{
    (void)md, (void)what, (void)out;
    return 2;
}
UNUSED_LOCAL int dnnl_memory_desc_create_with_tag(void **md, int n, const int64_t *d, int t, int g)
{
    (void)md, (void)n, (void)d, (void)t, (void)g;
    return 2;
}
UNUSED_LOCAL int dnnl_memory_desc_create_with_strides(void **md, int n, const int64_t *d, int t,
                                                      const int64_t *s)
{
    (void)md, (void)n, (void)d, (void)t, (void)s;
    return 2;
}
UNUSED_LOCAL int dnnl_memory_desc_destroy(void *md)
{
    (void)md;
    return 0;
}
UNUSED_LOCAL int dnnl_primitive_desc_query(const void *pd, int what, int i, void *out)
{
    (void)pd, (void)what, (void)i, (void)out;
    return 2;
}
UNUSED_LOCAL const void *dnnl_primitive_desc_query_md(const void *pd, int what, int i)
{
    (void)pd, (void)what, (void)i;
    return 0;
}
UNUSED_LOCAL int dnnl_primitive_desc_destroy(void *pd)
{
    (void)pd;
    return 0;
}
UNUSED_LOCAL int dnnl_primitive_get_primitive_desc(void *p, const void **pd)
{
    (void)p, (void)pd;
    return 2;
}

/* What the test program calls (exported). */
__attribute__((visibility("default"))) int inside_execute(int nargs)
{
    return dnnl_primitive_execute(0, 0, nargs, 0);
}

__attribute__((visibility("default"))) int inside_forward(void)
{
    void *pd = 0;
    int64_t dims[12] = {1};
    return dnnl_convolution_forward_primitive_desc_create(&pd, 0, 64, 1, 0, 0, 0, 0, dims, dims,
                                                          dims, dims, 0);
}
