/* The one decision every hook asks: what a call of a hook becomes on this
 * thread (lowered to a dtype, computed in fp32, promoted, or run as made),
 * from the device, the hook and whether the call accumulates, the thread's
 * state and region stack, ampctl's overrides and the policy. The CPU hooks,
 * the cuBLAS, cuBLASLt and cuDNN hooks and the LAPACK, cuSOLVER and CTC-loss
 * region hooks all call it; each library's code only translates the answer
 * into that library's means. Static inline: it sits on every hook's path. */
#ifndef AMPSHIM_DECIDE_H
#define AMPSHIM_DECIDE_H

#include "runtime/threads.h"

/* ---- the region stack (struct amp_thread.regions), encoded and decoded
 * here only ---- */

/* An fp32 region (ampshim_fp32_push). */
#define AMP_REGION_FP32 0x00u
/* An autocast region (ampshim_autocast_push): AMP_REGION_AUTOCAST | dtype, where
 * the dtype is an enum amp_lowp_dtype or AMP_REGION_PROCESS_DTYPE ("the
 * process's dtype", resolved per device when a call is decided). */
#define AMP_REGION_AUTOCAST 0x80u
#define AMP_REGION_DTYPE_MASK 0x7fu
#define AMP_REGION_PROCESS_DTYPE 0x7fu

static inline uint8_t amp_region_autocast(unsigned dtype_or_process)
{
    return (uint8_t)(AMP_REGION_AUTOCAST | (dtype_or_process & AMP_REGION_DTYPE_MASK));
}

static inline int amp_region_is_autocast(uint8_t entry)
{
    return (entry & AMP_REGION_AUTOCAST) != 0;
}

/* The process's dtype on a device (AMPSHIM_DTYPE and friends, ampctl). */
static inline enum amp_lowp_dtype amp_process_dtype(enum amp_device dev)
{
    return (enum amp_lowp_dtype)amp_live_load(&amp_rt.cfg.dtype[dev]);
}

/* The innermost autocast region of t, or -1 when none is open. */
static inline int amp_innermost_autocast(const struct amp_thread *t)
{
    for (uint32_t i = t->region_depth; i-- > 0;)
        if (amp_region_is_autocast(t->regions[i]))
            return (int)i;
    return -1;
}

/* The dtype t's calls on dev lower to: the innermost autocast region's, with
 * AMPSHIM_DEFAULT meaning the process's dtype on that device, else the
 * process's. Computed when the thread's state changes (runtime/threads.c),
 * not per call. */
static inline enum amp_lowp_dtype amp_thread_dtype_on(const struct amp_thread *t,
                                                      enum amp_device dev)
{
    int i = amp_innermost_autocast(t);
    unsigned d = i < 0 ? AMP_REGION_PROCESS_DTYPE : t->regions[i] & AMP_REGION_DTYPE_MASK;
    return d == AMP_REGION_PROCESS_DTYPE ? amp_process_dtype(dev) : (enum amp_lowp_dtype)d;
}

/* The cached result of amp_thread_dtype_on, per device. */
static inline enum amp_lowp_dtype amp_thread_dtype(const struct amp_thread *t, enum amp_device dev)
{
    return (enum amp_lowp_dtype)(dev == AMP_DEVICE_CPU
                                     ? atomic_load_explicit(&t->dtype, memory_order_relaxed)
                                     : atomic_load_explicit(&t->cuda_dtype, memory_order_relaxed));
}

/* ---- the decision ---- */

enum amp_outcome {
    AMP_OUTCOME_PASSTHROUGH, /* run as the program made it */
    AMP_OUTCOME_LOWERED,     /* multiplicands in decision.dtype, fp32 accumulation */
    AMP_OUTCOME_FP32,        /* computed in fp32; an fp32 region while it runs */
    AMP_OUTCOME_PROMOTE,     /* widest input type: typed fp32 calls run as made */
    AMP_OUTCOME_INTERNAL,    /* a numerical library calling itself: untouched */
    AMP_OUTCOME_SMALL, /* lowered by the policy, but too small for lowering to pay: run as made */
    AMP_OUTCOME_NO_UNITS,  /* lowered by the policy, but this CPU has no native units (no oneDNN
                             kernel) for the dtype: run as made */
    AMP_OUTCOME_SPREAD,    /* lowered by the policy, but an operand's values lie too far from the
                             origin for their spread (shim/blas/blas_spread.h): run as made */
    AMP_OUTCOME_NO_NATIVE, /* lowered by the policy, but no native kernel takes this call, and
                              emulating it was not asked for: run as made */
};

