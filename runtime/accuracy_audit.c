/* The accuracy audit's call sites: outputs compared, sites found and
 * counted, AMPSHIM_AUDIT=auto's steps (see accuracy_audit.h; the report and
 * the generated policy are runtime/audit_report.c's). A call site is one hooked symbol called from one
 * function of one object, named as AMPSHIM_CALLERS and the policy's
 * call-site entries name callers (dladdr from the return address), so the
 * policy it writes selects exactly the sites it measured. */
#include "runtime/accuracy_audit.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/log.h"
#include "runtime/report.h"
#include "runtime/site_time.h"
#include "runtime/sites.h"

/* ---- comparing outputs ---- */

int amp_audit_holds_spread(int op)
{
    return !(op >= 0 && op < AMP_OP_COUNT &&
             amp_policy_default[AMP_DEVICE_CPU][op] == AMP_CAT_LOWER);
}

void amp_audit_spread_begin(struct amp_audit_spread *s, int64_t width)
{
    memset(s, 0, sizeof *s);
    if (width > 0 && (uint64_t)width < SIZE_MAX / (4 * sizeof(double)))
        s->place = amp_shadow_alloc((size_t)width * 4 * sizeof(double));
    s->width = s->place ? width : 0;
    for (int64_t i = 0; i < s->width; i++)
        s->place[4 * i] = NAN; /* no shift yet */
}

void amp_audit_spread_line(struct amp_audit_spread *s, const float *low, const float *ref,
                           int64_t first, int64_t n)
{
    double shift = NAN, ln = 0, ls = 0, lq = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], l = low[i];
        if (!isfinite(r) || !isfinite(l))
            continue; /* Inf/NaN are the other measures' business */
        s->diff2 += (l - r) * (l - r);
        s->count += 1;
        if (shift != shift)
            shift = r;
        double d = r - shift;
        ln += 1;
        ls += d;
        lq += d * d;
        int64_t p = first + i;
        if (p >= 0 && p < s->width) {
            double *a = s->place + 4 * p;
            if (a[0] != a[0])
                a[0] = r;
            double e = r - a[0];
            a[1] += 1;
            a[2] += e;
            a[3] += e * e;
        }
    }
    if (ln >= 2) {
        double w = lq - ls * ls / ln;
        s->within_q += w > 0 ? w : 0;
        s->within_n += ln;
    }
}

double amp_audit_spread_error(struct amp_audit_spread *s)
{
    double across_q = 0, across_n = 0;
    for (int64_t p = 0; p < s->width; p++) {
        const double *a = s->place + 4 * p;
        if (a[1] >= 2) {
            double w = a[3] - a[2] * a[2] / a[1];
            across_q += w > 0 ? w : 0;
            across_n += a[1];
        }
    }
    amp_shadow_free(s->place);
    s->place = NULL;
    double within = s->within_n > 0 && s->within_q > 0 ? s->within_q / s->within_n : -1;
    double across = across_n > 0 && across_q > 0 ? across_q / across_n : -1;
    double v = within < 0 ? across : across < 0 ? within : within < across ? within : across;
    if (!(v > 0) || !(s->count > 0))
        return 0;
    return sqrt(s->diff2 / s->count / v);
}

/* ---- the sites ---- */

_Static_assert(AMP_POLICY_MAX_SITES >= AMP_CTL_AUDIT_SITES,
               "the parser keeps every entry of a policy the audit writes");

static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;

/* The row of a call site, made when new; -1 when the table is full. Under
 * audit_lock. */
