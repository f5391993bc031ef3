/* The control block: one per process, in owner-only shared memory (a memfd
 * the process keeps open, runtime/control.c), through which ampctl reads and
 * steers a running program. Its layout is an ABI shared with ampctl: fixed-width
 * fields, a magic, a version and a size, each offset pinned by
 * _Static_assert below. The per-thread slots are the threads' own state:
 * hooks update their counters in place, so ampctl sees them live.
 *
 * Protocol: a writer (ampctl, or ampshim_ctl in the process) changes fields,
 * then increments generation. Each hook call compares generation with the
 * generation its thread last saw (one load); on a change the thread re-reads
 * its slot and the process-wide fields before the call proceeds. */
#ifndef AMPSHIM_CONTROL_H
#define AMPSHIM_CONTROL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ampshim_generated.h"
#include "runtime/control_find.h"

#define AMP_CTL_MAGIC UINT64_C(0x314c544353504d41) /* "AMPSCTL1" */
/* 12: twelve counter slots (nonative), the CPU sites' pay checks per size
 * class; 11: call sites named by the program's own frame (runtime/sites.h): the
 * audit site's names cut shorter, with their hashes, python and op_around;
 * 9: the spread counter (the tenth slot), the audit sites' spread
 * evidence and time, CPU time per hook; 8: ten counter slots (nounits); 5: the small counter and lower_min; 4: the
 * audit's settings and call sites; 3: eight counter slots */
#define AMP_CTL_VERSION 13u
#define AMP_CTL_MAX_THREADS 192
#define AMP_CTL_MAX_OPS 256
#define AMP_CTL_MAX_HOOKS 448
#define AMP_CTL_POLICY_NONE 0xffu

/* ampctl's request for one thread. */
enum amp_ctl_want { AMP_CTL_FOLLOW = 0, AMP_CTL_ON = 1, AMP_CTL_OFF = 2 };

/* The per-hook counters (policy/data/counters.txt). */
enum amp_ctl_counter {
#define AMP_X_COUNTER(name, NAME, kind, width, description) AMP_CTL_##NAME,
    AMPSHIM_COUNTER_LIST(AMP_X_COUNTER)
#undef AMP_X_COUNTER
        AMP_CTL_COUNTERS
};
#define AMP_CTL_COUNTER_SLOTS 12 /* per hook in the block's layout */
_Static_assert(AMP_CTL_COUNTERS <= AMP_CTL_COUNTER_SLOTS, "the block has 12 counters per hook");

/* Each counter's name, and whether it counts calls by outcome ("calls" is
 * the sum of those). */
extern const char *const amp_ctl_counter_names[AMP_CTL_COUNTERS];
extern const uint8_t amp_ctl_counter_is_outcome[AMP_CTL_COUNTERS];
extern const uint8_t amp_ctl_counter_width[AMP_CTL_COUNTERS]; /* its table column */

extern const uint8_t amp_ctl_counter_is_call[AMP_CTL_COUNTERS]; /* outcome or library */

/* The program's calls a row of counters records: the sum of its outcome
 * counters. */
static inline uint64_t amp_ctl_calls(const uint64_t row[AMP_CTL_COUNTERS])
{
    uint64_t n = 0;
    for (int i = 0; i < AMP_CTL_COUNTERS; i++)
        n += amp_ctl_counter_is_outcome[i] ? row[i] : 0;
    return n;
}

/* Whether a row records any call at all, the program's or a library's own. */
static inline int amp_ctl_row_used(const uint64_t row[AMP_CTL_COUNTERS])
{
    for (int i = 0; i < AMP_CTL_COUNTERS; i++)
        if (amp_ctl_counter_is_call[i] && row[i])
            return 1;
    return 0;
}

#define AMP_CPU_TIME_CLASSES 24 /* up to 2^48 flops; bigger calls count in the last */

/* The size class of a call of `flops` flops. */
static inline int amp_cpu_time_class(uint64_t flops)
{
    int bits = flops ? 64 - __builtin_clzll(flops) : 0;
    return bits / 2 < AMP_CPU_TIME_CLASSES ? bits / 2 : AMP_CPU_TIME_CLASSES - 1;
}

/* The size class of a call whose flops are counted in a double (0 when
 * not known, and past 2^63, in the first class). */
static inline int amp_flops_class(double flops)
{
    return amp_cpu_time_class(flops >= 1 && flops < 0x1p63 ? (uint64_t)flops : 0);
}

/* One call site of the accuracy audit (runtime/accuracy_audit.c): the lowered calls of
 * one hooked symbol from one calling function of one object. Written by the
 * audited process under its audit lock; `ready` is set (release) once the
 * names are in, and ampctl reads the rest live, field by field. */
