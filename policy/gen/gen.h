/* ampshim-gen's model of policy/data (see ampshim-gen.c): the op lists,
 * families, kinds, counters, glob tables, manglings and routines, as
 * gen_read.c reads them and gen_write.c prints every table from them. */
#ifndef AMPSHIM_GEN_H
#define AMPSHIM_GEN_H

#include <stddef.h>
#include <stdio.h>

enum {
    MAX_OPS = 512,
    MAX_ROUTINES = 256,
    NAME_MAX_LEN = 64,
    MAX_LISTS = 32,
    MAX_FAMILIES = 16,
    MAX_COUNTERS = 12 /* the control block's layout (AMP_CTL_COUNTER_SLOTS) */
};

/* The categories; policy/policy.h expands enum amp_category from the list
 * written below, so codes and names are defined here only. */
extern const char *const category_names[];
extern const char *const category_macros[];
enum { CAT_PASSTHROUGH, CAT_LOWER, CAT_FP32, CAT_PROMOTE };
extern const char *const device_names[];
extern const char *const device_macros[];

/* lists.txt */
struct list_file {
    char file[NAME_MAX_LEN];
    int device, category;
};
extern struct list_file list_files[MAX_LISTS];
extern int n_list_files;

/* families.txt */
struct family {
    char name[NAME_MAX_LEN], prefix[NAME_MAX_LEN], display[NAME_MAX_LEN];
    int device;
};
extern struct family families[MAX_FAMILIES];
extern int n_families;

/* counters.txt */
struct counter {
    char name[NAME_MAX_LEN], kind[NAME_MAX_LEN], description[256];
    int width;
};
extern struct counter counters[MAX_COUNTERS];
extern int n_counters;

/* kinds.txt: the argument shapes the hooks parse, each in its family, and
 * the file (under the source tree) that defines its hooks. */
enum { MAX_KINDS = 64 };
struct kind {
    char name[NAME_MAX_LEN], family[NAME_MAX_LEN], file[NAME_MAX_LEN];
    int decided; /* its rows are decided and counted, never exported */
};
extern struct kind kinds[MAX_KINDS];
extern int n_kinds;
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
extern struct glob_table library_table, embedded_blas_table, onednn_caller_table,
    blas_wrapper_table, framework_table, op_frame_table;

/* op_frames.txt's second column names an op of a CPU float32 list: checked
 * once the lists are read. */
void check_op_frames(void);


extern char ops[MAX_OPS][NAME_MAX_LEN];
extern int op_category[MAX_OPS][2];
extern int op_source[MAX_OPS][2]; /* index in list_files, for a listed op */
extern int n_ops;

struct routine {
    char name[NAME_MAX_LEN];
    int kind, family;
    int op, op_beta;
    int ints;        /* 0 for a mangled CPU routine; 32 or 64 for an entry point named in
                        full (CUDA, oneDNN) */
    int binding_cat; /* the binding's own category, -1 for the op list's */
};
extern struct routine routines[MAX_ROUTINES];
extern int n_routines;

/* manglings.txt: every exported name of a CPU routine. */
struct mangling {
    char name[NAME_MAX_LEN], form[8], ints[8], prefix[NAME_MAX_LEN], suffix[NAME_MAX_LEN];
    int lapack;
};
extern struct mangling manglings[32];
extern int n_manglings;

/* The hook list, built once (build_hooks) in its order: family by family,
 * each routine's entry points (a CPU routine's under every mangling that
 * applies, LAPACK's under the Fortran ones; an entry point named in full
 * once). Every table of the header, the C file and the man page is printed
 * from it. */
enum { MAX_HOOKS = 4096 };
struct hook {
    int routine;
    int mangling; /* index in manglings, or -1 for an entry point named in full */
    char symbol[NAME_MAX_LEN * 3];
};
extern struct hook hooks[MAX_HOOKS];
extern int n_hooks;
void build_hooks(void);

/* Every data file the generator read, for the build's depfile. */
extern char read_paths[64][4096];
extern int n_read_paths;

/* Shared by the reader, the writers and main. */
__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);
FILE *open_or_die(const char *path, const char *mode);
int find_op(const char *name);
void read_lists(const char *dir);
void read_families(const char *dir);
void read_kinds(const char *dir, const char *root);
void read_globs(const char *dir, struct glob_table *t);
void read_counters(const char *dir);
void read_op_list(const char *dir, const struct list_file *lf);
void read_bindings(const char *dir, const char *file, int exact, int device);
void upper(char *dst, const char *src);
void read_manglings(const char *dir);
void mangle(char *out, size_t outlen, const struct mangling *m, const char *routine);
void write_header(const char *path);
void write_tables(const char *path);
void write_man(const char *template_path, const char *out_path);
void write_depfile(const char *path, const char *target);

#endif
