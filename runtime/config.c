/* The AMPSHIM_* variables: one table, one parser each, strict (trailing
 * garbage rejected), quiet (one line per bad variable), never fatal unless
 * AMPSHIM_STRICT=1 asks the caller to stop. */
#include "runtime/config.h"

#include <stdatomic.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/parse.h"
#include "runtime/settings.h"

void amp_config_defaults(struct amp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->enable = 1;
    cfg->dtype[AMP_DEVICE_CPU] = AMP_DTYPE_BF16;
    cfg->dtype[AMP_DEVICE_CUDA] = AMP_DTYPE_FP16;
    amp_policy_overrides_clear(&cfg->policy);
    cfg->threads = AMP_THREADS_ALL;
    cfg->report = AMP_REPORT_OFF;
    cfg->log_level = AMP_LOG_WARN;
    cfg->control = 1;
    cfg->cuda_tf32_allowed = 1;
    cfg->audit_sample = 1;
    cfg->audit_probation = AMP_AUDIT_PROBATION_DEFAULT;
    cfg->audit_recheck = AMP_AUDIT_RECHECK_DEFAULT;
    cfg->cuda_pool_keep_mib = AMP_CUDA_POOL_KEEP_MIB;
    cfg->cuda_timing = AMP_CUDA_TIMING_EVENTS;
    cfg->cuda_timing_sample = AMP_CUDA_TIMING_SAMPLE_DEFAULT;
    cfg->cpu_timing_sample = AMP_CPU_TIMING_SAMPLE_DEFAULT;
    cfg->lower_min[AMP_DEVICE_CPU] = cfg->lower_min[AMP_DEVICE_CUDA] = AMP_LOWER_MIN_AUTO;
    cfg->audit_tolerance = AMP_AUDIT_DEFAULT_TOLERANCE;
    cfg->audit_spread_tolerance = AMP_AUDIT_DEFAULT_SPREAD_TOLERANCE;
    cfg->spread_loss = AMP_SPREAD_LOSS_DEFAULT;
    cfg->audit_min_speedup = AMP_AUDIT_MIN_SPEEDUP_DEFAULT;
}

/* Each parser returns 0, or -1 with a reason in err (cfg is then unchanged),
 * or a count N > 0 of problems it has reported itself, one line each (the
 * policy parsers: each bad entry is ignored, the good ones apply). */
typedef int (*var_parser)(struct amp_config *cfg, const char *value, char *err, size_t errlen);

static int parse_bool_into(int *field, const char *v, char *err, size_t errlen)
{
    if (amp_parse_bool(v, field) == 0)
        return 0;
    snprintf(err, errlen, "'%s' is not one of 1/0, true/false, yes/no, on/off", v);
    return -1;
}

static int parse_enable(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    return parse_bool_into(&cfg->enable, v, err, errlen);
}

static int parse_strict(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    return parse_bool_into(&cfg->strict, v, err, errlen);
}

static int parse_control(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    return parse_bool_into(&cfg->control, v, err, errlen);
}

/* A dtype as a setting's value (enum amp_lowp_dtype), or -1. */
static int64_t dtype_value(const char *v, char *err, size_t errlen)
{
    enum amp_lowp_dtype d;
    if (amp_parse_dtype(v, &d) == 0)
        return d;
    snprintf(err, errlen, "unknown dtype '%s' (bf16, fp16, tf32)", v);
    return -1;
}

/* One warning per bad policy entry, naming the variable; the good entries
 * apply. */
static void warn_bad_entry(void *variable, const char *message)
{
    amp_log(AMP_LOG_WARN, "%s: %s; entry ignored", (const char *)variable, message);
}

static int parse_policy(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return amp_policy_parse_each(v, 0, &cfg->policy, warn_bad_entry, "AMPSHIM_POLICY");
}

/* At most AMP_POLICY_FILE_MAX bytes of text, from a regular file, opened
 * without blocking (a FIFO is refused, never waited on). */
enum { AMP_POLICY_FILE_MAX = 262143 }; /* a whole audit policy (256 entries) fits */

