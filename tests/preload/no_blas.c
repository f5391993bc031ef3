/* A program that makes no BLAS call (like grep or sh under a leaked
 * LD_PRELOAD): ampshim must print nothing, even with a report asked for. */
#include <stdio.h>

int main(void)
{
    double x = 1.0;
    for (int i = 0; i < 1000; i++)
        x = x * 1.0001 + 0.5;
    return x > 0 ? 0 : 1;
}
