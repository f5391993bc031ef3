/* The values of the settings, as both the environment (runtime/config.c)
 * and ampctl read them: strict (trailing garbage rejected), each bad value
 * with its reason in one line. */
#include "runtime/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The index of s in the NULL-terminated words (any case), or -1. */
int amp_parse_word(const char *s, const char *const *words)
{
    for (int i = 0; words[i]; i++)
        if (strcasecmp(s, words[i]) == 0)
            return i;
    return -1;
}

int amp_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on", NULL};
    static const char *const no[] = {"0", "false", "no", "off", NULL};
    if (amp_parse_word(s, yes) >= 0)
        *out = 1;
    else if (amp_parse_word(s, no) >= 0)
        *out = 0;
    else
        return -1;
    return 0;
}

int amp_parse_dtype(const char *s, enum amp_lowp_dtype *out)
{
    static const struct {
        const char *name;
        enum amp_lowp_dtype dtype;
    } names[] = {{"bf16", AMP_DTYPE_BF16}, {"bfloat16", AMP_DTYPE_BF16},
                 {"fp16", AMP_DTYPE_FP16}, {"float16", AMP_DTYPE_FP16},
                 {"half", AMP_DTYPE_FP16}, {"tf32", AMP_DTYPE_TF32}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            *out = names[i].dtype;
            return 0;
        }
    return -1;
}

/* One of `words` (any case), or -1 with "'V' is not EXPECTED" in err. */
int amp_parse_choice(const char *v, const char *const *words, const char *expected, char *err,
                     size_t errlen)
{
    int i = amp_parse_word(v, words);
    if (i < 0)
        snprintf(err, errlen, "'%s' is not %s", v, expected);
    return i;
}

const char *const amp_output_names[3] = {"keep", "round", NULL};

int amp_parse_output(const char *s, char *err, size_t errlen)
{
    return amp_parse_choice(s, amp_output_names, "keep or round", err, errlen);
}

const char *const amp_cpu_kernel_names[AMP_CPU_KERNEL_COUNT + 1] = {"auto", "native", "emulate",
                                                                    NULL};

int amp_parse_cpu_kernel(const char *s, char *err, size_t errlen)
{
    return amp_parse_choice(s, amp_cpu_kernel_names, "auto, native or emulate", err, errlen);
}

const char *const amp_cuda_timing_names[AMP_CUDA_TIMING_COUNT + 1] = {"off", "events", "cupti",
                                                                      NULL};

const char *const amp_audit_mode_names[AMP_AUDIT_MODE_COUNT + 1] = {"off", "on", "follow", "auto",
                                                                    NULL};

int amp_parse_audit_mode(const char *s, char *err, size_t errlen)
{
    int on;
    if (amp_parse_bool(s, &on) == 0)
        return on ? AMP_AUDIT_ON : AMP_AUDIT_OFF;
    return amp_parse_choice(s, amp_audit_mode_names, "0, 1, follow or auto", err, errlen);
}

uint32_t amp_parse_audit_sample(const char *s, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    unsigned long long n = isdigit((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
    if (!isdigit((unsigned char)*s) || errno || *end || n < 1 || n > (1ull << 31)) {
        snprintf(err, errlen, "'%s' is not a whole number from 1 to 2147483648", s);
        return 0;
    }
    return (uint32_t)n;
}

double amp_parse_audit_tolerance(const char *s, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !(x > 0.0) || !(x < 1e30)) {
        snprintf(err, errlen, "'%s' is not a positive number", s);
        return -1.0;
    }
    return x;
}

double amp_parse_spread_loss(const char *s, char *err, size_t errlen)
{
    if (strcmp(s, "off") == 0)
        return 0.0;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !(x >= 0.0) || !(x < 1e30)) {
        snprintf(err, errlen, "'%s' is not off or a number from 0 (off)", s);
        return -1.0;
    }
    return x;
}

int64_t amp_parse_mib(const char *s, char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    unsigned long long n = isdigit((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
    int ok = isdigit((unsigned char)*s) && !errno;
    if (ok && (*end == 'G' || *end == 'g') && n <= 64) {
        n *= 1024;
        end++;
    } else if (ok && (*end == 'M' || *end == 'm')) {
        end++;
    }
    if (!ok || *end || n > AMP_MIB_MAX) {
        snprintf(err, errlen, "'%s' is not a size in MiB from 0 to 65536 (a number, or 512M, 2G)",
                 s);
        return -1;
    }
    return (int64_t)n;
}

int64_t amp_parse_lower_min(const char *s, char *err, size_t errlen)
{
    if (strcasecmp(s, "auto") == 0)
        return AMP_LOWER_MIN_AUTO;
    char *end = NULL;
    errno = 0;
    unsigned long long n = isdigit((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
    int ok = isdigit((unsigned char)*s) && !errno;
    if (ok && strcmp(end, "^3") == 0 && n < 2000000) {
        n = n * n * n;
        end += 2;
    }
    if (!ok || *end || n >= AMP_LOWER_MIN_AUTO) {
        snprintf(err, errlen,
                 "'%s' is not auto, a whole number of multiply-adds below 4294967295 or a cube "
                 "such as 96^3",
                 s);
        return -1;
    }
    return (int64_t)n;
}
