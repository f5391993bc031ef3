/* The accuracy audit's report and the policy it writes (AMPSHIM_AUDIT,
 * ampctl audit; see accuracy_audit.h), read from a control block's site
 * table (this process's, or another's through ampctl). */
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

/* A snapshot of one site, read field by field from a live block (which
 * another process wrote: names are copied with an end, enums checked). */
struct site_view {
    const struct amp_audit_site *s; /* for a stable order only */
    char object[sizeof((struct amp_audit_site *)0)->object + 1];
    char function[sizeof((struct amp_audit_site *)0)->function + 1];
    int hook, device, dtype;
    uint64_t offset;
    uint64_t calls, audited, nonfinite_calls, nonfinite_elems, flops, hist[AMP_AUDIT_BINS];
    double err_max, err_mean, elem_max;
    uint32_t n_shapes;
    int64_t shape[4][3];
    uint64_t lowered_flops, transition[4];
    uint64_t spread_calls; /* kept as made by the spread check */
    double spread_max;
    double spread_err_max, spread_tolerance; /* error against the output's spread, and its
                                                tolerance (the block's) */
    uint64_t ns_lowered, ns_fp32;            /* the audited calls' two runs */
    float class_speed[AMP_CPU_TIME_CLASSES]; /* auto's speed per size class (0: unknown) */
    uint32_t slow_classes;                   /* ... those a lowered site runs fp32 */
    uint32_t auto_state, auto_why;
    int auto_mode; /* the block's audit mode is auto */
};

/* NaN sorts as the worst error. */
static double order_key(double err)
{
    return err != err ? INFINITY : err;
}

/* Whether the audit has evidence of a site: audited calls, or calls the
 * spread check kept as made. */
static int has_evidence(const struct site_view *x)
{
    return x->audited || x->spread_calls;
}

static int by_error(const void *pa, const void *pb)
{
    const struct site_view *a = pa, *b = pb;
    /* Sites without evidence last; then Inf/NaN, then operands too far
     * from the origin for their spread, then the largest error first. */
    if (has_evidence(a) != has_evidence(b))
        return has_evidence(a) ? -1 : 1;
    if ((a->nonfinite_calls != 0) != (b->nonfinite_calls != 0))
        return a->nonfinite_calls ? -1 : 1;
    if ((a->spread_calls != 0) != (b->spread_calls != 0))
        return a->spread_calls ? -1 : 1;
    double ka = order_key(a->err_max), kb = order_key(b->err_max);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return a->s < b->s ? -1 : a->s > b->s;
}

