/* The in-process API of ampshim.h: autocast and fp32 regions, and
 * ampshim_ctl over the process's own control block; and pthread_setname_np,
 * interposed so AMPSHIM_THREADS re-judges a thread that renames itself. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/export.h"
#include "ampshim.h"
#include "runtime/ctl_names.h"
#include "runtime/decide.h"
#include "runtime/threads.h"


static int push_region(uint8_t entry)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return 0; /* disabled: regions mean nothing */
    if (t->region_depth >= sizeof t->regions) {
        errno = EOVERFLOW;
        return -1;
    }
    t->regions[t->region_depth++] = entry;
    t->fp32_depth += !amp_region_is_autocast(entry);
    amp_thread_recompute(t);
    return 0;
}

static int pop_region(int autocast)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return 0;
    if (!t->region_depth || amp_region_is_autocast(t->regions[t->region_depth - 1]) != autocast) {
        errno = EINVAL;
        return -1;
    }
    t->fp32_depth -= !autocast;
    t->region_depth--;
    amp_thread_recompute(t);
    return 0;
}

AMP_EXPORT int ampshim_autocast_push(int dtype)
{
    /* AMPSHIM_DEFAULT stays "the process's dtype" in the region, resolved per
     * device when a call is decided (runtime/decide.h). */
    static const unsigned lowp[] = {AMP_REGION_PROCESS_DTYPE, AMP_DTYPE_BF16, AMP_DTYPE_FP16,
                                    AMP_DTYPE_TF32};
    if (dtype < AMPSHIM_DEFAULT || dtype > AMPSHIM_TF32) {
        errno = EINVAL;
        return -1;
    }
    return push_region(amp_region_autocast(lowp[dtype]));
}

AMP_EXPORT int ampshim_autocast_pop(void)
{
    return pop_region(1);
}

AMP_EXPORT int ampshim_fp32_push(void)
{
    return push_region(AMP_REGION_FP32);
}

AMP_EXPORT int ampshim_fp32_pop(void)
{
    return pop_region(0);
}

static int typed_read(enum amp_ctl_type type, const char *text, void *oldp, size_t *oldlenp)
{
    if (!oldp)
        return 0;
    if (!oldlenp)
        return EINVAL;
    if (type == AMP_CTL_T_BOOL) {
        if (*oldlenp != sizeof(int))
            return EINVAL;
        *(int *)oldp = strcmp(text, "default") == 0 ? -1 : atoi(text);
    } else if (type == AMP_CTL_T_U64) {
        if (*oldlenp != sizeof(uint64_t))
            return EINVAL;
        *(uint64_t *)oldp = strtoull(text, NULL, 10);
    } else {
        size_t need = strlen(text) + 1;
        if (*oldlenp < need) {
            *oldlenp = need;
            return EINVAL;
        }
        memcpy(oldp, text, need);
        *oldlenp = need;
    }
    return 0;
}

/* The names of release 0.1, kept as aliases for programs built against it
 * (ampshim.h marks them deprecated); to be removed in 0.2. */
AMP_EXPORT int amp_autocast_push(int dtype) __attribute__((alias("ampshim_autocast_push")));
AMP_EXPORT int amp_autocast_pop(void) __attribute__((alias("ampshim_autocast_pop")));
AMP_EXPORT int amp_fp32_push(void) __attribute__((alias("ampshim_fp32_push")));
AMP_EXPORT int amp_fp32_pop(void) __attribute__((alias("ampshim_fp32_pop")));

AMP_EXPORT int ampshim_ctl(const char *name, void *oldp, size_t *oldlenp, const void *newp,
                           size_t newlen)
{
    struct amp_thread *t = amp_thread_enter(); /* creates the block if need be */
    if (!t || !amp_ctl)
        return ENOTSUP;
    if (!name)
        return EINVAL;
    char full[128];
    if (strncmp(name, "thread.self.", 12) == 0)
        snprintf(full, sizeof full, "thread.%lld.%s", (long long)atomic_load(&t->tid), name + 12);
    else
        snprintf(full, sizeof full, "%s", name);
    char text[256];
    enum amp_ctl_type type;
    if (amp_ctl_get(amp_ctl, full, text, sizeof text, &type) != 0)
        return ENOENT;
    int rc = typed_read(type, text, oldp, oldlenp);
    if (rc || !newp)
        return rc;
    char value[256];
    if (type == AMP_CTL_T_BOOL) {
        if (newlen != sizeof(int))
            return EINVAL;
        int v = *(const int *)newp;
        if (v < -1 || v > 1)
            return EINVAL;
        snprintf(value, sizeof value, "%s", v < 0 ? "default" : v ? "1" : "0");
    } else if (type == AMP_CTL_T_U64) {
        /* Counters are read-only (amp_ctl_set says EPERM); opt.audit_sample
         * is written as a uint64_t. */
        if (newlen != sizeof(uint64_t))
            return EINVAL;
        uint64_t v;
        memcpy(&v, newp, sizeof v);
        snprintf(value, sizeof value, "%llu", (unsigned long long)v);
    } else {
        if (newlen >= sizeof value)
            return EINVAL;
        memcpy(value, newp, newlen);
        value[newlen] = '\0';
    }
    char why[256];
    rc = amp_ctl_set(amp_ctl, full, value, why, sizeof why);
    if (rc == 0)
        amp_ctl_refresh(t); /* the calling thread sees its own change at once */
    return rc;
}

AMP_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
    typedef int (*setname_fn)(pthread_t, const char *);
    /* Several threads may look it up at once: same answer, stored atomically. */
    static setname_fn _Atomic cached;
    setname_fn real = atomic_load_explicit(&cached, memory_order_relaxed);
    if (!real) {
        real = (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np");
        if (!real)
            return ENOSYS;
        atomic_store_explicit(&cached, real, memory_order_relaxed);
    }
    int rc = real(thread, name);
    if (rc == 0 && amp_mode() == AMP_MODE_ACTIVE)
        amp_thread_renamed((unsigned long)thread);
    return rc;
}
