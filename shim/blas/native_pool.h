/* The native executor's worker threads: a parallel-for over a few chunks of
 * one product, chunk 0 on the calling thread and the others on workers the
 * shim starts when first needed (named "ampshim-native", every signal
 * blocked, waiting on a condition variable: they never spin). oneDNN itself
 * always runs single-threaded (shim/blas/native_onednn.h), so no OpenMP team is
 * ever started in the program: nothing spins between calls, nothing of the
 * program's OpenMP state is touched, and fork needs no special case. */
#ifndef AMPSHIM_NATIVE_POOL_H
#define AMPSHIM_NATIVE_POOL_H

#include "runtime/threads.h"
#include "loader/loader.h"

#define AMP_NATIVE_POOL_MAX 64 /* chunks of one call, the caller's included */

/* Runs fn(arg, i) for i in [0, n), n <= AMP_NATIVE_POOL_MAX, on at most
 * `threads` threads (the caller's included), and returns when every chunk is
 * done. Workers that cannot be started leave their chunks to the caller,
 * which also runs any of its chunks still queued when it is free. The
 * calling thread cannot be cancelled while the chunks run. */
void amp_native_parallel(int n, int threads, void (*fn)(void *arg, int i), void *arg);

/* Native products running now in the process: each takes an equal share of
 * the BLAS's threads, so program threads calling at once do not
 * oversubscribe the cores. amp_native_enter returns the callers in flight,
 * this one included; a forked child starts with none (its parent's callers
 * did not come with it). */
int amp_native_enter(void);
void amp_native_leave(void);

/* fork's share: the worker queue; a child starts with no workers. */
void amp_native_pool_atfork(enum amp_fork_phase phase);

#endif
