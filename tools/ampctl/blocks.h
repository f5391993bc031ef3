/* ampctl's access to other processes (tools/ampctl/blocks.c). */
#ifndef AMPCTL_BLOCKS_H
#define AMPCTL_BLOCKS_H

#include <stddef.h>

#include "runtime/control.h"

/* A process or thread id: digits only, within pid_t (a larger number is no
 * id at all, not the largest one); -1 when s is none. */
long ampctl_parse_pid(const char *s);

/* Maps PID's control block, checked (owned by this user with mode 0600, of
 * this layout, naming PID), read-only or writable: NULL with a reason in
 * why. */
struct amp_ctl_block *ampctl_open_block(long pid, int writable, char *why, size_t whylen);
void ampctl_close_block(struct amp_ctl_block *b);

/* A process's command line, its arguments joined by spaces (control
 * characters shown as '?'), cut at size - 1; "" when it cannot be read. */
void ampctl_command_line(long pid, char *out, size_t size);

#endif
