/* ampctl: run programs under ampshim, and watch and steer running ones
 * through their control blocks (/dev/shm/ampshim.<uid>.<pid>). See ampctl(1).
 * Exit status: 0 success, 1 failure (one line on stderr), 2 usage error. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "blocks.h"
#include "check.h"
#include "render.h"
#include "runtime/accuracy_audit.h"
#include "runtime/config.h"
#include "runtime/parse.h"
#include "runtime/control.h"
#include "runtime/ctl_names.h"

#ifndef AMPSHIM_LIBDIR
#define AMPSHIM_LIBDIR "/usr/local/lib"
#endif

static int json;

static const char usage_text[] = "usage: ampctl [--json] VERB [ARGS]\n"
                                 "  run [--dtype D] [--policy P] [--report] [--] CMD [ARGS...]\n"
                                 "  check [--tolerance X] [--output PATH]... [--policy-out FILE]\n"
                                 "        [--max-runs N] [--] CMD [ARGS...]\n"
                                 "  which\n"
                                 "  ps\n"
                                 "  status PID\n"
                                 "  enable PID [--thread TID|NAME]\n"
                                 "  disable PID [--thread TID|NAME]\n"
                                 "  get PID NAME\n"
                                 "  set PID NAME=VALUE   (NAME: a live setting, opt.*: ampctl "
                                 "settings lists\n"
                                 "                        them; thread.TID.enabled)\n"
                                 "  stats PID\n"
                                 "  audit PID [--policy] [--tolerance X]\n"
                                 "  policy [--device cpu|cuda] [--explain SYMBOL]\n"
                                 "  settings [--man]\n"
                                 "  gc\n"
                                 "  --version\n";

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "ampctl: %s\n", why);
    fputs(usage_text, stderr);
    return 2;
}

static int failure(const char *fmt, const char *a, const char *b)
{
    fputs("ampctl: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 1;
}

/* Opens the block named by argv (a PID), or fails the verb. */
#define WITH_BLOCK(pidtext, writable)                                                              \
    long pid = ampctl_parse_pid(pidtext);                                                          \
    if (pid < 0)                                                                                   \
        return usage("PID must be a process id");                                                  \
    char why[256];                                                                                 \
    struct amp_ctl_block *b = ampctl_open_block(pid, writable, why, sizeof why);                   \
    if (!b)                                                                                        \
        return failure("%s%s", why, "");

static int verb_status(int argc, char **argv)
{
    if (argc != 1)
        return usage("status takes PID");
    WITH_BLOCK(argv[0], 0);
    ampctl_render_status(stdout, b, json);
    ampctl_close_block(b);
    return 0;
}

static void fetch_device_results(struct amp_ctl_block *b, int for_stats);

/* stats asks the process to read its GPU times back where it may write to
 * its block; where it may only read it, it shows what was read back
 * before. */
static int verb_stats(int argc, char **argv)
{
    if (argc != 1)
        return usage("stats takes PID");
    long pid = ampctl_parse_pid(argv[0]);
    if (pid < 0)
        return usage("PID must be a process id");
    char why[256];
    struct amp_ctl_block *b = ampctl_open_block(pid, 1, why, sizeof why);
    if (b)
        fetch_device_results(b, 1);
    else if (!(b = ampctl_open_block(pid, 0, why, sizeof why)))
        return failure("%s%s", why, "");
    ampctl_render_stats(stdout, b, json);
    ampctl_close_block(b);
    return 0;
}

/* A process keeps what it measures on the device (the audit's errors, the
 * GPU time of timed calls) there until asked: ask (audit_request, then the
 * generation), and wait up to two seconds for its next hooked call to read
 * them back. Asked only of a process with audited CUDA sites (audit) or
 * CUDA calls (stats). */