static int site_of(struct amp_ctl_block *b, const struct amp_site *where)
{
    enum amp_hook_id hook = (enum amp_hook_id)where->hook;
    uint32_t used = atomic_load_explicit(&b->audit_sites, memory_order_relaxed);
    if (used >= AMP_CTL_AUDIT_SITES) {
        atomic_fetch_add_explicit(&b->audit_dropped, 1, memory_order_relaxed);
        return -1;
    }
    struct amp_audit_site *s = &b->audit_site[used];
    s->hook = (uint16_t)hook;
    s->device = amp_hook_device[hook];
    amp_site_display(where, s->object, sizeof s->object, s->function, sizeof s->function);
    /* the full names' hashes, for a policy entry naming a cut one */
    int native = !where->python;
    s->object_hash = native && strlen(where->object) >= sizeof s->object ? where->object_hash : 0;
    s->function_hash =
        native && strlen(where->function) >= sizeof s->function ? where->function_hash : 0;
    s->python = where->python;
    s->op_around = (int16_t)amp_site_op(where);
    s->offset = where->offset;
    atomic_store_explicit(&s->ready, 1, memory_order_release);
    atomic_store_explicit(&b->audit_sites, used + 1, memory_order_release);
    return (int)used;
}

static void note_shape(struct amp_audit_site *s, const int64_t shape[3])
{
    uint32_t n = atomic_load_explicit(&s->n_shapes, memory_order_relaxed);
    uint32_t kept = n < 4 ? n : 4;
    for (uint32_t i = 0; i < kept; i++)
        if (memcmp(s->shape[i], shape, sizeof s->shape[i]) == 0)
            return;
    if (n < 4)
        memcpy(s->shape[n], shape, sizeof s->shape[n]);
    /* Past four, n counts calls with a shape other than the first four:
     * a lower bound of "more" shown as "+". */
    if (n < UINT32_MAX) /* release: a reader that sees n sees the shapes below it */
        atomic_store_explicit(&s->n_shapes, n + 1, memory_order_release);
}

/* Whether a call of size class c at site s is one of the class's first,
 * audited to measure its speed: at a site auto keeps fp32 for being slow
 * at the sizes seen so far, a class it has never weighed, until
 * AMP_AUTO_CLASS_TIMED calls of it are timed (a size that pays then brings
 * the site back at once, not after the rechecks' hysteresis). A lowered
 * site's new class needs none: the size rule lowers it and its pay checks
 * weigh it (runtime/site_time.h). */
static int class_unweighed(const struct amp_audit_site *s, enum amp_auto_state state, int c)
{
    return s->device == AMP_DEVICE_CPU && state == AMP_AUTO_FP32 &&
           amp_audit_weighs_sizes(s, state) &&
           !(atomic_load_explicit(&s->class_speed[c], memory_order_relaxed) > 0) &&
           atomic_load_explicit(&s->speed_count[c], memory_order_relaxed) < AMP_AUTO_CLASS_TIMED;
}

/* Counts one lowered call at site s; returns whether it is one to audit.
 * Under audit_lock, or without it for a shape the site has (shape NULL):
 * the counts are atomic, the shapes are written under the lock. */
static int count_call(struct amp_ctl_block *b, struct amp_audit_site *s, enum amp_lowp_dtype dtype,
                      double flops, const int64_t shape[3])
{
    uint64_t calls = atomic_fetch_add_explicit(&s->calls, 1, memory_order_relaxed);
    uint64_t f = flops > 0 ? (uint64_t)flops : 0;
    atomic_fetch_add_explicit(&s->flops, f, memory_order_relaxed);
    atomic_fetch_add_explicit(&b->audit_flops, f, memory_order_relaxed);
    __atomic_store_n(&s->dtype, (uint8_t)dtype, __ATOMIC_RELAXED);
    if (shape)
        note_shape(s, shape);
    if (amp_audit_auto()) {
        enum amp_auto_state state =
            amp_auto_state_of(atomic_load_explicit(&s->auto_state, memory_order_relaxed));
        uint32_t recheck = amp_live_load(&amp_rt.cfg.audit_recheck);
        return state == AMP_AUTO_PROBATION ||
               (state != AMP_AUTO_FP32_KEPT && (recheck <= 1 || (calls + 1) % recheck == 0)) ||
               class_unweighed(s, state, amp_flops_class(flops));
    }
    uint32_t sample = amp_live_load(&amp_rt.cfg.audit_sample);
    return sample <= 1 || calls % sample == 0;
}

