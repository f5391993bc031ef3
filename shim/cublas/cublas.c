/* The exported cuBLAS entry points: one door each, in the order of
 * AMPSHIM_HOOK_LIST_CUBLAS. A GEMM-shaped door has the entry point's real
 * signature; it notes its caller and hands its arguments, in cublasGemmEx's
 * form, to its kind's body, one int64_t body for both integer widths (the
 * _64 entry points take int64_t sizes). The body packs a struct
 * amp_cublas_call and calls amp_cublas_gemm (shim/cublas/cublas_gemm.c),
 * where eligibility, the decision, the target form, explicit fp16 and the
 * audit are. Each kind's as_made re-issues the program's own call. The
 * level-1 reductions and the symmetric and triangular level-3 routines
 * forward machine words (shim/forward_words.h): their doors are the two
 * macros at the end. Every CUDA symbol is found at run time; a program
 * without cuBLAS never calls these doors. */
#include <stdint.h>

#include "runtime/decide.h"
#include "shim/cublas/cublas_abi.h"
#include "shim/cublas/cublas_gemm.h"
#include "shim/cublas/cublas_level3.h"
#include "shim/forward_words.h"
#include "shim/hook_stub.h"
#include "shim/resolve.h"

enum { F32 = AMP_CUDA_R_32F, COMPUTE_32F = AMP_CUBLAS_COMPUTE_32F, ALGO = AMP_CUBLAS_GEMM_DEFAULT };

/* Calls c->real, the program's entry point, whose type for an integer
 * type INT is FN(INT), with the int64_t sizes narrowed for a 32-bit one. */
#define AMP_BY_WIDTH(c, FN, ...)                                                                   \
    ((c)->is64 ? ((FN(int64_t))(c)->real)(__VA_ARGS__) : ((FN(int))(c)->real)(__VA_ARGS__))

/* Sets the fields every kind has, and a batch of one (the size rule reads
 * it); the others (strides, vector increments) are set by the kinds that
 * have them and read by no other. */
static inline void call_init(struct amp_cublas_call *c, enum amp_hook_id hook, int is64,
                             amp_cublas_as_made_fn made, enum amp_cublas_target target)
{
    c->hook = hook;
    c->real = amp_real(hook);
    c->as_made = made;
    c->target = target;
    c->is64 = (uint8_t)is64;
    c->is_ex = c->eligible = 0;
    c->batch = 1;
}

/* Whether every data type of a call in GemmEx form is fp32. */
static int all_fp32(const struct amp_gemmex_args *g)
{
    return g->at == F32 && g->bt == F32 && g->ct == F32;
}

/* An Ex call is lowered only when every data type is fp32 and its compute
 * type is plain CUBLAS_COMPUTE_32F; whatever else the caller chose stays. */
static int ex_eligible(const struct amp_gemmex_args *g)
{
    return all_fp32(g) && g->compute == COMPUTE_32F;
}

/* Whether a gemv's arguments are ones cuBLAS accepts and its vectors have
 * unit stride: only those become GEMMs with one column (rows of op(A),
 * inner its columns). Other strides, or arguments cuBLAS would reject,
 * reach it unchanged so it reports its own errors. */
static int gemv_shaped(int trans, int64_t m, int64_t n, int64_t lda, int64_t incx, int64_t incy)
{
    return incx == 1 && incy == 1 && m >= 0 && n >= 0 && trans >= 0 && trans <= 2 &&
           lda >= (m > 1 ? m : 1);
}

/* y = alpha op(A) x + beta y as a GEMM with one column, in GemmEx form. */
static struct amp_gemmex_args gemv_as_gemm(void *h, int trans, int64_t m, int64_t n,
                                           const float *alpha, const void *A, int64_t lda,
                                           const void *x, const float *beta, void *y)
{
    int64_t rows = trans == 0 ? m : n, inner = trans == 0 ? n : m;
    return (struct amp_gemmex_args){h,
                                    trans,
                                    0,
                                    rows,
                                    1,
                                    inner,
                                    alpha,
                                    A,
                                    F32,
                                    lda,
                                    x,
                                    F32,
                                    inner > 1 ? inner : 1,
                                    beta,
                                    y,
                                    F32,
                                    rows > 1 ? rows : 1,
                                    COMPUTE_32F,
                                    ALGO};
}

