/* ampshim-gen: the build-time policy generator. Reads the six autocast op
 * lists and the binding table in policy/data and writes the single hook list
 * (an X-macro every wrapper, slot, name and counter expands from), the default
 * policy tables, and the policy section of ampshim(7).
 *
 * usage: ampshim-gen DATA_DIR OUT_HEADER OUT_TABLES_C MAN_TEMPLATE OUT_MAN
 * Any inconsistency in the data (unknown kind, op in no list, op in two
 * categories of one device, duplicate routine) fails the build. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_OPS = 512, MAX_ROUTINES = 256, NAME_MAX_LEN = 64 };

/* Category codes match enum amp_category in policy/policy.h. */
static const char *const category_names[] = {"passthrough", "lower", "fp32", "promote"};
enum { CAT_PASSTHROUGH, CAT_LOWER, CAT_FP32, CAT_PROMOTE };

static const struct list_file {
    const char *file;
    int device; /* 0 cpu, 1 cuda */
    int category;
} list_files[] = {
    {"cpu_bfloat16.txt", 0, CAT_LOWER},  {"cpu_float32.txt", 0, CAT_FP32},
    {"cpu_promote.txt", 0, CAT_PROMOTE}, {"cuda_float16.txt", 1, CAT_LOWER},
    {"cuda_float32.txt", 1, CAT_FP32},   {"cuda_promote.txt", 1, CAT_PROMOTE},
    {"cuda_float32_linalg.txt", 1, CAT_FP32}, {"cuda_float32_cudnn.txt", 1, CAT_FP32},
};

static const char *const kinds[] = {"gemm",         "gemv",          "ger",
                                    "dot",          "nrm2",          "asum",
                                    "symm",         "syrk",          "syr2k",
                                    "trmm",         "trsm",          "lapack",
                                    "cublas_sgemm", "cublas_gemmex", "cublas_sgemm_strided",
                                    "cublas_gemmex_strided", "cublas_sgemmex", "cublas_sgemv",
                                    "cublas_sger", "cublas_sgemm_batched", "cublas_gemmex_batched",
                                    "cublas_sgemv_batched", "cublas_sgemv_strided", "cublas_leaf",
                                    "cublas_syrk", "cublas_symm", "cublas_trmm", "cublas_trsm",
                                    "cusolver", "cublaslt_matmul",
                                    "cudnn_conv_fwd", "cudnn_conv_bwd_data",
                                    "cudnn_conv_bwd_filter", "cudnn_conv_bias_act", "cudnn_rnn_fwd",
                                    "cudnn_softmax_fwd", "cudnn_softmax_bwd", "cudnn_reduce",
                                    "cudnn_norm_fwd_inference", "cudnn_norm_fwd_training",
                                    "cudnn_region"};

static char ops[MAX_OPS][NAME_MAX_LEN];
static int op_category[MAX_OPS][2];
static int n_ops;

static struct routine {
    char name[NAME_MAX_LEN], kind[NAME_MAX_LEN];
    int op, op_beta;
    int cuda_ints; /* 0 for a CPU routine; 32 or 64 for a CUDA entry point */
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

static void read_op_list(const char *dir, const struct list_file *lf)
{
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/%s", dir, lf->file);
    FILE *f = open_or_die(path, "r");
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
    }
    fclose(f);
}

/* bindings.txt: routine kind op op_beta; bindings_cuda.txt adds ints. */
static void read_bindings(const char *dir, const char *file, int cuda)
{
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = open_or_die(path, "r");
    int want = cuda ? 5 : 4;
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *field[5];
        int n = split_fields(line, field, 5);
        if (n == 0)
            continue;
        if (n != want)
            die("%s:%d: expected: %s", path, lineno,
                cuda ? "symbol kind op op_beta ints" : "routine kind op op_beta");
        if (n_routines == MAX_ROUTINES)
            die("too many routines");
        struct routine *r = &routines[n_routines];
        if (!is_identifier(field[0]) || strlen(field[0]) >= NAME_MAX_LEN - 8)
            die("%s:%d: bad routine name '%s'", path, lineno, field[0]);
        for (int i = 0; i < n_routines; i++)
            if (strcmp(routines[i].name, field[0]) == 0)
                die("%s:%d: routine '%s' bound twice", path, lineno, field[0]);
        int known = 0;
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
            known |= strcmp(kinds[k], field[1]) == 0;
        if (!known || (strncmp(field[1], "cu", 2) == 0) != cuda)
            die("%s:%d: unknown kind '%s'", path, lineno, field[1]);
        r->cuda_ints = 0;
        if (cuda) {
            r->cuda_ints = atoi(field[4]);
            if (strcmp(field[4], "32") != 0 && strcmp(field[4], "64") != 0)
                die("%s:%d: ints must be 32 or 64, not '%s'", path, lineno, field[4]);
        }
        r->op = find_op(field[2]);
        if (r->op < 0)
            die("%s:%d: op '%s' appears in no op list", path, lineno, field[2]);
        r->op_beta = strcmp(field[3], "-") == 0 ? r->op : find_op(field[3]);
        if (r->op_beta < 0)
            die("%s:%d: op '%s' appears in no op list", path, lineno, field[3]);
        strcpy(r->name, field[0]);
        strcpy(r->kind, field[1]);
        n_routines++;
    }
    fclose(f);
}

static void upper(char *dst, const char *src)
{
    while ((*dst++ = (char)toupper((unsigned char)*src++)))
        ;
}

/* Every entry point a routine has: {symbol format, form, integer interface}. */
static const struct form {
    const char *fmt, *form, *ints;
    int lapack_too;
} forms[] = {
    {"cblas_%s", "CBLAS", "LP", 0},
    {"%s_", "F77", "LP", 1},
    {"cblas_%s64_", "CBLAS", "I64", 0},
    {"%s_64_", "F77", "I64", 1},
};

