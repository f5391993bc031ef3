/* The policy engine: ops, hooks and categories expanded from the generated
 * lists, the override parser for AMPSHIM_POLICY / AMPSHIM_POLICY_FILE, and the
 * effective per-hook category table the hooks read on every call. */
#ifndef AMPSHIM_POLICY_H
#define AMPSHIM_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "ampshim_generated.h"

enum amp_device { AMP_DEVICE_CPU, AMP_DEVICE_CUDA, AMP_DEVICE_COUNT };

/* Library families (policy/data/families.txt). */
enum amp_family {
#define AMP_X_FAMILY(family, device, prefix, display) AMP_FAMILY_##family,
    AMPSHIM_FAMILY_LIST(AMP_X_FAMILY)
#undef AMP_X_FAMILY
        AMP_FAMILY_COUNT
};

/* From the generator's list: passthrough (unlisted: run in the input type),
 * lower (multiplicands in the thread's dtype), fp32 (run in fp32, an fp32
 * region), promote (run in the widest input type). */
enum amp_category {
#define AMP_X_CATEGORY(name, NAME) AMP_CAT_##NAME,
    AMPSHIM_CATEGORY_LIST(AMP_X_CATEGORY)
#undef AMP_X_CATEGORY
        AMP_CAT_COUNT,
    AMP_CAT_UNSET = 0xff /* override slot: no override */
};

enum amp_op {
#define AMP_X_OP(op) AMP_OP_##op,
    AMPSHIM_OP_LIST(AMP_X_OP)
#undef AMP_X_OP
        AMP_OP_COUNT
};

enum amp_hook_id {
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_HOOK_##sym,
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
        AMP_HOOK_COUNT
};

extern const char *const amp_op_names[AMP_OP_COUNT];
extern const char *const amp_hook_names[AMP_HOOK_COUNT];
extern const char *const amp_hook_routines[AMP_HOOK_COUNT];
/* The file that defines each hook (policy/data/kinds.txt). */
extern const char *const amp_hook_file[AMP_HOOK_COUNT];
extern const uint8_t amp_hook_op[AMP_HOOK_COUNT][2]; /* [hook][accumulates] */
extern const char *const amp_category_names[AMP_CAT_COUNT];
extern const char *const amp_device_names[AMP_DEVICE_COUNT];

/* Per family: its device, how its libraries' file names begin ("" for the
 * CPU families) and its name in messages. */
extern const uint8_t amp_family_device[AMP_FAMILY_COUNT];
extern const char *const amp_family_prefix[AMP_FAMILY_COUNT];
extern const char *const amp_family_display[AMP_FAMILY_COUNT];

/* Numerical libraries outside the BLAS (policy/data/libraries.txt): an
 * object-basename glob each, and what it is. */
#define AMP_LIBRARY_COUNT (0 AMPSHIM_LIBRARY_LIST(AMP_X_COUNT_ONE))
#define AMP_X_COUNT_ONE(glob, what) +1
extern const char *const amp_library_glob[AMP_LIBRARY_COUNT];
extern const char *const amp_library_what[AMP_LIBRARY_COUNT];

/* The line of libraries.txt that names an object (a path or basename), or
 * -1. */
int amp_listed_library(const char *object);

/* Modules whose BLAS wrappers tail-call the BLAS (policy/data/
 * blas_wrappers.txt): an extension module that imports one is a numerical
 * library in libraries.txt's sense (runtime/callers.c reads it for the
 * names). */
/* Frameworks with a BLAS linked in (embedded_blas.txt): the index of the
 * glob an object's basename matches, -1 when none. */
#define AMP_EMBEDDED_BLAS_COUNT (0 AMPSHIM_EMBEDDED_BLAS_LIST(AMP_X_COUNT_ONE))
extern const char *const amp_embedded_blas_glob[AMP_EMBEDDED_BLAS_COUNT];
int amp_embedded_blas_listed(const char *object);

