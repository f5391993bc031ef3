/* The control names, jemalloc-style dotted names over a control block, shared
 * by ampctl (on another process's block) and ampshim_ctl (on the process's
 * own). Values travel as text here; ampshim_ctl types them.
 *
 *   opt.*                      the settings with a control name
 *                              (runtime/settings.h; `ampctl settings` lists them)
 *   policy.<cpu|cuda>.<op>     rw  lower, fp32, promote, passthrough, or default
 *                                  (<op> may be a pattern, for a write)
 *   thread.<tid>.enabled       rw  1, 0 or default (follow the process)
 *   thread.<tid>.active        r   1 when autocast is on for the thread now
 *   thread.<tid>.name          r
 *   thread.<tid>.dtype         r
 *   thread.<tid>.lowered       r   calls the thread lowered
 *   stats.<symbol>.<counter>   r   calls, or a counter of counters.txt
 *   process.pid, process.exe, process.generation   r */
#ifndef AMPSHIM_CTL_NAMES_H
#define AMPSHIM_CTL_NAMES_H

#include <stddef.h>

#include "runtime/control.h"
#include "runtime/settings.h"

/* Reads NAME as text. Returns 0 or ENOENT. */
int amp_ctl_get(const struct amp_ctl_block *b, const char *name, char *out, size_t outlen,
                enum amp_ctl_type *type);

/* Writes NAME=VALUE and bumps the generation. Returns 0, ENOENT (unknown
 * name), EPERM (read-only) or EINVAL (bad value), with a reason in why. */
int amp_ctl_set(struct amp_ctl_block *b, const char *name, const char *value, char *why,
                size_t whylen);

/* The live thread slot with this tid, or NULL. */
struct amp_thread *amp_ctl_find_thread(const struct amp_ctl_block *b, long tid);

/* Sum of one counter over live threads and exited ones. */
unsigned long long amp_ctl_counter(const struct amp_ctl_block *b, int hook, int which);

#endif