static void write_header(const char *path)
{
    FILE *f = open_or_die(path, "w");
    fprintf(f, "/* Generated by ampshim-gen from policy/data; do not edit. */\n"
               "#ifndef AMPSHIM_GENERATED_H\n#define AMPSHIM_GENERATED_H\n\n");
    fprintf(f, "/* X(op): every op named in an op list. */\n#define AMPSHIM_OP_LIST(X)");
    for (int i = 0; i < n_ops; i++)
        fprintf(f, " \\\n    X(%s)", ops[i]);
    /* One list per library family (shim/<family>.c expands its own), and the
     * whole list as their concatenation. */
    static const char *const families[] = {"BLAS",     "LAPACK",   "CUBLAS",
                                            "CUSOLVER", "CUBLASLT", "CUDNN"};
    int n_hooks = 0;
    for (int fam = 0; fam < 6; fam++) {
        fprintf(f, "\n\n/* X(symbol, routine, KIND, FORM, INTS, op, op_beta) for the %s family.\n"
                   " * FORM is CBLAS or F77; INTS is LP (the forwarded-to library's own integer\n"
                   " * width, probed) or I64 (always 64-bit: the suffixed names). */\n"
                   "#define AMPSHIM_HOOK_LIST_%s(X)",
                families[fam], families[fam]);
        for (int r = 0; r < n_routines; r++) {
            const struct routine *rt = &routines[r];
            int lapack = strcmp(rt->kind, "lapack") == 0;
            int cusolver = strcmp(rt->kind, "cusolver") == 0;
            int cublaslt = strncmp(rt->kind, "cublaslt", 8) == 0;
            int cudnn = strncmp(rt->kind, "cudnn", 5) == 0;
            if ((cudnn ? 5 : cublaslt ? 4 : cusolver ? 3 : rt->cuda_ints ? 2 : lapack) != fam)
                continue;
            char kind[NAME_MAX_LEN];
            upper(kind, rt->kind);
            if (rt->cuda_ints) {
                /* One entry point, named in full; FORM is the family, INTS I32/I64. */
                fprintf(f, " \\\n    X(%s, %s, %s, %s, I%d, %s, %s)", rt->name, rt->name, kind,
                        families[fam], rt->cuda_ints, ops[rt->op], ops[rt->op_beta]);
                n_hooks++;
                continue;
            }
            for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
                if (lapack && !forms[i].lapack_too)
                    continue;
                char sym[NAME_MAX_LEN * 2];
                snprintf(sym, sizeof sym, forms[i].fmt, rt->name);
                fprintf(f, " \\\n    X(%s, %s, %s, %s, %s, %s, %s)", sym, rt->name, kind,
                        forms[i].form, forms[i].ints, ops[rt->op], ops[rt->op_beta]);
                n_hooks++;
            }
        }
    }
    fprintf(f, "\n\n#define AMPSHIM_HOOK_LIST(X) AMPSHIM_HOOK_LIST_BLAS(X) AMPSHIM_HOOK_LIST_LAPACK(X) "
               "AMPSHIM_HOOK_LIST_CUBLAS(X) AMPSHIM_HOOK_LIST_CUSOLVER(X) AMPSHIM_HOOK_LIST_CUBLASLT(X) "
               "AMPSHIM_HOOK_LIST_CUDNN(X)");
    fprintf(f, "\n\n#define AMPSHIM_GENERATED_OP_COUNT %d\n#define AMPSHIM_GENERATED_HOOK_COUNT %d\n",
            n_ops, n_hooks);
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
        fprintf(f, "    [%s] = {\n", dev ? "AMP_DEVICE_CUDA" : "AMP_DEVICE_CPU");
        for (int i = 0; i < n_ops; i++)
            if (op_category[i][dev] != CAT_PASSTHROUGH)
                fprintf(f, "        [AMP_OP_%s] = AMP_CAT_%s,\n", ops[i],
                        op_category[i][dev] == CAT_LOWER  ? "LOWER"
                        : op_category[i][dev] == CAT_FP32 ? "FP32"
                                                          : "PROMOTE");
        fprintf(f, "    },\n");
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
        const char *cpu = rt->cuda_ints ? "-" : category_names[op_category[rt->op][0]];
        const char *cuda = rt->cuda_ints ? category_names[op_category[rt->op][1]] : "-";
        fprintf(f, "%s\t%s\t%s\t%s\n", rt->name, op, cpu, cuda);
    }
    fprintf(f, ".TE\n");
}

static void write_man(const char *template_path, const char *out_path)
{
    FILE *in = open_or_die(template_path, "r"), *out = open_or_die(out_path, "w");
    char line[4096];
    int replaced = 0;
    while (fgets(line, sizeof line, in)) {
        if (strcmp(line, "@POLICY_TABLE@\n") == 0) {
            write_man_table(out);
            replaced = 1;
        } else {
            fputs(line, out);
        }
    }
    if (!replaced)
        die("%s: no @POLICY_TABLE@ line", template_path);
    fclose(in);
    fclose(out);
}

int main(int argc, char **argv)
{
    if (argc != 6)
        die("usage: ampshim-gen DATA_DIR OUT_HEADER OUT_TABLES_C MAN_TEMPLATE OUT_MAN");
    for (size_t i = 0; i < sizeof list_files / sizeof *list_files; i++)
        read_op_list(argv[1], &list_files[i]);
    read_bindings(argv[1], "bindings.txt", 0);
    read_bindings(argv[1], "bindings_cuda.txt", 1);
    write_header(argv[2]);
    write_tables(argv[3]);
    write_man(argv[4], argv[5]);
    return 0;
}
