/* The accuracy audit (AMPSHIM_AUDIT, ampshim(7) AUDIT): every call that is
 * lowered also runs as the program made it, and the two outputs are compared.
 * This file keeps the per-call-site results in the control block (so ampctl
 * reads them live) and writes the report and the generated policy; the
 * shadow runs themselves belong to each library's hooks (shim/blas/blas_audit.c
 * for BLAS). Not on the fast path: only lowered calls with the audit on come
 * here. */
#ifndef AMPSHIM_ACCURACY_AUDIT_H
#define AMPSHIM_ACCURACY_AUDIT_H

#include <stdint.h>
#include <stdio.h>

#include "runtime/control.h"
#include "runtime/sites.h"
#include "runtime/threads.h"

/* The outcome of one audited call, measured by the caller. */
struct amp_audit_result {
    double err;         /* ||lowered - fp32||_F / ||fp32||_F (Inf when Inf/NaN appeared) */
    double elem_max;    /* max |lowered - fp32| / |fp32| where |fp32| is not tiny; < 0:
                              not measured (a device call) */
    uint64_t nonfinite; /* elements Inf or NaN lowered and finite in fp32 */
    int nonfinite_call; /* lowering made Inf or NaN (elements may be unknown) */
    /* Wall time of the two runs (0: not timed: a device call, a oneDNN call
     * that made its twin) */
    uint64_t ns_lowered, ns_fp32;
    double flops; /* the call's: its size class, for the speed */
    int sampled;  /* compared on a sample of the output (auto's check of a native gemm) */
    /* rms(lowered - fp32) / the fp32 output's spread (its standard deviation
     * along a free index, the smaller of the two, pooled: amp_audit_spread):
     * what cancellation after the product leaves of the difference. 0 when
     * not measured (a device call, a oneDNN primitive's). */
    double spread_err;
    /* its site is not held to AMPSHIM_AUDIT_SPREAD_TOLERANCE
     * (amp_audit_holds_spread): spread_err is measured and shown, not held
     * against it */
    int spread_free;
};

/* The error against the output's own spread. A layer's product of centred
 * data varies about as much as it is large, so this is its relative error
 * again (0.002-0.004 in bf16); a Gram or distance product of data far from
 * the origin has outputs that share most of their value, and what the
 * program reads of them (|x|^2 - 2 x.c + |c|^2, a probability's deviation
 * from uniform) is their spread, which lowering's error can swamp while the
 * relative Frobenius error stays small. Fed the output a line at a time:
 * the spread within each line and, per place, across lines (up to `width`
 * places), each shifted by its first value. */
struct amp_audit_spread {
    double within_q, within_n, diff2, count;
    double *place; /* [width][4]: shift, n, sum, sum of squares; NULL: within lines only */
    int64_t width;
};
void amp_audit_spread_begin(struct amp_audit_spread *s, int64_t width);
/* One line of the output: n values at places first.. of a line. */
void amp_audit_spread_line(struct amp_audit_spread *s, const float *low, const float *ref,
                           int64_t first, int64_t n);
/* The error (rms difference over the pooled standard deviation, the
 * smaller of within and across lines), 0 when the output has no spread;
 * frees what begin took. */
double amp_audit_spread_error(struct amp_audit_spread *s);


/* The audit's row of the call site a lowered call belongs to (where:
 * runtime/sites.h's amp_site_of_call; NULL when that map was full), made at
 * its first call, its calls and flops counted; returns it with
 * *audit_this set when this call is one to audit (every
 * AMPSHIM_AUDIT_SAMPLE-th of the site), or NULL when the audit is off or the
 * site table is full. */
struct amp_audit_site *amp_audit_enter(const struct amp_site *where, enum amp_lowp_dtype dtype,
                                       double flops, const int64_t shape[3], int *audit_this);

/* Whether AMPSHIM_AUDIT=auto runs a call of this size at site where
 * fp32 for speed (its site fp32 "not faster", or lowered but not for this
 * size class), as far as the thread's last site tells without a lock (0
 * when it is another site): the spread check need not weigh its operands.
 * A call it does audit anyway is run both ways, the program keeping fp32. */
int amp_audit_slow_here(const struct amp_site *where, double flops);

/* A call the spread check (shim/blas/blas_spread.h) kept as made: its site
 * (made at its first call) counts it and the largest loss, and the site is
 * reported as one to keep fp32. Under AMPSHIM_AUDIT=auto the evidence sends
 * the site to fp32 as an audit over tolerance would (it comes back after
 * clean audits of calls whose operands pass the check). */
void amp_audit_note_spread(const struct amp_site *where, enum amp_lowp_dtype dtype,
                           const int64_t shape[3], double loss);

/* A call of site s ran lowered and the program kept it: its flops count as
 * lowered (the report's share). */
static inline void amp_audit_ran_lowered(struct amp_audit_site *s, double flops)
{
    if (s && flops > 0)
        atomic_fetch_add_explicit(&s->lowered_flops, (uint64_t)flops, memory_order_relaxed);
}

