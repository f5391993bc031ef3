/* The fork protocol's vocabulary: its phases and a lock's share. Every part
 * that owns a lock has a handler taking a phase; shim/fork.c's one table
 * calls them in the order the locks nest. The lowest floor, so that any
 * floor's lock can take part. */
#ifndef AMPSHIM_ATFORK_H
#define AMPSHIM_ATFORK_H

#include <pthread.h>

enum amp_fork_phase { AMP_FORK_PREPARE, AMP_FORK_PARENT, AMP_FORK_CHILD };

/* A lock's share of the protocol: taken before fork, released after it in
 * the parent and in the child (the forking thread holds it in both). */
static inline void amp_lock_atfork(pthread_mutex_t *lock, enum amp_fork_phase phase)
{
    if (phase == AMP_FORK_PREPARE)
        pthread_mutex_lock(lock);
    else
        pthread_mutex_unlock(lock);
}

#endif
