/* The one resolver of the CUDA libraries' helper functions: see
 * shim/cuda/cuda_helpers.h. */
#include "shim/cuda/cuda_helpers.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "loader/loader.h"
#include "runtime/log.h"
#include "shim/resolve.h"

/* Each list's names and offsets, from its X-macro (the offset macros name
 * the list's table type). */
#define AMP_LIST(name, library_text, sonames, X_LIST)                                              \
    static const char *const name##_names[] = {X_LIST(AMP_HELPER_NAME)};                           \
    static const size_t name##_offsets[] = {X_LIST(AMP_HELPER_OFFSET_OF_##name)};                  \
    const struct amp_helper_list amp_##name##_helper_list = {                                      \
        library_text, sonames, sizeof name##_names / sizeof *name##_names, name##_names,           \
        name##_offsets};
#define AMP_HELPER_OFFSET_OF_cublas(member, ...) offsetof(struct amp_cublas_helpers, member),
#define AMP_HELPER_OFFSET_OF_cublaslt(member, ...) offsetof(struct amp_cublaslt_helpers, member),
#define AMP_HELPER_OFFSET_OF_cudart(member, ...) offsetof(struct amp_cudart_helpers, member),
#define AMP_HELPER_OFFSET_OF_cudnn_transform(member, ...)                                          \
    offsetof(struct amp_cudnn_transform_helpers, member),
/* The runtime of either major a program may have been built for (pip's
 * CUDA 12 torch is still the most common), newest first. */
static const char *const cudart_sonames[] = {AMP_CUDART_SONAME, "libcudart.so.12", NULL};
static const char *const cudnn_sonames[] = {AMP_CUDNN_SONAME, NULL};
AMP_LIST(cublas, "cuBLAS", NULL, AMP_CUBLAS_HELPERS)
AMP_LIST(cublaslt, "cuBLASLt", NULL, AMP_CUBLASLT_HELPERS)
AMP_LIST(cudart, "CUDA runtime", cudart_sonames, AMP_CUDART_HELPERS)
AMP_LIST(cudnn_transform, "cuDNN", cudnn_sonames, AMP_CUDNN_TRANSFORM_HELPERS)

static void **slot(void *table, size_t offset)
{
    return (void **)((char *)table + offset);
}

int amp_helpers_resolve(const struct amp_helper_list *list, void *table, const void *anchor)
{
    void *opened = NULL;
    int complete = 1, tried = 0;
    for (size_t i = 0; i < list->count; i++) {
        const char *name = list->names[i];
        void *p = anchor ? amp_sibling_symbol(anchor, name) : amp_resolve_name(name);
        if (!p && !anchor && !tried) {
            tried = 1;
            for (size_t k = 0; !opened && list->sonames && list->sonames[k]; k++)
                opened = dlopen(list->sonames[k], RTLD_NOW | RTLD_LOCAL);
        }
        if (!p && opened)
            p = dlsym(opened, name);
        *slot(table, list->offsets[i]) = p;
        complete &= p != NULL;
    }
    return complete;
}

/* Says once per list that a helper is missing. */
static void say_missing(const struct amp_helper_list *list, const char *name)
{
    static _Atomic(const struct amp_helper_list *) said[8];
    for (size_t k = 0; k < sizeof said / sizeof *said; k++) {
        const struct amp_helper_list *expected = NULL;
        if (atomic_load(&said[k]) == list)
            return;
        if (atomic_compare_exchange_strong(&said[k], &expected, list))
            break;
        if (expected == list)
            return;
    }
    amp_log(AMP_LOG_INFO, "the loaded %s has no %s; the calls that need it run as made",
            list->library, name);
}

int amp_helpers_complete(const struct amp_helper_list *list, const void *table,
                         const size_t *needed, size_t n_needed)
{
    for (size_t j = 0; j < list->count; j++) {
        int wanted = !needed;
        for (size_t i = 0; needed && i < n_needed; i++)
            wanted |= needed[i] == list->offsets[j];
        if (wanted && !*slot((void *)table, list->offsets[j])) {
            say_missing(list, list->names[j]);
            return 0;
        }
    }
    return 1;
}

static struct amp_cublas_helpers any_cublas;

static void resolve_any_cublas(void)
{
    amp_helpers_resolve(&amp_cublas_helper_list, &any_cublas, NULL);
}

/* cuBLAS's tables, one per real function seen (its object's helpers), kept
 * for the process: a lookup is a scan of atomics, no loader call. */
enum { CUBLAS_ANCHORS = 128 };
static struct {
    _Atomic(const void *) anchor;
    _Atomic(struct amp_cublas_helpers *) table;
} anchors[CUBLAS_ANCHORS];

/* The thread's last answer, in front of the table: a hot loop calls one
 * entry point. */
static __thread const void *last_anchor __attribute__((tls_model("initial-exec")));
static __thread const struct amp_cublas_helpers *last_table
    __attribute__((tls_model("initial-exec")));

__attribute__((noinline)) static const struct amp_cublas_helpers *cublas_helpers(const void *real);

const struct amp_cublas_helpers *amp_cublas_helpers(const void *real)
{
    if (amp_likely(real == last_anchor && last_table))
        return last_table;
    const struct amp_cublas_helpers *t = cublas_helpers(real);
    last_anchor = real;
    last_table = t;
    return t;
}

static const struct amp_cublas_helpers *cublas_helpers(const void *real)
{
    for (int i = 0; i < CUBLAS_ANCHORS; i++) {
        const void *a = atomic_load_explicit(&anchors[i].anchor, memory_order_acquire);
        if (a == real)
            return atomic_load_explicit(&anchors[i].table, memory_order_relaxed);
        if (!a)
            break;
    }
    struct amp_cublas_helpers *t = calloc(1, sizeof *t);
    if (!t) {
        static const struct amp_cublas_helpers none;
        return &none;
    }
    amp_helpers_resolve(&amp_cublas_helper_list, t, real);
    /* Claim a free slot: the table first, then the anchor that finds it. */
    for (int i = 0; i < CUBLAS_ANCHORS; i++) {
        struct amp_cublas_helpers *expected = NULL;
        if (atomic_compare_exchange_strong(&anchors[i].table, &expected, t)) {
            atomic_store_explicit(&anchors[i].anchor, real, memory_order_release);
            return t;
        }
        if (atomic_load_explicit(&anchors[i].anchor, memory_order_acquire) == real) {
            free(t); /* another thread's first call got there first */
            return atomic_load_explicit(&anchors[i].table, memory_order_relaxed);
        }
    }
    /* Every slot taken (more real functions than any one process has met
     * so far): the helpers any loaded cuBLAS defines first. */
    free(t);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, resolve_any_cublas);
    return &any_cublas;
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
