/* ampctl's tables and JSON for one control block. */
#include "render.h"

#include <ctype.h>
#include <string.h>

#include "kernels/cpu/convert.h"
#include "policy/policy.h"
#include "runtime/ctl_names.h"
#include "runtime/report.h"

/* A fixed-width text field from the block, made printable. */
static void clean(char *out, const char *field, size_t width)
{
    size_t i = 0;
    for (; i < width && field[i]; i++)
        out[i] = isprint((unsigned char)field[i]) && field[i] != '"' && field[i] != '\\' ? field[i]
                                                                                         : '?';
    out[i] = '\0';
}

static const char *want_name(uint32_t w)
{
    return w == AMP_CTL_ON ? "on" : w == AMP_CTL_OFF ? "off" : "default";
}

static const char *dtype_name(uint32_t d)
{
    return d < AMP_DTYPE_COUNT ? amp_dtype_names[d] : "?";
}

static const struct amp_emit_col ps_cols[] = {
    {"pid", "pid", 8, 0, AMP_EMIT_LEFT, NULL},
    {"exe", "exe", 20, 0, AMP_EMIT_LEFT, NULL},
    {"alive", NULL, 6, 0, AMP_EMIT_LEFT, NULL},
    {NULL, "alive", 0, 0, 0, NULL},
    {"threads", "threads", 8, 0, 0, NULL},
    {"enabled", "enabled", 8, 0, AMP_EMIT_LEFT, NULL},
    {"dtype", "dtype", 6, 0, AMP_EMIT_LEFT, NULL},
    {"command", "command", 0, 0, AMP_EMIT_LEFT, NULL},
};

void ampctl_render_ps_begin(struct amp_emitter *e, struct amp_emit_table *t)
{
    *t = (struct amp_emit_table){AMP_EMIT_COLUMNS(ps_cols), .head_always = 1};
    amp_emit_table(e, t, NULL);
}

void ampctl_render_ps_row(struct amp_emitter *e, struct amp_emit_table *t,
                          const struct amp_ctl_block *b, int alive, const char *command)
{
    char exe[sizeof b->exe + 1];
    clean(exe, b->exe, sizeof b->exe);
    int threads = 0;
    for (int i = 0; i < AMP_CTL_MAX_THREADS; i++)
        threads += atomic_load(&b->threads[i].tid) != 0;
    amp_emit_row(e, t,
                 (struct amp_emit_val[]){
                     AMP_EMIT_I(b->pid),
                     AMP_EMIT_S(exe),
                     AMP_EMIT_S(alive ? "yes" : "DEAD"),
                     AMP_EMIT_B(alive),
                     AMP_EMIT_I(threads),
                     AMP_EMIT_S(want_name(atomic_load(&b->enabled))),
                     AMP_EMIT_S(dtype_name(atomic_load(&b->dtype[0]))),
                     AMP_EMIT_S(command),
                 });
}