/* The sites of a block, sorted; returns how many (at most AMP_CTL_AUDIT_SITES). */
static int gather(const struct amp_ctl_block *b, struct site_view *v)
{
    uint32_t used = atomic_load_explicit(&b->audit_sites, memory_order_acquire);
    int n = 0;
    for (uint32_t i = 0; i < used && i < AMP_CTL_AUDIT_SITES; i++) {
        const struct amp_audit_site *s = &b->audit_site[i];
        if (!atomic_load_explicit(&s->ready, memory_order_acquire) || s->hook >= AMP_HOOK_COUNT)
            continue;
        struct site_view *x = &v[n++];
        memset(x, 0, sizeof *x);
        x->s = s;
        memcpy(x->object, s->object, sizeof s->object);
        memcpy(x->function, s->function, sizeof s->function);
        x->hook = s->hook;
        x->device = s->device < AMP_DEVICE_COUNT ? s->device : 0;
        x->dtype = __atomic_load_n(&s->dtype, __ATOMIC_RELAXED);
        x->offset = s->offset;
        x->calls = atomic_load_explicit(&s->calls, memory_order_relaxed);
        x->audited = atomic_load_explicit(&s->audited, memory_order_relaxed);
        x->nonfinite_calls = atomic_load_explicit(&s->nonfinite_calls, memory_order_relaxed);
        x->nonfinite_elems = atomic_load_explicit(&s->nonfinite_elems, memory_order_relaxed);
        x->flops = atomic_load_explicit(&s->flops, memory_order_relaxed);
        for (int j = 0; j < AMP_AUDIT_BINS; j++)
            x->hist[j] = atomic_load_explicit(&s->hist[j], memory_order_relaxed);
        x->err_max = atomic_load_explicit(&s->err_max, memory_order_relaxed);
        x->err_mean = x->audited ? atomic_load_explicit(&s->err_sum, memory_order_relaxed) /
                                       (double)x->audited
                                 : 0;
        x->elem_max = atomic_load_explicit(&s->elem_max, memory_order_relaxed);
        x->n_shapes = atomic_load_explicit(&s->n_shapes, memory_order_acquire);
        memcpy(x->shape, s->shape, sizeof x->shape);
        x->lowered_flops = atomic_load_explicit(&s->lowered_flops, memory_order_relaxed);
        for (int j = 0; j < 4; j++)
            x->transition[j] = atomic_load_explicit(&s->transition[j], memory_order_relaxed);
        x->spread_calls = atomic_load_explicit(&s->spread_calls, memory_order_relaxed);
        x->spread_max = atomic_load_explicit(&s->spread_max, memory_order_relaxed);
        x->spread_err_max = atomic_load_explicit(&s->spread_err_max, memory_order_relaxed);
        /* a site inside an op torch.autocast lowers is not held to it */
        x->spread_tolerance =
            amp_audit_holds_spread(s->op_around)
                ? atomic_load_explicit(&b->audit_spread_tolerance, memory_order_relaxed)
                : INFINITY;
        x->ns_lowered = atomic_load_explicit(&s->ns_lowered, memory_order_relaxed);
        x->ns_fp32 = atomic_load_explicit(&s->ns_fp32, memory_order_relaxed);
        for (int c = 0; c < AMP_CPU_TIME_CLASSES; c++)
            x->class_speed[c] = atomic_load_explicit(&s->class_speed[c], memory_order_relaxed);
        x->slow_classes = atomic_load_explicit(&s->slow_classes, memory_order_relaxed);
        x->auto_why = atomic_load_explicit(&s->auto_why, memory_order_relaxed);
        x->auto_state = atomic_load_explicit(&s->auto_state, memory_order_acquire);
        x->auto_mode = atomic_load_explicit(&b->audit, memory_order_relaxed) == AMP_AUDIT_AUTO;
    }
    qsort(v, (size_t)n, sizeof *v, by_error);
    return n;
}

/* AMPSHIM_AUDIT=auto's view of a site: its state, demotions, the share of
 * its flops that ran lowered, and its transitions ("lowered@8 fp32@80"). */
static const char *auto_state_name(const struct site_view *x)
{
    unsigned state = x->auto_state & 0xff;
    return state < 4 ? amp_auto_state_names[state] : "?";
}

static void transitions_text(const struct site_view *x, char *out, size_t size)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < 4 && at < size; i++) {
        if (!x->transition[i])
            continue;
        unsigned state = (unsigned)(x->transition[i] & 0xff);
        int n = snprintf(out + at, size - at, "%s%s@%" PRIu64, at ? " " : "",
                         state < 4 ? amp_auto_state_names[state] : "?", x->transition[i] >> 8);
        at += n > 0 ? (size_t)n : 0;
    }
}

/* The audited calls' speed-up, fp32's time over lowered's, all of them
 * together (0: not timed). */
static double speedup(const struct site_view *x)
{
    return x->ns_lowered && x->ns_fp32 ? (double)x->ns_fp32 / (double)x->ns_lowered : 0;
}

/* The size classes auto runs fp32 at a site it lowered (0: none). */
static uint32_t slow_sizes(const struct site_view *x)
{
    return x->auto_mode && (x->auto_state & 0xff) == AMP_AUTO_LOWERED ? x->slow_classes : 0;
}