static int parse_policy_file(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    int fd = open(v, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open '%s': %s", v, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "'%s' is not a regular file", v);
        return -1;
    }
    if (st.st_size > AMP_POLICY_FILE_MAX) {
        close(fd);
        snprintf(err, errlen, "'%s' is larger than %d bytes", v, AMP_POLICY_FILE_MAX);
        return -1;
    }
    static char text[AMP_POLICY_FILE_MAX + 2];
    size_t n = 0;
    for (ssize_t r;
         n <= AMP_POLICY_FILE_MAX && (r = read(fd, text + n, AMP_POLICY_FILE_MAX + 1 - n)) != 0;) {
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            snprintf(err, errlen, "cannot read '%s': %s", v, strerror(e));
            return -1;
        }
        n += (size_t)r;
    }
    close(fd);
    if (n > AMP_POLICY_FILE_MAX) {
        snprintf(err, errlen, "'%s' is larger than %d bytes", v, AMP_POLICY_FILE_MAX);
        return -1;
    }
    text[n] = '\0';
    if (strlen(text) != n) {
        snprintf(err, errlen, "'%s' is not a text file", v);
        return -1;
    }
    return amp_policy_parse_each(text, 1, &cfg->policy, warn_bad_entry, "AMPSHIM_POLICY_FILE");
}

/* The settings' values over those (runtime/settings.h): -1 when bad. */
static int64_t output_value(const char *v, char *err, size_t errlen)
{
    return amp_parse_output(v, err, errlen);
}

static int64_t cpu_kernel_value(const char *v, char *err, size_t errlen)
{
    return amp_parse_cpu_kernel(v, err, errlen);
}

static int64_t audit_value(const char *v, char *err, size_t errlen)
{
    return amp_parse_audit_mode(v, err, errlen);
}

static int64_t cuda_timing_value(const char *v, char *err, size_t errlen)
{
    int on;
    if (amp_parse_bool(v, &on) == 0)
        return on ? AMP_CUDA_TIMING_EVENTS : AMP_CUDA_TIMING_OFF;
    return amp_parse_choice(v, amp_cuda_timing_names, "off, events or cupti", err, errlen);
}

static int64_t audit_sample_value(const char *v, char *err, size_t errlen)
{
    uint32_t n = amp_parse_audit_sample(v, err, errlen);
    return n ? (int64_t)n : -1;
}

/* AMPSHIM_CPU_TIMING_SAMPLE: a sampling interval, or 0 (off). */
static int64_t timing_sample_value(const char *v, char *err, size_t errlen)
{
    if (strcmp(v, "0") == 0)
        return 0;
    uint32_t n = amp_parse_audit_sample(v, err, errlen);
    if (!n)
        snprintf(err, errlen, "'%s' is not a whole number from 0 (off) to 2147483648", v);
    return n ? (int64_t)n : -1;
}

static int64_t audit_probation_value(const char *v, char *err, size_t errlen)
{
    uint32_t n = amp_parse_audit_sample(v, err, errlen);
    if (!n || n > AMP_AUDIT_PROBATION_MAX) {
        snprintf(err, errlen, "'%s' is not a whole number from 1 to %u", v,
                 AMP_AUDIT_PROBATION_MAX);
        return -1;
    }
    return (int64_t)n;
}

/* ampctl's opt.enabled: 1, 0 or default (enum amp_ctl_want). */
static const char *const want_names[] = {"default", "1", "0", NULL};

static int64_t want_value(const char *v, char *err, size_t errlen)
{
    int on;
    if (strcasecmp(v, "default") == 0)
        return AMP_CTL_FOLLOW;
    if (amp_parse_bool(v, &on) == 0)
        return on ? AMP_CTL_ON : AMP_CTL_OFF;
    snprintf(err, errlen, "'%s' is not 1, 0 or default", v);
    return -1;
}

static int parse_cuda_fp16(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    static const char *const modes[] = {"fast", "explicit", NULL};
    int i = amp_parse_choice(v, modes, "fast or explicit", err, errlen);
    return i < 0 ? -1 : (cfg->cuda_fp16_explicit = i, 0);
}

static int parse_audit_tolerance(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    double x = amp_parse_audit_tolerance(v, err, errlen);
    return x < 0 ? -1 : (cfg->audit_tolerance = x, 0);
}