void ampctl_render_status(FILE *out, const struct amp_ctl_block *b, int json)
{
    char exe[sizeof b->exe + 1];
    clean(exe, b->exe, sizeof b->exe);
    struct amp_emitter e;
    amp_emit_begin(&e, out, json);
    amp_emit_object(&e, NULL);
    amp_emit_value(&e, "pid", AMP_EMIT_I(b->pid), NULL);
    amp_emit_str(&e, "exe", exe);
    amp_emit_str(&e, "enabled", want_name(atomic_load(&b->enabled)));
    amp_emit_str(&e, "dtype", dtype_name(atomic_load(&b->dtype[0])));
    amp_emit_str(&e, "cuda_dtype", dtype_name(atomic_load(&b->dtype[1])));
    amp_emit_str(&e, "output", atomic_load(&b->output_round) ? "round" : "keep");
    amp_emit_u64(&e, "generation", atomic_load(&b->generation));
    /* The text's first line: the live settings in the block, as the
     * settings table names them. */
    amp_emit_text(&e, "pid %lld (%s):", (long long)b->pid, exe);
    const char *sep = " ";
    for (size_t i = 0; !json && i < amp_setting_count; i++) {
        const struct amp_setting *s = &amp_settings[i];
        char value[64];
        if (!s->ctl || s->block_field == AMP_SETTING_NO_FIELD ||
            amp_ctl_get(b, s->ctl, value, sizeof value, NULL) != 0)
            continue;
        amp_emit_text(&e, "%s%s %s", sep, s->ctl + strlen("opt."), value);
        sep = ", ";
    }
    amp_emit_text(&e, "\n");
    static const struct amp_emit_col cols[] = {
        {"tid", "tid", 8, 0, AMP_EMIT_LEFT, NULL},
        {"name", "name", 16, 0, AMP_EMIT_LEFT, NULL},
        {"enabled", "enabled", 8, 0, AMP_EMIT_LEFT, NULL},
        {"active", "active", 7, 0, AMP_EMIT_LEFT, NULL},
        {"dtype", "dtype", 6, 0, AMP_EMIT_LEFT, NULL},
        {"lowered", "lowered", 12, 0, 0, NULL},
        {"calls", "calls", 12, 0, 0, NULL},
    };
    struct amp_emit_table t = {AMP_EMIT_COLUMNS(cols), .head_always = 1};
    amp_emit_table(&e, &t, "threads");
    for (int i = 0; i < AMP_CTL_MAX_THREADS; i++) {
        const struct amp_thread *th = &b->threads[i];
        long long tid = (long long)atomic_load(&th->tid);
        if (!tid)
            continue;
        char name[sizeof th->name + 1];
        clean(name, th->name, sizeof th->name);
        uint64_t lowered = 0, calls = 0;
        for (int h = 0; h < AMP_HOOK_COUNT; h++) {
            lowered +=
                atomic_load_explicit(&th->counters[h][AMP_CTL_LOWERED], memory_order_relaxed);
            for (int c = 0; c < AMP_CTL_COUNTERS; c++)
                calls += amp_ctl_counter_is_outcome[c]
                             ? atomic_load_explicit(&th->counters[h][c], memory_order_relaxed)
                             : 0;
        }
        amp_emit_row(&e, &t,
                     (struct amp_emit_val[]){
                         AMP_EMIT_I(tid),
                         AMP_EMIT_S(name),
                         AMP_EMIT_S(want_name(atomic_load(&th->want))),
                         AMP_EMIT_B(th->selected),
                         AMP_EMIT_S(dtype_name(atomic_load(&th->dtype))),
                         AMP_EMIT_U(lowered),
                         AMP_EMIT_U(calls),
                     });
    }
    amp_emit_end_table(&e, &t);
    amp_emit_close(&e);
    if (json)
        fputc('\n', out);
}

void ampctl_render_stats(FILE *out, const struct amp_ctl_block *b, int json)
{
    struct amp_emitter e;
    amp_emit_begin(&e, out, json);
    amp_emit_object(&e, NULL);
    amp_emit_value(&e, "pid", AMP_EMIT_I(b->pid), NULL);
    struct amp_counter_table ct;
    amp_counter_table_begin(&e, &ct, 18, 0, "symbols");
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        uint64_t c[AMP_CTL_COUNTERS];
        for (int i = 0; i < AMP_CTL_COUNTERS; i++)
            c[i] = amp_ctl_counter(b, h, i);
        if (amp_ctl_row_used(c))
            amp_counter_table_row(&e, &ct, amp_hook_names[h], amp_op_names[amp_hook_op[h][0]], NULL,
                                  c);
    }
    amp_emit_end_table(&e, &ct.t);
    amp_report_cpu_time(&e, b, "cpu_time");
    amp_report_gpu_time(&e, b, "gpu_time");
    amp_emit_close(&e);
    if (json)
        fputc('\n', out);
}
