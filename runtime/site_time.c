/* CPU time per call site (see site_time.h): each site of runtime/sites.h
 * gets a row of the block's table at its first timed call, under a lock;
 * the site keeps its row's index, so later calls take no lock. */
#include "runtime/site_time.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/accuracy_audit.h"
#include "runtime/callers.h"
#include "runtime/report.h"
#include "runtime/sites.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The row of a call site in the block's table, made when new: index + 1,
 * or -1 when the table is full. */
static int row_of(struct amp_ctl_block *b, const struct amp_site *where)
{
    int16_t slot = atomic_load_explicit(&where->time_slot, memory_order_relaxed);
    if (slot)
        return slot;
    struct amp_quiet quiet;
    amp_lock_quietly(&lock, &quiet);
    slot = atomic_load_explicit(&where->time_slot, memory_order_relaxed);
    if (!slot) {
        uint32_t used = atomic_load_explicit(&b->cpu_sites, memory_order_relaxed);
        if (used >= AMP_CTL_CPU_SITES) {
            slot = -1;
        } else {
            struct amp_cpu_site *s = &b->cpu_site[used];
            s->hook = where->hook;
            amp_site_display(where, s->object, sizeof s->object, s->function, sizeof s->function);
            s->offset = where->offset;
            atomic_store_explicit(&s->ready, 1, memory_order_release);
            atomic_store_explicit(&b->cpu_sites, used + 1, memory_order_release);
            slot = (int16_t)(used + 1);
        }
        /* a full table's answer is kept too: the site asks no more */
        atomic_store_explicit(&((struct amp_site *)where)->time_slot, slot, memory_order_relaxed);
    }
    amp_unlock_quietly(&lock, &quiet);
    return slot;
}

void amp_site_time_record(void *return_address, enum amp_hook_id hook, uint64_t flops, uint64_t ns,
                          int lowered)
{
    struct amp_ctl_block *b = amp_ctl;
    if (!b || !return_address)
        return;
    const struct amp_site *where = amp_site_of_call(return_address, hook);
    int site = where ? row_of(b, where) : 0;
    if (site < 0) {
        atomic_fetch_add_explicit(&b->cpu_sites_dropped, 1, memory_order_relaxed);
        return;
    }
    if (site <= 0)
        return;
    amp_cpu_time_add_row(b->cpu_site[site - 1].t, ns, flops, lowered);
}

void amp_site_time_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&lock, phase);
}

/* ---- the table ---- */

struct row {
    int i;
    uint64_t t[AMP_CPU_TIME_FIELDS];
    char object[sizeof((struct amp_cpu_site *)0)->object + 1];
    char function[sizeof((struct amp_cpu_site *)0)->function + 1];
    char caller[200]; /* "object:function", or "object+0xOFFSET" */
};

static int by_time(const void *pa, const void *pb)
{
    const struct row *a = pa, *b = pb;
    uint64_t x = a->t[AMP_CPU_NS_LOWERED] + a->t[AMP_CPU_NS_MADE],
             y = b->t[AMP_CPU_NS_LOWERED] + b->t[AMP_CPU_NS_MADE];
    return x != y ? (x < y ? 1 : -1) : a->i - b->i;
}

const struct amp_emit_col amp_time_cols[AMP_TIME_COLS] = {
    {"timed lowered", "timed_lowered", 12, 0, 0, NULL},
    {"us/call low", NULL, 12, 2, 0, NULL},
    {"GFLOP/s", NULL, 9, 2, 0, NULL},
    {NULL, "ns_lowered", 0, 0, 0, NULL},
    {NULL, "flops_lowered", 0, 0, 0, NULL},
    {"timed made", "timed_made", 12, 0, 0, NULL},
    {"us/call made", NULL, 12, 2, 0, NULL},
    {"GFLOP/s", NULL, 9, 2, 0, NULL},
    {NULL, "ns_made", 0, 0, 0, NULL},
    {NULL, "flops_made", 0, 0, 0, NULL},
};

