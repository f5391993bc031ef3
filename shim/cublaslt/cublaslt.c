/* The exported cuBLASLt entry point, expanded from AMPSHIM_HOOK_LIST_CUBLASLT.
 * A matmul whose A, B, C and D are fp32 and whose descriptor asks for plain
 * CUBLAS_COMPUTE_32F with fp32 scaling runs lowered on a private descriptor:
 * a new one with the fast compute type and every other attribute copied from
 * the program's (epilogue, bias pointer and type, transposes, pointer mode,
 * aux and scale pointers, ...: each attribute number the library answers
 * for). The program's descriptor is only read, never written, so a thread
 * sharing it sees nothing.
 *
 * The algorithm: a program that passes one chose it for COMPUTE_32F (PyTorch
 * asks cublasLtMatmulAlgoGetHeuristic for nn.Linear with a bias), and under
 * another compute type cuBLASLt may refuse it or run the compute type it was
 * made for. So the shim asks cublasLtMatmulAlgoGetHeuristic itself, for the
 * private descriptor, the program's layouts, at most the program's
 * workspace and the alignment of the real A, B, C and D (cuBLASLt's
 * preferences assume 256 bytes unless told: an algorithm chosen so faults on
 * a sliced tensor's pointer, which kills the context), takes the first of
 * several answers that runs, and caches it per (descriptor attributes,
 * layouts, workspace size, operand alignments, device). Pointer attributes
 * (bias, the epilogue's aux buffer, scale and amax pointers) are in that key
 * by their alignment, not their value, so a buffer that moves every step
 * still finds its algorithm. A bias not 16-byte aligned is never lowered. A
 * program that passes NULL lets cuBLASLt choose, as it asked. If anything
 * fails (an attribute that cannot be copied, no algorithm within the
 * workspace, the lowered call itself), the program's own call runs as it
 * made it, counted as not lowered: a call counts as lowered only when it ran
 * on the private descriptor with an algorithm chosen for it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shim/cublaslt/cublaslt_abi.h"
#include "runtime/decide.h"
#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_timing.h"
#include "shim/hook_stub.h"
#include "shim/resolve.h"

typedef int (*desc_get_fn)(void *, int, void *, size_t, size_t *);

/* cuBLASLt's helpers (shim/cuda/cuda_helpers.h), from the object that
 * defines the call's real cublasLtMatmul; NULL when one is missing. */
static const struct amp_cublaslt_helpers *lt_functions(const void *real)
{
    return amp_helpers_of_part(&amp_cublaslt_helper_list, sizeof(struct amp_cublaslt_helpers), real,
                               NULL, 0);
}

static int layout_is_fp32(const struct amp_cublaslt_helpers *f, void *layout)
{
    uint32_t type = 0xffffffffu;
    size_t written = 0;
    return layout &&
           f->layout_get(layout, AMP_CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type, &written) ==
               AMP_CUBLAS_STATUS_SUCCESS &&
           type == AMP_CUDA_R_32F;
}

/* Whether the matmul is an all-fp32 one with plain 32F compute and scale. */
static int plain_fp32(const struct amp_cublaslt_helpers *f, void *desc, void *a, void *b, void *c,
                      void *d)
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

/* The multiply-adds of a matmul, for the size rule: A holds m x k
 * elements whichever way it is stored, D is m x n, each of D's batch.
 * 0 when the library does not answer (the call is then small). */
static double matmul_madds(const struct amp_cublaslt_helpers *f, void *a, void *d)
{
    uint64_t a_rows = 0, a_cols = 0, d_cols = 0;
    int32_t batch = 1;
    size_t written = 0;
    f->layout_get(a, AMP_CUBLASLT_MATRIX_LAYOUT_ROWS, &a_rows, sizeof a_rows, &written);
    f->layout_get(a, AMP_CUBLASLT_MATRIX_LAYOUT_COLS, &a_cols, sizeof a_cols, &written);
    f->layout_get(d, AMP_CUBLASLT_MATRIX_LAYOUT_COLS, &d_cols, sizeof d_cols, &written);
    f->layout_get(d, AMP_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch, &written);
    return (double)a_rows * (double)a_cols * (double)d_cols * (double)(batch > 1 ? batch : 1);
}