#define AMP_CTL_AUDIT_SITES 256
#define AMP_CTL_CPU_SITES 128 /* runtime/site_time.h */
#define AMP_AUDIT_BINS 8      /* relative errors by decade: < 1e-7, ..., >= 1e-1 */
struct amp_audit_site {
    _Atomic uint32_t ready; /*   0 */
    uint16_t hook;          /*   4 */
    uint8_t device;         /*   6: a CUDA site's errors are measured on the device (norms
                                           by the library's own routines) and counted when read
                                           back; it has no elementwise error nor a count of Inf/NaN
                                           elements */
    uint8_t dtype;          /*   7: the dtype its calls were lowered to (the last) */
    /*   8: the site's names (runtime/sites.h): a native caller's object basename
     * and function ("" when dladdr names none), a Python site's file basename
     * and "LINE QUALNAME"; cut to their fields */
    char object[56];
    char function[80]; /*  64 */
    /* 144: FNV-1a hashes of the full native names when they were cut (0 when
     * whole): a policy entry written for the site names them exactly */
    uint64_t object_hash, function_hash;
    uint8_t python;      /* 160: a Python site */
    uint8_t twin_audits; /* 161: its audits run the whole call twice (oneDNN
                                              twins): auto's probation is AMP_AUTO_TWIN_PROBATION */
    int16_t op_around;   /* 162: the op around its calls (runtime/sites.h): the float32-list
                            op, else the lower-precision-list op, or -1 */
    /* 164: the largest error against its output's spread (amp_audit_result.spread_err) */
    _Atomic float spread_err_max;
    uint64_t offset;                       /* 168: the first call's return address in the object */
    _Atomic uint64_t calls;                /* 176: lowered calls from here */
    _Atomic uint64_t audited;              /* 184: of those, run both ways and compared */
    _Atomic uint64_t nonfinite_calls;      /* 192: audited calls whose lowered output had Inf/NaN
                                         where the fp32 one was finite */
    _Atomic uint64_t nonfinite_elems;      /* 200 */
    _Atomic uint64_t flops;                /* 208: of every lowered call from here */
    _Atomic uint64_t hist[AMP_AUDIT_BINS]; /* 216: audited calls by relative error */
    _Atomic double err_max;                /* 280: relative Frobenius error, largest */
    _Atomic double err_sum;    /* 288: ... summed over audited calls (mean = sum / audited) */
    _Atomic double elem_max;   /* 296: largest elementwise relative error (not tiny values) */
    _Atomic uint32_t n_shapes; /* 304: distinct shapes seen; the first four kept */
    /* 308: AMPSHIM_AUDIT=auto's decision (runtime/accuracy_audit.h:
     * enum amp_auto_state, flips and clean streak packed), shared by the threads */
    _Atomic uint32_t auto_state;
    int64_t shape[4][3];            /* 312: m, n, k (0 where the routine has fewer) */
    _Atomic uint64_t lowered_flops; /* 408: of the calls that ran lowered (the program kept it) */
    /* 416: AMPSHIM_AUDIT=auto's last transitions, oldest first: the site's call count
     * when it happened << 8 | the state it went to; 0 unused */
    _Atomic uint64_t transition[4];
    /* 448: calls from here kept as made because an operand's values lie too
     * far from the origin for their spread (shim/blas/blas_spread.h), and the
     * largest share of an operand's spread rounding would have erased */
    _Atomic uint64_t spread_calls;
    _Atomic double spread_max; /* 456 */
    /* 464: wall time of the audited calls' two runs, lowered and as made
     * (shim/blas/blas_audit.c), since the site began */
    _Atomic uint64_t ns_lowered, ns_fp32;
    /* 480: AMPSHIM_AUDIT=auto's speed, per size class of the site's calls
     * (amp_cpu_time_class: flops within a factor of 4): the least time per
     * flop of the class's audited calls since auto last weighed the site,
     * lowered and as made (ns per flop), and how many there were (to 255).
     * Auto weighs each class by the ratio of the two least, which neither a
     * one-off cost (a new shape's first native call makes its kernel) nor a
     * run the machine preempted moves. */
    _Atomic float speed_best[AMP_CPU_TIME_CLASSES][2];
    _Atomic uint8_t speed_count[AMP_CPU_TIME_CLASSES]; /* 672 */
    /* 696: each class's median when it was last weighed (0: never timed) */
    _Atomic float class_speed[AMP_CPU_TIME_CLASSES];
    /* 792: the classes whose lowered runs were not faster by
     * AMPSHIM_AUDIT_MIN_SPEEDUP when last weighed: a lowered site runs
     * their calls fp32 (bit c: class c) */
    _Atomic uint32_t slow_classes;
    _Atomic uint32_t auto_why; /* 796: why auto last moved it (enum amp_auto_why) */
};

