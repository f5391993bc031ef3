/* Functions an object keeps only in its static symbol table (.symtab), read
 * from its file: what amp_object_local_functions (loader/loader.h) finds.
 * The file is mapped read-only once and every bound is checked before it is
 * read: a truncated or odd file answers "none", never a fault. */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

/* Whether [off, off + len) lies inside a file of size bytes. */
static int inside(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

static int find_in(const unsigned char *file, uint64_t size, uintptr_t base,
                   const char *const *names, int n, void **out)
{
    const ElfW(Ehdr) *eh = (const void *)file;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
        !inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)), size))
        return 0;
    const ElfW(Shdr) *sh = (const void *)(file + eh->e_shoff);
    const ElfW(Shdr) *symtab = NULL;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            symtab = &sh[i];
    if (!symtab || symtab->sh_entsize != sizeof(ElfW(Sym)) || symtab->sh_link >= eh->e_shnum ||
        !inside(symtab->sh_offset, symtab->sh_size, size))
        return 0;
    const ElfW(Shdr) *strtab = &sh[symtab->sh_link];
    if (strtab->sh_type != SHT_STRTAB || !inside(strtab->sh_offset, strtab->sh_size, size) ||
        strtab->sh_size == 0)
        return 0;
    const char *str = (const char *)file + strtab->sh_offset;
    uint64_t str_size = strtab->sh_size;
    const ElfW(Sym) *sym = (const void *)(file + symtab->sh_offset);
    uint64_t count = symtab->sh_size / sizeof *sym;
    int found = 0;
    for (uint64_t s = 0; s < count; s++) {
        if (ELF64_ST_TYPE(sym[s].st_info) != STT_FUNC || sym[s].st_shndx == SHN_UNDEF ||
            sym[s].st_shndx >= eh->e_shnum || !(sh[sym[s].st_shndx].sh_flags & SHF_EXECINSTR) ||
            sym[s].st_value == 0 || sym[s].st_name >= str_size)
            continue;
        const char *name = str + sym[s].st_name;
        /* The names sought all begin alike; most symbols differ at once. */
        if (name[0] != names[0][0])
            continue;
        uint64_t room = str_size - sym[s].st_name;
        for (int i = 0; i < n; i++) {
            size_t len = strlen(names[i]);
            if (len >= room || memcmp(name, names[i], len + 1) != 0)
                continue;
            void *at = (void *)(base + sym[s].st_value);
            /* Two functions of one name (two copies of a library inside
             * one object): neither is known to be the one called. */
            if (out[i] && out[i] != at) {
                out[i] = (void *)-1;
            } else if (!out[i]) {
                out[i] = at;
                found++;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (out[i] == (void *)-1) {
            out[i] = NULL;
            found--;
        }
    return found;
}

int amp_object_local_functions(const char *path, uintptr_t base, const char *const *names, int n,
                               void **out)
{
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    if (!path || !*path || n <= 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    int found = find_in(map, (uint64_t)st.st_size, base, names, n, out);
    munmap(map, (size_t)st.st_size);
    return found;
}
