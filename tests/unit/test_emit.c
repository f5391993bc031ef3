/* The emitter (runtime/emit.h): one table written both ways. The text form
 * is compared with printf's own alignment of the same cells, byte for
 * byte; the JSON form with the exact expected bytes, and a table of 600
 * rows (more than an unsigned char counts) keeps its commas. Inf and NaN
 * are null, names are escaped, a text-only column is absent from the JSON
 * and a JSON-only one from the text, an empty table prints nothing unless
 * its header is asked for always. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/emit.h"
#include "tests/check.h"

static const struct amp_emit_col cols[] = {
    {"symbol", "symbol", 12, 0, AMP_EMIT_LEFT, NULL},
    {"caller", NULL, 8, 0, AMP_EMIT_LEFT | AMP_EMIT_CLIP, NULL},
    {"calls", "calls", 7, 0, 0, NULL},
    {NULL, "ns", 0, 0, 0, NULL},
    {"speed", "speedup", 8, 2, AMP_EMIT_TIMES, "%.4g"},
    {"saved ms", "saved", 10, 1, AMP_EMIT_SIGN, "%.0f"},
    {"ok", "ok", 4, 0, AMP_EMIT_LEFT, NULL},
};
enum { N = sizeof cols / sizeof *cols };

static void write_table(FILE *f, int json, int rows)
{
    struct amp_emitter e;
    amp_emit_begin(&e, f, json);
    amp_emit_object(&e, NULL);
    amp_emit_str(&e, "exe", "a \"quoted\"\tname");
    struct amp_emit_table t = {.title = "the title:", .cols = cols, .n = N};
    amp_emit_table(&e, &t, "rows");
    for (int r = 0; r < rows; r++) {
        struct amp_emit_val v[N] = {
            AMP_EMIT_S(r % 2 ? "cblas_sgemm" : "a_much_longer_symbol"),
            AMP_EMIT_S("caller_too_long_for_it"),
            AMP_EMIT_U((uint64_t)r * 1000),
            AMP_EMIT_U(123456789),
            r == 1 ? AMP_EMIT_NA : AMP_EMIT_D(r == 2 ? INFINITY : 1.5),
            AMP_EMIT_D(r % 2 ? -2.25 : 3.0),
            AMP_EMIT_B(r % 2),
        };
        amp_emit_row(&e, &t, v);
    }
    amp_emit_end_table(&e, &t);
    amp_emit_num(&e, "nan", NAN, NULL);
    amp_emit_text(&e, "a closing line\n");
    amp_emit_close(&e);
}

static char *written(int json, int rows)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    write_table(f, json, rows);
    fclose(f);
    return text;
}

int main(void)
{
    /* Text: what printf makes of the same cells. */
    char want[2048];
    snprintf(want, sizeof want,
             "the title:\n%-12s %-8s %7s %8s %10s %-4s\n"
             "%-12s %-8.8s %7d %7.2fx %+10.1f %-4s\n"
             "%-12s %-8.8s %7d %8s %+10.1f %-4s\n"
             "%-12s %-8.8s %7d %7.2fx %+10.1f %-4s\n"
             "a closing line\n",
             "symbol", "caller", "calls", "speed", "saved ms", "ok", "a_much_longer_symbol",
             "caller_too_long_for_it", 0, 1.5, 3.0, "no", "cblas_sgemm", "caller_too_long_for_it",
             1000, "-", -2.25, "yes", "a_much_longer_symbol", "caller_too_long_for_it", 2000,
             INFINITY, 3.0, "no");
    char *text = written(0, 3);
    CHECK(strcmp(text, want) == 0, "text:\n%s\nwanted:\n%s", text, want);
    free(text);

    /* JSON: keys of the JSON columns only, null for NaN, Inf and no value,
     * names escaped. */
    const char *want_json =
        "{\"exe\": \"a \\\"quoted\\\"\\u0009name\", \"rows\": ["
        "{\"symbol\": \"a_much_longer_symbol\", \"calls\": 0, \"ns\": 123456789, "
        "\"speedup\": 1.5, \"saved\": 3, \"ok\": false}, "
        "{\"symbol\": \"cblas_sgemm\", \"calls\": 1000, \"ns\": 123456789, "
        "\"speedup\": null, \"saved\": -2, \"ok\": true}, "
        "{\"symbol\": \"a_much_longer_symbol\", \"calls\": 2000, \"ns\": 123456789, "
        "\"speedup\": null, \"saved\": 3, \"ok\": false}], \"nan\": null}";
    char *json = written(1, 3);
    CHECK(strcmp(json, want_json) == 0, "JSON:\n%s\nwanted:\n%s", json, want_json);
    free(json);

    /* An empty table: no title, no header; with head_always both. */
    text = written(0, 0);
    CHECK(strcmp(text, "a closing line\n") == 0, "empty table: '%s'", text);
    free(text);
    {
        char *t2 = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&t2, &len);
        struct amp_emitter e;
        amp_emit_begin(&e, f, 0);
        struct amp_emit_table t = {.title = "T", .cols = cols, .n = N, .head_always = 1};
        amp_emit_table(&e, &t, NULL);
        amp_emit_end_table(&e, &t);
        fclose(f);
        snprintf(want, sizeof want, "T\n%-12s %-8s %7s %8s %10s %-4s\n", "symbol", "caller",
                 "calls", "speed", "saved ms", "ok");
        CHECK(strcmp(t2, want) == 0, "head_always: '%s'", t2);
        free(t2);
    }

    /* 600 rows: a comma between every two, one row object each. */
    json = written(1, 600);
    size_t rows = 0, commas = 0;
    for (const char *p = strstr(json, "\"rows\": ["); p && *p && *p != ']'; p++) {
        rows += strncmp(p, "{\"symbol\"", 9) == 0;
        commas += strncmp(p, "}, {", 4) == 0;
    }
    CHECK(rows == 600 && commas == 599, "600 rows: %zu objects, %zu separators", rows, commas);
    CHECK(strstr(json, "}{") == NULL, "600 rows: two objects without a comma");
    free(json);

    printf("test_emit: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
