/* ampctl check (check.h): runs a program as made twice and lowered once,
 * compares its outputs (outputs.h), and when lowering changes them finds
 * the call sites responsible by halving the set of lowered ones. Each run
 * is the program itself with the shim preloaded; what the runs differ in is
 * only the environment:
 *   as made        AMPSHIM_ENABLE=0 (byte for byte the program without us)
 *   as made again  AMPSHIM_AUDIT=1 on one call per site: the program keeps
 *                  fp32's results, and the audit's policy lists the sites
 *                  that would lower (its entries of audited sites)
 *   lowered        the caller's own settings
 *   a trial        the caller's settings with a policy file keeping some
 *                  of those sites fp32
 * What two runs as made print differently (a time, an address) is left out
 * of every comparison. */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "outputs.h"
#include "runtime/emit.h"
#include "runtime/parse.h"

#define MAX_OUTPUTS 64
#define MAX_WATCHED 20000
#define MAX_SITES 256

struct watched {
    char *path;
    struct timespec mtime;
    off_t size;
};

struct check {
    char **cmd;
    const char *shim;
    char tmp[64];
    int has_stdin;
    double tol;
    int max_runs, runs;
    int made_exit; /* the run as made's exit status (status_code) */
    const char *policy_out;
    const char *user_policy; /* the caller's AMPSHIM_POLICY_FILE, or NULL */
    /* the outputs: [0] standard output, then files */
    char *output[MAX_OUTPUTS + 1];
    int n_outputs, named, watch_full;
    struct watched *watch;
    int n_watch;
    char *site[MAX_SITES];
    int n_sites;
};

/* ---- the files a run writes: the working directory, watched ---- */

static void watch_dir(struct check *k, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "__pycache__") == 0)
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < 4) {
            watch_dir(k, path, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            if (k->n_watch == MAX_WATCHED) {
                k->watch_full = 1;
                break;
            }
            struct watched *w = &k->watch[k->n_watch];
            w->path = strdup(path + 2); /* without "./" */
            if (!w->path)
                continue;
            w->mtime = st.st_mtim;
            w->size = st.st_size;
            k->n_watch++;
        }
    }
    closedir(d);
}

static int changed(const struct watched *w, const struct stat *st)
{
    return w->size != st->st_size || w->mtime.tv_sec != st->st_mtim.tv_sec ||
           w->mtime.tv_nsec != st->st_mtim.tv_nsec;
}

static int has_output(const struct check *k, const char *path)
{
    for (int i = 1; i < k->n_outputs; i++)
        if (strcmp(k->output[i], path) == 0)
            return 1;
    return 0;
}

/* After the first run: every watched file it changed and every new one is
 * an output (besides those named with --output). */
static void find_outputs(struct check *k)
{
    struct check after = {.watch = calloc(MAX_WATCHED, sizeof(struct watched))};
    if (!after.watch)
        return;
    watch_dir(&after, ".", 0);
    for (int i = 0; i < after.n_watch && k->n_outputs <= MAX_OUTPUTS; i++) {
        const struct watched *w = &after.watch[i];
        int j = 0;
        while (j < k->n_watch && strcmp(k->watch[j].path, w->path) != 0)
            j++;
        struct stat st = {.st_size = w->size, .st_mtim = w->mtime};
        int len = (int)strlen(w->path);
        int ours = strcmp(w->path, k->policy_out) == 0 ||
                   (len > 4 && strcmp(w->path + len - 4, ".pyc") == 0);
        if (!ours && (j == k->n_watch || changed(&k->watch[j], &st)) && !has_output(k, w->path) &&
            k->n_outputs <= MAX_OUTPUTS)
            k->output[k->n_outputs++] = strdup(w->path);
    }
    for (int i = 0; i < after.n_watch; i++)
        free(after.watch[i].path);
    free(after.watch);
}

/* ---- runs ---- */

enum run_kind { RUN_MADE, RUN_SITES, RUN_LOWERED };

struct run {
    double seconds;
    int status; /* as waitpid gives it; -1: could not start */
};

static void path_of(const struct check *k, int run, int output, char *out, size_t size)
{
    snprintf(out, size, "%s/run%d.%d", k->tmp, run, output);
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc = out < 0 ? -1 : 0;
    char buf[1 << 16];
    for (ssize_t n; rc == 0 && (n = read(in, buf, sizeof buf)) != 0;)
        if (n < 0 ? errno != EINTR : write(out, buf, (size_t)n) != n)
            rc = -1;
    close(in);
    if (out >= 0 && close(out) != 0)
        rc = -1;
    return rc;
}