static int parse_audit_spread_tolerance(struct amp_config *cfg, const char *v, char *err,
                                        size_t errlen)
{
    if (amp_parse_word(v, (const char *const[]){"off", NULL}) == 0) {
        cfg->audit_spread_tolerance = INFINITY;
        return 0;
    }
    double x = amp_parse_audit_tolerance(v, err, errlen);
    if (x < 0)
        snprintf(err, errlen, "'%s' is not a positive number or off", v);
    return x < 0 ? -1 : (cfg->audit_spread_tolerance = x, 0);
}

static int parse_spread_loss(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    double x = amp_parse_spread_loss(v, err, errlen);
    return x < 0 ? -1 : (cfg->spread_loss = x, 0);
}

static int parse_audit_min_speedup(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= 0.0) || !(x <= 1000.0)) {
        snprintf(err, errlen, "'%s' is not a number from 0 to 1000", v);
        return -1;
    }
    cfg->audit_min_speedup = x;
    return 0;
}

static int parse_audit_policy(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    /* A path, like AMPSHIM_REPORT's: it has a '/'. */
    if (!strchr(v, '/')) {
        snprintf(err, errlen, "'%s' is not a path (a path has a '/': ./%s)", v, v);
        return -1;
    }
    if (strlen(v) >= sizeof cfg->audit_policy) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    snprintf(cfg->audit_policy, sizeof cfg->audit_policy, "%s", v);
    return 0;
}

static int is_all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return n > 0;
}

/* Copies the next comma-separated entry of *p into entry (at least as big as
 * the list) and advances *p; returns 0 at the end of the list. */
static int next_entry(const char **p, char *entry)
{
    if (!**p)
        return 0;
    size_t len = strcspn(*p, ",");
    memcpy(entry, *p, len);
    entry[len] = '\0';
    *p += len + ((*p)[len] == ',');
    return 1;
}

/* A comma-separated list into dst: no empty entries; a non-numeric entry at
 * most max_name characters (0: no limit). */
static int parse_list(char *dst, size_t dstlen, const char *v, size_t max_name, char *err,
                      size_t errlen)
{
    if (strlen(v) >= dstlen) {
        snprintf(err, errlen, "list longer than %zu characters", dstlen - 1);
        return -1;
    }
    char entry[512];
    for (const char *p = v; next_entry(&p, entry);) {
        size_t len = strlen(entry);
        if (len == 0) {
            snprintf(err, errlen, "empty entry in '%s'", v);
            return -1;
        }
        if (max_name && len > max_name && !is_all_digits(entry, len)) {
            snprintf(err, errlen, "'%s' is longer than a thread name can be", entry);
            return -1;
        }
    }
    snprintf(dst, dstlen, "%s", v);
    return 0;
}

/* In the order of enum amp_threads_mode. */
static const char *const thread_modes[] = {"all", "none", "main", NULL};

static int parse_threads(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    int i = amp_parse_word(v, thread_modes);
    if (i >= 0) {
        cfg->threads = (enum amp_threads_mode)i;
        return 0;
    }
    /* Thread names are at most 15 characters (TASK_COMM_LEN). */
    if (parse_list(cfg->threads_list, sizeof cfg->threads_list, v, 15, err, errlen) < 0)
        return -1;
    cfg->threads = AMP_THREADS_LIST;
    return 0;
}

static int parse_callers(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    return parse_list(cfg->callers, sizeof cfg->callers, v, 0, err, errlen);
}

static int parse_report(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    int on = strcasecmp(v, "stderr") == 0;
    if (on || amp_parse_bool(v, &on) == 0) {
        cfg->report = on ? AMP_REPORT_STDERR : AMP_REPORT_OFF;
        return 0;
    }
    /* A path has a '/' (./report.txt): a bare unknown word (stdout, -1) is a
     * mistake, not a file name. */
    if (!strchr(v, '/')) {
        snprintf(err, errlen, "'%s' is not 0, 1, stderr or a path (a path has a '/': ./%s)", v, v);
        return -1;
    }
    if (strlen(v) >= sizeof cfg->report_path) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    snprintf(cfg->report_path, sizeof cfg->report_path, "%s", v);
    cfg->report = AMP_REPORT_FILE;
    return 0;
}

/* In the order of enum amp_log_level. */
static const char *const log_levels[] = {"off", "error", "warn", "info", "debug", NULL};

static int parse_log(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    int i = amp_parse_word(v, log_levels);
    if (i >= 0) {
        cfg->log_level = (enum amp_log_level)i;
        amp_log_set_level(cfg->log_level);
        return 0;
    }
    snprintf(err, errlen, "'%s' is not off, error, warn, info or debug", v);
    return -1;
}