static void fetch_device_results(struct amp_ctl_block *b, int for_stats)
{
    int device = 0;
    uint32_t used = atomic_load(&b->audit_sites);
    for (uint32_t i = 0; i < used && i < AMP_CTL_AUDIT_SITES; i++)
        device |=
            atomic_load(&b->audit_site[i].ready) && b->audit_site[i].device == AMP_DEVICE_CUDA;
    for (int h = 0; for_stats && h < AMP_HOOK_COUNT; h++)
        for (int i = 0; amp_hook_device[h] == AMP_DEVICE_CUDA && i < AMP_CTL_COUNTERS; i++)
            device |= amp_ctl_counter(b, h, i) != 0;
    if (!device)
        return;
    uint32_t request = atomic_fetch_add(&b->audit_request, 1) + 1;
    atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
    for (int i = 0; i < 200 && atomic_load(&b->audit_served) != request; i++)
        usleep(10000);
    if (atomic_load(&b->audit_served) != request)
        fprintf(stderr, "ampctl: the process made no hooked call for 2 s: its device results "
                        "are those read back before\n");
}

/* The accuracy audit of a running process: its call sites by error, or
 * (--policy) the policy it suggests, at the process's tolerance unless
 * --tolerance is given. */
static int verb_audit(int argc, char **argv)
{
    int policy = 0;
    double tolerance = -1;
    const char *pid_text = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--policy") == 0) {
            policy = 1;
        } else if (strcmp(argv[i], "--tolerance") == 0 && i + 1 < argc) {
            char why[128];
            if ((tolerance = amp_parse_audit_tolerance(argv[++i], why, sizeof why)) < 0)
                return usage(why);
        } else if (!pid_text) {
            pid_text = argv[i];
        } else {
            return usage("audit takes PID [--policy] [--tolerance X]");
        }
    }
    if (!pid_text)
        return usage("audit takes PID [--policy] [--tolerance X]");
    WITH_BLOCK(pid_text, 1);
    fetch_device_results(b, 0);
    if (tolerance < 0) {
        tolerance = atomic_load(&b->audit_tolerance);
        if (!(tolerance > 0))
            tolerance = AMP_AUDIT_DEFAULT_TOLERANCE;
    }
    int mode = (int)atomic_load(&b->audit), sites = (int)atomic_load(&b->audit_sites);
    if (policy)
        amp_audit_write_policy(stdout, b, tolerance);
    else
        amp_audit_write_report(stdout, b, tolerance, json);
    ampctl_close_block(b);
    if (!sites && !json && !policy)
        fprintf(stderr, "ampctl: no call site audited yet%s\n",
                mode == AMP_AUDIT_OFF ? " (the audit is off: ampctl set PID opt.audit=1)" : "");
    return 0;
}

static int verb_get(int argc, char **argv)
{
    if (argc != 2)
        return usage("get takes PID NAME");
    WITH_BLOCK(argv[0], 0);
    char value[256];
    enum amp_ctl_type type;
    int rc = amp_ctl_get(b, argv[1], value, sizeof value, &type);
    ampctl_close_block(b);
    if (rc)
        return failure("unknown name '%s'%s", argv[1], "");
    /* The name is the user's, a string value the block's: both escaped. */
    struct amp_emitter e;
    amp_emit_begin(&e, stdout, json);
    amp_emit_object(&e, NULL);
    int quoted =
        type == AMP_CTL_T_STRING || (type == AMP_CTL_T_BOOL && strcmp(value, "default") == 0);
    /* a number or true/false, as amp_ctl_get wrote it */
    amp_emit_value(&e, argv[1], quoted ? AMP_EMIT_S(value) : AMP_EMIT_RAW(value), NULL);
    amp_emit_close(&e);
    amp_emit_text(&e, "%s", value);
    printf("\n");
    return 0;
}

static int verb_set(int argc, char **argv)
{
    if (argc != 2 || !strchr(argv[1], '='))
        return usage("set takes PID NAME=VALUE");
    WITH_BLOCK(argv[0], 1);
    char *eq = strchr(argv[1], '=');
    *eq = '\0';
    char reason[256];
    int rc = amp_ctl_set(b, argv[1], eq + 1, reason, sizeof reason);
    ampctl_close_block(b);
    if (rc)
        return failure("%s%s", reason, "");
    return 0;
}

