/* Native low-precision GEMM on the CPU through oneDNN, found at run time
 * (dlopen of libdnnl.so.2, Debian's libdnnl2; never a link-time dependency).
 * The caller has already converted both multiplicands into compact bf16 or
 * fp16 arrays; oneDNN multiplies them with fp32 accumulation into the fp32
 * output, scaled by alpha, plus beta times the output's old value.
 *
 * The problem is row major throughout (a column-major call is its
 * transpose): D (M x N, dense) = alpha * op(X) (M x K) * op(Y) (K x N)
 * + beta * D, where X is stored compact as M x K (or K x M when trans_x) and
 * Y as K x N (or N x K when trans_y).
 *
 * Primitives are made once per shape and kept (a bounded cache shared by
 * every thread, with oneDNN's scratchpad supplied per call so one primitive
 * can run in several threads at once). Every primitive is made and run
 * single-threaded: the calling thread's OpenMP team size is 1 for the call,
 * so oneDNN never starts an OpenMP team; parallelism is the caller's, over
 * chunks of the product (shim/blas/native_pool.h). Only an implementation oneDNN runs
 * with native low-precision dot products (avx512_core_bf16, AMX,
 * avx512_core_fp16) is accepted: anything else is reported as not native and
 * the caller emulates.
 *
 * Two oneDNNs can serve (shim/blas/native_backend.h): 2.x opened as
 * libdnnl.so.2, and the 3.x linked inside a library the oneDNN wing
 * reached (pip's libtorch_cpu.so), which serves every primitive made
 * after it is offered. */
#ifndef AMPSHIM_ONEDNN_H
#define AMPSHIM_ONEDNN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/convert.h"
#include "loader/loader.h"

enum amp_onednn_status {
    AMP_ONEDNN_OK,
    AMP_ONEDNN_UNAVAILABLE, /* no libdnnl.so.2, or one this adapter cannot use */
    AMP_ONEDNN_NOT_NATIVE,  /* oneDNN would run it, but not on native lowp units */
    AMP_ONEDNN_FAILED,      /* oneDNN refused the problem or ran out of memory */
};

struct amp_onednn_gemm {
    enum amp_lowp_dtype dtype; /* AMP_DTYPE_BF16 or AMP_DTYPE_FP16 */
    int64_t m, n, k;
    uint8_t trans_x, trans_y;
    float alpha, beta;
};

struct amp_onednn_prim;

/* Loads oneDNN once per process (thread-safe). Returns AMP_ONEDNN_OK or
 * AMP_ONEDNN_UNAVAILABLE, with a one-line reason in why. */
enum amp_onednn_status amp_onednn_open(char *why, size_t whylen);

/* The version of the oneDNN new primitives are made on, "2.6.3" or
 * "3.13.3 inside libtorch_cpu.so" ("" when none opens). */
const char *amp_onednn_version(void);


/* How many primitives this thread has made (generating a kernel takes
 * milliseconds): a pay check whose lowered run made one is not weighed. */
unsigned amp_onednn_made(void);

/* The primitive for a problem, made or found in the cache; NULL with the
 * status (NOT_NATIVE or FAILED) otherwise. The implementation oneDNN chose
 * is copied to impl (for the info line and the benchmark). Every primitive
 * got is given back with amp_onednn_put. */
struct amp_onednn_prim *amp_onednn_get(const struct amp_onednn_gemm *g, enum amp_onednn_status *st,
                                       char *impl, size_t impllen);
/* Bytes of scratchpad a run needs (64-byte aligned memory). */
size_t amp_onednn_scratch_bytes(const struct amp_onednn_prim *p);
/* One run of a primitive: x and y compact lowp, d the fp32 output, scratch
 * its scratchpad. Binding makes everything the run needs (memory objects, a
 * stream) and may fail (NULL) without touching d; executing it then only
 * computes (0 on success). A product split into several runs binds them
 * all before it executes any, so a failure leaves the output as it was. */
struct amp_onednn_run;
struct amp_onednn_run *amp_onednn_bind(struct amp_onednn_prim *p, const uint16_t *x,
                                       const uint16_t *y, float *d, void *scratch);
int amp_onednn_exec(struct amp_onednn_run *r);
void amp_onednn_unbind(struct amp_onednn_run *r); /* NULL is fine */
void amp_onednn_put(struct amp_onednn_prim *p);

/* For a thread of the shim's own that runs primitives: its OpenMP team size
 * set to 1 once and for all. */
void amp_onednn_thread_init(void);

/* fork's share: the primitive cache's lock. */
void amp_onednn_atfork(enum amp_fork_phase phase);

#endif