static const char *dtype_name(unsigned d)
{
    return d < AMP_DTYPE_COUNT ? amp_dtype_names[d] : "?";
}

/* "object:function", or "object+0xOFFSET" when the function has no name. */
static void caller_text(const struct site_view *x, char *out, size_t outlen)
{
    if (x->function[0])
        snprintf(out, outlen, "%s:%s", x->object, x->function);
    else
        snprintf(out, outlen, "%s+0x%" PRIx64, x->object, x->offset);
}

static void shapes_text(const struct site_view *x, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    uint32_t kept = x->n_shapes < 4 ? x->n_shapes : 4;
    for (uint32_t i = 0; i < kept && used < outlen; i++) {
        const int64_t *d = x->shape[i];
        int w = d[2]   ? snprintf(out + used, outlen - used, "%s%" PRId64 "x%" PRId64 "x%" PRId64,
                                i ? " " : "", d[0], d[1], d[2])
                : d[1] ? snprintf(out + used, outlen - used, "%s%" PRId64 "x%" PRId64, i ? " " : "",
                                  d[0], d[1])
                       : snprintf(out + used, outlen - used, "%s%" PRId64, i ? " " : "", d[0]);
        used += w > 0 ? (size_t)w : 0;
    }
    if (x->n_shapes > 4 && used < outlen)
        snprintf(out + used, outlen - used, " +");
}

/* A name as a glob that matches it and nothing the policy parser would read
 * as syntax: every character other than letters, digits and . _ - + $
 * becomes '?' (which matches it again). */
static void as_glob(const char *name, char *out, size_t outlen)
{
    size_t i = 0;
    for (; name[i] && i + 1 < outlen; i++) {
        char ch = name[i];
        int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || strchr("._-+$", ch);
        out[i] = plain ? ch : '?';
    }
    out[i] = '\0';
}

/* A site's caller fields in a policy entry: a Python site by file and line
 * (FILE.py:LINE); a native one by object and function, each a cut name
 * with its full name's hash (GLOB*~HASH, policy/policy.h), so the entry
 * matches the site it was written for and no other. */
static void caller_fields(const struct site_view *x, char *object, size_t object_size,
                          char *function, size_t function_size)
{
    as_glob(x->object, object, object_size);
    if (x->s->python) {
        snprintf(function, function_size, "%ld", strtol(x->function, NULL, 10));
        return;
    }
    as_glob(x->function, function, function_size);
    if (x->s->object_hash) {
        size_t n = strlen(object);
        snprintf(object + n, object_size - n, "*~%016" PRIx64, x->s->object_hash);
    }
    if (x->s->function_hash) {
        size_t n = strlen(function);
        snprintf(function + n, function_size - n, "*~%016" PRIx64, x->s->function_hash);
    }
}

/* Whether a site stays in fp32: AMPSHIM_AUDIT=auto's final decision where it
 * made one (lowered, or fp32), else by its largest errors (relative, and
 * against its output's spread) and whether the spread check kept any of its
 * calls. */
static int keeps_fp32(const struct site_view *x, double tolerance)
{
    unsigned state = x->auto_state & 0xff;
    if (x->auto_mode && state != AMP_AUTO_PROBATION)
        return state != AMP_AUTO_LOWERED;
    return x->nonfinite_calls || x->spread_calls ||
           (x->audited && (!(x->err_max <= tolerance) || x->spread_err_max > x->spread_tolerance));
}

/* The audit's table: text columns and JSON keys (a JSON-only figure
 * beside the text cell that shows it rounded, or "-"). */
