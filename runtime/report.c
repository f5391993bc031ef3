/* The exit report: a table of counters per hooked symbol, with the op and
 * category the policy gave it, so a user sees what was autocast. */
#include "runtime/sites.h"
#include "runtime/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ampshim.h"
#include "runtime/ctl_names.h"
#include "runtime/emit.h"
#include "runtime/threads.h"
#include "runtime/settings.h"
#include "runtime/site_time.h"

void amp_counter_table_begin(struct amp_emitter *e, struct amp_counter_table *ct, int width,
                             int policy, const char *key)
{
    int n = 0;
    ct->cols[n++] = (struct amp_emit_col){"symbol", "symbol", width, 0, AMP_EMIT_LEFT, NULL};
    ct->cols[n++] = (struct amp_emit_col){"op", "op", 18, 0, AMP_EMIT_LEFT, NULL};
    if (policy)
        ct->cols[n++] = (struct amp_emit_col){"policy", "policy", 11, 0, AMP_EMIT_LEFT, NULL};
    ct->cols[n++] = (struct amp_emit_col){"calls", "calls", 10, 0, 0, NULL};
    for (int i = 0; i < AMP_CTL_COUNTERS; i++)
        ct->cols[n++] = (struct amp_emit_col){amp_ctl_counter_names[i],
                                              amp_ctl_counter_names[i],
                                              (int)amp_ctl_counter_width[i],
                                              0,
                                              0,
                                              NULL};
    ct->policy = policy;
    ct->t = (struct amp_emit_table){.cols = ct->cols, .n = n, .head_always = 1};
    amp_emit_table(e, &ct->t, key);
}

void amp_counter_table_row(struct amp_emitter *e, struct amp_counter_table *ct, const char *symbol,
                           const char *op, const char *policy, const uint64_t c[AMP_CTL_COUNTERS])
{
    struct amp_emit_val v[4 + AMP_CTL_COUNTERS];
    int n = 0;
    v[n++] = AMP_EMIT_S(symbol);
    v[n++] = AMP_EMIT_S(op);
    if (ct->policy)
        v[n++] = AMP_EMIT_S(policy);
    v[n++] = AMP_EMIT_U(amp_ctl_calls(c));
    for (int i = 0; i < AMP_CTL_COUNTERS; i++)
        v[n++] = AMP_EMIT_U(c[i]);
    amp_emit_row(e, &ct->t, v);
}

static void (*cpu_verdict)(FILE *out);

void amp_report_set_cpu_verdict(void (*verdict)(FILE *out))
{
    cpu_verdict = verdict;
}

void amp_cpu_flags_text(char *buf, size_t len)
{
    static const char *const wanted[] = {"avx2",        "f16c",     "avx512f", "avx512_bf16",
                                         "avx512_fp16", "amx_bf16", "amx_fp16"};
    char line[4096], model[96] = "", flags[160] = "";
    size_t used = 0;
    FILE *f = fopen("/proc/cpuinfo", "re");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *value = colon + 1 + (colon[1] == ' ');
        value[strcspn(value, "\n")] = '\0';
        if (!model[0] && strncmp(line, "model name", 10) == 0) {
            snprintf(model, sizeof model, "%s", value);
        } else if (!flags[0] && strncmp(line, "flags", 5) == 0) {
            for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++) {
                size_t n = strlen(wanted[i]);
                for (char *p = value; (p = strstr(p, wanted[i])); p += n)
                    if ((p == value || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) {
                        int w = snprintf(flags + used, sizeof flags - used, "%s%s", used ? " " : "",
                                         wanted[i]);
                        used += w > 0 && (size_t)w < sizeof flags - used ? (size_t)w : 0;
                        break;
                    }
            }
            if (!used)
                snprintf(flags, sizeof flags, "none of avx2, avx512, amx");
        }
        if (model[0] && flags[0])
            break;
    }
    if (f)
        fclose(f);
    const char *isa = secure_getenv("ONEDNN_MAX_CPU_ISA");
    if (!isa)
        isa = secure_getenv("DNNL_MAX_CPU_ISA");
    snprintf(buf, len, "%s [%s]%s%s", model[0] ? model : "unknown CPU", flags,
             isa ? ", ONEDNN_MAX_CPU_ISA=" : "", isa ? isa : "");
}