/* The program's m and n of a gemv in GemmEx form (m rows, k inner). */
#define GEMV_M(a) ((a)->ta == 0 ? (a)->m : (a)->k)
#define GEMV_N(a) ((a)->ta == 0 ? (a)->k : (a)->m)

/* cublasSgemm_v2: lowered as cublasGemmEx on the same fp32 buffers. */
#define SGEMM_FN(INT)                                                                              \
    int (*)(void *, int, int, INT, INT, INT, const float *, const float *, INT, const float *,     \
            INT, const float *, float *, INT)
static int sgemm_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, SGEMM_FN, a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A, a->lda,
                        a->B, a->ldb, a->beta, out, ld);
}

static int sgemm(enum amp_hook_id hook, int is64, void *h, int ta, int tb, int64_t m, int64_t n,
                 int64_t k, const float *alpha, const float *A, int64_t lda, const float *B,
                 int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sgemm_as_made, AMP_CUBLAS_TO_GEMMEX);
    c.eligible = 1;
    c.g = (struct amp_gemmex_args){h, ta,  tb,  m,    n, k,   alpha, A,           F32, lda,
                                   B, F32, ldb, beta, C, F32, ldc,   COMPUTE_32F, ALGO};
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSgemm_v2)
int AMP_C_ENTRY(cublasSgemm_v2)(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                                const float *A, int lda, const float *B, int ldb, const float *beta,
                                float *C, int ldc)
{
    AMP_NOTE_CALLER();
    return sgemm(AMP_HOOK_cublasSgemm_v2, 0, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                 ldc);
}

AMP_STUB(cublasSgemm_v2_64)
int AMP_C_ENTRY(cublasSgemm_v2_64)(void *h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                   const float *alpha, const float *A, int64_t lda, const float *B,
                                   int64_t ldb, const float *beta, float *C, int64_t ldc)
{
    AMP_NOTE_CALLER();
    return sgemm(AMP_HOOK_cublasSgemm_v2_64, 1, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                 ldc);
}

/* cublasGemmEx: lowered only when every type is fp32 and the compute type
 * is plain CUBLAS_COMPUTE_32F (amp_cublas_gemm checks); anything the caller
 * chose stays. */
#define GEMMEX_FN(INT)                                                                             \
    int (*)(void *, int, int, INT, INT, INT, const void *, const void *, int, INT, const void *,   \
            int, INT, const void *, void *, int, INT, int, int)
static int gemmex_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, GEMMEX_FN, a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A, a->at,
                        a->lda, a->B, a->bt, a->ldb, a->beta, out, a->ct, ld, a->compute, a->algo);
}

static int gemmex(enum amp_hook_id hook, int is64, const struct amp_gemmex_args *g)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, gemmex_as_made, AMP_CUBLAS_TO_GEMMEX);
    c.is_ex = 1;
    c.eligible = ex_eligible(g);
    c.g = *g;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasGemmEx)
int AMP_C_ENTRY(cublasGemmEx)(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
                              const void *A, int at, int lda, const void *B, int bt, int ldb,
                              const void *beta, void *C, int ct, int ldc, int compute, int algo)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n, k,  alpha, A,       at,  lda,
                                B, bt, ldb, beta, C, ct, ldc,   compute, algo};
    return gemmex(AMP_HOOK_cublasGemmEx, 0, &g);
}

AMP_STUB(cublasGemmEx_64)
int AMP_C_ENTRY(cublasGemmEx_64)(void *h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                 const void *alpha, const void *A, int at, int64_t lda,
                                 const void *B, int bt, int64_t ldb, const void *beta, void *C,
                                 int ct, int64_t ldc, int compute, int algo)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n, k,  alpha, A,       at,  lda,
                                B, bt, ldb, beta, C, ct, ldc,   compute, algo};
    return gemmex(AMP_HOOK_cublasGemmEx_64, 1, &g);
}

