/* Helpers shared by the shim and ampctl for the control block: its name, the
 * hash that ties it to one build's generated lists, and the check every
 * reader runs before trusting a block it did not write. */
#include "runtime/control.h"

#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

void amp_ctl_block_name(char *out, size_t outlen, unsigned uid, long pid)
{
    snprintf(out, outlen, "/ampshim.%u.%ld", uid, pid);
}

uint64_t amp_ctl_list_hash(void)
{
    /* FNV-1a over the names, in order: same lists, same indices. */
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < AMP_OP_COUNT + AMP_HOOK_COUNT; i++) {
        const char *name = i < AMP_OP_COUNT ? amp_op_names[i] : amp_hook_names[i - AMP_OP_COUNT];
        for (const char *p = name; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return h;
}

const char *amp_ctl_block_problem(const void *mem, size_t len)
{
    const struct amp_ctl_block *b = mem;
    if (len < offsetof(struct amp_ctl_block, exe))
        return "truncated: shorter than a block header";
    if (__atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) != AMP_CTL_MAGIC)
        return "not an ampshim control block (bad magic)";
    if (b->version != AMP_CTL_VERSION)
        return "a control block of another layout version (another ampshim release)";
    if (b->size != sizeof *b || len < sizeof *b)
        return "truncated or resized control block";
    if (b->op_count != AMP_OP_COUNT || b->hook_count != AMP_HOOK_COUNT ||
        b->max_threads != AMP_CTL_MAX_THREADS || b->list_hash != amp_ctl_list_hash())
        return "a control block of a build with other op or hook lists";
    return NULL;
}