/* struct amp_thread.selected: 0 not selected, 1 selected by the process's
 * settings (AMPSHIM_ENABLE, AMPSHIM_THREADS, ampctl for the process), or
 * AMP_SELECTED_EXPLICIT: by an explicit request for this thread (a region it
 * pushed, ampctl for this thread). */
#define AMP_SELECTED_EXPLICIT 2

struct amp_decision {
    enum amp_outcome outcome;
    enum amp_lowp_dtype dtype; /* for AMP_OUTCOME_LOWERED */
    /* A lowered call that was asked for explicitly: a region the thread
     * pushed, ampctl for the thread, a policy entry naming its symbol,
     * routine or call site. The size rule (AMPSHIM_LOWER_MIN) and "no units
     * here" do not void it: it is lowered wherever it can be run lowered at
     * all, else refused with one line (ampshim(7), EXPLICIT REQUESTS). */
    int explicit_request;
};

/* The category a call-site entry of the policy (NAME@CALLER=CATEGORY) gives
 * this call of t, or AMP_CAT_UNSET: asked only when the policy has such
 * entries and t's calls are filtered by caller. */
static inline int amp_site_entry(const struct amp_thread *t, enum amp_device dev,
                                 enum amp_hook_id hook, int accumulates)
{
    if (amp_likely(!t->caller_filter) || !amp_rt.cfg.policy.n_sites)
        return AMP_CAT_UNSET;
    return amp_caller_site_category(amp_tls_caller, dev, hook, accumulates);
}

/* Whether a call of t that the policy lowers was asked for explicitly
 * (struct amp_decision): the thread's own region or ampctl word, an entry
 * naming the hook's symbol or routine, or one naming the call's site. */
static inline int amp_lower_is_explicit(const struct amp_thread *t, enum amp_device dev,
                                        enum amp_hook_id hook, int accumulates)
{
    return t->selected == AMP_SELECTED_EXPLICIT || amp_live_load(&amp_rt.named_lower[dev][hook]) ||
           amp_site_entry(t, dev, hook, accumulates) == AMP_CAT_LOWER;
}

/* Is autocast on for this call of t: the thread is selected (regions,
 * ampctl, AMPSHIM_THREADS) and AMPSHIM_CALLERS, if set, selects its caller. */
static inline int amp_call_selected(const struct amp_thread *t)
{
    return t->selected && !(amp_unlikely(t->caller_filter) && !amp_caller_selected(amp_tls_caller));
}

/* A region hook (LAPACK, cuSOLVER, CTC loss) of category fp32 opens its region
 * on every thread, selected or not: the region protects the library's own
 * inner calls, whatever would select those. */
enum amp_decide_as { AMP_DECIDE_CALL, AMP_DECIDE_REGION };

