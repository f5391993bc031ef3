/* Logging with the fixed "ampshim: " prefix. Every message is exactly one
 * line, written with one call, so lines from several threads never
 * interleave mid-line. */
#include "runtime/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

static _Atomic int log_level = AMP_LOG_WARN;
static FILE *_Atomic log_stream;

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
    FILE *out = atomic_load(&log_stream);
    if (!out)
        out = stderr;
    fwrite(line, 1, used, out);
    fflush(out);
}
