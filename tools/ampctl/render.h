/* ampctl's views of a control block: tables for people, JSON for tools.
 * Everything read from the block is treated as untrusted (another process
 * wrote it): names are printed with a bounded width and escaped, enum values
 * are range-checked. */
#ifndef AMPCTL_RENDER_H
#define AMPCTL_RENDER_H

#include <stdio.h>

#include "runtime/control.h"
#include "runtime/report.h"

void ampctl_render_status(FILE *out, const struct amp_ctl_block *b, int json);
void ampctl_render_stats(FILE *out, const struct amp_ctl_block *b, int json);
/* One line (or JSON object) for `ampctl ps`. */
/* One process of ampctl ps; command: its command line (arguments joined by
 * spaces), "" when it cannot be read. */
void ampctl_render_ps_row(FILE *out, const struct amp_ctl_block *b, int alive, int json, int first,
                          const char *command);

#endif