/* The file is opened at the first line logged (amp_log_set_path), not now:
 * a process that logs nothing creates nothing. */
static int parse_log_file(struct amp_config *cfg, const char *v, char *err, size_t errlen)
{
    if (strcasecmp(v, "stderr") == 0)
        return 0;
    if (strlen(v) >= sizeof cfg->log_file) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    /* What opening it would meet, judged now (so AMPSHIM_STRICT sees it)
     * without creating anything. */
    struct stat st;
    if (lstat(v, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            snprintf(err, errlen, "'%s' is a symbolic link (ampshim follows none)", v);
            return -1;
        }
        if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
            snprintf(err, errlen, "'%s' is not a regular file", v);
            return -1;
        }
    } else {
        char dir[sizeof cfg->log_file];
        snprintf(dir, sizeof dir, "%s", v);
        char *slash = strrchr(dir, '/');
        if (slash)
            slash == dir ? (void)(slash[1] = '\0') : (void)(*slash = '\0');
        if (access(slash ? dir : ".", W_OK) != 0) {
            snprintf(err, errlen, "cannot open '%s': %s", v, strerror(errno));
            return -1;
        }
    }
    snprintf(cfg->log_file, sizeof cfg->log_file, "%s", v);
    amp_log_set_path(v);
    return 0;
}

/* Each value as the text its parser reads back (struct amp_setting's text:
 * the defaults' texts are derived from these, and a warning names the value
 * kept). */
#define TEXT(name, ...)                                                                            \
    static void name(const struct amp_config *c, char *o, size_t n)                                \
    {                                                                                              \
        snprintf(o, n, __VA_ARGS__);                                                               \
    }
TEXT(log_text, "%s", log_levels[c->log_level])
TEXT(log_file_text, "%s", c->log_file[0] ? c->log_file : "stderr")
TEXT(strict_text, "%d", c->strict != 0)
TEXT(enable_text, "%d", c->enable != 0)
TEXT(control_text, "%d", c->control != 0)
TEXT(cuda_fp16_text, "%s", c->cuda_fp16_explicit ? "explicit" : "fast")
TEXT(threads_text, "%s",
     c->threads == AMP_THREADS_LIST ? c->threads_list : thread_modes[c->threads])
TEXT(report_text, "%s",
     c->report == AMP_REPORT_FILE     ? c->report_path
     : c->report == AMP_REPORT_STDERR ? "1"
                                      : "0")
TEXT(pool_keep_text, "%uM", (unsigned)c->cuda_pool_keep_mib)
TEXT(tolerance_text, "%g", c->audit_tolerance)
TEXT(spread_tolerance_text, isinf(c->audit_spread_tolerance) ? "off" : "%g",
     c->audit_spread_tolerance)
TEXT(spread_loss_text, c->spread_loss == 0.0 ? "off" : "%g", c->spread_loss)
TEXT(min_speedup_text, "%g", c->audit_min_speedup)
#undef TEXT

static void publish_tolerance(struct amp_ctl_block *b, const struct amp_config *cfg)
{
    atomic_store(&b->audit_tolerance, cfg->audit_tolerance);
}

static void publish_spread_tolerance(struct amp_ctl_block *b, const struct amp_config *cfg)
{
    atomic_store(&b->audit_spread_tolerance, cfg->audit_spread_tolerance);
}

#define CFG(field) .cfg_field = offsetof(struct amp_config, field)
#define BLOCK(field) .block_field = offsetof(struct amp_ctl_block, field)

/* Every setting (runtime/settings.h). Order matters: the environment is
 * read in this order, the log settings first so later warnings go where the
 * user asked. */
