/* The scaler's state files under attack:
 *  - amp_scaler_save killed with SIGKILL at random moments, 300 times: the
 *    file always loads (old or new, never torn) and no temporary files pile
 *    up beside it;
 *  - four processes saving different states to one path at once while this
 *    one loads it: every load succeeds and gives one of the four states;
 *  - crafted files are rejected with -EBADMSG (or -errno) and the scaler
 *    left unchanged: huge numbers, NaN, inf, hex, '+', a blank line before
 *    the magic line, negative intervals, a 10 MB file, a symbolic link, a
 *    FIFO (must not block), a directory;
 *  - save refuses to replace a symbolic link, a FIFO or a directory.
 * usage: scaler_files DIR (an empty scratch directory) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "amp_scaler.h"
#include "tests/check.h"

static char path[4096];

static amp_scaler *scaler_with(double scale, int64_t interval)
{
    amp_scaler_config c;
    amp_scaler_config_default(&c);
    c.init_scale = scale;
    c.growth_interval = interval;
    return amp_scaler_create(&c);
}

static int entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void kill_during_saves(const char *dir)
{
    amp_scaler *probe = scaler_with(1, 10);
    int torn = 0;
    for (int i = 0; i < 300; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            amp_scaler *a = scaler_with(1024, 100), *b = scaler_with(2048, 200);
            for (;;) {
                amp_scaler_save(a, path);
                amp_scaler_save(b, path);
            }
        }
        struct timespec t = {0, 200000 + (rand() % 2000) * 1000L};
        nanosleep(&t, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (access(path, F_OK) == 0 && amp_scaler_load(probe, path) != 0) {
            torn++;
            printf("torn: %s\n", amp_scaler_last_error(probe));
        }
    }
    CHECK(torn == 0, "%d of 300 killed saves left a file that does not load", torn);
    int left = entries(dir) - 1;
    CHECK(left <= 2, "%d temporary files left beside the state after 300 kills", left);
    printf("scaler_files: 300 kills, %d torn, %d temporary files left\n", torn, left);
    amp_scaler_destroy(probe);
}

static void concurrent_saves(void)
{
    unlink(path); /* the kill phase's state is none of the four */
    pid_t pids[4];
    for (int w = 0; w < 4; w++)
        if ((pids[w] = fork()) == 0) {
            amp_scaler *s = scaler_with(256 << w, 100 + w);
            for (int i = 0; i < 200; i++)
                if (amp_scaler_save(s, path) != 0)
                    _exit(1);
            _exit(0);
        }
    amp_scaler *probe = scaler_with(1, 10);
    int bad = 0, loads = 0;
    for (int alive = 4; alive > 0;) {
        int rc = amp_scaler_load(probe, path);
        if (rc == -ENOENT && !loads) {
            /* before the first save */
        } else if (rc == 0) {
            loads++;
            float sc = amp_scaler_get_scale(probe);
            int64_t iv = amp_scaler_get_growth_interval(probe);
            int ok = 0;
            for (int w = 0; w < 4; w++)
                ok |= sc == (float)(256 << w) && iv == 100 + w;
            bad += !ok;
        } else {
            if (!bad)
                printf("first failed load: %s\n", amp_scaler_last_error(probe));
            bad++;
        }
        int status;
        pid_t done = waitpid(-1, &status, WNOHANG);
        if (done > 0) {
            alive--;
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a concurrent saver failed");
        }
    }
    CHECK(bad == 0, "%d of %d loads during concurrent saves failed or mixed states", bad, loads);
    amp_scaler_destroy(probe);
}

static void crafted(const char *dir)
{
    static const char *const bodies[] = {
        "ampscaler-state 1\nscale 1e400\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale nan\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale inf\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale 0x1p10\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale +1024\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale  1024\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "\nampscaler-state 1\nscale 1024\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale 1024\n\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale 1024\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval -10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale 1024\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 99999999999999999999\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale 1024\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 0x10\n_growth_tracker 1\n",
        "ampscaler-state 1\nscale 1024\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n_growth_tracker 1",
    };
    amp_scaler *s = scaler_with(512, 77);
    char p[4200];
    snprintf(p, sizeof p, "%s/crafted", dir);
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        write_file(p, bodies[i]);
        int rc = amp_scaler_load(s, p);
        CHECK(rc == -EBADMSG, "crafted file %zu is rejected with -EBADMSG (got %d)", i, rc);
        CHECK(amp_scaler_get_scale(s) == 512 && amp_scaler_get_growth_interval(s) == 77,
              "crafted file %zu left the scaler unchanged", i);
    }
    /* A valid file loads (the checks above are not failing everything). */
    write_file(p, "ampscaler-state 1\nscale 1024\ngrowth_factor 2\nbackoff_factor 0.5\n"
                  "growth_interval 10\n_growth_tracker 1\n");
    CHECK(amp_scaler_load(s, p) == 0 && amp_scaler_get_scale(s) == 1024, "a valid file loads");
    amp_scaler_destroy(s);
    s = scaler_with(512, 77);
    /* 10 MB. */
    FILE *f = fopen(p, "w");
    if (f) {
        fputs("ampscaler-state 1\n", f);
        for (int i = 0; i < 10 << 20; i += 16)
            fputs("scale 1024      ", f);
        fclose(f);
    }
    CHECK(amp_scaler_load(s, p) == -EBADMSG, "a 10 MB file is rejected");
    /* A symbolic link to a valid file, a FIFO, a directory. */
    char valid[4200], link[4200], fifo[4200], sub[4200];
    snprintf(valid, sizeof valid, "%s/valid", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    write_file(valid, "ampscaler-state 1\nscale 1024\ngrowth_factor 2\nbackoff_factor 0.5\n"
                      "growth_interval 10\n_growth_tracker 1\n");
    CHECK(symlink("valid", link) == 0, "symlink");
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    CHECK(mkdir(sub, 0700) == 0, "mkdir");
    alarm(10); /* a FIFO must not block */
    CHECK(amp_scaler_load(s, link) != 0, "a symbolic link is not followed");
    CHECK(amp_scaler_load(s, fifo) == -EBADMSG, "a FIFO is refused without blocking");
    CHECK(amp_scaler_load(s, sub) == -EBADMSG, "a directory is refused");
    alarm(0);
    CHECK(amp_scaler_get_scale(s) == 512, "the refused files left the scaler unchanged");
    /* Save refuses to replace anything but a regular file. */
    CHECK(amp_scaler_save(s, link) == -EEXIST, "save refuses a symbolic link");
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
    CHECK(amp_scaler_save(s, fifo) == -EEXIST, "save refuses a FIFO");
    CHECK(amp_scaler_save(s, sub) == -EEXIST, "save refuses a directory");
    CHECK(amp_scaler_save(s, valid) == 0, "save replaces a regular file");
    amp_scaler_destroy(s);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char kills[3000], crafted_dir[3000];
    snprintf(kills, sizeof kills, "%.2900s/kills", argv[1]);
    snprintf(crafted_dir, sizeof crafted_dir, "%.2900s/crafted", argv[1]);
    mkdir(kills, 0700);
    mkdir(crafted_dir, 0700);
    snprintf(path, sizeof path, "%s/state", kills);
    setvbuf(stdout, NULL, _IONBF, 0);
    srand(7);
    kill_during_saves(kills);
    concurrent_saves();
    crafted(crafted_dir);
    printf("scaler_files: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