/* The report's notes: lines on what the shim could not see or reached
 * (amp_report_note). A note's text is written before its flag, so a report
 * written at any moment (at SIGTERM too) reads whole lines only. */
enum { NOTES = 8, NOTE_LEN = 320 };
static char notes[NOTES][NOTE_LEN];
static _Atomic int notes_taken, note_ready[NOTES];

void amp_report_note(const char *line)
{
    int i = atomic_fetch_add(&notes_taken, 1);
    if (i >= NOTES)
        return;
    snprintf(notes[i], NOTE_LEN, "%s", line);
    atomic_store_explicit(&note_ready[i], 1, memory_order_release);
}

static int write_notes(FILE *out)
{
    int n = 0;
    for (int i = 0; i < NOTES; i++)
        if (atomic_load_explicit(&note_ready[i], memory_order_acquire)) {
            fprintf(out, "%s\n", notes[i]);
            n++;
        }
    return n;
}

int amp_report_write(FILE *out)
{
    /* Gather first: the symbol column is as wide as the longest name shown,
     * and the CUDA dtype is named only when CUDA calls are reported. */
    uint64_t c[AMP_HOOK_COUNT][AMP_CTL_COUNTERS];
    uint64_t totals[AMP_CTL_COUNTERS] = {0};
    int rows = 0, width = 18, cuda = 0, cpu = 0;
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        amp_counters_total((enum amp_hook_id)h, c[h]);
        if (!amp_ctl_row_used(c[h]))
            continue;
        rows++;
        int len = (int)strlen(amp_hook_names[h]);
        width = len > width ? len : width;
        cuda |= amp_hook_device[h] == AMP_DEVICE_CUDA;
        cpu |= amp_hook_device[h] == AMP_DEVICE_CPU;
        for (int i = 0; i < AMP_CTL_COUNTERS; i++)
            totals[i] += c[h][i];
    }
    int noted = 0;
    for (int i = 0; i < NOTES; i++)
        noted += atomic_load_explicit(&note_ready[i], memory_order_acquire);
    if (!rows && !noted)
        return 0;
    /* The live settings as they are now (runtime/settings.h), the CUDA
     * ones only when CUDA calls are reported. */
    /* The release first: a report says which ampshim wrote it. */
    fprintf(out, "ampshim report, pid %ld (%s): version %d.%d.%d", (long)getpid(),
            program_invocation_short_name, AMPSHIM_VERSION_MAJOR, AMPSHIM_VERSION_MINOR,
            AMPSHIM_VERSION_PATCH);
    const char *sep = ", ";
    for (size_t i = 0; i < amp_setting_count; i++) {
        const struct amp_setting *s = &amp_settings[i];
        if (!s->live || s->cfg_field == AMP_SETTING_NO_FIELD ||
            (!cuda && amp_setting_device(s) == AMP_DEVICE_CUDA))
            continue;
        char value[64];
        amp_setting_text(s, &amp_rt.cfg, value, sizeof value);
        fprintf(out, "%s%s %s", sep, s->ctl + strlen("opt."), value);
        sep = ", ";
    }
    fputc('\n', out);
    if (cpu && cpu_verdict)
        cpu_verdict(out);
    if (cpu)
        amp_sites_report(out);
    write_notes(out);
    if (!rows) {
        fprintf(out, "no hooked call was seen\n");
        return noted;
    }
    struct amp_emitter e;
    amp_emit_begin(&e, out, 0);
    struct amp_counter_table ct;
    amp_counter_table_begin(&e, &ct, width, 1, NULL);
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        if (!amp_ctl_row_used(c[h]))
            continue;
        uint8_t category = amp_live_load(&amp_rt.category[amp_hook_device[h]][h][0]);
        amp_counter_table_row(&e, &ct, amp_hook_names[h], amp_op_names[amp_hook_op[h][0]],
                              amp_category_names[category], c[h]);
    }
    amp_counter_table_row(&e, &ct, "total", "", "", totals);
    amp_emit_end_table(&e, &ct.t);
    amp_report_cpu_time(&e, amp_ctl, NULL);
    amp_report_gpu_time(&e, amp_ctl, NULL);
    return rows;
}

