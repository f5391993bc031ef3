/* One ELF symbol lookup through an object's GNU hash table, reading only
 * its tables (no loader call: safe inside dl_iterate_phdr's callback and in
 * the rtld-audit module, which must not call back into the loader). Used
 * by loader/loader.c (amp_object_may_define) and audit/rtld_audit.c. */
#ifndef AMPSHIM_LOADER_ELF_HASH_H
#define AMPSHIM_LOADER_ELF_HASH_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t amp_elf_gnu_hash(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    return h;
}

/* A dynamic-section address: most are relocated in place by the dynamic
 * linker, some (the vDSO's) are not. */
static inline uintptr_t amp_elf_dyn_address(uintptr_t base, ElfW(Addr) value)
{
    return value < base ? base + value : value;
}

/* The symbol that defines name (hash: amp_elf_gnu_hash(name)) in the object
 * loaded at base whose dynamic section is dyn; NULL if it defines none.
 * *unknown is set when the object has no GNU hash table to ask. */
static inline const ElfW(Sym) * amp_elf_lookup(uintptr_t base, const ElfW(Dyn) * dyn,
                                               const char *name, uint32_t h, int *unknown)
{
    const uint32_t *gnu = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)amp_elf_dyn_address(base, d->d_un.d_ptr);
        else if (d->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)amp_elf_dyn_address(base, d->d_un.d_ptr);
        else if (d->d_tag == DT_STRTAB)
            strtab = (const char *)amp_elf_dyn_address(base, d->d_un.d_ptr);
    }
    *unknown = !gnu || !symtab || !strtab || !gnu[0] || !gnu[2];
    if (*unknown)
        return NULL;
    enum { BITS = sizeof(ElfW(Addr)) * 8 };
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2], shift = gnu[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnu + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size), *chain = buckets + nbuckets;
    ElfW(Addr) word = bloom[(h / BITS) % bloom_size];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (h % BITS)) | ((ElfW(Addr))1 << ((h >> shift) % BITS));
    if ((word & mask) != mask)
        return NULL;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t h2 = chain[i - symoffset];
        const ElfW(Sym) *s = &symtab[i];
        if ((h | 1) == (h2 | 1) && s->st_shndx != SHN_UNDEF &&
            strcmp(name, strtab + s->st_name) == 0)
            return s;
        if (h2 & 1)
            return NULL;
    }
}

#endif