/* enable/disable a process, or the threads of it named by tid or name glob. */
static int verb_switch(int argc, char **argv, int on)
{
    const char *thread = NULL;
    if (argc == 3 && strcmp(argv[1], "--thread") == 0)
        thread = argv[2];
    else if (argc != 1)
        return usage(on ? "enable takes PID [--thread TID|NAME]"
                        : "disable takes PID [--thread TID|NAME]");
    WITH_BLOCK(argv[0], 1);
    uint32_t want = on ? AMP_CTL_ON : AMP_CTL_OFF;
    int matched = 0;
    if (!thread) {
        atomic_store(&b->enabled, want);
        matched = 1;
    } else {
        long tid = ampctl_parse_pid(thread);
        for (int i = 0; i < AMP_CTL_MAX_THREADS; i++) {
            struct amp_thread *t = &b->threads[i];
            long long slot_tid = (long long)atomic_load(&t->tid);
            char name[sizeof t->name + 1];
            memcpy(name, t->name, sizeof t->name);
            name[sizeof t->name] = '\0';
            if (slot_tid && (tid > 0 ? slot_tid == tid : fnmatch(thread, name, 0) == 0)) {
                atomic_store(&t->want, want);
                matched++;
            }
        }
    }
    if (matched)
        atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
    ampctl_close_block(b);
    if (!matched)
        return failure("process %s has no thread '%s' that has made a BLAS call", argv[0], thread);
    return 0;
}

/* Every process of this user with a block: for ps. */
static int scan_blocks(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return failure("cannot list /proc: %s%s", strerror(errno), "");
    struct amp_emitter out;
    struct amp_emit_table table;
    amp_emit_begin(&out, stdout, json);
    ampctl_render_ps_begin(&out, &table);
    for (struct dirent *e; (e = readdir(d));) {
        long pid = ampctl_parse_pid(e->d_name);
        char proc[300];
        struct stat st;
        snprintf(proc, sizeof proc, "/proc/%s", e->d_name);
        if (pid < 0 || stat(proc, &st) != 0 || st.st_uid != getuid())
            continue;
        char why[256];
        struct amp_ctl_block *b = ampctl_open_block(pid, 0, why, sizeof why);
        if (!b) {
            if (!strstr(why, "no ampshim control block") && !strstr(why, "no such process"))
                amp_emit_text(&out, "%-8ld (%s)\n", pid, why);
            continue;
        }
        char command[4096];
        ampctl_command_line(pid, command, sizeof command);
        ampctl_render_ps_row(&out, &table, b, 1, command);
        ampctl_close_block(b);
    }
    closedir(d);
    amp_emit_end_table(&out, &table);
    if (json)
        printf("\n");
    return 0;
}

static const char *secure_getenv_text(const char *name)
{
    return secure_getenv(name);
}

/* The overrides a program started from this environment would get:
 * AMPSHIM_POLICY and AMPSHIM_POLICY_FILE, read as the shim reads them (bad
 * entries warned about and ignored). */
static const struct amp_policy_overrides *environment_overrides(void)
{
    static struct amp_config cfg;
    static int loaded;
    if (!loaded) {
        amp_config_load(&cfg, secure_getenv_text);
        loaded = 1;
    }
    return &cfg.policy;
}

static void explain_device(int h, enum amp_device dev)
{
    for (int acc = 0; acc < 2; acc++) {
        if (acc && amp_hook_op[h][1] == amp_hook_op[h][0])
            break;
        const char *op = amp_op_names[amp_hook_op[h][acc]];
        int cat = amp_policy_hook_default(dev, h, acc);
        const char *file = amp_policy_source[dev][amp_hook_op[h][acc]];
        if (cat != amp_policy_default[dev][amp_hook_op[h][acc]])
            printf("  %s%s: %s, because its binding in policy/data/bindings_cuda.txt says so "
                   "(op %s is %s; see ampshim(7))\n",
                   dev ? "cuda" : "cpu", acc ? " (beta != 0)" : "", amp_category_names[cat], op,
                   amp_category_names[amp_policy_default[dev][amp_hook_op[h][acc]]]);
        else
            printf("  %s%s: %s, because %s %s%s\n", dev ? "cuda" : "cpu", acc ? " (beta != 0)" : "",
                   amp_category_names[cat], op,
                   file ? "is listed in policy/data/" : "is on no list (unlisted ops pass through)",
                   file ? file : "");
        int effective = amp_policy_category(environment_overrides(), dev, h, acc);
        if (effective != cat)
            printf("    overridden in this environment (AMPSHIM_POLICY, AMPSHIM_POLICY_FILE): %s\n",
                   amp_category_names[effective]);
    }
}

