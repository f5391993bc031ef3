/* The one writer of every table the shim and ampctl print, and of its JSON
 * twin (jemalloc's emitter is the model). A table's columns are described
 * once, each with its text header and width and its JSON key; a row is an
 * array of typed values. The text form aligns the rows under the header
 * (printed with the first row, after the table's title); the JSON form
 * writes each row as an object of the columns' keys. Structure (objects,
 * arrays, lone keys) is JSON only; free text is text only. So one function
 * writes both forms and they cannot drift apart.
 *
 *     struct amp_emitter e;
 *     amp_emit_begin(&e, out, json);
 *     amp_emit_object(&e, NULL);
 *     struct amp_emit_table t = {.title = "by call site:", .cols = cols, .n = 3};
 *     amp_emit_table(&e, &t, "sites");
 *     amp_emit_row(&e, &t, (struct amp_emit_val[]){AMP_EMIT_S("cblas_sgemm"), ...});
 *     amp_emit_end_table(&e, &t);
 *     amp_emit_u64(&e, "lowered_calls", n);
 *     amp_emit_text(&e, "lowering paid: ...\n");
 *     amp_emit_close(&e);
 */
#ifndef AMPSHIM_EMIT_H
#define AMPSHIM_EMIT_H

#include <stdint.h>
#include <stdio.h>

enum amp_emit_kind {
    AMP_EMIT_NONE, /* no value: "-" in text, null in JSON */
    AMP_EMIT_U64,
    AMP_EMIT_I64,
    AMP_EMIT_F, /* a double; Inf and NaN are null in JSON */
    AMP_EMIT_STR,
    AMP_EMIT_BOOL, /* text: yes/no; JSON: true/false */
    AMP_EMIT_RAW,  /* a JSON number or literal the caller made, as it is */
};

struct amp_emit_val {
    enum amp_emit_kind kind;
    union {
        uint64_t u;
        int64_t i;
        double f;
        const char *s;
    };
};
#define AMP_EMIT_U(x) ((struct amp_emit_val){.kind = AMP_EMIT_U64, .u = (x)})
#define AMP_EMIT_I(x) ((struct amp_emit_val){.kind = AMP_EMIT_I64, .i = (x)})
#define AMP_EMIT_D(x) ((struct amp_emit_val){.kind = AMP_EMIT_F, .f = (x)})
#define AMP_EMIT_S(x) ((struct amp_emit_val){.kind = AMP_EMIT_STR, .s = (x)})
#define AMP_EMIT_B(x) ((struct amp_emit_val){.kind = AMP_EMIT_BOOL, .u = !!(x)})
#define AMP_EMIT_RAW(x) ((struct amp_emit_val){.kind = AMP_EMIT_RAW, .s = (x)})
#define AMP_EMIT_NA ((struct amp_emit_val){.kind = AMP_EMIT_NONE})

enum {
    AMP_EMIT_LEFT = 1,  /* text: left-aligned (numbers are right-aligned) */
    AMP_EMIT_CLIP = 2,  /* text: cut to the width */
    AMP_EMIT_SIGN = 4,  /* text: a number with its sign, + too */
    AMP_EMIT_TIMES = 8, /* text: a ratio, "1.52x" */
};

struct amp_emit_col {
    const char *head; /* the text header; NULL: a JSON-only column */
    const char *key;  /* the JSON key; NULL: a text-only column */
    int width;        /* text width (a wider value pushes the line) */
    int prec;         /* text: digits after the point of a double */
    unsigned flags;   /* AMP_EMIT_LEFT, ... */
    const char *json; /* JSON: a double's format ("%.0f"); NULL: "%.17g" */
};

enum { AMP_EMIT_MAX_COLS = 48 };

struct amp_emit_table {
    const char *title; /* text: a line before the header; NULL: none */
    const struct amp_emit_col *cols;
    int n;           /* at most AMP_EMIT_MAX_COLS */
    int head_always; /* text: the title and header even with no rows */
    int rows;        /* rows written so far */
};

/* A table's columns from an array: .cols and .n of a struct amp_emit_table
 * initialiser, the count the array's own. */
#define AMP_EMIT_COLUMNS(array) .cols = (array), .n = (int)(sizeof(array) / sizeof *(array))

enum { AMP_EMIT_DEPTH = 16 };

struct amp_emitter {
    FILE *out;
    int json;
    int depth;
    unsigned char items[AMP_EMIT_DEPTH]; /* whether a value was written at each depth */
    char closer[AMP_EMIT_DEPTH];         /* '}' or ']' */
};

void amp_emit_begin(struct amp_emitter *e, FILE *out, int json);

/* JSON: an object or array, under key (NULL inside an array or at the
 * top); closed by amp_emit_close. Text: nothing. */
void amp_emit_object(struct amp_emitter *e, const char *key);
void amp_emit_array(struct amp_emitter *e, const char *key);
void amp_emit_close(struct amp_emitter *e);

/* JSON: "key": value (key NULL inside an array). Text: nothing. */
void amp_emit_value(struct amp_emitter *e, const char *key, struct amp_emit_val v,
                    const char *json_format);
void amp_emit_u64(struct amp_emitter *e, const char *key, uint64_t v);
void amp_emit_str(struct amp_emitter *e, const char *key, const char *s);
void amp_emit_num(struct amp_emitter *e, const char *key, double v, const char *json_format);

/* Text only: free text (a line, a note). JSON: nothing. */
void amp_emit_text(struct amp_emitter *e, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* A table: in JSON an array under key; its rows objects. In text the
 * title and the header come with the first row, so an empty table prints
 * nothing. amp_emit_row_open leaves a JSON row open for more values (the
 * caller closes it with amp_emit_close); amp_emit_row closes it. */
void amp_emit_table(struct amp_emitter *e, struct amp_emit_table *t, const char *key);
void amp_emit_row_open(struct amp_emitter *e, struct amp_emit_table *t,
                       const struct amp_emit_val *vals);
void amp_emit_row(struct amp_emitter *e, struct amp_emit_table *t, const struct amp_emit_val *vals);
void amp_emit_end_table(struct amp_emitter *e, struct amp_emit_table *t);

/* s as a JSON string, quotes included: quote, backslash, control
 * characters and bytes above 0x7e escaped (\u00XX), so the output is valid
 * JSON and ASCII whatever the bytes were. */
void amp_json_string(FILE *out, const char *s);

#endif
