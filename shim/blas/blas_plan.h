/* One intercepted BLAS call from decision to hand-back: which operands are
 * multiplicands (rounded into scratch when lowered), which is the accumulator
 * (rounded in place only with AMPSHIM_OUTPUT=round), and the counters. The
 * per-kind planners turn CBLAS and Fortran arguments into operand shapes. */
#ifndef AMPSHIM_BLAS_PLAN_H
#define AMPSHIM_BLAS_PLAN_H

#include <stdint.h>
#include <time.h>

#include "runtime/accuracy_audit.h"
#include "kernels/cpu/convert.h"
#include "runtime/decide.h"
#include "runtime/threads.h"

/* Which elements of a square operand the routine reads, in storage terms. */
enum amp_tri { AMP_TRI_FULL, AMP_TRI_LE /* inner index <= line index */, AMP_TRI_GE };

/* A matrix or vector as it lies in memory: `outer` lines of `inner`
 * contiguous elements, `ld` elements apart. A contiguous matrix is one long
 * line; `line_len` keeps the length of its rows or columns as stored (the
 * spread check, shim/blas/blas_spread.h, looks along both). */
struct amp_operand {
    float *p;
    int64_t inner, outer, ld, line_len;
    uint8_t tri, skip_diag;
    uint8_t free_dir; /* enum amp_free_dir */
};

/* Where a multiplicand's free index (the one the product does not sum
 * over: A's rows, B's columns) runs in storage: what tells a product's
 * outputs apart is the operand's spread along it, one summed index at a
 * time (shim/blas/blas_spread.h). */
enum amp_free_dir {
    AMP_FREE_EITHER, /* a vector, or a symmetric or triangular matrix: both ways */
    AMP_FREE_WITHIN, /* along each stored line */
    AMP_FREE_ACROSS, /* from line to line */
};

/* A gemm's or syrk's own arguments, kept by the planner for the native
 * executor (shim/blas/blas_native.c), which runs the whole product itself.
 * For syrk, ta is trans and tb is uplo, and m = n. */
enum amp_native_kind { AMP_NATIVE_NONE, AMP_NATIVE_GEMM, AMP_NATIVE_SYRK };
struct amp_gemm_args {
    char layout, ta, tb;
    int64_t m, n, k, ldc;
    float alpha, beta;
    float *c;
    int64_t lda, ldb; /* as the caller gave them (a gemm's) */
};

/* The columns of a gemm's output auto's check recomputes in fp32, in
 * column-major terms: C[:, J] = alpha op(A) op(B)[:, J] + beta C[:, J], the
 * |J| = n columns cols apart from c (shim/blas/blas_audit.c); a syrk's is
 * a block of columns of op(A) op(A)^T, compared on its triangle. */
struct amp_gemm_sample {
    char ta, tb;
    char uplo;     /* a syrk's triangle of C (column-major terms), 0 for a gemm */
    int64_t first; /* a syrk's first sampled column */
    void *gemm;    /* the real sgemm that computes it (a syrk's: beside its routine) */
    int64_t m, n, k, lda, ldb, cols;
    /* The sampled rows (m of them): `blocks` blocks of block_rows rows,
     * block_step rows apart in op(A) and C (one block of m: every row). */
    int64_t blocks, block_rows, block_step;
    const float *a, *b;
    float *c;
};