/* AMPSHIM_TEST_SLOW_LOWERED=N[:FLOPS] (tests only): the first N audited
 * calls' lowered runs (of any family; with FLOPS, of calls of fewer flops
 * only) take 20 ms longer, so AMPSHIM_AUDIT=auto's "not faster" is seen to
 * come and go in one process, for a site or a size class of it. Called by
 * the audits at the end of a lowered run, with the call's flops. */
void amp_audit_test_slow_lowered(double flops);

/* AMPSHIM_AUDIT=auto: a pay check's verdict on the size class of a call
 * of `flops` at site s (runtime/site_time.h; the check's two runs' CPU
 * time): a class whose checks agree that lowering costs runs fp32 at a
 * lowered site (amp_audit_site.slow_classes), one whose checks agree that
 * it pays is lowered again, and a mixed verdict changes nothing (the size
 * rule's decision stands). At a site kept fp32 for speed the pair is timed
 * as an audit's and may bring the site back for this size. */
void amp_audit_pay_verdict(struct amp_audit_site *s, double flops, int verdict, uint64_t ns_lowered,
                           uint64_t ns_made);

/* Whether an audited call's result is within the tolerances: no Inf/NaN
 * introduced, its relative error within AMPSHIM_AUDIT_TOLERANCE and, unless
 * its site is spread-free, its error against its output's spread within
 * AMPSHIM_AUDIT_SPREAD_TOLERANCE. */
static inline int amp_audit_clean(const struct amp_audit_result *r)
{
    return !r->nonfinite && !r->nonfinite_call && r->err <= amp_rt.cfg.audit_tolerance &&
           (r->spread_free || !(r->spread_err > amp_rt.cfg.audit_spread_tolerance));
}

/* Whether a site whose op around is op (struct amp_audit_site.op_around:
 * the fp32-list op, else the lower-list op) is held to
 * AMPSHIM_AUDIT_SPREAD_TOLERANCE: not inside an op that torch.autocast
 * lowers. The one rule for auto's verdicts (amp_audit_clean) and the
 * report's column. */
int amp_audit_holds_spread(int op);

/* Adds one audited call's result to its site. */
void amp_audit_record(struct amp_audit_site *site, const struct amp_audit_result *r);

/* Device results are read back by functions the CUDA side registers (the
 * audit's, shim/cublas/cublas_audit.c, and the GPU timing's,
 * shim/cuda/cuda_timing.c; up to four); amp_audit_fold calls each when
 * ampctl asks (the block's audit_request: ampctl audit and ampctl stats),
 * and answers the request. Each also reads back at exit itself. */
void amp_audit_set_device_fold(void (*fold)(void));
void amp_audit_fold(void);

/* Whether the program keeps the lowered result (AMPSHIM_AUDIT=follow). */
static inline int amp_audit_follows(void)
{
    return amp_live_load(&amp_rt.cfg.audit) == AMP_AUDIT_FOLLOW;
}

/* AMPSHIM_AUDIT=auto: each site decides for itself. A new site is on
 * probation: every call audited, the program keeping the fp32 result,
 * until AMPSHIM_AUDIT_PROBATION audits in a row are within tolerance with
 * no Inf/NaN introduced; then it runs lowered, audited again every
 * AMPSHIM_AUDIT_RECHECK-th call (that call keeps its fp32 result). One
 * audit over tolerance sends it to fp32 at once; an fp32 site is audited
 * at the same interval and comes back after AMP_AUTO_HYSTERESIS times the
 * probation streak; after AMP_AUTO_FLIPS_MAX demotions it stays fp32 (no
 * more audits). A site goes lowered only if its lowered runs were faster
 * too, weighed per size class (flops within a factor of 4) whenever it
 * would go lowered and every probation's worth of rechecks: it stays fp32
 * ("not faster") when no class paid, and a lowered site runs the calls of
 * the classes that did not pay fp32 (amp_audit_site.slow_classes), so a
 * caller of many sizes (a framework's one convolution call) lowers the
 * large ones only. The state is packed in amp_audit_site.auto_state: the
 * state in bits 0-7, the demotions in 8-15, the clean streak in 16-31. */
enum amp_auto_state { AMP_AUTO_PROBATION, AMP_AUTO_LOWERED, AMP_AUTO_FP32, AMP_AUTO_FP32_KEPT };
/* Why a site last moved (amp_audit_site.auto_why): clean audits (and, to
 * lowered, faster); an audit over tolerance or with Inf/NaN; the spread
 * check's evidence; lowered runs of no size class faster than fp32 by
 * AMPSHIM_AUDIT_MIN_SPEEDUP over the audits since the site was last
 * weighed. */
enum amp_auto_why {
    AMP_AUTO_WHY_NONE,
    AMP_AUTO_WHY_CLEAN,
    AMP_AUTO_WHY_ERROR,
    AMP_AUTO_WHY_SPREAD,
    AMP_AUTO_WHY_NOT_FASTER
};
extern const char *const amp_auto_why_names[5];
#define AMP_AUTO_HYSTERESIS 4u
/* A size class first seen after probation: this many of its calls timed
 * both ways, then weighed. */