#define AMP_BLAS_WRAPPER_COUNT (0 AMPSHIM_BLAS_WRAPPER_LIST(AMP_X_COUNT_ONE))
extern const char *const amp_blas_wrapper_module[AMP_BLAS_WRAPPER_COUNT];
extern const char *const amp_blas_wrapper_what[AMP_BLAS_WRAPPER_COUNT];

/* oneDNN's callers known to query every descriptor of a primitive they make
 * and reorder their data to it (policy/data/onednn_callers.txt): for them a
 * lowered convolution's descriptor itself asks for bf16 inputs
 * (shim/onednn/desc_init.c). The line that names an object, or -1. */
#define AMP_ONEDNN_CALLER_COUNT (0 AMPSHIM_ONEDNN_CALLER_LIST(AMP_X_COUNT_ONE))
extern const char *const amp_onednn_caller_glob[AMP_ONEDNN_CALLER_COUNT];
int amp_onednn_caller_listed(const char *object);

/* Generated (ampshim_policy_tables.c): the op lists as a table, the list
 * file each listed op's category comes from (NULL: unlisted), and each
 * hook's family and device. */
extern const uint8_t amp_policy_default[AMP_DEVICE_COUNT][AMP_OP_COUNT];
extern const char *const amp_policy_source[AMP_DEVICE_COUNT][AMP_OP_COUNT];
extern const uint8_t amp_hook_family[AMP_HOOK_COUNT]; /* enum amp_family */
extern const uint8_t amp_hook_device[AMP_HOOK_COUNT]; /* enum amp_device */
/* The isamax of a CPU hook's mangling and form, to probe its library's
 * integer width; NULL where the name fixes the width (I64) and for CUDA. */
extern const char *const amp_hook_width_probe[AMP_HOOK_COUNT];
extern const uint8_t amp_hook_form_is_cblas[AMP_HOOK_COUNT]; /* CBLAS, not Fortran */
/* A binding's own category (policy/data/bindings_cuda.txt's last column),
 * which replaces its op's; AMP_CAT_UNSET where the op list decides. */
extern const uint8_t amp_hook_binding_category[AMP_HOOK_COUNT];

/* The category a hook gets with no overrides: its binding's own, else its
 * op's (beta = 0 or not). */
static inline enum amp_category amp_policy_hook_default(enum amp_device dev, int hook,
                                                        int accumulates)
{
    if (amp_hook_binding_category[hook] != AMP_CAT_UNSET && amp_hook_device[hook] == dev)
        return (enum amp_category)amp_hook_binding_category[hook];
    return (enum amp_category)amp_policy_default[dev][amp_hook_op[hook][accumulates != 0]];
}

/* Overrides from the environment or ampctl; AMP_CAT_UNSET where none. A symbol
 * override (cblas_sgemm) beats a routine override (sgemm), which beats an op
 * override (mm), which beats a wildcard (mm*, cpu:*, *); among wildcards the
 * later entry wins. A wildcard (fnmatch: * ? [...]) applies to every hook
 * whose symbol, routine or op (the op of the call's beta) it matches. */
/* As many call-site entries as the audit has sites (runtime/control.h's
 * AMP_CTL_AUDIT_SITES), so a policy it writes is kept whole. */
#define AMP_POLICY_MAX_SITES 256
/* add_site's answer when the table was full and an entry was not kept. */
#define AMP_POLICY_SITE_DROPPED (-2)
/* A call-site entry, NAME@CALLER=CATEGORY: NAME as in any entry (op, routine,
 * symbol or pattern), CALLER either OBJECT:FUNCTION (two fnmatch globs, one
 * for the calling object's basename and one for the calling function, as
 * dladdr(3) names them) or one glob matched against either, as in
 * AMPSHIM_CALLERS. Strings are zero-filled to their ends, so two override
 * sets parsed from the same text compare equal with memcmp. */
