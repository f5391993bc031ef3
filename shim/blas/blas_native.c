/* The native executor for lowered CPU products: a lowered gemm (every
 * sgemm form: CBLAS and Fortran, LP64 and ILP64) has its multiplicands
 * converted to compact bf16 (or fp16) in the thread's scratch and runs as a
 * oneDNN matmul on the CPU's low-precision dot-product units
 * (shim/blas/native_onednn.h), with fp32 accumulation and fp32 output, alpha and
 * beta applied by oneDNN. Whatever it cannot take (no oneDNN, no native
 * kernel for the dtype on this CPU, tf32, too small to pay, no memory) it
 * leaves to the emulated path, which rounds the operands and calls the real
 * fp32 routine.
 *
 * AMPSHIM_CPU_KERNEL (and ampctl's opt.cpu_kernel): auto takes the native
 * path from the crossover size below; native takes it at every size;
 * emulate never does. */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "shim/blas/native_backend.h"
#include "shim/blas/native_onednn.h"
#include "runtime/ctl_names.h"
#include "runtime/log.h"
#include "runtime/report.h"
#include "shim/blas/blas_native.h"
#include "shim/blas/native_pool.h"
#include "shim/resolve.h"

/* Auto's crossover, in multiply-adds (m * n * k). Measured with
 * bench/native_gemm_bench (square row-major sgemm, one thread, conversion
 * included) on an AMD EPYC (Zen 4, avx512_bf16; oneDNN 2.6.3
 * brg:avx512_core_bf16) on 2026-11-24: native took 1.30x the emulated time
 * at n = 64, 0.84x at n = 96, 0.61x at n = 128 (0.92x and 0.66x of plain
 * fp32 sgemm at 96 and 128). Below 96^3 the fixed cost of a oneDNN call
 * (memory objects, a stream) outweighs its faster kernel. A smallest
 * side of 16 keeps skinny products (matrix-vector in disguise, bandwidth
 * bound) emulated. */
#define AMP_NATIVE_MIN_N 96
#define AMP_NATIVE_MIN_MACS (AMP_NATIVE_MIN_N * AMP_NATIVE_MIN_N * AMP_NATIVE_MIN_N)
#define AMP_NATIVE_MIN_SIDE 16

/* The smallest chunk a worker thread is given: 64 rows and 128^3
 * multiply-adds (about 0.1 ms on one Zen 4 core), well above the
 * microseconds a sleeping worker takes to wake. */
#define AMP_NATIVE_CHUNK_ROWS 64
#define AMP_NATIVE_CHUNK_MACS (128 * 128 * 128)

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* The threads the program's BLAS would use for this call: OpenBLAS's (or
 * MKL's or BLIS's) own setting, which follows OPENBLAS_NUM_THREADS /
 * OMP_NUM_THREADS and the program's openblas_set_num_threads; 1 for a BLAS
 * with none (the reference BLAS is single-threaded). */
static int blas_threads(void)
{
    static const char *const getters[] = {"openblas_get_num_threads", "mkl_get_max_threads",
                                          "bli_thread_get_num_threads"};
    static int (*_Atomic getter)(void);
    static _Atomic int looked;
    int (*get)(void) = atomic_load_explicit(&getter, memory_order_acquire);
    if (!get && !atomic_load_explicit(&looked, memory_order_acquire)) {
        for (size_t i = 0; !get && i < sizeof getters / sizeof *getters; i++)
            *(void **)&get = amp_resolve_name(getters[i]);
        atomic_store_explicit(&getter, get, memory_order_release);
        atomic_store_explicit(&looked, 1, memory_order_release);
    }
    int n = get ? get() : 1;
    return n > 0 ? n : 1;
}

/* One info line per process for each way the path ends up (native, or the
 * first reason it could not be). */
static _Atomic int said_native, said_emulated;