/* cublasSgemmStridedBatched: lowered as cublasGemmStridedBatchedEx. */
#define SGEMM_STRIDED_FN(INT)                                                                      \
    int (*)(void *, int, int, INT, INT, INT, const float *, const float *, INT, long long,         \
            const float *, INT, long long, const float *, float *, INT, long long, INT)
static int sgemm_strided_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, SGEMM_STRIDED_FN, a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A,
                        a->lda, c->sa, a->B, a->ldb, c->sb, a->beta, out, ld, c->sc, c->batch);
}

static int sgemm_strided(enum amp_hook_id hook, int is64, void *h, int ta, int tb, int64_t m,
                         int64_t n, int64_t k, const float *alpha, const float *A, int64_t lda,
                         long long sa, const float *B, int64_t ldb, long long sb, const float *beta,
                         float *C, int64_t ldc, long long sc, int64_t batch)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sgemm_strided_as_made, AMP_CUBLAS_TO_STRIDED);
    c.eligible = 1;
    c.g = (struct amp_gemmex_args){h, ta,  tb,  m,    n, k,   alpha, A,           F32, lda,
                                   B, F32, ldb, beta, C, F32, ldc,   COMPUTE_32F, ALGO};
    c.sa = sa, c.sb = sb, c.sc = sc, c.batch = batch;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSgemmStridedBatched)
int AMP_C_ENTRY(cublasSgemmStridedBatched)(void *h, int ta, int tb, int m, int n, int k,
                                           const float *alpha, const float *A, int lda,
                                           long long sa, const float *B, int ldb, long long sb,
                                           const float *beta, float *C, int ldc, long long sc,
                                           int batch)
{
    AMP_NOTE_CALLER();
    return sgemm_strided(AMP_HOOK_cublasSgemmStridedBatched, 0, h, ta, tb, m, n, k, alpha, A, lda,
                         sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

AMP_STUB(cublasSgemmStridedBatched_64)
int AMP_C_ENTRY(cublasSgemmStridedBatched_64)(void *h, int ta, int tb, int64_t m, int64_t n,
                                              int64_t k, const float *alpha, const float *A,
                                              int64_t lda, long long sa, const float *B,
                                              int64_t ldb, long long sb, const float *beta,
                                              float *C, int64_t ldc, long long sc, int64_t batch)
{
    AMP_NOTE_CALLER();
    return sgemm_strided(AMP_HOOK_cublasSgemmStridedBatched_64, 1, h, ta, tb, m, n, k, alpha, A,
                         lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

/* cublasGemmStridedBatchedEx: its compute type, as cublasGemmEx's. */
#define GEMMEX_STRIDED_FN(INT)                                                                     \
    int (*)(void *, int, int, INT, INT, INT, const void *, const void *, int, INT, long long,      \
            const void *, int, INT, long long, const void *, void *, int, INT, long long, INT,     \
            int, int)
static int gemmex_strided_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, GEMMEX_STRIDED_FN, a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A,
                        a->at, a->lda, c->sa, a->B, a->bt, a->ldb, c->sb, a->beta, out, a->ct, ld,
                        c->sc, c->batch, a->compute, a->algo);
}

static int gemmex_strided(enum amp_hook_id hook, int is64, const struct amp_gemmex_args *g,
                          long long sa, long long sb, long long sc, int64_t batch)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, gemmex_strided_as_made, AMP_CUBLAS_TO_STRIDED);
    c.is_ex = 1;
    c.eligible = ex_eligible(g);
    c.g = *g;
    c.sa = sa, c.sb = sb, c.sc = sc, c.batch = batch;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasGemmStridedBatchedEx)
