/* Logging with the fixed "ampshim: " prefix. Every message is exactly one
 * line, written with one call, so lines from several threads never
 * interleave mid-line. */
#include "runtime/log.h"
#include "runtime/threads.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static _Atomic int log_level = AMP_LOG_WARN;
static FILE *_Atomic log_stream;
static char log_path[4096];
static _Atomic int log_path_pending;
static pthread_mutex_t log_open_lock = PTHREAD_MUTEX_INITIALIZER;

void amp_log_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&log_open_lock, phase);
}

FILE *amp_open_output(const char *path, char *why, size_t whylen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open '%s': %s%s", path, strerror(errno),
                 errno == ELOOP ? " (ampshim follows no symbolic link)" : "");
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
        close(fd);
        snprintf(why, whylen, "'%s' is not a regular file", path);
        return NULL;
    }
    fcntl(fd, F_SETFL, O_APPEND); /* blocking again, for an ordinary file */
    FILE *f = fdopen(fd, "a");
    if (!f) {
        close(fd);
        snprintf(why, whylen, "cannot open '%s': %s", path, strerror(errno));
    }
    return f;
}

static _Atomic int holding;
static char held[32][1024];
static size_t held_len[32];
static int n_held;

void amp_log_hold(void)
{
    atomic_store(&holding, 1);
}

static void write_line(const char *line, size_t len);

void amp_log_release_held(void)
{
    if (!atomic_exchange(&holding, 0))
        return;
    for (int i = 0; i < n_held; i++)
        write_line(held[i], held_len[i]);
    n_held = 0;
}

void amp_log_drop_held(void)
{
    atomic_store(&holding, 0);
    n_held = 0;
}

void amp_log_set_path(const char *path)
{
    snprintf(log_path, sizeof log_path, "%s", path);
    atomic_store(&log_path_pending, 1);
}

/* The stream for the next line: the log file, opened now if it is due. */
static FILE *current_stream(void)
{
    if (atomic_load_explicit(&log_path_pending, memory_order_acquire)) {
        pthread_mutex_lock(&log_open_lock);
        if (atomic_load(&log_path_pending)) {
            char why[512];
            FILE *f = amp_open_output(log_path, why, sizeof why);
            atomic_store(&log_stream, f);
            atomic_store(&log_path_pending, 0);
            if (!f)
                fprintf(stderr, "ampshim: AMPSHIM_LOG_FILE: %s; logging to stderr\n", why);
        }
        pthread_mutex_unlock(&log_open_lock);
    }
    return atomic_load(&log_stream);
}

void amp_log_set_level(enum amp_log_level level)
{
    atomic_store(&log_level, (int)level);
}

void amp_log_set_stream(FILE *stream)
{
    atomic_store(&log_stream, stream);
}

enum amp_log_level amp_log_level_get(void)
{
    return (enum amp_log_level)atomic_load_explicit(&log_level, memory_order_relaxed);
}

void amp_log(enum amp_log_level level, const char *fmt, ...)
{
    if (amp_log_level_get() < level)
        return;
    char line[1024] = "ampshim: ";
    size_t used = strlen(line);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + used, sizeof line - used - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t start = used;
    used += (size_t)n < sizeof line - used - 1 ? (size_t)n : sizeof line - used - 2;
    /* Messages echo user input (a bad variable's value): a control character
     * there must not split the message or forge a second line. */
    for (size_t i = start; i < used; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[used++] = '\n';
    /* An error (the process is about to stop) goes out at once, after
     * whatever was held. */
    if (level == AMP_LOG_ERROR)
        amp_log_release_held();
    /* Held lines come from the load, before any other thread can log. */
    if (atomic_load_explicit(&holding, memory_order_relaxed)) {
        if (n_held < 32) {
            memcpy(held[n_held], line, used);
            held_len[n_held++] = used;
        }
        return;
    }
    write_line(line, used);
}

static void write_line(const char *line, size_t len)
{
    FILE *out = current_stream();
    if (!out)
        out = stderr;
    fwrite(line, 1, len, out);
    fflush(out);
}

void amp_refuse_explicit(int hook, int dtype, const char *why)
{
    static uint8_t said[AMP_HOOK_COUNT][AMP_DTYPE_COUNT];
    if (hook < 0 || hook >= AMP_HOOK_COUNT || dtype < 0 || dtype >= AMP_DTYPE_COUNT ||
        __atomic_exchange_n(&said[hook][dtype], 1, __ATOMIC_RELAXED))
        return;
    amp_log(AMP_LOG_WARN,
            "%s: lowering to %s was asked for explicitly, but %s: such calls run as made in "
            "fp32, counted nounits",
            amp_hook_names[hook], amp_dtype_names[dtype], why);
}