struct amp_blas_call {
    struct amp_thread *t;
    enum amp_hook_id hook;
    enum amp_outcome outcome;
    enum amp_lowp_dtype dtype; /* when lowered */
    int n_in;
    struct amp_operand in[2];
    const float **arg[2]; /* the caller's argument to point at the rounded copy */
    uint8_t in_place[2];  /* operand is also the output: rounded where it lies */
    int has_acc, acc_read;
    struct amp_operand acc; /* C, y, or A of ger */
    uint64_t converted;
    uint8_t holds_scratch; /* give the thread's scratch back at the end */
    uint8_t native_kind;   /* enum amp_native_kind: gemm holds a call the native executor may run */
    uint8_t done;          /* the native executor ran it: the real routine is not called */
    uint8_t explicit_request; /* asked for explicitly (runtime/decide.h) */
    uint8_t audit_only;       /* no native units here: audited, the program keeps the fp32 result */
    uint8_t check;            /* auto's sampled check of a native gemm (shim/blas/blas_audit.c) */
    uint8_t check_keeps;      /* ... whose lowered result the program keeps when it passes */
    uint8_t pay;              /* a pay check (runtime/site_time.h): 1 an audit the program keeps
                                 lowered, 2 a failed check's run as made, timed */
    void *real;               /* the routine this call forwards to (its hook's, for this call) */
    struct amp_gemm_sample sample;
    struct amp_gemm_args gemm;
    /* For the accuracy audit (shim/blas/blas_audit.c), set by the planners. */
    double flops;           /* the routine's floating-point operations */
    int64_t shape[3];       /* m, n, k as the routine names them (0 where it has fewer) */
    uint8_t audit;          /* this lowered call also runs in fp32 and is compared */
    uint8_t output_rounded; /* AMPSHIM_OUTPUT=round already applied */
    struct amp_audit_site *audit_site;
    const float *saved_arg[2]; /* the caller's multiplicands, before rounding */
    float *shadow;             /* the accumulator before the call, then the lowered output */
    size_t shadow_elems;
    uint64_t audit_mark; /* when the audited call's current run began (ns) */
    uint64_t ns_lowered; /* ... its lowered run's wall time */
    uint32_t made_mark;  /* amp_onednn_made() when the lowered run began */
    /* A call timed for AMPSHIM_CPU_TIMING_SAMPLE: when it began (ns), else 0. */
    uint64_t t0;
    void *timed_caller;          /* a timed call's return address (its site) */
    const struct amp_site *site; /* a lowered call's site, once found (runtime/sites.h) */
    uint64_t print_a, print_b;   /* its operands' fingerprints (shim/blas/blas_recurrence.h) */
};

/* Adds a timed call's wall time and flops to its hook's row of the block
 * (amp_cpu_time_record), lowered or as made. */
void amp_cpu_time_add(const struct amp_blas_call *c);

/* The elements of line `line` of o the routine references: [*lo, *hi).
 * Returns 0 when there are none. */
static inline int amp_operand_line(const struct amp_operand *o, int64_t line, int64_t *lo,
                                   int64_t *hi)
{
    *lo = 0;
    *hi = o->inner;
    if (o->tri == AMP_TRI_LE)
        *hi = line + 1 - o->skip_diag;
    else if (o->tri == AMP_TRI_GE)
        *lo = line + o->skip_diag;
    if (*hi > o->inner)
        *hi = o->inner;
    return *lo < *hi;
}


/* The fast path: when the call runs as the program made it (not lowered, no
 * fp32 region to open), count it and return 1 so the hook can tail-call the
 * real routine with nothing else to do. */
static inline int amp_blas_passes_through(struct amp_thread *t, enum amp_hook_id hook,
                                          int accumulates)
{
    if (!amp_decide_passes_untouched(t, AMP_DEVICE_CPU, hook, accumulates))
        return 0;
    amp_count(t, hook, AMP_CTL_PASSTHROUGH, 1);
    return 1;
}

/* Decides the outcome (runtime/decide.h) before any argument is parsed;
 * returns 1 when the call is to be lowered, and the caller then plans it and
 * calls amp_blas_lower. An fp32 call opens an fp32 region while it runs. A
 * call to be timed (c->t0) is planned whatever its outcome, for its flops. */
