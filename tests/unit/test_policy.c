/* The generated policy: tables equal the op-list data files (read here
 * independently), the hook list has every entry point of every bound
 * routine, overrides apply with the documented precedence, and the parser
 * rejects bad input without changing anything.
 * usage: test_policy DATA_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/check.h"


static int category_of(enum amp_device dev, const char *op)
{
    int i = amp_op_from_name(op);
    return i < 0 ? -1 : amp_policy_default[dev][i];
}

/* Every op in a list file has that category in the generated table. */
static void check_list_file(const char *dir, const char *file, enum amp_device dev, int cat)
{
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "#\r\n")] = '\0';
        if (!line[0])
            continue;
        n++;
        CHECK(category_of(dev, line) == cat, "%s: %s is %d in the generated table, expected %d",
              file, line, category_of(dev, line), cat);
        int op = amp_op_from_name(line);
        CHECK(op >= 0 && amp_policy_source[dev][op] &&
                  strcmp(amp_policy_source[dev][op], file) == 0,
              "%s: the generated source of %s is %s", file, line,
              op >= 0 && amp_policy_source[dev][op] ? amp_policy_source[dev][op] : "(none)");
    }
    fclose(f);
    CHECK(n > 0, "%s lists no op", file);
}

static void generated_tables(const char *dir)
{
#define AMP_X_LIST(file, device, category)                                                         \
    check_list_file(dir, file, AMP_DEVICE_##device, AMP_CAT_##category);
    AMPSHIM_LIST_FILES(AMP_X_LIST)
#undef AMP_X_LIST
    /* Unlisted means passthrough; a few by name, from the reference. */
    CHECK(category_of(AMP_DEVICE_CPU, "mv") == AMP_CAT_PASSTHROUGH, "cpu mv unlisted");
    CHECK(category_of(AMP_DEVICE_CPU, "dot") == AMP_CAT_PASSTHROUGH, "cpu dot unlisted");
    CHECK(category_of(AMP_DEVICE_CPU, "norm") == AMP_CAT_PASSTHROUGH, "cpu norm unlisted");
    CHECK(category_of(AMP_DEVICE_CUDA, "mv") == AMP_CAT_LOWER, "cuda mv is float16");
    CHECK(category_of(AMP_DEVICE_CUDA, "dot") == AMP_CAT_PROMOTE, "cuda dot promotes");
    CHECK(category_of(AMP_DEVICE_CUDA, "softmax") == AMP_CAT_FP32, "cuda softmax float32");
    CHECK(category_of(AMP_DEVICE_CPU, "triangular_solve") == AMP_CAT_FP32, "cpu trsm op float32");
}

static void hook_list(void)
{
    /* Each BLAS routine has four entry points, each LAPACK routine two. */
    static const char *const blas[] = {"sgemm", "sgemv", "sger",   "sdot",  "snrm2", "sasum",
                                       "ssymm", "ssyrk", "ssyr2k", "strmm", "strsm"};
    for (size_t i = 0; i < sizeof blas / sizeof *blas; i++) {
        char name[64];
        const char *fmts[] = {"cblas_%s", "%s_", "cblas_%s64_", "%s_64_"};
        for (int f = 0; f < 4; f++) {
            snprintf(name, sizeof name, fmts[f], blas[i]);
            CHECK(amp_hook_from_name(name) >= 0, "hook %s missing", name);
        }
    }
    CHECK(amp_hook_from_name("sgesv_") >= 0 && amp_hook_from_name("sgesv_64_") >= 0,
          "LAPACK sgesv hooks");
    CHECK(amp_hook_from_name("cblas_sgesv") < 0, "no CBLAS form for LAPACK routines");
    CHECK(amp_hook_from_name("dgemm_") < 0, "double precision is never hooked");
    CHECK(AMP_HOOK_COUNT == AMPSHIM_GENERATED_HOOK_COUNT, "hook count");
    int g = amp_hook_from_name("cblas_sgemm");
    CHECK(g >= 0 && strcmp(amp_op_names[amp_hook_op[g][0]], "mm") == 0 &&
              strcmp(amp_op_names[amp_hook_op[g][1]], "addmm") == 0,
          "sgemm is mm, addmm when it accumulates");
    CHECK(amp_policy_category(NULL, AMP_DEVICE_CPU, g, 0) == AMP_CAT_LOWER, "cpu sgemm lowers");
    int t = amp_hook_from_name("strsm_");
    CHECK(amp_policy_category(NULL, AMP_DEVICE_CPU, t, 0) == AMP_CAT_FP32, "cpu strsm is fp32");
    CHECK(amp_policy_category(NULL, AMP_DEVICE_CUDA, t, 0) == AMP_CAT_PASSTHROUGH,
          "cuda triangular_solve unlisted");
    int q = amp_hook_from_name("sgeqrf_");
    CHECK(amp_policy_category(NULL, AMP_DEVICE_CPU, q, 0) == AMP_CAT_FP32, "cpu sgeqrf is fp32");
}

static void overrides(void)
{
    struct amp_policy_overrides ov;
    char err[256];
    int g = amp_hook_from_name("cblas_sgemm"), f = amp_hook_from_name("sgemm_");
    int k = amp_hook_from_name("cblas_ssyrk");

    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("mm=fp32", 0, &ov, err, sizeof err) == 0, "parse mm=fp32: %s", err);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, g, 0) == AMP_CAT_FP32, "op override, cpu");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CUDA, g, 0) == AMP_CAT_FP32, "op override, cuda");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, g, 1) == AMP_CAT_LOWER,
          "addmm not touched by an mm override");

    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse(" cpu:mm = passthrough , cuda:addmm=fp32", 0, &ov, err, sizeof err) == 0,
          "spaces and prefixes: %s", err);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, g, 0) == AMP_CAT_PASSTHROUGH, "cpu: prefix");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CUDA, g, 0) == AMP_CAT_LOWER,
          "cpu: prefix leaves cuda alone");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CUDA, g, 1) == AMP_CAT_FP32, "cuda: prefix");

    /* Symbol beats routine beats op. */
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("mm=fp32,sgemm=promote,cblas_sgemm=passthrough", 0, &ov, err,
                           sizeof err) == 0,
          "precedence: %s", err);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, g, 0) == AMP_CAT_PASSTHROUGH, "symbol wins");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, f, 0) == AMP_CAT_PROMOTE, "routine next");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, k, 0) == AMP_CAT_LOWER,
          "other routines of other ops untouched");

    /* Files: comments, blank lines, one pair a line. */
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("# comment\n\ncpu:matmul=fp32  # trailing\n   \nssyrk_=lower\n", 1, &ov,
                           err, sizeof err) == 0,
          "file syntax: %s", err);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, k, 0) == AMP_CAT_FP32, "file op override");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, amp_hook_from_name("ssyrk_"), 0) ==
              AMP_CAT_LOWER,
          "file symbol override");

    /* Wildcards: fnmatch patterns over symbols, routines and ops; an exact
     * name beats any wildcard, and among wildcards the later one wins. */
    int conv = amp_hook_from_name("cudnnConvolutionForward");
    int lt = amp_hook_from_name("cublasLtMatmul");
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("cpu:*=passthrough", 0, &ov, err, sizeof err) == 0, "cpu:*: %s", err);
    for (int h = 0; h < AMP_HOOK_COUNT; h++)
        if (amp_hook_device[h] == AMP_DEVICE_CPU)
            CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, h, 0) == AMP_CAT_PASSTHROUGH &&
                      amp_policy_category(&ov, AMP_DEVICE_CPU, h, 1) == AMP_CAT_PASSTHROUGH,
                  "cpu:* reaches %s", amp_hook_names[h]);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CUDA, conv, 0) == AMP_CAT_LOWER,
          "cpu:* leaves CUDA alone");
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("cuda:conv*=fp32", 0, &ov, err, sizeof err) == 0, "conv*: %s", err);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CUDA, conv, 0) == AMP_CAT_FP32,
          "cuda:conv* (op conv2d)");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CUDA, lt, 0) == AMP_CAT_LOWER, "conv* not cuBLASLt");
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("*=fp32,cpu:*=passthrough,mm=lower,cblas_*=promote", 0, &ov, err,
                           sizeof err) == 0,
          "precedence: %s", err);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, g, 0) == AMP_CAT_LOWER,
          "an exact op beats wildcards");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, g, 1) == AMP_CAT_PROMOTE,
          "the later wildcard (cblas_*) beats the earlier (cpu:*)");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, f, 1) == AMP_CAT_PASSTHROUGH,
          "sgemm_ (beta != 0): cpu:* after *");
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CUDA, conv, 0) == AMP_CAT_FP32, "*=fp32 on CUDA");
    /* Plain products off: mm, addmm and matmul (numpy's A@A.T is ssyrk,
     * op matmul). */
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("cpu:mm=passthrough,cpu:addmm=passthrough,cpu:matmul=passthrough", 0,
                           &ov, err, sizeof err) == 0,
          "products off: %s", err);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, k, 0) == AMP_CAT_PASSTHROUGH &&
              amp_policy_category(&ov, AMP_DEVICE_CPU, g, 1) == AMP_CAT_PASSTHROUGH,
          "ssyrk and sgemm with beta both pass through");

    /* A binding's own category (bindings_cuda.txt): cuBLAS gemv and ger pass
     * through by default although their ops are on the float16 list; an op
     * or symbol override still applies. */
    int gemv = amp_hook_from_name("cublasSgemv_v2"), ger = amp_hook_from_name("cublasSger_v2");
    CHECK(amp_policy_category(NULL, AMP_DEVICE_CUDA, gemv, 0) == AMP_CAT_PASSTHROUGH &&
              amp_policy_category(NULL, AMP_DEVICE_CUDA, ger, 0) == AMP_CAT_PASSTHROUGH &&
              amp_policy_default[AMP_DEVICE_CUDA][amp_hook_op[gemv][0]] == AMP_CAT_LOWER,
          "cuBLAS gemv and ger: the binding says passthrough, op mv is lower");
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("cuda:mv=lower,cublasSger_v2=lower", 0, &ov, err, sizeof err) == 0 &&
              amp_policy_category(&ov, AMP_DEVICE_CUDA, gemv, 0) == AMP_CAT_LOWER &&
              amp_policy_category(&ov, AMP_DEVICE_CUDA, ger, 0) == AMP_CAT_LOWER,
          "an op or symbol override beats the binding's category");

    /* Call-site entries: NAME@OBJECT:FUNCTION or NAME@GLOB; the last match
     * wins and beats every entry without a caller; the other entries are
     * untouched. */
    amp_policy_overrides_clear(&ov);
    CHECK(amp_policy_parse("# audit\ncpu:cblas_sgemm@solver:bad_*=fp32\n"
                           "mm@libfoo.so=passthrough\n"
                           "cpu:mm@solver:*=lower\n"
                           "cpu:cblas_sgemm@solver:bad_site=fp32\n"
                           "matmul@*:gram=fp32\n",
                           1, &ov, err, sizeof err) == 0,
          "call-site entries: %s", err);
    CHECK(ov.n_sites == 5, "five call-site entries, %u", ov.n_sites);
    CHECK(amp_policy_category(&ov, AMP_DEVICE_CPU, g, 0) == AMP_CAT_LOWER,
          "call-site entries leave the hook's own category alone");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, g, 0, "/usr/bin/solver", "bad_site") ==
              AMP_CAT_FP32,
          "object:function entry");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, g, 0, "/usr/bin/solver", "bad_other") ==
              AMP_CAT_LOWER,
          "the later matching entry (mm@solver:*) wins over bad_*");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, g, 0, "/usr/bin/solver", NULL) ==
              AMP_CAT_LOWER,
          "an unnamed function matches '*'");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, g, 1, "/usr/bin/solver", "bad_site") ==
              AMP_CAT_FP32,
          "a symbol entry covers beta != 0");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, f, 1, "/usr/bin/solver", "x") ==
              AMP_CAT_UNSET,
          "sgemm_ with beta != 0 (addmm) matches no mm entry");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, f, 0, "/lib/libfoo.so", "x") ==
              AMP_CAT_PASSTHROUGH,
          "one glob matches the object's basename");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, f, 0, "/lib/libbar.so", "libfoo.so") ==
              AMP_CAT_PASSTHROUGH,
          "one glob matches the function too");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CUDA, g, 0, "/usr/bin/solver", "bad_site") ==
              AMP_CAT_UNSET,
          "cpu: entries stay on the CPU");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, k, 0, "/x/prog", "gram") == AMP_CAT_FP32,
          "op entry, any object");
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, k, 0, NULL, NULL) == AMP_CAT_UNSET,
          "a caller dladdr cannot name matches no function glob but '*'");

    /* Bad input: each bad entry reported once and ignored; the good ones
     * apply, exactly as the text without the bad entries would. */
    static const struct {
        const char *text, *good;
        int comments, n_bad;
        const char *message;
    } bad[] = {
        {"mm", "", 0, 1, "not NAME=CATEGORY"},
        {"mm=fast", "", 0, 1, "unknown category 'fast'"},
        {"mmm=fp32", "", 0, 1, "unknown op or symbol 'mmm'"},
        {"gpu:mm=fp32", "", 0, 1, "unknown op or symbol 'gpu:mm'"},
        {"mm=fp32,", "mm=fp32", 0, 1, "empty entry"},
        {"mm=fp32,,addmm=fp32", "mm=fp32,addmm=fp32", 0, 1, "empty entry"},
        {"cblas_sgemm=FP32x", "", 0, 1, "unknown category"},
        {"# ok\nmm=lower\nbogus\n", "mm=lower", 1, 1, "line 3"},
        {"zz*=fp32", "", 0, 1, "'zz*' matches no op or symbol"},
        {"cpu:cudnn*=fp32", "", 0, 1, "matches no op or symbol on this device"},
        {"*=fast,cpu:*=passthrough,[=lower,mm=fp32", "cpu:*=passthrough,mm=fp32", 0, 2,
         "unknown category 'fast'"},
        {"mm@=fp32", "", 0, 1, "NAME@OBJECT:FUNCTION or NAME@GLOB"},
        {"@prog=fp32", "", 0, 1, "NAME@OBJECT:FUNCTION or NAME@GLOB"},
        {"mmx@prog:f=fp32,mm@prog:f=lower", "mm@prog:f=lower", 0, 1, "unknown op or symbol 'mmx'"},
        {"cpu:cudnn*@prog=fp32", "", 0, 1, "on this device"},
        {"mm@prog:f=slow", "", 0, 1, "unknown category 'slow'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct amp_policy_overrides want;
        amp_policy_overrides_clear(&ov);
        amp_policy_overrides_clear(&want);
        amp_policy_parse(bad[i].good, 0, &want, err, sizeof err);
        err[0] = '\0';
        int rc = amp_policy_parse(bad[i].text, bad[i].comments, &ov, err, sizeof err);
        CHECK(rc < 0, "'%s' accepted", bad[i].text);
        CHECK(strstr(err, bad[i].message) != NULL, "'%s': message '%s' lacks '%s'", bad[i].text,
              err, bad[i].message);
        CHECK(memcmp(&want, &ov, sizeof ov) == 0, "'%s': the good entries alone did not apply",
              bad[i].text);
        amp_policy_overrides_clear(&ov);
        CHECK(amp_policy_parse_each(bad[i].text, bad[i].comments, &ov, NULL, NULL) == bad[i].n_bad,
              "'%s': %d bad entries", bad[i].text, bad[i].n_bad);
    }
}

