/* Policy lookup and the override parser. Names and ops expand from the
 * generated hook list; nothing here lists a symbol by hand. */
#include "policy/policy.h"

#include <ctype.h>
#include <stddef.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const amp_op_names[AMP_OP_COUNT] = {
#define AMP_X_OP(op) #op,
    AMPSHIM_OP_LIST(AMP_X_OP)
#undef AMP_X_OP
};

const char *const amp_hook_names[AMP_HOOK_COUNT] = {
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) #sym,
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
};

const char *const amp_hook_routines[AMP_HOOK_COUNT] = {
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) #routine,
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
};

const uint8_t amp_hook_op[AMP_HOOK_COUNT][2] = {
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) {AMP_OP_##op, AMP_OP_##op_beta},
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
};

const uint8_t amp_family_device[AMP_FAMILY_COUNT] = {
#define AMP_X_FAMILY(family, device, prefix, display) AMP_DEVICE_##device,
    AMPSHIM_FAMILY_LIST(AMP_X_FAMILY)
#undef AMP_X_FAMILY
};

const char *const amp_family_prefix[AMP_FAMILY_COUNT] = {
#define AMP_X_FAMILY(family, device, prefix, display) prefix,
    AMPSHIM_FAMILY_LIST(AMP_X_FAMILY)
#undef AMP_X_FAMILY
};

const char *const amp_family_display[AMP_FAMILY_COUNT] = {
#define AMP_X_FAMILY(family, device, prefix, display) display,
    AMPSHIM_FAMILY_LIST(AMP_X_FAMILY)
#undef AMP_X_FAMILY
};

const char *const amp_library_glob[AMP_LIBRARY_COUNT] = {
#define AMP_X_LIBRARY(glob, what) glob,
    AMPSHIM_LIBRARY_LIST(AMP_X_LIBRARY)
#undef AMP_X_LIBRARY
};

const char *const amp_library_what[AMP_LIBRARY_COUNT] = {
#define AMP_X_LIBRARY(glob, what) what,
    AMPSHIM_LIBRARY_LIST(AMP_X_LIBRARY)
#undef AMP_X_LIBRARY
};

const char *const amp_blas_wrapper_module[AMP_BLAS_WRAPPER_COUNT] = {
#define AMP_X_WRAPPER(module, what) module,
    AMPSHIM_BLAS_WRAPPER_LIST(AMP_X_WRAPPER)
#undef AMP_X_WRAPPER
};

const char *const amp_blas_wrapper_what[AMP_BLAS_WRAPPER_COUNT] = {
#define AMP_X_WRAPPER(module, what) what,
    AMPSHIM_BLAS_WRAPPER_LIST(AMP_X_WRAPPER)
#undef AMP_X_WRAPPER
};

/* The first glob of globs[n] that object's basename matches, or -1. */
static int glob_index(const char *const *globs, int n, const char *object)
{
    if (!object)
        return -1;
    const char *slash = strrchr(object, '/');
    const char *base = slash ? slash + 1 : object;
    for (int i = 0; i < n; i++)
        if (fnmatch(globs[i], base, 0) == 0)
            return i;
    return -1;
}

int amp_listed_library(const char *object)
{
    return glob_index(amp_library_glob, AMP_LIBRARY_COUNT, object);
}

const char *const amp_embedded_blas_glob[AMP_EMBEDDED_BLAS_COUNT] = {
#define AMP_X_EMBEDDED(glob, what) glob,
    AMPSHIM_EMBEDDED_BLAS_LIST(AMP_X_EMBEDDED)
#undef AMP_X_EMBEDDED
};

int amp_embedded_blas_listed(const char *object)
{
    return glob_index(amp_embedded_blas_glob, AMP_EMBEDDED_BLAS_COUNT, object);
}

const char *const amp_onednn_caller_glob[AMP_ONEDNN_CALLER_COUNT] = {
#define AMP_X_CALLER(glob, what) glob,
    AMPSHIM_ONEDNN_CALLER_LIST(AMP_X_CALLER)
#undef AMP_X_CALLER
};