int AMP_C_ENTRY(cublasGemmStridedBatchedEx)(void *h, int ta, int tb, int m, int n, int k,
                                            const void *alpha, const void *A, int at, int lda,
                                            long long sa, const void *B, int bt, int ldb,
                                            long long sb, const void *beta, void *C, int ct,
                                            int ldc, long long sc, int batch, int compute, int algo)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n, k,  alpha, A,       at,  lda,
                                B, bt, ldb, beta, C, ct, ldc,   compute, algo};
    return gemmex_strided(AMP_HOOK_cublasGemmStridedBatchedEx, 0, &g, sa, sb, sc, batch);
}

AMP_STUB(cublasGemmStridedBatchedEx_64)
int AMP_C_ENTRY(cublasGemmStridedBatchedEx_64)(void *h, int ta, int tb, int64_t m, int64_t n,
                                               int64_t k, const void *alpha, const void *A, int at,
                                               int64_t lda, long long sa, const void *B, int bt,
                                               int64_t ldb, long long sb, const void *beta, void *C,
                                               int ct, int64_t ldc, long long sc, int64_t batch,
                                               int compute, int algo)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n, k,  alpha, A,       at,  lda,
                                B, bt, ldb, beta, C, ct, ldc,   compute, algo};
    return gemmex_strided(AMP_HOOK_cublasGemmStridedBatchedEx_64, 1, &g, sa, sb, sc, batch);
}

/* cublasSgemmEx: all-fp32 types become GemmEx with the fast compute type. */
#define SGEMMEX_FN(INT)                                                                            \
    int (*)(void *, int, int, INT, INT, INT, const float *, const void *, int, INT, const void *,  \
            int, INT, const float *, void *, int, INT)
static int sgemmex_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, SGEMMEX_FN, a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A, a->at,
                        a->lda, a->B, a->bt, a->ldb, a->beta, out, a->ct, ld);
}

static int sgemmex(enum amp_hook_id hook, int is64, const struct amp_gemmex_args *g)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sgemmex_as_made, AMP_CUBLAS_TO_GEMMEX);
    c.eligible = all_fp32(g);
    c.g = *g;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSgemmEx)
int AMP_C_ENTRY(cublasSgemmEx)(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                               const void *A, int at, int lda, const void *B, int bt, int ldb,
                               const float *beta, void *C, int ct, int ldc)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n, k,  alpha, A,           at,  lda,
                                B, bt, ldb, beta, C, ct, ldc,   COMPUTE_32F, ALGO};
    return sgemmex(AMP_HOOK_cublasSgemmEx, 0, &g);
}

AMP_STUB(cublasSgemmEx_64)
int AMP_C_ENTRY(cublasSgemmEx_64)(void *h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                  const float *alpha, const void *A, int at, int64_t lda,
                                  const void *B, int bt, int64_t ldb, const float *beta, void *C,
                                  int ct, int64_t ldc)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n, k,  alpha, A,           at,  lda,
                                B, bt, ldb, beta, C, ct, ldc,   COMPUTE_32F, ALGO};
    return sgemmex(AMP_HOOK_cublasSgemmEx_64, 1, &g);
}

/* cublasSgemv_v2: y = alpha op(A) x + beta y is a GEMM with one column
 * when x and y have unit stride. */
#define SGEMV_FN(INT)                                                                              \
    int (*)(void *, int, INT, INT, const float *, const float *, INT, const float *, INT,          \
            const float *, float *, INT)
static int sgemv_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    (void)ld;
    return AMP_BY_WIDTH(c, SGEMV_FN, a->h, a->ta, GEMV_M(a), GEMV_N(a), a->alpha, a->A, a->lda,
                        a->B, c->incx, a->beta, out, c->incy);
}

static int sgemv(enum amp_hook_id hook, int is64, void *h, int trans, int64_t m, int64_t n,
                 const float *alpha, const float *A, int64_t lda, const float *x, int64_t incx,
                 const float *beta, float *y, int64_t incy)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sgemv_as_made, AMP_CUBLAS_TO_GEMMEX);
    c.eligible = gemv_shaped(trans, m, n, lda, incx, incy);
    c.g = gemv_as_gemm(h, trans, m, n, alpha, A, lda, x, beta, y);
    c.incx = incx, c.incy = incy;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSgemv_v2)
