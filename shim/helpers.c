/* The one resolver of the functions wings call in libraries on their own
 * account: see shim/helpers.h. */
#include "shim/helpers.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "loader/loader.h"
#include "runtime/log.h"
#include "shim/resolve.h"

/* The i-th helper's place in a table: its i-th function pointer. */
static void **slot(void *table, size_t i)
{
    return (void **)((char *)table + i * sizeof(void (*)(void)));
}

int amp_helpers_resolve(const struct amp_helper_list *list, void *table, const void *anchor)
{
    void *opened = NULL;
    int complete = 1, tried = 0;
    for (size_t i = 0; i < list->count; i++) {
        const char *name = list->names[i];
        void *p = anchor ? amp_sibling_symbol(anchor, name) : amp_resolve_name(name);
        if (!p && !anchor && !tried) {
            tried = 1;
            for (size_t k = 0; !opened && list->sonames && list->sonames[k]; k++)
                opened = dlopen(list->sonames[k], RTLD_NOW | RTLD_LOCAL);
        }
        if (!p && opened)
            p = dlsym(opened, name);
        *slot(table, i) = p;
        complete &= p != NULL;
    }
    return complete;
}

/* Says once per list that a helper is missing. */
static void say_missing(const struct amp_helper_list *list, const char *name)
{
    static _Atomic(const struct amp_helper_list *) said[8];
    for (size_t k = 0; k < sizeof said / sizeof *said; k++) {
        const struct amp_helper_list *expected = NULL;
        if (atomic_load(&said[k]) == list)
            return;
        if (atomic_compare_exchange_strong(&said[k], &expected, list))
            break;
        if (expected == list)
            return;
    }
    amp_log(AMP_LOG_INFO, "the loaded %s has no %s; the calls that need it run as made",
            list->library, name);
}

/* The first helper at the `needed` offsets (NULL: any) missing from table,
 * or NULL. */
static const char *first_missing(const struct amp_helper_list *list, const void *table,
                                 const size_t *needed, size_t n_needed)
{
    for (size_t j = 0; j < list->count; j++) {
        int wanted = !needed;
        for (size_t i = 0; needed && i < n_needed; i++)
            wanted |= needed[i] == j * sizeof(void (*)(void)); /* an offsetof in the table */
        if (wanted && !*slot((void *)table, j))
            return list->names[j];
    }
    return NULL;
}

int amp_helpers_complete(const struct amp_helper_list *list, const void *table,
                         const size_t *needed, size_t n_needed)
{
    const char *missing = first_missing(list, table, needed, n_needed);
    if (missing)
        say_missing(list, missing);
    return !missing;
}

/* The tables of every list, one per (list, real function) seen, each of
 * the object that defines that function; real functions of one object share
 * its table. Open addressing on the real function's address: a lookup is a
 * few atomic loads, no loader call. A slot is claimed by its table first,
 * then filled, then published by its anchor. */
enum { ANCHORS = 1024 };
static struct {
    _Atomic(const void *) anchor;
    const struct amp_helper_list *list;
    const void *base; /* the object's load address */
    int complete;
    _Atomic(void *) table;
} anchors[ANCHORS];

static size_t anchor_hash(const struct amp_helper_list *list, const void *real)
{
    uint64_t h =
        ((uint64_t)(uintptr_t)real ^ ((uint64_t)(uintptr_t)list << 7)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 54) & (ANCHORS - 1);
}

/* The slot of (list, real), or -1. */
static int anchor_find(const struct amp_helper_list *list, const void *real)
{
    size_t i = anchor_hash(list, real);
    for (int probe = 0; probe < ANCHORS; probe++, i = (i + 1) & (ANCHORS - 1)) {
        if (!atomic_load_explicit(&anchors[i].table, memory_order_acquire))
            return -1; /* never claimed: the end of the chain */
        if (atomic_load_explicit(&anchors[i].anchor, memory_order_acquire) == real &&
            anchors[i].list == list)
            return (int)i;
    }
    return -1;
}

/* A published table of list for the object at base, or NULL. */
static void *object_table(const struct amp_helper_list *list, const void *base, int *complete)
{
    for (int i = 0; i < ANCHORS; i++)
        if (atomic_load_explicit(&anchors[i].anchor, memory_order_acquire) &&
            anchors[i].list == list && anchors[i].base == base) {
            *complete = anchors[i].complete;
            return atomic_load_explicit(&anchors[i].table, memory_order_relaxed);
        }
    return NULL;
}

const void *amp_helpers_of(const struct amp_helper_list *list, size_t size, const void *real,
                           int *complete)
{
    int i = anchor_find(list, real);
    if (i >= 0) {
        *complete = anchors[i].complete;
        return atomic_load_explicit(&anchors[i].table, memory_order_relaxed);
    }
    Dl_info info;
    if (!real || !dladdr(real, &info) || !info.dli_fbase)
        return NULL;
    int ok = 0;
    void *t = object_table(list, info.dli_fbase, &ok), *made = NULL;
    if (!t) {
        if (!(made = t = calloc(1, size)))
            return NULL;
        ok = amp_helpers_resolve(list, t, real);
    }
    size_t k = anchor_hash(list, real);
    for (int probe = 0; probe < ANCHORS; probe++, k = (k + 1) & (ANCHORS - 1)) {
        void *expected = NULL;
        if (atomic_compare_exchange_strong(&anchors[k].table, &expected, t)) {
            anchors[k].list = list;
            anchors[k].base = info.dli_fbase;
            anchors[k].complete = ok;
            atomic_store_explicit(&anchors[k].anchor, real, memory_order_release);
            *complete = ok;
            return t;
        }
        if (atomic_load_explicit(&anchors[k].anchor, memory_order_acquire) == real &&
            anchors[k].list == list) {
            free(made); /* another thread's first call got there first */
            *complete = anchors[k].complete;
            return atomic_load_explicit(&anchors[k].table, memory_order_relaxed);
        }
    }
    /* Every slot taken: the calls that need these helpers run as made. */
    free(made);
    return NULL;
}

const char *amp_helpers_missing(const struct amp_helper_list *list, const void *table)
{
    return first_missing(list, table, NULL, 0);
}

const void *amp_helpers_of_part(const struct amp_helper_list *list, size_t size, const void *real,
                                const size_t *needed, size_t n_needed)
{
    int complete = 0;
    const void *t = amp_helpers_of(list, size, real, &complete);
    return t && (complete || amp_helpers_complete(list, t, needed, n_needed)) ? t : NULL;
}
