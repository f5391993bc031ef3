/* Logging: every line starts "ampshim: ", goes to stderr or AMPSHIM_LOG_FILE,
 * and is filtered by AMPSHIM_LOG. The shim is silent unless something is wrong
 * or the user asked. */
#ifndef AMPSHIM_LOG_H
#define AMPSHIM_LOG_H

#include <stdio.h>

enum amp_log_level { AMP_LOG_OFF, AMP_LOG_ERROR, AMP_LOG_WARN, AMP_LOG_INFO, AMP_LOG_DEBUG };

void amp_log_set_level(enum amp_log_level level);
/* NULL means stderr. */
void amp_log_set_stream(FILE *stream);
enum amp_log_level amp_log_level_get(void);
void amp_log(enum amp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