int AMP_C_ENTRY(cublasSgemv_v2)(void *h, int trans, int m, int n, const float *alpha,
                                const float *A, int lda, const float *x, int incx,
                                const float *beta, float *y, int incy)
{
    AMP_NOTE_CALLER();
    return sgemv(AMP_HOOK_cublasSgemv_v2, 0, h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

AMP_STUB(cublasSgemv_v2_64)
int AMP_C_ENTRY(cublasSgemv_v2_64)(void *h, int trans, int64_t m, int64_t n, const float *alpha,
                                   const float *A, int64_t lda, const float *x, int64_t incx,
                                   const float *beta, float *y, int64_t incy)
{
    AMP_NOTE_CALLER();
    return sgemv(AMP_HOOK_cublasSgemv_v2_64, 1, h, trans, m, n, alpha, A, lda, x, incx, beta, y,
                 incy);
}

/* cublasSger_v2: A += alpha x y^T is a GEMM with inner dimension 1 (beta 1)
 * when x and y have unit stride and scalars are host pointers. */
#define SGER_FN(INT)                                                                               \
    int (*)(void *, INT, INT, const float *, const float *, INT, const float *, INT, float *, INT)
static int sger_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, SGER_FN, a->h, a->m, a->n, a->alpha, a->A, c->incx, a->B, c->incy, out,
                        ld);
}

static int sger(enum amp_hook_id hook, int is64, void *h, int64_t m, int64_t n, const float *alpha,
                const float *x, int64_t incx, const float *y, int64_t incy, float *A, int64_t lda)
{
    static const float one = 1.0f;
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sger_as_made, AMP_CUBLAS_TO_GEMMEX);
    c.eligible = incx == 1 && incy == 1 && m >= 0 && n >= 0 && lda >= (m > 1 ? m : 1) &&
                 amp_cublas_host_pointers(c.real, h);
    c.g = (struct amp_gemmex_args){
        h,    0, 1,   m,   n,           1,   alpha, x, F32, m > 1 ? m : 1, y, F32, n > 1 ? n : 1,
        &one, A, F32, lda, COMPUTE_32F, ALGO};
    c.incx = incx, c.incy = incy;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSger_v2)
int AMP_C_ENTRY(cublasSger_v2)(void *h, int m, int n, const float *alpha, const float *x, int incx,
                               const float *y, int incy, float *A, int lda)
{
    AMP_NOTE_CALLER();
    return sger(AMP_HOOK_cublasSger_v2, 0, h, m, n, alpha, x, incx, y, incy, A, lda);
}

AMP_STUB(cublasSger_v2_64)
int AMP_C_ENTRY(cublasSger_v2_64)(void *h, int64_t m, int64_t n, const float *alpha, const float *x,
                                  int64_t incx, const float *y, int64_t incy, float *A, int64_t lda)
{
    AMP_NOTE_CALLER();
    return sger(AMP_HOOK_cublasSger_v2_64, 1, h, m, n, alpha, x, incx, y, incy, A, lda);
}

/* cublasSgemmBatched: pointer arrays, lowered as cublasGemmBatchedEx. */
#define SGEMM_BATCHED_FN(INT)                                                                      \
    int (*)(void *, int, int, INT, INT, INT, const float *, const float *const *, INT,             \
            const float *const *, INT, const float *, float *const *, INT, INT)
static int sgemm_batched_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, SGEMM_BATCHED_FN, a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A,
                        a->lda, a->B, a->ldb, a->beta, out, ld, c->batch);
}

static int sgemm_batched(enum amp_hook_id hook, int is64, void *h, int ta, int tb, int64_t m,
                         int64_t n, int64_t k, const float *alpha, const float *const *A,
                         int64_t lda, const float *const *B, int64_t ldb, const float *beta,
                         float *const *C, int64_t ldc, int64_t batch)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sgemm_batched_as_made, AMP_CUBLAS_TO_BATCHED);
    c.eligible = 1;
    c.g = (struct amp_gemmex_args){h, ta,  tb,  m,    n,         k,   alpha, A,           F32, lda,
                                   B, F32, ldb, beta, (void *)C, F32, ldc,   COMPUTE_32F, ALGO};
    c.batch = batch;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSgemmBatched)