int amp_report_cpu_time(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key)
{
    /* What lowering bought, in ns: the lowered calls' time, estimated from
     * the timed ones, against their flops at the rate of the same symbol's
     * calls of the same size class run as made. */
    double spent = 0, at_fp32 = 0;
    uint64_t weighed = 0, lowered_all = 0;
    int width = 24; /* the symbol column: as wide as the longest shown */
    for (int h = 0; b && h < AMP_HOOK_COUNT; h++)
        for (int k = 0; k < AMP_CPU_TIME_CLASSES; k++)
            if (atomic_load_explicit(&b->cpu_time[h][k][AMP_CPU_TIMED_LOWERED],
                                     memory_order_relaxed) ||
                atomic_load_explicit(&b->cpu_time[h][k][AMP_CPU_TIMED_MADE], memory_order_relaxed))
                width =
                    (int)strlen(amp_hook_names[h]) > width ? (int)strlen(amp_hook_names[h]) : width;
    char title[160];
    snprintf(title, sizeof title,
             "CPU time of the timed calls (one in %u of a thread's calls that are not "
             "pass-throughs):",
             b ? (unsigned)atomic_load(&b->cpu_timing_sample) : 0u);
    struct amp_emit_col cols[1 + AMP_TIME_COLS] = {
        {"symbol", "symbol", width, 0, AMP_EMIT_LEFT, NULL}};
    memcpy(cols + 1, amp_time_cols, sizeof amp_time_cols);
    struct amp_emit_table t = {.title = title, .cols = cols, .n = 1 + AMP_TIME_COLS};
    amp_emit_object(e, key);
    amp_emit_table(e, &t, "symbols");
    for (int h = 0; b && h < AMP_HOOK_COUNT; h++) {
        uint64_t v[AMP_CPU_TIME_FIELDS] = {0};
        uint64_t lowered = amp_ctl_counter(b, h, AMP_CTL_LOWERED);
        double per_timed = 0; /* lowered calls per timed lowered call */
        for (int pass = 0; pass < 2; pass++)
            for (int k = 0; k < AMP_CPU_TIME_CLASSES; k++) {
                uint64_t w[AMP_CPU_TIME_FIELDS];
                for (int i = 0; i < AMP_CPU_TIME_FIELDS; i++)
                    w[i] = atomic_load_explicit(&b->cpu_time[h][k][i], memory_order_relaxed);
                if (pass == 0) {
                    for (int i = 0; i < AMP_CPU_TIME_FIELDS; i++)
                        v[i] += w[i];
                    continue;
                }
                if (k == 0 && v[AMP_CPU_TIMED_LOWERED])
                    per_timed = (double)lowered / (double)v[AMP_CPU_TIMED_LOWERED];
                if (!w[AMP_CPU_TIMED_LOWERED] || !w[AMP_CPU_NS_MADE] || !w[AMP_CPU_FLOPS_MADE])
                    continue;
                double rate_made = (double)w[AMP_CPU_FLOPS_MADE] / (double)w[AMP_CPU_NS_MADE];
                spent += (double)w[AMP_CPU_NS_LOWERED] * per_timed;
                at_fp32 += (double)w[AMP_CPU_FLOPS_LOWERED] / rate_made * per_timed;
                weighed += (uint64_t)((double)w[AMP_CPU_TIMED_LOWERED] * per_timed + 0.5);
            }
        if (!v[AMP_CPU_TIMED_LOWERED] && !v[AMP_CPU_TIMED_MADE])
            continue;
        lowered_all += v[AMP_CPU_TIMED_LOWERED] ? lowered : 0;
        struct amp_emit_val row[1 + AMP_TIME_COLS] = {AMP_EMIT_S(amp_hook_names[h])};
        amp_time_vals(row + 1, v);
        amp_emit_row(e, &t, row);
    }
    amp_emit_end_table(e, &t);
    int rows = t.rows;
    if (rows || e->json)
        amp_site_time_write(e, b, "sites");
    amp_emit_u64(e, "lowered_calls_weighed", weighed);
    amp_emit_num(e, "lowered_ns_estimate", spent, "%.0f");
    amp_emit_num(e, "fp32_ns_estimate", at_fp32, "%.0f");
    /* Did it pay: the pay checks' answer, else the timed calls' estimate. */
    int paid = amp_pay_write(e, b, "pay");
    if (!paid && weighed && spent > 0)
        amp_emit_text(e,
                      "lowering bought: about %" PRIu64 " of %" PRIu64 " lowered calls had calls "
                      "of their size run as made to compare with: they took about %.3g ms, at the "
                      "as-made rate about %.3g ms (%.2fx as fast lowered)\n",
                      weighed, lowered_all, spent / 1e6, at_fp32 / 1e6, at_fp32 / spent);
    amp_emit_close(e);
    return rows;
}