static void say_emulated(const char *why)
{
    if (!atomic_exchange(&said_emulated, 1))
        amp_log(AMP_LOG_INFO, "lowered CPU products run emulated (rounded operands, fp32 BLAS): %s",
                why);
}

static void say_native(const char *impl, enum amp_lowp_dtype dtype)
{
    if (impl[0] && !atomic_exchange(&said_native, 1))
        amp_log(AMP_LOG_INFO, "lowered CPU products run native: oneDNN %s %s matmul, %s",
                amp_onednn_version(), amp_dtype_names[dtype], impl);
}

static void copy_lines(float *dst, int64_t ldd, const float *src, int64_t lds, int64_t lines,
                       int64_t len)
{
    for (int64_t l = 0; l < lines; l++)
        memcpy(dst + l * ldd, src + l * lds, (size_t)len * sizeof *dst);
}

typedef void (*lowp_conv_fn)(const float *, uint16_t *, size_t);

/* The conversion kernel into the dtype's 16-bit storage. */
static lowp_conv_fn lowp_conv(enum amp_lowp_dtype dtype)
{
    const struct amp_convert_kernels *k = amp_convert();
    return dtype == AMP_DTYPE_BF16 ? k->f32_to_bf16 : k->f32_to_f16;
}

/* The referenced lines of a stored operand, converted to compact lowp. */
static void compact(const struct amp_operand *o, uint16_t *dst, enum amp_lowp_dtype dtype)
{
    lowp_conv_fn conv = lowp_conv(dtype);
    for (int64_t line = 0; line < o->outer; line++)
        conv(o->p + line * o->ld, dst + line * o->inner, (size_t)o->inner);
}

/* One product split by rows of D into chunks: chunk i has base + (i < extra)
 * rows from row i * base + min(i, extra); prim[1] is the primitive for the
 * chunks with one row more. */
struct native_job {
    struct amp_onednn_prim *prim[2];
    struct amp_onednn_run *run[AMP_NATIVE_POOL_MAX];
    const uint16_t *x, *y;
    float *d;
    char *scratch;
    size_t scratch_each;
    int64_t base, extra, k, ldd;
    _Atomic int failed;
};

static int64_t chunk_start(const struct native_job *j, int64_t i)
{
    return i * j->base + (i < j->extra ? i : j->extra);
}

/* Binds every chunk before any runs (a failure then leaves C as it was). */
static int bind_chunks(struct native_job *j, int64_t chunks)
{
    for (int64_t i = 0; i < chunks; i++) {
        int64_t start = chunk_start(j, i);
        j->run[i] =
            amp_onednn_bind(j->prim[i < j->extra], j->x + start * j->k, j->y, j->d + start * j->ldd,
                            j->scratch + (size_t)i * j->scratch_each);
        if (!j->run[i])
            return 0;
    }
    return 1;
}

static void run_chunk(void *arg, int i)
{
    struct native_job *j = arg;
    if (amp_onednn_exec(j->run[i]) != 0)
        atomic_store(&j->failed, 1);
}

/* X (M x K, stored K x M when transposed) into compact lowp, so that each
 * chunk's rows are one dense block at x + start * K: untransposed that is
 * the plain compact copy; transposed, chunk i is a K x rows block. */
static void compact_x(const struct amp_operand *o, uint16_t *dst, enum amp_lowp_dtype dtype,
                      int trans, int64_t m, int64_t k, const struct native_job *j)
{
    if (!trans || j->base == m) {
        compact(o, dst, dtype);
        return;
    }
    lowp_conv_fn conv = lowp_conv(dtype);
    int64_t ld = o->outer == 1 ? m : o->ld; /* a merged operand is K lines of M */
    for (int64_t i = 0, start = 0; start < m; i++) {
        int64_t rows = j->base + (i < j->extra);
        for (int64_t l = 0; l < k; l++)
            conv(o->p + l * ld + start, dst + start * k + l * rows, (size_t)rows);
        start += rows;
    }
}

/* Gets the primitive for one product, saying once why when there is none,
 * and widens *scratch_each to its scratchpad. */