const struct amp_setting amp_settings[] = {
    {.env = "AMPSHIM_LOG",
     .values = "off, error, warn, info, debug",
     .parse_env = parse_log,
     CFG(log_level),
     .text = log_text},
    {.env = "AMPSHIM_LOG_FILE",
     .values = "stderr or a path",
     .parse_env = parse_log_file,
     .text = log_file_text},
    {.env = "AMPSHIM_STRICT",
     .values = "a boolean",
     .parse_env = parse_strict,
     .text = strict_text},
    {.env = "AMPSHIM_ENABLE",
     .values = "a boolean",
     .parse_env = parse_enable,
     .text = enable_text},
    {.ctl = "opt.enabled",
     .values = "1, 0 or default (follow AMPSHIM_THREADS)",
     .default_text = "default",
     .live = 1,
     BLOCK(enabled),
     .limit = 3,
     .parse = want_value,
     .names = want_names,
     .type = AMP_CTL_T_BOOL},
    {.env = "AMPSHIM_DTYPE",
     .ctl = "opt.dtype",
     .values = "bf16, fp16, tf32 (every device)",
     .live = 1,
     .per_device = {"opt.cpu_dtype", "opt.cuda_dtype"}},
    {.env = "AMPSHIM_CPU_DTYPE",
     .ctl = "opt.cpu_dtype",
     .values = "bf16, fp16, tf32 (wins over AMPSHIM_DTYPE)",
     .live = 1,
     CFG(dtype[AMP_DEVICE_CPU]),
     BLOCK(dtype[AMP_DEVICE_CPU]),
     .limit = AMP_DTYPE_COUNT,
     .parse = dtype_value,
     .names = amp_dtype_names},
    {.env = "AMPSHIM_CUDA_DTYPE",
     .ctl = "opt.cuda_dtype",
     .values = "bf16, fp16, tf32 (wins over AMPSHIM_DTYPE)",
     .live = 1,
     CFG(dtype[AMP_DEVICE_CUDA]),
     BLOCK(dtype[AMP_DEVICE_CUDA]),
     .limit = AMP_DTYPE_COUNT,
     .parse = dtype_value,
     .names = amp_dtype_names},
    {.env = "AMPSHIM_POLICY_FILE",
     .values = "a file of policy entries",
     .default_text = "no overrides from a file",
     .parse_env = parse_policy_file},
    {.env = "AMPSHIM_POLICY",
     .values = "policy entries (policy.<device>.<op> live)",
     .default_text = "no overrides from AMPSHIM_POLICY",
     .parse_env = parse_policy},
    {.env = "AMPSHIM_OUTPUT",
     .ctl = "opt.output",
     .values = "keep, round",
     .live = 1,
     CFG(output_round),
     BLOCK(output_round),
     .limit = 2,
     .parse = output_value,
     .names = amp_output_names},
    {.env = "AMPSHIM_CPU_KERNEL",
     .ctl = "opt.cpu_kernel",
     .values = "auto, native, emulate",
     .live = 1,
     CFG(cpu_kernel),
     BLOCK(cpu_kernel),
     .limit = AMP_CPU_KERNEL_COUNT,
     .parse = cpu_kernel_value,
     .names = amp_cpu_kernel_names},
    {.env = "AMPSHIM_LOWER_MIN",
     .ctl = "opt.lower_min",
     .values = "auto, or multiply-adds (a number or a cube: 96^3), every device",
     .live = 1,
     .per_device = {"opt.cpu_lower_min", "opt.cuda_lower_min"}},
    {.env = "AMPSHIM_CPU_LOWER_MIN",
     .ctl = "opt.cpu_lower_min",
     .values = "auto, or multiply-adds (0: every size; wins over AMPSHIM_LOWER_MIN)",
     .live = 1,
     CFG(lower_min[AMP_DEVICE_CPU]),
     BLOCK(lower_min[AMP_DEVICE_CPU]),
     .limit = (uint64_t)AMP_LOWER_MIN_AUTO + 1,
     .parse = amp_parse_lower_min,
     .word = "auto"},
    {.env = "AMPSHIM_CUDA_LOWER_MIN",
     .ctl = "opt.cuda_lower_min",
     .values = "auto, or multiply-adds (0: every size; wins over AMPSHIM_LOWER_MIN)",
     .live = 1,
     CFG(lower_min[AMP_DEVICE_CUDA]),
     BLOCK(lower_min[AMP_DEVICE_CUDA]),
     .limit = (uint64_t)AMP_LOWER_MIN_AUTO + 1,
     .parse = amp_parse_lower_min,
     .word = "auto"},
    {.env = "AMPSHIM_CUDA_POOL_KEEP",
     .values = "MiB of freed scratch the shim's device pool keeps (a number, or 512M, 2G)",
     CFG(cuda_pool_keep_mib),
     .limit = (uint64_t)AMP_MIB_MAX + 1,
     .parse = amp_parse_mib,
     .text = pool_keep_text},
    {.env = "AMPSHIM_CUDA_TIMING",
     .ctl = "opt.cuda_timing",
     .values = "off, events, cupti",
     .live = 1,
     CFG(cuda_timing),
     BLOCK(cuda_timing),
     .limit = AMP_CUDA_TIMING_COUNT,
     .parse = cuda_timing_value,
     .names = amp_cuda_timing_names},
    {.env = "AMPSHIM_CUDA_TIMING_SAMPLE",
     .ctl = "opt.cuda_timing_sample",
     .values = "a whole number from 1 to 2147483648",
     .live = 1,
     CFG(cuda_timing_sample),
     BLOCK(cuda_timing_sample),
     .first = 1,
     .limit = (1u << 31) + 1,
     .parse = audit_sample_value,
     .type = AMP_CTL_T_U64},
    {.env = "AMPSHIM_CPU_TIMING_SAMPLE",
     .ctl = "opt.cpu_timing_sample",
     .values = "a whole number from 0 (off: no timing, no pay checks) to 2147483648",
     .live = 1,
     CFG(cpu_timing_sample),
     BLOCK(cpu_timing_sample),
     .first = 0,
     .limit = (1u << 31) + 1,
     .parse = timing_sample_value,
     .type = AMP_CTL_T_U64},
    {.env = "AMPSHIM_CUDA_FP16",
     .values = "fast, explicit",
     .parse_env = parse_cuda_fp16,
     .text = cuda_fp16_text},
    {.env = "AMPSHIM_THREADS",
     .values = "all, none, main, or tids and name globs",
     .parse_env = parse_threads,
     .text = threads_text},
    {.env = "AMPSHIM_REPORT",
     .values = "0, 1, stderr or a path",
     .parse_env = parse_report,
     .text = report_text},
    {.env = "AMPSHIM_CONTROL",
     .values = "a boolean",
     .parse_env = parse_control,
     .text = control_text},
    {.env = "AMPSHIM_CALLERS",
     .values = "object basename or symbol globs",
     .default_text = "all callers",
     .parse_env = parse_callers},
    {.env = "AMPSHIM_AUDIT",
     .ctl = "opt.audit",
     .values = "0 or off, 1 or on, follow, auto",
     .live = 1,
     CFG(audit),
     BLOCK(audit),
     .limit = AMP_AUDIT_MODE_COUNT,
     .parse = audit_value,
     .names = amp_audit_mode_names},
    {.env = "AMPSHIM_AUDIT_SAMPLE",
     .ctl = "opt.audit_sample",
     .values = "a whole number from 1 to 2147483648",
     .live = 1,
     CFG(audit_sample),
     BLOCK(audit_sample),
     .first = 1,
     .limit = (1u << 31) + 1,
     .parse = audit_sample_value,
     .type = AMP_CTL_T_U64},
    {.env = "AMPSHIM_AUDIT_PROBATION",
     .ctl = "opt.audit_probation",
     .values = "a whole number from 1 to 16383",
     .live = 1,
     CFG(audit_probation),
     BLOCK(audit_probation),
     .first = 1,
     .limit = AMP_AUDIT_PROBATION_MAX + 1,
     .parse = audit_probation_value,
     .type = AMP_CTL_T_U64},
    {.env = "AMPSHIM_AUDIT_RECHECK",
     .ctl = "opt.audit_recheck",
     .values = "a whole number from 1 to 2147483648",
     .live = 1,
     CFG(audit_recheck),
     BLOCK(audit_recheck),
     .first = 1,
     .limit = (1u << 31) + 1,
     .parse = audit_sample_value,
     .type = AMP_CTL_T_U64},
    {.env = "AMPSHIM_AUDIT_TOLERANCE",
     .values = "a positive number",
     .parse_env = parse_audit_tolerance,
     .publish = publish_tolerance,
     .text = tolerance_text},
    {.env = "AMPSHIM_AUDIT_SPREAD_TOLERANCE",
     .values = "a positive number, or off",
     .parse_env = parse_audit_spread_tolerance,
     .publish = publish_spread_tolerance,
     .text = spread_tolerance_text},
    {.env = "AMPSHIM_SPREAD_LOSS",
     .values = "off, or a number from 0 (off)",
     .parse_env = parse_spread_loss,
     .text = spread_loss_text},
    {.env = "AMPSHIM_AUDIT_MIN_SPEEDUP",
     .values = "a number from 0 to 1000",
     .parse_env = parse_audit_min_speedup,
     .text = min_speedup_text},
    {.env = "AMPSHIM_AUDIT_POLICY",
     .values = "a path",
     .default_text = "no policy file",
     .parse_env = parse_audit_policy},
};
const size_t amp_setting_count = sizeof amp_settings / sizeof *amp_settings;
_Static_assert(AMP_LOWER_MIN_AUTO == AMP_SETTING_WORD_VALUE, "lower_min's auto is its word");