/* The call-site entries (NAME@CALLER=CATEGORY) of this environment that
 * name hook h: they beat the categories above for calls from their callers. */
static void explain_sites(int h, int device)
{
    const struct amp_policy_overrides *ov = environment_overrides();
    int shown = 0;
    for (uint32_t i = 0; i < ov->n_sites; i++) {
        const struct amp_policy_site *s = &ov->site[i];
        int dev = amp_hook_device[h];
        if ((device >= 0 && device != dev) || dev < s->first_dev || dev > s->last_dev)
            continue;
        int names[2] = {amp_policy_name_matches(s->name, h, 0),
                        amp_policy_name_matches(s->name, h, 1)};
        if (!names[0] && !names[1])
            continue;
        if (!shown++)
            printf(
                "  call-site entries in this environment (the last that matches a call wins):\n");
        printf("    %s%s%s@%s%s%s=%s%s\n", s->first_dev == s->last_dev ? amp_device_names[dev] : "",
               s->first_dev == s->last_dev ? ":" : "", s->name, s->either_glob ? "" : s->object,
               s->either_glob ? "" : ":", s->function, amp_category_names[s->category],
               !names[0]   ? " (beta != 0 only)"
               : !names[1] ? " (beta = 0 only)"
                           : "");
    }
}

/* The numerical libraries whose calls run as made (policy/data/libraries.txt). */
static void explain_libraries(void)
{
    printf("  calls from a numerical library run as made, counted internal: from an object that "
           "defines a hooked entry point (a BLAS, a LAPACK, a CUDA library), or from one of "
           "policy/data/libraries.txt, unless a call-site entry names the caller:\n");
    for (int i = 0; i < AMP_LIBRARY_COUNT; i++)
        printf("    %-26s %s\n", amp_library_glob[i], amp_library_what[i]);
    printf("  and from a Python extension module that imports a BLAS wrapper which tail-calls "
           "the BLAS (policy/data/blas_wrappers.txt):\n");
    for (int i = 0; i < AMP_BLAS_WRAPPER_COUNT; i++)
        printf("    %-26s %s\n", amp_blas_wrapper_module[i], amp_blas_wrapper_what[i]);
}