/* Runs the command once; its standard output and each output file are
 * kept as run<run>.<output> in the work directory. */
static struct run run_once(struct check *k, int run, enum run_kind kind, const char *policy)
{
    struct run r = {0, -1};
    char out[PATH_MAX], err[PATH_MAX], in[PATH_MAX], sites[PATH_MAX];
    path_of(k, run, 0, out, sizeof out);
    snprintf(err, sizeof err, "%s/run%d.stderr", k->tmp, run);
    snprintf(in, sizeof in, "%s/stdin", k->tmp);
    snprintf(sites, sizeof sites, "%s/sites.policy", k->tmp);
    fflush(NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0)
        return r;
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fi = open(k->has_stdin ? in : "/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || fi < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || dup2(fi, 0) < 0)
            _exit(127);
        const char *old = getenv("LD_PRELOAD");
        char preload[8400];
        snprintf(preload, sizeof preload, "%s%s%s", old ? old : "", old && *old ? " " : "",
                 k->shim);
        setenv("LD_PRELOAD", preload, 1);
        if (kind == RUN_MADE)
            setenv("AMPSHIM_ENABLE", "0", 1);
        if (kind == RUN_SITES) {
            setenv("AMPSHIM_AUDIT", "1", 1);
            setenv("AMPSHIM_AUDIT_SAMPLE", "2147483648", 1);
            setenv("AMPSHIM_AUDIT_POLICY", sites, 1);
        }
        if (policy)
            setenv("AMPSHIM_POLICY_FILE", policy, 1);
        execvp(k->cmd[0], k->cmd);
        dprintf(2, "ampctl check: cannot run %s: %s\n", k->cmd[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return r;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r.status = status;
    r.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    k->runs++;
    for (int i = 1; i < k->n_outputs; i++) {
        char keep[PATH_MAX];
        path_of(k, run, i, keep, sizeof keep);
        if (copy_file(k->output[i], keep) != 0)
            unlink(keep); /* it wrote none this time: read as empty */
    }
    return r;
}

/* ---- comparing a run with the runs as made (runs 0 and 1) ---- */

static int load(const struct check *k, int run, int i, struct ampctl_blob *b)
{
    char path[PATH_MAX];
    path_of(k, run, i, path, sizeof path);
    if (ampctl_blob_read(b, path, i ? k->output[i] : "standard output") == 0)
        return 0;
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", i ? k->output[i] : "standard output");
    b->data = malloc(1);
    return b->data ? 0 : -1;
}

/* Compares run `run` with the runs as made, output by output, into d (may
 * be NULL); returns whether every output matches. */
static int matches(const struct check *k, int run, struct ampctl_diff *d)
{
    int all = 1;
    for (int i = 0; i < k->n_outputs; i++) {
        struct ampctl_blob made, again, low;
        struct ampctl_diff one;
        if (load(k, 0, i, &made) || load(k, 1, i, &again) || load(k, run, i, &low)) {
            memset(&one, 0, sizeof one);
            one.reproducible = 0;
        } else {
            ampctl_compare(&made, &again, &low, &one);
        }
        ampctl_blob_free(&made);
        ampctl_blob_free(&again);
        ampctl_blob_free(&low);
        all &= ampctl_diff_matches(&one, k->tol);
        if (d)
            d[i] = one;
    }
    return all;
}

static int status_code(int status)
{
    return status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- the sites, and trial policies ---- */

/* The sites the audited run as made saw lowering: its policy's entries of
 * audited sites, each made an "=fp32" one. */
static void read_sites(struct check *k)
{
    char path[PATH_MAX], line[1024];
    snprintf(path, sizeof path, "%s/sites.policy", k->tmp);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f) && k->n_sites < MAX_SITES) {
        /* every site the audit ran lowered ("N of M calls audited"): the
         * ones it would keep fp32 lower under the caller's settings too */
        if (line[0] == '#' || !strstr(line, "calls audited"))
            continue;
        char *at = strstr(line, "=lower");
        if (!at)
            at = strstr(line, "=fp32");
        if (!at)
            continue;
        strcpy(at, "=fp32"); /* the entry alone, without its comment */
        k->site[k->n_sites] = strdup(line);
        if (k->site[k->n_sites])
            k->n_sites++;
    }
    fclose(f);
}

/* Writes a policy to path: the caller's own policy file, then the
 * entries keeping sites in `keep` (n of them, indices into k->site) fp32. */
static int write_policy(const struct check *k, const char *path, const int *keep, int n,
                        const char *header)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    if (header)
        fputs(header, f);
    if (k->user_policy) {
        FILE *u = fopen(k->user_policy, "r");
        char line[1024];
        while (u && fgets(line, sizeof line, u))
            fputs(line, f);
        if (u)
            fclose(u);
    }
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\n", k->site[keep[i]]);
    return fclose(f);
}

/* A trial: the lowered run with sites keep[0..n) kept fp32. */
static int trial(struct check *k, const int *keep, int n)
{
    char policy[PATH_MAX];
    snprintf(policy, sizeof policy, "%s/trial.policy", k->tmp);
    if (write_policy(k, policy, keep, n, NULL) != 0)
        return 0;
    int run = 2 + k->runs; /* a fresh slot */
    struct run r = run_once(k, run, RUN_LOWERED, policy);
    int ok = r.status >= 0 && status_code(r.status) == k->made_exit && matches(k, run, NULL);
    for (int i = 0; i < k->n_outputs; i++) { /* a trial's outputs are read once */
        char path[PATH_MAX];
        path_of(k, run, i, path, sizeof path);
        unlink(path);
    }
    return ok;
}

/* Finds the sites responsible: with `kept` fp32 the outputs still differ;
 * the first prefix of the other sites that, kept fp32 too, makes them
 * match ends with one responsible site (halving: log2 of the sites' number
 * runs per site found). Returns the number kept, -1 when even all of them
 * fp32 does not match, -2 when the runs ran out. */
static int find_responsible(struct check *k, int *kept)
{
    int n_kept = 0, rest[MAX_SITES], order[MAX_SITES];
    for (;;) {
        int n_rest = 0;
        for (int s = 0; s < k->n_sites; s++) {
            int in = 0;
            for (int j = 0; j < n_kept; j++)
                in |= kept[j] == s;
            if (!in)
                rest[n_rest++] = s;
        }
        /* kept + rest[0..hi) matches (all of them: checked first);
         * kept + rest[0..lo) does not */
        int lo = 0, hi = n_rest;
        memcpy(order, kept, (size_t)n_kept * sizeof *order);
        memcpy(order + n_kept, rest, (size_t)n_rest * sizeof *order);
        if (n_kept == 0) {
            if (k->runs >= k->max_runs)
                return -2;
            if (!trial(k, order, n_rest))
                return -1;
        }
        while (hi - lo > 1) {
            if (k->runs >= k->max_runs)
                return -2;
            int mid = (lo + hi) / 2;
            if (trial(k, order, n_kept + mid))
                hi = mid;
            else
                lo = mid;
        }
        kept[n_kept++] = rest[hi - 1];
        if (k->runs >= k->max_runs)
            return -2;
        if (trial(k, kept, n_kept))
            return n_kept;
        if (n_kept == k->n_sites)
            return -1;
    }
}

/* ---- the report ---- */

/* The outputs' table: text cells and JSON figures side by side. */
static void emit_diffs(struct amp_emitter *e, const struct check *k, const struct ampctl_diff *d)
{
    static const struct amp_emit_col cols[] = {
        {"output", "name", 28, 0, AMP_EMIT_LEFT | AMP_EMIT_CLIP, NULL},
        {NULL, "reproducible", 0, 0, 0, NULL},
        {NULL, "readable", 0, 0, 0, NULL},
        {NULL, "identical", 0, 0, 0, NULL},
        {"values", NULL, 10, 0, AMP_EMIT_LEFT, NULL},
        {NULL, "values", 0, 0, 0, NULL},
        {"largest", NULL, 12, 0, AMP_EMIT_LEFT, NULL},
        {"noisy", NULL, 9, 0, AMP_EMIT_LEFT, NULL},
        {NULL, "noisy", 0, 0, 0, NULL},
        {NULL, "largest", 0, 0, 0, "%.6g"},
        {NULL, "elem_max", 0, 0, 0, "%.6g"},
        {NULL, "decisions", 0, 0, 0, NULL},
        {NULL, "first", 0, 0, 0, NULL},
        {"verdict", NULL, 0, 0, AMP_EMIT_LEFT, NULL},
        {NULL, "matches", 0, 0, 0, NULL},
    };
    struct amp_emit_table t = {AMP_EMIT_COLUMNS(cols), .head_always = 1};
    amp_emit_table(e, &t, "outputs");
    for (int i = 0; i < k->n_outputs; i++) {
        const struct ampctl_diff *x = &d[i];
        char largest[32] = "-", values[32] = "-", noisy[32] = "-", verdict[160];
        if (x->readable && x->reproducible) {
            snprintf(values, sizeof values, "%zu", x->numbers);
            snprintf(largest, sizeof largest, "%.3g", x->max_rel);
            snprintf(noisy, sizeof noisy, "%zu", x->noisy);
        }
        if (!x->reproducible)
            snprintf(verdict, sizeof verdict,
                     "not compared: two runs as made wrote it differently");
        else if (x->identical)
            snprintf(verdict, sizeof verdict, "same bytes");
        else if (x->decisions)
            snprintf(verdict, sizeof verdict, "changed: %zu decision%s (%s)", x->decisions,
                     x->decisions == 1 ? "" : "s", x->first);
        else if (!x->readable)
            snprintf(verdict, sizeof verdict, "changed: its bytes differ");
        else if (x->max_rel > k->tol)
            snprintf(verdict, sizeof verdict, "changed: value %zu off by %.3g (tolerance %g)",
                     x->max_at + 1, x->max_rel, k->tol);
        else
            snprintf(verdict, sizeof verdict, "within tolerance");
        amp_emit_row(e, &t,
                     (struct amp_emit_val[]){
                         AMP_EMIT_S(i ? k->output[i] : "standard output"),
                         AMP_EMIT_B(x->reproducible),
                         AMP_EMIT_B(x->readable),
                         AMP_EMIT_B(x->identical),
                         AMP_EMIT_S(values),
                         AMP_EMIT_U(x->numbers),
                         AMP_EMIT_S(largest),
                         AMP_EMIT_S(noisy),
                         AMP_EMIT_U(x->noisy),
                         AMP_EMIT_D(isfinite(x->max_rel) ? x->max_rel : 1e308),
                         AMP_EMIT_D(isfinite(x->elem_max) ? x->elem_max : 1e308),
                         AMP_EMIT_U(x->decisions),
                         AMP_EMIT_S(x->first),
                         AMP_EMIT_S(verdict),
                         AMP_EMIT_B(ampctl_diff_matches(x, k->tol)),
                     });
    }
    amp_emit_end_table(e, &t);
}

/* A site as its policy entry names it, without "=fp32" and the comment. */
static void site_name(const char *entry, char *out, size_t size)
{
    snprintf(out, size, "%s", entry);
    out[strcspn(out, " \n")] = 0;
    char *eq = strrchr(out, '=');
    if (eq)
        *eq = 0;
}

/* The command, its words joined, cut at size - 1. */
static void command_text(char **cmd, char *out, size_t size)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; cmd[i] && at + 1 < size; i++)
        at += (size_t)snprintf(out + at, size - at, "%s%s", i ? " " : "", cmd[i]);
}

