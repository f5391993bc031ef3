/* ampshim-gen: the build-time policy generator. Reads policy/data: the op
 * lists named in lists.txt, the binding tables, the library families and
 * the counters; writes the single hook list (an X-macro every wrapper, slot,
 * name and counter expands from) with one sub-list per family and per kind,
 * the family, counter and list-file X-macros, the default policy table and
 * which list file each op's category comes from, and the policy section of
 * ampshim(7). Everything a routine, data file or counter is called anywhere
 * else comes from here.
 *
 * usage: ampshim-gen DATA_DIR OUT_HEADER OUT_TABLES_C MAN_TEMPLATE OUT_MAN DEPFILE
 * Any inconsistency in the data (unknown kind, op in no list, op in two
 * categories of one device, duplicate routine) fails the build. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum {
    MAX_OPS = 512,
    MAX_ROUTINES = 256,
    NAME_MAX_LEN = 64,
    MAX_LISTS = 32,
    MAX_FAMILIES = 16,
    MAX_COUNTERS = 10 /* the control block's layout (AMP_CTL_COUNTER_SLOTS) */
};

/* The categories; policy/policy.h expands enum amp_category from the list
 * written below, so codes and names are defined here only. */
static const char *const category_names[] = {"passthrough", "lower", "fp32", "promote"};
static const char *const category_macros[] = {"PASSTHROUGH", "LOWER", "FP32", "PROMOTE"};
enum { CAT_PASSTHROUGH, CAT_LOWER, CAT_FP32, CAT_PROMOTE };
static const char *const device_names[] = {"cpu", "cuda"};
static const char *const device_macros[] = {"CPU", "CUDA"};

/* lists.txt */
static struct list_file {
    char file[NAME_MAX_LEN];
    int device, category;
} list_files[MAX_LISTS];
static int n_list_files;

/* families.txt */
static struct family {
    char name[NAME_MAX_LEN], prefix[NAME_MAX_LEN], display[NAME_MAX_LEN];
    int device;
} families[MAX_FAMILIES];
static int n_families;

/* counters.txt */
static struct counter {
    char name[NAME_MAX_LEN], kind[NAME_MAX_LEN], description[256];
    int width;
} counters[MAX_COUNTERS];
static int n_counters;

/* kinds.txt: the argument shapes the hooks parse, each in its family, and
 * the file (under the source tree) that defines its hooks. */
enum { MAX_KINDS = 64 };
static struct kind {
    char name[NAME_MAX_LEN], family[NAME_MAX_LEN], file[NAME_MAX_LEN];
    int decided; /* its rows are decided and counted, never exported */
} kinds[MAX_KINDS];
static int n_kinds;
#define N_KINDS n_kinds

/* Tables of objects by glob, each line a glob and what it is: libraries.txt
 * (numerical libraries outside the BLAS), embedded_blas.txt (frameworks
 * with a BLAS linked in, whose calls to it are the program's) and
 * onednn_callers.txt (oneDNN's callers known to query every descriptor and
 * reorder to it). */
enum { MAX_GLOBS = 64 };
struct glob_table {
    const char *file;
    int n;
    struct library {
        char glob[NAME_MAX_LEN], what[256];
    } rows[MAX_GLOBS];
};
static struct glob_table library_table = {"libraries.txt", 0, {{"", ""}}},
                         embedded_blas_table = {"embedded_blas.txt", 0, {{"", ""}}},
                         onednn_caller_table = {"onednn_callers.txt", 0, {{"", ""}}},
                         /* its first column a module's name, not a glob */
    blas_wrapper_table = {"blas_wrappers.txt", 0, {{"", ""}}};


static char ops[MAX_OPS][NAME_MAX_LEN];
static int op_category[MAX_OPS][2];
static int op_source[MAX_OPS][2]; /* index in list_files, for a listed op */
static int n_ops;

static struct routine {
    char name[NAME_MAX_LEN];
    int kind, family;
    int op, op_beta;
    int ints;        /* 0 for a mangled CPU routine; 32 or 64 for an entry point named in
                        full (CUDA, oneDNN) */
    int binding_cat; /* the binding's own category, -1 for the op list's */
} routines[MAX_ROUTINES];
static int n_routines;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ampshim-gen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static FILE *open_or_die(const char *path, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (!f)
        die("%s: %s", path, strerror(errno));
    return f;
}

static int find_op(const char *name)
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