static const struct amp_emit_col audit_cols[] = {
    {"rank", "rank", 4, 0, AMP_EMIT_LEFT, NULL},
    {"err max", NULL, 10, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "err_max", 0, 0, 0, "%.6g"},
    {"err mean", NULL, 10, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "err_mean", 0, 0, 0, "%.6g"},
    {"elem max", NULL, 10, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "elem_max", 0, 0, 0, "%.6g"},
    {"err/spr", NULL, 9, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "spread_err_max", 0, 0, 0, "%.6g"},
    {"inf/nan", "nonfinite_calls", 9, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "nonfinite_elems", 0, 0, 0, NULL},
    {"calls", "calls", 8, 0, 0, NULL},
    {"audited", "audited", 8, 0, 0, NULL},
    {"spread", NULL, 8, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "spread_calls", 0, 0, 0, NULL},
    {NULL, "spread_max", 0, 0, 0, "%.6g"},
    {"speed", NULL, 7, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "ns_lowered", 0, 0, 0, NULL},
    {NULL, "ns_fp32", 0, 0, 0, NULL},
    {NULL, "speedup", 0, 0, 0, "%.6g"},
    {"flops%", NULL, 6, 2, 0, NULL},
    {NULL, "flops", 0, 0, 0, NULL},
    {NULL, "flops_share", 0, 0, 0, "%.4f"},
    {NULL, "lowered_flops", 0, 0, 0, NULL},
    {"dtype", "dtype", 5, 0, AMP_EMIT_LEFT, NULL},
    {"fp32?", NULL, 5, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "keep_fp32", 0, 0, 0, NULL},
    {"symbol", "symbol", 18, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "device", 0, 0, 0, NULL},
    {NULL, "on_device", 0, 0, 0, NULL},
    {"caller", NULL, 34, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "object", 0, 0, 0, NULL},
    {NULL, "function", 0, 0, 0, NULL},
    {NULL, "offset", 0, 0, 0, NULL},
    {"shapes", "shapes", 0, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "auto_why", 0, 0, 0, NULL},
    {NULL, "auto_state", 0, 0, 0, NULL},
    {NULL, "demotions", 0, 0, 0, NULL},
    {NULL, "transitions", 0, 0, 0, NULL},
};
enum { AUDIT_COLS = sizeof audit_cols / sizeof *audit_cols };
_Static_assert((int)AUDIT_COLS <= (int)AMP_EMIT_MAX_COLS, "the audit's table fits the emitter");

/* A figure as the text shows it: to 3 digits, or "-" where not measured. */
static void figure(char *buf, size_t len, int measured, double v)
{
    snprintf(buf, len, measured ? "%.3g" : "-", v);
}

/* One site's row; under auto, in text, auto's view of the site on a line
 * of its own under it. */
