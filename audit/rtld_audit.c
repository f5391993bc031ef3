/* libampshim-audit.so: an rtld-audit module (LD_AUDIT) that extends the
 * shim to programs that open a CUDA library with dlopen and take its
 * functions with dlsym(handle, ...), as TensorFlow and JAX do. Plain
 * interposition cannot see those lookups; the dynamic linker's audit
 * interface can: la_symbind64 is called for every binding to an object we
 * flag, dlsym ones included (LA_SYMB_DLSYM). For a dlsym binding to a CUDA
 * library whose symbol libampshim.so also exports (a hook), we return the
 * hook instead; the hook then finds the real function the way it always
 * does. Lookups made by libampshim.so itself (its resolver) are left alone.
 *
 * Audit modules live in their own link-map namespace with their own libc,
 * so this one calls nothing of the main namespace: it finds the hook by
 * reading libampshim.so's dynamic symbol table (GNU hash) in memory.
 *
 *   LD_AUDIT=libampshim-audit.so LD_PRELOAD=libampshim.so program
 *
 * Without libampshim.so loaded, it changes nothing. */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "loader/elf_hash.h"
#include "runtime/export.h"
#include "ampshim_generated.h"


static struct link_map *shim;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The CUDA libraries ampshim has hooks for: their file-name prefixes, from
 * policy/data/families.txt. */
static int is_cuda_library(const char *base)
{
    static const struct {
        int cuda;
        const char *prefix;
    } families[] = {
#define AMP_DEVICE_IS_CUDA_CPU 0
#define AMP_DEVICE_IS_CUDA_CUDA 1
#define AMP_X_FAMILY(family, device, prefix, display) {AMP_DEVICE_IS_CUDA_##device, prefix},
        AMPSHIM_FAMILY_LIST(AMP_X_FAMILY)
#undef AMP_X_FAMILY
    };
    for (size_t i = 0; i < sizeof families / sizeof *families; i++)
        if (families[i].cuda && starts_with(base, families[i].prefix))
            return 1;
    return 0;
}

AMP_EXPORT unsigned int la_version(unsigned int version)
{
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* The CUDA libraries open, by file name: a second copy of one (the same
 * file name in another folder, opened by its path, as a program's copy
 * beside a wheel's) is left alone. A function taken from it with dlsym is
 * not given the hook: the hook could not tell which copy its caller meant
 * (the caller links neither), and a call with the second copy's handle
 * would reach the first. Its calls run as made, in their own copy; the
 * shim's resolver says which copies it saw. */
enum { OPEN_CUDA = 256 };
static struct link_map *open_cuda[OPEN_CUDA];

static int second_copy(const struct link_map *map, const char *base)
{
    int free_slot = -1;
    for (int i = 0; i < OPEN_CUDA; i++) {
        if (!open_cuda[i]) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        if (open_cuda[i] != map && strcmp(base_name(open_cuda[i]->l_name), base) == 0)
            return 1;
    }
    if (free_slot >= 0)
        open_cuda[free_slot] = (struct link_map *)map;
    return 0;
}

AMP_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    const char *base = base_name(map->l_name ? map->l_name : "");
    *cookie = (uintptr_t)map;
    if (lmid != LM_ID_BASE)
        return 0;
    if (starts_with(base, "libampshim.so"))
        shim = map;
    if (is_cuda_library(base) && !second_copy(map, base))
        return LA_FLG_BINDTO | LA_FLG_BINDFROM;
    return LA_FLG_BINDFROM;
}

/* Whether a cookie (its link map) is one of the CUDA libraries hooked. */
static int hooked_cuda(uintptr_t cookie)
{
    for (int i = 0; i < OPEN_CUDA; i++)
        if (open_cuda[i] && (uintptr_t)open_cuda[i] == cookie)
            return 1;
    return 0;
}

AMP_EXPORT unsigned int la_objclose(uintptr_t *cookie)
{
    for (int i = 0; i < OPEN_CUDA; i++)
        if (open_cuda[i] && (uintptr_t)open_cuda[i] == *cookie)
            open_cuda[i] = NULL;
    return 0;
}

/* The address of `name` defined in m, through its GNU hash table; 0 if m
 * does not define it (loader/elf_hash.h). */
static uintptr_t lookup(const struct link_map *m, const char *name)
{
    int unknown;
    const ElfW(Sym) *s = amp_elf_lookup(m->l_addr, m->l_ld, name, amp_elf_gnu_hash(name), &unknown);
    return s && s->st_value ? m->l_addr + s->st_value : 0;
}

AMP_EXPORT uintptr_t la_symbind64(ElfW(Sym) * sym, unsigned int ndx, uintptr_t *refcook,
                                  uintptr_t *defcook, unsigned int *flags, const char *symname)
{
    (void)ndx;
    /* Lookups by a CUDA library itself (cuDNN taking cublasLtMatmul) are the
     * library's business, as its direct calls are: left alone. */
    if (!shim || !(*flags & LA_SYMB_DLSYM) || *refcook == (uintptr_t)shim ||
        !hooked_cuda(*defcook) ||
        is_cuda_library(base_name(((struct link_map *)*refcook)->l_name ?: "")))
        return sym->st_value;
    uintptr_t hook = lookup(shim, symname);
    return hook ? hook : sym->st_value;
}