static struct amp_onednn_prim *get_prim(const struct amp_onednn_gemm *g, enum amp_onednn_status *st,
                                        size_t *scratch_each)
{
    char impl[128], why[192];
    struct amp_onednn_prim *p = amp_onednn_get(g, st, impl, sizeof impl);
    if (p) {
        say_native(impl, g->dtype);
    } else if (*st == AMP_ONEDNN_NOT_NATIVE) {
        snprintf(why, sizeof why, "oneDNN %s has no native %s kernel on this CPU (it offers %s)",
                 amp_onednn_version(), amp_dtype_names[g->dtype], impl[0] ? impl : "?");
        say_emulated(why);
    } else {
        say_emulated("oneDNN refused the matmul");
    }
    size_t need = p ? align64(amp_onednn_scratch_bytes(p)) : 0;
    if (need > *scratch_each)
        *scratch_each = need;
    return p;
}

/* After a native run: the scratch kept until the call ends and the
 * conversions counted, or given back for the emulated path. */
static int finish(struct amp_blas_call *c, int ran, uint64_t converted)
{
    if (ran) {
        c->holds_scratch = 1;
        c->converted += converted;
    } else {
        amp_scratch_done(c->t);
        say_emulated("oneDNN's matmul failed to run");
    }
    return ran;
}

static int native_gemm(struct amp_blas_call *c, int64_t threads, double macs)
{
    const struct amp_gemm_args *a = &c->gemm;
    /* Row major throughout: a column-major C is the row-major C^T =
     * op(B)^T op(A)^T. */
    int col = a->layout == 'C';
    const struct amp_operand *x = &c->in[col ? 1 : 0], *y = &c->in[col ? 0 : 1];
    struct amp_onednn_gemm g = {
        .dtype = c->dtype,
        .m = col ? a->n : a->m,
        .n = col ? a->m : a->n,
        .k = a->k,
        .trans_x = (uint8_t)((col ? a->tb : a->ta) != 'N'),
        .trans_y = (uint8_t)((col ? a->ta : a->tb) != 'N'),
        .alpha = a->alpha,
        .beta = a->beta,
    };
    /* oneDNN 2.6 has a native kernel only for a dense output (ld = N): a
     * padded C is computed in scratch and copied (O(MN) beside O(MNK)). */
    int staged = a->ldc != g.n;
    /* Chunks of D's rows, one per thread the BLAS would use (its share when
     * several program threads are in native calls at once), none smaller
     * than AMP_NATIVE_CHUNK_ROWS rows or AMP_NATIVE_CHUNK_MACS multiply-adds
     * (below that a worker's wake-up costs more than it saves). */
    int64_t chunks = threads;
    if (chunks > g.m / AMP_NATIVE_CHUNK_ROWS)
        chunks = g.m / AMP_NATIVE_CHUNK_ROWS;
    if ((double)chunks > macs / AMP_NATIVE_CHUNK_MACS)
        chunks = (int64_t)(macs / AMP_NATIVE_CHUNK_MACS);
    if (chunks > AMP_NATIVE_POOL_MAX)
        chunks = AMP_NATIVE_POOL_MAX;
    if (chunks < 1)
        chunks = 1;
    /* Several chunks that read C (beta != 0) also run on a copy: when one
     * fails after another wrote its rows, the emulated path that takes the
     * call over must find C as the program left it. */
    staged |= chunks > 1 && g.beta != 0.0f;
    struct native_job job = {.base = g.m / chunks, .extra = g.m % chunks, .k = g.k, .ldd = g.n};
    enum amp_onednn_status st = AMP_ONEDNN_OK;
    int ran = 0;
    for (int big = 0; big < 2 && st == AMP_ONEDNN_OK; big++) {
        if (big && !job.extra)
            break;
        struct amp_onednn_gemm part = g;
        part.m = job.base + big;
        job.prim[big] = get_prim(&part, &st, &job.scratch_each);
    }
    if (st != AMP_ONEDNN_OK)
        goto put;
    size_t xs = (size_t)(g.m * g.k), ys = (size_t)(g.k * g.n);
    size_t ds = staged ? (size_t)(g.m * g.n) : 0;
    size_t total =
        align64(xs * 2) + align64(ys * 2) + align64(ds * 4) + (size_t)chunks * job.scratch_each;
    char *s = amp_scratch(c->t, total);
    if (s) {
        uint16_t *xl = (uint16_t *)s, *yl = (uint16_t *)(s + align64(xs * 2));
        float *d = (float *)(s + align64(xs * 2) + align64(ys * 2));
        compact_x(x, xl, c->dtype, g.trans_x, g.m, g.k, &job);
        compact(y, yl, c->dtype);
        amp_blas_round_accumulator(c);
        if (staged && g.beta != 0.0f)
            copy_lines(d, g.n, a->c, a->ldc, g.m, g.n);
        job.x = xl;
        job.y = yl;
        job.d = staged ? d : a->c;
        job.scratch = (char *)d + align64(ds * 4);
        if (bind_chunks(&job, chunks)) {
            amp_native_parallel((int)chunks, (int)chunks, run_chunk, &job);
            ran = !atomic_load(&job.failed);
        }
        for (int64_t i = 0; i < chunks; i++)
            amp_onednn_unbind(job.run[i]);
        if (ran && staged)
            copy_lines(a->c, a->ldc, d, g.n, g.m, g.n);
        finish(c, ran, xs + ys);
    }
put:
    for (int i = 0; i < 2; i++)
        if (job.prim[i])
            amp_onednn_put(job.prim[i]);
    return ran;
}