void amp_time_vals(struct amp_emit_val *v, const uint64_t t[AMP_CPU_TIME_FIELDS])
{
    for (int made = 0; made < 2; made++) {
        uint64_t timed = t[made ? AMP_CPU_TIMED_MADE : AMP_CPU_TIMED_LOWERED],
                 ns = t[made ? AMP_CPU_NS_MADE : AMP_CPU_NS_LOWERED],
                 flops = t[made ? AMP_CPU_FLOPS_MADE : AMP_CPU_FLOPS_LOWERED];
        struct amp_emit_val *w = v + 5 * made;
        w[0] = AMP_EMIT_U(timed);
        w[1] = AMP_EMIT_D(timed ? (double)ns / 1e3 / (double)timed : 0.0);
        w[2] = AMP_EMIT_D(ns ? (double)flops / (double)ns : 0.0); /* flops per ns: GFLOP/s */
        w[3] = AMP_EMIT_U(ns);
        w[4] = AMP_EMIT_U(flops);
    }
}

/* A site's first columns: the symbol and the caller in text, the symbol
 * and the site's names in JSON. */
/* clang-format off */
#define SITE_COLS(width, cwidth, clip)                                        \
    {"symbol", "symbol", width, 0, AMP_EMIT_LEFT, NULL},                      \
    {"caller", NULL, cwidth, 0, AMP_EMIT_LEFT | (clip), NULL},                \
    {NULL, "object", 0, 0, 0, NULL},                                          \
    {NULL, "function", 0, 0, 0, NULL}
/* clang-format on */
enum { SITE_COLS_N = 4 };

static void site_vals(struct amp_emit_val *v, const struct amp_cpu_site *s, const char *caller,
                      const char *object, const char *function)
{
    v[0] = AMP_EMIT_S(amp_hook_names[s->hook]);
    v[1] = AMP_EMIT_S(caller);
    v[2] = AMP_EMIT_S(object);
    v[3] = AMP_EMIT_S(function);
}

int amp_site_time_write(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key)
{
    static struct row rows[AMP_CTL_CPU_SITES];
    uint32_t used = b ? atomic_load_explicit(&b->cpu_sites, memory_order_acquire) : 0;
    int n = 0;
    for (uint32_t i = 0; i < used && i < AMP_CTL_CPU_SITES; i++) {
        const struct amp_cpu_site *s = &b->cpu_site[i];
        if (!atomic_load_explicit(&s->ready, memory_order_acquire) || s->hook >= AMP_HOOK_COUNT)
            continue;
        struct row *x = &rows[n++];
        x->i = (int)i;
        for (int f = 0; f < AMP_CPU_TIME_FIELDS; f++)
            x->t[f] = atomic_load_explicit(&s->t[f], memory_order_relaxed);
        /* names copied with an end: another process wrote them */
        snprintf(x->object, sizeof x->object, "%.*s", (int)sizeof s->object, s->object);
        snprintf(x->function, sizeof x->function, "%.*s", (int)sizeof s->function, s->function);
        if (x->function[0])
            snprintf(x->caller, sizeof x->caller, "%.*s:%.*s", (int)sizeof s->object, s->object,
                     (int)sizeof s->function, s->function);
        else
            snprintf(x->caller, sizeof x->caller, "%.*s+0x%" PRIx64, (int)sizeof s->object,
                     s->object, s->offset);
    }
    qsort(rows, (size_t)n, sizeof *rows, by_time);
    int width = 24, cwidth = 6; /* the symbol and caller columns: as wide as their longest */
    for (int r = 0; r < n; r++) {
        int w = (int)strlen(amp_hook_names[b->cpu_site[rows[r].i].hook]),
            c = (int)strlen(rows[r].caller);
        width = w > width ? w : width;
        cwidth = c > cwidth ? c : cwidth;
    }
    struct amp_emit_col cols[SITE_COLS_N + 1 + AMP_TIME_COLS] = {SITE_COLS(width, cwidth, 0),
                                                                 {NULL, "offset", 0, 0, 0, NULL}};
    memcpy(cols + SITE_COLS_N + 1, amp_time_cols, sizeof amp_time_cols);
    struct amp_emit_table t = {.title = "by call site:", AMP_EMIT_COLUMNS(cols)};
    amp_emit_table(e, &t, key);
    for (int r = 0; r < n; r++) {
        const struct amp_cpu_site *s = &b->cpu_site[rows[r].i];
        struct amp_emit_val v[sizeof cols / sizeof *cols];
        site_vals(v, s, rows[r].caller, rows[r].object, rows[r].function);
        v[SITE_COLS_N] = AMP_EMIT_U(s->offset);
        amp_time_vals(v + SITE_COLS_N + 1, rows[r].t);
        amp_emit_row(e, &t, v);
    }
    amp_emit_end_table(e, &t);
    uint32_t dropped = b ? atomic_load_explicit(&b->cpu_sites_dropped, memory_order_relaxed) : 0;
    if (dropped)
        amp_emit_text(e, "(the table was full: %u timed calls of other sites not shown)\n",
                      dropped);
    return n;
}

