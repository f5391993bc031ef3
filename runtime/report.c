/* The exit report: a table of counters per hooked symbol, with the op and
 * category the policy gave it, so a user sees what was autocast. */
#include "runtime/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/state.h"

int amp_report_write(FILE *out)
{
    uint64_t totals[4] = {0};
    int rows = 0;
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        uint64_t c[4];
        amp_counters_total((enum amp_hook_id)h, c);
        uint64_t calls = c[0] + c[1] + c[2];
        if (calls == 0)
            continue;
        if (rows++ == 0) {
            const struct amp_config *cfg = &amp_rt.cfg;
            fprintf(out,
                    "ampshim report, pid %ld (%s): cpu dtype %s, output %s\n"
                    "%-18s %-18s %-11s %10s %10s %10s %12s %14s\n",
                    (long)getpid(), program_invocation_short_name,
                    amp_dtype_names[cfg->dtype[AMP_DEVICE_CPU]], cfg->output_round ? "round" : "keep",
                    "symbol", "op", "policy", "calls", "lowered", "fp32", "passthrough",
                    "converted");
        }
        uint8_t op = amp_hook_op[h][0];
        fprintf(out, "%-18s %-18s %-11s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12" PRIu64
                     " %14" PRIu64 "\n",
                amp_hook_names[h], amp_op_names[op],
                amp_category_names[amp_live_load(&amp_rt.category[amp_hook_device[h]][h][0])], calls, c[0], c[1],
                c[2], c[3]);
        for (int i = 0; i < 4; i++)
            totals[i] += c[i];
    }
    if (rows)
        fprintf(out, "%-18s %-18s %-11s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12" PRIu64
                     " %14" PRIu64 "\n",
                "total", "", "", totals[0] + totals[1] + totals[2], totals[0], totals[1],
                totals[2], totals[3]);
    return rows;
}

/* Expands %p in a report path to the pid, so children sharing the variable
 * write separate files. */
static void expand_path(const char *in, char *out, size_t outlen)
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
    if (rows > 0) {
        if (cfg->report == AMP_REPORT_STDERR) {
            /* Library destructors run before stdio's last flush: without this
             * a piped program's own output would follow the report. */
            fflush(stdout);
            fwrite(text, 1, len, stderr);
        } else {
            char path[sizeof cfg->report_path + 32];
            expand_path(cfg->report_path, path, sizeof path);
            FILE *f = fopen(path, "ae");
            if (f) {
                fwrite(text, 1, len, f);
                fclose(f);
            } else {
                amp_log(AMP_LOG_WARN, "AMPSHIM_REPORT: cannot open '%s': %s", path,
                        strerror(errno));
            }
        }
    }
    free(text);
}