/* The run's figures in JSON (the text form says them in its lines). */
static void emit_json_head(struct amp_emitter *e, const struct check *k, const struct run *run,
                           int same, const char *command)
{
    amp_emit_str(e, "command", command);
    amp_emit_object(e, "seconds");
    amp_emit_num(e, "as_made", run[0].seconds, "%.3f");
    amp_emit_num(e, "lowered", run[2].seconds, "%.3f");
    amp_emit_close(e);
    amp_emit_object(e, "exit");
    amp_emit_value(e, "as_made", AMP_EMIT_I(status_code(run[0].status)), NULL);
    amp_emit_value(e, "lowered", AMP_EMIT_I(status_code(run[2].status)), NULL);
    amp_emit_close(e);
    amp_emit_num(e, "tolerance", k->tol, "%g");
    amp_emit_value(e, "runs", AMP_EMIT_I(k->runs), NULL);
    amp_emit_value(e, "matches", AMP_EMIT_B(same), NULL);
}

/* The sites (lowered, responsible) and the policy, in JSON. */
static void emit_json_sites(struct amp_emitter *e, const struct check *k, const int *kept,
                            int n_kept, int fixed)
{
    char entry[1024];
    amp_emit_array(e, "lowered_sites");
    for (int s = 0; s < k->n_sites; s++) {
        site_name(k->site[s], entry, sizeof entry);
        amp_emit_str(e, NULL, entry);
    }
    amp_emit_close(e);
    amp_emit_array(e, "responsible");
    for (int j = 0; j < n_kept; j++) {
        site_name(k->site[kept[j]], entry, sizeof entry);
        amp_emit_str(e, NULL, entry);
    }
    amp_emit_close(e);
    amp_emit_value(e, "policy", fixed ? AMP_EMIT_S(k->policy_out) : AMP_EMIT_NA, NULL);
}