static void audit_row(struct amp_emitter *e, struct amp_emit_table *t, int rank,
                      const struct site_view *x, double tolerance, double share, int auto_mode)
{
    char caller[192], shapes[160], moves[128];
    caller_text(x, caller, sizeof caller);
    shapes_text(x, shapes, sizeof shapes);
    transitions_text(x, moves, sizeof moves);
    char err_max[16], err_mean[16], elem[16], spread[16], speed[16], err_spread[16];
    int elementwise = x->audited && x->device != AMP_DEVICE_CUDA;
    figure(err_max, sizeof err_max, x->audited != 0, x->err_max);
    figure(err_mean, sizeof err_mean, x->audited != 0, x->err_mean);
    figure(elem, sizeof elem, elementwise, x->elem_max);
    /* measured by the BLAS audits (0 where it was not) */
    figure(err_spread, sizeof err_spread, elementwise && x->spread_err_max > 0, x->spread_err_max);
    figure(spread, sizeof spread, x->spread_calls != 0, x->spread_max);
    double speed_up = speedup(x);
    snprintf(speed, sizeof speed, speed_up > 0 ? "%.2fx" : "-", speed_up);
    int evidence = has_evidence(x), keep = evidence && keeps_fp32(x, tolerance);
    struct amp_emit_val v[AUDIT_COLS] = {
        AMP_EMIT_I(rank),
        AMP_EMIT_S(err_max),
        AMP_EMIT_D(x->err_max),
        AMP_EMIT_S(err_mean),
        AMP_EMIT_D(x->err_mean),
        AMP_EMIT_S(elem),
        AMP_EMIT_D(x->device == AMP_DEVICE_CUDA ? NAN : x->elem_max),
        AMP_EMIT_S(err_spread),
        AMP_EMIT_D(elementwise ? x->spread_err_max : NAN),
        AMP_EMIT_U(x->nonfinite_calls),
        AMP_EMIT_U(x->nonfinite_elems),
        AMP_EMIT_U(x->calls),
        AMP_EMIT_U(x->audited),
        AMP_EMIT_S(spread),
        AMP_EMIT_U(x->spread_calls),
        AMP_EMIT_D(x->spread_max),
        AMP_EMIT_S(speed),
        AMP_EMIT_U(x->ns_lowered),
        AMP_EMIT_U(x->ns_fp32),
        AMP_EMIT_D(speed_up > 0 ? speed_up : NAN),
        AMP_EMIT_D(share),
        AMP_EMIT_U(x->flops),
        AMP_EMIT_D(share / 100.0),
        AMP_EMIT_U(x->lowered_flops),
        AMP_EMIT_S(dtype_name((unsigned)x->dtype)),
        AMP_EMIT_S(!evidence ? "?"
                   : keep    ? "yes"
                             : "no"),
        AMP_EMIT_B(keep),
        AMP_EMIT_S(amp_hook_names[x->hook]),
        AMP_EMIT_S(amp_device_names[x->device]),
        AMP_EMIT_B(x->device == AMP_DEVICE_CUDA),
        AMP_EMIT_S(caller),
        AMP_EMIT_S(x->object),
        AMP_EMIT_S(x->function),
        AMP_EMIT_U(x->offset),
        AMP_EMIT_S(shapes),
        AMP_EMIT_S(x->auto_why < 5 ? amp_auto_why_names[x->auto_why] : "?"),
        AMP_EMIT_S(auto_state_name(x)),
        AMP_EMIT_U(x->auto_state >> 8 & 0xff),
        AMP_EMIT_S(moves),
    };
    amp_emit_row_open(e, t, v);
    amp_emit_array(e, "histogram");
    for (int j = 0; j < AMP_AUDIT_BINS; j++)
        amp_emit_u64(e, NULL, x->hist[j]);
    amp_emit_close(e);
    /* auto's speed per size class, and whether a lowered site runs the
     * class fp32 */
    amp_emit_array(e, "size_classes");
    for (int c = 0; c < AMP_CPU_TIME_CLASSES; c++) {
        if (!(x->class_speed[c] > 0))
            continue;
        double from, to;
        amp_audit_class_bounds(c, &from, &to);
        amp_emit_object(e, NULL);
        amp_emit_num(e, "flops_from", from, NULL);
        amp_emit_num(e, "flops_to", to, NULL);
        amp_emit_num(e, "speedup", x->class_speed[c], "%.4g");
        amp_emit_value(e, "fp32", AMP_EMIT_B(slow_sizes(x) >> c & 1), NULL);
        amp_emit_close(e);
    }
    amp_emit_close(e); /* the size classes */
    amp_emit_close(e); /* the row */
    if (!auto_mode)
        return;
    char sizes[256];
    unsigned st = x->auto_state & 0xff;
    const char *why = x->auto_why < 5 && (st == AMP_AUTO_FP32 || st == AMP_AUTO_FP32_KEPT)
                          ? amp_auto_why_names[x->auto_why]
                          : "";
    amp_audit_classes_text(slow_sizes(x), x->class_speed, sizes, sizeof sizes);
    amp_emit_text(e, "     | %s%s%s%s%s%s, %.0f%% of its flops lowered%s%s\n", auto_state_name(x),
                  why[0] ? " (" : "", why, why[0] ? ")" : "",
                  sizes[0] ? " but for calls not faster lowered, fp32: " : "", sizes,
                  x->flops ? 100.0 * (double)x->lowered_flops / (double)x->flops : 0.0,
                  moves[0] ? ", " : "", moves);
}

