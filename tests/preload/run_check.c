/* Runs a program with ampshim preloaded (the --env settings added to this
 * process's environment; the driver itself runs without the shim) and checks
 * what it printed and how it ended, optionally against a second run with the
 * plain environment.
 *
 * usage: run_check [options] -- PROGRAM ARGS...
 *   --env K=V       set K=V for the preloaded run (repeatable; LD_PRELOAD too)
 *   --same          stdout, stderr and exit status equal the unpreloaded run's
 *   --differ        stdout differs from the unpreloaded run's (negative check)
 *   --exit N        the preloaded run exits with status N
 *   --stderr-lines N   the preloaded run's stderr has exactly N lines
 *   --stderr-has S  the preloaded run's stderr contains S (repeatable)
 *   --quiet         the preloaded run prints nothing on stdout or stderr
 *   --no-shim       the --env settings leave the shim out on purpose (a
 *                   baseline of what the loader does without it)
 * Whatever the options, run_check first proves the --env settings really
 * load the shim (or, with --no-shim, really do not) (it runs itself with them, as "run_check --probe", which
 * looks for ampshim_version), so no check can pass because the preload
 * silently failed. */
#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct result {
    char *out, *err;
    size_t out_len, err_len;
    int status;
};

static char *slurp(FILE *f, size_t *len)
{
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            buf = realloc(buf, cap);
        }
        size_t n = fread(buf + *len, 1, cap - *len - 1, f);
        if (n == 0)
            break;
        *len += n;
    }
    buf[*len] = '\0';
    return buf;
}

static struct result run(char **argv, char **envp)
{
    char out_path[] = "/tmp/run_check_out_XXXXXX", err_path[] = "/tmp/run_check_err_XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    pid_t pid;
    struct result r = {0};
    if (posix_spawnp(&pid, argv[0], &actions, NULL, argv, envp) != 0) {
        perror("run_check: spawn");
        exit(1);
    }
    waitpid(pid, &r.status, 0);
    FILE *fo = fdopen(out_fd, "r"), *fe = fdopen(err_fd, "r");
    rewind(fo);
    rewind(fe);
    r.out = slurp(fo, &r.out_len);
    r.err = slurp(fe, &r.err_len);
    fclose(fo);
    fclose(fe);
    unlink(out_path);
    unlink(err_path);
    posix_spawn_file_actions_destroy(&actions);
    return r;
}

static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Does the environment envp load libampshim.so into a program? Runs this
 * program as "--probe" under it: found, or ended at load by the shim itself
 * (AMPSHIM_STRICT=1 with a bad variable says so with the ampshim: prefix). */
static int preload_works(char **envp)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    char *argv[] = {self, "--probe", NULL};
    struct result r = run(argv, envp);
    return strstr(r.out, "ampshim is loaded") != NULL || strstr(r.err, "ampshim: ") != NULL;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
        puts(dlsym(RTLD_DEFAULT, "ampshim_version") ? "ampshim is loaded" : "no ampshim");
        return 0;
    }
    int same = 0, differ = 0, quiet = 0, no_shim = 0, want_exit = -1, want_lines = -1, i;
    const char *has[16];
    int n_has = 0;
    char *extra[32];
    int n_extra = 0;
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--same") == 0)
            same = 1;
        else if (strcmp(argv[i], "--differ") == 0)
            differ = 1;
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--no-shim") == 0)
            no_shim = 1;
        else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
            want_exit = atoi(argv[++i]);
        else if (strcmp(argv[i], "--stderr-lines") == 0 && i + 1 < argc)
            want_lines = atoi(argv[++i]);
        else if (strcmp(argv[i], "--env") == 0 && i + 1 < argc && n_extra < 32)
            extra[n_extra++] = argv[++i];
        else if (strcmp(argv[i], "--stderr-has") == 0 && i + 1 < argc && n_has < 16)
            has[n_has++] = argv[++i];
        else {
            fprintf(stderr, "run_check: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: run_check [options] -- PROGRAM ARGS...\n");
        return 2;
    }
    char **prog = argv + i + 1;
    int failures = 0, checks = 0;

    size_t n_env = 0;
    while (environ[n_env])
        n_env++;
    char **shimmed = calloc(n_env + (size_t)n_extra + 1, sizeof *shimmed);
    size_t k = 0;
    for (int j = 0; j < n_extra; j++)
        shimmed[k++] = extra[j];
    for (size_t j = 0; j < n_env; j++) {
        int overridden = 0;
        for (int x = 0; x < n_extra; x++) {
            size_t len = strcspn(extra[x], "=");
            overridden |= strncmp(environ[j], extra[x], len + 1) == 0;
        }
        if (!overridden)
            shimmed[k++] = environ[j];
    }
    checks++;
    if (preload_works(shimmed) == no_shim) {
        failures++;
        printf("FAIL the --env settings %s libampshim.so\n", no_shim ? "load" : "do not load");
    }
    struct result pre = run(prog, shimmed);
    printf("--- stdout under ampshim ---\n%s--- stderr under ampshim ---\n%s---\n", pre.out,
           pre.err);

    if (same || differ) {
        struct result base = run(prog, environ);
        printf("--- stdout without ampshim ---\n%s--- stderr without ampshim ---\n%s---\n",
               base.out, base.err);
        int equal = pre.out_len == base.out_len && memcmp(pre.out, base.out, pre.out_len) == 0;
        if (same) {
            checks += 3;
            if (!equal) {
                failures++;
                printf("FAIL stdout differs from the run without ampshim\n");
            }
            if (pre.err_len != base.err_len || memcmp(pre.err, base.err, pre.err_len) != 0) {
                failures++;
                printf("FAIL stderr differs from the run without ampshim\n");
            }
            if (exit_code(pre.status) != exit_code(base.status)) {
                failures++;
                printf("FAIL exit status %d, without ampshim %d\n", exit_code(pre.status),
                       exit_code(base.status));
            }
        }
        if (differ) {
            checks++;
            if (equal) {
                failures++;
                printf("FAIL stdout equals the run without ampshim; expected a difference\n");
            }
        }
    }
    if (want_exit >= 0) {
        checks++;
        if (exit_code(pre.status) != want_exit) {
            failures++;
            printf("FAIL exit status %d, expected %d\n", exit_code(pre.status), want_exit);
        }
    }
    if (want_lines >= 0) {
        int lines = 0;
        for (size_t j = 0; j < pre.err_len; j++)
            lines += pre.err[j] == '\n';
        checks++;
        if (lines != want_lines) {
            failures++;
            printf("FAIL stderr has %d lines, expected %d\n", lines, want_lines);
        }
    }
    for (int h = 0; h < n_has; h++) {
        checks++;
        if (!strstr(pre.err, has[h])) {
            failures++;
            printf("FAIL stderr lacks \"%s\"\n", has[h]);
        }
    }
    if (quiet) {
        checks++;
        if (pre.out_len || pre.err_len) {
            failures++;
            printf("FAIL expected no output at all\n");
        }
    }
    printf("run_check %s: %d passed, %d failed\n", prog[0], checks - failures, failures);
    return failures ? 1 : 0;
}