/* ---- the algorithm cache ---- */

/* A call's identity for the cache: the bytes of every attribute of its
 * descriptor and layouts, the compute type and the workspace size. */
struct lt_key {
    size_t len;
    int overflow;
    unsigned char bytes[1024];
};

static void key_add(struct lt_key *k, const void *p, size_t n)
{
    if (k->len + n > sizeof k->bytes) {
        k->overflow = 1;
        return;
    }
    memcpy(k->bytes + k->len, p, n);
    k->len += n;
}

/* The size of each attribute number of one kind of object (matmul
 * descriptor, layout): 0 where the library knows no such attribute, -1
 * where it is larger than the shim copies. Asked of the library once (they
 * are the library's, not the object's), at the first call. */
struct attr_sizes {
    _Atomic int ready;
    int8_t size[AMP_CUBLASLT_MATMUL_DESC_ATTRIBUTES];
};
static struct attr_sizes desc_sizes, layout_sizes;
static pthread_mutex_t sizes_lock = PTHREAD_MUTEX_INITIALIZER;

static const int8_t *sizes_of(struct attr_sizes *t, desc_get_fn get, void *obj, int count)
{
    if (!atomic_load_explicit(&t->ready, memory_order_acquire)) {
        struct amp_quiet quiet;
        amp_lock_quietly(&sizes_lock, &quiet);
        if (!atomic_load_explicit(&t->ready, memory_order_relaxed)) {
            for (int attr = 0; attr < count; attr++) {
                size_t size = 0;
                int known = get(obj, attr, NULL, 0, &size) == AMP_CUBLAS_STATUS_SUCCESS;
                t->size[attr] = !known ? 0 : size > 64 ? -1 : (int8_t)size;
            }
            atomic_store_explicit(&t->ready, 1, memory_order_release);
        }
        amp_unlock_quietly(&sizes_lock, &quiet);
    }
    return t->size;
}

/* A device pointer's alignment as cuBLASLt's MIN_ALIGNMENT preferences
 * count it: its lowest set bit, at most 256 (NULL: 256). */
static uint32_t alignment_of(const void *p)
{
    uintptr_t v = (uintptr_t)p, low = v & (~v + 1);
    return low == 0 || low > 256 ? 256u : (uint32_t)low;
}

/* Whether a descriptor attribute holds a device pointer: BIAS_POINTER (8),
 * EPILOGUE_AUX_POINTER (11), the A, B, C and D scale pointers (17 to 20),
 * AMAX_D_POINTER (21), EPILOGUE_AUX_SCALE_POINTER and _AMAX_POINTER (23,
 * 24), D_OUT_SCALE_POINTER (36); the numbers are cublasLt.h's (checked by
 * the test fake). */
static int pointer_attribute(int attr)
{
    static const uint8_t pointers[] = {8, 11, 17, 18, 19, 20, 21, 23, 24, 36};
    for (size_t i = 0; i < sizeof pointers; i++)
        if (attr == pointers[i])
            return 1;
    return 0;
}

/* Copies every attribute of the program's descriptor but the compute and
 * scale types onto priv, and adds them to the key (a pointer by its
 * alignment); *bias is the bias pointer. 0 if one cannot be copied. */
