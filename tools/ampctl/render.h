/* ampctl's views of a control block: tables for people, JSON for tools.
 * Everything read from the block is treated as untrusted (another process
 * wrote it): names are printed with a bounded width and escaped, enum values
 * are range-checked. */
#ifndef AMPCTL_RENDER_H
#define AMPCTL_RENDER_H

#include <stdio.h>

#include "runtime/control.h"

void ampctl_render_status(FILE *out, const struct amp_ctl_block *b, int json);
void ampctl_render_stats(FILE *out, const struct amp_ctl_block *b, int json);
/* One line (or JSON object) for `ampctl ps`. */
void ampctl_render_ps_row(FILE *out, const struct amp_ctl_block *b, int alive, int json, int first);

/* s as a JSON string, quotes included: quote, backslash, control
 * characters and bytes above 0x7e escaped (\u00XX), so the output is valid
 * JSON and ASCII whatever the bytes were. */
void ampctl_json_string(FILE *out, const char *s);

#endif
