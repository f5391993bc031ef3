/* ampshim-gen: reading policy/data into the model (gen.h), every line
 * checked; an inconsistency fails the build with its file and line. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


#include "policy/gen/gen.h"

/* The model. */
const char *const category_names[] = {"passthrough", "lower", "fp32", "promote"};
const char *const category_macros[] = {"PASSTHROUGH", "LOWER", "FP32", "PROMOTE"};
const char *const device_names[] = {"cpu", "cuda"};
const char *const device_macros[] = {"CPU", "CUDA"};
struct list_file list_files[MAX_LISTS];
struct family families[MAX_FAMILIES];
struct counter counters[MAX_COUNTERS];
struct kind kinds[MAX_KINDS];
struct routine routines[MAX_ROUTINES];
struct mangling manglings[32];
int n_list_files;
int n_families;
int n_counters;
int n_kinds;
char ops[MAX_OPS][NAME_MAX_LEN];
int op_category[MAX_OPS][2];
int op_source[MAX_OPS][2];
int n_ops;
int n_routines;
int n_manglings;
char read_paths[64][4096];
int n_read_paths;
struct glob_table library_table = {"libraries.txt", 0, {{"", ""}}},
                  embedded_blas_table = {"embedded_blas.txt", 0, {{"", ""}}},
                  onednn_caller_table = {"onednn_callers.txt", 0, {{"", ""}}},
                  /* its first column a module's name, not a glob */
    blas_wrapper_table = {"blas_wrappers.txt", 0, {{"", ""}}},
                  framework_table = {"frameworks.txt", 0, {{"", ""}}},
                  /* its second column an op, not a description */
    op_frame_table = {"op_frames.txt", 0, {{"", ""}}};

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ampshim-gen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

FILE *open_or_die(const char *path, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (!f)
        die("%s: %s", path, strerror(errno));
    return f;
}

int find_op(const char *name)
{
    for (int i = 0; i < n_ops; i++)
        if (strcmp(ops[i], name) == 0)
            return i;
    return -1;
}

static int is_identifier(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* Splits a data line into whitespace-separated fields; '#' starts a comment.
 * Returns the number of fields. */
static int split_fields(char *line, char **fields, int max)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (n == max)
            return max + 1;
        fields[n++] = tok;
    }
    return n;
}

static int find_family(const char *name)
{
    for (int i = 0; i < n_families; i++)
        if (strcmp(families[i].name, name) == 0)
            return i;
    return -1;
}

static int word_index(const char *word, const char *const *words, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(words[i], word) == 0)
            return i;
    return -1;
}

/* Opens DIR/FILE for reading and remembers it for the depfile. */
static FILE *open_data(const char *dir, const char *file, char *path, size_t pathlen)
{
    snprintf(path, pathlen, "%s/%s", dir, file);
    if (n_read_paths == (int)(sizeof read_paths / sizeof *read_paths))
        die("too many data files");
    snprintf(read_paths[n_read_paths++], sizeof *read_paths, "%s", path);
    return open_or_die(path, "r");
}

static void copy_field(char *dst, const char *src, const char *path, int lineno)
{
    if (strlen(src) >= NAME_MAX_LEN)
        die("%s:%d: '%s' is too long", path, lineno, src);
    strcpy(dst, src);
}

/* lists.txt: file device category */
void read_lists(const char *dir)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, "lists.txt", path, sizeof path);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[3];
        int n = split_fields(line, field, 3);
        if (n == 0)
            continue;
        if (n != 3)
            die("%s:%d: expected: file device category", path, lineno);
        if (n_list_files == MAX_LISTS)
            die("too many op lists");
        struct list_file *lf = &list_files[n_list_files++];
        copy_field(lf->file, field[0], path, lineno);
        lf->device = word_index(field[1], device_names, 2);
        lf->category = word_index(field[2], category_names, 4);
        if (lf->device < 0)
            die("%s:%d: device is cpu or cuda, not '%s'", path, lineno, field[1]);
        if (lf->category <= CAT_PASSTHROUGH)
            die("%s:%d: category is lower, fp32 or promote, not '%s'", path, lineno, field[2]);
    }
    fclose(f);
}