static int copy_descriptor(const struct amp_cublaslt_helpers *f, void *desc, void *priv,
                           struct lt_key *k, const void **bias)
{
    const int8_t *size =
        sizes_of(&desc_sizes, f->desc_get, desc, AMP_CUBLASLT_MATMUL_DESC_ATTRIBUTES);
    for (int attr = 0; attr < AMP_CUBLASLT_MATMUL_DESC_ATTRIBUTES; attr++) {
        if (attr == AMP_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE ||
            attr == AMP_CUBLASLT_MATMUL_DESC_SCALE_TYPE || size[attr] == 0)
            continue;
        unsigned char value[64];
        size_t written = 0;
        if (size[attr] < 0 ||
            f->desc_get(desc, attr, value, (size_t)size[attr], &written) !=
                AMP_CUBLAS_STATUS_SUCCESS ||
            f->desc_set(priv, attr, value, written) != AMP_CUBLAS_STATUS_SUCCESS)
            return 0;
        key_add(k, &attr, sizeof attr);
        if (pointer_attribute(attr) && written == sizeof(void *)) {
            const void *p;
            memcpy(&p, value, sizeof p);
            uint32_t align = alignment_of(p);
            key_add(k, &align, sizeof align);
            if (attr == AMP_CUBLASLT_MATMUL_DESC_BIAS_POINTER)
                *bias = p;
        } else {
            key_add(k, value, written);
        }
    }
    return 1;
}

static void key_layout(const struct amp_cublaslt_helpers *f, void *layout, struct lt_key *k)
{
    const int8_t *size =
        sizes_of(&layout_sizes, f->layout_get, layout, AMP_CUBLASLT_MATRIX_LAYOUT_ATTRIBUTES);
    for (int attr = 0; attr < AMP_CUBLASLT_MATRIX_LAYOUT_ATTRIBUTES; attr++) {
        unsigned char value[64];
        size_t written = 0;
        if (size[attr] > 0 && f->layout_get(layout, attr, value, (size_t)size[attr], &written) ==
                                  AMP_CUBLAS_STATUS_SUCCESS) {
            key_add(k, &attr, sizeof attr);
            key_add(k, value, written);
        }
    }
}

enum { ALGO_CACHE = 64 };
static struct {
    struct lt_key key;
    struct amp_lt_algo algo;
    int used;
} algo_cache[ALGO_CACHE];
static unsigned algo_next;
static pthread_mutex_t algo_lock = PTHREAD_MUTEX_INITIALIZER;

static int cached_algo(const struct lt_key *k, struct amp_lt_algo *algo)
{
    int found = 0;
    struct amp_quiet quiet;
    amp_lock_quietly(&algo_lock, &quiet);
    for (int i = 0; i < ALGO_CACHE && !found; i++)
        if (algo_cache[i].used && algo_cache[i].key.len == k->len &&
            memcmp(algo_cache[i].key.bytes, k->bytes, k->len) == 0) {
            *algo = algo_cache[i].algo;
            found = 1;
        }
    amp_unlock_quietly(&algo_lock, &quiet);
    return found;
}

static void remember_algo(const struct lt_key *k, const struct amp_lt_algo *algo)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&algo_lock, &quiet);
    unsigned i = algo_next++ % ALGO_CACHE;
    algo_cache[i].key = *k;
    algo_cache[i].algo = *algo;
    algo_cache[i].used = 1;
    amp_unlock_quietly(&algo_lock, &quiet);
}

/* Candidate algorithms for the private descriptor within the program's
 * workspace and for the operands' alignments, best first: the cached one,
 * or up to CANDIDATES answers of cublasLtMatmulAlgoGetHeuristic. Returns
 * how many (0: none), with *cached set when it came from the cache. */
