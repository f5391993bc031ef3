/* The dynamic loader as ampshim asks it: the walk over loaded objects (made
 * so that fork waits for it), whether an address is loaded, whether it is
 * ampshim's own code (this copy or another), and a name's definition inside
 * one object. The floor every other part stands on: it calls nothing of
 * ampshim's. Resolution of the hooks' real functions (shim/resolve.c) and
 * the callers' names (runtime/callers.c) are built on it. */
#ifndef AMPSHIM_LOADER_H
#define AMPSHIM_LOADER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/atfork.h"

/* dl_iterate_phdr, made so that fork waits for it: glibc's fork does not
 * take the object list's lock, so a child forked while one of the shim's
 * threads walked it would find the lock held for ever. */
struct dl_phdr_info;
int amp_walk_objects(int (*callback)(struct dl_phdr_info *, size_t, void *), void *data);
/* fork's share of that: PREPARE waits for walks to end and holds new ones. */
void amp_walk_atfork(enum amp_fork_phase phase);

/* Non-zero while this thread opens and closes an object itself with
 * RTLD_NOLOAD (nothing is unloaded then): the dlclose hook, reached
 * directly or through a sanitizer's interceptor, has nothing to look at. */
extern __thread uint8_t amp_loader_own_call __attribute__((tls_model("initial-exec")));

/* Whether p lies in a loaded object (asks the loader: never under a lock of
 * ours). */
int amp_address_loaded(const void *p);

/* Whether p lies in this copy of libampshim.so. */
int amp_in_self(const void *p);

/* Whether p lies in a copy of this library (another build or path of
 * libampshim.so loaded beside this one): such a copy's hooks are never the
 * real function, or two copies would forward to each other for ever. */
int amp_in_other_copy(const void *p);

/* The definition of name inside the object behind handle itself (dlsym on
 * a handle searches its dependencies too), never ampshim's; NULL if none. */
void *amp_own_symbol(void *handle, const char *name);

/* The symbol name as defined by the same object as anchor (an address in
 * it), or NULL. */
void *amp_sibling_symbol(const void *anchor, const char *name);

/* The same for the loaded object at path (opened with RTLD_NOLOAD). */
void *amp_own_definition(const char *path, const char *name);

#endif