/* families.txt: family device prefix display */
void read_families(const char *dir)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, "families.txt", path, sizeof path);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[4];
        int n = split_fields(line, field, 4);
        if (n == 0)
            continue;
        if (n != 4 || !is_identifier(field[0]))
            die("%s:%d: expected: family device prefix display", path, lineno);
        if (n_families == MAX_FAMILIES || find_family(field[0]) >= 0)
            die("%s:%d: too many families, or '%s' twice", path, lineno, field[0]);
        struct family *fam = &families[n_families++];
        copy_field(fam->name, field[0], path, lineno);
        copy_field(fam->prefix, strcmp(field[2], "-") == 0 ? "" : field[2], path, lineno);
        copy_field(fam->display, field[3], path, lineno);
        fam->device = word_index(field[1], device_names, 2);
        if (fam->device < 0)
            die("%s:%d: device is cpu or cuda, not '%s'", path, lineno, field[1]);
    }
    fclose(f);
}

/* kinds.txt: kind family file. The file must exist under the source tree
 * (root: the man page template's grandparent), so the table cannot go
 * stale. */
void read_kinds(const char *dir, const char *root)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, "kinds.txt", path, sizeof path);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[4];
        int n = split_fields(line, field, 4);
        if (n == 0)
            continue;
        if ((n != 3 && !(n == 4 && strcmp(field[3], "decided") == 0)) || !is_identifier(field[0]))
            die("%s:%d: expected: kind family file [decided]", path, lineno);
        for (int k = 0; k < n_kinds; k++)
            if (strcmp(kinds[k].name, field[0]) == 0)
                die("%s:%d: kind '%s' twice", path, lineno, field[0]);
        if (n_kinds == MAX_KINDS)
            die("%s:%d: too many kinds", path, lineno);
        if (find_family(field[1]) < 0)
            die("%s:%d: kind '%s' belongs to family %s, which families.txt does not name", path,
                lineno, field[0], field[1]);
        char source[4096 + NAME_MAX_LEN];
        snprintf(source, sizeof source, "%s/%s", root, field[2]);
        if (access(source, R_OK) != 0)
            die("%s:%d: %s: %s", path, lineno, source, strerror(errno));
        struct kind *k = &kinds[n_kinds++];
        copy_field(k->name, field[0], path, lineno);
        copy_field(k->family, field[1], path, lineno);
        copy_field(k->file, field[2], path, lineno);
        k->decided = n == 4;
    }
    fclose(f);
}

/* A glob table: glob what... A glob holds no quote or backslash (it
 * becomes a C string). */
void read_globs(const char *dir, struct glob_table *t)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, t->file, path, sizeof path);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *glob = strtok(line, " \t\r\n");
        if (!glob)
            continue;
        char *what = strtok(NULL, "\r\n");
        while (what && (*what == ' ' || *what == '\t'))
            what++;
        if (!what || !*what || strpbrk(glob, "\"\\") || strpbrk(what, "\"\\"))
            die("%s:%d: expected: glob what (no quotes or backslashes)", path, lineno);
        if (t->n == MAX_GLOBS)
            die("%s:%d: too many lines", path, lineno);
        for (int i = 0; i < t->n; i++)
            if (strcmp(t->rows[i].glob, glob) == 0)
                die("%s:%d: '%s' twice", path, lineno, glob);
        struct library *l = &t->rows[t->n++];
        copy_field(l->glob, glob, path, lineno);
        if (strlen(what) >= sizeof l->what)
            die("%s:%d: description too long", path, lineno);
        strcpy(l->what, what);
    }
    fclose(f);
}

/* counters.txt: name kind width description... */
void read_counters(const char *dir)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, "counters.txt", path, sizeof path);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[3];
        char *desc = NULL;
        line[strcspn(line, "#")] = '\0';
        char *p = line;
        int n = 0;
        for (; n < 3; n++) {
            p += strspn(p, " \t");
            if (!*p || *p == '\n')
                break;
            field[n] = p;
            p += strcspn(p, " \t\r\n");
            if (*p)
                *p++ = '\0';
        }
        if (n == 0)
            continue;
        desc = p + strspn(p, " \t");
        desc[strcspn(desc, "\r\n")] = '\0';
        if (n != 3 || !*desc || !is_identifier(field[0]) || atoi(field[2]) < 1 ||
            atoi(field[2]) > 40 ||
            (strcmp(field[1], "outcome") != 0 && strcmp(field[1], "amount") != 0 &&
             strcmp(field[1], "library") != 0) ||
            strchr(desc, '"') || strchr(desc, '\\'))
            die("%s:%d: expected: name outcome|library|amount width description", path, lineno);
        if (n_counters == MAX_COUNTERS)
            die("%s:%d: more than %d counters: the control block has room for %d", path, lineno,
                MAX_COUNTERS, MAX_COUNTERS);
        struct counter *c = &counters[n_counters++];
        copy_field(c->name, field[0], path, lineno);
        copy_field(c->kind, field[1], path, lineno);
        c->width = atoi(field[2]);
        snprintf(c->description, sizeof c->description, "%s", desc);
    }
    fclose(f);
}