/* Every data file the generator read, for the build's depfile. */
static char read_paths[64][4096];
static int n_read_paths;

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
static void read_lists(const char *dir)
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
static void read_families(const char *dir)
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
static void read_kinds(const char *dir, const char *root)
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
static void read_globs(const char *dir, struct glob_table *t)
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
static void read_counters(const char *dir)
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

static void read_op_list(const char *dir, const struct list_file *lf)
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
static void read_bindings(const char *dir, const char *file, int exact, int device)
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
        if (exact) {
            r->ints = atoi(field[4]);
            if (strcmp(field[4], "32") != 0 && strcmp(field[4], "64") != 0)
                die("%s:%d: ints must be 32 or 64, not '%s'", path, lineno, field[4]);
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
    }
    fclose(f);
}

static void upper(char *dst, const char *src)
{
    while ((*dst++ = (char)toupper((unsigned char)*src++)))
        ;
}

/* manglings.txt: every exported name of a CPU routine. */
static struct mangling {
    char name[NAME_MAX_LEN], form[8], ints[8], prefix[NAME_MAX_LEN], suffix[NAME_MAX_LEN];
    int lapack;
} manglings[32];
static int n_manglings;

static void read_manglings(const char *dir)
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

static void mangle(char *out, size_t outlen, const struct mangling *m, const char *routine)
{
    size_t a = strlen(m->prefix), b = strlen(routine), c = strlen(m->suffix);
    if (a + b + c >= outlen)
        die("the name %s%s%s is too long", m->prefix, routine, m->suffix);
    memcpy(out, m->prefix, a);
    memcpy(out + a, routine, b);
    memcpy(out + a + b, m->suffix, c + 1);
}

/* A kind's name in macros: upper case, without its family's prefix. */
static void kind_macro(char *dst, int kind)
{
    const char *name = kinds[kind].name;
    size_t fl = strlen(kinds[kind].family);
    if (strncasecmp(name, kinds[kind].family, fl) == 0 && (name[fl] == '_' || !name[fl]))
        name += name[fl] ? fl + 1 : fl;
    upper(dst, *name ? name : "region");
}

/* The X(...) row of one entry point. */
static void write_hook_row(FILE *f, const struct routine *rt, const char *sym, const char *form,
                           const char *ints)
{
    char kind[NAME_MAX_LEN];
    kind_macro(kind, rt->kind);
    fprintf(f, " \\\n    X(%s, %s, %s, %s, %s, %s, %s)", sym, rt->name, kind, form, ints,
            ops[rt->op], ops[rt->op_beta]);
}

/* Every entry point of the routines that pass `take` (a family, a kind),
 * as rows of X. Returns how many. */
static int write_hook_rows(FILE *f, int family, int kind)
{
    int n = 0;
    for (int r = 0; r < n_routines; r++) {
        const struct routine *rt = &routines[r];
        if (rt->family != family || (kind >= 0 && rt->kind != kind))
            continue;
        if (rt->ints) {
            /* One entry point, named in full; FORM is the family, INTS I32/I64. */
            char ints[8];
            snprintf(ints, sizeof ints, "I%d", rt->ints);
            write_hook_row(f, rt, rt->name, families[family].name, ints);
            n++;
            continue;
        }
        int lapack = strcmp(families[family].name, "LAPACK") == 0;
        for (int i = 0; i < n_manglings; i++) {
            if (lapack && !manglings[i].lapack)
                continue;
            char sym[NAME_MAX_LEN * 3];
            mangle(sym, sizeof sym, &manglings[i], rt->name);
            write_hook_row(f, rt, sym, manglings[i].form, manglings[i].ints);
            n++;
        }
    }
    return n;
}

