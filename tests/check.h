/* The unit tests' one assertion: counts checks, prints a FAIL line with the
 * place and a message, never stops (the test ends with a summary line). */
#ifndef AMPSHIM_TEST_CHECK_H
#define AMPSHIM_TEST_CHECK_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#include "tests/cpu_units.h"

static _Atomic int failures;
static int checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* Whether libampshim.so is in this process (its public ampshim_version, which
 * it exports enabled or not). A test that claims "the same as without the
 * shim" checks it first, so it cannot pass because the preload failed. */
static inline int shim_loaded(void)
{
    return dlsym(RTLD_DEFAULT, "ampshim_version") != NULL;
}

/* One of the shim's counters by its control name ("stats.SYMBOL.lowered"),
 * through ampshim_ctl; 0 without the shim. */
static inline unsigned long long shim_counter(const char *name)
{
    int (*ctl)(const char *, void *, size_t *, const void *, size_t) =
        (int (*)(const char *, void *, size_t *, const void *, size_t))dlsym(RTLD_DEFAULT,
                                                                            "ampshim_ctl");
    unsigned long long v = 0;
    size_t len = sizeof v;
    if (ctl)
        ctl(name, &v, &len, NULL, 0);
    return v;
}

#define CHECK_SHIM_LOADED()                                                                        \
    CHECK(shim_loaded(), "libampshim.so is loaded (the test runs under LD_PRELOAD)")

#endif