/* The thread's last site, so a loop's calls from one place take no lock:
 * valid for its block, its map generation (a dlclose's forgetting changes
 * it) and the site's first shape. */
static _Atomic uint32_t map_generation;
static __thread struct {
    const struct amp_site *where;
    struct amp_ctl_block *block;
    struct amp_audit_site *site;
    uint32_t generation;
} last;

static void note_spread(struct amp_audit_site *s, enum amp_lowp_dtype dtype, const int64_t shape[3],
                        double loss);

/* The site of a call from return_address, made at its first call, with the
 * call counted: a lowered call (spread < 0; *audit_this says whether to
 * audit it), or one the spread check kept as made (spread: its loss). */
static struct amp_audit_site *enter(const struct amp_site *where, enum amp_lowp_dtype dtype,
                                    double flops, const int64_t shape[3], int *audit_this,
                                    double spread)
{
    *audit_this = 0;
    struct amp_ctl_block *b = amp_ctl;
    if (!b || amp_live_load(&amp_rt.cfg.audit) == AMP_AUDIT_OFF)
        return NULL;
    if (spread < 0 && last.site && where && last.where == where && last.block == b &&
        last.generation == atomic_load_explicit(&map_generation, memory_order_acquire) &&
        atomic_load_explicit(&last.site->n_shapes, memory_order_acquire) > 0 &&
        memcmp(last.site->shape[0], shape, sizeof last.site->shape[0]) == 0) {
        *audit_this = count_call(b, last.site, dtype, flops, NULL);
        return last.site;
    }
    struct amp_quiet quiet;
    amp_lock_quietly(&audit_lock, &quiet);
    int site = -1;
    if (where) {
        int16_t slot = atomic_load_explicit(&where->audit_slot, memory_order_relaxed);
        if (slot == 0) {
            site = site_of(b, where);
            slot = (int16_t)(site >= 0 ? site + 1 : -1);
            atomic_store_explicit(&((struct amp_site *)where)->audit_slot, slot,
                                  memory_order_relaxed);
        }
        site = slot - 1;
    }
    struct amp_audit_site *s = site >= 0 ? &b->audit_site[site] : NULL;
    if (s && spread >= 0)
        note_spread(s, dtype, shape, spread);
    else if (s)
        *audit_this = count_call(b, s, dtype, flops, shape);
    last.generation = atomic_load_explicit(&map_generation, memory_order_acquire);
    amp_unlock_quietly(&audit_lock, &quiet);
    last.where = where;
    last.block = b;
    last.site = s;
    return s;
}

int amp_audit_slow_here(const struct amp_site *where, double flops)
{
    const struct amp_audit_site *s = last.site;
    if (!s || !where || last.where != where || last.block != amp_ctl ||
        last.generation != atomic_load_explicit(&map_generation, memory_order_acquire))
        return 0;
    enum amp_auto_state st =
        amp_auto_state_of(atomic_load_explicit(&s->auto_state, memory_order_acquire));
    return (st == AMP_AUTO_FP32 && amp_audit_weighs_sizes(s, st)) ||
           (st == AMP_AUTO_LOWERED && amp_audit_slow_size(s, flops));
}

int amp_audit_decided_lowered(const struct amp_site *where, double flops)
{
    struct amp_ctl_block *b = amp_ctl;
    int16_t slot = where ? atomic_load_explicit(&where->audit_slot, memory_order_relaxed) : 0;
    if (!b || slot <= 0 || slot > AMP_CTL_AUDIT_SITES)
        return 0;
    return amp_audit_auto() && amp_audit_keeps_lowered(&b->audit_site[slot - 1], flops);
}

struct amp_audit_site *amp_audit_enter(const struct amp_site *where, enum amp_lowp_dtype dtype,
                                       double flops, const int64_t shape[3], int *audit_this)
{
    return enter(where, dtype, flops, shape, audit_this, -1.0);
}