static inline struct amp_decision amp_decide_as(const struct amp_thread *t, enum amp_device dev,
                                                enum amp_hook_id hook, int accumulates,
                                                enum amp_decide_as as)
{
    struct amp_decision d = {AMP_OUTCOME_PASSTHROUGH, AMP_DTYPE_BF16, 0};
    /* A call libopenblas, liblapack, cuSOLVER or cuDNN makes to its own kind
     * is part of a routine the program called: forwarded untouched, so every
     * library routine computes as without the shim, listed or not. So is a
     * call from a numerical library of libraries.txt (ARPACK, SuperLU, ...),
     * unless a call-site policy entry names its caller. */
    int library = amp_call_from_library(amp_tls_caller);
    if (amp_unlikely(library) &&
        !(library == AMP_LIBRARY_LISTED && t->caller_filter && amp_rt.cfg.policy.n_sites &&
          amp_caller_site_category(amp_tls_caller, dev, hook, accumulates) != AMP_CAT_UNSET)) {
        d.outcome = AMP_OUTCOME_INTERNAL;
        return d;
    }
    /* A CUDA name that two loaded libraries define (cuBLAS 12 beside 13, two
     * copies of one) goes to its caller's own; lowered, it runs on that
     * library's other entry point (amp_real_beside) with that library's
     * helpers (shim/cuda/cuda_helpers.h). Where the caller's own could not
     * be told (shim/resolve.c said which libraries it saw), it runs as made. */
    if (dev == AMP_DEVICE_CUDA &&
        amp_unlikely(atomic_load_explicit(&amp_slot_of[hook]->several, memory_order_relaxed)) &&
        amp_tls_real_guessed)
        return d;
    if (amp_unlikely(t->fp32_depth)) {
        d.outcome = AMP_OUTCOME_FP32;
        return d;
    }
    uint8_t cat = amp_live_load(&amp_rt.category[dev][hook][accumulates != 0]);
    /* Call-site entries beat the rest of the policy for their callers. */
    int site = amp_site_entry(t, dev, hook, accumulates);
    if (amp_unlikely(site != AMP_CAT_UNSET))
        cat = (uint8_t)site;
    if (!amp_call_selected(t)) {
        if (as == AMP_DECIDE_REGION && cat == AMP_CAT_FP32)
            d.outcome = AMP_OUTCOME_FP32;
        return d;
    }
    switch (cat) {
    case AMP_CAT_LOWER:
        d.dtype = amp_thread_dtype(t, dev);
        /* NVIDIA_TF32_OVERRIDE=0 forbids tf32 on CUDA: such a call runs as made. */
        if (d.dtype < AMP_DTYPE_COUNT &&
            !(dev == AMP_DEVICE_CUDA && d.dtype == AMP_DTYPE_TF32 && !amp_rt.cfg.cuda_tf32_allowed))
            d.outcome = AMP_OUTCOME_LOWERED;
        /* amp_lower_is_explicit, with the site's entry already known */
        d.explicit_request = t->selected == AMP_SELECTED_EXPLICIT || site == AMP_CAT_LOWER ||
                             amp_live_load(&amp_rt.named_lower[dev][hook]);
        break;
    case AMP_CAT_FP32:
        d.outcome = AMP_OUTCOME_FP32;
        break;
    case AMP_CAT_PROMOTE:
        d.outcome = AMP_OUTCOME_PROMOTE;
        break;
    default:
        break;
    }
    return d;
}

static inline struct amp_decision amp_decide(const struct amp_thread *t, enum amp_device dev,
                                             enum amp_hook_id hook, int accumulates)
{
    return amp_decide_as(t, dev, hook, accumulates, AMP_DECIDE_CALL);
}

/* The counter a call of this outcome is counted in. A promoted fp32 call ran
 * as made. */
static inline enum amp_ctl_counter amp_outcome_counter(enum amp_outcome outcome)
{
    return outcome == AMP_OUTCOME_LOWERED     ? AMP_CTL_LOWERED
           : outcome == AMP_OUTCOME_FP32      ? AMP_CTL_FP32
           : outcome == AMP_OUTCOME_INTERNAL  ? AMP_CTL_INTERNAL
           : outcome == AMP_OUTCOME_SMALL     ? AMP_CTL_SMALL
           : outcome == AMP_OUTCOME_NO_UNITS  ? AMP_CTL_NOUNITS
           : outcome == AMP_OUTCOME_SPREAD    ? AMP_CTL_SPREAD
           : outcome == AMP_OUTCOME_NO_NATIVE ? AMP_CTL_NONATIVE
                                              : AMP_CTL_PASSTHROUGH;
}

/* How a call counts when its lowered form could not be had (no library path,
 * no scratch, the library refused) and it ran as made: the one rule for "not
 * lowered after all". Every hook counts a call once, when it has run, with
 * the outcome it had. */