int amp_onednn_caller_listed(const char *object)
{
    return glob_index(amp_onednn_caller_glob, AMP_ONEDNN_CALLER_COUNT, object);
}

const char *const amp_category_names[AMP_CAT_COUNT] = {
#define AMP_X_CATEGORY(name, NAME) #name,
    AMPSHIM_CATEGORY_LIST(AMP_X_CATEGORY)
#undef AMP_X_CATEGORY
};
const char *const amp_device_names[AMP_DEVICE_COUNT] = {"cpu", "cuda"};

void amp_policy_overrides_clear(struct amp_policy_overrides *ov)
{
    memset(ov, AMP_CAT_UNSET, offsetof(struct amp_policy_overrides, n_sites));
    ov->n_sites = 0;
    memset(ov->site, 0, sizeof ov->site);
}

int amp_op_from_name(const char *name)
{
    for (int i = 0; i < AMP_OP_COUNT; i++)
        if (strcmp(amp_op_names[i], name) == 0)
            return i;
    return -1;
}

int amp_hook_from_name(const char *name)
{
    for (int i = 0; i < AMP_HOOK_COUNT; i++)
        if (strcmp(amp_hook_names[i], name) == 0)
            return i;
    return -1;
}

static int routine_from_name(const char *name)
{
    for (int i = 0; i < AMP_HOOK_COUNT; i++)
        if (strcmp(amp_hook_routines[i], name) == 0)
            return i;
    return -1;
}

int amp_category_from_name(const char *name)
{
    for (int i = 0; i < AMP_CAT_COUNT; i++)
        if (strcasecmp(amp_category_names[i], name) == 0)
            return i;
    return -1;
}

int amp_policy_is_pattern(const char *name)
{
    return strpbrk(name, "*?[") != NULL;
}

int amp_policy_pattern_matches(const char *pattern, int hook, int accumulates)
{
    return fnmatch(pattern, amp_hook_names[hook], 0) == 0 ||
           fnmatch(pattern, amp_hook_routines[hook], 0) == 0 ||
           fnmatch(pattern, amp_op_names[amp_hook_op[hook][accumulates != 0]], 0) == 0;
}

/* Applies a wildcard entry; returns how many (hook, beta) pairs it matched
 * on the devices first..last. */
static int apply_pattern(const char *pattern, int first, int last, int cat,
                         struct amp_policy_overrides *ov)
{
    int matched = 0;
    for (int h = 0; h < AMP_HOOK_COUNT; h++)
        for (int acc = 0; acc < 2; acc++)
            if (amp_hook_device[h] >= first && amp_hook_device[h] <= last &&
                amp_policy_pattern_matches(pattern, h, acc)) {
                /* A routine has a category on its own device; the other
                 * device's entry is kept too, as an op override would be. */
                for (int dev = first; dev <= last; dev++)
                    ov->wildcard[dev][h][acc] = (uint8_t)cat;
                matched++;
            }
    return matched;
}

int amp_policy_name_matches(const char *name, int h, int accumulates)
{
    if (amp_policy_is_pattern(name))
        return amp_policy_pattern_matches(name, h, accumulates);
    return strcmp(name, amp_hook_names[h]) == 0 || strcmp(name, amp_hook_routines[h]) == 0 ||
           strcmp(name, amp_op_names[amp_hook_op[h][accumulates != 0]]) == 0;
}

static int copy_field(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        return -1;
    memcpy(dst, src, n);
    return 0;
}

/* Whether the n characters at s name a Python file (end in .py). */
static int names_python_file(const char *s, size_t n)
{
    return n >= 3 && strncmp(s + n - 3, ".py", 3) == 0;
}