static int verb_policy(int argc, char **argv)
{
    int device = -1;
    const char *explain = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            device = strcmp(argv[++i], "cpu") == 0 ? 0 : strcmp(argv[i], "cuda") == 0 ? 1 : -2;
            if (device == -2)
                return usage("--device is cpu or cuda");
        } else if (strcmp(argv[i], "--explain") == 0 && i + 1 < argc) {
            explain = argv[++i];
        } else {
            return usage("policy takes [--device cpu|cuda] [--explain SYMBOL]");
        }
    }
    if (explain) {
        int h = amp_hook_from_name(explain);
        if (h < 0)
            return failure("'%s' is not a hooked symbol (try ampctl policy)%s", explain, "");
        printf("%s: routine %s, op %s%s%s%s\n", explain, amp_hook_routines[h],
               amp_op_names[amp_hook_op[h][0]], amp_hook_op[h][1] != amp_hook_op[h][0] ? " (" : "",
               amp_hook_op[h][1] != amp_hook_op[h][0] ? amp_op_names[amp_hook_op[h][1]] : "",
               amp_hook_op[h][1] != amp_hook_op[h][0] ? " when beta != 0)" : "");
        printf("  hooked in %s\n", amp_hook_file[h]);
        if (amp_hook_family[h] == AMP_FAMILY_ONEDNN) {
            if (strcmp(amp_op_names[amp_hook_op[h][0]], "dispatch") == 0)
                printf("  decides nothing itself: what it is given is decided as one of the "
                       "primitive rows (ampctl policy lists them, dnnl_convolution_2d_forward, "
                       "...)\n");
            else
                printf("  a primitive row, never an entry point: oneDNN primitives of this kind "
                       "are decided and counted as it at dnnl_primitive_execute\n");
            printf("  for these callers a lowered convolution is lowered in its descriptor "
                   "(policy/data/onednn_callers.txt); any other program's runs a bf16 twin:\n");
            for (int i = 0; i < AMP_ONEDNN_CALLER_COUNT; i++)
                printf("    %s\n", amp_onednn_caller_glob[i]);
        }
        for (int dev = 0; dev < 2; dev++)
            if (device < 0 || device == dev)
                explain_device(h, (enum amp_device)dev);
        explain_sites(h, device);
        explain_libraries();
        printf("  a call the policy lowers runs as made, counted small, below the size rule's "
               "threshold (AMPSHIM_LOWER_MIN; ampshim(7), WHERE LOWERING PAYS), and counted "
               "nounits on a CPU without native units for the dtype (A CPU WITHOUT NATIVE "
               "UNITS); an explicit request is held to neither (EXPLICIT REQUESTS)\n");
        printf("  (AMPSHIM_POLICY, AMPSHIM_POLICY_FILE and ampctl set PID policy.DEVICE.OP "
               "override these in a process)\n");
        return 0;
    }
    /* The columns of a device not asked for are shown empty. */
    const struct amp_emit_col cols[] = {
        {"symbol", "symbol", 18, 0, AMP_EMIT_LEFT, NULL},
        {"routine", "routine", 10, 0, AMP_EMIT_LEFT, NULL},
        {"op", "op", 18, 0, AMP_EMIT_LEFT, NULL},
        {"op (beta!=0)", "op_beta", 18, 0, AMP_EMIT_LEFT, NULL},
        {device == 1 ? "" : "cpu", NULL, 12, 0, AMP_EMIT_LEFT, NULL},
        {device == 0 ? "" : "cuda", NULL, 12, 0, AMP_EMIT_LEFT, NULL},
        {NULL, "cpu", 0, 0, 0, NULL},
        {NULL, "cuda", 0, 0, 0, NULL},
        {NULL, "cpu_default", 0, 0, 0, NULL},
        {NULL, "cuda_default", 0, 0, 0, NULL},
    };
    struct amp_emitter e;
    amp_emit_begin(&e, stdout, json);
    struct amp_emit_table t = {AMP_EMIT_COLUMNS(cols), .head_always = 1};
    amp_emit_table(&e, &t, NULL);
    /* Each device's category (beta = 0), as generated and as this
     * environment's AMPSHIM_POLICY / AMPSHIM_POLICY_FILE make it; an
     * overridden one is shown with a '*'. */
    int overridden_any = 0;
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        char shown[2][32];
        int def[2], eff[2];
        for (int dev = 0; dev < 2; dev++) {
            def[dev] = amp_policy_hook_default((enum amp_device)dev, h, 0);
            eff[dev] = amp_policy_category(environment_overrides(), (enum amp_device)dev, h, 0);
            snprintf(shown[dev], sizeof shown[dev], "%s%s", amp_category_names[eff[dev]],
                     eff[dev] != def[dev] ? "*" : "");
            overridden_any |= eff[dev] != def[dev] && (device < 0 || device == dev);
        }
        amp_emit_row(&e, &t,
                     (struct amp_emit_val[]){
                         AMP_EMIT_S(amp_hook_names[h]),
                         AMP_EMIT_S(amp_hook_routines[h]),
                         AMP_EMIT_S(amp_op_names[amp_hook_op[h][0]]),
                         AMP_EMIT_S(amp_op_names[amp_hook_op[h][1]]),
                         AMP_EMIT_S(device == 1 ? "" : shown[0]),
                         AMP_EMIT_S(device == 0 ? "" : shown[1]),
                         AMP_EMIT_S(amp_category_names[eff[0]]),
                         AMP_EMIT_S(amp_category_names[eff[1]]),
                         AMP_EMIT_S(amp_category_names[def[0]]),
                         AMP_EMIT_S(amp_category_names[def[1]]),
                     });
    }
    amp_emit_end_table(&e, &t);
    if (json)
        printf("\n");
    else if (overridden_any)
        printf("* overridden by AMPSHIM_POLICY or AMPSHIM_POLICY_FILE in this environment\n");
    return 0;
}

