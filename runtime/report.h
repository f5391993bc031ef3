/* The exit report (AMPSHIM_REPORT): per hooked symbol, what the policy said
 * and what the calls became. Printed only when asked and only when a hooked
 * call was seen. */
#ifndef AMPSHIM_REPORT_H
#define AMPSHIM_REPORT_H

#include <stdio.h>

#include "runtime/control.h"
#include "runtime/emit.h"

/* Writes the report table to out; returns the number of symbols listed. */
int amp_report_write(FILE *out);

/* The table of counters per hooked symbol (the report's, and ampctl
 * stats'): symbol, op, the policy's category where policy is set, calls,
 * then every counter (runtime/ctl_names.h); symbol_width wide names. */
struct amp_counter_table {
    struct amp_emit_col cols[4 + AMP_CTL_COUNTERS];
    struct amp_emit_table t;
    int policy;
};
_Static_assert(4 + (int)AMP_CTL_COUNTERS <= (int)AMP_EMIT_MAX_COLS,
               "the counters table fits the emitter");
void amp_counter_table_begin(struct amp_emitter *e, struct amp_counter_table *ct, int symbol_width,
                             int policy, const char *key);
void amp_counter_table_row(struct amp_emitter *e, struct amp_counter_table *ct, const char *symbol,
                           const char *op, const char *policy, const uint64_t c[AMP_CTL_COUNTERS]);

/* The GPU time of block b's hooks with timed CUDA calls
 * (AMPSHIM_CUDA_TIMING): per symbol, the calls timed and the mean
 * microseconds per timed call, lowered and as made, and the ratio of the
 * two means. A table after a title line; in JSON an array under key.
 * Returns the number of symbols written. */
int amp_report_gpu_time(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key);

/* The time of block b's CPU hooks' timed calls (AMPSHIM_CPU_TIMING_SAMPLE):
 * per symbol, the calls timed, the mean microseconds per timed call and
 * the rate (GFLOP/s), lowered and as made; the same per call site; the pay
 * checks' table; then one line on what lowering bought. In JSON an object
 * under key. Returns the number of symbols written. */
int amp_report_cpu_time(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key);

/* Copies a path with %p replaced by the process id. */
void amp_report_expand_path(const char *in, char *out, size_t outlen);

/* Writes text where AMPSHIM_REPORT says: its file, or standard error (also
 * when the report is off: the audit's report goes there then). */
void amp_report_emit(const char *text, size_t len);

/* The report's CPU line (what this CPU can do for the CPU dtype, in
 * words), written by the CPU executor (shim/blas/blas_native.c), which
 * registers it at load: the runtime calls nothing upward. */
void amp_report_set_cpu_verdict(void (*verdict)(FILE *out));

/* This CPU's model and the flags that matter for lowering (avx2, f16c,
 * avx512_bf16, amx_bf16, ...), from /proc/cpuinfo, as one short text. */
void amp_cpu_flags_text(char *buf, size_t len);

/* A line for the report, after the CPU lines (up to 8 per process; more
 * are dropped): what a wing could not see or reached, in one line. The
 * report is written when a note was made even if no hooked call was seen. */
void amp_report_note(const char *line);

/* Writes the report where AMPSHIM_REPORT says, if a hooked call was seen
 * or a note made. */
void amp_report_print(void);

#endif
