/* The exported cuBLASLt entry point, expanded from AMPSHIM_HOOK_LIST_CUBLASLT.
 * A matmul whose A, B, C and D are fp32 and whose descriptor asks for plain
 * CUBLAS_COMPUTE_32F with fp32 scaling runs with the fast compute type set on
 * the descriptor for the duration of the call, then restored. The program
 * may have chosen its algorithm for the plain compute type: if setting the
 * attribute or the call itself fails, the call is made again exactly as the
 * program made it, so the worst case is no lowering, never a failed call.
 * The descriptor is the caller's: a program that shares one descriptor
 * between threads calling at once would see the change (PyTorch makes one
 * per call). */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/cuda/cublas_abi.h"
#include "runtime/decide.h"
#include "shim/hook_stub.h"
#include "shim/resolve.h"

typedef int (*desc_get_fn)(void *, int, void *, size_t, size_t *);
typedef int (*desc_set_fn)(void *, int, const void *, size_t);
typedef int (*layout_get_fn)(void *, int, void *, size_t, size_t *);

struct lt_functions {
    desc_get_fn desc_get;
    desc_set_fn desc_set;
    layout_get_fn layout_get;
};

static struct lt_functions lt;
static int lt_complete = 1;

/* Once per process (pthread_once): two threads' first calls cannot race. */
static void lt_resolve(void)
{
#define AMP_LT_NEEDED(name) amp_resolve_needed(name, amp_family_display[AMP_FAMILY_CUBLASLT], &lt_complete)
    lt.desc_get = (desc_get_fn)AMP_LT_NEEDED("cublasLtMatmulDescGetAttribute");
    lt.desc_set = (desc_set_fn)AMP_LT_NEEDED("cublasLtMatmulDescSetAttribute");
    lt.layout_get = (layout_get_fn)AMP_LT_NEEDED("cublasLtMatrixLayoutGetAttribute");
#undef AMP_LT_NEEDED
}

static const struct lt_functions *lt_functions(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, lt_resolve);
    return lt_complete ? &lt : NULL;
}

static int layout_is_fp32(const struct lt_functions *f, void *layout)
{
    uint32_t type = 0xffffffffu;
    size_t written = 0;
    return layout &&
           f->layout_get(layout, AMP_CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type, &written) ==
               AMP_CUBLAS_STATUS_SUCCESS &&
           type == AMP_CUDA_R_32F;
}

/* Whether the matmul is an all-fp32 one with plain 32F compute and scale. */
static int plain_fp32(const struct lt_functions *f, void *desc, void *a, void *b, void *c, void *d)
{
    int32_t compute = -1, scale = -1;
    size_t written = 0;
    return f->desc_get(desc, AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute,
                       &written) == AMP_CUBLAS_STATUS_SUCCESS &&
           compute == AMP_CUBLAS_COMPUTE_32F &&
           f->desc_get(desc, AMP_CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale, &written) ==
               AMP_CUBLAS_STATUS_SUCCESS &&
           scale == AMP_CUDA_R_32F && layout_is_fp32(f, a) && layout_is_fp32(f, b) &&
           layout_is_fp32(f, c) && layout_is_fp32(f, d);
}

#define AMP_DEFINE_CUBLASLT(sym)                                                                   \
    AMP_STUB(sym)                                                                                  \
    int AMP_C_ENTRY(sym)(void *lt, void *desc, const void *alpha, const void *A, void *a_layout,   \
                         const void *B, void *b_layout, const void *beta, const void *C,           \
                         void *c_layout, void *D, void *d_layout, const void *algo,                \
                         void *workspace, size_t workspace_bytes, void *stream)                    \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        typedef int (*fn)(void *, void *, const void *, const void *, void *, const void *,        \
                          void *, const void *, const void *, void *, void *, void *,              \
                          const void *, void *, size_t, void *);                                   \
        fn real = (fn)amp_real(AMP_HOOK_##sym);                                                    \
        struct amp_thread *t = amp_thread_enter();                                                 \
        const struct lt_functions *f = t ? lt_functions() : NULL;                                  \
        if (!t)                                                                                    \
            return real(lt, desc, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D, d_layout, \
                        algo, workspace, workspace_bytes, stream);                                 \
        enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;                                        \
        int32_t fast = 0, plain = AMP_CUBLAS_COMPUTE_32F;                                          \
        if (f && plain_fp32(f, desc, a_layout, b_layout, c_layout, d_layout))                      \
            fast = amp_cublas_fast_compute(amp_decide_lower_dtype(t, AMP_DEVICE_CUDA, AMP_HOOK_##sym, 1, &outcome));                          \
        int status = -1;                                                                           \
        if (fast && f->desc_set(desc, AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &fast,                \
                                sizeof fast) == AMP_CUBLAS_STATUS_SUCCESS) {                       \
            status = real(lt, desc, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D,         \
                          d_layout, algo, workspace, workspace_bytes, stream);                     \
            f->desc_set(desc, AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &plain, sizeof plain);        \
        }                                                                                          \
        if (status != AMP_CUBLAS_STATUS_SUCCESS) {                                                 \
            outcome = amp_not_lowered_after_all(outcome);                                               \
            status = real(lt, desc, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D,         \
                          d_layout, algo, workspace, workspace_bytes, stream);                     \
        }                                                                                          \
        amp_count(t, AMP_HOOK_##sym, outcome, 1);                                                  \
        return status;                                                                             \
    }

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DEFINE_CUBLASLT(sym)
AMPSHIM_HOOK_LIST_CUBLASLT(AMP_X_HOOK)
#undef AMP_X_HOOK
