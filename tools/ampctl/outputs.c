/* Reading and comparing a program's outputs for `ampctl check`
 * (outputs.h). Everything here reads what the program wrote, so every
 * length and offset is checked against the bytes there are. */
#include "outputs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ampctl_blob_read(struct ampctl_blob *b, const char *path, const char *name)
{
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 16;
    b->data = malloc(cap);
    for (size_t got; b->data && (got = fread(b->data + b->size, 1, cap - b->size, f)) > 0;) {
        b->size += got;
        if (b->size == cap) {
            char *more = cap < SIZE_MAX / 2 ? realloc(b->data, cap * 2) : NULL;
            if (!more) {
                free(b->data);
                b->data = NULL;
                break;
            }
            b->data = more;
            cap *= 2;
        }
    }
    int bad = ferror(f) || !b->data;
    fclose(f);
    if (bad) {
        free(b->data);
        b->data = NULL;
        errno = errno ? errno : ENOMEM;
        return -1;
    }
    return 0;
}

void ampctl_blob_free(struct ampctl_blob *b)
{
    free(b->data);
    b->data = NULL;
    b->size = 0;
}

/* ---- an output as values ---- */

enum kind { FLOAT, INTEGER, WORD };

struct value {
    enum kind kind;
    double x;      /* FLOAT, INTEGER */
    const char *w; /* WORD: into the blob */
    size_t wlen;
    unsigned group;    /* a text's number is a group of its own; an array is one */
    const char *where; /* the array's name (a .npz member), or NULL */
};

struct values {
    struct value *v;
    size_t n, cap;
    unsigned groups;
    int ok; /* 0: not readable as values */
};

static int push(struct values *vs, struct value v)
{
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? vs->cap * 2 : 256;
        struct value *more =
            cap < SIZE_MAX / sizeof *more ? realloc(vs->v, cap * sizeof *more) : NULL;
        if (!more)
            return vs->ok = 0, -1;
        vs->v = more;
        vs->cap = cap;
    }
    vs->v[vs->n++] = v;
    return 0;
}

/* Whether a number starts at p (s..end the text): a digit, or a point or
 * sign before one, the sign not inside a word; or nan/inf as a word. */
static int number_at(const char *s, const char *p, const char *end)
{
    int after_word = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.');
    const char *q = p;
    if ((*q == '-' || *q == '+') && !after_word)
        q++;
    if (q < end && isdigit((unsigned char)*q))
        return 1;
    if (q + 1 < end && *q == '.' && isdigit((unsigned char)q[1]) && !after_word)
        return 1;
    if (after_word || end - q < 3)
        return 0;
    if (strncasecmp(q, "nan", 3) == 0 || strncasecmp(q, "inf", 3) == 0) {
        const char *r = q + 3;
        if (end - q >= 8 && strncasecmp(q, "infinity", 8) == 0)
            r = q + 8;
        return r == end || !(isalnum((unsigned char)*r) || *r == '_');
    }
    return 0;
}

/* A text: its numbers and the words between them; the numbers of a line
 * are one group (a row of a table is a vector: its small elements are
 * weighed against its large ones). */
static void read_text(const char *s, size_t size, struct values *vs)
{
    const char *p = s, *end = s + size;
    char buf[128];
    unsigned line = vs->groups++;
    while (p < end && vs->ok) {
        if (isspace((unsigned char)*p)) {
            if (*p++ == '\n')
                line = vs->groups++;
            continue;
        }
        if (number_at(s, p, end)) {
            const char *q = p;
            int integer = 1;
            if (*q == '-' || *q == '+')
                q++;
            while (q < end && (isalnum((unsigned char)*q) || *q == '.' ||
                               ((*q == '-' || *q == '+') && (q[-1] == 'e' || q[-1] == 'E'))))
                q++;
            size_t len = (size_t)(q - p) < sizeof buf - 1 ? (size_t)(q - p) : sizeof buf - 1;
            memcpy(buf, p, len);
            buf[len] = 0;
            char *stop;
            double x = strtod(buf, &stop);
            for (const char *c = buf; c < stop; c++)
                integer &= isdigit((unsigned char)*c) || (c == buf && (*c == '-' || *c == '+'));
            if (stop == buf) { /* cannot be: number_at saw one */
                p++;
                continue;
            }
            push(vs, (struct value){integer ? INTEGER : FLOAT, x, NULL, 0, line, NULL});
            p += stop - buf;
            continue;
        }
        const char *q = p;
        while (q < end && !isspace((unsigned char)*q) && (q == p || !number_at(s, q, end)))
            q++;
        push(vs, (struct value){WORD, 0, p, (size_t)(q - p), line, NULL});
        p = q;
    }
}

static uint64_t le(const unsigned char *p, int bytes)
{
    uint64_t x = 0;
    for (int i = bytes - 1; i >= 0; i--)
        x = x << 8 | p[i];
    return x;
}

/* One .npy (whole, size bytes): its elements as one group; 0 when its
 * dtype is one not read here (then the caller compares bytes). */