/* ---- syrk ---- */

/* C's referenced triangle = alpha X X^T + beta C, X = op(A) (n x k), in
 * blocks of rows: block i (rows i0 to i0 + r) is one product X_i Y_i with
 * Y_i the rows of X its triangle reaches (from i0 on for an upper triangle,
 * up to i0 + r for a lower one), so the work is about half a full GEMM's
 * plus a diagonal strip. Each block's product goes to scratch; alpha and
 * beta are applied as it is written to the triangle. */
#define AMP_NATIVE_SYRK_BLOCKS 32
struct syrk_job {
    struct amp_onednn_prim *prim[AMP_NATIVE_SYRK_BLOCKS];
    struct amp_onednn_run *run[AMP_NATIVE_SYRK_BLOCKS];
    size_t d_at[AMP_NATIVE_SYRK_BLOCKS];
    const uint16_t *x;
    float *d, *c;
    char *scratch;
    size_t scratch_each;
    int64_t n, k, bs, ldc;
    float alpha, beta;
    int upper;
    _Atomic int failed;
};

static void syrk_block(const struct syrk_job *j, int64_t i, int64_t *i0, int64_t *rows,
                       int64_t *col0, int64_t *cols)
{
    *i0 = i * j->bs;
    *rows = j->n - *i0 < j->bs ? j->n - *i0 : j->bs;
    *col0 = j->upper ? *i0 : 0;
    *cols = j->upper ? j->n - *i0 : *i0 + *rows;
}

static void run_syrk_block(void *arg, int i)
{
    struct syrk_job *j = arg;
    if (amp_onednn_exec(j->run[i]) != 0)
        atomic_store(&j->failed, 1);
}

/* Once every block has run: each block's rows written to the triangle. */
static void write_syrk_block(void *arg, int i)
{
    struct syrk_job *j = arg;
    int64_t i0, rows, col0, cols;
    syrk_block(j, i, &i0, &rows, &col0, &cols);
    const float *d = j->d + j->d_at[i];
    for (int64_t r = 0; r < rows; r++) {
        int64_t row = i0 + r, lo = j->upper ? row : 0, hi = j->upper ? j->n : row + 1;
        float *cr = j->c + row * j->ldc;
        const float *dr = d + r * cols; /* column col0 of C first */
        if (j->beta == 0.0f)
            for (int64_t q = lo; q < hi; q++)
                cr[q] = j->alpha * dr[q - col0];
        else
            for (int64_t q = lo; q < hi; q++)
                cr[q] = j->alpha * dr[q - col0] + j->beta * cr[q];
    }
}

