/* The naming rule of runtime/export.h, checked on the built libraries:
 * libampshim.so exports exactly the generated hook list, the C library
 * functions it interposes (pthread_setname_np, dlopen, dlclose, dlsym, the
 * longjmp family, _exit and _Exit), ampshim_* and the four deprecated 0.1 aliases; libampscaler.so exports
 * only amp_scaler_*; libampshim-audit.so only la_*. No library exports an
 * internal amp_* name, so a public name tells itself apart by its prefix.
 * usage: test_exports LIBAMPSHIM LIBAMPSCALER LIBAMPSHIM_AUDIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/check.h"

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int is_hook(const char *name)
{
    return amp_hook_from_name(name) >= 0;
}

static int shim_public(const char *name)
{
    static const char *const deprecated[] = {"amp_autocast_push", "amp_autocast_pop",
                                             "amp_fp32_push", "amp_fp32_pop"};
    for (size_t i = 0; i < sizeof deprecated / sizeof *deprecated; i++)
        if (strcmp(name, deprecated[i]) == 0)
            return 1;
    /* The C library's functions the shim interposes (shim/api.c,
     * shim/dlopen_hook.c, shim/region_frames.c, shim/load.c). */
    static const char *const interposed[] = {
        "pthread_setname_np", "dlopen",     "dlclose",       "dlsym", "longjmp",
        "_longjmp",           "siglongjmp", "__longjmp_chk", "_exit", "_Exit"};
    for (size_t i = 0; i < sizeof interposed / sizeof *interposed; i++)
        if (strcmp(name, interposed[i]) == 0)
            return 1;
    return is_hook(name) || starts(name, "ampshim_");
}

static int scaler_public(const char *name)
{
    return starts(name, "amp_scaler_");
}

static int audit_public(const char *name)
{
    return starts(name, "la_");
}

/* Checks every dynamic symbol LIB defines; returns how many. */
static int check_library(const char *lib, int (*public)(const char *))
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", lib);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL, "cannot run nm on %s", lib);
    if (!p)
        return 0;
    char line[512];
    int n = 0, hooks = 0;
    while (fgets(line, sizeof line, p)) {
        char addr[64], type[8], name[400];
        if (sscanf(line, "%63s %7s %399s", addr, type, name) != 3)
            continue;
        char *at = strchr(name, '@');
        if (at)
            *at = '\0';
        n++;
        hooks += is_hook(name);
        CHECK(public(name), "%s exports '%s', which is not a public name", lib, name);
    }
    CHECK(pclose(p) == 0, "nm failed on %s", lib);
    if (public == shim_public)
        CHECK(hooks == AMPSHIM_GENERATED_ENTRY_COUNT, "%s exports %d of the %d entry points", lib,
              hooks, AMPSHIM_GENERATED_ENTRY_COUNT);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_exports LIBAMPSHIM LIBAMPSCALER LIBAMPSHIM_AUDIT\n");
        return 2;
    }
    CHECK(check_library(argv[1], shim_public) > AMPSHIM_GENERATED_ENTRY_COUNT,
          "libampshim exports its API");
    CHECK(check_library(argv[2], scaler_public) > 0, "libampscaler exports its API");
    CHECK(check_library(argv[3], audit_public) > 0, "libampshim-audit exports la_*");
    printf("test_exports: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