int AMP_C_ENTRY(cublasSgemmBatched)(void *h, int ta, int tb, int m, int n, int k,
                                    const float *alpha, const float *const *A, int lda,
                                    const float *const *B, int ldb, const float *beta,
                                    float *const *C, int ldc, int batch)
{
    AMP_NOTE_CALLER();
    return sgemm_batched(AMP_HOOK_cublasSgemmBatched, 0, h, ta, tb, m, n, k, alpha, A, lda, B, ldb,
                         beta, C, ldc, batch);
}

AMP_STUB(cublasSgemmBatched_64)
int AMP_C_ENTRY(cublasSgemmBatched_64)(void *h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                       const float *alpha, const float *const *A, int64_t lda,
                                       const float *const *B, int64_t ldb, const float *beta,
                                       float *const *C, int64_t ldc, int64_t batch)
{
    AMP_NOTE_CALLER();
    return sgemm_batched(AMP_HOOK_cublasSgemmBatched_64, 1, h, ta, tb, m, n, k, alpha, A, lda, B,
                         ldb, beta, C, ldc, batch);
}

/* cublasGemmBatchedEx: its compute type, as cublasGemmEx's. */
#define GEMMEX_BATCHED_FN(INT)                                                                     \
    int (*)(void *, int, int, INT, INT, INT, const void *, const void *const *, int, INT,          \
            const void *const *, int, INT, const void *, void *const *, int, INT, INT, int, int)
static int gemmex_batched_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    return AMP_BY_WIDTH(c, GEMMEX_BATCHED_FN, a->h, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A,
                        a->at, a->lda, a->B, a->bt, a->ldb, a->beta, out, a->ct, ld, c->batch,
                        a->compute, a->algo);
}

static int gemmex_batched(enum amp_hook_id hook, int is64, const struct amp_gemmex_args *g,
                          int64_t batch)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, gemmex_batched_as_made, AMP_CUBLAS_TO_BATCHED);
    c.is_ex = 1;
    c.eligible = ex_eligible(g);
    c.g = *g;
    c.batch = batch;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasGemmBatchedEx)
int AMP_C_ENTRY(cublasGemmBatchedEx)(void *h, int ta, int tb, int m, int n, int k,
                                     const void *alpha, const void *const *A, int at, int lda,
                                     const void *const *B, int bt, int ldb, const void *beta,
                                     void *const *C, int ct, int ldc, int batch, int compute,
                                     int algo)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n,         k,  alpha, A,       at,  lda,
                                B, bt, ldb, beta, (void *)C, ct, ldc,   compute, algo};
    return gemmex_batched(AMP_HOOK_cublasGemmBatchedEx, 0, &g, batch);
}

AMP_STUB(cublasGemmBatchedEx_64)
int AMP_C_ENTRY(cublasGemmBatchedEx_64)(void *h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                        const void *alpha, const void *const *A, int at,
                                        int64_t lda, const void *const *B, int bt, int64_t ldb,
                                        const void *beta, void *const *C, int ct, int64_t ldc,
                                        int64_t batch, int compute, int algo)
{
    AMP_NOTE_CALLER();
    struct amp_gemmex_args g = {h, ta, tb,  m,    n,         k,  alpha, A,       at,  lda,
                                B, bt, ldb, beta, (void *)C, ct, ldc,   compute, algo};
    return gemmex_batched(AMP_HOOK_cublasGemmBatchedEx_64, 1, &g, batch);
}

/* cublasSgemvBatched: a pointer-array batch of one-column GEMMs. */
#define SGEMV_BATCHED_FN(INT)                                                                      \
    int (*)(void *, int, INT, INT, const float *, const float *const *, INT, const float *const *, \
            INT, const float *, float *const *, INT, INT)