/* A stored k x n (k lines of n) converted to X = A^T, n x k compact: 16
 * lines at a time through tmp (16 x n), then written out by columns. */
static void compact_transposed(const struct amp_operand *o, uint16_t *dst,
                               enum amp_lowp_dtype dtype, int64_t k, int64_t n, uint16_t *tmp)
{
    lowp_conv_fn conv = lowp_conv(dtype);
    int64_t ld = o->outer == 1 ? n : o->ld;
    for (int64_t l0 = 0; l0 < k; l0 += 16) {
        int64_t t = k - l0 < 16 ? k - l0 : 16;
        for (int64_t i = 0; i < t; i++)
            conv(o->p + (l0 + i) * ld, tmp + i * n, (size_t)n);
        for (int64_t jn = 0; jn < n; jn++)
            for (int64_t i = 0; i < t; i++)
                dst[jn * k + l0 + i] = tmp[i * n + jn];
    }
}

static int native_syrk(struct amp_blas_call *c, int64_t threads)
{
    const struct amp_gemm_args *a = &c->gemm;
    int col = a->layout == 'C';
    struct syrk_job job = {
        .n = a->n,
        .k = a->k,
        .ldc = a->ldc,
        .alpha = a->alpha,
        .beta = a->beta,
        .c = a->c,
        /* In the row-major view a column-major C is its transpose: the
         * other triangle, and op(A) transposed. */
        .upper = (a->tb == 'U') != col,
    };
    int trans = (a->ta != 'N') != col;
    job.bs = job.n <= 256 ? job.n : 128;
    if ((job.n + job.bs - 1) / job.bs > AMP_NATIVE_SYRK_BLOCKS)
        job.bs = (job.n + AMP_NATIVE_SYRK_BLOCKS - 1) / AMP_NATIVE_SYRK_BLOCKS;
    int64_t blocks = (job.n + job.bs - 1) / job.bs;
    enum amp_onednn_status st = AMP_ONEDNN_OK;
    int ran = 0;
    size_t d_total = 0;
    for (int64_t i = 0; i < blocks && st == AMP_ONEDNN_OK; i++) {
        int64_t i0, rows, col0, cols;
        syrk_block(&job, i, &i0, &rows, &col0, &cols);
        struct amp_onednn_gemm g = {.dtype = c->dtype,
                                    .m = rows,
                                    .n = cols,
                                    .k = job.k,
                                    .trans_x = 0,
                                    .trans_y = 1,
                                    .alpha = 1.0f,
                                    .beta = 0.0f};
        job.prim[i] = get_prim(&g, &st, &job.scratch_each);
        job.d_at[i] = d_total;
        d_total += align64((size_t)(rows * cols) * 4) / 4;
    }
    if (st == AMP_ONEDNN_OK) {
        size_t xs = (size_t)(job.n * job.k), tmp = trans ? (size_t)(16 * job.n) : 0;
        size_t total =
            align64(xs * 2) + align64(tmp * 2) + d_total * 4 + (size_t)blocks * job.scratch_each;
        char *s = amp_scratch(c->t, total);
        if (s) {
            uint16_t *x = (uint16_t *)s;
            job.d = (float *)(s + align64(xs * 2) + align64(tmp * 2));
            job.scratch = (char *)(job.d + d_total);
            if (trans)
                compact_transposed(&c->in[0], x, c->dtype, job.k, job.n,
                                   (uint16_t *)(s + align64(xs * 2)));
            else
                compact(&c->in[0], x, c->dtype);
            job.x = x;
            int bound = 1, team = (int)(threads < blocks ? threads : blocks);
            for (int64_t i = 0; i < blocks && bound; i++) {
                int64_t i0, rows, col0, cols;
                syrk_block(&job, i, &i0, &rows, &col0, &cols);
                job.run[i] = amp_onednn_bind(job.prim[i], x + i0 * job.k, x + col0 * job.k,
                                             job.d + job.d_at[i],
                                             job.scratch + (size_t)i * job.scratch_each);
                bound = job.run[i] != NULL;
            }
            /* C is written only once every block has run: a failure leaves
             * it as it was, for the emulated path. */
            if (bound) {
                amp_native_parallel((int)blocks, team, run_syrk_block, &job);
                ran = !atomic_load(&job.failed);
            }
            if (ran) {
                amp_blas_round_accumulator(c);
                amp_native_parallel((int)blocks, team, write_syrk_block, &job);
            }
            for (int64_t i = 0; i < blocks; i++)
                amp_onednn_unbind(job.run[i]);
            finish(c, ran, xs);
        }
    }
    for (int64_t i = 0; i < blocks; i++)
        if (job.prim[i])
            amp_onednn_put(job.prim[i]);
    return ran;
}