struct amp_policy_site {
    char name[64];
    char object[96]; /* "" with either_glob */
    char function[128];
    uint8_t first_dev, last_dev;
    uint8_t category;
    uint8_t either_glob; /* one glob for the object or the function */
    uint8_t python;      /* AMP_POLICY_PY_MODULE: py:MODULE (function holds the module glob);
                            AMP_POLICY_PY_SITE: FILE.py:LINE or FILE.py:FUNCTION */
};
enum { AMP_POLICY_PY_MODULE = 1, AMP_POLICY_PY_SITE = 2 };

struct amp_policy_overrides {
    uint8_t op[AMP_DEVICE_COUNT][AMP_OP_COUNT];
    uint8_t hook[AMP_DEVICE_COUNT][AMP_HOOK_COUNT];
    uint8_t routine[AMP_DEVICE_COUNT][AMP_HOOK_COUNT];     /* indexed by any hook of the routine */
    uint8_t wildcard[AMP_DEVICE_COUNT][AMP_HOOK_COUNT][2]; /* [accumulates] */
    /* Call-site entries in the order given: among those that match a call
     * the last wins, and a match beats every entry without a caller. */
    uint32_t n_sites;
    struct amp_policy_site site[AMP_POLICY_MAX_SITES];
};

/* Whether a policy name is a wildcard pattern. */
int amp_policy_is_pattern(const char *name);

/* Whether the pattern matches hook h's symbol, routine, or op when the call
 * accumulates (or not). */
int amp_policy_pattern_matches(const char *pattern, int hook, int accumulates);

/* Whether a policy NAME (an op, routine, symbol or pattern) names hook h when
 * the call accumulates (or not). */
int amp_policy_name_matches(const char *name, int hook, int accumulates);

void amp_policy_overrides_clear(struct amp_policy_overrides *ov);

/* Parses "NAME=CATEGORY" pairs separated by ',' or newlines ('#' starts a
 * comment when comments is set) into ov. Every good entry applies; each bad
 * one changes nothing and is reported once through bad (one line, "line N: "
 * first in a file). Returns the number of bad entries. */
typedef void (*amp_policy_bad_entry_fn)(void *ctx, const char *message);
int amp_policy_parse_each(const char *text, int comments, struct amp_policy_overrides *ov,
                          amp_policy_bad_entry_fn bad, void *ctx);

/* The same, returning -1 with the first bad entry's message in err when
 * there is one, else 0. */
int amp_policy_parse(const char *text, int comments, struct amp_policy_overrides *ov, char *err,
                     size_t errlen);

/* The category a hook gets on a device after overrides. */
enum amp_category amp_policy_category(const struct amp_policy_overrides *ov, enum amp_device dev,
                                      enum amp_hook_id hook, int accumulates);

/* The category the call-site entries give a call of hook (accumulating or
 * not) on dev made from `object` (a path or basename; NULL when unknown) in
 * `function` (NULL when dladdr names none), or AMP_CAT_UNSET when no entry
 * matches. */
int amp_policy_site_category(const struct amp_policy_overrides *ov, enum amp_device dev,
                             enum amp_hook_id hook, int accumulates, const char *object,
                             const char *function);

/* The category the call-site entries for Python code give a call: by its
 * site's file (basename, or path when the glob has a '/') and line or
 * function, or (file NULL) by a module of its frames (py:MODULE entries,
 * matching the module and its submodules); AMP_CAT_UNSET when none. */
int amp_policy_python_category(const struct amp_policy_overrides *ov, enum amp_device dev,
                               enum amp_hook_id hook, int accumulates, const char *file,
                               const char *function, int line, const char *module);

/* The 64-bit FNV-1a hash of a name. A caller field written GLOB~HASH (16
 * hex digits) matches a name the glob matches whose hash is HASH: how an
 * entry names a caller whose name is longer than the field holds (the
 * audit's policy writes its cut names so), never another. Call sites are
 * keyed with it too (runtime/sites.h). */
uint64_t amp_policy_name_hash(const char *name);

/* Name lookups; -1 when unknown. */
int amp_op_from_name(const char *name);
int amp_hook_from_name(const char *name);
int amp_category_from_name(const char *name);

#endif