static void count_reports(void *ctx, const char *message)
{
    (void)message;
    ++*(int *)ctx;
}

/* Issue 21, defect 8: a policy of more call-site entries than the parser
 * keeps loses those that lower first, with one report for all. */
static void site_limit(void)
{
    static char text[AMP_POLICY_MAX_SITES * 48 + 1024];
    size_t n = 0;
    for (int i = 0; i < AMP_POLICY_MAX_SITES; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "mm@lower_%d:*=lower\n", i);
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "mm@keep_%d:*=fp32\n", i);
    static struct amp_policy_overrides ov;
    amp_policy_overrides_clear(&ov);
    int reports = 0;
    int n_bad = amp_policy_parse_each(text, 1, &ov, count_reports, &reports);
    CHECK(n_bad == 40 && reports == 1, "%d entries not kept (want 40), %d reports (want 1)", n_bad,
          reports);
    int kept_fp32 = 0;
    for (uint32_t i = 0; i < ov.n_sites; i++)
        kept_fp32 += ov.site[i].category == AMP_CAT_FP32;
    CHECK(ov.n_sites == AMP_POLICY_MAX_SITES && kept_fp32 == 40,
          "%u entries, %d of the 40 fp32 ones kept", ov.n_sites, kept_fp32);
    CHECK(amp_policy_site_category(&ov, AMP_DEVICE_CPU, AMP_HOOK_cblas_sgemm, 0, "keep_39", NULL) ==
                  AMP_CAT_FP32 &&
              amp_policy_site_category(&ov, AMP_DEVICE_CPU, AMP_HOOK_cblas_sgemm, 0, "lower_0",
                                       NULL) == AMP_CAT_UNSET &&
              amp_policy_site_category(&ov, AMP_DEVICE_CPU, AMP_HOOK_cblas_sgemm, 0, "lower_40",
                                       NULL) == AMP_CAT_LOWER,
          "the earliest lowering entries made room");
    /* Past the limit with fp32 entries only: the later ones are dropped. */
    n = 0;
    for (int i = 0; i < AMP_POLICY_MAX_SITES + 3; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "mm@keep_%d:*=fp32,", i);
    text[n - 1] = '\0';
    amp_policy_overrides_clear(&ov);
    reports = 0;
    n_bad = amp_policy_parse_each(text, 0, &ov, count_reports, &reports);
    CHECK(n_bad == 3 && reports == 1 && ov.n_sites == AMP_POLICY_MAX_SITES,
          "fp32 entries past the limit: %d not kept, %d reports, %u kept", n_bad, reports,
          ov.n_sites);
}

