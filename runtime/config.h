/* The environment protocol (ampshim(7), ENVIRONMENT): every AMPSHIM_* variable, parsed once
 * at load into struct amp_config. A bad value logs one "ampshim: VAR: ...;
 * using DEFAULT" line and keeps the default. */
#ifndef AMPSHIM_CONFIG_H
#define AMPSHIM_CONFIG_H

#include <limits.h>
#include <stdint.h>

#include "policy/dtype.h"
#include "policy/policy.h"
#include "runtime/log.h"

enum amp_threads_mode { AMP_THREADS_ALL, AMP_THREADS_NONE, AMP_THREADS_MAIN, AMP_THREADS_LIST };
enum amp_report_mode { AMP_REPORT_OFF, AMP_REPORT_STDERR, AMP_REPORT_FILE };
/* AMPSHIM_CPU_KERNEL: how lowered CPU products run (shim/blas/blas_native.c). */
enum amp_cpu_kernel {
    AMP_CPU_KERNEL_AUTO,
    AMP_CPU_KERNEL_NATIVE,
    AMP_CPU_KERNEL_EMULATE,
    AMP_CPU_KERNEL_COUNT
};
extern const char *const amp_cpu_kernel_names[AMP_CPU_KERNEL_COUNT + 1]; /* NULL-ended */
/* AMPSHIM_AUDIT (runtime/accuracy_audit.c): off; on (lowered and fp32 both run, the
 * program keeps the fp32 result); follow (the program keeps the lowered one). */
/* AMPSHIM_CUDA_TIMING (shim/cuda/cuda_timing.c): no GPU time; event pairs
 * around every Nth hooked CUDA call; CUPTI's activity records of every one
 * (shim/cuda/cuda_cupti.c). */
enum amp_cuda_timing_mode {
    AMP_CUDA_TIMING_OFF,
    AMP_CUDA_TIMING_EVENTS,
    AMP_CUDA_TIMING_CUPTI,
    AMP_CUDA_TIMING_COUNT
};
extern const char *const amp_cuda_timing_names[AMP_CUDA_TIMING_COUNT + 1]; /* NULL-ended */
#define AMP_CUDA_TIMING_SAMPLE_DEFAULT 64u
#define AMP_CPU_TIMING_SAMPLE_DEFAULT 64u
enum amp_audit_mode {
    AMP_AUDIT_OFF,
    AMP_AUDIT_ON,
    AMP_AUDIT_FOLLOW,
    AMP_AUDIT_AUTO, /* each site decides for itself: probation, lowered, fp32 */
    AMP_AUDIT_MODE_COUNT
};
extern const char *const amp_audit_mode_names[AMP_AUDIT_MODE_COUNT + 1]; /* NULL-ended */
#define AMP_AUDIT_DEFAULT_TOLERANCE 0.01
/* AMPSHIM_AUDIT_SPREAD_TOLERANCE: the error against an output's own spread
 * (runtime/accuracy_audit.h, amp_audit_spread) above which a site stays
 * fp32 */
#define AMP_AUDIT_DEFAULT_SPREAD_TOLERANCE 0.01
/* AMPSHIM_AUDIT_MIN_SPEEDUP's default: how much faster than fp32 a site's
 * audited lowered runs must be for AMPSHIM_AUDIT=auto to lower it. */
#define AMP_AUDIT_MIN_SPEEDUP_DEFAULT 1.05
/* AMPSHIM_SPREAD_LOSS's default (shim/blas/blas_spread.h): a lowered CPU
 * product runs as made when rounding an operand would erase more than 1/64
 * of its spread (rms), about ten times what it erases of centred data. */
#define AMP_SPREAD_LOSS_DEFAULT 0x1p-6
/* AMPSHIM_AUDIT=auto: clean audited calls a new site needs before it runs
 * lowered (AMPSHIM_AUDIT_PROBATION), and how often a lowered or fp32 site
 * is audited again (AMPSHIM_AUDIT_RECHECK, every Nth call). */
#define AMP_AUDIT_PROBATION_DEFAULT 8u
/* The largest AMPSHIM_AUDIT_PROBATION: an fp32 site comes back after four
 * times as many clean audits, counted in 16 bits of the site's state
 * (runtime/accuracy_audit.h), which must hold that count. */