/* Whether this CPU runs each dtype's products natively: asked of oneDNN
 * once per dtype (amp_cpu_native_units, below), with a product of the
 * crossover's size. Threads may ask at once; the first answer stands. */
static _Atomic int8_t known[AMP_DTYPE_COUNT]; /* 0 not asked, 1 yes, 2 no, 3 being written */
static char reason[AMP_DTYPE_COUNT][192];     /* the kernel (yes) or the reason (no), written by
                                                 the one thread that moved known[] from 0 to 3 */

/* The answer for dtype once it is known (waiting out the few instructions
 * of another thread's write): 0 not asked, 1 yes, 2 no. */
static int8_t known_answer(enum amp_lowp_dtype dtype)
{
    int8_t k;
    while ((k = atomic_load_explicit(&known[dtype], memory_order_acquire)) == 3)
        sched_yield();
    return k;
}

/* Records the answer (1 yes, 2 no) and its text, unless another thread did
 * first; returns the answer that stands. */
static int8_t publish(enum amp_lowp_dtype dtype, int8_t answer, const char *text)
{
    int8_t unasked = 0;
    if (atomic_compare_exchange_strong_explicit(&known[dtype], &unasked, 3, memory_order_acq_rel,
                                                memory_order_acquire)) {
        snprintf(reason[dtype], sizeof reason[dtype], "%s", text);
        atomic_store_explicit(&known[dtype], answer, memory_order_release);
    }
    return known_answer(dtype);
}

