/* libFuzzer target for every parser of user input: AMPSHIM_POLICY pairs,
 * policy files, each AMPSHIM_* variable's value, and AMPSHIM_THREADS
 * matching. The first byte picks the parser; the rest is the text. Beyond
 * memory safety (run under ASan/UBSan) it checks that each bad policy entry
 * is reported once, in one line, and changes nothing (a bad entry appended
 * to any text leaves the overrides as the text alone makes them), and that
 * every warning is one line with the fixed prefix. The variables come from config's own table;
 * AMPSHIM_LOG_FILE is left out: it creates files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "runtime/config.h"

static const char *fuzz_name, *fuzz_value;

/* A bad-entry report: one line, counted. */
static void count_one_line(void *ctx, const char *message)
{
    if (strchr(message, '\n'))
        abort();
    ++*(int *)ctx;
}

static const char *one_var(const char *name)
{
    return strcmp(name, fuzz_name) == 0 ? fuzz_value : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The variables from config's own table, less those that open files. */
    static const char *vars[64];
    static size_t n_vars;
    if (!n_vars)
        for (size_t i = 0; amp_config_variable(i, NULL) && n_vars < 64; i++) {
            int opens_file;
            const char *name = amp_config_variable(i, &opens_file);
            if (!opens_file)
                vars[n_vars++] = name;
        }
    if (size < 1)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    unsigned pick = data[0];

    if (pick < 64) { /* policy text, comma or file syntax */
        struct amp_policy_overrides ov, with_bad;
        amp_policy_overrides_clear(&ov);
        amp_policy_parse("cpu:mm=fp32", 0, &ov, (char[64]){0}, 64);
        with_bad = ov;
        int reported = 0;
        int bad = amp_policy_parse_each(text, pick & 1, &ov, count_one_line, &reported);
        if (bad != reported)
            abort(); /* each bad entry reported once */
        /* The same text with a bad entry after it: one more report, and
         * the same overrides. */
        size_t len = strlen(text);
        char *more = malloc(len + 16);
        memcpy(more, text, len);
        strcpy(more + len, (pick & 1) ? "\nzz=fast" : ",zz=fast");
        reported = 0;
        int bad_more = amp_policy_parse_each(more, pick & 1, &with_bad, count_one_line, &reported);
        free(more);
        if (bad_more != reported || memcmp(&ov, &with_bad, sizeof ov) != 0)
            abort();
        for (int h = 0; h < AMP_HOOK_COUNT; h++)
            if (amp_policy_category(&ov, AMP_DEVICE_CPU, (enum amp_hook_id)h, h & 1) >= AMP_CAT_COUNT)
                abort();
    } else if (pick < 192) { /* one variable's value */
        char log[4096] = "";
        FILE *sink = fmemopen(log, sizeof log - 1, "w");
        amp_log_set_stream(sink);
        fuzz_name = vars[pick % n_vars];
        fuzz_value = text;
        struct amp_config cfg;
        int errors = amp_config_load(&cfg, one_var);
        fclose(sink);
        amp_log_set_stream(NULL);
        /* One line per complaint, each with the prefix; only the policy
         * variables may have more than one (one per bad entry). */
        int lines = 0, full = strlen(log) >= sizeof log - 2; /* the sink ran out */
        for (const char *l = log; *l; l = strchr(l, '\n') + 1) {
            if (!strchr(l, '\n') && full)
                break;
            if (strncmp(l, "ampshim: ", 9) != 0 || !strchr(l, '\n'))
                abort();
            lines++;
        }
        if ((!full && lines != errors) || (errors > 1 && !strstr(fuzz_name, "POLICY")))
            abort();
        amp_config_selects_thread(&cfg, 1234, 1000, "worker-1");
    } else { /* thread selection: the text is the list, then a name */
        struct amp_config cfg;
        fuzz_name = "AMPSHIM_THREADS";
        fuzz_value = text;
        amp_log_set_level(AMP_LOG_OFF);
        amp_config_load(&cfg, one_var);
        amp_config_selects_thread(&cfg, (long)size, 77, text);
        amp_config_selects_thread(&cfg, 77, 77, NULL);
    }
    free(text);
    return 0;
}
