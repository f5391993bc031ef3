/* A counter of the shim's in this process, read through ampshim_ctl
 * ("stats.SYMBOL.COUNTER"): UINT64_MAX when the shim is not there. */
#ifndef AMPSHIM_TEST_SHIM_STATS_H
#define AMPSHIM_TEST_SHIM_STATS_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

static inline uint64_t shim_stat(const char *symbol, const char *counter)
{
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                             "ampshim_ctl");
    char name[128];
    uint64_t v = 0;
    size_t len = sizeof v;
    snprintf(name, sizeof name, "stats.%s.%s", symbol, counter);
    return ctl && ctl(name, &v, &len, NULL, 0) == 0 ? v : UINT64_MAX;
}

#endif