int ampctl_check_option_takes_value(const char *w)
{
    return strcmp(w, "--tolerance") == 0 || strcmp(w, "--policy-out") == 0 ||
           strcmp(w, "--output") == 0 || strcmp(w, "--max-runs") == 0;
}

static const char check_usage[] = "check takes [--tolerance X] [--output PATH]... "
                                  "[--policy-out FILE] [--max-runs N] [--] CMD [ARGS...]";

/* Keeps standard input, when there is one to keep, for every run. */
static int keep_stdin(struct check *k)
{
    if (isatty(0))
        return 0;
    struct stat st;
    if (fstat(0, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)))
        return 0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/stdin", k->tmp);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0)
        return -1;
    char buf[1 << 16];
    for (ssize_t n; (n = read(0, buf, sizeof buf)) != 0;)
        if (n < 0 ? errno != EINTR : write(out, buf, (size_t)n) != n) {
            close(out);
            return -1;
        }
    k->has_stdin = 1;
    return close(out);
}

static void remove_work(struct check *k)
{
    DIR *d = opendir(k->tmp);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            char path[PATH_MAX];
            if (e->d_name[0] != '.' &&
                snprintf(path, sizeof path, "%s/%s", k->tmp, e->d_name) < (int)sizeof path)
                unlink(path);
        }
        closedir(d);
    }
    rmdir(k->tmp);
}

