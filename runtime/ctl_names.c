/* The control names over a control block: a typed node table, one handler
 * per leaf or family, each answering a read or a write with 0 or an errno
 * value (ENOENT unknown, EPERM read-only, EINVAL bad value), as jemalloc's
 * mallctl does. The opt.* leaves are the settings table's
 * (runtime/settings.h). */
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

/* The answers every handler shares. */
static int read_only(struct amp_ctl_req *r)
{
    snprintf(r->why, r->whylen, "'%s' is read-only", r->name);
    return EPERM;
}

static int bad_value(struct amp_ctl_req *r, const char *expected)
{
    snprintf(r->why, r->whylen, "'%s' is not %s", r->value, expected);
    return EINVAL;
}

static int unknown(struct amp_ctl_req *r)
{
    snprintf(r->why, r->whylen, "unknown name '%s'", r->name);
    return ENOENT;
}

#define READ_ONLY(r)                                                                               \
    do {                                                                                           \
        if ((r)->value)                                                                            \
            return read_only(r);                                                                   \
    } while (0)

static int u64_out(struct amp_ctl_req *r, unsigned long long v)
{
    snprintf(r->out, r->outlen, "%llu", v);
    r->type = AMP_CTL_T_U64;
    return 0;
}

/* ---- process.* ---- */

static int ctl_pid(struct amp_ctl_req *r)
{
    READ_ONLY(r);
    snprintf(r->out, r->outlen, "%lld", (long long)r->b->pid);
    r->type = AMP_CTL_T_U64;
    return 0;
}

static int ctl_exe(struct amp_ctl_req *r)
{
    READ_ONLY(r);
    snprintf(r->out, r->outlen, "%.*s", (int)sizeof r->b->exe, r->b->exe);
    return 0;
}

static int ctl_generation(struct amp_ctl_req *r)
{
    READ_ONLY(r);
    return u64_out(r, (unsigned long long)atomic_load(&r->b->generation));
}

/* ---- policy.<device>.<op> ---- */

static int policy_value(const char *value)
{
    return strcasecmp(value, "default") == 0 ? (int)AMP_CTL_POLICY_NONE
                                             : amp_category_from_name(value);
}

static const char *const policy_expected = "lower, fp32, promote, passthrough or default";

static int ctl_policy(struct amp_ctl_req *r, const char *device, const char *op_name)
{
    int dev = device_of(device), op = amp_op_from_name(op_name);
    if (dev >= 0 && r->value && op < 0 && amp_policy_is_pattern(op_name)) {
        /* A pattern: every op it matches. */
        int cat = policy_value(r->value);
        if (cat < 0)
            return bad_value(r, policy_expected);
        int matched = 0;
        for (int o = 0; o < AMP_OP_COUNT; o++)
            if (fnmatch(op_name, amp_op_names[o], 0) == 0) {
                atomic_store(&r->b->policy[dev][o], (uint8_t)cat);
                matched++;
            }
        if (!matched) {
            snprintf(r->why, r->whylen, "'%s' matches no op", op_name);
            return ENOENT;
        }
        return 0;
    }
    if (dev < 0 || op < 0)
        return unknown(r);
    if (!r->value) {
        uint8_t c = atomic_load(&r->b->policy[dev][op]);
        snprintf(r->out, r->outlen, "%s", c < AMP_CAT_COUNT ? amp_category_names[c] : "default");
        return 0;
    }
    int cat = policy_value(r->value);
    if (cat < 0)
        return bad_value(r, policy_expected);
    atomic_store(&r->b->policy[dev][op], (uint8_t)cat);
    return 0;
}

/* ---- thread.<tid>.<leaf> ---- */

