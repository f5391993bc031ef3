/* The exit report (AMPSHIM_REPORT): per hooked symbol, what the policy said
 * and what the calls became. Printed only when asked and only when a hooked
 * call was seen. */
#ifndef AMPSHIM_REPORT_H
#define AMPSHIM_REPORT_H

#include <stdio.h>

#include "runtime/control.h"

/* Writes the report table to out; returns the number of symbols listed. */
int amp_report_write(FILE *out);

/* The GPU time of block b's hooks with timed CUDA calls
 * (AMPSHIM_CUDA_TIMING): per symbol, the calls timed and the mean
 * microseconds per timed call, lowered and as made, and the ratio of the
 * two means. A table after a title line, or with json a JSON array (the
 * caller writes the key). Returns the number of symbols written. */
int amp_report_gpu_time(FILE *out, const struct amp_ctl_block *b, int json);

/* The wall time of block b's CPU hooks' timed calls
 * (AMPSHIM_CPU_TIMING_SAMPLE): per symbol, the calls timed, the mean
 * microseconds per timed call and the rate (GFLOP/s), lowered and as made;
 * then one line on what lowering bought: the lowered calls' estimated time
 * against the same symbols' as-made rate, where both were seen. A table, or
 * with json a JSON object (the caller writes the key). Returns the number
 * of symbols written. */
int amp_report_cpu_time(FILE *out, const struct amp_ctl_block *b, int json);

/* s as a JSON string, quotes included: quote, backslash, control
 * characters and bytes above 0x7e escaped (\u00XX), so the output is valid
 * JSON and ASCII whatever the bytes were. ampctl's and the audit's. */
void amp_json_string(FILE *out, const char *s);

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