/* Appends one call-site entry NAME@CALLER=CATEGORY. */
static int add_site(const char *name, const char *caller, int first, int last, int cat,
                    struct amp_policy_overrides *ov, char *err, size_t errlen)
{
    if (!*name || !*caller) {
        snprintf(err, errlen, "'%s@%s': a call-site entry is NAME@OBJECT:FUNCTION or NAME@GLOB",
                 name, caller);
        return -1;
    }
    int matched = 0;
    for (int h = 0; h < AMP_HOOK_COUNT && !matched; h++)
        for (int acc = 0; acc < 2; acc++)
            matched |= amp_hook_device[h] >= first && amp_hook_device[h] <= last &&
                       amp_policy_name_matches(name, h, acc);
    if (!matched) {
        snprintf(err, errlen, "unknown op or symbol '%s'%s", name,
                 first == last ? " on this device" : "");
        return -1;
    }
    /* Full: one entry goes, and an entry that keeps fp32 goes last (the
     * earliest entry that does not takes its place), so cutting a policy
     * never lowers what it kept in fp32. Reported once per text by the
     * caller. */
    int evicted = 0;
    if (ov->n_sites >= AMP_POLICY_MAX_SITES) {
        uint32_t victim = 0;
        while (victim < ov->n_sites && ov->site[victim].category == AMP_CAT_FP32)
            victim++;
        if (cat != AMP_CAT_FP32 || victim == ov->n_sites)
            return AMP_POLICY_SITE_DROPPED;
        memmove(&ov->site[victim], &ov->site[victim + 1],
                (ov->n_sites - victim - 1) * sizeof *ov->site);
        ov->n_sites--;
        evicted = 1;
    }
    struct amp_policy_site *s = &ov->site[ov->n_sites];
    memset(s, 0, sizeof *s);
    const char *colon = strchr(caller, ':');
    int bad = copy_field(s->name, sizeof s->name, name);
    if (colon) {
        char object[sizeof s->object];
        size_t n = (size_t)(colon - caller);
        bad |= n >= sizeof object;
        if (!bad) {
            memcpy(object, caller, n);
            object[n] = '\0';
            bad |= copy_field(s->object, sizeof s->object, *object ? object : "*");
            bad |= copy_field(s->function, sizeof s->function, colon[1] ? colon + 1 : "*");
        }
    } else {
        s->either_glob = 1;
        bad |= copy_field(s->function, sizeof s->function, caller);
    }
    if (bad) {
        memset(s, 0, sizeof *s);
        snprintf(err, errlen, "'%s@%s': name or caller too long", name, caller);
        return -1;
    }
    s->first_dev = (uint8_t)first;
    s->last_dev = (uint8_t)last;
    s->category = (uint8_t)cat;
    /* py:MODULE names Python code by module; FILE.py:LINE-or-FUNCTION a
     * Python site */
    if (colon && strcmp(s->object, "py") == 0)
        s->python = AMP_POLICY_PY_MODULE;
    else if (colon && names_python_file(s->object, strlen(s->object)))
        s->python = AMP_POLICY_PY_SITE;
    ov->n_sites++;
    return evicted ? AMP_POLICY_SITE_DROPPED : 0;
}

uint64_t amp_policy_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* A caller field of an entry against a name: an fnmatch glob, or
 * GLOB~HASH for a name longer than the field holds (policy.h). */
static int field_matches(const char *field, const char *name)
{
    size_t n = strlen(field);
    if (n > 17 && field[n - 17] == '~' && strspn(field + n - 16, "0123456789abcdef") == 16) {
        char glob[256];
        if (n - 17 >= sizeof glob)
            return 0;
        memcpy(glob, field, n - 17);
        glob[n - 17] = '\0';
        return fnmatch(glob, name, 0) == 0 &&
               amp_policy_name_hash(name) == strtoull(field + n - 16, NULL, 16);
    }
    return fnmatch(field, name, 0) == 0;
}

