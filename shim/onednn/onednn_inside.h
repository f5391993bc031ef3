/* oneDNN inside another library (shim/onednn/v3_inside.c): the look for
 * it, made at load, at the first dlsym after a dlopen and at a thread's
 * first call after one. */
#ifndef AMPSHIM_ONEDNN_INSIDE_H
#define AMPSHIM_ONEDNN_INSIDE_H

/* Looks at the objects loaded since the last look (none when no dlopen
 * came since) for oneDNN's C API kept as local symbols, and reaches the
 * first such library by entry patches. late: the objects may have run
 * already (a thread's refresh): it looks only in a process of one thread,
 * and leaves them to the next dlsym otherwise. Nothing unless the shim is
 * active. */
void amp_onednn_inside_scan(int late);

#endif