static inline enum amp_ctl_counter amp_not_lowered_after_all(enum amp_ctl_counter counter)
{
    return counter == AMP_CTL_LOWERED ? AMP_CTL_PASSTHROUGH : counter;
}

/* Two views of amp_decide for hooks that either lower or run as made
 * (cuBLAS, cuBLASLt, cuDNN): the dtype to lower to, or -1, with *counter
 * how the call counts if it runs as decided; and whether the call is to be
 * computed in fp32. */
static inline int amp_decide_lower_dtype(const struct amp_thread *t, enum amp_device dev,
                                         enum amp_hook_id hook, int accumulates,
                                         enum amp_ctl_counter *counter)
{
    struct amp_decision d = amp_decide(t, dev, hook, accumulates);
    *counter = amp_outcome_counter(d.outcome);
    return d.outcome == AMP_OUTCOME_LOWERED ? (int)d.dtype : -1;
}

/* amp_decide_lower_dtype for a call the accuracy audit cannot run both
 * ways (cuBLASLt, cuDNN, the batched cuBLAS forms, the level-3 rebuilds):
 * under AMPSHIM_AUDIT=1, which promises the program the results it would
 * have without the shim, such a call runs as made (counted passthrough);
 * with the audit off or following, it is lowered as usual. Also says
 * whether the call was asked for explicitly (struct amp_decision). */
static inline int amp_decide_lower_unaudited(const struct amp_thread *t, enum amp_device dev,
                                             enum amp_hook_id hook, int accumulates,
                                             enum amp_ctl_counter *counter, int *explicit_request)
{
    struct amp_decision d = amp_decide(t, dev, hook, accumulates);
    *counter = amp_outcome_counter(d.outcome);
    *explicit_request = d.explicit_request;
    int dtype = d.outcome == AMP_OUTCOME_LOWERED ? (int)d.dtype : -1;
    uint32_t audit = amp_live_load(&amp_rt.cfg.audit);
    if (dtype >= 0 && amp_unlikely(audit == AMP_AUDIT_ON || audit == AMP_AUDIT_AUTO)) {
        *counter = amp_not_lowered_after_all(*counter);
        return -1;
    }
    return dtype;
}

static inline int amp_decide_lower_dtype_unaudited(const struct amp_thread *t, enum amp_device dev,
                                                   enum amp_hook_id hook, int accumulates,
                                                   enum amp_ctl_counter *counter)
{
    int explicit_request;
    return amp_decide_lower_unaudited(t, dev, hook, accumulates, counter, &explicit_request);
}

/* ---- the size rule (AMPSHIM_LOWER_MIN) ---- */

/* AMPSHIM_CUDA_LOWER_MIN=auto's threshold until a GPU has measured the
 * crossover (bench/gpu/sgemm_gpu.c prints it; scripts/gpu-check.sh runs
 * it): 256^3 multiply-adds. Below it a product is bound by its kernel
 * launch on every current NVIDIA GPU (256^3 in fp32 is 34 MFLOP: about
 * 0.5 us on an H100's 67 fp32 TFLOP/s, less than the 2-5 us a launch
 * takes), so lowering cannot make it measurably faster and would only
 * change its result. */
#define AMP_CUDA_LOWER_MIN_AUTO (256u * 256u * 256u)

/* What a CPU call the policy lowers to a dtype becomes before it is
 * lowered: the size rule (AMPSHIM_CPU_LOWER_MIN) and what this CPU can do.
 * The BLAS wing hands in the crossover and the CPU's units: amp_cpu_auto_gate
 * and amp_cpu_native_units are defined in shim/blas/blas_native.c. */
enum amp_cpu_gate {
    AMP_CPU_LOWER,      /* lower it */
    AMP_CPU_SMALL,      /* run as made, counted small: below the size where lowering pays */
    AMP_CPU_NO_UNITS,   /* run as made, counted nounits: no native units for the dtype here */
    AMP_CPU_AUDIT_ONLY, /* no native units, but the audit is on: measure what lowering would
                           cost (a machine with units would lower it), keep the fp32 result */
};