/* ---- did lowering pay? ---- */

const char *const amp_pay_verdict_names[4] = {"unsettled", "pays", "costs", "mixed"};

static struct amp_pay_class *pay_class(const struct amp_site *where, double flops)
{
    struct amp_ctl_block *b = amp_ctl;
    int site = b && where ? row_of(b, where) : 0;
    if (site <= 0)
        return NULL;
    return &b->cpu_site[site - 1].pay[amp_flops_class(flops)];
}

int amp_pay_due(const struct amp_site *where, double flops)
{
    if (!amp_live_load(&amp_rt.cfg.cpu_timing_sample))
        return 0;
    struct amp_pay_class *p = pay_class(where, flops);
    if (!p)
        return 0;
    uint64_t n = atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed) + 1;
    atomic_fetch_add_explicit(&p->flops, flops > 0 ? (uint64_t)flops : 0, memory_order_relaxed);
    /* The k-th check is due from the class's call 32 2^k (k < 3), then
     * every AMP_PAY_EVERY: a call that cannot take it (the audit checks it)
     * leaves it to the next. */
    uint64_t k = atomic_load_explicit(&p->checks, memory_order_relaxed);
    uint64_t at =
        k < 3 ? (uint64_t)AMP_PAY_FIRST << k : 4 * AMP_PAY_FIRST + (k - 2) * AMP_PAY_EVERY;
    return n >= at;
}

enum amp_pay_verdict amp_pay_record(const struct amp_site *where, double flops, uint64_t ns_lowered,
                                    uint64_t ns_made)
{
    struct amp_pay_class *p = pay_class(where, flops);
    if (!p)
        return AMP_PAY_UNKNOWN;
    atomic_fetch_add_explicit(&p->checks, 1, memory_order_relaxed);
    if (!ns_lowered || !ns_made) /* taken, but nothing to weigh: no vote */
        return (enum amp_pay_verdict)atomic_load_explicit(&p->verdict, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->checked_flops, flops > 0 ? (uint64_t)flops : 0,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&p->ns_lowered, ns_lowered, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->ns_made, ns_made, memory_order_relaxed);
    double margin = amp_rt.cfg.audit_min_speedup > 1 ? amp_rt.cfg.audit_min_speedup : 1.0;
    double q = (double)ns_made / (double)ns_lowered;
    uint32_t vote = q >= margin         ? AMP_PAY_VOTE_PAYS
                    : q <= 1.0 / margin ? AMP_PAY_VOTE_COSTS
                                        : AMP_PAY_VOTE_EVEN;
    /* The votes of one class come from one thread at a time in practice;
     * two at once lose a vote, never corrupt one. */
    uint32_t votes = atomic_load_explicit(&p->votes, memory_order_relaxed) << 2 | vote;
    votes &= (1u << 2 * AMP_PAY_VOTES) - 1;
    atomic_store_explicit(&p->votes, votes, memory_order_relaxed);
    int pays = 0, costs = 0;
    for (int i = 0; i < AMP_PAY_VOTES; i++) {
        uint32_t v = votes >> 2 * i & 3;
        pays += v == AMP_PAY_VOTE_PAYS;
        costs += v == AMP_PAY_VOTE_COSTS;
    }
    uint64_t checks = atomic_load_explicit(&p->checks, memory_order_relaxed);
    enum amp_pay_verdict verdict = pays == AMP_PAY_VOTES    ? AMP_PAY_PAYS
                                   : costs == AMP_PAY_VOTES ? AMP_PAY_COSTS
                                   : checks < AMP_PAY_VOTES ? AMP_PAY_UNKNOWN
                                                            : AMP_PAY_MIXED;
    atomic_store_explicit(&p->verdict, verdict, memory_order_relaxed);
    return verdict;
}