/* Whether a library found beside ampctl may be preloaded into the caller's
 * processes: it and its folder owned by the caller or root, and neither
 * writable by all (a sticky folder such as /tmp excepted, where others
 * cannot replace what the caller owns; group write, a umask of 002, is the
 * owner's choice). A file another user could have put or changed there is
 * not taken. */
static int trusted(const char *path)
{
    struct stat st, dir;
    char folder[8400];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash)
        *slash = '\0';
    if (stat(path, &st) != 0 || stat(slash ? folder : ".", &dir) != 0)
        return 0;
    uid_t me = getuid();
    return (st.st_uid == me || st.st_uid == 0) && !(st.st_mode & S_IWOTH) &&
           (dir.st_uid == me || dir.st_uid == 0) &&
           (!(dir.st_mode & S_IWOTH) || (dir.st_mode & S_ISVTX));
}

/* The shim: the build tree's when ampctl runs from there, else the installed one. */
/* libampshim.so (or another library of the install, by name) for this
 * ampctl: beside its build tree (tools/ampctl/ampctl in a meson build
 * directory: build.ninja two levels up), in its own install wherever that
 * is (bindir/../libdir: an install moved or staged with DESTDIR), then in
 * the configured libdir; one found beside ampctl only when trusted. */
static int find_library(const char *name, char *out, size_t outlen)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            char marker[4200];
            snprintf(marker, sizeof marker, "%s/../../build.ninja", self);
            int build_tree = access(marker, R_OK) == 0;
            const char *relative[] = {"../..", AMPSHIM_BIN_TO_LIB};
            for (size_t i = build_tree ? 0 : 1; i < sizeof relative / sizeof *relative; i++) {
                char path[8400];
                snprintf(path, sizeof path, "%s/%s/%s", self, relative[i], name);
                if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < outlen &&
                    trusted(out))
                    return 0;
            }
        }
    }
    snprintf(out, outlen, "%s/%s", AMPSHIM_LIBDIR, name);
    return access(out, R_OK) == 0 ? 0 : -1;
}

static int find_shim(char *out, size_t outlen)
{
    return find_library("libampshim.so", out, outlen);
}

/* Where the preload library and the audit module are: for scripts and for
 * LD_PRELOAD from a prefix the loader does not search. */
static int verb_which(int argc)
{
    if (argc)
        return usage("which takes no arguments");
    char shim[4200], audit[4200];
    int have_shim = find_shim(shim, sizeof shim) == 0;
    int have_audit = find_library("libampshim-audit.so", audit, sizeof audit) == 0;
    struct amp_emitter e;
    amp_emit_begin(&e, stdout, json);
    amp_emit_object(&e, NULL);
    amp_emit_value(&e, "libampshim", have_shim ? AMP_EMIT_S(shim) : AMP_EMIT_NA, NULL);
    amp_emit_value(&e, "audit", have_audit ? AMP_EMIT_S(audit) : AMP_EMIT_NA, NULL);
    amp_emit_close(&e);
    if (json)
        printf("\n");
    if (have_shim)
        amp_emit_text(&e, "%s\n", shim);
    if (have_audit)
        amp_emit_text(&e, "%s\n", audit);
    if (!have_shim)
        return failure("cannot find libampshim.so (looked beside ampctl and in %s)%s",
                       AMPSHIM_LIBDIR, "");
    return 0;
}

/* LD_PRELOAD splits its value at spaces and colons: a shim whose path has
 * one is named through a symbolic link in a directory of this user's own,
 * /tmp/ampshim-run-UID (made 0700, and used only if it is a directory that
 * belongs to this user and no one else can write). */
