/* What the tests ask of the CPU: whether ampshim's probe will find native
 * bf16 units (tests/check.py has the Python twin). */
#ifndef AMPSHIM_TEST_CPU_UNITS_H
#define AMPSHIM_TEST_CPU_UNITS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Whether oneDNN 2.x (and so ampshim's probe) finds native bf16 units here:
 * the CPU's flags (avx512_bf16 or amx_bf16), unless ONEDNN_MAX_CPU_ISA
 * holds oneDNN below them (AVX2 simulates a CPU without them). The twin of
 * tests/check.py's. */
static inline int check_cpu_has_bf16_units(void)
{
    const char *isa = getenv("ONEDNN_MAX_CPU_ISA");
    if (!isa || !*isa)
        isa = getenv("DNNL_MAX_CPU_ISA");
    if (isa && *isa && !strcasestr(isa, "BF16") && !strcasestr(isa, "AMX") &&
        strcasecmp(isa, "ALL") != 0)
        return 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    int yes = 0;
    while (f && !yes && fgets(line, sizeof line, f))
        yes = strncmp(line, "flags", 5) == 0 &&
              (strstr(line, " avx512_bf16") || strstr(line, " amx_bf16"));
    if (f)
        fclose(f);
    return yes;
}

#endif