static inline int amp_blas_begin(struct amp_blas_call *c, struct amp_thread *t,
                                 enum amp_hook_id hook, int accumulates)
{
    c->t = t;
    c->hook = hook;
    c->n_in = 0;
    c->has_acc = 0;
    c->converted = 0;
    c->holds_scratch = 0;
    c->native_kind = AMP_NATIVE_NONE;
    c->done = 0;
    c->audit = 0;
    c->check = 0;
    c->pay = 0;
    c->real = NULL;
    c->audit_site = NULL;
    c->output_rounded = 0;
    c->flops = 0;
    c->shape[0] = c->shape[1] = c->shape[2] = 0;
    struct amp_decision d = amp_decide(t, AMP_DEVICE_CPU, hook, accumulates);
    /* A library's call to itself is not the program's: never timed (nor
     * planned for it), and it does not move the thread's tick. */
    c->t0 =
        d.outcome != AMP_OUTCOME_INTERNAL && amp_unlikely(amp_cpu_timing_due()) ? amp_now_ns() : 0;
    c->timed_caller = amp_tls_caller; /* this call's: a nested hook may change the thread's */
    c->site = NULL;
    c->print_a = c->print_b = 0;
    c->outcome = d.outcome;
    c->dtype = d.dtype;
    c->explicit_request = (uint8_t)d.explicit_request;
    c->audit_only = 0;
    if (c->outcome == AMP_OUTCOME_FP32)
        t->fp32_depth++;
    return c->outcome == AMP_OUTCOME_LOWERED;
}

/* Elements an operand spans in memory, padding included. */
static inline size_t amp_operand_span(const struct amp_operand *o)
{
    return (size_t)((o->outer - 1) * o->ld + o->inner);
}

/* Rounds the referenced elements of o into dst (same shape, same ld);
 * returns how many. Inline: the lowered path of a small product is a few
 * dozen nanoseconds (bench/blas_bench). */
static inline uint64_t amp_operand_round(const struct amp_operand *o, float *dst,
                                         enum amp_lowp_dtype dtype)
{
    void (*round)(const float *, float *, size_t) = amp_convert()->round[dtype];
    uint64_t count = 0;
    for (int64_t line = 0; line < o->outer; line++) {
        int64_t lo, hi;
        if (!amp_operand_line(o, line, &lo, &hi))
            continue;
        size_t at = (size_t)(line * o->ld + lo);
        round(o->p + at, dst + at, (size_t)(hi - lo));
        count += (uint64_t)(hi - lo);
    }
    return count;
}

/* Rounds a read accumulator in place (AMPSHIM_OUTPUT=round), before the
 * product runs. */
static inline void amp_blas_round_accumulator(struct amp_blas_call *c)
{
    if (c->has_acc && c->acc_read && amp_live_load(&amp_rt.cfg.output_round))
        c->converted += amp_operand_round(&c->acc, c->acc.p, c->dtype);
}

/* Rounds the output in place (AMPSHIM_OUTPUT=round), after it (out of
 * line: amp_blas_end below stays small). */
void amp_blas_round_output(struct amp_blas_call *c);

/* A gemm the program keeps lowered: its output's and operands' fingerprints
 * for its site's next call (shim/blas/blas_recurrence.h; out of line). */
void amp_blas_recurrence_note(const struct amp_blas_call *c);

/* A failed check's run as made, timed for its pay check (blas_audit.c). */
void amp_blas_pay_rerun_done(struct amp_blas_call *c);