/* AMPSHIM_CPU_LOWER_MIN=auto's answer for a call of `madds` multiply-adds:
 * with AMPSHIM_CPU_KERNEL=auto and native units for the dtype here, small
 * below the native crossover (but under AMPSHIM_AUDIT=auto, which measures
 * what pays per site and size); without units small below it and no-units
 * (audit-only under the audit) above; with native or emulate every size is
 * lowered. Says once at info level when this CPU has no units. */
enum amp_cpu_gate amp_cpu_auto_gate(enum amp_lowp_dtype dtype, double madds);

/* Whether this CPU runs the dtype's products on native low-precision units
 * (asked of oneDNN once): 1 yes, 0 no, -1 not known yet or no oneDNN to ask.
 * why (may be NULL) gets the reason for a no. */
int amp_cpu_native_units(enum amp_lowp_dtype dtype, char *why, size_t whylen);

/* The gate for every CPU family (BLAS, oneDNN): one load when the threshold
 * is a number. An explicit request (amp_lower_is_explicit) is never voided by
 * the size rule or the CPU: it is lowered wherever it can run lowered. */
static inline enum amp_cpu_gate amp_cpu_gate(enum amp_lowp_dtype dtype, double madds,
                                             int explicit_request)
{
    uint32_t set = amp_live_load(&amp_rt.cfg.lower_min[AMP_DEVICE_CPU]);
    if (amp_likely(set == 0) || explicit_request)
        return AMP_CPU_LOWER;
    if (set != AMP_LOWER_MIN_AUTO)
        return madds < (double)set ? AMP_CPU_SMALL : AMP_CPU_LOWER;
    return amp_cpu_auto_gate(dtype, madds);
}

/* The outcome of a call the gate keeps as made (small or no units). */
static inline enum amp_outcome amp_cpu_gate_outcome(enum amp_cpu_gate g)
{
    return g == AMP_CPU_SMALL ? AMP_OUTCOME_SMALL : AMP_OUTCOME_NO_UNITS;
}

/* The size rule on a CUDA call of t the policy lowers to dtype (>= 0): a
 * call of fewer multiply-adds than AMPSHIM_CUDA_LOWER_MIN runs as made,
 * counted small (-1 returned, *counter set), unless it was asked for
 * explicitly (amp_lower_is_explicit, asked only then). A dtype < 0 is
 * returned as it is. */
static inline int amp_cuda_size_rule(const struct amp_thread *t, enum amp_hook_id hook,
                                     int accumulates, int dtype, double madds,
                                     enum amp_ctl_counter *counter)
{
    if (dtype < 0)
        return dtype;
    uint32_t set = amp_live_load(&amp_rt.cfg.lower_min[AMP_DEVICE_CUDA]);
    double min = set == AMP_LOWER_MIN_AUTO ? (double)AMP_CUDA_LOWER_MIN_AUTO : (double)set;
    if (madds >= min || amp_lower_is_explicit(t, AMP_DEVICE_CUDA, hook, accumulates))
        return dtype;
    *counter = AMP_CTL_SMALL;
    return -1;
}

static inline int amp_decide_fp32(const struct amp_thread *t, enum amp_device dev,
                                  enum amp_hook_id hook)
{
    return amp_decide(t, dev, hook, 0).outcome == AMP_OUTCOME_FP32;
}

/* The fast path's question, answered before any argument is read (the C twin
 * of shim/hook_stub_x86_64.h): is this call certainly run as made, with no
 * fp32 region to open and no change of the control block to apply? */
static inline int amp_decide_passes_untouched(const struct amp_thread *t, enum amp_device dev,
                                              enum amp_hook_id hook, int accumulates)
{
    if (amp_unlikely(t->fp32_depth) ||
        amp_unlikely(atomic_load_explicit(&t->seen_generation, memory_order_relaxed) !=
                     atomic_load_explicit(amp_ctl_generation, memory_order_acquire)))
        return 0;
    uint8_t cat = amp_live_load(&amp_rt.category[dev][hook][accumulates != 0]);
    return !(t->selected && (t->caller_filter || cat == AMP_CAT_LOWER || cat == AMP_CAT_FP32));
}

#endif
