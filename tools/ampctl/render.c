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

void ampctl_render_ps_row(FILE *out, const struct amp_ctl_block *b, int alive, int json, int first,
                          const char *command)
{
    char exe[sizeof b->exe + 1];
    clean(exe, b->exe, sizeof b->exe);
    int threads = 0;
    for (int i = 0; i < AMP_CTL_MAX_THREADS; i++)
        threads += atomic_load(&b->threads[i].tid) != 0;
    if (json) {
        fprintf(out,
                "%s{\"pid\": %lld, \"exe\": \"%s\", \"alive\": %s, \"threads\": %d, "
                "\"enabled\": \"%s\", \"dtype\": \"%s\", \"command\": ",
                first ? "" : ", ", (long long)b->pid, exe, alive ? "true" : "false", threads,
                want_name(atomic_load(&b->enabled)), dtype_name(atomic_load(&b->dtype[0])));
        amp_json_string(out, command);
        fputc('}', out);
    } else {
        fprintf(out, "%-8lld %-20s %-6s %8d %-8s %-6s %s\n", (long long)b->pid, exe,
                alive ? "yes" : "DEAD", threads, want_name(atomic_load(&b->enabled)),
                dtype_name(atomic_load(&b->dtype[0])), command);
    }
}

void ampctl_render_status(FILE *out, const struct amp_ctl_block *b, int json)
{
    char exe[sizeof b->exe + 1];
    clean(exe, b->exe, sizeof b->exe);
    if (json)
        fprintf(out,
                "{\"pid\": %lld, \"exe\": \"%s\", \"enabled\": \"%s\", \"dtype\": \"%s\", "
                "\"cuda_dtype\": \"%s\", \"output\": \"%s\", \"generation\": %llu, \"threads\": [",
                (long long)b->pid, exe, want_name(atomic_load(&b->enabled)),
                dtype_name(atomic_load(&b->dtype[0])), dtype_name(atomic_load(&b->dtype[1])),
                atomic_load(&b->output_round) ? "round" : "keep",
                (unsigned long long)atomic_load(&b->generation));
    else {
        /* The live settings in the block, as the settings table names them. */
        fprintf(out, "pid %lld (%s):", (long long)b->pid, exe);
        const char *sep = " ";
        for (size_t i = 0; i < amp_setting_count; i++) {
            const struct amp_setting *s = &amp_settings[i];
            char value[64];
            if (!s->ctl || s->block_field == AMP_SETTING_NO_FIELD ||
                amp_ctl_get(b, s->ctl, value, sizeof value, NULL) != 0)
                continue;
            fprintf(out, "%s%s %s", sep, s->ctl + strlen("opt."), value);
            sep = ", ";
        }
        fprintf(out, "\n%-8s %-16s %-8s %-7s %-6s %12s %12s\n", "tid", "name", "enabled", "active",
                "dtype", amp_ctl_counter_names[AMP_CTL_LOWERED], "calls");
    }
    int first = 1;
    for (int i = 0; i < AMP_CTL_MAX_THREADS; i++) {
        const struct amp_thread *t = &b->threads[i];
        long long tid = (long long)atomic_load(&t->tid);
        if (!tid)
            continue;
        char name[sizeof t->name + 1];
        clean(name, t->name, sizeof t->name);
        unsigned long long lowered = 0, calls = 0;
        for (int h = 0; h < AMP_HOOK_COUNT; h++) {
            lowered += atomic_load_explicit(&t->counters[h][AMP_CTL_LOWERED], memory_order_relaxed);
            for (int c = 0; c < AMP_CTL_COUNTERS; c++)
                calls += amp_ctl_counter_is_outcome[c]
                             ? atomic_load_explicit(&t->counters[h][c], memory_order_relaxed)
                             : 0;
        }
        if (json)
            fprintf(out,
                    "%s{\"tid\": %lld, \"name\": \"%s\", \"enabled\": \"%s\", \"active\": %s, "
                    "\"dtype\": \"%s\", \"lowered\": %llu, \"calls\": %llu}",
                    first ? "" : ", ", tid, name, want_name(atomic_load(&t->want)),
                    t->selected ? "true" : "false", dtype_name(atomic_load(&t->dtype)), lowered,
                    calls);
        else
            fprintf(out, "%-8lld %-16s %-8s %-7s %-6s %12llu %12llu\n", tid, name,
                    want_name(atomic_load(&t->want)), t->selected ? "yes" : "no",
                    dtype_name(atomic_load(&t->dtype)), lowered, calls);
        first = 0;
    }
    if (json)
        fprintf(out, "]}\n");
}

void ampctl_render_stats(FILE *out, const struct amp_ctl_block *b, int json)
{
    if (json) {
        fprintf(out, "{\"pid\": %lld, \"symbols\": [", (long long)b->pid);
    } else {
        fprintf(out, "%-18s %-18s %10s", "symbol", "op", "calls");
        for (int i = 0; i < AMP_CTL_COUNTERS; i++)
            fprintf(out, " %*s", (int)amp_ctl_counter_width[i], amp_ctl_counter_names[i]);
        fputc('\n', out);
    }
    int first = 1;
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        uint64_t c[AMP_CTL_COUNTERS];
        for (int i = 0; i < AMP_CTL_COUNTERS; i++)
            c[i] = amp_ctl_counter(b, h, i);
        unsigned long long calls = amp_ctl_calls(c);
        if (!amp_ctl_row_used(c))
            continue;
        if (json)
            fprintf(out, "%s{\"symbol\": \"%s\", \"op\": \"%s\", \"calls\": %llu",
                    first ? "" : ", ", amp_hook_names[h], amp_op_names[amp_hook_op[h][0]], calls);
        else
            fprintf(out, "%-18s %-18s %10llu", amp_hook_names[h], amp_op_names[amp_hook_op[h][0]],
                    calls);
        for (int i = 0; i < AMP_CTL_COUNTERS; i++) {
            if (json)
                fprintf(out, ", \"%s\": %llu", amp_ctl_counter_names[i], (unsigned long long)c[i]);
            else
                fprintf(out, " %*llu", (int)amp_ctl_counter_width[i], (unsigned long long)c[i]);
        }
        fputs(json ? "}" : "\n", out);
        first = 0;
    }
    if (json) {
        fprintf(out, "], \"cpu_time\": ");
        amp_report_cpu_time(out, b, 1);
        fprintf(out, ", \"gpu_time\": ");
        amp_report_gpu_time(out, b, 1);
        fprintf(out, "}\n");
    } else {
        amp_report_cpu_time(out, b, 0);
        amp_report_gpu_time(out, b, 0);
    }
}