static void write_header(const char *path)
{
    FILE *f = open_or_die(path, "w");
    fprintf(f, "/* Generated by ampshim-gen from policy/data; do not edit. */\n"
               "#ifndef AMPSHIM_GENERATED_H\n#define AMPSHIM_GENERATED_H\n\n");
    fprintf(f, "/* X(name, NAME): the categories, in the order of their codes. */\n"
               "#define AMPSHIM_CATEGORY_LIST(X)");
    for (int i = 0; i < 4; i++)
        fprintf(f, " \\\n    X(%s, %s)", category_names[i], category_macros[i]);
    fprintf(f, "\n\n/* X(op): every op named in an op list. */\n#define AMPSHIM_OP_LIST(X)");
    for (int i = 0; i < n_ops; i++)
        fprintf(f, " \\\n    X(%s)", ops[i]);
    fprintf(f,
            "\n\n/* X(FAMILY, DEVICE, \"file-name prefix\", \"display name\"): families.txt. */\n"
            "#define AMPSHIM_FAMILY_LIST(X)");
    for (int i = 0; i < n_families; i++)
        fprintf(f, " \\\n    X(%s, %s, \"%s\", \"%s\")", families[i].name,
                device_macros[families[i].device], families[i].prefix, families[i].display);
    fprintf(f, "\n\n/* X(\"object glob\", \"what it is\"): libraries.txt. */\n"
               "#define AMPSHIM_LIBRARY_LIST(X)");
    for (int i = 0; i < library_table.n; i++)
        fprintf(f, " \\\n    X(\"%s\", \"%s\")", library_table.rows[i].glob,
                library_table.rows[i].what);
    fprintf(f, "\n\n/* X(\"object glob\", \"what it is\"): embedded_blas.txt. */\n"
               "#define AMPSHIM_EMBEDDED_BLAS_LIST(X)");
    for (int i = 0; i < embedded_blas_table.n; i++)
        fprintf(f, " \\\n    X(\"%s\", \"%s\")", embedded_blas_table.rows[i].glob,
                embedded_blas_table.rows[i].what);
    fprintf(f, "\n\n/* X(\"module\", \"what it is\"): blas_wrappers.txt. */\n"
               "#define AMPSHIM_BLAS_WRAPPER_LIST(X)");
    for (int i = 0; i < blas_wrapper_table.n; i++)
        fprintf(f, " \\\n    X(\"%s\", \"%s\")", blas_wrapper_table.rows[i].glob,
                blas_wrapper_table.rows[i].what);
    fprintf(f, "\n\n/* X(\"object glob\", \"what it is\"): onednn_callers.txt. */\n"
               "#define AMPSHIM_ONEDNN_CALLER_LIST(X)");
    for (int i = 0; i < onednn_caller_table.n; i++)
        fprintf(f, " \\\n    X(\"%s\", \"%s\")", onednn_caller_table.rows[i].glob,
                onednn_caller_table.rows[i].what);
    fprintf(f, "\n\n/* X(name, NAME, KIND, width, \"description\"): counters.txt; KIND OUTCOME\n"
               " * (calls is their sum), LIBRARY (a library's calls to itself) or AMOUNT. "
               "*/\n#define AMPSHIM_COUNTER_LIST(X)");
    for (int i = 0; i < n_counters; i++) {
        char name[NAME_MAX_LEN];
        upper(name, counters[i].name);
        fprintf(f, " \\\n    X(%s, %s, %s, %d, \"%s\")", counters[i].name, name,
                strcmp(counters[i].kind, "outcome") == 0   ? "OUTCOME"
                : strcmp(counters[i].kind, "library") == 0 ? "LIBRARY"
                                                           : "AMOUNT",
                counters[i].width, counters[i].description);
    }
    fprintf(f, "\n\n/* X(mangling, FORM, INTS, lapack, prefix, suffix): manglings.txt, the names\n"
               " * of a CPU routine (prefix ## routine ## suffix; either may be empty). */\n"
               "#define AMPSHIM_MANGLING_LIST(X)");
    for (int i = 0; i < n_manglings; i++)
        fprintf(f, " \\\n    X(%s, %s, %s, %d, %s, %s)", manglings[i].name, manglings[i].form,
                manglings[i].ints, manglings[i].lapack, manglings[i].prefix, manglings[i].suffix);
    fprintf(f, "\n\n/* X(\"file\", DEVICE, CATEGORY): lists.txt, the op lists. */\n"
               "#define AMPSHIM_LIST_FILES(X)");
    for (int i = 0; i < n_list_files; i++)
        fprintf(f, " \\\n    X(\"%s\", %s, %s)", list_files[i].file,
                device_macros[list_files[i].device], category_macros[list_files[i].category]);
    /* One list per library family (shim/<device>/ expands its own), one per
     * family and kind, and the whole list as the families' concatenation. */
    int n_hooks = 0;
    for (int fam = 0; fam < n_families; fam++) {
        fprintf(f,
                "\n\n/* X(symbol, routine, KIND, FORM, INTS, op, op_beta) for the %s family.\n"
                " * FORM is CBLAS or F77 on the CPU, the family on CUDA; INTS is LP (the\n"
                " * forwarded-to library's own integer width, probed), I64 (always 64-bit:\n"
                " * the suffixed names), or I32/I64 for a CUDA entry point. */\n"
                "#define AMPSHIM_HOOK_LIST_%s(X)",
                families[fam].name, families[fam].name);
        n_hooks += write_hook_rows(f, fam, -1);
        for (int k = 0; k < N_KINDS; k++) {
            if (strcmp(kinds[k].family, families[fam].name) != 0)
                continue;
            char kind[NAME_MAX_LEN];
            kind_macro(kind, k);
            fprintf(f, "\n#define AMPSHIM_HOOKS_%s_%s(X)", families[fam].name, kind);
            write_hook_rows(f, fam, k);
        }
    }
    fprintf(f, "\n\n#define AMPSHIM_HOOK_LIST(X)");
    for (int fam = 0; fam < n_families; fam++)
        fprintf(f, " AMPSHIM_HOOK_LIST_%s(X)", families[fam].name);
    int n_decided = 0;
    for (int r = 0; r < n_routines; r++)
        n_decided += kinds[routines[r].kind].decided;
    fprintf(f,
            "\n\n#define AMPSHIM_GENERATED_OP_COUNT %d\n#define AMPSHIM_GENERATED_HOOK_COUNT %d\n"
            "/* Of the hooks, those that are entry points (libampshim.so exports them);\n"
            " * the rest are rows decided for an entry point (kinds.txt: decided). */\n"
            "#define AMPSHIM_GENERATED_ENTRY_COUNT %d\n",
            n_ops, n_hooks, n_hooks - n_decided);
    fprintf(f, "\n#endif\n");
    fclose(f);
}