/* A CPU hook's wall time columns (AMPSHIM_CPU_TIMING_SAMPLE): nanoseconds,
 * timed calls and their flops, lowered and as made. */
enum amp_cpu_time {
    AMP_CPU_NS_LOWERED,
    AMP_CPU_TIMED_LOWERED,
    AMP_CPU_FLOPS_LOWERED,
    AMP_CPU_NS_MADE,
    AMP_CPU_TIMED_MADE,
    AMP_CPU_FLOPS_MADE,
    AMP_CPU_TIME_FIELDS
};

/* Adds one timed call to a row of those columns (a hook's size class, a
 * call site's). */
static inline void amp_cpu_time_add_row(_Atomic uint64_t row[AMP_CPU_TIME_FIELDS], uint64_t ns,
                                        uint64_t flops, int lowered)
{
    atomic_fetch_add_explicit(&row[lowered ? AMP_CPU_NS_LOWERED : AMP_CPU_NS_MADE], ns,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&row[lowered ? AMP_CPU_TIMED_LOWERED : AMP_CPU_TIMED_MADE], 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&row[lowered ? AMP_CPU_FLOPS_LOWERED : AMP_CPU_FLOPS_MADE], flops,
                              memory_order_relaxed);
}
/* A hook's GPU time columns: nanoseconds and timed calls, lowered and as made. */
enum amp_gpu_time {
    AMP_GPU_NS_LOWERED,
    AMP_GPU_TIMED_LOWERED,
    AMP_GPU_NS_MADE,
    AMP_GPU_TIMED_MADE,
};

/* One thread's state. The first 16 bytes are read by the entry stubs. */
struct amp_thread {
    uint32_t fp32_depth;    /*  0: > 0 inside an fp32 region (LAPACK, ampshim_fp32_push) */
    uint8_t selected;       /*  4: autocast is on for this thread now */
    uint8_t caller_filter;  /*  5: AMPSHIM_CALLERS: decide in C from the caller */
    uint8_t rename_pending; /*  6: re-read the name (AMPSHIM_THREADS) */
    uint8_t scratch_busy;   /*  7: a call is using the scratch buffer */
    _Atomic uint64_t seen_generation; /*  8: the block generation this thread applied */
    _Atomic int64_t tid;              /* 16: 0 for a free slot */
    char name[16];                    /* 24: the thread's name when last read */
    _Atomic uint32_t want;            /* 40: enum amp_ctl_want, written by ampctl */
    _Atomic uint32_t dtype;           /* 44: the thread's CPU dtype now (enum amp_lowp_dtype) */
    uint32_t region_depth;            /* 48: ampshim_autocast_push / ampshim_fp32_push entries */
    _Atomic uint32_t cuda_dtype;      /* 52: the thread's CUDA dtype now */
    uint64_t owner_private[5];        /* 56: the owner's bookkeeping (scratch, pthread id) */
    uint8_t regions[32];              /* 96: the region stack (encoding: runtime/decide.h) */
    /* 128: counters, one row per hook, written only by this thread. */
    _Atomic uint64_t counters[AMP_CTL_MAX_HOOKS][AMP_CTL_COUNTER_SLOTS];
};