static int sgemv_batched_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    (void)ld;
    return AMP_BY_WIDTH(c, SGEMV_BATCHED_FN, a->h, a->ta, GEMV_M(a), GEMV_N(a), a->alpha, a->A,
                        a->lda, a->B, c->incx, a->beta, out, c->incy, c->batch);
}

static int sgemv_batched(enum amp_hook_id hook, int is64, void *h, int trans, int64_t m, int64_t n,
                         const float *alpha, const float *const *A, int64_t lda,
                         const float *const *x, int64_t incx, const float *beta, float *const *y,
                         int64_t incy, int64_t batch)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sgemv_batched_as_made, AMP_CUBLAS_TO_BATCHED);
    c.eligible = gemv_shaped(trans, m, n, lda, incx, incy);
    c.g = gemv_as_gemm(h, trans, m, n, alpha, A, lda, x, beta, (void *)y);
    c.incx = incx, c.incy = incy, c.batch = batch;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSgemvBatched)
int AMP_C_ENTRY(cublasSgemvBatched)(void *h, int trans, int m, int n, const float *alpha,
                                    const float *const *A, int lda, const float *const *x, int incx,
                                    const float *beta, float *const *y, int incy, int batch)
{
    AMP_NOTE_CALLER();
    return sgemv_batched(AMP_HOOK_cublasSgemvBatched, 0, h, trans, m, n, alpha, A, lda, x, incx,
                         beta, y, incy, batch);
}

AMP_STUB(cublasSgemvBatched_64)
int AMP_C_ENTRY(cublasSgemvBatched_64)(void *h, int trans, int64_t m, int64_t n, const float *alpha,
                                       const float *const *A, int64_t lda, const float *const *x,
                                       int64_t incx, const float *beta, float *const *y,
                                       int64_t incy, int64_t batch)
{
    AMP_NOTE_CALLER();
    return sgemv_batched(AMP_HOOK_cublasSgemvBatched_64, 1, h, trans, m, n, alpha, A, lda, x, incx,
                         beta, y, incy, batch);
}

/* cublasSgemvStridedBatched: a strided batch of one-column GEMMs. */
#define SGEMV_STRIDED_FN(INT)                                                                      \
    int (*)(void *, int, INT, INT, const float *, const float *, INT, long long, const float *,    \
            INT, long long, const float *, float *, INT, long long, INT)
static int sgemv_strided_as_made(const struct amp_cublas_call *c, void *out, int64_t ld)
{
    const struct amp_gemmex_args *a = &c->g;
    (void)ld;
    return AMP_BY_WIDTH(c, SGEMV_STRIDED_FN, a->h, a->ta, GEMV_M(a), GEMV_N(a), a->alpha, a->A,
                        a->lda, c->sa, a->B, c->incx, c->sb, a->beta, out, c->incy, c->sc,
                        c->batch);
}

static int sgemv_strided(enum amp_hook_id hook, int is64, void *h, int trans, int64_t m, int64_t n,
                         const float *alpha, const float *A, int64_t lda, long long sa,
                         const float *x, int64_t incx, long long sx, const float *beta, float *y,
                         int64_t incy, long long sy, int64_t batch)
{
    struct amp_cublas_call c;
    call_init(&c, hook, is64, sgemv_strided_as_made, AMP_CUBLAS_TO_STRIDED);
    c.eligible = gemv_shaped(trans, m, n, lda, incx, incy);
    c.g = gemv_as_gemm(h, trans, m, n, alpha, A, lda, x, beta, y);
    c.incx = incx, c.incy = incy, c.sa = sa, c.sb = sx, c.sc = sy, c.batch = batch;
    return amp_cublas_gemm(&c);
}

AMP_STUB(cublasSgemvStridedBatched)
int AMP_C_ENTRY(cublasSgemvStridedBatched)(void *h, int trans, int m, int n, const float *alpha,
                                           const float *A, int lda, long long sa, const float *x,
                                           int incx, long long sx, const float *beta, float *y,
                                           int incy, long long sy, int batch)
{
    AMP_NOTE_CALLER();
    return sgemv_strided(AMP_HOOK_cublasSgemvStridedBatched, 0, h, trans, m, n, alpha, A, lda, sa,
                         x, incx, sx, beta, y, incy, sy, batch);
}

