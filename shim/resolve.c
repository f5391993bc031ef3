/* Real-symbol resolution. dlsym(RTLD_NEXT) finds libraries in the global
 * scope; numpy and torch load libblas.so.3 with dlopen(RTLD_LOCAL), where it
 * finds nothing, so we then walk every loaded object and ask each one. A
 * result inside ampshim itself is never accepted. */
#include "shim/resolve.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/log.h"

/* 0: the library's own width, probed; else 32 or 64, known from the name. */
static const uint8_t hook_ints[AMP_HOOK_COUNT] = {
#define AMP_INTS_WIDTH_LP 0
#define AMP_INTS_WIDTH_I32 32
#define AMP_INTS_WIDTH_I64 64
#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta) AMP_INTS_WIDTH_##ints,
    AMPSHIM_HOOK_LIST(AMP_X_HOOK)
#undef AMP_X_HOOK
};

static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;

static void *self_base(void)
{
    static void *base;
    if (!base) {
        Dl_info info;
        if (dladdr((void *)self_base, &info))
            base = info.dli_fbase;
    }
    return base;
}

static int in_self(void *p)
{
    Dl_info info;
    return dladdr(p, &info) && info.dli_fbase == self_base();
}

enum { MAX_OBJECTS = 1024 };

struct object_list {
    char *names[MAX_OBJECTS];
    int count;
};

static int collect_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct object_list *list = data;
    /* The main program has an empty name; the vDSO defines no BLAS. */
    if (!info->dlpi_name || !info->dlpi_name[0] || strstr(info->dlpi_name, "linux-vdso"))
        return 0;
    if (list->count < MAX_OBJECTS)
        list->names[list->count++] = strdup(info->dlpi_name);
    return 0;
}

/* Asks each loaded object, in load order, for the symbol. Names are collected
 * first: calling dlopen inside dl_iterate_phdr's callback could deadlock
 * against another thread's dlopen. */
static void *search_loaded_objects(const char *name)
{
    struct object_list *list = calloc(1, sizeof *list);
    if (!list)
        return NULL;
    dl_iterate_phdr(collect_object, list);
    void *found = NULL;
    for (int i = 0; i < list->count; i++) {
        if (!found && list->names[i]) {
            void *h = dlopen(list->names[i], RTLD_LAZY | RTLD_NOLOAD);
            if (h) {
                void *p = dlsym(h, name);
                if (p && !in_self(p))
                    found = p;
                dlclose(h);
            }
        }
        free(list->names[i]);
    }
    free(list);
    return found;
}

static void *find_real(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (p && !in_self(p))
        return p;
    return search_loaded_objects(name);
}

/* The symbol `name` as defined by the same object as `anchor`, or NULL. */
static void *sibling_symbol(void *anchor, const char *name)
{
    Dl_info info;
    if (!dladdr(anchor, &info) || !info.dli_fname)
        return NULL;
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return NULL;
    void *p = dlsym(h, name);
    dlclose(h);
    Dl_info where;
    if (!p || !dladdr(p, &where) || where.dli_fbase != info.dli_fbase)
        return NULL;
    return p;
}

#define PROBE_N ((int64_t)0xffffffff00000003ull)

int amp_probe_ilp64_fortran(void *isamax_fortran)
{
    int64_t n = PROBE_N, inc = 1;
    float x[3] = {1.0f, 2.0f, 3.0f};
    int64_t (*isamax)(const int64_t *, const float *, const int64_t *) =
        (int64_t(*)(const int64_t *, const float *, const int64_t *))isamax_fortran;
    int32_t answer = (int32_t)isamax(&n, x, &inc); /* LP64 fills only eax */
    return answer == 3 ? 0 : answer == 0 ? 1 : -1;
}

int amp_probe_ilp64_cblas(void *cblas_isamax)
{
    float x[3] = {1.0f, 2.0f, 3.0f};
    int64_t (*isamax)(int64_t, const float *, int64_t) =
        (int64_t(*)(int64_t, const float *, int64_t))cblas_isamax;
    /* cblas_isamax is 0-based: an LP64 library answers 2. */
    int32_t answer = (int32_t)isamax(PROBE_N, x, 1);
    return answer == 2 ? 0 : answer == 0 ? 1 : -1;
}

/* Integer width of the library that defines `real` (hook's real function),
 * probed through the isamax of the hook's own mangling (scipy_isamax_ for
 * scipy_sgemm_), else the plain ones; cached by load base. */
