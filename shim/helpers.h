/* The one resolver of the functions a wing calls in a library on its own
 * account (not hooked): the CUDA libraries' helpers (shim/cuda/
 * cuda_helpers.h), oneDNN's for the oneDNN wing (shim/onednn/v2.h) and for
 * the native executor (shim/blas/native_onednn_functions.h). A wing names
 * its functions in one list and gets them in a table of function pointers,
 * each taken from one object: the object that defines an anchor (a hook's
 * real function, or a function of a library the wing opened), else the
 * global scope, else a soname the list names. */
#ifndef AMPSHIM_HELPERS_H
#define AMPSHIM_HELPERS_H

#include <stddef.h>

/* A table's member for a row X(member, symbol, ret, params...). */
#define AMP_HELPER_MEMBER(member, symbol, ret, ...) ret (*member)(__VA_ARGS__);

/* A list's names, in the order of its table's function pointers
 * (AMP_HELPER_LIST makes one). */
struct amp_helper_list {
    const char *library; /* its name in messages ("cuBLAS") */
    /* opened in turn, the first found kept, when nothing loaded defines a
     * helper (NULL-ended; NULL: never) */
    const char *const *sonames;
    size_t count;
    const char *const *names;
};
#define AMP_HELPER_NAME(member, symbol, ...) #symbol,
/* The name of a row X(f) of a list typed by the library's own header (a
 * member `__typeof__(f) *f`: oneDNN's lists). */
#define AMP_HELPER_FN_NAME(f) #f,

/* Defines the list `var` of X_LIST's functions (NAME makes each row's name:
 * AMP_HELPER_NAME or AMP_HELPER_FN_NAME) for a table whose first
 * table_bytes are their function pointers in the list's order, for the
 * library named library_text in messages, opening the first of `sonames`
 * that opens when nothing loaded defines a helper (NULL: never): the one
 * way a wing declares the functions of its library it calls. A `storage`
 * of static keeps the list the file's own. */
#define AMP_HELPER_LIST_OF(storage, var, library_text, sonames, table_bytes, X_LIST, NAME)         \
    static const char *const var##_names[] = {X_LIST(NAME)};                                       \
    _Static_assert((table_bytes) ==                                                                \
                       sizeof var##_names / sizeof *var##_names * sizeof(void (*)(void)),          \
                   "a helper table is its list's function pointers, in order");                    \
    storage const struct amp_helper_list var = {                                                   \
        library_text, sonames, sizeof var##_names / sizeof *var##_names, var##_names}
/* The same for a table of type `table` whose members AMP_HELPER_MEMBER made
 * from X_LIST. */
#define AMP_HELPER_LIST(storage, var, library_text, sonames, table, X_LIST)                        \
    AMP_HELPER_LIST_OF(storage, var, library_text, sonames, sizeof(table), X_LIST, AMP_HELPER_NAME)

/* The one resolver: fills table with every helper of list, each from the
 * object that defines anchor (a hook's real function; NULL: whichever
 * loaded object defines it first, then the first of list->sonames that
 * opens). A missing
 * helper stays NULL (amp_helpers_complete says so). Returns whether none
 * is missing. */
int amp_helpers_resolve(const struct amp_helper_list *list, void *table, const void *anchor);

/* Whether the helpers at the `needed` offsets (NULL: every helper of the
 * list) are in table; the first missing one is said once per list. */
int amp_helpers_complete(const struct amp_helper_list *list, const void *table,
                         const size_t *needed, size_t n_needed);

/* The helpers of `list` from the object that defines `real` (a hook's real
 * function), in a table of `size` bytes resolved at the first call for that
 * object and kept for the process, so two majors of a library each get
 * their own; *complete says whether none is missing (quietly:
 * amp_helpers_complete says what is). NULL when it cannot be had (then the
 * calls that need it run as made). */
const void *amp_helpers_of(const struct amp_helper_list *list, size_t size, const void *real,
                           int *complete);

/* amp_helpers_of's table, or NULL where it cannot be had or lacks one of
 * the helpers at the `needed` offsets (NULL: any helper), the first of
 * them said once: what a wing's calls that need them ask. */
const void *amp_helpers_of_part(const struct amp_helper_list *list, size_t size, const void *real,
                                const size_t *needed, size_t n_needed);

/* The first helper of list missing from table, or NULL when none is. */
const char *amp_helpers_missing(const struct amp_helper_list *list, const void *table);

#endif