AMP_STUB(cublasSgemvStridedBatched_64)
int AMP_C_ENTRY(cublasSgemvStridedBatched_64)(void *h, int trans, int64_t m, int64_t n,
                                              const float *alpha, const float *A, int64_t lda,
                                              long long sa, const float *x, int64_t incx,
                                              long long sx, const float *beta, float *y,
                                              int64_t incy, long long sy, int64_t batch)
{
    AMP_NOTE_CALLER();
    return sgemv_strided(AMP_HOOK_cublasSgemvStridedBatched_64, 1, h, trans, m, n, alpha, A, lda,
                         sa, x, incx, sx, beta, y, incy, sy, batch);
}

/* The level-1 reductions: nothing to lower; counted (fp32 for the norms,
 * fp32-list ops) and forwarded word for word. */
static void count_leaf(enum amp_hook_id hook)
{
    struct amp_thread *t = amp_thread_enter();
    if (t)
        amp_count(t, hook,
                  amp_decide_fp32(t, AMP_DEVICE_CUDA, hook) ? AMP_CTL_FP32 : AMP_CTL_PASSTHROUGH,
                  1);
}

#define AMP_DOOR_LEAF(sym, ints)                                                                   \
    AMP_STUB(sym) int AMP_C_ENTRY(sym)(AMP_WORD_PARAMS)                                            \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        count_leaf(AMP_HOOK_##sym);                                                                \
        return ((amp_cublas_words_fn)amp_real(AMP_HOOK_##sym))(AMP_WORD_ARGS);                     \
    }

/* A symmetric or triangular level-3 call: amp_cublas_level3
 * (shim/cublas/cublas_level3.c). */
#define AMP_DOOR_LEVEL3(sym, kind, ints)                                                           \
    AMP_STUB(sym) int AMP_C_ENTRY(sym)(AMP_WORD_PARAMS)                                            \
    {                                                                                              \
        AMP_NOTE_CALLER();                                                                         \
        const uintptr_t w[] = {AMP_WORD_ARGS};                                                     \
        return amp_cublas_level3(AMP_HOOK_##sym, kind, AMP_IS64_##ints, w);                        \
    }
#define AMP_IS64_I32 0
#define AMP_IS64_I64 1

/* The doors of the list's word-forwarding kinds; the GEMM kinds' are above. */
#define AMP_DOOR_WRITTEN_OUT(sym, ints)
#define AMP_DOOR_SGEMM AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_GEMMEX AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SGEMM_STRIDED AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_GEMMEX_STRIDED AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SGEMMEX AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SGEMV AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SGER AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SGEMM_BATCHED AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_GEMMEX_BATCHED AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SGEMV_BATCHED AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SGEMV_STRIDED AMP_DOOR_WRITTEN_OUT
#define AMP_DOOR_SYRK(sym, ints) AMP_DOOR_LEVEL3(sym, AMP_LEVEL3_SYRK, ints)
#define AMP_DOOR_SYMM(sym, ints) AMP_DOOR_LEVEL3(sym, AMP_LEVEL3_SYMM, ints)
#define AMP_DOOR_TRMM(sym, ints) AMP_DOOR_LEVEL3(sym, AMP_LEVEL3_TRMM, ints)
#define AMP_DOOR_TRSM(sym, ints) AMP_DOOR_LEVEL3(sym, AMP_LEVEL3_TRSM, ints)
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_DOOR_##kind(sym, ints)
AMPSHIM_HOOK_LIST_CUBLAS(AMP_X_HOOK)
#undef AMP_X_HOOK

/* Every entry point of the list has a door: one without does not compile. */
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) (void *)AMP_C_NAME(sym),
__attribute__((used)) static void *const doors[] = {AMPSHIM_HOOK_LIST_CUBLAS(AMP_X_HOOK)};
#undef AMP_X_HOOK