static void write_tables(const char *path)
{
    FILE *f = open_or_die(path, "w");
    fprintf(f, "/* Generated by ampshim-gen from policy/data; do not edit. */\n"
               "#include \"policy/policy.h\"\n\n"
               "const uint8_t amp_policy_default[AMP_DEVICE_COUNT][AMP_OP_COUNT] = {\n");
    for (int dev = 0; dev < 2; dev++) {
        fprintf(f, "    [AMP_DEVICE_%s] = {\n", device_macros[dev]);
        for (int i = 0; i < n_ops; i++)
            if (op_category[i][dev] != CAT_PASSTHROUGH)
                fprintf(f, "        [AMP_OP_%s] = AMP_CAT_%s,\n", ops[i],
                        category_macros[op_category[i][dev]]);
        fprintf(f, "    },\n");
    }
    fprintf(f, "};\n\n/* The op list each listed op's category comes from. */\n"
               "const char *const amp_policy_source[AMP_DEVICE_COUNT][AMP_OP_COUNT] = {\n");
    for (int dev = 0; dev < 2; dev++) {
        fprintf(f, "    [AMP_DEVICE_%s] = {\n", device_macros[dev]);
        for (int i = 0; i < n_ops; i++)
            if (op_category[i][dev] != CAT_PASSTHROUGH)
                fprintf(f, "        [AMP_OP_%s] = \"%s\",\n", ops[i],
                        list_files[op_source[i][dev]].file);
        fprintf(f, "    },\n");
    }
    /* Per hook, in the hook list's order (family by family): its family,
     * its device, and its binding's own category (AMP_CAT_UNSET for the
     * op's). */
    static const char *const tables[] = {"amp_hook_family", "amp_hook_device",
                                         "amp_hook_binding_category"};
    for (int table = 0; table < 3; table++) {
        fprintf(f, "};\n\nconst uint8_t %s[AMP_HOOK_COUNT] = {\n", tables[table]);
        for (int fam = 0; fam < n_families; fam++)
            for (int r = 0; r < n_routines; r++) {
                if (routines[r].family != fam)
                    continue;
                int entries = routines[r].ints ? 1 : 0;
                for (int i = 0; i < n_manglings && !routines[r].ints; i++)
                    entries += strcmp(families[fam].name, "LAPACK") != 0 || manglings[i].lapack;
                for (int i = 0; i < entries; i++) {
                    if (table == 0)
                        fprintf(f, "    AMP_FAMILY_%s,\n", families[fam].name);
                    else if (table == 1)
                        fprintf(f, "    AMP_DEVICE_%s,\n", device_macros[families[fam].device]);
                    else
                        fprintf(f, "    AMP_CAT_%s,\n",
                                routines[r].binding_cat < 0
                                    ? "UNSET"
                                    : category_macros[routines[r].binding_cat]);
                }
            }
    }
    /* And the file that defines its hook (kinds.txt). */
    fprintf(f, "};\n\nconst char *const amp_hook_file[AMP_HOOK_COUNT] = {\n");
    for (int fam = 0; fam < n_families; fam++)
        for (int r = 0; r < n_routines; r++) {
            if (routines[r].family != fam)
                continue;
            int entries = routines[r].ints ? 1 : 0;
            for (int i = 0; i < n_manglings && !routines[r].ints; i++)
                entries += strcmp(families[fam].name, "LAPACK") != 0 || manglings[i].lapack;
            for (int i = 0; i < entries; i++)
                fprintf(f, "    \"%s\",\n", kinds[routines[r].kind].file);
        }
    fprintf(f, "};\n\nconst uint8_t amp_hook_form_is_cblas[AMP_HOOK_COUNT] = {\n");
    for (int fam = 0; fam < n_families; fam++)
        for (int r = 0; r < n_routines; r++) {
            if (routines[r].family != fam)
                continue;
            if (routines[r].ints) {
                fprintf(f, "    0,\n");
                continue;
            }
            for (int i = 0; i < n_manglings; i++)
                if (strcmp(families[fam].name, "LAPACK") != 0 || manglings[i].lapack)
                    fprintf(f, "    %d,\n", strcmp(manglings[i].form, "CBLAS") == 0);
        }
    /* Per hook: the isamax of the same mangling and form, through which the
     * resolver probes a library's integer width (NULL where the width is
     * known: I64 names and CUDA). */
    fprintf(f, "};\n\nconst char *const amp_hook_width_probe[AMP_HOOK_COUNT] = {\n");
    for (int fam = 0; fam < n_families; fam++)
        for (int r = 0; r < n_routines; r++) {
            if (routines[r].family != fam)
                continue;
            if (routines[r].ints) {
                fprintf(f, "    NULL,\n");
                continue;
            }
            for (int i = 0; i < n_manglings; i++) {
                if (strcmp(families[fam].name, "LAPACK") == 0 && !manglings[i].lapack)
                    continue;
                char probe[NAME_MAX_LEN * 3];
                mangle(probe, sizeof probe, &manglings[i], "isamax");
                if (strcmp(manglings[i].ints, "LP") == 0)
                    fprintf(f, "    \"%s\",\n", probe);
                else
                    fprintf(f, "    NULL,\n");
            }
        }
    fprintf(f, "};\n");
    fclose(f);
}

