/* The CUDA libraries' helper lists (shim/cuda/cuda_helpers.h) and the
 * tables cuBLAS's hooks and the runtime's users share. */
#include "shim/cuda/cuda_helpers.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "loader/loader.h"
#include "runtime/log.h"
#include "shim/resolve.h"

/* The runtime of either major a program may have been built for (pip's
 * CUDA 12 torch is still the most common), newest first. */
static const char *const cudart_sonames[] = {AMP_CUDART_SONAME, "libcudart.so.12", NULL};
static const char *const cudnn_sonames[] = {AMP_CUDNN_SONAME, NULL};
AMP_HELPER_LIST(, amp_cublas_helper_list, "cuBLAS", NULL, struct amp_cublas_helpers,
                AMP_CUBLAS_HELPERS);
AMP_HELPER_LIST(, amp_cublaslt_helper_list, "cuBLASLt", NULL, struct amp_cublaslt_helpers,
                AMP_CUBLASLT_HELPERS);
AMP_HELPER_LIST(, amp_cudart_helper_list, "CUDA runtime", cudart_sonames, struct amp_cudart_helpers,
                AMP_CUDART_HELPERS);
AMP_HELPER_LIST(, amp_cudnn_helper_list, "cuDNN", cudnn_sonames, struct amp_cudnn_helpers,
                AMP_CUDNN_HELPERS);

/* The thread's last answer for cuBLAS, in front of the table: a hot loop
 * calls one entry point. */
static __thread const void *last_anchor __attribute__((tls_model("initial-exec")));
static __thread const struct amp_cublas_helpers *last_table
    __attribute__((tls_model("initial-exec")));

const struct amp_cublas_helpers *amp_cublas_helpers(const void *real)
{
    if (amp_likely(real == last_anchor && last_table))
        return last_table;
    static const struct amp_cublas_helpers none;
    int complete;
    const struct amp_cublas_helpers *t =
        amp_helpers_of(&amp_cublas_helper_list, sizeof *t, real, &complete);
    if (!t)
        return &none;
    last_anchor = real;
    last_table = t;
    return t;
}

static struct amp_cudart_helpers cudart;

static void resolve_cudart(void)
{
    amp_helpers_resolve(&amp_cudart_helper_list, &cudart, NULL);
}

const struct amp_cudart_helpers *amp_cudart_helpers(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, resolve_cudart);
    return &cudart;
}