int amp_policy_site_category(const struct amp_policy_overrides *ov, enum amp_device dev,
                             enum amp_hook_id hook, int accumulates, const char *object,
                             const char *function)
{
    const char *slash = object ? strrchr(object, '/') : NULL;
    const char *base = slash ? slash + 1 : object;
    for (uint32_t i = ov->n_sites; i-- > 0;) {
        const struct amp_policy_site *s = &ov->site[i];
        if (dev < s->first_dev || dev > s->last_dev || s->python ||
            !amp_policy_name_matches(s->name, hook, accumulates))
            continue;
        int hit = s->either_glob ? (base && field_matches(s->function, base)) ||
                                       (function && field_matches(s->function, function))
                                 : field_matches(s->object, base ? base : "") &&
                                       field_matches(s->function, function ? function : "");
        if (hit)
            return s->category;
    }
    return AMP_CAT_UNSET;
}

int amp_policy_python_category(const struct amp_policy_overrides *ov, enum amp_device dev,
                               enum amp_hook_id hook, int accumulates, const char *file,
                               const char *function, int line, const char *module)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    const char *base = slash ? slash + 1 : file;
    char line_text[16];
    snprintf(line_text, sizeof line_text, "%d", line);
    for (uint32_t i = ov->n_sites; i-- > 0;) {
        const struct amp_policy_site *s = &ov->site[i];
        if (dev < s->first_dev || dev > s->last_dev || !s->python ||
            !amp_policy_name_matches(s->name, hook, accumulates))
            continue;
        int hit;
        if (s->python == AMP_POLICY_PY_MODULE) {
            size_t n = strlen(s->function);
            hit = module && (fnmatch(s->function, module, 0) == 0 ||
                             (strncmp(module, s->function, n) == 0 && module[n] == '.'));
        } else if (file) {
            /* FILE:LINE or FILE:FUNCTION; FILE the basename, or the path
             * when the glob has a '/' */
            hit = field_matches(s->object, strchr(s->object, '/') ? file : base) &&
                  (field_matches(s->function, line_text) ||
                   field_matches(s->function, function ? function : ""));
        } else {
            hit = 0;
        }
        if (hit)
            return s->category;
    }
    return AMP_CAT_UNSET;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

/* Applies one "[cpu:|cuda:]NAME=CATEGORY" entry to ov. */
static int apply_entry(char *entry, struct amp_policy_overrides *ov, char *err, size_t errlen)
{
    char *eq = strchr(entry, '=');
    if (!eq) {
        snprintf(err, errlen, "'%s' is not NAME=CATEGORY", entry);
        return -1;
    }
    *eq = '\0';
    char *name = trim(entry), *value = trim(eq + 1);
    int first = AMP_DEVICE_CPU, last = AMP_DEVICE_CUDA;
    if (strncmp(name, "cpu:", 4) == 0) {
        name += 4;
        last = AMP_DEVICE_CPU;
    } else if (strncmp(name, "cuda:", 5) == 0) {
        name += 5;
        first = AMP_DEVICE_CUDA;
    }
    int cat = amp_category_from_name(value);
    if (cat < 0) {
        snprintf(err, errlen, "'%s': unknown category '%s' (lower, fp32, promote, passthrough)",
                 name, value);
        return -1;
    }
    char *at = strchr(name, '@');
    if (at) {
        *at = '\0';
        return add_site(trim(name), trim(at + 1), first, last, cat, ov, err, errlen);
    }
    /* py:MODULE and FILE.py:LINE alone: every product made there */
    char *colon = strchr(name, ':');
    if (colon && (strncmp(name, "py:", 3) == 0 || names_python_file(name, (size_t)(colon - name))))
        return add_site("*", name, first, last, cat, ov, err, errlen);
    if (amp_policy_is_pattern(name)) {
        if (!apply_pattern(name, first, last, cat, ov)) {
            snprintf(err, errlen, "'%s' matches no op or symbol%s", name,
                     first == last ? " on this device" : "");
            return -1;
        }
        return 0;
    }
    int hook = amp_hook_from_name(name), routine = routine_from_name(name),
        op = amp_op_from_name(name);
    if (hook < 0 && routine < 0 && op < 0) {
        snprintf(err, errlen, "unknown op or symbol '%s'", name);
        return -1;
    }
    for (int dev = first; dev <= last; dev++) {
        if (hook >= 0)
            ov->hook[dev][hook] = (uint8_t)cat;
        else if (routine >= 0)
            for (int h = 0; h < AMP_HOOK_COUNT; h++)
                if (strcmp(amp_hook_routines[h], name) == 0)
                    ov->routine[dev][h] = (uint8_t)cat;
        if (op >= 0 && hook < 0 && routine < 0)
            ov->op[dev][op] = (uint8_t)cat;
    }
    return 0;
}

