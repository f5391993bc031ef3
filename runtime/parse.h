/* The values of the settings (runtime/parse.c): the parsers the
 * environment (runtime/config.c), ampctl and the tests share. */
#ifndef AMPSHIM_PARSE_H
#define AMPSHIM_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/config.h"

/* The index of s in the NULL-terminated words (any case), or -1. */
int amp_parse_word(const char *s, const char *const *words);
/* One of `words` (any case), or -1 with "'V' is not EXPECTED" in err. */
int amp_parse_choice(const char *v, const char *const *words, const char *expected, char *err,
                     size_t errlen);
/* Small parsers shared with the tests. */
int amp_parse_bool(const char *s, int *out);
int amp_parse_dtype(const char *s, enum amp_lowp_dtype *out);
/* The settings both the environment and ampctl set: each returns the value,
 * or -1 (0 for the sample) with the reason in err, one line. */
int amp_parse_output(const char *s, char *err, size_t errlen);             /* 0 keep, 1 round */
extern const char *const amp_output_names[3];                              /* NULL-ended */
int amp_parse_cpu_kernel(const char *s, char *err, size_t errlen);         /* enum amp_cpu_kernel */
int amp_parse_audit_mode(const char *s, char *err, size_t errlen);         /* enum amp_audit_mode */
uint32_t amp_parse_audit_sample(const char *s, char *err, size_t errlen);  /* 1 .. 2^31 */
double amp_parse_audit_tolerance(const char *s, char *err, size_t errlen); /* 0 < x < 1e30 */
double amp_parse_spread_loss(const char *s, char *err, size_t errlen); /* off: 0; 0 <= x < 1e30 */
/* AMPSHIM_CUDA_POOL_KEEP: MiB as a whole number, or with a unit M or G
 * ("512M", "2G"), at most 65536; -1 when bad. */
int64_t amp_parse_mib(const char *s, char *err, size_t errlen);

/* AMPSHIM_LOWER_MIN: "auto", a whole number of multiply-adds or a cube
 * ("96^3"), below AMP_LOWER_MIN_AUTO; -1 when bad. */
int64_t amp_parse_lower_min(const char *s, char *err, size_t errlen);

#endif