/* policy/data/libraries.txt: matched by basename, with globs. */
static void listed_libraries(void)
{
    CHECK(AMP_LIBRARY_COUNT > 0, "libraries.txt lists libraries");
    int arpack =
        amp_listed_library("/usr/lib/python3/dist-packages/scipy/sparse/linalg/_eigen/arpack/"
                           "_arpack.cpython-311-x86_64-linux-gnu.so");
    CHECK(arpack >= 0 && strstr(amp_library_what[arpack], "ARPACK"),
          "scipy's _arpack is listed as ARPACK");
    CHECK(amp_listed_library("_cpropack.cpython-311-x86_64-linux-gnu.so") >= 0 &&
              amp_listed_library("_spropack.cpython-312-aarch64-linux-gnu.so") >= 0,
          "PROPACK's modules are listed, any Python");
    CHECK(amp_listed_library("_propack.cpython-311-x86_64-linux-gnu.so") >= 0 &&
              amp_listed_library("_arpacklib.cpython-311-x86_64-linux-gnu.so") >= 0 &&
              amp_listed_library("_matfuncs_expm.cpython-311-x86_64-linux-gnu.so") >= 0 &&
              amp_listed_library("_matfuncs_schur_sqrtm.cpython-311-x86_64-linux-gnu.so") >= 0,
          "pip's scipy 1.17 names: PROPACK, ARPACK, expm's and sqrtm's C modules");
    CHECK(amp_listed_library("/usr/lib/x86_64-linux-gnu/libarpack.so.2") >= 0 &&
              amp_listed_library("libsuperlu.so.5") >= 0,
          "system ARPACK and SuperLU are listed");
    CHECK(amp_listed_library("_multiarray_umath.cpython-311-x86_64-linux-gnu.so") < 0 &&
              amp_listed_library("/usr/bin/python3.11") < 0 && amp_listed_library(NULL) < 0,
          "numpy (the program's products) and the program are not");
    CHECK(amp_listed_library("/opt/arpack/lib/_arpack.cpython-311.so/other.so") < 0,
          "only the basename is matched");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_policy DATA_DIR\n");
        return 2;
    }
    generated_tables(argv[1]);
    hook_list();
    overrides();
    site_limit();
    listed_libraries();
    printf("test_policy: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
