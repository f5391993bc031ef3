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
#include "runtime/threads.h"
#include "runtime/settings.h"
#include "runtime/site_time.h"

/* One row: symbol, op, policy, calls, then every counter. */
static void write_row(FILE *out, int width, const char *symbol, const char *op, const char *policy,
                      const uint64_t c[AMP_CTL_COUNTERS])
{
    fprintf(out, "%-*s %-18s %-11s %10" PRIu64, width, symbol, op, policy, amp_ctl_calls(c));
    for (int i = 0; i < AMP_CTL_COUNTERS; i++)
        fprintf(out, " %*" PRIu64, (int)amp_ctl_counter_width[i], c[i]);
    fputc('\n', out);
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
    fprintf(out, "%-*s %-18s %-11s %10s", width, "symbol", "op", "policy", "calls");
    for (int i = 0; i < AMP_CTL_COUNTERS; i++)
        fprintf(out, " %*s", (int)amp_ctl_counter_width[i], amp_ctl_counter_names[i]);
    fputc('\n', out);
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        if (!amp_ctl_row_used(c[h]))
            continue;
        uint8_t category = amp_live_load(&amp_rt.category[amp_hook_device[h]][h][0]);
        write_row(out, width, amp_hook_names[h], amp_op_names[amp_hook_op[h][0]],
                  amp_category_names[category], c[h]);
    }
    write_row(out, width, "total", "", "", totals);
    amp_report_cpu_time(out, amp_ctl, 0);
    amp_report_gpu_time(out, amp_ctl, 0);
    return rows;
}

int amp_report_cpu_time(FILE *out, const struct amp_ctl_block *b, int json)
{
    int rows = 0;
    /* What lowering bought, in ns: the lowered calls' time, estimated from
     * the timed ones, against their flops at the rate of the same symbol's
     * calls of the same size class run as made. */
    double spent = 0, at_fp32 = 0;
    uint64_t weighed = 0, lowered_all = 0;
    if (json)
        fputs("{\"symbols\": [", out);
    int width = 24; /* the symbol column: as wide as the longest shown */
    for (int h = 0; b && h < AMP_HOOK_COUNT; h++)
        for (int k = 0; k < AMP_CPU_TIME_CLASSES; k++)
            if (atomic_load_explicit(&b->cpu_time[h][k][AMP_CPU_TIMED_LOWERED],
                                     memory_order_relaxed) ||
                atomic_load_explicit(&b->cpu_time[h][k][AMP_CPU_TIMED_MADE], memory_order_relaxed))
                width =
                    (int)strlen(amp_hook_names[h]) > width ? (int)strlen(amp_hook_names[h]) : width;
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
        uint64_t tl = v[AMP_CPU_TIMED_LOWERED], tm = v[AMP_CPU_TIMED_MADE];
        if (!tl && !tm)
            continue;
        lowered_all += tl ? lowered : 0;
        double us_l = tl ? (double)v[AMP_CPU_NS_LOWERED] / 1e3 / (double)tl : 0,
               us_m = tm ? (double)v[AMP_CPU_NS_MADE] / 1e3 / (double)tm : 0;
        double rate_l = v[AMP_CPU_NS_LOWERED]
                            ? (double)v[AMP_CPU_FLOPS_LOWERED] / (double)v[AMP_CPU_NS_LOWERED]
                            : 0,
               rate_m = v[AMP_CPU_NS_MADE]
                            ? (double)v[AMP_CPU_FLOPS_MADE] / (double)v[AMP_CPU_NS_MADE]
                            : 0; /* flops per ns: GFLOP/s */
        if (json) {
            fprintf(out,
                    "%s{\"symbol\": \"%s\", \"timed_lowered\": %" PRIu64
                    ", \"ns_lowered\": %" PRIu64 ", \"flops_lowered\": %" PRIu64
                    ", \"timed_made\": %" PRIu64 ", \"ns_made\": %" PRIu64
                    ", \"flops_made\": %" PRIu64 "}",
                    rows ? ", " : "", amp_hook_names[h], tl, v[AMP_CPU_NS_LOWERED],
                    v[AMP_CPU_FLOPS_LOWERED], tm, v[AMP_CPU_NS_MADE], v[AMP_CPU_FLOPS_MADE]);
        } else {
            if (!rows)
                fprintf(out,
                        "CPU time of the timed calls (one in %u of a thread's calls that are not "
                        "pass-throughs):\n%-*s %12s %12s %9s %12s %12s %9s\n",
                        (unsigned)atomic_load(&b->cpu_timing_sample), width, "symbol",
                        "timed lowered", "us/call low", "GFLOP/s", "timed made", "us/call made",
                        "GFLOP/s");
            fprintf(out, "%-*s %12" PRIu64 " %12.2f %9.2f %12" PRIu64 " %12.2f %9.2f\n", width,
                    amp_hook_names[h], tl, us_l, rate_l, tm, us_m, rate_m);
        }
        rows++;
    }
    if (json) {
        fputs("], \"sites\": ", out);
        if (b)
            amp_site_time_write(out, b, 1);
        else
            fputs("[]", out);
        fprintf(out,
                ", \"lowered_calls_weighed\": %" PRIu64 ", \"lowered_ns_estimate\": %.0f"
                ", \"fp32_ns_estimate\": %.0f, \"pay\": ",
                weighed, spent, at_fp32);
        amp_pay_write(out, b, 1);
        fputc('}', out);
        return rows;
    }
    if (rows && b)
        amp_site_time_write(out, b, 0);
    /* Did it pay: the pay checks' answer, else the timed calls' estimate. */
    if (b && amp_pay_write(out, b, 0)) {
    } else if (weighed && spent > 0) {
        fprintf(out,
                "lowering bought: about %" PRIu64 " of %" PRIu64 " lowered calls had calls of "
                "their size run as made to compare with: they took about %.3g ms, at the as-made "
                "rate about %.3g ms (%.2fx as fast lowered)\n",
                weighed, lowered_all, spent / 1e6, at_fp32 / 1e6, at_fp32 / spent);
    }
    return rows;
}

