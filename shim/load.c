/* libampshim.so's load and unload: read the environment once at load (so
 * AMPSHIM_STRICT can stop a misconfigured run before main), print the exit
 * report at unload. */
#include <stdatomic.h>

#include "runtime/export.h"
#include "runtime/report.h"
#include "runtime/hook_state.h"

void amp_dlopen_hook_init(void);
void amp_longjmp_hook_init(void);

__attribute__((constructor)) static void ampshim_load(void)
{
    amp_dlopen_hook_init();
    amp_longjmp_hook_init();
    amp_runtime_init();
}

__attribute__((destructor)) static void ampshim_unload(void)
{
    if (atomic_load(&amp_rt.mode) == AMP_MODE_ACTIVE) {
        amp_report_print();
    }
}

#include "ampshim.h"

#define AMP_STR2(x) #x
#define AMP_STR(x) AMP_STR2(x)

AMP_EXPORT const char *ampshim_version(void)
{
    return AMP_STR(AMPSHIM_VERSION_MAJOR) "." AMP_STR(AMPSHIM_VERSION_MINOR) "." AMP_STR(
        AMPSHIM_VERSION_PATCH);
}
