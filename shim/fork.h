/* The fork protocol: every lock of the shim's taken before fork and
 * released after it, in the parent and in the child, in one ordered table
 * (shim/fork.c). */
#ifndef AMPSHIM_FORK_H
#define AMPSHIM_FORK_H

/* Registers the protocol with pthread_atfork; 0 when that fails. */
int amp_fork_install(void);

#endif