int amp_report_gpu_time(struct amp_emitter *e, const struct amp_ctl_block *b, const char *key)
{
    char title[160];
    snprintf(title, sizeof title,
             "GPU time of the timed calls (every %u-th hooked CUDA call of a thread):",
             b ? (unsigned)atomic_load(&b->cuda_timing_sample) : 0u);
    static const struct amp_emit_col cols[] = {
        {"symbol", "symbol", 24, 0, AMP_EMIT_LEFT, NULL},
        {"timed lowered", "timed_lowered", 12, 0, 0, NULL},
        {"us/call low", NULL, 14, 2, 0, NULL},
        {NULL, "ns_lowered", 0, 0, 0, NULL},
        {"timed made", "timed_made", 12, 0, 0, NULL},
        {"us/call made", NULL, 14, 2, 0, NULL},
        {NULL, "ns_made", 0, 0, 0, NULL},
        {"made/low", NULL, 8, 2, AMP_EMIT_TIMES, NULL},
    };
    struct amp_emit_table t = {.title = title, AMP_EMIT_COLUMNS(cols)};
    amp_emit_table(e, &t, key);
    for (int h = 0; b && h < AMP_HOOK_COUNT; h++) {
        uint64_t g[4];
        for (int i = 0; i < 4; i++)
            g[i] = atomic_load_explicit(&b->gpu_time[h][i], memory_order_relaxed);
        uint64_t tl = g[AMP_GPU_TIMED_LOWERED], tm = g[AMP_GPU_TIMED_MADE];
        if (!tl && !tm)
            continue;
        double low = tl ? (double)g[AMP_GPU_NS_LOWERED] / 1e3 / (double)tl : 0.0,
               made = tm ? (double)g[AMP_GPU_NS_MADE] / 1e3 / (double)tm : 0.0;
        struct amp_emit_val row[] = {
            AMP_EMIT_S(amp_hook_names[h]),
            AMP_EMIT_U(tl),
            AMP_EMIT_D(low),
            AMP_EMIT_U(g[AMP_GPU_NS_LOWERED]),
            AMP_EMIT_U(tm),
            AMP_EMIT_D(made),
            AMP_EMIT_U(g[AMP_GPU_NS_MADE]),
            low > 0 && made > 0 ? AMP_EMIT_D(made / low) : AMP_EMIT_NA,
        };
        amp_emit_row(e, &t, row);
    }
    amp_emit_end_table(e, &t);
    return t.rows;
}

/* Expands %p in a report path to the pid, so children sharing the variable
 * write separate files. */
void amp_report_expand_path(const char *in, char *out, size_t outlen)
{
    size_t used = 0;
    for (const char *p = in; *p && used + 1 < outlen; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            int n = snprintf(out + used, outlen - used, "%ld", (long)getpid());
            used += n > 0 ? (size_t)n : 0;
            p++;
        } else {
            out[used++] = *p;
        }
    }
    out[used < outlen ? used : outlen - 1] = '\0';
}

void amp_report_emit(const char *text, size_t len)
{
    const struct amp_config *cfg = &amp_rt.cfg;
    if (cfg->report == AMP_REPORT_FILE) {
        char path[sizeof cfg->report_path + 32];
        amp_report_expand_path(cfg->report_path, path, sizeof path);
        char why[512];
        FILE *f = amp_open_output(path, why, sizeof why);
        if (f) {
            fwrite(text, 1, len, f);
            fclose(f);
        } else {
            amp_log(AMP_LOG_WARN, "AMPSHIM_REPORT: %s", why);
        }
    } else {
        /* Library destructors run before stdio's last flush: without this
         * a piped program's own output would follow the report. */
        fflush(stdout);
        fwrite(text, 1, len, stderr);
    }
}

void amp_report_print(void)
{
    const struct amp_config *cfg = &amp_rt.cfg;
    if (cfg->report == AMP_REPORT_OFF)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return;
    int rows = amp_report_write(mem);
    fclose(mem);
    if (rows > 0)
        amp_report_emit(text, len);
    free(text);
}