void amp_audit_note_spread(const struct amp_site *where, enum amp_lowp_dtype dtype,
                           const int64_t shape[3], double loss)
{
    int unused;
    enter(where, dtype, 0, shape, &unused, loss > 0 ? loss : 0.0);
}

void amp_audit_forget_unloaded(void)
{
    /* Rows are a site's (runtime/sites.c keeps them by name): a library
     * loaded again is the same site; only the threads' last rows go. */
    atomic_fetch_add_explicit(&map_generation, 1, memory_order_release);
}

void amp_audit_test_slow_lowered(double flops)
{
    static _Atomic long left = -1;
    static _Atomic double below = INFINITY;
    long n = atomic_load_explicit(&left, memory_order_acquire);
    if (n < 0) {
        const char *v = getenv("AMPSHIM_TEST_SLOW_LOWERED"), *colon = v ? strchr(v, ':') : NULL;
        n = v ? atol(v) : 0;
        if (colon)
            atomic_store_explicit(&below, atof(colon + 1), memory_order_relaxed);
        atomic_store_explicit(&left, n > 0 ? n : 0, memory_order_release);
    }
    if (n > 0 && flops < atomic_load_explicit(&below, memory_order_relaxed) &&
        atomic_fetch_sub_explicit(&left, 1, memory_order_relaxed) > 0) {
        uint64_t until = amp_now_ns() + 20000000;
        while (amp_now_ns() < until) /* busy, as a slow kernel is */
            ;
    }
}

static int bin_of(double err)
{
    if (!(err < 1e-1))
        return AMP_AUDIT_BINS - 1;
    int bin = 0;
    for (double edge = 1e-7; bin < AMP_AUDIT_BINS - 1 && err >= edge; edge *= 10)
        bin++;
    return bin;
}

const char *const amp_auto_state_names[4] = {"probation", "lowered", "fp32", "fp32 kept"};

const char *const amp_auto_why_names[5] = {"", "clean audits", "an audit over tolerance",
                                           "operands too far from the origin for their spread",
                                           "not faster"};

/* Size class c's speed-up since the site was last weighed: the least time
 * per flop as made over the least lowered. */
static double class_speedup(const struct amp_audit_site *s, int c)
{
    double low = atomic_load_explicit(&s->speed_best[c][0], memory_order_relaxed),
           fp32 = atomic_load_explicit(&s->speed_best[c][1], memory_order_relaxed);
    return low > 0 && fp32 > 0 ? fp32 / low : 0;
}

void amp_audit_class_bounds(int c, double *from, double *to)
{
    *from = c ? ldexp(1.0, 2 * c - 1) : 0;
    *to = c < AMP_CPU_TIME_CLASSES - 1 ? ldexp(1.0, 2 * c + 1) : INFINITY;
}

void amp_audit_classes_text(uint32_t mask, const float speed[AMP_CPU_TIME_CLASSES], char *out,
                            size_t size)
{
    size_t at = 0;
    out[0] = 0;
    for (int c = 0; c < AMP_CPU_TIME_CLASSES && at < size; c++) {
        if (!(mask >> c & 1))
            continue;
        int last = c;
        double lo = speed[c], hi = speed[c];
        while (last + 1 < AMP_CPU_TIME_CLASSES && mask >> (last + 1) & 1) {
            last++;
            lo = speed[last] < lo ? speed[last] : lo;
            hi = speed[last] > hi ? speed[last] : hi;
        }
        double from, to, ignored;
        amp_audit_class_bounds(c, &from, &ignored);
        amp_audit_class_bounds(last, &ignored, &to);
        char speeds[32];
        snprintf(speeds, sizeof speeds, lo == hi ? "%.2gx" : "%.2g-%.2gx", lo, hi);
        int n = isfinite(to) ? snprintf(out + at, size - at, "%s%.2g-%.2g flops (%s)",
                                        at ? ", " : "", from, to, speeds)
                             : snprintf(out + at, size - at, "%sfrom %.2g flops (%s)",
                                        at ? ", " : "", from, speeds);
        at += n > 0 ? (size_t)n : 0;
        c = last;
    }
}