#define AMP_AUTO_CLASS_TIMED 3u
#define AMP_AUTO_FLIPS_MAX 3u
/* The probation of a site whose audits run the whole call twice, with no
 * cheaper check (a oneDNN primitive's: its twin and the program's
 * primitive): one clean audit. A model's convolutions are mostly made in
 * its first pass, and a shape first met once its site is decided is
 * lowered in its descriptor with no twin: a longer probation would leave
 * most of a model's shapes running twins (bench/auto_pays.py). A failed
 * recheck still sends the site to fp32 at once. */
#define AMP_AUTO_TWIN_PROBATION 1u
_Static_assert((AMP_AUTO_HYSTERESIS * AMP_AUDIT_PROBATION_MAX) < 0xffffu,
               "the clean streak (16 bits) reaches an fp32 site's way back at every probation");
extern const char *const amp_auto_state_names[4];

static inline int amp_audit_auto(void)
{
    return amp_live_load(&amp_rt.cfg.audit) == AMP_AUDIT_AUTO;
}

static inline enum amp_auto_state amp_auto_state_of(uint32_t packed)
{
    return (enum amp_auto_state)(packed & 0xff);
}

/* Whether auto, at a lowered site, runs calls of this size fp32: their size
 * class's lowered runs were not faster (amp_audit_site.slow_classes). */
static inline int amp_audit_slow_size(const struct amp_audit_site *s, double flops)
{
    uint32_t slow = atomic_load_explicit(&s->slow_classes, memory_order_relaxed);
    return slow && (slow >> amp_flops_class(flops) & 1);
}

/* Whether auto weighs the sizes of site s in state st as they come: it is
 * lowered, or fp32 only for being slow at the sizes seen so far. */
static inline int amp_audit_weighs_sizes(const struct amp_audit_site *s, enum amp_auto_state st)
{
    return st == AMP_AUTO_LOWERED ||
           (st == AMP_AUTO_FP32 &&
            atomic_load_explicit(&s->auto_why, memory_order_relaxed) == AMP_AUTO_WHY_NOT_FASTER);
}

/* Whether a call the audit does not run both ways keeps its lowered result:
 * with follow, and with auto at a site it has lowered, unless calls of its
 * size were not faster lowered. */
static inline int amp_audit_keeps_lowered(const struct amp_audit_site *s, double flops)
{
    uint32_t mode = amp_live_load(&amp_rt.cfg.audit);
    return mode == AMP_AUDIT_FOLLOW ||
           (mode == AMP_AUDIT_AUTO && s &&
            amp_auto_state_of(atomic_load_explicit(&s->auto_state, memory_order_acquire)) ==
                AMP_AUTO_LOWERED &&
            !amp_audit_slow_size(s, flops));
}

/* Whether auto has decided that calls of `flops` flops at site where run
 * lowered (its site lowered, their size class not slow), without counting
 * a call: 0 for a site it has not met. */
int amp_audit_decided_lowered(const struct amp_site *where, double flops);

/* Whether auto keeps a call of site s in fp32 by its own decision (counted
 * fp32, not passthrough): the site is fp32, or calls of this size are. */
static inline int amp_audit_keeps_fp32(const struct amp_audit_site *s, double flops)
{
    if (!amp_audit_auto() || !s)
        return 0;
    enum amp_auto_state st =
        amp_auto_state_of(atomic_load_explicit(&s->auto_state, memory_order_acquire));
    return st == AMP_AUTO_FP32 || st == AMP_AUTO_FP32_KEPT ||
           (st == AMP_AUTO_LOWERED && amp_audit_slow_size(s, flops));
}

/* The audit's report of a block, sorted by error (largest first): a table,
 * or JSON. Returns the number of sites shown. Used at exit and by ampctl. */
int amp_audit_write_report(FILE *out, const struct amp_ctl_block *b, double tolerance, int json);

/* The policy the audit suggests, in AMPSHIM_POLICY_FILE's format: each site
 * whose largest error exceeds tolerance, or whose lowering made Inf or NaN,
 * kept in fp32 by a call-site entry; every other audited site lowered.
 * Returns the number of entries. */
int amp_audit_write_policy(FILE *out, const struct amp_ctl_block *b, double tolerance);

/* At exit: the report (to AMPSHIM_REPORT's destination, or standard error)
 * and the policy file (AMPSHIM_AUDIT_POLICY), when the audit saw a call. */
void amp_audit_print(void);

/* After a dlclose that unloaded something: forgets the sites of every
 * return address no loaded object holds any more. Never under a lock of
 * ours (it asks the loader). */
void amp_audit_forget_unloaded(void);

/* The flops a size class covers: [*from, *to) (amp_cpu_time_class). */
void amp_audit_class_bounds(int c, double *from, double *to);
/* The classes of mask as flop ranges, adjacent ones joined, each with its
 * speed-ups: "1.3e+08-5.4e+08 flops (0.45-0.62x)". */
void amp_audit_classes_text(uint32_t mask, const float speed[AMP_CPU_TIME_CLASSES], char *out,
                            size_t size);

/* fork's share: the site table's locks. */
void amp_audit_atfork(enum amp_fork_phase phase);

#endif
