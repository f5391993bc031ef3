/* Logging: every line starts "ampshim: ", goes to stderr or AMPSHIM_LOG_FILE,
 * and is filtered by AMPSHIM_LOG. The shim is silent unless something is wrong
 * or the user asked. */
#ifndef AMPSHIM_LOG_H
#define AMPSHIM_LOG_H

#include <stdio.h>

#include "loader/loader.h"

enum amp_log_level { AMP_LOG_OFF, AMP_LOG_ERROR, AMP_LOG_WARN, AMP_LOG_INFO, AMP_LOG_DEBUG };

void amp_log_set_level(enum amp_log_level level);
/* NULL means stderr. */
void amp_log_set_stream(FILE *stream);
/* Log to this file instead of stderr, opened (amp_open_output) at the first
 * line written, so a process that logs nothing creates nothing. */
void amp_log_set_path(const char *path);

/* Holds the lines logged from now on (up to 32) instead of writing them,
 * until amp_log_release_held: the shim's warnings about its variables are
 * written only by a process that makes a hooked call, not by every child
 * that inherits LD_PRELOAD (sh, ls, grep). */
void amp_log_hold(void);
/* Forgets the held warnings (a copy of the shim that stays inert: the
 * active copy says them). */
void amp_log_drop_held(void);
void amp_log_release_held(void);

/* Opens a file ampshim writes to (the log, the report) the safe way: never
 * through a symbolic link (O_NOFOLLOW), never blocking (a FIFO with no
 * reader fails at once, and any FIFO, socket or directory is refused),
 * appending, close-on-exec, created 0600 if new. Returns a stream, or NULL
 * with a one-line reason in why. */
FILE *amp_open_output(const char *path, char *why, size_t whylen);
enum amp_log_level amp_log_level_get(void);
void amp_log(enum amp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An explicit request (runtime/decide.h) for hook in dtype that cannot be
 * honoured here: one warning per hook and dtype, saying why and that the
 * call runs as made. */
void amp_refuse_explicit(int hook, int dtype, const char *why);

/* fork's share: the log's lock. */
void amp_log_atfork(enum amp_fork_phase phase);

#endif
