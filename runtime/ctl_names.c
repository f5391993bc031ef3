/* The control names over a control block: one small handler per node, each
 * returning 0 or an errno value (ENOENT unknown, EPERM read-only, EINVAL bad
 * value), as jemalloc's mallctl does. */
#include "runtime/ctl_names.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/dtype.h"
#include "policy/policy.h"
#include "runtime/config.h"

static int parse_want(const char *v, uint32_t *out)
{
    int on;
    if (strcasecmp(v, "default") == 0) {
        *out = AMP_CTL_FOLLOW;
        return 0;
    }
    if (amp_parse_bool(v, &on) < 0)
        return -1;
    *out = on ? AMP_CTL_ON : AMP_CTL_OFF;
    return 0;
}

static const char *want_text(uint32_t w)
{
    return w == AMP_CTL_ON ? "1" : w == AMP_CTL_OFF ? "0" : "default";
}

static const char *dtype_text(uint32_t d)
{
    return d < AMP_DTYPE_COUNT ? amp_dtype_names[d] : "?";
}

struct amp_thread *amp_ctl_find_thread(const struct amp_ctl_block *b, long tid)
{
    if (tid <= 0)
        return NULL;
    for (int i = 0; i < AMP_CTL_MAX_THREADS; i++)
        if (atomic_load_explicit(&b->threads[i].tid, memory_order_relaxed) == tid)
            return (struct amp_thread *)&b->threads[i];
    return NULL;
}

unsigned long long amp_ctl_counter(const struct amp_ctl_block *b, int hook, int which)
{
    unsigned long long sum = atomic_load_explicit(&b->exited[hook][which], memory_order_relaxed);
    for (int i = 0; i < AMP_CTL_MAX_THREADS; i++)
        if (atomic_load_explicit(&b->threads[i].tid, memory_order_relaxed))
            sum += atomic_load_explicit(&b->threads[i].counters[hook][which], memory_order_relaxed);
    return sum;
}

/* Splits "a.b.c" after the given prefix: the middle part and the last. */
static int split_node(const char *name, const char *prefix, char *middle, size_t midlen,
                      const char **last)
{
    size_t plen = strlen(prefix);
    if (strncmp(name, prefix, plen) != 0)
        return -1;
    const char *rest = name + plen, *dot = strrchr(rest, '.');
    if (!dot || dot == rest || (size_t)(dot - rest) >= midlen || !dot[1])
        return -1;
    memcpy(middle, rest, (size_t)(dot - rest));
    middle[dot - rest] = '\0';
    *last = dot + 1;
    return 0;
}

static int device_of(const char *s)
{
    return strcmp(s, "cpu") == 0 ? AMP_DEVICE_CPU : strcmp(s, "cuda") == 0 ? AMP_DEVICE_CUDA : -1;
}

static long parse_tid(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v > 0 ? v : -1;
}