int amp_policy_parse_each(const char *text, int comments, struct amp_policy_overrides *ov,
                          amp_policy_bad_entry_fn bad, void *ctx)
{
    char buf[512], err[384], msg[448];
    const char *p = text;
    int lineno = 1, n_bad = 0, dropped = 0;
    while (*p) {
        size_t len = strcspn(p, comments ? "\n" : ",\n");
        const char *problem = NULL;
        size_t lead = strspn(p, " \t");
        if (comments && len >= sizeof buf && lead < len && p[lead] == '#') {
            /* A long comment line: nothing to apply. */
        } else if (len >= sizeof buf) {
            snprintf(err, sizeof err, "entry too long");
            problem = err;
        } else {
            memcpy(buf, p, len);
            buf[len] = '\0';
            if (comments) {
                char *hash = strchr(buf, '#');
                if (hash)
                    *hash = '\0';
            }
            char *entry = trim(buf);
            if (!*entry && !comments) {
                snprintf(err, sizeof err, "empty entry");
                problem = err;
            } else if (*entry) {
                /* Each entry applies whole or not at all: apply_entry checks
                 * everything before it writes. */
                int rc = apply_entry(entry, ov, err, sizeof err);
                if (rc == AMP_POLICY_SITE_DROPPED)
                    dropped++;
                else if (rc < 0)
                    problem = err;
            }
        }
        if (problem) {
            n_bad++;
            if (comments)
                snprintf(msg, sizeof msg, "line %d: %s", lineno, problem);
            else
                snprintf(msg, sizeof msg, "%s", problem);
            if (bad)
                bad(ctx, msg);
        }
        p += len;
        if (*p) {
            if (*p == ',' && !p[1]) {
                n_bad++;
                if (bad)
                    bad(ctx, "empty entry");
            }
            lineno += *p == '\n';
            p++;
        }
    }
    if (dropped) {
        snprintf(msg, sizeof msg,
                 "more than %d call-site entries: %d not kept (entries that keep fp32 kept first)",
                 AMP_POLICY_MAX_SITES, dropped);
        n_bad += dropped;
        if (bad)
            bad(ctx, msg);
    }
    return n_bad;
}

struct first_error {
    char *err;
    size_t errlen;
    int seen;
};

static void keep_first(void *ctx, const char *message)
{
    struct first_error *f = ctx;
    if (!f->seen++ && f->errlen)
        snprintf(f->err, f->errlen, "%s", message);
}

int amp_policy_parse(const char *text, int comments, struct amp_policy_overrides *ov, char *err,
                     size_t errlen)
{
    struct first_error first = {err, errlen, 0};
    return amp_policy_parse_each(text, comments, ov, keep_first, &first) ? -1 : 0;
}

enum amp_category amp_policy_category(const struct amp_policy_overrides *ov, enum amp_device dev,
                                      enum amp_hook_id hook, int accumulates)
{
    if (ov) {
        if (ov->hook[dev][hook] != AMP_CAT_UNSET)
            return (enum amp_category)ov->hook[dev][hook];
        if (ov->routine[dev][hook] != AMP_CAT_UNSET)
            return (enum amp_category)ov->routine[dev][hook];
        uint8_t op = amp_hook_op[hook][accumulates != 0];
        if (ov->op[dev][op] != AMP_CAT_UNSET)
            return (enum amp_category)ov->op[dev][op];
        if (ov->wildcard[dev][hook][accumulates != 0] != AMP_CAT_UNSET)
            return (enum amp_category)ov->wildcard[dev][hook][accumulates != 0];
    }
    return amp_policy_hook_default(dev, hook, accumulates);
}