#undef BLOCK
#undef CFG

const char *amp_config_variable(size_t i, int *opens_file)
{
    for (size_t k = 0; k < amp_setting_count; k++) {
        if (!amp_settings[k].env || i--)
            continue;
        if (opens_file)
            *opens_file = amp_settings[k].parse_env == parse_log_file;
        return amp_settings[k].env;
    }
    return NULL;
}

int amp_config_load(struct amp_config *cfg, amp_getenv_fn getenv_fn)
{
    amp_config_defaults(cfg);
    /* Disabled means silent: with AMPSHIM_ENABLE off nothing is printed (and
     * no log file opened) unless AMPSHIM_STRICT=1 or an explicit AMPSHIM_LOG
     * asks for it. */
    const char *enable = getenv_fn("AMPSHIM_ENABLE"), *log = getenv_fn("AMPSHIM_LOG"),
               *strict = getenv_fn("AMPSHIM_STRICT");
    int on = 1, strict_on = 0;
    int silent = enable && *enable && amp_parse_bool(enable, &on) == 0 && !on && !(log && *log) &&
                 !(strict && *strict && amp_parse_bool(strict, &strict_on) == 0 && strict_on);
    if (silent)
        cfg->log_level = AMP_LOG_OFF;
    amp_log_set_level(cfg->log_level);
    int errors = 0;
    for (size_t i = 0; i < amp_setting_count; i++) {
        const struct amp_setting *s = &amp_settings[i];
        const char *value = s->env ? getenv_fn(s->env) : NULL;
        if (!value || !*value || (silent && s->parse_env == parse_log_file))
            continue;
        char err[512];
        int rc = amp_setting_parse_env(s, cfg, value, err, sizeof err);
        if (rc < 0) {
            char kept[64];
            amp_setting_text(s, cfg, kept, sizeof kept);
            amp_log(AMP_LOG_WARN, "%s: %s; using %s", s->env, err, kept);
            errors++;
        } else {
            errors += rc;
        }
    }
    const char *tf32 = getenv_fn("NVIDIA_TF32_OVERRIDE");
    if (tf32 && strcmp(tf32, "0") == 0)
        cfg->cuda_tf32_allowed = 0;
    return errors;
}

