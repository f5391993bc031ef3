/* A fault injector in front of the real oneDNN, for tests only (never
 * installed): built as a libdnnl.so.2 of its own, found first through
 * LD_LIBRARY_PATH, it forwards every function the shim's oneDNN adapter
 * calls to the real library (DNNL_FAULT_REAL, a path) and makes every
 * DNNL_FAULT_EVERY-th dnnl_primitive_execute fail before it runs, as an
 * execution that cannot get its resources would. x86-64 only (the
 * forwarders are one jump each). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <oneapi/dnnl/dnnl.h>

#include "shim/blas/native_onednn_functions.h"

/* Every function the shim's adapter calls but execution. */
#define FORWARDED(X) AMP_ONEDNN_SETUP_FUNCTIONS(X)

#define SLOT(f) __attribute__((visibility("hidden"))) void *real_##f;
FORWARDED(SLOT)
#undef SLOT

#define JUMP(f)                                                                                    \
    __asm__(".text\n.globl " #f "\n.type " #f ", @function\n" #f ":\n"                             \
            "  jmp *real_" #f "(%rip)\n.size " #f ", .-" #f "\n");
FORWARDED(JUMP)
#undef JUMP

static dnnl_status_t (*real_execute)(const_dnnl_primitive_t, dnnl_stream_t, int,
                                     const dnnl_exec_arg_t *);
static long every;
static _Atomic long executions, failures;

__attribute__((constructor)) static void load_real(void)
{
    const char *path = getenv("DNNL_FAULT_REAL");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        fprintf(stderr, "dnnl_fault_injector: set DNNL_FAULT_REAL to the real libdnnl.so.2\n");
        abort();
    }
#define LOOKUP(f)                                                                                  \
    if (!(real_##f = dlsym(h, #f)))                                                                \
        abort();
    FORWARDED(LOOKUP)
#undef LOOKUP
    *(void **)&real_execute = dlsym(h, "dnnl_primitive_execute");
    if (!real_execute)
        abort();
    const char *n = getenv("DNNL_FAULT_EVERY");
    every = n ? atol(n) : 0;
}

__attribute__((destructor)) static void tell(void)
{
    if (getenv("DNNL_FAULT_REPORT"))
        fprintf(stderr, "dnnl_fault_injector: %ld of %ld executions failed\n",
                atomic_load(&failures), atomic_load(&executions));
}

dnnl_status_t dnnl_primitive_execute(const_dnnl_primitive_t p, dnnl_stream_t s, int nargs,
                                     const dnnl_exec_arg_t *args)
{
    long n = atomic_fetch_add(&executions, 1) + 1;
    if (every > 0 && n % every == 0) {
        atomic_fetch_add(&failures, 1);
        return dnnl_out_of_memory;
    }
    return real_execute(p, s, nargs, args);
}