/* Writes the policy table as tbl(1) source for ampshim(7). */
static void write_man_table(FILE *f)
{
    /* A routine has a category on its own device only: "-" on the other. */
    fprintf(f, ".TS\ntab(\t) box;\nlb lb lb lb\nl l l l.\nroutine\top (beta != 0)\tCPU\tCUDA\n_\n");
    for (int r = 0; r < n_routines; r++) {
        const struct routine *rt = &routines[r];
        char op[NAME_MAX_LEN * 3];
        if (rt->op_beta != rt->op)
            snprintf(op, sizeof op, "%s (%s)", ops[rt->op], ops[rt->op_beta]);
        else
            snprintf(op, sizeof op, "%s", ops[rt->op]);
        int dev = families[rt->family].device;
        const char *cat = rt->binding_cat >= 0 ? category_names[rt->binding_cat]
                                               : category_names[op_category[rt->op][dev]];
        const char *cpu = dev == 0 ? cat : "-", *cuda = dev == 1 ? cat : "-";
        fprintf(f, "%s\t%s\t%s\t%s\n", rt->name, op, cpu, cuda);
    }
    fprintf(f, ".TE\n.PP\nWhere the hooks of each kind of entry point are defined (their\n"
               "doors; policy/data/kinds.txt):\n.TS\ntab(\t) box;\nlb lb lb\nl l l.\n"
               "kind\tfamily\tfile\n_\n");
    for (int k = 0; k < n_kinds; k++)
        fprintf(f, "%s\t%s\t%s\n", kinds[k].name, kinds[k].family, kinds[k].file);
    fprintf(
        f,
        ".TE\n.PP\nEach op's category comes from the op list that names it, in\n"
        ".IR policy/data :\n.TS\ntab(\t) box;\nlb lb lb\nl l l.\nop list\tdevice\tcategory\n_\n");
    for (int i = 0; i < n_list_files; i++)
        fprintf(f, "%s\t%s\t%s\n", list_files[i].file, device_names[list_files[i].device],
                category_names[list_files[i].category]);
    fprintf(f, ".TE\n");
}