int amp_audit_write_report(FILE *out, const struct amp_ctl_block *b, double tolerance, int json)
{
    static struct site_view v[AMP_CTL_AUDIT_SITES];
    int n = gather(b, v);
    uint64_t total_flops = atomic_load_explicit(&b->audit_flops, memory_order_relaxed);
    uint32_t mode = atomic_load_explicit(&b->audit, memory_order_relaxed);
    const char *mode_text = mode < AMP_AUDIT_MODE_COUNT ? amp_audit_mode_names[mode] : "?";
    uint32_t dropped = atomic_load_explicit(&b->audit_dropped, memory_order_relaxed);
    unsigned sample = (unsigned)atomic_load_explicit(&b->audit_sample, memory_order_relaxed);
    char exe[sizeof b->exe + 1], title[sizeof exe + 200];
    snprintf(exe, sizeof exe, "%.*s", (int)sizeof b->exe, b->exe);
    snprintf(title, sizeof title,
             "ampshim audit, pid %lld (%s): mode %s, sample every %u, tolerance %g; "
             "%d call site%s%s",
             (long long)b->pid, exe, mode_text, sample, tolerance, n, n == 1 ? "" : "s",
             dropped ? " (the table was full: some not kept)" : "");
    struct amp_emitter e;
    amp_emit_begin(&e, out, json);
    amp_emit_object(&e, NULL);
    amp_emit_value(&e, "pid", AMP_EMIT_I(b->pid), NULL);
    amp_emit_str(&e, "exe", exe);
    amp_emit_str(&e, "mode", mode_text);
    amp_emit_u64(&e, "sample", sample);
    amp_emit_num(&e, "tolerance", tolerance, "%.6g");
    amp_emit_u64(&e, "sites_not_kept", dropped);
    struct amp_emit_table t = {
        .title = title, .cols = audit_cols, .n = AUDIT_COLS, .head_always = 1};
    amp_emit_table(&e, &t, "sites");
    if (mode == AMP_AUDIT_AUTO)
        amp_emit_text(&e, "     | auto: state, share of its flops lowered, transitions "
                          "(state@call)\n");
    for (int i = 0; i < n; i++) {
        const struct site_view *x = &v[i];
        double share = total_flops ? 100.0 * (double)x->flops / (double)total_flops : 0;
        audit_row(&e, &t, i + 1, x, tolerance, share, mode == AMP_AUDIT_AUTO);
    }
    amp_emit_end_table(&e, &t);
    /* What lowering bought on the audited calls: both runs of each, timed. */
    uint64_t low = 0, fp32 = 0;
    int unaudited = 0;
    for (int i = 0; i < n; i++) {
        low += v[i].ns_lowered;
        fp32 += v[i].ns_fp32;
        unaudited += v[i].calls && !has_evidence(&v[i]);
    }
    /* A site without evidence (fp32? "?") says why, once for all. */
    if (unaudited)
        amp_emit_text(&e,
                      "%d site%s with calls and no audit (fp32? ?): no call was sampled yet, or "
                      "none could run both ways (no native kernel for the dtype on this CPU: the "
                      "counters' nounits; no memory for the shadow output; AMPSHIM_LOG=info says "
                      "which)\n",
                      unaudited, unaudited == 1 ? "" : "s");
    amp_emit_u64(&e, "ns_lowered", low);
    amp_emit_u64(&e, "ns_fp32", fp32);
    amp_emit_close(&e);
    if (json)
        fputc('\n', out);
    else if (low && fp32)
        fprintf(out,
                "audited calls: lowered runs %.3g ms, the same calls as made %.3g ms (%.2fx as "
                "fast lowered)\n",
                (double)low / 1e6, (double)fp32 / 1e6, (double)fp32 / (double)low);
    return n;
}