static int library_is_ilp64(enum amp_hook_id hook, void *real, const char **libname)
{
    static struct {
        void *base;
        int ilp64;
    } cache[32];
    Dl_info info;
    if (!dladdr(real, &info))
        return 0;
    *libname = info.dli_fname;
    for (size_t i = 0; i < sizeof cache / sizeof *cache; i++)
        if (cache[i].base == info.dli_fbase)
            return cache[i].ilp64;
    int ilp64 = -1;
    void *probe = amp_hook_width_probe[hook] ? sibling_symbol(real, amp_hook_width_probe[hook]) : NULL;
    if (probe)
        ilp64 = amp_hook_form_is_cblas[hook] ? amp_probe_ilp64_cblas(probe) : amp_probe_ilp64_fortran(probe);
    else if ((probe = sibling_symbol(real, "isamax_")))
        ilp64 = amp_probe_ilp64_fortran(probe);
    else if ((probe = sibling_symbol(real, "cblas_isamax")))
        ilp64 = amp_probe_ilp64_cblas(probe);
    if (ilp64 < 0) {
        amp_log(AMP_LOG_INFO, "%s: cannot tell its integer width (no isamax); assuming LP64",
                info.dli_fname);
        ilp64 = 0;
    }
    for (size_t i = 0; i < sizeof cache / sizeof *cache; i++)
        if (!cache[i].base) {
            cache[i].base = info.dli_fbase;
            cache[i].ilp64 = ilp64;
            break;
        }
    return ilp64;
}

void *amp_resolve_name(const char *name)
{
    pthread_mutex_lock(&resolve_lock);
    void *p = find_real(name);
    pthread_mutex_unlock(&resolve_lock);
    return p;
}

/* Optional functions found missing once (the library that defines their
 * siblings lacks them): not looked for again. */
static _Atomic uint8_t absent[AMP_HOOK_COUNT];

void *amp_resolve_needed(const char *name, const char *library, int *complete)
{
    void *p = amp_resolve_name(name);
    if (!p && *complete) {
        amp_log(AMP_LOG_INFO, "the loaded %s has no %s; the calls that need it run as made",
                library, name);
        *complete = 0;
    }
    return p;
}

static void *resolve(enum amp_hook_id hook, int required)
{
    pthread_mutex_lock(&resolve_lock);
    void *real = atomic_load_explicit(&amp_slot_of[hook]->real, memory_order_acquire);
    if (!real) {
        const char *name = amp_hook_names[hook];
        real = find_real(name);
        if (!real && !required) {
            if (!atomic_exchange_explicit(&absent[hook], 1, memory_order_relaxed))
                amp_log(AMP_LOG_INFO,
                        "%s: no loaded library defines it; calls that would go through it run "
                        "as made",
                        name);
            pthread_mutex_unlock(&resolve_lock);
            return NULL;
        }
        if (!real) {
            /* Without ampshim the loader would have stopped here with
             * "undefined symbol"; do the same rather than run garbage. */
            amp_log(AMP_LOG_ERROR,
                    "%s: no loaded library defines it (symbol lookup error); exiting with "
                    "status 127",
                    name);
            _exit(127);
        }
        const char *libname = "?";
        int ilp64 = hook_ints[hook] ? hook_ints[hook] == 64 : library_is_ilp64(hook, real, &libname);
        if (hook_ints[hook]) {
            Dl_info info;
            if (dladdr(real, &info) && info.dli_fname)
                libname = info.dli_fname;
        }
        amp_slot_of[hook]->ilp64 = (uint8_t)ilp64;
        amp_log(AMP_LOG_INFO, "%s -> %s (%s integers)", name, libname, ilp64 ? "64-bit" : "32-bit");
        atomic_store_explicit(&amp_slot_of[hook]->real, real, memory_order_release);
    }
    pthread_mutex_unlock(&resolve_lock);
    return real;
}

void *amp_resolve(enum amp_hook_id hook)
{
    return resolve(hook, 1);
}

void *amp_real_optional(enum amp_hook_id hook)
{
    void *p = atomic_load_explicit(&amp_slot_of[hook]->real, memory_order_acquire);
    if (p || atomic_load_explicit(&absent[hook], memory_order_relaxed))
        return p;
    return resolve(hook, 0);
}