/* Rounds the output (AMPSHIM_OUTPUT=round), closes the fp32 region, counts. */
static inline void amp_blas_end(struct amp_blas_call *c)
{
    if (c->holds_scratch)
        amp_scratch_done(c->t);
    switch (c->outcome) {
    case AMP_OUTCOME_LOWERED:
        if (c->audit_only) { /* measured only: the program ran it as made */
            amp_count(c->t, c->hook, AMP_CTL_NOUNITS, 1);
            break;
        }
        if (c->has_acc && !c->output_rounded && amp_live_load(&amp_rt.cfg.output_round))
            amp_blas_round_output(c);
        amp_count(c->t, c->hook, AMP_CTL_LOWERED, 1);
        amp_count(c->t, c->hook, c->done ? AMP_CTL_NATIVE : AMP_CTL_EMULATED, 1);
        amp_count(c->t, c->hook, AMP_CTL_CONVERTED, c->converted);
        if (c->site && c->native_kind)
            amp_blas_recurrence_note(c);
        break;
    case AMP_OUTCOME_FP32:
        c->t->fp32_depth--;
        amp_count(c->t, c->hook, AMP_CTL_FP32, 1);
        break;
    case AMP_OUTCOME_PASSTHROUGH:
    case AMP_OUTCOME_PROMOTE:
    case AMP_OUTCOME_INTERNAL:
    case AMP_OUTCOME_SMALL:
    case AMP_OUTCOME_NO_UNITS:
    case AMP_OUTCOME_SPREAD:
    case AMP_OUTCOME_NO_NATIVE:
        amp_count(c->t, c->hook, amp_outcome_counter(c->outcome), 1);
        break;
    }
    /* An audited call's two runs are timed by the audit, each on its own. */
    if (amp_unlikely(c->t0) && !c->audit)
        amp_cpu_time_add(c);
    if (amp_unlikely(c->pay == 2))
        amp_blas_pay_rerun_done(c);
}

/* A scalar result (dot, nrm2, asum) under AMPSHIM_OUTPUT=round. */
static inline float amp_blas_result(const struct amp_blas_call *c, float r)
{
    if (c->outcome == AMP_OUTCOME_LOWERED && amp_live_load(&amp_rt.cfg.output_round))
        return amp_round_to_dtype_rne(c->dtype, r);
    return r;
}

/* Argument decoding. layout is 'C' (column major) or 'R'; chars are upper
 * case; 0 means invalid, and the call then runs unchanged so the library
 * reports its own error. */
char amp_cblas_layout(int v);
char amp_cblas_trans(int v);
char amp_cblas_uplo(int v);
char amp_cblas_side(int v);
char amp_cblas_diag(int v);
char amp_f77_char(const char *p);

/* Planners: record the operands of one call; return 1 when the arguments are
 * valid and the call does work, 0 otherwise. */
int amp_plan_gemm(struct amp_blas_call *c, char layout, char ta, char tb, int64_t m, int64_t n,
                  int64_t k, float alpha, const float **a, int64_t lda, const float **b,
                  int64_t ldb, float beta, float *cm, int64_t ldc);
int amp_plan_gemv(struct amp_blas_call *c, char layout, char trans, int64_t m, int64_t n,
                  float alpha, const float **a, int64_t lda, const float **x, int64_t incx,
                  float beta, float *y, int64_t incy);
int amp_plan_ger(struct amp_blas_call *c, char layout, int64_t m, int64_t n, float alpha,
                 const float **x, int64_t incx, const float **y, int64_t incy, float *a,
                 int64_t lda);
int amp_plan_vectors(struct amp_blas_call *c, int64_t n, const float **x, int64_t incx,
                     const float **y, int64_t incy);
int amp_plan_symm(struct amp_blas_call *c, char layout, char side, char uplo, int64_t m, int64_t n,
                  float alpha, const float **a, int64_t lda, const float **b, int64_t ldb,
                  float beta, float *cm, int64_t ldc);
int amp_plan_syrk(struct amp_blas_call *c, char layout, char uplo, char trans, int64_t n, int64_t k,
                  float alpha, const float **a, int64_t lda, const float **b, int64_t ldb,
                  float beta, float *cm, int64_t ldc);
int amp_plan_trmm(struct amp_blas_call *c, char layout, char side, char uplo, char transa,
                  char diag, int64_t m, int64_t n, float alpha, const float **a, int64_t lda,
                  float *b, int64_t ldb);

#endif