int amp_report_gpu_time(FILE *out, const struct amp_ctl_block *b, int json)
{
    int rows = 0;
    if (json)
        fputc('[', out);
    for (int h = 0; b && h < AMP_HOOK_COUNT; h++) {
        uint64_t g[4];
        for (int i = 0; i < 4; i++)
            g[i] = atomic_load_explicit(&b->gpu_time[h][i], memory_order_relaxed);
        if (!g[AMP_GPU_TIMED_LOWERED] && !g[AMP_GPU_TIMED_MADE])
            continue;
        double low = g[AMP_GPU_TIMED_LOWERED]
                         ? (double)g[AMP_GPU_NS_LOWERED] / 1e3 / (double)g[AMP_GPU_TIMED_LOWERED]
                         : 0.0,
               made = g[AMP_GPU_TIMED_MADE]
                          ? (double)g[AMP_GPU_NS_MADE] / 1e3 / (double)g[AMP_GPU_TIMED_MADE]
                          : 0.0;
        if (json) {
            fprintf(out,
                    "%s{\"symbol\": \"%s\", \"timed_lowered\": %" PRIu64
                    ", \"ns_lowered\": %" PRIu64 ", \"timed_made\": %" PRIu64
                    ", \"ns_made\": %" PRIu64 "}",
                    rows ? ", " : "", amp_hook_names[h], g[AMP_GPU_TIMED_LOWERED],
                    g[AMP_GPU_NS_LOWERED], g[AMP_GPU_TIMED_MADE], g[AMP_GPU_NS_MADE]);
        } else {
            if (!rows)
                fprintf(out,
                        "GPU time of the timed calls (every %u-th hooked CUDA call of a thread):\n"
                        "%-24s %12s %14s %12s %14s %8s\n",
                        (unsigned)atomic_load(&b->cuda_timing_sample), "symbol", "timed lowered",
                        "us/call low", "timed made", "us/call made", "made/low");
            fprintf(out, "%-24s %12" PRIu64 " %14.2f %12" PRIu64 " %14.2f ", amp_hook_names[h],
                    g[AMP_GPU_TIMED_LOWERED], low, g[AMP_GPU_TIMED_MADE], made);
            if (low > 0 && made > 0)
                fprintf(out, "%7.2fx\n", made / low);
            else
                fprintf(out, "%8s\n", "-");
        }
        rows++;
    }
    if (json)
        fputc(']', out);
    return rows;
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

void amp_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p > 0x7e)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}