/* Weighs a site's speed (under audit_lock): each size class audited since
 * the site was last weighed gets its speed-up (class_speedup) and its bit in
 * slow_classes (the others keep theirs). Returns whether no class with a
 * known speed was faster lowered by AMPSHIM_AUDIT_MIN_SPEEDUP, with the
 * best class's speed-up in *ratio; 0 and no verdict when no call was timed
 * (a device site). */
static int not_faster(struct amp_audit_site *s, double *ratio)
{
    double min = amp_rt.cfg.audit_min_speedup, best = 0;
    uint32_t before = atomic_load_explicit(&s->slow_classes, memory_order_relaxed), slow = before;
    float speed[AMP_CPU_TIME_CLASSES];
    for (int c = 0; c < AMP_CPU_TIME_CLASSES; c++) {
        uint32_t n = atomic_load_explicit(&s->speed_count[c], memory_order_relaxed);
        if (n) {
            double m = class_speedup(s, c);
            atomic_store_explicit(&s->class_speed[c], (float)m, memory_order_relaxed);
            slow = m < min ? slow | 1u << c : slow & ~(1u << c);
        }
        speed[c] = atomic_load_explicit(&s->class_speed[c], memory_order_relaxed);
        best = speed[c] > best ? speed[c] : best;
    }
    atomic_store_explicit(&s->slow_classes, slow, memory_order_relaxed);
    *ratio = best;
    int none = best > 0 && best < min;
    if (slow != before && !none) {
        char sizes[256];
        amp_audit_classes_text(slow, speed, sizes, sizeof sizes);
        amp_log(AMP_LOG_INFO, "audit auto: %s from %s%s%s: %s%s", amp_hook_names[s->hook],
                s->object, s->function[0] ? ":" : "", s->function,
                slow ? "calls of these sizes run fp32, not faster lowered: "
                     : "calls of every size lowered again (faster)",
                sizes);
    }
    return none;
}

static void window_restart(struct amp_audit_site *s)
{
    for (int c = 0; c < AMP_CPU_TIME_CLASSES; c++)
        atomic_store_explicit(&s->speed_count[c], 0, memory_order_relaxed);
}

/* Stores a site's auto state and, when it changed, the transition: its
 * reason, the record of the last four and one info line. Under audit_lock. */
static void auto_move(struct amp_audit_site *s, enum amp_auto_state state, enum amp_auto_state next,
                      uint32_t flips, uint32_t streak, enum amp_auto_why why, double ratio)
{
    atomic_store_explicit(&s->auto_state, (uint32_t)next | flips << 8 | streak << 16,
                          memory_order_release);
    if (next == state)
        return;
    window_restart(s);
    atomic_store_explicit(&s->auto_why, (uint32_t)why, memory_order_relaxed);
    for (int i = 0; i < 3; i++)
        atomic_store_explicit(&s->transition[i],
                              atomic_load_explicit(&s->transition[i + 1], memory_order_relaxed),
                              memory_order_relaxed);
    atomic_store_explicit(&s->transition[3],
                          atomic_load_explicit(&s->calls, memory_order_relaxed) << 8 | next,
                          memory_order_relaxed);
    char speed[64] = "";
    if (ratio > 0)
        snprintf(speed, sizeof speed, ": fp32 took %.2f times as long%s", ratio,
                 why == AMP_AUTO_WHY_NOT_FASTER ? " at best" : "");
    amp_log(AMP_LOG_INFO, "audit auto: %s from %s%s%s: %s after %" PRIu64 " calls (%s%s)",
            amp_hook_names[s->hook], s->object, s->function[0] ? ":" : "", s->function,
            amp_auto_state_names[next], atomic_load_explicit(&s->calls, memory_order_relaxed),
            amp_auto_why_names[why], speed);
}