struct amp_ctl_block {
    uint64_t magic;                      /*   0 */
    uint32_t version;                    /*   8 */
    uint32_t size;                       /*  12: sizeof(struct amp_ctl_block) */
    int64_t pid;                         /*  16 */
    uint32_t uid;                        /*  24 */
    uint32_t op_count;                   /*  28 */
    uint32_t hook_count;                 /*  32 */
    uint32_t max_threads;                /*  36 */
    uint64_t list_hash;                  /*  40: hash of the op and hook names */
    char exe[64];                        /*  48: the program, short name */
    _Atomic uint64_t generation;         /* 112 */
    _Atomic uint32_t enabled;            /* 120: autocast for the process (ampctl enable/disable) */
    _Atomic uint32_t output_round;       /* 124 */
    _Atomic uint32_t dtype[2];           /* 128: [device] enum amp_lowp_dtype */
    _Atomic uint32_t cpu_kernel;         /* 136: enum amp_cpu_kernel */
    _Atomic uint32_t audit;              /* 140: enum amp_audit_mode */
    _Atomic uint32_t audit_sample;       /* 144: audit every Nth lowered call of a site */
    _Atomic uint32_t cpu_timing_sample;  /* 148: time every Nth CPU slow-path call */
    _Atomic double audit_tolerance;      /* 152: for the generated policy */
    _Atomic uint32_t audit_request;      /* 160: ampctl asks for device results to be read back */
    _Atomic uint32_t audit_served;       /* 164: the last request the process answered */
    _Atomic uint32_t lower_min[2];       /* 168: [device] AMPSHIM_LOWER_MIN (UINT32_MAX: auto) */
    _Atomic uint32_t cuda_timing;        /* 176: enum amp_cuda_timing_mode (AMPSHIM_CUDA_TIMING) */
    _Atomic uint32_t cuda_timing_sample; /* 180: time every Nth hooked CUDA call */
    _Atomic uint32_t audit_probation;    /* 184: auto: clean audits before a site is lowered */
    _Atomic uint32_t audit_recheck;      /* 188: auto: audit a decided site's every Nth call */
    _Atomic uint8_t policy[2][AMP_CTL_MAX_OPS]; /* 192: [device][op] category or NONE */
    _Atomic uint64_t
        exited[AMP_CTL_MAX_HOOKS][AMP_CTL_COUNTER_SLOTS]; /* 704: counters of threads that ended */
    struct amp_thread threads[AMP_CTL_MAX_THREADS];       /* 43712 */
    _Atomic uint32_t audit_sites;                         /* sites in use */
    _Atomic uint32_t audit_dropped;                       /* sites not kept: the table was full */
    _Atomic uint64_t audit_flops; /* every lowered call's flops while the audit was on */
    struct amp_audit_site audit_site[AMP_CTL_AUDIT_SITES];
    /* GPU time of the hooked CUDA calls that were timed (AMPSHIM_CUDA_TIMING),
     * per hook: enum amp_gpu_time. Written when the timings are read back
     * (shim/cuda/cuda_timing.c). */
    _Atomic uint64_t gpu_time[AMP_CTL_MAX_HOOKS][4];
    /* Wall time of the CPU hooks' timed calls (shim/blas/blas_plan.h), per
     * hook and size class (AMP_CPU_TIME_CLASSES: a call of f flops is in
     * class log2(f) / 2, so lowered and as-made calls of like sizes are
     * compared): enum amp_cpu_time. */
    _Atomic uint64_t cpu_time[AMP_CTL_MAX_HOOKS][AMP_CPU_TIME_CLASSES][AMP_CPU_TIME_FIELDS];
    /* The same timed calls by call site (runtime/site_time.h): how many
     * sites are in use, how many timed calls found the table full, and the
     * sites, each written by the process under its lock and `ready` set
     * (release) once its names are in. */
    _Atomic uint32_t cpu_sites, cpu_sites_dropped;
    struct amp_cpu_site {
        _Atomic uint32_t ready;
        uint16_t hook;
        char object[64];   /* the calling object's basename */
        char function[96]; /* the calling function, "" when dladdr names none */
        uint64_t offset;   /* the first call's return address in the object */
        _Atomic uint64_t t[AMP_CPU_TIME_FIELDS]; /* enum amp_cpu_time */
        /* Did lowering pay here (runtime/site_time.h, pay checks)? Per size
         * class: the native lowered calls and their flops; the pay checks
         * (a lowered call also run as made, its output thrown away), their
         * flops and their process CPU time both ways; the votes of the
         * last checks (2 bits each, newest lowest: enum amp_pay_vote) and
         * the verdict they give (enum amp_pay_verdict). */
        struct amp_pay_class {
            _Atomic uint64_t calls, flops, checks, checked_flops, ns_lowered, ns_made;
            _Atomic uint32_t votes, verdict;
        } pay[AMP_CPU_TIME_CLASSES];
    } cpu_site[AMP_CTL_CPU_SITES];
    /* AMPSHIM_AUDIT_SPREAD_TOLERANCE, for the generated policy (its
     * relative error's is audit_tolerance) */
    _Atomic double audit_spread_tolerance;
};