void read_op_list(const char *dir, const struct list_file *lf)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, lf->file, path, sizeof path);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[2];
        int n = split_fields(line, field, 1);
        if (n == 0)
            continue;
        if (n > 1 || !is_identifier(field[0]) || strlen(field[0]) >= NAME_MAX_LEN)
            die("%s:%d: expected one op name a line", path, lineno);
        int op = find_op(field[0]);
        if (op < 0) {
            if (n_ops == MAX_OPS)
                die("too many ops");
            op = n_ops++;
            strcpy(ops[op], field[0]);
        }
        if (op_category[op][lf->device] == lf->category)
            die("%s:%d: '%s' listed twice", path, lineno, field[0]);
        if (op_category[op][lf->device] != CAT_PASSTHROUGH)
            die("%s:%d: '%s' is already %s on this device", path, lineno, field[0],
                category_names[op_category[op][lf->device]]);
        op_category[op][lf->device] = lf->category;
        op_source[op][lf->device] = (int)(lf - list_files);
    }
    fclose(f);
}

/* bindings.txt: routine kind op op_beta; the tables of entry points named
 * in full (bindings_cuda.txt, bindings_onednn.txt) add ints and an optional
 * category of the binding's own, which replaces the op list's for that
 * entry point (ampshim(7) says why for each). An entry point that decides
 * by what it is given (oneDNN's dnnl_primitive_execute) has op "-" and a
 * category: its op is `dispatch`, in no list. */
void read_bindings(const char *dir, const char *file, int exact, int device)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, file, path, sizeof path);
    int want = exact ? 5 : 4;
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[6];
        int n = split_fields(line, field, 6);
        if (n == 0)
            continue;
        if (n != want && !(exact && n == want + 1))
            die("%s:%d: expected: %s", path, lineno,
                exact ? "symbol kind op op_beta ints [category]" : "routine kind op op_beta");
        if (n_routines == MAX_ROUTINES)
            die("too many routines");
        struct routine *r = &routines[n_routines];
        if (!is_identifier(field[0]) || strlen(field[0]) >= NAME_MAX_LEN - 8)
            die("%s:%d: bad routine name '%s'", path, lineno, field[0]);
        for (int i = 0; i < n_routines; i++)
            if (strcmp(routines[i].name, field[0]) == 0)
                die("%s:%d: routine '%s' bound twice", path, lineno, field[0]);
        r->kind = -1;
        for (int k = 0; k < N_KINDS; k++)
            if (strcmp(kinds[k].name, field[1]) == 0)
                r->kind = k;
        if (r->kind < 0)
            die("%s:%d: unknown kind '%s'", path, lineno, field[1]);
        r->family = find_family(kinds[r->kind].family);
        if (r->family < 0)
            die("%s:%d: kind '%s' belongs to family %s, which families.txt does not name", path,
                lineno, field[1], kinds[r->kind].family);
        if (families[r->family].device != device)
            die("%s:%d: a %s routine in %s", path, lineno, device_names[families[r->family].device],
                file);
        r->ints = 0;
        int twin64 = 0; /* 32+64: the entry point and its _64 twin */
        if (exact) {
            twin64 = strcmp(field[4], "32+64") == 0;
            r->ints = twin64 ? 32 : atoi(field[4]);
            if (!twin64 && strcmp(field[4], "32") != 0 && strcmp(field[4], "64") != 0)
                die("%s:%d: ints must be 32, 64 or 32+64, not '%s'", path, lineno, field[4]);
        }
        r->binding_cat = -1;
        if (n == want + 1) {
            for (int c = 0; c < (int)(sizeof category_names / sizeof *category_names); c++)
                if (strcmp(category_names[c], field[5]) == 0)
                    r->binding_cat = c;
            if (r->binding_cat < 0)
                die("%s:%d: unknown category '%s'", path, lineno, field[5]);
        }
        if (exact && strcmp(field[2], "-") == 0 && r->binding_cat >= 0)
            field[2] = field[3] = "dispatch";
        r->op = find_op(field[2]);
        if (r->op < 0)
            die("%s:%d: op '%s' appears in no op list", path, lineno, field[2]);
        r->op_beta = strcmp(field[3], "-") == 0 ? r->op : find_op(field[3]);
        if (r->op_beta < 0)
            die("%s:%d: op '%s' appears in no op list", path, lineno, field[3]);
        strcpy(r->name, field[0]);
        n_routines++;
        if (twin64) {
            if (n_routines == MAX_ROUTINES)
                die("too many routines");
            struct routine *t = &routines[n_routines];
            *t = *r;
            t->ints = 64;
            strcat(t->name, "_64"); /* the name was checked shorter than NAME_MAX_LEN - 8 */
            for (int i = 0; i < n_routines; i++)
                if (strcmp(routines[i].name, t->name) == 0)
                    die("%s:%d: routine '%s' bound twice", path, lineno, t->name);
            n_routines++;
        }
    }
    fclose(f);
}

