/* CPU time per call site (see site_time.h): each site of runtime/sites.h
 * gets a row of the block's table at its first timed call, under a lock;
 * the site keeps its row's index, so later calls take no lock. */
#include "runtime/site_time.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

int amp_site_time_write(FILE *out, const struct amp_ctl_block *b, int json)
{
    static struct row rows[AMP_CTL_CPU_SITES];
    uint32_t used = atomic_load_explicit(&b->cpu_sites, memory_order_acquire);
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
    if (json)
        fputc('[', out);
    else if (n)
        fprintf(out, "by call site:\n%-*s %-*s %12s %12s %9s %12s %12s %9s\n", width, "symbol",
                cwidth, "caller", "timed lowered", "us/call low", "GFLOP/s", "timed made",
                "us/call made", "GFLOP/s");
    for (int r = 0; r < n; r++) {
        const struct amp_cpu_site *s = &b->cpu_site[rows[r].i];
        const uint64_t *t = rows[r].t;
        const char *object = rows[r].object, *function = rows[r].function;
        if (json) {
            fprintf(out, "%s{\"symbol\": \"%s\", \"object\": ", r ? ", " : "",
                    amp_hook_names[s->hook]);
            amp_json_string(out, object);
            fputs(", \"function\": ", out);
            amp_json_string(out, function);
            fprintf(out,
                    ", \"offset\": %" PRIu64 ", \"timed_lowered\": %" PRIu64
                    ", \"ns_lowered\": %" PRIu64 ", \"flops_lowered\": %" PRIu64
                    ", \"timed_made\": %" PRIu64 ", \"ns_made\": %" PRIu64
                    ", \"flops_made\": %" PRIu64 "}",
                    s->offset, t[AMP_CPU_TIMED_LOWERED], t[AMP_CPU_NS_LOWERED],
                    t[AMP_CPU_FLOPS_LOWERED], t[AMP_CPU_TIMED_MADE], t[AMP_CPU_NS_MADE],
                    t[AMP_CPU_FLOPS_MADE]);
            continue;
        }
        uint64_t tl = t[AMP_CPU_TIMED_LOWERED], tm = t[AMP_CPU_TIMED_MADE];
        fprintf(
            out, "%-*s %-*s %12" PRIu64 " %12.2f %9.2f %12" PRIu64 " %12.2f %9.2f\n", width,
            amp_hook_names[s->hook], cwidth, rows[r].caller, tl,
            tl ? (double)t[AMP_CPU_NS_LOWERED] / 1e3 / (double)tl : 0.0,
            t[AMP_CPU_NS_LOWERED] ? (double)t[AMP_CPU_FLOPS_LOWERED] / (double)t[AMP_CPU_NS_LOWERED]
                                  : 0.0,
            tm, tm ? (double)t[AMP_CPU_NS_MADE] / 1e3 / (double)tm : 0.0,
            t[AMP_CPU_NS_MADE] ? (double)t[AMP_CPU_FLOPS_MADE] / (double)t[AMP_CPU_NS_MADE] : 0.0);
    }
    uint32_t dropped = atomic_load_explicit(&b->cpu_sites_dropped, memory_order_relaxed);
    if (json)
        fputc(']', out);
    else if (dropped)
        fprintf(out, "(the table was full: %u timed calls of other sites not shown)\n", dropped);
    return n;
}