int ampctl_check(int argc, char **argv, int json, const char *shim)
{
    static struct check k;
    k.shim = shim;
    k.tol = 0.01;
    k.max_runs = 24;
    k.policy_out = "ampshim-check.policy";
    k.n_outputs = 1;
    int i = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0 && argv[i][0] == '-'; i++) {
        char err[160];
        if (strcmp(argv[i], "--tolerance") == 0 && i + 1 < argc) {
            k.tol = amp_parse_audit_tolerance(argv[++i], err, sizeof err);
            if (!(k.tol > 0)) {
                fprintf(stderr, "ampctl: check: --tolerance: %s\n", err);
                return 2;
            }
        } else if (strcmp(argv[i], "--max-runs") == 0 && i + 1 < argc) {
            uint32_t n = amp_parse_audit_sample(argv[++i], err, sizeof err);
            if (n < 3 || n > 1000) {
                fprintf(stderr,
                        "ampctl: check: --max-runs takes a whole number from 3 to 1000, "
                        "not '%s'\n",
                        argv[i]);
                return 2;
            }
            k.max_runs = (int)n;
        } else if (strcmp(argv[i], "--policy-out") == 0 && i + 1 < argc) {
            k.policy_out = argv[++i];
        } else if (strcmp(argv[i], "--output") == 0 && i + 1 < argc) {
            if (k.n_outputs > MAX_OUTPUTS) {
                fprintf(stderr, "ampctl: check: at most %d outputs\n", MAX_OUTPUTS);
                return 2;
            }
            k.output[k.n_outputs++] = argv[++i];
            k.named++;
        } else {
            fprintf(stderr, "ampctl: %s\n", check_usage);
            return 2;
        }
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc) {
        fprintf(stderr,
                "ampctl: check needs a command: ampctl check [OPTIONS] [--] CMD [ARGS...]\n");
        return 2;
    }
    k.cmd = argv + i;
    k.user_policy = getenv("AMPSHIM_POLICY_FILE");
    if (k.user_policy && !*k.user_policy)
        k.user_policy = NULL;
    snprintf(k.tmp, sizeof k.tmp, "/tmp/ampctl-check-XXXXXX");
    if (!mkdtemp(k.tmp)) {
        fprintf(stderr, "ampctl: check: cannot make a work directory in /tmp: %s\n",
                strerror(errno));
        return 1;
    }
    k.watch = calloc(MAX_WATCHED, sizeof *k.watch);
    if (!k.watch || keep_stdin(&k) != 0) {
        fprintf(stderr, "ampctl: check: out of memory or /tmp space\n");
        remove_work(&k);
        return 1;
    }
    watch_dir(&k, ".", 0);

    struct run run[3];
    /* The first run finds the files; the others keep the same ones. */
    int named = k.n_outputs;
    run[0] = run_once(&k, 0, RUN_MADE, NULL);
    if (!k.watch_full)
        find_outputs(&k);
    if (k.n_outputs > named) { /* the first run's new files: keep them as it wrote them */
        for (int o = named; o < k.n_outputs; o++) {
            char keep[PATH_MAX];
            path_of(&k, 0, o, keep, sizeof keep);
            copy_file(k.output[o], keep);
        }
    }
    run[1] = run_once(&k, 1, RUN_SITES, NULL);
    run[2] = run_once(&k, 2, RUN_LOWERED, k.user_policy);
    if (run[0].status < 0 || status_code(run[0].status) == 127) {
        fprintf(stderr, "ampctl: check: cannot run %s\n", k.cmd[0]);
        remove_work(&k);
        return 1;
    }
    k.made_exit = status_code(run[0].status);
    read_sites(&k);
    struct ampctl_diff d[MAX_OUTPUTS + 1];
    int same_exit = status_code(run[0].status) == status_code(run[2].status);
    int same = matches(&k, 2, d) && same_exit;
    int kept[MAX_SITES], n_kept = 0, fixed = 0, found = 0;
    if (!same && k.n_sites) {
        found = find_responsible(&k, kept);
        n_kept = found > 0 ? found : 0;
        if (found > 0) {
            char header[512];
            snprintf(header, sizeof header,
                     "# ampctl check: the call sites whose lowering changed what %s writes, kept\n"
                     "# fp32 (tolerance %g). Use with AMPSHIM_POLICY_FILE; see ampctl(1), CHECK.\n",
                     k.cmd[0], k.tol);
            fixed = write_policy(&k, k.policy_out, kept, n_kept, header) == 0;
        }
    }
    char command[512];
    command_text(k.cmd, command, sizeof command);
    struct amp_emitter e;
    amp_emit_begin(&e, stdout, json);
    amp_emit_object(&e, NULL);
    if (json) {
        emit_json_head(&e, &k, run, same, command);
        emit_diffs(&e, &k, d);
        emit_json_sites(&e, &k, kept, n_kept, fixed);
        amp_emit_close(&e);
        printf("\n");
    } else {
        printf("ampctl check: %s: as made %.2f s (exit %d), lowered %.2f s (exit %d); %d runs; "
               "tolerance %g\n",
               command, run[0].seconds, status_code(run[0].status), run[2].seconds,
               status_code(run[2].status), k.runs, k.tol);
        if (k.watch_full)
            printf("the working directory holds over %d files: only outputs named with --output "
                   "are compared\n",
                   MAX_WATCHED);
        emit_diffs(&e, &k, d);
        if (!same_exit)
            printf("exit status changed: %d as made, %d lowered\n", status_code(run[0].status),
                   status_code(run[2].status));
        printf("lowered call sites: %d\n", k.n_sites);
        if (same && !k.n_sites) {
            printf("verdict: the outputs match, but no call site was lowered: nothing was tested "
                   "(AMPSHIM_REPORT=1 says why: no hooked call, sizes below the size rule, no "
                   "native units)\n");
        } else if (same) {
            printf("verdict: lowering keeps every output within tolerance\n");
        } else if (!k.n_sites) {
            printf("verdict: outputs changed, but no call site was lowered in the audited run "
                   "(they differ run to run, or lowering reached them some other way)\n");
        } else if (found == -1) {
            printf("verdict: outputs changed even with every lowered site kept fp32: not by "
                   "lowering at a call site ampshim can name\n");
        } else if (found == -2) {
            printf("verdict: outputs changed; the %d runs allowed (--max-runs) ran out before "
                   "the sites responsible were found\n",
                   k.max_runs);
        } else {
            printf("responsible call sites (kept fp32, the outputs match the run as made):\n");
            for (int j = 0; j < n_kept; j++) {
                char entry[1024];
                snprintf(entry, sizeof entry, "%s", k.site[kept[j]]);
                entry[strcspn(entry, " \n")] = 0;
                printf("  %s\n", entry);
            }
            if (fixed)
                printf("policy written: %s (AMPSHIM_POLICY_FILE=%s keeps them fp32)\n",
                       k.policy_out, k.policy_out);
            else
                printf("could not write %s: %s\n", k.policy_out, strerror(errno));
        }
    }
    remove_work(&k);
    return same ? 0 : 1;
}
