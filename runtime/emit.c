/* The one writer of tables and their JSON (runtime/emit.h). */
#include "runtime/emit.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

void amp_emit_begin(struct amp_emitter *e, FILE *out, int json)
{
    memset(e, 0, sizeof *e);
    e->out = out;
    e->json = json;
}

/* JSON: the comma before a value, and its key. */
static void json_key(struct amp_emitter *e, const char *key)
{
    if (e->items[e->depth])
        fputs(", ", e->out);
    e->items[e->depth] = 1;
    if (key) {
        amp_json_string(e->out, key);
        fputs(": ", e->out);
    }
}

static void open_nested(struct amp_emitter *e, const char *key, char opener, char closer)
{
    if (!e->json)
        return;
    json_key(e, key);
    fputc(opener, e->out);
    if (e->depth + 1 < AMP_EMIT_DEPTH)
        e->depth++;
    e->items[e->depth] = 0;
    e->closer[e->depth] = closer;
}

void amp_emit_object(struct amp_emitter *e, const char *key)
{
    open_nested(e, key, '{', '}');
}

void amp_emit_array(struct amp_emitter *e, const char *key)
{
    open_nested(e, key, '[', ']');
}

void amp_emit_close(struct amp_emitter *e)
{
    if (!e->json || e->depth == 0)
        return;
    fputc(e->closer[e->depth], e->out);
    e->depth--;
}

static void json_value(FILE *out, struct amp_emit_val v, const char *format)
{
    switch (v.kind) {
    case AMP_EMIT_U64:
        fprintf(out, "%" PRIu64, v.u);
        break;
    case AMP_EMIT_I64:
        fprintf(out, "%" PRId64, v.i);
        break;
    case AMP_EMIT_F:
        if (isfinite(v.f))
            fprintf(out, format ? format : "%.17g", v.f);
        else
            fputs("null", out); /* JSON has no Inf or NaN */
        break;
    case AMP_EMIT_STR:
        amp_json_string(out, v.s ? v.s : "");
        break;
    case AMP_EMIT_RAW:
        fputs(v.s && v.s[0] ? v.s : "null", out);
        break;
    case AMP_EMIT_BOOL:
        fputs(v.u ? "true" : "false", out);
        break;
    case AMP_EMIT_NONE:
        fputs("null", out);
        break;
    }
}

void amp_emit_value(struct amp_emitter *e, const char *key, struct amp_emit_val v,
                    const char *json_format)
{
    if (!e->json)
        return;
    json_key(e, key);
    json_value(e->out, v, json_format);
}

void amp_emit_u64(struct amp_emitter *e, const char *key, uint64_t v)
{
    amp_emit_value(e, key, AMP_EMIT_U(v), NULL);
}

void amp_emit_str(struct amp_emitter *e, const char *key, const char *s)
{
    amp_emit_value(e, key, AMP_EMIT_S(s), NULL);
}

void amp_emit_num(struct amp_emitter *e, const char *key, double v, const char *json_format)
{
    amp_emit_value(e, key, AMP_EMIT_D(v), json_format);
}

void amp_emit_text(struct amp_emitter *e, const char *format, ...)
{
    if (e->json)
        return;
    va_list ap;
    va_start(ap, format);
    vfprintf(e->out, format, ap);
    va_end(ap);
}

/* One text cell as printf's %*s would pad it: right-aligned unless the
 * column says left, cut to the width where it says so. */
static void text_cell(FILE *out, const struct amp_emit_col *c, const char *s)
{
    int len = (int)strlen(s), w = c->width;
    if ((c->flags & AMP_EMIT_CLIP) && len > w)
        len = w;
    if (!(c->flags & AMP_EMIT_LEFT))
        fprintf(out, "%*s", w > len ? w - len : 0, "");
    fwrite(s, 1, (size_t)len, out);
    if (c->flags & AMP_EMIT_LEFT)
        fprintf(out, "%*s", w > len ? w - len : 0, "");
}

static void text_value(char *buf, size_t len, const struct amp_emit_col *c, struct amp_emit_val v)
{
    switch (v.kind) {
    case AMP_EMIT_U64:
        snprintf(buf, len, "%" PRIu64, v.u);
        break;
    case AMP_EMIT_I64:
        snprintf(buf, len, (c->flags & AMP_EMIT_SIGN) ? "%+" PRId64 : "%" PRId64, v.i);
        break;
    case AMP_EMIT_F:
        snprintf(buf, len, (c->flags & AMP_EMIT_SIGN) ? "%+.*f%s" : "%.*f%s", c->prec, v.f,
                 (c->flags & AMP_EMIT_TIMES) ? "x" : "");
        break;
    case AMP_EMIT_STR:
    case AMP_EMIT_RAW:
        snprintf(buf, len, "%s", v.s ? v.s : "");
        break;
    case AMP_EMIT_BOOL:
        snprintf(buf, len, "%s", v.u ? "yes" : "no");
        break;
    case AMP_EMIT_NONE:
        snprintf(buf, len, "-");
        break;
    }
}

/* Text: one line of a table, cells[i] for the columns that have a header
 * (the header itself, or a row's values as text). */
static void text_line(FILE *out, const struct amp_emit_table *t, const char *const *cells)
{
    int first = 1;
    for (int i = 0; i < t->n && i < AMP_EMIT_MAX_COLS; i++) {
        if (!t->cols[i].head)
            continue;
        if (!first)
            fputc(' ', out);
        text_cell(out, &t->cols[i], cells[i]);
        first = 0;
    }
    fputc('\n', out);
}

/* Text: the table's title and header line. */
static void text_head(struct amp_emitter *e, const struct amp_emit_table *t)
{
    if (t->title)
        fprintf(e->out, "%s\n", t->title);
    const char *heads[AMP_EMIT_MAX_COLS];
    for (int i = 0; i < t->n && i < AMP_EMIT_MAX_COLS; i++)
        heads[i] = t->cols[i].head;
    text_line(e->out, t, heads);
}

void amp_emit_table(struct amp_emitter *e, struct amp_emit_table *t, const char *key)
{
    t->rows = 0;
    amp_emit_array(e, key);
    if (t->head_always && !e->json)
        text_head(e, t);
}

void amp_emit_row_open(struct amp_emitter *e, struct amp_emit_table *t,
                       const struct amp_emit_val *vals)
{
    int first_row = t->rows++ == 0;
    if (e->json) {
        amp_emit_object(e, NULL);
        for (int i = 0; i < t->n; i++)
            if (t->cols[i].key)
                amp_emit_value(e, t->cols[i].key, vals[i], t->cols[i].json);
        return;
    }
    if (first_row && !t->head_always)
        text_head(e, t);
    char text[AMP_EMIT_MAX_COLS][64]; /* a number's text; a string is shown as it is */
    const char *cells[AMP_EMIT_MAX_COLS];
    for (int i = 0; i < t->n && i < AMP_EMIT_MAX_COLS; i++) {
        int string = vals[i].kind == AMP_EMIT_STR || vals[i].kind == AMP_EMIT_RAW;
        cells[i] = string && vals[i].s ? vals[i].s : text[i];
        if (t->cols[i].head && cells[i] == text[i])
            text_value(text[i], sizeof text[i], &t->cols[i], vals[i]);
    }
    text_line(e->out, t, cells);
}

void amp_emit_row(struct amp_emitter *e, struct amp_emit_table *t, const struct amp_emit_val *vals)
{
    amp_emit_row_open(e, t, vals);
    amp_emit_close(e);
}

void amp_emit_end_table(struct amp_emitter *e, struct amp_emit_table *t)
{
    (void)t;
    amp_emit_close(e);
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
