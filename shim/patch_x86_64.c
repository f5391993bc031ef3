/* Entry patches on x86-64 (shim/patch.h says how they are made safe). */
#include "shim/patch.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)

enum { JUMP_LEN = 5, ABS_JUMP_LEN = 14, MAX_COPIED = 16, SLOT = 64 };

/* The length of the prologue instruction at p if it is one of the known
 * position-independent forms, else 0. */
static int known_length(const unsigned char *p)
{
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        return 4; /* endbr64 */
    int rex = (p[0] & 0xf0) == 0x40;
    const unsigned char *q = p + rex;
    if (q[0] >= 0x50 && q[0] <= 0x57 && (!rex || p[0] == 0x41))
        return 1 + rex; /* push r64 */
    if ((q[0] == 0x89 || q[0] == 0x8b || q[0] == 0x31 || q[0] == 0x33) && (q[1] & 0xc0) == 0xc0)
        return 2 + rex; /* mov, xor register to register */
    if (q[0] >= 0xb8 && q[0] <= 0xbf && (!rex || p[0] == 0x41))
        return 5 + rex; /* mov r32, imm32 */
    if (p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xec)
        return 4; /* sub rsp, imm8 */
    if (p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xec)
        return 7;       /* sub rsp, imm32 */
    if (p[0] == 0x66) { /* pxor xmm, xmm */
        int r = (p[1] & 0xf0) == 0x40;
        if (p[1 + r] == 0x0f && p[2 + r] == 0xef && (p[3 + r] & 0xc0) == 0xc0)
            return 4 + r;
    }
    return 0;
}

/* Writes an absolute jump to target at p (jmp *0(%rip); .quad target). */
static void abs_jump(unsigned char *p, const void *target)
{
    static const unsigned char op[6] = {0xff, 0x25, 0, 0, 0, 0};
    uintptr_t t = (uintptr_t)target;
    memcpy(p, op, sizeof op);
    memcpy(p + sizeof op, &t, sizeof t);
}

/* Pages of pads and trampolines, each near the objects it serves. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
struct near_page {
    unsigned char *page;
    size_t used;
};
static struct near_page pages[16];

static int near(const void *a, const void *b)
{
    intptr_t d = (intptr_t)a - (intptr_t)b;
    return d > -((intptr_t)1 << 31) + 4096 && d < ((intptr_t)1 << 31) - 4096;
}

/* A writable page within 2 GiB of fn with room for one slot pair, or NULL.
 * Pages already made are reopened for writing: no other thread runs their
 * free slots. */
static unsigned char *near_slots(const void *fn, size_t page_size)
{
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (pages[i].page && near(pages[i].page, fn) && pages[i].used + 2 * SLOT <= page_size &&
            mprotect(pages[i].page, page_size, PROT_READ | PROT_WRITE) == 0)
            return pages[i].page + pages[i].used;
    struct near_page *free_page = NULL;
    for (size_t i = 0; i < sizeof pages / sizeof pages[0] && !free_page; i++)
        if (!pages[i].page)
            free_page = &pages[i];
    if (!free_page)
        return NULL;
    uintptr_t mb = (uintptr_t)1 << 20, at = (uintptr_t)fn & ~(mb - 1);
    for (uintptr_t step = 1; step < 1900; step++)
        for (int side = 0; side < 2; side++) {
            uintptr_t hint = side ? at + step * mb : at - step * mb;
            if (hint < mb || !near((void *)hint, fn))
                continue;
            void *p = mmap((void *)hint, page_size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED)
                continue;
            if (p != (void *)hint) { /* a kernel without MAP_FIXED_NOREPLACE */
                munmap(p, page_size);
                continue;
            }
            free_page->page = p;
            free_page->used = 0;
            return p;
        }
    return NULL;
}

static void slots_used(unsigned char *slot, size_t page_size)
{
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (pages[i].page && slot >= pages[i].page && slot < pages[i].page + page_size) {
            pages[i].used = (size_t)(slot - pages[i].page) + 2 * SLOT;
            mprotect(pages[i].page, page_size, PROT_READ | PROT_EXEC);
        }
}

static void slots_unused(unsigned char *slot, size_t page_size)
{
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (pages[i].page && slot >= pages[i].page && slot < pages[i].page + page_size)
            mprotect(pages[i].page, page_size, PROT_READ | PROT_EXEC);
}

/* Replaces the pages holding [at, at + len) with copies carrying bytes:
 * built writable, made read-execute, moved over the originals at once. */
static int replace_text(unsigned char *at, const unsigned char *bytes, size_t len, size_t page_size,
                        char *why, size_t whylen)
{
    uintptr_t first = (uintptr_t)at & ~(page_size - 1);
    size_t span = (((uintptr_t)at + len + page_size - 1) & ~(page_size - 1)) - first;
    unsigned char *copy =
        mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED) {
        snprintf(why, whylen, "no memory for a copy of its page (%s)", strerror(errno));
        return -1;
    }
    memcpy(copy, (void *)first, span);
    memcpy(copy + ((uintptr_t)at - first), bytes, len);
    if (mprotect(copy, span, PROT_READ | PROT_EXEC) != 0 ||
        mremap(copy, span, span, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)first) == MAP_FAILED) {
        snprintf(why, whylen, "its page could not be replaced (%s)", strerror(errno));
        munmap(copy, span);
        return -1;
    }
    return 0;
}

void *amp_patch_entry(void *fn, void *hook, char *why, size_t whylen)
{
    unsigned char *entry = fn;
    int copied = 0;
    while (copied < JUMP_LEN) {
        int len = known_length(entry + copied);
        if (!len) {
            snprintf(why, whylen, "its first instructions are not a known prologue (byte %02x)",
                     entry[copied]);
            return NULL;
        }
        copied += len;
    }
    size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
    pthread_mutex_lock(&lock);
    unsigned char *pad = near_slots(fn, page_size);
    if (!pad) {
        pthread_mutex_unlock(&lock);
        snprintf(why, whylen, "no free page within 2 GiB of it for the jump");
        return NULL;
    }
    /* The pad: the entry's jump lands here and goes on to the hook. The
     * trampoline: the copied instructions, then a jump to the rest. */
    unsigned char *tramp = pad + SLOT;
    abs_jump(pad, hook);
    memcpy(tramp, entry, (size_t)copied);
    abs_jump(tramp + copied, entry + copied);
    unsigned char patch[MAX_COPIED];
    int32_t rel = (int32_t)((intptr_t)pad - (intptr_t)(entry + JUMP_LEN));
    patch[0] = 0xe9;
    memcpy(patch + 1, &rel, sizeof rel);
    memset(patch + JUMP_LEN, 0xcc, (size_t)copied - JUMP_LEN); /* int3: never reached */
    __builtin___clear_cache((char *)pad, (char *)pad + 2 * SLOT);
    if (replace_text(entry, patch, (size_t)copied, page_size, why, whylen) != 0) {
        slots_unused(pad, page_size);
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    slots_used(pad, page_size);
    pthread_mutex_unlock(&lock);
    return tramp;
}

#else

void *amp_patch_entry(void *fn, void *hook, char *why, size_t whylen)
{
    (void)fn;
    (void)hook;
    snprintf(why, whylen, "entry patches are made on x86-64 only");
    return NULL;
}

#endif
