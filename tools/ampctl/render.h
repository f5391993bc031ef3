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
/* ampctl ps's table: its header (in JSON an array), then one row per
 * process; command: its command line (arguments joined by spaces), ""
 * when it cannot be read. The caller ends it with amp_emit_end_table. */
void ampctl_render_ps_begin(struct amp_emitter *e, struct amp_emit_table *t);
void ampctl_render_ps_row(struct amp_emitter *e, struct amp_emit_table *t,
                          const struct amp_ctl_block *b, int alive, const char *command);

#endif