enum { CANDIDATES = 8 };
static int choose_algos(const struct amp_cublaslt_helpers *f, void *handle, void *priv,
                        void *layouts[4], const uint32_t align[4], size_t workspace_bytes,
                        struct lt_key *k, struct amp_lt_algo algos[CANDIDATES], int *cached)
{
    for (int i = 0; i < 4; i++)
        key_layout(f, layouts[i], k);
    uint64_t ws = workspace_bytes;
    key_add(k, &ws, sizeof ws);
    key_add(k, align, 4 * sizeof *align);
    const struct amp_cudart_helpers *rt = amp_cudart_helpers();
    int device = -1;
    if (!rt || rt->get_device(&device) != 0)
        device = -1;
    key_add(k, &device, sizeof device);
    /* The library's table stands for the library: an algorithm of cuBLASLt
     * 12 means nothing to 13. */
    key_add(k, &f, sizeof f);
    *cached = !k->overflow && cached_algo(k, &algos[0]);
    if (*cached)
        return 1;
    void *pref = NULL;
    struct amp_lt_heuristic results[CANDIDATES];
    int count = 0, n = 0;
    memset(results, 0, sizeof results);
    int ok = f->pref_create(&pref) == AMP_CUBLAS_STATUS_SUCCESS && pref &&
             f->pref_set(pref, AMP_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) ==
                 AMP_CUBLAS_STATUS_SUCCESS;
    for (int i = 0; ok && i < 4; i++)
        ok = f->pref_set(pref, AMP_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i, &align[i],
                         sizeof align[i]) == AMP_CUBLAS_STATUS_SUCCESS;
    ok = ok && f->heuristic(handle, priv, layouts[0], layouts[1], layouts[2], layouts[3], pref,
                            CANDIDATES, results, &count) == AMP_CUBLAS_STATUS_SUCCESS;
    for (int i = 0; ok && i < count && i < CANDIDATES; i++)
        if (results[i].state == AMP_CUBLAS_STATUS_SUCCESS &&
            results[i].workspace_size <= workspace_bytes)
            algos[n++] = results[i].algo;
    if (pref)
        f->pref_destroy(pref);
    return n;
}

/* Runs the matmul lowered on a private descriptor with compute type `fast`;
 * returns the status, or -1 when it could not be tried. */
typedef int (*matmul_fn)(void *, void *, const void *, const void *, void *, const void *, void *,
                         const void *, const void *, void *, void *, void *, const void *, void *,
                         size_t, void *);
static int run_lowered(const struct amp_cublaslt_helpers *f, matmul_fn real, int32_t fast,
                       void *handle, void *desc, const void *alpha, const void *A, void *a_layout,
                       const void *B, void *b_layout, const void *beta, const void *C,
                       void *c_layout, void *D, void *d_layout, const void *algo, void *workspace,
                       size_t workspace_bytes, void *stream)
{
    void *priv = NULL;
    if (f->desc_create(&priv, fast, AMP_CUDA_R_32F) != AMP_CUBLAS_STATUS_SUCCESS || !priv)
        return -1;
    struct lt_key key;
    key.len = 0;
    key.overflow = 0;
    key_add(&key, &fast, sizeof fast);
    int status = -1;
    const void *bias = NULL;
    const uint32_t align[4] = {alignment_of(A), alignment_of(B), alignment_of(C), alignment_of(D)};
    void *layouts[4] = {a_layout, b_layout, c_layout, d_layout};
    if (!copy_descriptor(f, desc, priv, &key, &bias) || alignment_of(bias) < 16) {
        f->desc_destroy(priv);
        return -1;
    }
    if (!algo) {
        status = real(handle, priv, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D, d_layout,
                      NULL, workspace, workspace_bytes, stream);
    } else {
        /* The first candidate that runs; a refusal writes nothing. */
        struct amp_lt_algo algos[CANDIDATES];
        int cached = 0, n = choose_algos(f, handle, priv, layouts, align, workspace_bytes, &key,
                                         algos, &cached);
        for (int i = 0; i < n && status != AMP_CUBLAS_STATUS_SUCCESS; i++) {
            status = real(handle, priv, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D,
                          d_layout, &algos[i], workspace, workspace_bytes, stream);
            if (status == AMP_CUBLAS_STATUS_SUCCESS && !cached && !key.overflow)
                remember_algo(&key, &algos[i]);
        }
    }
    f->desc_destroy(priv);
    return status;
}