void upper(char *dst, const char *src)
{
    while ((*dst++ = (char)toupper((unsigned char)*src++)))
        ;
}

void read_manglings(const char *dir)
{
    char path[4096], line[512];
    FILE *f = open_data(dir, "manglings.txt", path, sizeof path);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[6];
        int n = split_fields(line, field, 6);
        if (n == 0)
            continue;
        if (n != 6 || !is_identifier(field[0]) ||
            (strcmp(field[1], "CBLAS") != 0 && strcmp(field[1], "F77") != 0) ||
            (strcmp(field[2], "LP") != 0 && strcmp(field[2], "I64") != 0) ||
            (strcmp(field[3], "yes") != 0 && strcmp(field[3], "no") != 0))
            die("%s:%d: expected: mangling CBLAS|F77 LP|I64 yes|no prefix suffix", path, lineno);
        if (n_manglings == (int)(sizeof manglings / sizeof *manglings))
            die("%s:%d: too many manglings", path, lineno);
        struct mangling *m = &manglings[n_manglings++];
        copy_field(m->name, field[0], path, lineno);
        copy_field(m->form, field[1], path, lineno);
        copy_field(m->ints, field[2], path, lineno);
        copy_field(m->prefix, strcmp(field[4], "-") == 0 ? "" : field[4], path, lineno);
        copy_field(m->suffix, strcmp(field[5], "-") == 0 ? "" : field[5], path, lineno);
        m->lapack = strcmp(field[3], "yes") == 0;
        if ((*m->prefix && !is_identifier(m->prefix)) ||
            (*m->suffix &&
             strspn(m->suffix, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(m->suffix)))
            die("%s:%d: prefix and suffix make an identifier", path, lineno);
        for (int i = 0; i + 1 < n_manglings; i++)
            if (strcmp(manglings[i].prefix, m->prefix) == 0 &&
                strcmp(manglings[i].suffix, m->suffix) == 0)
                die("%s:%d: the same names as another row", path, lineno);
    }
    fclose(f);
    if (!n_manglings)
        die("%s: no mangling", path);
}

void mangle(char *out, size_t outlen, const struct mangling *m, const char *routine)
{
    size_t a = strlen(m->prefix), b = strlen(routine), c = strlen(m->suffix);
    if (a + b + c >= outlen)
        die("the name %s%s%s is too long", m->prefix, routine, m->suffix);
    memcpy(out, m->prefix, a);
    memcpy(out + a, routine, b);
    memcpy(out + a + b, m->suffix, c + 1);
}

void check_op_frames(void)
{
    for (int i = 0; i < op_frame_table.n; i++) {
        const char *op = op_frame_table.rows[i].what;
        int o = find_op(op);
        if (o < 0 || op_category[o][0] != CAT_FP32)
            die("op_frames.txt: '%s' names '%s', which no CPU float32 list has",
                op_frame_table.rows[i].glob, op);
        if (strncmp(op_frame_table.rows[i].glob, "py:", 3) != 0)
            die("op_frames.txt: '%s': rows are py:MODULE.QUALNAME globs",
                op_frame_table.rows[i].glob);
    }
}
