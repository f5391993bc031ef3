/* The dynamic loader as ampshim asks it: see loader/loader.h. */
#include "loader/loader.h"
#include "loader/elf_hash.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

__thread uint8_t amp_loader_own_call __attribute__((tls_model("initial-exec")));

/* fork waits until none of the shim's threads walks the loader's object
 * list. Counters rather than a lock, so the child starts with nothing to
 * undo. */
static _Atomic int walkers, forking;

int amp_walk_objects(int (*callback)(struct dl_phdr_info *, size_t, void *), void *data)
{
    for (;;) {
        while (atomic_load_explicit(&forking, memory_order_acquire))
            sched_yield();
        atomic_fetch_add_explicit(&walkers, 1, memory_order_acq_rel);
        if (!atomic_load_explicit(&forking, memory_order_acquire))
            break;
        atomic_fetch_sub_explicit(&walkers, 1, memory_order_acq_rel);
    }
    int r = dl_iterate_phdr(callback, data);
    atomic_fetch_sub_explicit(&walkers, 1, memory_order_acq_rel);
    return r;
}

void amp_walk_atfork(enum amp_fork_phase phase)
{
    if (phase == AMP_FORK_PREPARE) {
        atomic_store_explicit(&forking, 1, memory_order_seq_cst);
        while (atomic_load_explicit(&walkers, memory_order_seq_cst))
            sched_yield();
    } else {
        if (phase == AMP_FORK_CHILD)
            atomic_store_explicit(&walkers, 0, memory_order_relaxed);
        atomic_store_explicit(&forking, 0, memory_order_release);
    }
}

int amp_address_loaded(const void *p)
{
    Dl_info info;
    return dladdr(p, &info) != 0;
}

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

int amp_in_self(const void *p)
{
    Dl_info info;
    return dladdr(p, &info) && info.dli_fbase == self_base();
}

int amp_in_other_copy(const void *p)
{
    Dl_info info;
    if (!dladdr(p, &info) || !info.dli_fname)
        return 0;
    amp_loader_own_call++;
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    void *version = h ? dlsym(h, "ampshim_version") : NULL;
    Dl_info vinfo;
    int shim = version && dladdr(version, &vinfo) && vinfo.dli_fbase == info.dli_fbase;
    if (h)
        dlclose(h);
    amp_loader_own_call--;
    return shim;
}

void *amp_own_symbol(void *handle, const char *name)
{
    struct link_map *object = NULL, *owner = NULL;
    Dl_info where;
    void *p = dlsym(handle, name);
    if (p && (dlinfo(handle, RTLD_DI_LINKMAP, &object) != 0 ||
              !dladdr1(p, &where, (void **)&owner, RTLD_DL_LINKMAP) || owner != object))
        return NULL;
    return p && !amp_in_self(p) && !amp_in_other_copy(p) ? p : NULL;
}

void *amp_own_definition(const char *path, const char *name)
{
    amp_loader_own_call++;
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    void *p = h ? amp_own_symbol(h, name) : NULL;
    if (h)
        dlclose(h);
    amp_loader_own_call--;
    return p;
}

uint32_t amp_gnu_hash(const char *name)
{
    return amp_elf_gnu_hash(name);
}

int amp_object_may_define_hashed(const struct dl_phdr_info *info, const char *name, uint32_t h)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    int unknown;
    return amp_elf_lookup(info->dlpi_addr, dyn, name, h, &unknown) != NULL || unknown;
}

int amp_object_may_define(const struct dl_phdr_info *info, const char *name)
{
    return amp_object_may_define_hashed(info, name, amp_gnu_hash(name));
}

void *amp_sibling_symbol(const void *anchor, const char *name)
{
    Dl_info info;
    if (!dladdr(anchor, &info) || !info.dli_fname)
        return NULL;
    amp_loader_own_call++;
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    void *p = h ? dlsym(h, name) : NULL;
    if (h)
        dlclose(h);
    amp_loader_own_call--;
    if (!h)
        return NULL;
    Dl_info where;
    if (!p || !dladdr(p, &where) || where.dli_fbase != info.dli_fbase)
        return NULL;
    return p;
}
