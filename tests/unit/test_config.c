/* Every AMPSHIM_* variable with good and bad values: good values land in the
 * configuration; a bad one logs exactly one "ampshim: VAR: ...; using ..."
 * line and keeps the default; AMPSHIM_THREADS selects threads as documented. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/config.h"
#include "runtime/parse.h"
#include "runtime/settings.h"
#include "tests/check.h"


/* A fake environment: NAME=VALUE strings. */
static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
    size_t len = strlen(name);
    for (const char *const *e = fake_env; e && *e; e++)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    return NULL;
}

/* Loads a configuration from the given variables; returns the log text. */
static char log_text[8192];
static int load(struct amp_config *cfg, const char *const *env)
{
    fake_env = env;
    memset(log_text, 0, sizeof log_text); /* fmemopen's "w" does not clear it */
    FILE *mem = fmemopen(log_text, sizeof log_text, "w");
    setvbuf(mem, NULL, _IONBF, 0);
    amp_log_set_stream(mem);
    int errors = amp_config_load(cfg, fake_getenv);
    fclose(mem);
    amp_log_set_stream(NULL);
    return errors;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* One bad value: one line naming the variable, the default kept. */
static void expect_bad(const char *assignment, const char *message)
{
    struct amp_config cfg, def;
    amp_config_defaults(&def);
    const char *env[] = {assignment, NULL};
    int errors = load(&cfg, env);
    char var[64];
    snprintf(var, sizeof var, "ampshim: %.*s: ", (int)strcspn(assignment, "="), assignment);
    CHECK(errors == 1, "%s: %d errors", assignment, errors);
    CHECK(count_lines(log_text) == 1, "%s: %d log lines: %s", assignment, count_lines(log_text),
          log_text);
    CHECK(strncmp(log_text, var, strlen(var)) == 0, "%s: line starts '%.60s'", assignment,
          log_text);
    CHECK(strstr(log_text, message) != NULL, "%s: '%s' not in '%s'", assignment, message, log_text);
    CHECK(strstr(log_text, "; using ") != NULL, "%s: says what it uses instead", assignment);
    CHECK(memcmp(&cfg, &def, sizeof cfg) == 0, "%s: configuration changed", assignment);
}

/* A policy list: one line per bad entry ("...; entry ignored"), and the
 * good entries of the same list applied. */
static void expect_bad_entries(const char *assignment, int n_bad, const char *message)
{
    struct amp_config cfg, with_good;
    char both[512];
    snprintf(both, sizeof both, "%s,cpu:addmm=fp32", assignment);
    const char *env[] = {both, NULL};
    int errors = load(&cfg, env);
    CHECK(errors == n_bad, "%s: %d errors, want %d", both, errors, n_bad);
    CHECK(count_lines(log_text) == n_bad, "%s: %d log lines: %s", both, count_lines(log_text),
          log_text);
    CHECK(strstr(log_text, message) != NULL, "%s: '%s' not in '%s'", both, message, log_text);
    CHECK(strstr(log_text, "; entry ignored") != NULL, "%s: says the entry is ignored", both);
    const char *good[] = {"AMPSHIM_POLICY=cpu:addmm=fp32", NULL};
    load(&with_good, good);
    CHECK(memcmp(&cfg.policy, &with_good.policy, sizeof cfg.policy) == 0,
          "%s: the good entry did not apply alone", both);
}

static void good_values(void)
{
    struct amp_config cfg;
    const char *none[] = {NULL};
    CHECK(load(&cfg, none) == 0 && log_text[0] == '\0', "no variables, no output");
    CHECK(cfg.enable == 1 && cfg.dtype[AMP_DEVICE_CPU] == AMP_DTYPE_BF16 &&
              cfg.dtype[AMP_DEVICE_CUDA] == AMP_DTYPE_FP16 && !cfg.output_round &&
              cfg.threads == AMP_THREADS_ALL && cfg.report == AMP_REPORT_OFF &&
              cfg.log_level == AMP_LOG_WARN && !cfg.strict && cfg.cuda_tf32_allowed,
          "defaults");

    static const char *const bools[][2] = {{"1", "1"},   {"0", "0"},  {"true", "1"}, {"False", "0"},
                                           {"YES", "1"}, {"no", "0"}, {"on", "1"},   {"off", "0"}};
    for (size_t i = 0; i < sizeof bools / sizeof *bools; i++) {
        char e[64], s[64];
        snprintf(e, sizeof e, "AMPSHIM_ENABLE=%s", bools[i][0]);
        snprintf(s, sizeof s, "AMPSHIM_STRICT=%s", bools[i][0]);
        const char *env[] = {e, s, NULL};
        CHECK(load(&cfg, env) == 0, "%s", e);
        CHECK(cfg.enable == atoi(bools[i][1]) && cfg.strict == atoi(bools[i][1]), "%s", e);
    }

    CHECK(cfg.spread_loss == 0x1p-6, "the spread check is on at 1/64 by default");
    const char *sp[] = {"AMPSHIM_SPREAD_LOSS=0.05", NULL};
    CHECK(load(&cfg, sp) == 0 && cfg.spread_loss == 0.05, "AMPSHIM_SPREAD_LOSS=0.05");
    const char *sp_off[] = {"AMPSHIM_SPREAD_LOSS=off", NULL};
    CHECK(load(&cfg, sp_off) == 0 && cfg.spread_loss == 0, "AMPSHIM_SPREAD_LOSS=off");
    const char *sp_zero[] = {"AMPSHIM_SPREAD_LOSS=0", NULL};
    CHECK(load(&cfg, sp_zero) == 0 && cfg.spread_loss == 0, "AMPSHIM_SPREAD_LOSS=0");

    const char *d1[] = {"AMPSHIM_DTYPE=fp16", NULL};
    load(&cfg, d1);
    CHECK(cfg.dtype[AMP_DEVICE_CPU] == AMP_DTYPE_FP16 &&
              cfg.dtype[AMP_DEVICE_CUDA] == AMP_DTYPE_FP16,
          "AMPSHIM_DTYPE sets both devices");
    const char *d2[] = {"AMPSHIM_DTYPE=tf32", "AMPSHIM_CPU_DTYPE=bfloat16", NULL};
    load(&cfg, d2);
    CHECK(cfg.dtype[AMP_DEVICE_CPU] == AMP_DTYPE_BF16 &&
              cfg.dtype[AMP_DEVICE_CUDA] == AMP_DTYPE_TF32,
          "AMPSHIM_CPU_DTYPE beats AMPSHIM_DTYPE");
    /* The size rule: auto by default, a number or a cube, per device. */
    CHECK(load(&cfg, none) == 0 && cfg.lower_min[AMP_DEVICE_CPU] == AMP_LOWER_MIN_AUTO &&
              cfg.lower_min[AMP_DEVICE_CUDA] == AMP_LOWER_MIN_AUTO,
          "AMPSHIM_LOWER_MIN defaults to auto on both devices");
    const char *m1[] = {"AMPSHIM_LOWER_MIN=96^3", "AMPSHIM_CUDA_LOWER_MIN=0", NULL};
    CHECK(load(&cfg, m1) == 0 && cfg.lower_min[AMP_DEVICE_CPU] == 884736 &&
              cfg.lower_min[AMP_DEVICE_CUDA] == 0,
          "AMPSHIM_LOWER_MIN=96^3 sets the CPU's, AMPSHIM_CUDA_LOWER_MIN beats it on CUDA");
    const char *m2[] = {"AMPSHIM_CPU_LOWER_MIN=4294967294", "AMPSHIM_LOWER_MIN=Auto", NULL};
    CHECK(load(&cfg, m2) == 0 && cfg.lower_min[AMP_DEVICE_CPU] == 4294967294u &&
              cfg.lower_min[AMP_DEVICE_CUDA] == AMP_LOWER_MIN_AUTO,
          "the largest number; auto in any case");
    const char *d3[] = {"AMPSHIM_CUDA_DTYPE=half", NULL};
    load(&cfg, d3);
    CHECK(cfg.dtype[AMP_DEVICE_CPU] == AMP_DTYPE_BF16 &&
              cfg.dtype[AMP_DEVICE_CUDA] == AMP_DTYPE_FP16,
          "AMPSHIM_CUDA_DTYPE alone");

    const char *p1[] = {"AMPSHIM_POLICY=cpu:mm=fp32", NULL};
    load(&cfg, p1);
    CHECK(cfg.policy.op[AMP_DEVICE_CPU][amp_op_from_name("mm")] == AMP_CAT_FP32, "AMPSHIM_POLICY");

    char path[] = "/tmp/ampshim_test_policy_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("# test file\ncpu:mm=passthrough\ncuda:mm = fp32\n", f);
    fclose(f);
    char pf[256];
    snprintf(pf, sizeof pf, "AMPSHIM_POLICY_FILE=%s", path);
    const char *p2[] = {pf, "AMPSHIM_POLICY=cuda:mm=promote", NULL};
    load(&cfg, p2);
    CHECK(cfg.policy.op[AMP_DEVICE_CPU][amp_op_from_name("mm")] == AMP_CAT_PASSTHROUGH,
          "AMPSHIM_POLICY_FILE");
    CHECK(cfg.policy.op[AMP_DEVICE_CUDA][amp_op_from_name("mm")] == AMP_CAT_PROMOTE,
          "AMPSHIM_POLICY applies after the file");
    remove(path);

    const char *o[] = {"AMPSHIM_OUTPUT=round", NULL};
    load(&cfg, o);
    CHECK(cfg.output_round == 1, "AMPSHIM_OUTPUT=round");

    CHECK(cfg.cpu_kernel == AMP_CPU_KERNEL_AUTO, "AMPSHIM_CPU_KERNEL defaults to auto");
    const char *k1[] = {"AMPSHIM_CPU_KERNEL=Emulate", NULL};
    load(&cfg, k1);
    CHECK(cfg.cpu_kernel == AMP_CPU_KERNEL_EMULATE, "AMPSHIM_CPU_KERNEL=Emulate (any case)");
    const char *k2[] = {"AMPSHIM_CPU_KERNEL=native", NULL};
    load(&cfg, k2);
    CHECK(cfg.cpu_kernel == AMP_CPU_KERNEL_NATIVE, "AMPSHIM_CPU_KERNEL=native");
    const char *k3[] = {"AMPSHIM_CPU_KERNEL=nativ", NULL};
    CHECK(load(&cfg, k3) == 1 && cfg.cpu_kernel == AMP_CPU_KERNEL_AUTO,
          "AMPSHIM_CPU_KERNEL=nativ: one error, auto kept");

    const char *r1[] = {"AMPSHIM_REPORT=1", NULL};
    load(&cfg, r1);
    CHECK(cfg.report == AMP_REPORT_STDERR, "AMPSHIM_REPORT=1");
    const char *r2[] = {"AMPSHIM_REPORT=/tmp/report.%p", NULL};
    load(&cfg, r2);
    CHECK(cfg.report == AMP_REPORT_FILE && strcmp(cfg.report_path, "/tmp/report.%p") == 0,
          "AMPSHIM_REPORT=path");
    const char *r3[] = {"AMPSHIM_REPORT=0", NULL};
    load(&cfg, r3);
    CHECK(cfg.report == AMP_REPORT_OFF, "AMPSHIM_REPORT=0");

    const char *l1[] = {"AMPSHIM_LOG=debug", NULL};
    load(&cfg, l1);
    CHECK(cfg.log_level == AMP_LOG_DEBUG, "AMPSHIM_LOG=debug");
    const char *l2[] = {"AMPSHIM_LOG=off", "AMPSHIM_DTYPE=bogus", NULL};
    CHECK(load(&cfg, l2) == 1 && log_text[0] == '\0', "AMPSHIM_LOG=off silences warnings");

    char logpath[] = "/tmp/ampshim_test_log_XXXXXX";
    close(mkstemp(logpath));
    char lf[256];
    snprintf(lf, sizeof lf, "AMPSHIM_LOG_FILE=%s", logpath);
    const char *l3[] = {lf, "AMPSHIM_OUTPUT=bogus", NULL};
    load(&cfg, l3);
    FILE *lg = fopen(logpath, "r");
    char line[256] = "";
    if (lg) {
        if (!fgets(line, sizeof line, lg))
            line[0] = '\0';
        fclose(lg);
    }
    CHECK(strncmp(line, "ampshim: AMPSHIM_OUTPUT:", 24) == 0 && log_text[0] == '\0',
          "AMPSHIM_LOG_FILE receives the warning: '%s'", line);
    remove(logpath);

    const char *t1[] = {"NVIDIA_TF32_OVERRIDE=0", NULL};
    load(&cfg, t1);
    CHECK(cfg.cuda_tf32_allowed == 0, "NVIDIA_TF32_OVERRIDE=0");
    const char *empty[] = {"AMPSHIM_DTYPE=", NULL};
    CHECK(load(&cfg, empty) == 0 && log_text[0] == '\0', "an empty variable is unset");
}

static void bad_values(void)
{
    expect_bad("AMPSHIM_ENABLE=2", "'2' is not one of");
    expect_bad("AMPSHIM_ENABLE=1x", "'1x' is not one of");
    expect_bad("AMPSHIM_ENABLE=yes please", "is not one of");
    expect_bad("AMPSHIM_STRICT=sure", "is not one of");
    expect_bad("AMPSHIM_DTYPE=fp8", "unknown dtype 'fp8'");
    expect_bad("AMPSHIM_LOWER_MIN=4294967295", "is not auto, a whole number");
    expect_bad("AMPSHIM_LOWER_MIN=-1", "is not auto, a whole number");
    expect_bad("AMPSHIM_CPU_LOWER_MIN=1626^3", "is not auto, a whole number");
    expect_bad("AMPSHIM_CUDA_LOWER_MIN=96^2", "is not auto, a whole number");
    expect_bad("AMPSHIM_LOWER_MIN=1e6", "is not auto, a whole number");
    expect_bad("AMPSHIM_CPU_DTYPE=float32", "unknown dtype");
    expect_bad("AMPSHIM_CUDA_DTYPE=bf16 ", "unknown dtype");
    expect_bad_entries("AMPSHIM_POLICY=mm", 1, "not NAME=CATEGORY");
    expect_bad_entries("AMPSHIM_POLICY=softmax=quick", 1, "unknown category 'quick'");
    expect_bad_entries("AMPSHIM_POLICY=zz*=lower,mm=quick", 2, "'zz*' matches no op or symbol");
    expect_bad("AMPSHIM_POLICY_FILE=/nonexistent/file", "cannot open");
    expect_bad("AMPSHIM_POLICY_FILE=/", "'/' is not a regular file");
    expect_bad("AMPSHIM_POLICY_FILE=/dev/zero", "'/dev/zero' is not a regular file");
    expect_bad("AMPSHIM_REPORT=stdout", "'stdout' is not 0, 1, stderr or a path");
    expect_bad("AMPSHIM_REPORT=-1", "is not 0, 1, stderr or a path");
    expect_bad("AMPSHIM_LOG_FILE=/", "'/' is not a regular file");
    expect_bad("AMPSHIM_OUTPUT=rounded", "not keep or round");
    expect_bad("AMPSHIM_SPREAD_LOSS=-0.1", "'-0.1' is not off or a number from 0 (off)");
    expect_bad("AMPSHIM_SPREAD_LOSS=no", "'no' is not off or a number");
    expect_bad("AMPSHIM_SPREAD_LOSS=1/64", "'1/64' is not off or a number");
    expect_bad("AMPSHIM_THREADS=main,,x", "empty entry");
    expect_bad("AMPSHIM_THREADS=a-name-far-too-long-for-a-thread", "longer than a thread name");
    expect_bad("AMPSHIM_LOG=verbose", "not off, error, warn, info or debug");
    expect_bad("AMPSHIM_LOG_FILE=/nonexistent/dir/log", "cannot open");
    /* Found by fuzzing: a value with a newline must not make two lines. */
    expect_bad("AMPSHIM_LOG=f\nampshim: forged", "'f?ampshim: forged' is not off");
    expect_bad("AMPSHIM_DTYPE=\x1b[31mred", "unknown dtype '?[31mred'");
}

static void thread_selection(void)
{
    struct amp_config cfg;
    const char *all[] = {NULL};
    load(&cfg, all);
    CHECK(amp_config_selects_thread(&cfg, 12, 10, "worker"), "all selects every thread");
    const char *none[] = {"AMPSHIM_THREADS=none", NULL};
    load(&cfg, none);
    CHECK(!amp_config_selects_thread(&cfg, 10, 10, "main"), "none selects nothing");
    const char *main_only[] = {"AMPSHIM_THREADS=main", NULL};
    load(&cfg, main_only);
    CHECK(amp_config_selects_thread(&cfg, 10, 10, "prog"), "main selects the main thread");
    CHECK(!amp_config_selects_thread(&cfg, 11, 10, "prog"), "main skips other threads");
    const char *list[] = {"AMPSHIM_THREADS=4242,worker-*,main", NULL};
    CHECK(load(&cfg, list) == 0, "list parses");
    CHECK(amp_config_selects_thread(&cfg, 4242, 10, "x"), "tid entry");
    CHECK(amp_config_selects_thread(&cfg, 77, 10, "worker-3"), "glob entry");
    CHECK(amp_config_selects_thread(&cfg, 10, 10, "prog"), "main entry");
    CHECK(!amp_config_selects_thread(&cfg, 78, 10, "loader"), "unlisted thread");
}

/* AMPSHIM_AUDIT_PROBATION's range at its limits: 1 and 16383 taken, 0 and
 * 16384 refused (four times the largest fits the 16-bit clean streak). */
static void probation_limits(void)
{
    struct amp_config cfg;
    const char *lo[] = {"AMPSHIM_AUDIT_PROBATION=1", NULL};
    CHECK(load(&cfg, lo) == 0 && cfg.audit_probation == 1, "AMPSHIM_AUDIT_PROBATION=1 taken");
    const char *hi[] = {"AMPSHIM_AUDIT_PROBATION=16383", NULL};
    CHECK(load(&cfg, hi) == 0 && cfg.audit_probation == 16383,
          "AMPSHIM_AUDIT_PROBATION=16383 taken");
    expect_bad("AMPSHIM_AUDIT_PROBATION=16384", "16383");
    expect_bad("AMPSHIM_AUDIT_PROBATION=0", "16383");
    expect_bad("AMPSHIM_AUDIT_PROBATION=1073741824", "16383");
    const char *rk[] = {"AMPSHIM_AUDIT_RECHECK=2147483648", NULL};
    CHECK(load(&cfg, rk) == 0 && cfg.audit_recheck == 2147483648u,
          "AMPSHIM_AUDIT_RECHECK=2^31 taken (a 64-bit modulus of the call count)");
    expect_bad("AMPSHIM_AUDIT_RECHECK=2147483649", "2147483648");
}

/* AMPSHIM_ names that are no setting: one line each, naming the nearest;
 * settings and AMPSHIM_TEST_* pass. */
static void unknown_names(void)
{
    char *env[] = {"AMPSHIM_LOWERMIN=0",
                   "AMPSHIM_REPORT=1",
                   "AMPSHIM_TEST_NO_GPU=1",
                   "AMPSHIM_ZZZZZZZZZZZZZZZZZZZZZZZZ=1",
                   "PATH=/bin",
                   NULL};
    memset(log_text, 0, sizeof log_text);
    FILE *mem = fmemopen(log_text, sizeof log_text, "w");
    setvbuf(mem, NULL, _IONBF, 0);
    amp_log_set_stream(mem);
    int n = amp_config_check_names(env);
    fclose(mem);
    amp_log_set_stream(NULL);
    CHECK(n == 2, "two names are no setting (%d)", n);
    CHECK(count_lines(log_text) == 2, "two lines: %s", log_text);
    CHECK(strstr(log_text, "ampshim: AMPSHIM_LOWERMIN: no such setting (did you mean "
                           "AMPSHIM_LOWER_MIN?); ignored\n") != NULL,
          "the nearest named: %s", log_text);
    CHECK(strstr(log_text, "AMPSHIM_ZZZZZZZZZZZZZZZZZZZZZZZZ: no such setting (ampshim(7)") != NULL,
          "nothing near: the man page named: %s", log_text);
}

/* Each default is written once: a setting whose value is a field or has a
 * text handler has no default_text (its default's text is derived), and
 * the text derived is one its own parser reads back to the same defaults,
 * so ampctl settings, the man page and a warning's "using ..." name a value
 * the environment can set. A group (AMPSHIM_DTYPE) is its members'. */
static void defaults_written_once(void)
{
    static struct amp_config defaults, cfg;
    amp_config_defaults(&defaults);
    int derived = 0;
    for (size_t i = 0; i < amp_setting_count; i++) {
        const struct amp_setting *s = &amp_settings[i];
        const char *name = s->env ? s->env : s->ctl;
        int has_value = s->text || s->cfg_field != AMP_SETTING_NO_FIELD || s->per_device[0];
        CHECK(!(has_value && s->default_text),
              "%s: its default is a value, so it has no default_text ('%s')", name,
              s->default_text ? s->default_text : "");
        CHECK(has_value || s->default_text, "%s: a default, as a value or in words", name);
        char text[96];
        amp_setting_default_text(s, text, sizeof text);
        CHECK(text[0] && strcmp(text, "-") != 0, "%s: default text '%s'", name, text);
        if (!has_value || !s->env || s->per_device[0])
            continue;
        char err[256] = "";
        cfg = defaults;
        int rc = amp_setting_parse_env(s, &cfg, text, err, sizeof err);
        CHECK(rc == 0 && memcmp(&cfg, &defaults, sizeof cfg) == 0,
              "%s: its default's text '%s' reads back as the default (%s)", name, text, err);
        derived++;
    }
    CHECK(derived >= 24, "%d settings' default texts derived and read back", derived);
    amp_log_set_level(AMP_LOG_WARN);
}

int main(void)
{
    defaults_written_once();
    probation_limits();
    unknown_names();
    good_values();
    bad_values();
    thread_selection();
    printf("test_config: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
