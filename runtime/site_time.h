/* CPU time per call site (AMPSHIM_CPU_TIMING_SAMPLE): the timed calls of
 * the CPU hooks (BLAS and oneDNN primitives), attributed to where they come
 * from: the call sites of runtime/sites.h, which the audit names too. Kept in the control block (amp_ctl_block.cpu_site),
 * so the exit report and ampctl stats show it live, audit on or off. Only
 * the timed calls (one in N) come here. */
#ifndef AMPSHIM_SITE_TIME_H
#define AMPSHIM_SITE_TIME_H

#include <stdint.h>
#include <stdio.h>

#include "runtime/control.h"
#include "runtime/threads.h"

/* A timed call of hook from return_address: its wall time and flops (0:
 * not known), lowered or as made. */
void amp_site_time_record(void *return_address, enum amp_hook_id hook, uint64_t flops, uint64_t ns,
                          int lowered);

/* The table of a block, by time spent, largest first: text (its heading
 * included) or a JSON array. Returns the rows written. */
int amp_site_time_write(FILE *out, const struct amp_ctl_block *b, int json);

/* fork's share: the rows' lock (the child's block starts empty, and
 * runtime/sites.c forgets the sites' rows). */
void amp_site_time_atfork(enum amp_fork_phase phase);

#endif