static int ctl_thread(struct amp_ctl_req *r, const char *tid_text, const char *leaf)
{
    long tid = parse_tid(tid_text);
    struct amp_thread *th = amp_ctl_find_thread(r->b, tid);
    if (!th)
        return unknown(r);
    if (strcmp(leaf, "enabled") == 0) {
        const struct amp_setting *want = amp_setting_by_ctl("opt.enabled");
        if (!r->value) {
            uint32_t w = atomic_load(&th->want);
            snprintf(r->out, r->outlen, "%s", w < want->limit ? want->names[w] : "?");
            r->type = AMP_CTL_T_BOOL;
            return 0;
        }
        int64_t w = want->parse(r->value, r->why, r->whylen);
        if (w < 0)
            return EINVAL;
        /* The thread may have ended since the name was looked up, and its
         * slot may be taken by another thread right after the store. */
        atomic_store(&th->want, (uint32_t)w);
        if (atomic_load(&th->tid) != tid) {
            atomic_store(&th->want, AMP_CTL_FOLLOW);
            snprintf(r->why, r->whylen, "thread %ld has ended", tid);
            return ENOENT;
        }
        return 0;
    }
    if (strcmp(leaf, "active") == 0) {
        READ_ONLY(r);
        snprintf(r->out, r->outlen, "%d", th->selected ? 1 : 0);
        r->type = AMP_CTL_T_BOOL;
    } else if (strcmp(leaf, "name") == 0) {
        READ_ONLY(r);
        snprintf(r->out, r->outlen, "%.*s", (int)sizeof th->name, th->name);
    } else if (strcmp(leaf, "dtype") == 0) {
        READ_ONLY(r);
        snprintf(r->out, r->outlen, "%s", dtype_text(atomic_load(&th->dtype)));
    } else if (strcmp(leaf, amp_ctl_counter_names[AMP_CTL_LOWERED]) == 0) {
        READ_ONLY(r);
        unsigned long long n = 0;
        for (int h = 0; h < AMP_HOOK_COUNT; h++)
            n += atomic_load_explicit(&th->counters[h][AMP_CTL_LOWERED], memory_order_relaxed);
        return u64_out(r, n);
    } else {
        return unknown(r);
    }
    return 0;
}

/* ---- stats.<symbol>.<counter> ---- */

static int ctl_stats(struct amp_ctl_req *r, const char *symbol, const char *counter)
{
    int hook = amp_hook_from_name(symbol), which = -1;
    for (int i = 0; i < AMP_CTL_COUNTERS; i++)
        if (strcmp(counter, amp_ctl_counter_names[i]) == 0)
            which = i;
    if (hook < 0 || (which < 0 && strcmp(counter, "calls") != 0))
        return unknown(r);
    READ_ONLY(r);
    unsigned long long n = 0;
    if (which >= 0)
        n = amp_ctl_counter(r->b, hook, which);
    else
        for (int i = 0; i < AMP_CTL_COUNTERS; i++)
            n += amp_ctl_counter_is_outcome[i] ? amp_ctl_counter(r->b, hook, i) : 0;
    return u64_out(r, n);
}

/* The node table: leaves by full name, families by prefix (their handlers
 * get the two parts after it). The opt.* leaves come from the settings. */
static const struct {
    const char *name;
    amp_ctl_leaf leaf;
} leaves[] = {
    {"process.pid", ctl_pid},
    {"process.exe", ctl_exe},
    {"process.generation", ctl_generation},
};

static const struct {
    const char *prefix;
    int (*family)(struct amp_ctl_req *r, const char *middle, const char *last);
} families[] = {
    {"policy.", ctl_policy},
    {"thread.", ctl_thread},
    {"stats.", ctl_stats},
};

static int request(struct amp_ctl_req *r)
{
    const struct amp_setting *s = amp_setting_by_ctl(r->name);
    if (s)
        return amp_setting_ctl(s, r);
    for (size_t i = 0; i < sizeof leaves / sizeof *leaves; i++)
        if (strcmp(r->name, leaves[i].name) == 0)
            return leaves[i].leaf(r);
    char middle[64];
    const char *last;
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (split_node(r->name, families[i].prefix, middle, sizeof middle, &last) == 0)
            return families[i].family(r, middle, last);
    return unknown(r);
}

int amp_ctl_get(const struct amp_ctl_block *b, const char *name, char *out, size_t outlen,
                enum amp_ctl_type *type)
{
    char why[16];
    struct amp_ctl_req r = {.b = (struct amp_ctl_block *)b,
                            .name = name,
                            .out = out,
                            .outlen = outlen,
                            .type = AMP_CTL_T_STRING,
                            .why = why,
                            .whylen = sizeof why};
    int rc = request(&r);
    if (rc == 0 && type)
        *type = r.type;
    return rc;
}

int amp_ctl_set(struct amp_ctl_block *b, const char *name, const char *value, char *why,
                size_t whylen)
{
    char out[64];
    struct amp_ctl_req r = {.b = b,
                            .name = name,
                            .value = value,
                            .out = out,
                            .outlen = sizeof out,
                            .why = why,
                            .whylen = whylen};
    int rc = request(&r);
    if (rc == 0)
        atomic_fetch_add_explicit(&b->generation, 1, memory_order_release);
    return rc;
}