int amp_config_selects_caller(const struct amp_config *cfg, const char *object, const char *symbol)
{
    if (!cfg->callers[0])
        return 1;
    const char *base = object ? strrchr(object, '/') : NULL;
    base = base ? base + 1 : object;
    char entry[sizeof cfg->callers];
    for (const char *p = cfg->callers; next_entry(&p, entry);) {
        if ((base && fnmatch(entry, base, 0) == 0) || (symbol && fnmatch(entry, symbol, 0) == 0))
            return 1;
    }
    return 0;
}

int amp_config_selects_thread(const struct amp_config *cfg, long tid, long pid, const char *name)
{
    switch (cfg->threads) {
    case AMP_THREADS_ALL:
        return 1;
    case AMP_THREADS_NONE:
        return 0;
    case AMP_THREADS_MAIN:
        return tid == pid;
    case AMP_THREADS_LIST:
        break;
    }
    char entry[sizeof cfg->threads_list];
    for (const char *p = cfg->threads_list; next_entry(&p, entry);) {
        if (is_all_digits(entry, strlen(entry))) {
            if (strtol(entry, NULL, 10) == tid)
                return 1;
        } else if (strcmp(entry, "main") == 0) {
            if (tid == pid)
                return 1;
        } else if (name && fnmatch(entry, name, 0) == 0) {
            return 1;
        }
    }
    return 0;
}
