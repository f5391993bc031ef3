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
#include <link.h>

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

/* Whether the object dl_iterate_phdr describes may define name: 0 when its
 * GNU hash table says it certainly does not (the bloom filter, then the
 * bucket's chain: no defined symbol of that name), 1 when it does or
 * cannot be told (no DT_GNU_HASH). Only reads the object's tables, so it
 * may be called inside a dl_iterate_phdr callback, where the object cannot
 * be unloaded; it lets a walk skip the dlopen, dlsym and dlclose of
 * amp_own_definition for the hundreds of objects a torch process loads
 * that define none of the hooked names (its first calls took 30 ms
 * more than without the shim, on a CPU without bf16 units). */
int amp_object_may_define(const struct dl_phdr_info *info, const char *name);

/* The GNU hash of a symbol name, for amp_object_may_define_hashed (a walk
 * that asks many objects about one name hashes it once). */
uint32_t amp_gnu_hash(const char *name);
int amp_object_may_define_hashed(const struct dl_phdr_info *info, const char *name, uint32_t hash);

/* Functions an object defines only in its static symbol table (.symtab,
 * read from the file at path; local symbols a linker kept but did not
 * export, as pip's libtorch_cpu.so keeps oneDNN's C API): for each of the
 * n names, its address in the object loaded at base (dl_iterate_phdr's
 * dlpi_addr) in out[i], or NULL. Returns how many were found; 0 for an
 * object without .symtab (stripped) or one that cannot be read. Reads the
 * file once, by mmap, and keeps nothing. */
int amp_object_local_functions(const char *path, uintptr_t base, const char *const *names, int n,
                               void **out);

#endif