int amp_ctl_get(const struct amp_ctl_block *b, const char *name, char *out, size_t outlen,
                enum amp_ctl_type *type)
{
    enum amp_ctl_type t = AMP_CTL_T_STRING;
    char mid[64];
    const char *last;
    if (strcmp(name, "opt.enabled") == 0) {
        snprintf(out, outlen, "%s", want_text(atomic_load(&b->enabled)));
        t = AMP_CTL_T_BOOL;
    } else if (strcmp(name, "opt.dtype") == 0 || strcmp(name, "opt.cpu_dtype") == 0) {
        snprintf(out, outlen, "%s", dtype_text(atomic_load(&b->dtype[AMP_DEVICE_CPU])));
    } else if (strcmp(name, "opt.cuda_dtype") == 0) {
        snprintf(out, outlen, "%s", dtype_text(atomic_load(&b->dtype[AMP_DEVICE_CUDA])));
    } else if (strcmp(name, "opt.output") == 0) {
        snprintf(out, outlen, "%s", atomic_load(&b->output_round) ? "round" : "keep");
    } else if (strcmp(name, "opt.cpu_kernel") == 0) {
        uint32_t k = atomic_load(&b->cpu_kernel);
        snprintf(out, outlen, "%s", k < AMP_CPU_KERNEL_COUNT ? amp_cpu_kernel_names[k] : "?");
    } else if (strcmp(name, "opt.audit") == 0) {
        uint32_t a = atomic_load(&b->audit);
        snprintf(out, outlen, "%s", a < AMP_AUDIT_MODE_COUNT ? amp_audit_mode_names[a] : "?");
    } else if (strcmp(name, "opt.audit_sample") == 0) {
        snprintf(out, outlen, "%u", (unsigned)atomic_load(&b->audit_sample));
        t = AMP_CTL_T_U64;
    } else if (strcmp(name, "process.pid") == 0) {
        snprintf(out, outlen, "%lld", (long long)b->pid);
        t = AMP_CTL_T_U64;
    } else if (strcmp(name, "process.exe") == 0) {
        snprintf(out, outlen, "%.*s", (int)sizeof b->exe, b->exe);
    } else if (strcmp(name, "process.generation") == 0) {
        snprintf(out, outlen, "%llu", (unsigned long long)atomic_load(&b->generation));
        t = AMP_CTL_T_U64;
    } else if (split_node(name, "policy.", mid, sizeof mid, &last) == 0) {
        int dev = device_of(mid), op = amp_op_from_name(last);
        if (dev < 0 || op < 0)
            return ENOENT;
        uint8_t c = atomic_load(&b->policy[dev][op]);
        snprintf(out, outlen, "%s", c < AMP_CAT_COUNT ? amp_category_names[c] : "default");
    } else if (split_node(name, "thread.", mid, sizeof mid, &last) == 0) {
        const struct amp_thread *th = amp_ctl_find_thread(b, parse_tid(mid));
        if (!th)
            return ENOENT;
        if (strcmp(last, "enabled") == 0) {
            snprintf(out, outlen, "%s", want_text(atomic_load(&th->want)));
            t = AMP_CTL_T_BOOL;
        } else if (strcmp(last, "active") == 0) {
            snprintf(out, outlen, "%d", th->selected ? 1 : 0);
            t = AMP_CTL_T_BOOL;
        } else if (strcmp(last, "name") == 0) {
            snprintf(out, outlen, "%.*s", (int)sizeof th->name, th->name);
        } else if (strcmp(last, "dtype") == 0) {
            snprintf(out, outlen, "%s", dtype_text(atomic_load(&th->dtype)));
        } else if (strcmp(last, amp_ctl_counter_names[AMP_CTL_LOWERED]) == 0) {
            unsigned long long n = 0;
            for (int h = 0; h < AMP_HOOK_COUNT; h++)
                n += atomic_load_explicit(&th->counters[h][AMP_CTL_LOWERED], memory_order_relaxed);
            snprintf(out, outlen, "%llu", n);
            t = AMP_CTL_T_U64;
        } else {
            return ENOENT;
        }
    } else if (split_node(name, "stats.", mid, sizeof mid, &last) == 0) {
        int hook = amp_hook_from_name(mid), which = -1;
        for (int i = 0; i < AMP_CTL_COUNTERS; i++)
            if (strcmp(last, amp_ctl_counter_names[i]) == 0)
                which = i;
        if (hook < 0 || (which < 0 && strcmp(last, "calls") != 0))
            return ENOENT;
        unsigned long long n = 0;
        if (which >= 0)
            n = amp_ctl_counter(b, hook, which);
        else
            for (int i = 0; i < AMP_CTL_COUNTERS; i++)
                n += amp_ctl_counter_is_outcome[i] ? amp_ctl_counter(b, hook, i) : 0;
        snprintf(out, outlen, "%llu", n);
        t = AMP_CTL_T_U64;
    } else {
        return ENOENT;
    }
    if (type)
        *type = t;
    return 0;
}

static int bad(char *why, size_t whylen, const char *fmt, const char *value)
{
    snprintf(why, whylen, fmt, value);
    return EINVAL;
}

static int policy_value(const char *value)
{
    return strcasecmp(value, "default") == 0 ? (int)AMP_CTL_POLICY_NONE
                                             : amp_category_from_name(value);
}

