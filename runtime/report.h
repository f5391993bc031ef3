/* The exit report (AMPSHIM_REPORT): per hooked symbol, what the policy said
 * and what the calls became. Printed only when asked and only when a hooked
 * call was seen. */
#ifndef AMPSHIM_REPORT_H
#define AMPSHIM_REPORT_H

#include <stdio.h>

/* Writes the report table to out; returns the number of symbols listed. */
int amp_report_write(FILE *out);

/* Writes the report where AMPSHIM_REPORT says, if a hooked call was seen. */
void amp_report_print(void);

#endif
