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
#include "runtime/emit.h"
#include "runtime/sites.h"
#include "runtime/threads.h"

/* A timed call of hook from return_address: its wall time and flops (0:
 * not known), lowered or as made. */
void amp_site_time_record(void *return_address, enum amp_hook_id hook, uint64_t flops, uint64_t ns,
                          int lowered);

/* The columns of a row of timed calls' figures (AMP_CPU_TIME_FIELDS):
 * calls timed, microseconds per call and GFLOP/s (text), ns and flops
 * (JSON), lowered then as made; the per-symbol and per-site tables' own. */
enum { AMP_TIME_COLS = 10 };
extern const struct amp_emit_col amp_time_cols[AMP_TIME_COLS];
void amp_time_vals(struct amp_emit_val *vals, const uint64_t t[AMP_CPU_TIME_FIELDS]);

/* The table of a block (b may be NULL), by time spent, largest first
 * (its title included; in JSON an array under key). Returns the rows
 * written. */
int amp_site_time_write(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key);

/* ---- did lowering pay? ----
 *
 * A pay check is a lowered call also run as made, its output thrown away
 * (shim/blas/blas_audit.c), both runs timed in the process's CPU time. A
 * call site's native lowered calls are counted per size class
 * (amp_cpu_time_class), and the class's 32nd, 64th and 128th calls and
 * every 1024th after are checked (or the next that can be), so a check costs at most a few percent
 * of what the class's calls took (none for a class of fewer than 32 calls);
 * AMPSHIM_CPU_TIMING_SAMPLE=0 turns them off. Each check votes: pays (as
 * made took AMPSHIM_AUDIT_MIN_SPEEDUP times as long or more), costs (as
 * made took at most its inverse) or even; the last three votes give the
 * class's verdict: all pays, pays; all costs, costs; else mixed (the size
 * rule's decision stands). The report and ampctl stats show the time saved
 * or lost, estimated per class from the checks' rates. */
enum amp_pay_vote { AMP_PAY_VOTE_NONE, AMP_PAY_VOTE_PAYS, AMP_PAY_VOTE_COSTS, AMP_PAY_VOTE_EVEN };
enum amp_pay_verdict { AMP_PAY_UNKNOWN, AMP_PAY_PAYS, AMP_PAY_COSTS, AMP_PAY_MIXED };
extern const char *const amp_pay_verdict_names[4];
#define AMP_PAY_FIRST 32u   /* a class's first check, then at 2x and 4x */
#define AMP_PAY_EVERY 1024u /* then every this many calls */
#define AMP_PAY_VOTES 3     /* the votes that must agree */

/* A native lowered call of site where, of `flops`: counted in its class;
 * returns whether it is one to check. */
int amp_pay_due(const struct amp_site *where, double flops);

/* A pay check's two runs (process CPU ns): added to the class, its vote
 * cast; returns the class's verdict (unsettled before AMP_PAY_VOTES
 * checks). A check with a run of 0 ns is counted as taken (the schedule
 * moves on) with no vote: its lowered run generated its kernel. */
enum amp_pay_verdict amp_pay_record(const struct amp_site *where, double flops, uint64_t ns_lowered,
                                    uint64_t ns_made);

/* The block's pay checks by call site and class (b may be NULL), its
 * title and the run's total line included; in JSON an object under key.
 * Returns the rows written. */
int amp_pay_write(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key);

/* fork's share: the rows' lock (the child's block starts empty, and
 * runtime/sites.c forgets the sites' rows). */
void amp_site_time_atfork(enum amp_fork_phase phase);

#endif