/* policy.<device>.<pattern>: every op the pattern matches. */
static int set_policy_pattern(struct amp_ctl_block *b, int dev, const char *pattern,
                              const char *value, char *why, size_t whylen)
{
    int cat = policy_value(value);
    if (cat < 0)
        return bad(why, whylen, "'%s' is not lower, fp32, promote, passthrough or default", value);
    int matched = 0;
    for (int op = 0; op < AMP_OP_COUNT; op++)
        if (fnmatch(pattern, amp_op_names[op], 0) == 0) {
            atomic_store(&b->policy[dev][op], (uint8_t)cat);
            matched++;
        }
    if (!matched) {
        snprintf(why, whylen, "'%s' matches no op", pattern);
        return ENOENT;
    }
    atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
    return 0;
}

int amp_ctl_set(struct amp_ctl_block *b, const char *name, const char *value, char *why,
                size_t whylen)
{
    char probe[64], mid[64];
    const char *last;
    if (split_node(name, "policy.", mid, sizeof mid, &last) == 0 && device_of(mid) >= 0 &&
        amp_policy_is_pattern(last))
        return set_policy_pattern(b, device_of(mid), last, value, why, whylen);
    if (amp_ctl_get(b, name, probe, sizeof probe, NULL) != 0) {
        snprintf(why, whylen, "unknown name '%s'", name);
        return ENOENT;
    }
    if (strcmp(name, "opt.enabled") == 0) {
        uint32_t w;
        if (parse_want(value, &w) < 0)
            return bad(why, whylen, "'%s' is not 1, 0 or default", value);
        atomic_store(&b->enabled, w);
    } else if (strcmp(name, "opt.dtype") == 0 || strcmp(name, "opt.cpu_dtype") == 0 ||
               strcmp(name, "opt.cuda_dtype") == 0) {
        enum amp_lowp_dtype d;
        if (amp_parse_dtype(value, &d) < 0)
            return bad(why, whylen, "unknown dtype '%s' (bf16, fp16, tf32)", value);
        if (strcmp(name, "opt.cuda_dtype") != 0)
            atomic_store(&b->dtype[AMP_DEVICE_CPU], (uint32_t)d);
        if (strcmp(name, "opt.cpu_dtype") != 0)
            atomic_store(&b->dtype[AMP_DEVICE_CUDA], (uint32_t)d);
    } else if (strcmp(name, "opt.output") == 0) {
        int round = amp_parse_output(value, why, whylen);
        if (round < 0)
            return EINVAL;
        atomic_store(&b->output_round, (uint32_t)round);
    } else if (strcmp(name, "opt.cpu_kernel") == 0) {
        int k = amp_parse_cpu_kernel(value, why, whylen);
        if (k < 0)
            return EINVAL;
        atomic_store(&b->cpu_kernel, (uint32_t)k);
    } else if (strcmp(name, "opt.audit") == 0) {
        int a = amp_parse_audit_mode(value, why, whylen);
        if (a < 0)
            return EINVAL;
        atomic_store(&b->audit, (uint32_t)a);
    } else if (strcmp(name, "opt.audit_sample") == 0) {
        uint32_t n = amp_parse_audit_sample(value, why, whylen);
        if (!n)
            return EINVAL;
        atomic_store(&b->audit_sample, n);
    } else if (split_node(name, "policy.", mid, sizeof mid, &last) == 0) {
        int cat = policy_value(value);
        if (cat < 0)
            return bad(why, whylen,
                       "'%s' is not lower, fp32, promote, passthrough or default", value);
        atomic_store(&b->policy[device_of(mid)][amp_op_from_name(last)], (uint8_t)cat);
    } else if (split_node(name, "thread.", mid, sizeof mid, &last) == 0 &&
               strcmp(last, "enabled") == 0) {
        uint32_t w;
        if (parse_want(value, &w) < 0)
            return bad(why, whylen, "'%s' is not 1, 0 or default", value);
        /* The thread may have ended since the name was checked, and its
         * slot may be taken by another thread right after the store. */
        long tid = parse_tid(mid);
        struct amp_thread *th = amp_ctl_find_thread(b, tid);
        if (th)
            atomic_store(&th->want, w);
        if (!th || atomic_load(&th->tid) != tid) {
            if (th)
                atomic_store(&th->want, AMP_CTL_FOLLOW);
            snprintf(why, whylen, "thread %ld has ended", tid);
            return ENOENT;
        }
    } else {
        snprintf(why, whylen, "'%s' is read-only", name);
        return EPERM;
    }
    atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
    return 0;
}
