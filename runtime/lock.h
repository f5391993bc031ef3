/* How the shim takes its locks: with every signal blocked and cancellation
 * held off (amp_lock_quietly, amp_unlock_quietly). */
#ifndef AMPSHIM_LOCK_H
#define AMPSHIM_LOCK_H

#include <pthread.h>
#include <signal.h>

/* The shim's locks are taken with every signal blocked: a signal handler that
 * makes a BLAS call while its thread holds one (the first call's set-up, a
 * resolution) would otherwise wait on itself forever. The signal is
 * delivered when the lock is let go. Cancellation is held off as well: the
 * set-up reads files (open and read are cancellation points), and a thread
 * cancelled there would end with the lock held and hang every other thread. */
struct amp_quiet {
    sigset_t mask;
    int cancel_state;
};

static inline void amp_signals_block(struct amp_quiet *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old->mask);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old->cancel_state);
}

static inline void amp_signals_restore(const struct amp_quiet *old)
{
    pthread_setcancelstate(old->cancel_state, NULL);
    pthread_sigmask(SIG_SETMASK, &old->mask, NULL);
}

static inline void amp_lock_quietly(pthread_mutex_t *lock, struct amp_quiet *old)
{
    amp_signals_block(old);
    pthread_mutex_lock(lock);
}

static inline void amp_unlock_quietly(pthread_mutex_t *lock, const struct amp_quiet *old)
{
    pthread_mutex_unlock(lock);
    amp_signals_restore(old);
}

#endif
