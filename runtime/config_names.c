/* The AMPSHIM_ names of a process's environment that are no setting (a
 * misspelling): one warning each, naming the nearest setting. */
#include <stdint.h>
#include <string.h>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/settings.h"

/* Edit distance (insertions, deletions, substitutions) of a and b, both
 * shorter than 64 characters. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Variables of the project's own tools, not the shim's: a process that
 * has them set is not told they are no setting. */
static const char *const tool_variables[] = {
    "AMPSHIM_BUILD_DIR", /* scripts/test.sh, the tests: where the build is */
    "AMPSHIM_PIP_VENV",  /* scripts/install-deps.sh, meson: pip's venv (docs/using.md) */
};

static int tool_variable(const char *entry, size_t len)
{
    for (size_t i = 0; i < sizeof tool_variables / sizeof *tool_variables; i++)
        if (strlen(tool_variables[i]) == len && strncmp(entry, tool_variables[i], len) == 0)
            return 1;
    return 0;
}

int amp_config_check_names(char *const *env)
{
    static const char prefix[] = "AMPSHIM_";
    int unknown = 0;
    for (; env && *env; env++) {
        const char *entry = *env;
        size_t len = strcspn(entry, "=");
        if (strncmp(entry, prefix, sizeof prefix - 1) != 0 ||
            strncmp(entry, "AMPSHIM_TEST_", 13) == 0 || tool_variable(entry, len))
            continue;
        const char *nearest = NULL;
        size_t best = SIZE_MAX;
        int known = 0;
        for (size_t k = 0; k < amp_setting_count && !known; k++) {
            const char *name = amp_settings[k].env;
            if (!name)
                continue;
            size_t n = strlen(name);
            if (n == len && strncmp(entry, name, len) == 0) {
                known = 1;
            } else if (len < 64 && n < 64) {
                size_t d = edit_distance(entry, len, name, n);
                if (d < best) {
                    best = d;
                    nearest = name;
                }
            }
        }
        if (known)
            continue;
        unknown++;
        if (nearest && best <= 4)
            amp_log(AMP_LOG_WARN, "%.*s: no such setting (did you mean %s?); ignored", (int)len,
                    entry, nearest);
        else
            amp_log(AMP_LOG_WARN,
                    "%.*s: no such setting (ampshim(7), ENVIRONMENT, lists them); ignored",
                    (int)len, entry);
    }
    return unknown;
}
