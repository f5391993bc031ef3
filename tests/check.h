/* The unit tests' one assertion: counts checks, prints a FAIL line with the
 * place and a message, never stops (the test ends with a summary line). */
#ifndef AMPSHIM_TEST_CHECK_H
#define AMPSHIM_TEST_CHECK_H

#include <stdio.h>

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

#endif