_Static_assert(offsetof(struct amp_thread, fp32_depth) == 0, "layout");
_Static_assert(offsetof(struct amp_thread, selected) == 4, "layout");
_Static_assert(offsetof(struct amp_thread, caller_filter) == 5, "layout");
_Static_assert(offsetof(struct amp_thread, seen_generation) == 8, "layout");
_Static_assert(offsetof(struct amp_thread, tid) == 16, "layout");
_Static_assert(offsetof(struct amp_thread, name) == 24, "layout");
_Static_assert(offsetof(struct amp_thread, want) == 40, "layout");
_Static_assert(offsetof(struct amp_thread, dtype) == 44, "layout");
_Static_assert(offsetof(struct amp_thread, cuda_dtype) == 52, "layout");
_Static_assert(offsetof(struct amp_thread, regions) == 96, "layout");
_Static_assert(offsetof(struct amp_thread, counters) == 128, "layout");
_Static_assert(sizeof(struct amp_thread) == 128 + AMP_CTL_MAX_HOOKS * 96, "layout");
_Static_assert(offsetof(struct amp_ctl_block, generation) == 112, "layout");
_Static_assert(offsetof(struct amp_ctl_block, enabled) == 120, "layout");
_Static_assert(offsetof(struct amp_ctl_block, dtype) == 128, "layout");
_Static_assert(offsetof(struct amp_ctl_block, cpu_kernel) == 136, "layout");
_Static_assert(offsetof(struct amp_ctl_block, policy) == 192, "layout");
_Static_assert(offsetof(struct amp_ctl_block, exited) == 704, "layout");
_Static_assert(offsetof(struct amp_ctl_block, threads) == 43712, "layout");
_Static_assert(offsetof(struct amp_ctl_block, audit) == 140, "layout");
_Static_assert(offsetof(struct amp_ctl_block, audit_tolerance) == 152, "layout");
_Static_assert(offsetof(struct amp_ctl_block, audit_request) == 160, "layout");
_Static_assert(offsetof(struct amp_ctl_block, lower_min) == 168, "layout");
_Static_assert(offsetof(struct amp_ctl_block, audit_sites) ==
                   43712 + AMP_CTL_MAX_THREADS * sizeof(struct amp_thread),
               "layout");
_Static_assert(offsetof(struct amp_ctl_block, audit_site) ==
                   offsetof(struct amp_ctl_block, audit_sites) + 16,
               "layout");
_Static_assert(sizeof(struct amp_audit_site) == 800, "layout");
_Static_assert(offsetof(struct amp_audit_site, speed_count) == 672, "layout");
_Static_assert(offsetof(struct amp_audit_site, slow_classes) == 792, "layout");
_Static_assert(AMP_CPU_TIME_CLASSES <= 32, "a class is a bit of slow_classes");
_Static_assert(offsetof(struct amp_audit_site, ns_lowered) == 464, "layout");
_Static_assert(offsetof(struct amp_audit_site, spread_calls) == 448, "layout");
_Static_assert(offsetof(struct amp_audit_site, auto_state) == 308, "layout");
_Static_assert(offsetof(struct amp_audit_site, lowered_flops) == 408, "layout");
_Static_assert(offsetof(struct amp_ctl_block, audit_probation) == 184, "layout");
_Static_assert(offsetof(struct amp_audit_site, calls) == 176, "layout");
_Static_assert(offsetof(struct amp_audit_site, function) == 64, "layout");
_Static_assert(offsetof(struct amp_audit_site, object_hash) == 144, "layout");
_Static_assert(offsetof(struct amp_audit_site, op_around) == 162, "layout");
_Static_assert(offsetof(struct amp_audit_site, offset) == 168, "layout");
_Static_assert(offsetof(struct amp_audit_site, err_max) == 280, "layout");
_Static_assert(offsetof(struct amp_audit_site, shape) == 312, "layout");

/* The lowest descriptor number the block's memfd (AMP_CTL_MEMFD_NAME,
 * runtime/control_find.h) is moved to. */
#define AMP_CTL_FD_FLOOR 100

/* A hash of the generated op and hook names: a block is only understood by
 * an ampctl built from the same lists. */
uint64_t amp_ctl_list_hash(void);

/* Checks a block someone else wrote (ampctl, the fuzzer): magic, version,
 * size and counts. Returns NULL, or a one-line reason it is refused. */
const char *amp_ctl_block_problem(const void *mem, size_t len);

/* ---- the owning process's side (the shim) ---- */

/* The process's control block (NULL before the first hooked call), and the
 * generation word every hook compares with its thread's: the block's, or a
 * private word before there is a block. */
extern struct amp_ctl_block *amp_ctl;
extern _Atomic uint64_t *_Atomic amp_ctl_generation;

/* Creates the block at the first hooked call: shared (a sealed 0600 memfd
 * ampctl opens through /proc/PID/fd) unless AMPSHIM_CONTROL=0 or the process
 * is setuid/setgid (secure execution); then private, so the rest of the shim
 * has one path. Returns the block's generation, 0 when no memory could be
 * had at all. Called with the thread registry's lock held. */
uint64_t amp_ctl_create(void);

/* In a forked child: forgets the parent's block (unmapped, its descriptor
 * closed). */
void amp_ctl_drop_after_fork(void);

#endif
