/* The oneDNNs the native executor multiplies with (shim/blas/
 * native_onednn.h), one table of functions each: oneDNN 2.x opened as
 * libdnnl.so.2 (native_onednn.c), and oneDNN 3.x inside a loaded library
 * that the oneDNN wing reached (native_onednn3.c; pip's libtorch_cpu.so).
 * native_onednn.c keeps the primitive cache and picks the backend: the
 * 3.x one once offered (the newer kernels: on AMX its bf16 matmul is about
 * twice 2.6's speed, bench/pip_torch.py), else 2.x. Private to the
 * executor. */
#ifndef AMPSHIM_NATIVE_BACKEND_H
#define AMPSHIM_NATIVE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "shim/blas/native_onednn.h"

struct amp_onednn_backend {
    uint8_t id;       /* part of the cache's key: a primitive runs on its own oneDNN */
    char version[96]; /* "2.6.3", "3.13.3 inside libtorch_cpu.so" */
    /* The primitive for g into *prim with its scratchpad's bytes, the
     * implementation's name in impl; AMP_ONEDNN_OK, NOT_NATIVE (impl names
     * what oneDNN offers; nothing kept) or FAILED. */
    enum amp_onednn_status (*make)(const struct amp_onednn_gemm *g, void **prim,
                                   size_t *scratch_bytes, char *impl, size_t impllen);
    void (*destroy)(void *prim);
    /* A run's memory objects and stream (NULL on failure), its execution
     * (0 on success) and its end. */
    void *(*bind)(void *prim, const uint16_t *x, const uint16_t *y, float *d, void *scratch);
    int (*exec)(void *prim, void *run);
    void (*unbind)(void *run);
    /* The OpenMP runtime that oneDNN runs on (NULL: none found). */
    int (*omp_get_max_threads)(void);
    void (*omp_set_num_threads)(int);
};

/* Whether an implementation's name says it runs on the CPU's own
 * low-precision dot products (AMX, avx512_core_bf16, avx512_core_fp16): a
 * gemm:jit or ref implementation converts to fp32 inside and is slower
 * than emulation. Both backends ask it. */
int amp_onednn_impl_is_native(const char *impl, enum amp_lowp_dtype dtype);

/* The 3.x backend once a library's oneDNN was offered (NULL before). */
const struct amp_onednn_backend *amp_onednn3_backend(void);

#endif