/* One class of a site, as the table shows it. */
struct pay_row {
    int site, c;
    uint64_t calls, flops, checks, checked, ns_low, ns_made;
    uint32_t verdict;
    double saved; /* ns, estimated for all the class's lowered calls */
};

static int by_saved(const void *pa, const void *pb)
{
    const struct pay_row *a = pa, *b = pb;
    double x = fabs(a->saved), y = fabs(b->saved);
    return x != y ? (x < y ? 1 : -1) : (a->site != b->site ? a->site - b->site : a->c - b->c);
}

/* The English ordinal suffix of n: 1st, 2nd, 3rd, 11th, 32nd. */
static const char *ordinal_suffix(unsigned n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

int amp_pay_write(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key)
{
    static struct pay_row rows[AMP_CTL_CPU_SITES * 4];
    int n = 0;
    uint64_t unchecked = 0, lowered = 0;
    double saved = 0, spent = 0;
    uint32_t used = b ? atomic_load_explicit(&b->cpu_sites, memory_order_acquire) : 0;
    for (uint32_t i = 0; i < used && i < AMP_CTL_CPU_SITES; i++) {
        const struct amp_cpu_site *s = &b->cpu_site[i];
        if (!atomic_load_explicit(&s->ready, memory_order_acquire) || s->hook >= AMP_HOOK_COUNT)
            continue;
        for (int c = 0; c < AMP_CPU_TIME_CLASSES; c++) {
            const struct amp_pay_class *p = &s->pay[c];
            struct pay_row r = {
                .site = (int)i,
                .c = c,
                .calls = atomic_load_explicit(&p->calls, memory_order_relaxed),
                .flops = atomic_load_explicit(&p->flops, memory_order_relaxed),
                .checks = atomic_load_explicit(&p->checks, memory_order_relaxed),
                .checked = atomic_load_explicit(&p->checked_flops, memory_order_relaxed),
                .ns_low = atomic_load_explicit(&p->ns_lowered, memory_order_relaxed),
                .ns_made = atomic_load_explicit(&p->ns_made, memory_order_relaxed),
                .verdict = atomic_load_explicit(&p->verdict, memory_order_relaxed),
            };
            if (!r.calls)
                continue;
            lowered += r.calls;
            if (!r.checks || !r.checked) {
                unchecked += r.calls;
                continue;
            }
            double per = (double)r.flops / (double)r.checked;
            r.saved = ((double)r.ns_made - (double)r.ns_low) * per;
            saved += r.saved;
            spent += (double)r.ns_low * per;
            if (n < (int)(sizeof rows / sizeof *rows))
                rows[n++] = r;
        }
    }
    qsort(rows, (size_t)n, sizeof *rows, by_saved);
    static const struct amp_emit_col cols[] = {
        SITE_COLS(24, 36, AMP_EMIT_CLIP),
        {"flops", NULL, 18, 0, AMP_EMIT_LEFT, NULL},
        {NULL, "flops_from", 0, 0, 0, "%.0f"},
        {"lowered", "lowered_calls", 9, 0, 0, NULL},
        {NULL, "lowered_flops", 0, 0, 0, NULL},
        {"checks", "checks", 6, 0, 0, NULL},
        {NULL, "checked_flops", 0, 0, 0, NULL},
        {NULL, "ns_lowered", 0, 0, 0, NULL},
        {NULL, "ns_made", 0, 0, 0, NULL},
        {"speed", NULL, 8, 2, AMP_EMIT_TIMES, NULL},
        {"verdict", "verdict", 11, 0, AMP_EMIT_LEFT, NULL},
        {"saved ms", NULL, 12, 2, AMP_EMIT_SIGN, NULL},
        {NULL, "saved_ns", 0, 0, 0, "%.0f"},
    };
    struct amp_emit_table t = {
        .title = "did lowering pay? (pay checks: a lowered call also run as made, its output "
                 "thrown away; process CPU time)",
        AMP_EMIT_COLUMNS(cols)};
    amp_emit_object(e, key);
    amp_emit_table(e, &t, "sites");
    for (int k = 0; k < n; k++) {
        const struct pay_row *r = &rows[k];
        const struct amp_cpu_site *s = &b->cpu_site[r->site];
        char object[sizeof s->object + 1], function[sizeof s->function + 1], caller[200];
        snprintf(object, sizeof object, "%.*s", (int)sizeof s->object, s->object);
        snprintf(function, sizeof function, "%.*s", (int)sizeof s->function, s->function);
        snprintf(caller, sizeof caller, "%s%s%s", object, function[0] ? ":" : "", function);
        double from, to;
        amp_audit_class_bounds(r->c, &from, &to);
        char size[48];
        if (isfinite(to))
            snprintf(size, sizeof size, "%.2g-%.2g", from, to);
        else
            snprintf(size, sizeof size, "from %.2g", from);
        struct amp_emit_val v[sizeof cols / sizeof *cols];
        site_vals(v, s, caller, object, function);
        struct amp_emit_val *w = v + SITE_COLS_N;
        *w++ = AMP_EMIT_S(size);
        *w++ = AMP_EMIT_D(from);
        *w++ = AMP_EMIT_U(r->calls);
        *w++ = AMP_EMIT_U(r->flops);
        *w++ = AMP_EMIT_U(r->checks);
        *w++ = AMP_EMIT_U(r->checked);
        *w++ = AMP_EMIT_U(r->ns_low);
        *w++ = AMP_EMIT_U(r->ns_made);
        *w++ = AMP_EMIT_D(r->ns_low ? (double)r->ns_made / (double)r->ns_low : 0);
        *w++ = AMP_EMIT_S(amp_pay_verdict_names[r->verdict < 4 ? r->verdict : 0]);
        *w++ = AMP_EMIT_D(r->saved / 1e6);
        *w++ = AMP_EMIT_D(r->saved);
        amp_emit_row(e, &t, v);
    }
    amp_emit_end_table(e, &t);
    amp_emit_u64(e, "lowered_calls", lowered);
    amp_emit_u64(e, "unchecked_calls", unchecked);
    amp_emit_num(e, "saved_ns", saved, "%.0f");
    amp_emit_num(e, "lowered_ns_estimate", spent, "%.0f");
    amp_emit_close(e);
    if (n)
        amp_emit_text(e,
                      "lowering %s: about %.1f ms of CPU time %s on the %" PRIu64
                      " lowered call%s of checked sizes (%.2fx as fast lowered)",
                      saved >= 0 ? "paid" : "cost", fabs(saved) / 1e6,
                      saved >= 0 ? "saved" : "lost", lowered - unchecked,
                      lowered - unchecked == 1 ? "" : "s",
                      spent > 0 ? (spent + saved) / spent : 0.0);
    if (n && unchecked)
        amp_emit_text(e,
                      "; %" PRIu64 " lowered call%s of sizes a site made fewer than %u times not "
                      "checked\n",
                      unchecked, unchecked == 1 ? "" : "s", AMP_PAY_FIRST);
    else if (n)
        amp_emit_text(e, "\n");
    else if (lowered)
        amp_emit_text(e,
                      "lowering paid: not checked (%" PRIu64 " native lowered call%s; pay checks "
                      "start at a call site's %u%s call of one size)\n",
                      lowered, lowered == 1 ? "" : "s", AMP_PAY_FIRST,
                      ordinal_suffix(AMP_PAY_FIRST));
    return n;
}