/* AMPSHIM_AUDIT=auto: one audited call's verdict (clean, over tolerance,
 * or the spread check's evidence) moves its site (accuracy_audit.h); a
 * site that would run lowered must also have run faster lowered. Under
 * audit_lock; the state is read without it. */
static void auto_step(struct amp_audit_site *s, enum amp_auto_why verdict)
{
    uint32_t packed = atomic_load_explicit(&s->auto_state, memory_order_relaxed);
    enum amp_auto_state state = amp_auto_state_of(packed), next = state;
    uint32_t flips = (packed >> 8) & 0xff, streak = packed >> 16;
    uint32_t probation = amp_live_load(&amp_rt.cfg.audit_probation);
    if (__atomic_load_n(&s->twin_audits, __ATOMIC_RELAXED) && probation > AMP_AUTO_TWIN_PROBATION)
        probation = AMP_AUTO_TWIN_PROBATION;
    enum amp_auto_why why = verdict;
    double ratio = 0;
    if (state == AMP_AUTO_FP32_KEPT)
        return;
    if (verdict != AMP_AUTO_WHY_CLEAN) {
        streak = 0;
        if (state != AMP_AUTO_FP32)
            next = AMP_AUTO_FP32;
    } else {
        uint32_t need = state == AMP_AUTO_FP32 ? AMP_AUTO_HYSTERESIS * probation : probation;
        if (streak < 0xffff)
            streak++;
        if (state != AMP_AUTO_LOWERED && streak >= need) {
            /* Accurate enough: lowered if it also paid, weighed again later
             * (streak and window restart) if not. */
            int slow = not_faster(s, &ratio);
            next = slow ? AMP_AUTO_FP32 : AMP_AUTO_LOWERED;
            why = slow ? AMP_AUTO_WHY_NOT_FASTER : AMP_AUTO_WHY_CLEAN;
            streak = 0;
            window_restart(s);
        } else if (state == AMP_AUTO_LOWERED && streak >= probation) {
            /* A lowered site is weighed every probation's worth of rechecks. */
            if (not_faster(s, &ratio)) {
                next = AMP_AUTO_FP32;
                why = AMP_AUTO_WHY_NOT_FASTER;
            }
            streak = 0;
            window_restart(s);
        }
    }
    if (next == AMP_AUTO_FP32 && state == AMP_AUTO_LOWERED && ++flips >= AMP_AUTO_FLIPS_MAX)
        next = AMP_AUTO_FP32_KEPT;
    auto_move(s, state, next, flips, streak, why, ratio);
}

/* One call's two runs, timed, into its size class's least times per flop
 * (per call when its flops are not known). Under audit_lock. */
static void time_pair(struct amp_audit_site *s, double flops, uint64_t ns_lowered, uint64_t ns_made)
{
    int c = amp_flops_class(flops);
    double f = flops >= 1 ? flops : 1;
    uint32_t n = atomic_load_explicit(&s->speed_count[c], memory_order_relaxed);
    float per[2] = {(float)((double)ns_lowered / f), (float)((double)ns_made / f)};
    for (int k = 0; k < 2; k++)
        if (!n || per[k] < atomic_load_explicit(&s->speed_best[c][k], memory_order_relaxed))
            atomic_store_explicit(&s->speed_best[c][k], per[k], memory_order_relaxed);
    if (n < 255)
        atomic_store_explicit(&s->speed_count[c], (uint8_t)(n + 1), memory_order_relaxed);
}

/* After a timed audit of size class c: a class never weighed is weighed as
 * soon as AMP_AUTO_CLASS_TIMED of its calls are timed, and the site moves
 * if that changes what it does: a site fp32 only for being slow goes
 * lowered when the new class pays; a lowered one goes fp32 when no class
 * pays any more. Under audit_lock. */