int amp_cpu_native_units(enum amp_lowp_dtype dtype, char *why, size_t whylen)
{
    char spare[8];
    if (!why) {
        why = spare;
        whylen = sizeof spare;
    }
    int8_t k = known_answer(dtype);
    /* A no given before a library's oneDNN 3 was offered (a machine
     * without libdnnl.so.2 whose first product came before torch loaded)
     * is asked once more after. */
    static _Atomic int8_t asked_again[AMP_DTYPE_COUNT];
    if (k == 2 && amp_onednn3_backend() && !atomic_exchange(&asked_again[dtype], 1)) {
        int8_t no = 2;
        k = atomic_compare_exchange_strong(&known[dtype], &no, 0) ? 0 : known_answer(dtype);
    }
    if (!k) {
        char r[192];
        if (dtype == AMP_DTYPE_TF32) {
            snprintf(r, sizeof r, "no CPU has tf32 units");
        } else if (amp_onednn_isa_cap(dtype)) {
            snprintf(r, sizeof r, "ONEDNN_MAX_CPU_ISA=%s keeps oneDNN below its %s kernels",
                     amp_onednn_isa_cap(dtype), amp_dtype_names[dtype]);
        } else if (!amp_cpu_may_have_units(dtype)) {
            /* A sure no without loading oneDNN: the common CPU's first
             * product pays nothing for the question. */
            snprintf(r, sizeof r, "its instruction set has %s",
                     dtype == AMP_DTYPE_BF16 ? "neither avx512_bf16 nor amx_bf16"
                                             : "neither avx512_fp16 nor amx_fp16");
        } else if (amp_onednn_open(r, sizeof r) == AMP_ONEDNN_OK) {
            struct amp_onednn_gemm g = {dtype, 96, 96, 96, 0, 0, 1.0f, 0.0f};
            enum amp_onednn_status st;
            char impl[64];
            struct amp_onednn_prim *p = amp_onednn_get(&g, &st, impl, sizeof impl);
            if (p) {
                amp_onednn_put(p);
                snprintf(r, sizeof r, "oneDNN %s %s", amp_onednn_version(), impl);
                k = publish(dtype, 1, r);
            } else if (st != AMP_ONEDNN_NOT_NATIVE) {
                return -1; /* refused for a reason of the moment: asked again */
            } else {
                /* impl says "no fp16 matmul", or names a kernel without native units. */
                snprintf(r, sizeof r, "oneDNN %s on this CPU: %s%s", amp_onednn_version(), impl,
                         strncmp(impl, "no ", 3) == 0 ? "" : ", not native");
            }
        }
        if (!k)
            k = publish(dtype, 2, r);
    }
    if (k == 2)
        snprintf(why, whylen, "%s", reason[dtype]);
    return k == 1;
}

/* The report's CPU lines (runtime/report.h): the CPU, and what it does for
 * the CPU dtype, as far as the run has asked. */
static void cpu_verdict(FILE *out)
{
    enum amp_lowp_dtype dtype =
        (enum amp_lowp_dtype)amp_live_load(&amp_rt.cfg.dtype[AMP_DEVICE_CPU]);
    const char *name = amp_dtype_names[dtype];
    char cpu[320];
    amp_cpu_flags_text(cpu, sizeof cpu);
    fprintf(out, "cpu: %s\n", cpu);
    int8_t k = known_answer(dtype);
    if (!k && !amp_cpu_may_have_units(dtype)) /* a sure no costs nothing to ask */
        k = amp_cpu_native_units(dtype, NULL, 0) ? 1 : known_answer(dtype);
    /* Not asked, but calls ran native (an explicit request, a size rule of
     * 0: the gate asked nothing): the table's native column is the answer
     * (nothing is asked of oneDNN at exit). */
    uint64_t native = 0;
    for (int h = 0; !k && amp_ctl && h < AMP_HOOK_COUNT; h++)
        native += amp_ctl_counter(amp_ctl, h, AMP_CTL_NATIVE);
    if (!k && native) {
        fprintf(out,
                "cpu %s: native units (%llu lowered calls ran on them, with AMPSHIM_LOWER_MIN "
                "set or as explicit requests)\n",
                name, (unsigned long long)native);
        return;
    }
    if (k == 1)
        fprintf(out,
                "cpu %s: native units (%s): lowered products of %d^3 multiply-adds and more run "
                "on them\n",
                name, reason[dtype], AMP_NATIVE_MIN_N);
    else if (k == 2)
        fprintf(out,
                "cpu %s: no native units here (%s), so lowering would not pay: calls the policy "
                "lowers run as made in fp32, counted nounits. To study %s numerics anyway: "
                "AMPSHIM_AUDIT=1 measures each call site's error and keeps the fp32 results; "
                "AMPSHIM_CPU_KERNEL=emulate lowers the BLAS products on rounded operands\n",
                name, reason[dtype], name);
    else
        fprintf(out,
                "cpu %s: native units not asked (no call the policy lowers reached %d^3 "
                "multiply-adds, or AMPSHIM_CPU_KERNEL is not auto)\n",
                name, AMP_NATIVE_MIN_N);
}