static int preloadable_path(const char *shim, char *out, size_t outlen)
{
    char real[4096];
    if (!realpath(shim, real))
        return -1;
    if (!strpbrk(real, " :\t\n")) {
        snprintf(out, outlen, "%s", real);
        return 0;
    }
    char dir[64], tmp[128];
    snprintf(dir, sizeof dir, "/tmp/ampshim-run-%u", (unsigned)getuid());
    mkdir(dir, 0700);
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return -1;
    snprintf(out, outlen, "%s/libampshim.so", dir);
    snprintf(tmp, sizeof tmp, "%s/.libampshim.so.%ld", dir, (long)getpid());
    unlink(tmp);
    if (symlink(real, tmp) != 0 || rename(tmp, out) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Every setting (runtime/settings.h): its variable, its control name,
 * whether ampctl changes it live, its default and its values. --man writes
 * the table ampshim(7) shows (the build fills the page with it). */
static int verb_settings(int argc, char **argv)
{
    int man = argc == 1 && strcmp(argv[0], "--man") == 0;
    if (argc && !man)
        return usage("settings takes [--man]");
    if (man) {
        printf(".TS\ntab(\t) box;\nlb lb lb lb\nl l lw(11) lw(14).\n"
               "variable\tcontrol name\tdefault\tvalues\n_\n");
        for (size_t i = 0; i < amp_setting_count; i++) {
            const struct amp_setting *s = &amp_settings[i];
            char def[96];
            amp_setting_default_text(s, def, sizeof def);
            printf("%s\t%s%s\tT{\n%s\nT}\tT{\n%s\nT}\n", s->env ? s->env : "-",
                   s->ctl ? s->ctl : "-", s->ctl && !s->live ? " (r)" : "", def, s->values);
        }
        printf(".TE\n");
        return 0;
    }
    static const struct amp_emit_col cols[] = {
        {"variable", "variable", 24, 0, AMP_EMIT_LEFT, NULL},
        {"control name", "control", 18, 0, AMP_EMIT_LEFT, NULL},
        {"live", "live", 4, 0, AMP_EMIT_LEFT, NULL},
        {"default", "default", 26, 0, AMP_EMIT_LEFT, NULL},
        {"values", "values", 0, 0, AMP_EMIT_LEFT, NULL},
    };
    struct amp_emitter e;
    amp_emit_begin(&e, stdout, json);
    struct amp_emit_table t = {AMP_EMIT_COLUMNS(cols), .head_always = 1};
    amp_emit_table(&e, &t, NULL);
    for (size_t i = 0; i < amp_setting_count; i++) {
        const struct amp_setting *s = &amp_settings[i];
        char def[96];
        amp_setting_default_text(s, def, sizeof def);
        /* JSON: null for a setting without a variable or a control name */
        struct amp_emit_val none = json ? AMP_EMIT_NA : AMP_EMIT_S("-");
        amp_emit_row(&e, &t,
                     (struct amp_emit_val[]){
                         s->env ? AMP_EMIT_S(s->env) : none,
                         s->ctl ? AMP_EMIT_S(s->ctl) : none,
                         AMP_EMIT_B(s->live),
                         AMP_EMIT_S(def),
                         AMP_EMIT_S(s->values),
                     });
    }
    amp_emit_end_table(&e, &t);
    if (json)
        printf("\n");
    return 0;
}

/* The shim run and check preload, as a path LD_PRELOAD can hold; 0, or 1
 * with one line on standard error. */
static int shim_to_preload(char *shim, size_t size)
{
    char found[4200];
    if (find_shim(found, sizeof found) < 0)
        return failure("cannot find libampshim.so (looked beside ampctl's build tree and in %s)%s",
                       AMPSHIM_LIBDIR, "");
    if (preloadable_path(found, shim, size) < 0)
        return failure("%s: its path has a space or colon, which LD_PRELOAD cannot hold, and no "
                       "link to it could be made in /tmp/ampshim-run-UID%s",
                       found, "");
    return 0;
}

static int verb_run(int argc, char **argv)
{
    /* Options, then the command: after "--", or at the first word that is
     * not one of run's options (as env, perf and valgrind take it). */
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0 && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc)
            setenv("AMPSHIM_DTYPE", argv[++i], 1);
        else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
            setenv("AMPSHIM_POLICY", argv[++i], 1);
        else if (strcmp(argv[i], "--report") == 0)
            setenv("AMPSHIM_REPORT", "1", 1);
        else
            return usage("run takes [--dtype D] [--policy P] [--report] [--] CMD [ARGS...]");
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc)
        return usage("run needs a command: ampctl run [OPTIONS] [--] CMD [ARGS...]");
    char shim[4200], preload[8400];
    if (shim_to_preload(shim, sizeof shim) != 0)
        return 1;
    /* After what the environment preloads already: a sanitizer runtime or an
     * allocator preloaded first must stay first. */
    const char *old = getenv("LD_PRELOAD");
    snprintf(preload, sizeof preload, "%s%s%s", old ? old : "", old && *old ? " " : "", shim);
    setenv("LD_PRELOAD", preload, 1);
    execvp(argv[i], argv + i);
    return failure("cannot run %s: %s", argv[i], strerror(errno));
}