#define AMP_AUDIT_PROBATION_MAX 16383u
#define AMP_AUDIT_RECHECK_DEFAULT 64u
/* AMPSHIM_CUDA_POOL_KEEP's default and largest value, in MiB. */
#define AMP_CUDA_POOL_KEEP_MIB 256u
#define AMP_MIB_MAX 65536u

struct amp_config {
    int enable;
    enum amp_lowp_dtype dtype[AMP_DEVICE_COUNT];
    struct amp_policy_overrides policy;
    int output_round;
    int cpu_kernel;         /* enum amp_cpu_kernel */
    int cuda_fp16_explicit; /* AMPSHIM_CUDA_FP16=explicit: fp16 inputs by conversion */
    int audit;              /* enum amp_audit_mode */
    /* Multiply-adds below which a call the policy lowers runs as made
     * (AMPSHIM_LOWER_MIN): a number, or AMP_LOWER_MIN_AUTO. */
    uint32_t lower_min[AMP_DEVICE_COUNT];
    uint32_t audit_sample;    /* audit every Nth lowered call of a call site */
    uint32_t audit_probation; /* auto: clean audits before a site runs lowered */
    uint32_t audit_recheck;   /* auto: audit a decided site's every Nth call */
    /* MiB of freed scratch the shim's device pool keeps past a
     * synchronisation (AMPSHIM_CUDA_POOL_KEEP; its release threshold). */
    uint32_t cuda_pool_keep_mib;
    uint32_t cuda_timing;          /* enum amp_cuda_timing_mode */
    uint32_t cuda_timing_sample;   /* time every Nth hooked CUDA call */
    uint32_t cpu_timing_sample;    /* time every Nth CPU call that is not a pass-through */
    double audit_tolerance;        /* relative Frobenius error above which a site stays fp32 */
    double audit_spread_tolerance; /* error against the output's spread, the same; off: Inf */
    double spread_loss;            /* AMPSHIM_SPREAD_LOSS; 0: no spread check */
    double audit_min_speedup;      /* auto: fp32 time / lowered time a site needs; 0: any */
    char audit_policy[PATH_MAX];   /* where the generated policy goes at exit ("" none) */
    enum amp_threads_mode threads;
    char threads_list[512]; /* comma-separated tids and name globs */
    enum amp_report_mode report;
    char report_path[PATH_MAX];
    enum amp_log_level log_level;
    char log_file[PATH_MAX];
    int strict;
    int control;           /* AMPSHIM_CONTROL: a shared control block for ampctl */
    char callers[512];     /* AMPSHIM_CALLERS: object basename or symbol globs; "" = all */
    int cuda_tf32_allowed; /* NVIDIA_TF32_OVERRIDE=0 forbids tf32 on CUDA */
};

typedef const char *(*amp_getenv_fn)(const char *name);

void amp_config_defaults(struct amp_config *cfg);

/* Reads every variable through getenv_fn (secure_getenv in the shim). Bad
 * values are logged and leave the default. Returns the number of bad values. */
int amp_config_load(struct amp_config *cfg, amp_getenv_fn getenv_fn);

/* Does AMPSHIM_THREADS select a thread with this tid and name? */
int amp_config_selects_thread(const struct amp_config *cfg, long tid, long pid, const char *name);

/* Does AMPSHIM_CALLERS select a call from this object (path) and function
 * (either may be NULL)? */
int amp_config_selects_caller(const struct amp_config *cfg, const char *object, const char *symbol);

/* Warns once (AMP_LOG_WARN) about each AMPSHIM_ variable in env that is no
 * setting, naming the nearest real one; returns how many (AMPSHIM_STRICT
 * counts them as bad variables). AMPSHIM_TEST_* and the scripts' own
 * AMPSHIM_BUILD_DIR are not settings and not warned about. */
int amp_config_check_names(char *const *env);

/* The i-th variable amp_config_load reads (NULL past the last), and whether
 * parsing it opens a file (AMPSHIM_LOG_FILE): for the fuzzer and the tests. */
const char *amp_config_variable(size_t i, int *opens_file);

/* AMPSHIM_LOWER_MIN=auto, as stored (runtime/parse.h reads it). */
#define AMP_LOWER_MIN_AUTO UINT32_MAX

#endif