static void auto_weigh_new_class(struct amp_audit_site *s, int c)
{
    uint32_t packed = atomic_load_explicit(&s->auto_state, memory_order_relaxed);
    enum amp_auto_state state = amp_auto_state_of(packed), next = state;
    if (atomic_load_explicit(&s->class_speed[c], memory_order_relaxed) > 0 ||
        atomic_load_explicit(&s->speed_count[c], memory_order_relaxed) < AMP_AUTO_CLASS_TIMED ||
        !amp_audit_weighs_sizes(s, state))
        return;
    uint32_t flips = (packed >> 8) & 0xff, streak = packed >> 16;
    double ratio;
    int slow = not_faster(s, &ratio);
    window_restart(s);
    if (state == AMP_AUTO_FP32 && !slow)
        next = AMP_AUTO_LOWERED;
    else if (state == AMP_AUTO_LOWERED && slow && ++flips >= AMP_AUTO_FLIPS_MAX)
        next = AMP_AUTO_FP32_KEPT;
    else if (state == AMP_AUTO_LOWERED && slow)
        next = AMP_AUTO_FP32;
    if (next != state)
        streak = 0;
    auto_move(s, state, next, flips, streak,
              next == AMP_AUTO_LOWERED ? AMP_AUTO_WHY_CLEAN : AMP_AUTO_WHY_NOT_FASTER, ratio);
}

void amp_audit_pay_verdict(struct amp_audit_site *s, double flops, int verdict, uint64_t ns_lowered,
                           uint64_t ns_made)
{
    double ratio = ns_lowered && ns_made ? (double)ns_made / (double)ns_lowered : 0;
    int c = amp_flops_class(flops);
    struct amp_quiet quiet;
    amp_lock_quietly(&audit_lock, &quiet);
    if (ratio > 0 && amp_auto_state_of(atomic_load_explicit(
                         &s->auto_state, memory_order_relaxed)) == AMP_AUTO_FP32) {
        /* A check's run as made at a site kept fp32 for speed: a timed pair
         * as an audit's, which may bring the site back for this size. */
        time_pair(s, flops, ns_lowered, ns_made);
        auto_weigh_new_class(s, c);
        amp_unlock_quietly(&audit_lock, &quiet);
        return;
    }
    if (ratio > 0)
        atomic_store_explicit(&s->class_speed[c], (float)ratio, memory_order_relaxed);
    uint32_t before = atomic_load_explicit(&s->slow_classes, memory_order_relaxed), slow = before;
    if (verdict == AMP_PAY_COSTS)
        slow |= 1u << c;
    else if (verdict == AMP_PAY_PAYS)
        slow &= ~(1u << c);
    if (slow != before) {
        atomic_store_explicit(&s->slow_classes, slow, memory_order_relaxed);
        float speed[AMP_CPU_TIME_CLASSES];
        for (int k = 0; k < AMP_CPU_TIME_CLASSES; k++)
            speed[k] = atomic_load_explicit(&s->class_speed[k], memory_order_relaxed);
        char sizes[256];
        amp_audit_classes_text(1u << c, speed, sizes, sizeof sizes);
        amp_log(AMP_LOG_INFO, "audit auto: %s from %s%s%s: calls of %s %s (%d pay checks agree)",
                amp_hook_names[s->hook], s->object, s->function[0] ? ":" : "", s->function, sizes,
                verdict == AMP_PAY_COSTS ? "run fp32, not faster lowered"
                                         : "lowered again (faster)",
                AMP_PAY_VOTES);
    }
    amp_unlock_quietly(&audit_lock, &quiet);
}

/* A call the spread check kept as made. Under audit_lock. */
static void note_spread(struct amp_audit_site *s, enum amp_lowp_dtype dtype, const int64_t shape[3],
                        double loss)
{
    atomic_fetch_add_explicit(&s->spread_calls, 1, memory_order_relaxed);
    if (loss > atomic_load_explicit(&s->spread_max, memory_order_relaxed))
        atomic_store_explicit(&s->spread_max, loss, memory_order_relaxed);
    __atomic_store_n(&s->dtype, (uint8_t)dtype, __ATOMIC_RELAXED);
    note_shape(s, shape);
    if (amp_audit_auto())
        auto_step(s, AMP_AUTO_WHY_SPREAD);
}