/* ampctl check (check.h): the shim found as run finds it. */
static int verb_check(int argc, char **argv)
{
    char shim[4200];
    if (shim_to_preload(shim, sizeof shim) != 0)
        return 1;
    return ampctl_check(argc, argv, json, shim);
}

int main(int argc, char **argv)
{
    /* --json may stand anywhere before "--" or run's command (whose own
     * arguments are never read). */
    int n = 0;
    for (int i = 1; i < argc; i++) {
        int runs = n >= 1 && strcmp(argv[1], "run") == 0,
            checks = n >= 1 && strcmp(argv[1], "check") == 0;
        int run_command =
            (runs || checks) && argv[i][0] != '-' &&
            !(n >= 2 && runs &&
              (strcmp(argv[n], "--dtype") == 0 || strcmp(argv[n], "--policy") == 0)) &&
            !(n >= 2 && checks && ampctl_check_option_takes_value(argv[n]));
        if (strcmp(argv[i], "--") == 0 || run_command) {
            while (i < argc)
                argv[++n] = argv[i++];
            break;
        }
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            argv[++n] = argv[i];
    }
    /* The compacted list ends where it ends: what lay after it (the last
     * arguments again, once per --json taken out) is never run's command's. */
    argv[n + 1] = NULL;
    argc = n + 1;
    if (argc < 2)
        return usage(NULL);
    const char *verb = argv[1];
    int vargc = argc - 2;
    char **vargv = argv + 2;
    if (strcmp(verb, "run") == 0)
        return verb_run(vargc, vargv);
    if (strcmp(verb, "check") == 0)
        return verb_check(vargc, vargv);
    if (strcmp(verb, "which") == 0)
        return verb_which(vargc);
    if (strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
        char shim[4200];
        printf("ampctl %s (libampshim.so: %s)\n", AMPSHIM_VERSION_TEXT,
               find_shim(shim, sizeof shim) == 0 ? shim : "not found");
        return 0;
    }
    if (strcmp(verb, "ps") == 0)
        return vargc ? usage("ps takes no arguments") : scan_blocks();
    if (strcmp(verb, "gc") == 0) {
        if (vargc)
            return usage("gc takes no arguments");
        /* Blocks are memory the kernel frees with their process. */
        printf(json ? "{\"removed\": 0}\n"
                    : "nothing to do: a control block ends with its process, however it ends\n");
        return 0;
    }
    if (strcmp(verb, "status") == 0)
        return verb_status(vargc, vargv);
    if (strcmp(verb, "stats") == 0)
        return verb_stats(vargc, vargv);
    if (strcmp(verb, "audit") == 0)
        return verb_audit(vargc, vargv);
    if (strcmp(verb, "get") == 0)
        return verb_get(vargc, vargv);
    if (strcmp(verb, "set") == 0)
        return verb_set(vargc, vargv);
    if (strcmp(verb, "enable") == 0)
        return verb_switch(vargc, vargv, 1);
    if (strcmp(verb, "disable") == 0)
        return verb_switch(vargc, vargv, 0);
    if (strcmp(verb, "policy") == 0)
        return verb_policy(vargc, vargv);
    if (strcmp(verb, "settings") == 0)
        return verb_settings(vargc, vargv);
    if (strcmp(verb, "--help") == 0 || strcmp(verb, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    return usage("unknown verb");
}