static void write_glob_table(FILE *out, const struct glob_table *t, const char *first)
{
    fprintf(out, ".TS\ntab(\t) box;\nlb lb\nl lx.\n%s\twhat it is\n_\n", first);
    for (int i = 0; i < t->n; i++)
        fprintf(out, "%s\tT{\n%s\nT}\n", t->rows[i].glob, t->rows[i].what);
    fprintf(out, ".TE\n");
}

static void write_man(const char *template_path, const char *out_path)
{
    FILE *in = open_or_die(template_path, "r"), *out = open_or_die(out_path, "w");
    char line[4096];
    int replaced = 0;
    while (fgets(line, sizeof line, in)) {
        if (strcmp(line, "@POLICY_TABLE@\n") == 0) {
            write_man_table(out);
            replaced |= 1;
        } else if (strcmp(line, "@LIBRARIES_TABLE@\n") == 0) {
            write_glob_table(out, &library_table, "object");
            replaced |= 2;
        } else if (strcmp(line, "@ONEDNN_CALLERS_TABLE@\n") == 0) {
            write_glob_table(out, &onednn_caller_table, "object");
            replaced |= 4;
        } else if (strcmp(line, "@BLAS_WRAPPERS_TABLE@\n") == 0) {
            write_glob_table(out, &blas_wrapper_table, "module");
            replaced |= 8;
        } else if (strcmp(line, "@EMBEDDED_BLAS_TABLE@\n") == 0) {
            write_glob_table(out, &embedded_blas_table, "object");
            replaced |= 16;
        } else {
            fputs(line, out);
        }
    }
    if (replaced != 31)
        die("%s: no @POLICY_TABLE@, @LIBRARIES_TABLE@, @ONEDNN_CALLERS_TABLE@, "
            "@BLAS_WRAPPERS_TABLE@ or @EMBEDDED_BLAS_TABLE@ line",
            template_path);
    fclose(in);
    fclose(out);
}

/* Make's syntax: the outputs depend on every data file read. */
static void write_depfile(const char *path, const char *target)
{
    FILE *f = open_or_die(path, "w");
    fprintf(f, "%s:", target);
    for (int i = 0; i < n_read_paths; i++)
        fprintf(f, " \\\n %s", read_paths[i]);
    fprintf(f, "\n");
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 7)
        die("usage: ampshim-gen DATA_DIR OUT_HEADER OUT_TABLES_C MAN_TEMPLATE OUT_MAN DEPFILE");
    read_lists(argv[1]);
    read_families(argv[1]);
    /* The source tree: the folder above the template's (man/). */
    char root[4096];
    snprintf(root, sizeof root, "%s", argv[4]);
    char *slash = strrchr(root, '/');
    if (slash)
        snprintf(slash, sizeof root - (size_t)(slash - root), "/..");
    else
        snprintf(root, sizeof root, "..");
    read_kinds(argv[1], root);
    read_counters(argv[1]);
    read_globs(argv[1], &library_table);
    read_globs(argv[1], &onednn_caller_table);
    read_globs(argv[1], &blas_wrapper_table);
    read_globs(argv[1], &embedded_blas_table);
    read_manglings(argv[1]);
    for (int i = 0; i < n_list_files; i++)
        read_op_list(argv[1], &list_files[i]);
    /* The op of entry points that decide by what they are given (op "-" in
     * a binding table): passthrough everywhere, in no list. */
    if (find_op("dispatch") >= 0 || n_ops == MAX_OPS)
        die("an op list names 'dispatch', the op of dispatching entry points");
    strcpy(ops[n_ops++], "dispatch");
    read_bindings(argv[1], "bindings.txt", 0, 0);
    read_bindings(argv[1], "bindings_cuda.txt", 1, 1);
    read_bindings(argv[1], "bindings_onednn.txt", 1, 0);
    write_header(argv[2]);
    write_tables(argv[3]);
    write_man(argv[4], argv[5]);
    write_depfile(argv[6], argv[2]);
    return 0;
}