int amp_audit_write_policy(FILE *out, const struct amp_ctl_block *b, double tolerance)
{
    static struct site_view v[AMP_CTL_AUDIT_SITES];
    int n = gather(b, v), entries = 0;
    fprintf(out,
            "# ampshim audit policy for %.*s (pid %lld), tolerance %g: a call site whose\n"
            "# lowered output was further than that from fp32 (relative Frobenius error), or\n"
            "# had Inf or NaN where fp32 had none, or whose operands lay too far from the\n"
            "# origin for their spread (AMPSHIM_SPREAD_LOSS), stays in fp32; the other\n"
            "# audited sites are lowered. Use with AMPSHIM_POLICY_FILE; see ampshim(7), AUDIT.\n",
            (int)sizeof b->exe, b->exe, (long long)b->pid, tolerance);
    /* The last entry that matches a call wins: lowered sites first and
     * fp32 ones last, each group with its unnamed (object:*) entries before
     * the named ones, so no broader entry lowers a site kept in fp32. */
    static int order[AMP_CTL_AUDIT_SITES];
    int m = 0;
    for (int pass = 0; pass < 4; pass++)
        for (int i = 0; i < n; i++)
            if (has_evidence(&v[i]) && keeps_fp32(&v[i], tolerance) == pass / 2 &&
                (v[i].function[0] != 0) == pass % 2)
                order[m++] = i;
    for (int j = 0; j < m; j++) {
        const struct site_view *x = &v[order[j]];
        char entry[320], object[sizeof x->object + 24], function[sizeof x->function + 24];
        caller_fields(x, object, sizeof object, function, sizeof function);
        snprintf(entry, sizeof entry, "%s:%s@%s:%s=%s", amp_device_names[x->device],
                 amp_hook_names[x->hook], object, function[0] ? function : "*",
                 keeps_fp32(x, tolerance) ? "fp32" : "lower");
        fprintf(out, "%-60s #", entry);
        if (x->audited)
            fprintf(out, " err max %.3g, mean %.3g, %" PRIu64 " of %" PRIu64 " calls audited",
                    x->err_max, x->err_mean, x->audited, x->calls);
        if (x->audited && x->spread_err_max > x->spread_tolerance)
            fprintf(out, "; err against its output's spread %.3g (over %g: cancellation)",
                    x->spread_err_max, x->spread_tolerance);
        if (x->nonfinite_calls)
            fprintf(out, ", Inf/NaN in %" PRIu64, x->nonfinite_calls);
        if (x->spread_calls)
            fprintf(out, "%s %" PRIu64 " calls kept as made for their operands' spread (loss %.3g)",
                    x->audited ? ";" : "", x->spread_calls, x->spread_max);
        char sizes[256];
        amp_audit_classes_text(slow_sizes(x), x->class_speed, sizes, sizeof sizes);
        if (sizes[0])
            fprintf(out, "; auto ran its calls of %s fp32: not faster lowered", sizes);
        if (!x->function[0])
            fprintf(out, "; the function at +0x%" PRIx64 " has no name (link with -rdynamic)",
                    x->offset);
        fputc('\n', out);
        entries++;
    }
    return entries;
}

void amp_audit_print(void)
{
    const struct amp_config *cfg = &amp_rt.cfg;
    struct amp_ctl_block *b = amp_ctl;
    if (!b || !atomic_load_explicit(&b->audit_sites, memory_order_acquire))
        return;
    amp_audit_fold();
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return;
    amp_audit_write_report(mem, b, cfg->audit_tolerance, 0);
    fclose(mem);
    amp_report_emit(text, len);
    free(text);
    if (!cfg->audit_policy[0])
        return;
    char path[sizeof cfg->audit_policy + 32];
    amp_report_expand_path(cfg->audit_policy, path, sizeof path);
    /* A fresh file each run (not appended to): it is a policy, not a log. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        amp_log(AMP_LOG_WARN, "AMPSHIM_AUDIT_POLICY: cannot write '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    amp_audit_write_policy(f, b, cfg->audit_tolerance);
    fclose(f);
}