__attribute__((constructor)) static void register_cpu_verdict(void)
{
    amp_report_set_cpu_verdict(cpu_verdict);
}

enum amp_cpu_gate amp_cpu_auto_gate(enum amp_lowp_dtype dtype, double madds)
{
    if (amp_live_load(&amp_rt.cfg.cpu_kernel) != AMP_CPU_KERNEL_AUTO)
        return AMP_CPU_LOWER;
    /* AMPSHIM_AUDIT=auto keeps the crossover too: below it lowering costs
     * more than it saves on every CPU measured, and finding that out again
     * per call site cost more than it saved (bench/auto_pays.py). */
    if (madds < (double)AMP_NATIVE_MIN_MACS)
        return AMP_CPU_SMALL;
    static _Atomic int said_never[AMP_DTYPE_COUNT];
    char why[192] = "";
    if (amp_cpu_native_units(dtype, why, sizeof why))
        return AMP_CPU_LOWER; /* yes, or not known yet */
    if (!atomic_exchange(&said_never[dtype], 1))
        amp_log(AMP_LOG_INFO,
                "lowering %s CPU products would not pay here (%s): they run as made, counted "
                "nounits; AMPSHIM_AUDIT=1 measures what %s would cost, and "
                "AMPSHIM_CPU_KERNEL=emulate lowers BLAS products anyway (rounded operands)",
                amp_dtype_names[dtype], why, amp_dtype_names[dtype]);
    /* The study modes measure what lowering would cost (a machine with
     * units would lower it); auto, which decides what runs, runs nothing
     * twice for a lowering that cannot pay here. */
    uint32_t audit = amp_live_load(&amp_rt.cfg.audit);
    return audit != AMP_AUDIT_OFF && audit != AMP_AUDIT_AUTO ? AMP_CPU_AUDIT_ONLY
                                                             : AMP_CPU_NO_UNITS;
}

int amp_blas_native_fits(const struct amp_blas_call *c)
{
    const struct amp_gemm_args *a = &c->gemm;
    return c->native_kind != AMP_NATIVE_NONE && c->dtype != AMP_DTYPE_TF32 &&
           a->m >= AMP_NATIVE_MIN_SIDE && a->n >= AMP_NATIVE_MIN_SIDE &&
           a->k >= AMP_NATIVE_MIN_SIDE;
}

/* The multiply-adds the routine does (syrk: one triangle), in double: no
 * int64 overflow. */
static double native_macs(const struct amp_blas_call *c)
{
    const struct amp_gemm_args *a = &c->gemm;
    double macs = (double)a->m * (double)a->n * (double)a->k;
    return c->native_kind == AMP_NATIVE_SYRK ? macs / 2 : macs;
}

int amp_blas_native_takes(const struct amp_blas_call *c)
{
    int kernel = amp_live_load(&amp_rt.cfg.cpu_kernel);
    double macs = native_macs(c);
    return kernel != AMP_CPU_KERNEL_EMULATE && c->dtype != AMP_DTYPE_TF32 &&
           c->native_kind != AMP_NATIVE_NONE &&
           (kernel == AMP_CPU_KERNEL_NATIVE ||
            (amp_blas_native_fits(c) && macs >= AMP_NATIVE_MIN_MACS));
}

int amp_blas_native(struct amp_blas_call *c)
{
    if (!amp_blas_native_takes(c))
        return 0; /* emulation asked for, tf32 (no CPU has it), or not a size auto takes */
    double macs = native_macs(c);
    char why[192];
    if (amp_onednn_open(why, sizeof why) != AMP_ONEDNN_OK) {
        say_emulated(why);
        return 0;
    }
    int share = amp_native_enter();
    int64_t threads = blas_threads() / share;
    if (threads < 1)
        threads = 1;
    int ran =
        c->native_kind == AMP_NATIVE_GEMM ? native_gemm(c, threads, macs) : native_syrk(c, threads);
    amp_native_leave();
    c->done = (uint8_t)ran;
    return ran;
}