static int read_npy(const unsigned char *p, size_t size, struct values *vs, const char *where)
{
    if (size < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
        return 0;
    size_t hlen = p[6] == 1 ? le(p + 8, 2) : size >= 12 ? le(p + 8, 4) : SIZE_MAX;
    size_t at = p[6] == 1 ? 10 : 12;
    if (hlen > size - at)
        return 0;
    char header[1024];
    size_t n = hlen < sizeof header - 1 ? hlen : sizeof header - 1;
    memcpy(header, p + at, n);
    header[n] = 0;
    const char *d = strstr(header, "'descr':");
    if (!d)
        return 0;
    d += 8;
    while (*d == ' ')
        d++;
    char order, type;
    int width;
    if (sscanf(d, "'%c%c%d'", &order, &type, &width) != 3 || order == '>' ||
        !(width == 1 || width == 2 || width == 4 || width == 8))
        return 0;
    enum kind k = type == 'f'                                   ? FLOAT
                  : (type == 'i' || type == 'u' || type == 'b') ? INTEGER
                                                                : WORD;
    if (k == WORD || (k == FLOAT && width < 4))
        return 0;
    const unsigned char *data = p + at + hlen;
    size_t count = (size - at - hlen) / (size_t)width;
    unsigned group = vs->groups++;
    for (size_t i = 0; i < count && vs->ok; i++) {
        const unsigned char *e = data + i * (size_t)width;
        double x;
        if (k == FLOAT && width == 4) {
            float f;
            memcpy(&f, e, 4);
            x = f;
        } else if (k == FLOAT) {
            memcpy(&x, e, 8);
        } else if (type == 'i') {
            uint64_t u = le(e, width);
            int shift = 64 - 8 * width;
            x = (double)((int64_t)(u << shift) >> shift);
        } else {
            x = (double)le(e, width);
        }
        push(vs, (struct value){k, x, NULL, 0, group, where});
    }
    return 1;
}

/* An .npz: the .npy members a zip stores uncompressed (numpy.savez); 0 for
 * a compressed one (numpy.savez_compressed: compared byte for byte). */
static int read_npz(const unsigned char *p, size_t size, struct values *vs)
{
    size_t at = 0;
    int members = 0;
    while (at + 30 <= size && memcmp(p + at, "PK\3\4", 4) == 0) {
        unsigned flags = (unsigned)le(p + at + 6, 2), method = (unsigned)le(p + at + 8, 2);
        uint64_t csize = le(p + at + 18, 4);
        size_t nlen = le(p + at + 26, 2), xlen = le(p + at + 28, 2);
        if (method != 0 || at + 30 + nlen + xlen > size)
            return 0;
        const unsigned char *x = p + at + 30 + nlen;
        if (csize == 0xffffffffu) { /* zip64 (numpy forces it): the sizes are in an extra */
            csize = UINT64_MAX;
            for (size_t e = 0; e + 4 <= xlen;) {
                size_t id = le(x + e, 2), len = le(x + e + 2, 2);
                if (id == 1 && len >= 16 && e + 4 + len <= xlen)
                    csize = le(x + e + 12, 8);
                e += 4 + len;
            }
        }
        if ((flags & 8) && csize == 0)
            return 0; /* sizes only after the data */
        size_t data = at + 30 + nlen + xlen;
        if (csize > size - data)
            return 0;
        /* The member's name, kept for the report (a static pool: names are
         * short and few) */
        static char names[64][64];
        const char *where = NULL;
        if (members < 64) {
            snprintf(names[members], sizeof names[0], "%.*s", (int)(nlen < 60 ? nlen : 60),
                     (const char *)p + at + 30);
            where = names[members];
        }
        if (!read_npy(p + data, (size_t)csize, vs, where))
            return 0;
        members++;
        at = data + (size_t)csize;
    }
    return members > 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Text: no NUL, and few bytes outside printable ASCII and UTF-8. */
static int looks_text(const unsigned char *p, size_t size)
{
    size_t odd = 0;
    for (size_t i = 0; i < size; i++) {
        if (p[i] == 0)
            return 0;
        odd += p[i] < 32 && !isspace(p[i]);
    }
    return odd * 100 <= size;
}

static void read_values(const struct ampctl_blob *b, struct values *vs)
{
    memset(vs, 0, sizeof *vs);
    vs->ok = 1;
    const unsigned char *p = (const unsigned char *)b->data;
    if (ends_with(b->name, ".npy")) {
        vs->ok = read_npy(p, b->size, vs, NULL);
    } else if (ends_with(b->name, ".npz")) {
        vs->ok = read_npz(p, b->size, vs);
    } else if (looks_text(p, b->size)) {
        read_text(b->data, b->size, vs);
    } else if (b->size % 4 == 0) { /* float32 values */
        unsigned group = vs->groups++;
        for (size_t i = 0; i + 4 <= b->size && vs->ok; i += 4) {
            float f;
            memcpy(&f, p + i, 4);
            push(vs, (struct value){FLOAT, f, NULL, 0, group, NULL});
        }
    } else {
        vs->ok = 0;
    }
}

static int same_value(const struct value *a, const struct value *b)
{
    if (a->kind != b->kind)
        return 0;
    if (a->kind == WORD)
        return a->wlen == b->wlen && memcmp(a->w, b->w, a->wlen) == 0;
    return a->x == b->x || (isnan(a->x) && isnan(b->x));
}

static void show(char *out, size_t size, const struct value *v)
{
    if (v->kind == WORD)
        snprintf(out, size, "'%.*s'", (int)(v->wlen < 40 ? v->wlen : 40), v->w);
    else
        snprintf(out, size, "%.9g", v->x);
}

void ampctl_compare(const struct ampctl_blob *made, const struct ampctl_blob *again,
                    const struct ampctl_blob *low, struct ampctl_diff *d)
{
    memset(d, 0, sizeof *d);
    d->reproducible = 1;
    d->identical = made->size == low->size && memcmp(made->data, low->data, made->size) == 0;
    int again_same =
        !again || (again->size == made->size && memcmp(again->data, made->data, made->size) == 0);
    struct values m, a, l;
    read_values(made, &m);
    read_values(low, &l);
    memset(&a, 0, sizeof a);
    if (again && !again_same)
        read_values(again, &a);
    d->readable = m.ok && l.ok && (again_same || a.ok);
    if (!d->readable) {
        if (!again_same)
            d->reproducible = 0;
        else if (!d->identical)
            d->decisions = 1, snprintf(d->first, sizeof d->first, "its bytes differ");
        goto out;
    }
    if (!again_same && a.n != m.n) {
        d->reproducible = 0; /* two runs as made wrote different shapes */
        goto out;
    }
    if (l.n != m.n) {
        d->decisions = 1;
        snprintf(d->first, sizeof d->first, "%zu values where the run as made wrote %zu", l.n, m.n);
        goto out;
    }
    /* Per group: squared differences and norms, for a relative difference */
    double *diff2 = calloc(m.groups + 1, sizeof *diff2), *ref2 = calloc(m.groups + 1, sizeof *ref2),
           *absmax = calloc(m.groups + 1, sizeof *absmax);
    if (!diff2 || !ref2 || !absmax) {
        d->readable = 0;
        goto free_sums;
    }
    for (size_t i = 0; i < m.n; i++) {
        const struct value *x = &m.v[i];
        if (!again_same && !same_value(x, &a.v[i])) {
            d->noisy++;
            continue;
        }
        d->numbers++;
        if (x->kind != FLOAT || l.v[i].kind != FLOAT) {
            if (!same_value(x, &l.v[i]) && d->decisions++ == 0) {
                char was[64], now[64];
                show(was, sizeof was, x);
                show(now, sizeof now, &l.v[i]);
                snprintf(d->first, sizeof d->first, "%s %zu%s%s: %s became %s",
                         x->kind == WORD ? "word" : "value", i + 1, x->where ? " of " : "",
                         x->where ? x->where : "", was, now);
            }
            continue;
        }
        double e = l.v[i].x - x->x, r = fabs(x->x) > fabs(l.v[i].x) ? fabs(x->x) : fabs(l.v[i].x);
        if (isnan(x->x) != isnan(l.v[i].x) || (isinf(x->x) || isinf(l.v[i].x)))
            e = same_value(x, &l.v[i]) ? 0 : INFINITY;
        unsigned g = x->group < m.groups ? x->group : m.groups;
        diff2[g] += e * e;
        ref2[g] += r * r;
        absmax[g] = fabs(x->x) > absmax[g] ? fabs(x->x) : absmax[g];
    }
    for (unsigned g = 0; g <= m.groups; g++) {
        double rel = diff2[g] > 0 ? (ref2[g] > 0 ? sqrt(diff2[g] / ref2[g]) : INFINITY) : 0;
        if (isnan(rel))
            rel = INFINITY;
        if (rel > d->max_rel) {
            d->max_rel = rel;
            for (size_t i = 0; i < m.n; i++)
                if (m.v[i].group == g) {
                    d->max_at = i;
                    break;
                }
        }
    }
    /* An array's largest elementwise difference, over elements not tiny
     * beside its largest (2^-12 of it) */
    for (size_t i = 0; i < m.n; i++) {
        const struct value *x = &m.v[i];
        unsigned g = x->group < m.groups ? x->group : m.groups;
        if (x->kind != FLOAT || l.v[i].kind != FLOAT || (!again_same && !same_value(x, &a.v[i])) ||
            fabs(x->x) < absmax[g] * 0x1p-12)
            continue;
        double e = fabs(l.v[i].x - x->x) / fabs(x->x);
        if (e > d->elem_max || (isnan(e) && !same_value(x, &l.v[i])))
            d->elem_max = isnan(e) ? INFINITY : e;
    }
free_sums:
    free(diff2);
    free(ref2);
    free(absmax);
out:
    free(m.v);
    free(a.v);
    free(l.v);
}

int ampctl_diff_matches(const struct ampctl_diff *d, double tol)
{
    if (!d->reproducible)
        return 1; /* nothing it says can be held against the lowering */
    if (!d->readable)
        return d->identical;
    return d->decisions == 0 && !(d->max_rel > tol);
}