void amp_audit_record(struct amp_audit_site *s, const struct amp_audit_result *r)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&audit_lock, &quiet);
    /* The two runs' time, before auto weighs the window they end. */
    atomic_store_explicit(
        &s->ns_lowered, atomic_load_explicit(&s->ns_lowered, memory_order_relaxed) + r->ns_lowered,
        memory_order_relaxed);
    atomic_store_explicit(&s->ns_fp32,
                          atomic_load_explicit(&s->ns_fp32, memory_order_relaxed) + r->ns_fp32,
                          memory_order_relaxed);
    if (r->ns_lowered && r->ns_fp32)
        time_pair(s, r->flops, r->ns_lowered, r->ns_fp32);
    if (amp_audit_auto()) {
        int clean = amp_audit_clean(r);
        auto_step(s, clean ? AMP_AUTO_WHY_CLEAN : AMP_AUTO_WHY_ERROR);
        if (clean && r->ns_lowered && r->ns_fp32)
            auto_weigh_new_class(s, amp_flops_class(r->flops));
    }
    uint64_t audited = atomic_load_explicit(&s->audited, memory_order_relaxed);
    atomic_store_explicit(&s->audited, audited + 1, memory_order_relaxed);
    if (r->nonfinite || r->nonfinite_call) {
        atomic_store_explicit(&s->nonfinite_calls,
                              atomic_load_explicit(&s->nonfinite_calls, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_store_explicit(&s->nonfinite_elems,
                              atomic_load_explicit(&s->nonfinite_elems, memory_order_relaxed) +
                                  r->nonfinite,
                              memory_order_relaxed);
    }
    int bin = bin_of(r->err);
    atomic_store_explicit(&s->hist[bin],
                          atomic_load_explicit(&s->hist[bin], memory_order_relaxed) + 1,
                          memory_order_relaxed);
    double max = atomic_load_explicit(&s->err_max, memory_order_relaxed);
    if (!(r->err <= max))
        atomic_store_explicit(&s->err_max, r->err, memory_order_relaxed);
    double sum = atomic_load_explicit(&s->err_sum, memory_order_relaxed);
    atomic_store_explicit(&s->err_sum, sum + r->err, memory_order_relaxed);
    double emax = atomic_load_explicit(&s->elem_max, memory_order_relaxed);
    if (r->elem_max > emax)
        atomic_store_explicit(&s->elem_max, r->elem_max, memory_order_relaxed);
    float smax = atomic_load_explicit(&s->spread_err_max, memory_order_relaxed);
    if (r->spread_err > smax)
        atomic_store_explicit(&s->spread_err_max, (float)r->spread_err, memory_order_relaxed);
    amp_unlock_quietly(&audit_lock, &quiet);
}

/* The device read-backs registered: the CUDA audit's and the GPU timing's. */
enum { DEVICE_FOLDS = 4 };
static void (*_Atomic device_folds[DEVICE_FOLDS])(void);

void amp_audit_set_device_fold(void (*fold)(void))
{
    for (int i = 0; i < DEVICE_FOLDS; i++) {
        void (*expected)(void) = NULL;
        if (atomic_compare_exchange_strong(&device_folds[i], &expected, fold) || expected == fold)
            return;
    }
}

void amp_audit_fold(void)
{
    for (int i = 0; i < DEVICE_FOLDS; i++) {
        void (*fold)(void) = atomic_load(&device_folds[i]);
        if (fold)
            fold();
    }
    struct amp_ctl_block *b = amp_ctl;
    if (b)
        atomic_store(&b->audit_served, atomic_load(&b->audit_request));
}

void amp_audit_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&audit_lock, phase);
    /* A child makes its own block: its rows start empty (runtime/sites.c
     * forgets the sites' rows into the parent's), and so do the threads'
     * last rows. */
    if (phase == AMP_FORK_CHILD)
        atomic_fetch_add_explicit(&map_generation, 1, memory_order_relaxed);
}