/* One cublasLtMatmul call, as its door packs it. */
struct lt_call {
    enum amp_hook_id hook;
    void *handle, *desc;
    const void *alpha, *A;
    void *a_layout;
    const void *B;
    void *b_layout;
    const void *beta, *C;
    void *c_layout, *D, *d_layout;
    const void *algo;
    void *workspace;
    size_t workspace_bytes;
    void *stream;
};

static int as_made(matmul_fn real, const struct lt_call *c)
{
    return real(c->handle, c->desc, c->alpha, c->A, c->a_layout, c->B, c->b_layout, c->beta, c->C,
                c->c_layout, c->D, c->d_layout, c->algo, c->workspace, c->workspace_bytes,
                c->stream);
}

/* Lowers an all-fp32 matmul through a private descriptor with the fast
 * compute type; anything else, or a failure before D is written, runs as
 * made. */
static int lt_matmul(const struct lt_call *c)
{
    matmul_fn real = (matmul_fn)amp_real(c->hook);
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return as_made(real, c);
    const struct amp_cublaslt_helpers *f = lt_functions((const void *)real);
    enum amp_ctl_counter outcome = AMP_CTL_PASSTHROUGH;
    int32_t fast = 0;
    if (f && plain_fp32(f, c->desc, c->a_layout, c->b_layout, c->c_layout, c->d_layout))
        fast = amp_cublas_fast_compute(amp_cuda_size_rule(
            t, c->hook, 1,
            amp_decide_lower_dtype_unaudited(t, AMP_DEVICE_CUDA, c->hook, 1, &outcome),
            matmul_madds(f, c->a_layout, c->d_layout), &outcome));
    int status = fast
                     ? run_lowered(f, real, fast, c->handle, c->desc, c->alpha, c->A, c->a_layout,
                                   c->B, c->b_layout, c->beta, c->C, c->c_layout, c->D, c->d_layout,
                                   c->algo, c->workspace, c->workspace_bytes, c->stream)
                     : -1;
    if (status != AMP_CUBLAS_STATUS_SUCCESS) {
        outcome = amp_not_lowered_after_all(outcome);
        status = as_made(real, c);
    }
    amp_count(t, c->hook, outcome, 1);
    return status;
}

/* A call whose GPU time is taken (shim/cuda/cuda_timing.h). */
__attribute__((noinline)) static int lt_timed(const struct lt_call *c)
{
    struct amp_thread *t = amp_thread_enter();
    struct amp_cuda_timed tm = {.pair = -1};
    if (t)
        amp_cuda_time_start(&tm, t, c->hook, c->stream);
    int status = lt_matmul(c);
    amp_cuda_time_end(&tm, t, c->hook, c->stream);
    return status;
}

AMP_STUB(cublasLtMatmul)
int AMP_C_ENTRY(cublasLtMatmul)(void *handle, void *desc, const void *alpha, const void *A,
                                void *a_layout, const void *B, void *b_layout, const void *beta,
                                const void *C, void *c_layout, void *D, void *d_layout,
                                const void *algo, void *workspace, size_t workspace_bytes,
                                void *stream)
{
    AMP_NOTE_CALLER();
    struct lt_call c = {AMP_HOOK_cublasLtMatmul,
                        handle,
                        desc,
                        alpha,
                        A,
                        a_layout,
                        B,
                        b_layout,
                        beta,
                        C,
                        c_layout,
                        D,
                        d_layout,
                        algo,
                        workspace,
                        workspace_bytes,
                        stream};
    return amp_likely(!amp_cuda_timing_due()) ? lt_matmul(&c) : lt_timed(&c);
}

/* The list's only cuBLASLt entry point has its door above. */
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) (void *)AMP_C_NAME(sym),
__attribute__((used)) static void *const doors[] = {AMPSHIM_HOOK_LIST_CUBLASLT(AMP_X_HOOK)};
#undef AMP_X_HOOK
