/* The native executor's worker threads (shim/blas/native_pool.h): one queue
 * of chunks shared by every calling thread, guarded by one lock; workers
 * sleep on a condition variable between chunks. */
#include "shim/blas/native_pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>

#include "shim/blas/native_onednn.h"

struct batch {
    int pending; /* chunks not yet finished */
};

struct task {
    void (*fn)(void *, int);
    void *arg;
    int index;
    struct batch *batch;
    struct task *next;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t batch_done = PTHREAD_COND_INITIALIZER;
static struct task *head, *tail;
static int workers, idle;
static _Atomic int in_flight;

int amp_native_enter(void)
{
    return atomic_fetch_add(&in_flight, 1) + 1;
}

void amp_native_leave(void)
{
    atomic_fetch_sub(&in_flight, 1);
}

static void finish(struct task *t)
{
    /* With the lock held. */
    if (--t->batch->pending == 0)
        pthread_cond_broadcast(&batch_done);
}

static struct task *pop(const struct batch *only)
{
    /* With the lock held: the first queued task, or the first of a batch. */
    for (struct task **pp = &head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
        struct task *t = *pp;
        if (only && t->batch != only)
            continue;
        *pp = t->next;
        if (tail == t)
            tail = prev;
        return t;
    }
    return NULL;
}

static void *worker(void *unused)
{
    (void)unused;
    prctl(PR_SET_NAME, "ampshim-native", 0, 0, 0);
    amp_onednn_thread_init();
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        struct task *t = pop(NULL);
        if (!t) {
            idle++;
            pthread_cond_wait(&work_ready, &pool_lock);
            idle--;
            continue;
        }
        pthread_mutex_unlock(&pool_lock);
        t->fn(t->arg, t->index);
        pthread_mutex_lock(&pool_lock);
        finish(t);
    }
    return NULL;
}

/* Starts workers until there are `want`; with the lock held. */
static void grow(int want)
{
    if (want > AMP_NATIVE_POOL_MAX - 1)
        want = AMP_NATIVE_POOL_MAX - 1;
    if (workers >= want)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: no program handler runs on them */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (workers < want) {
        pthread_t id;
        if (pthread_create(&id, &attr, worker, NULL) != 0)
            break; /* its chunks run on the caller */
        workers++;
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void amp_native_parallel(int n, int threads, void (*fn)(void *arg, int i), void *arg)
{
    if (n <= 1 || threads <= 1) {
        for (int i = 0; i < n; i++)
            fn(arg, i);
        return;
    }
    if (n > AMP_NATIVE_POOL_MAX)
        n = AMP_NATIVE_POOL_MAX;
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    struct batch b = {n};
    struct task tasks[AMP_NATIVE_POOL_MAX];
    pthread_mutex_lock(&pool_lock);
    grow((threads < n ? threads : n) - 1);
    for (int i = 1; i < n; i++) {
        tasks[i] = (struct task){fn, arg, i, &b, NULL};
        if (tail)
            tail->next = &tasks[i];
        else
            head = &tasks[i];
        tail = &tasks[i];
    }
    if (idle)
        pthread_cond_broadcast(&work_ready);
    pthread_mutex_unlock(&pool_lock);
    fn(arg, 0);
    pthread_mutex_lock(&pool_lock);
    b.pending--;
    while (b.pending > 0) {
        struct task *t = pop(&b); /* ours, not yet taken: run it here */
        if (t) {
            pthread_mutex_unlock(&pool_lock);
            t->fn(t->arg, t->index);
            pthread_mutex_lock(&pool_lock);
            finish(t);
        } else {
            pthread_cond_wait(&batch_done, &pool_lock);
        }
    }
    pthread_mutex_unlock(&pool_lock);
    pthread_setcancelstate(cancel_state, NULL);
}

/* Fork: the queue is consistent while the lock is held; a child has no
 * workers (threads do not survive fork) and no other thread's chunks. */
void amp_native_pool_atfork(enum amp_fork_phase phase)
{
    if (phase == AMP_FORK_CHILD) {
        pthread_cond_init(&work_ready, NULL);
        pthread_cond_init(&batch_done, NULL);
        head = tail = NULL;
        workers = idle = 0;
        atomic_store(&in_flight, 0);
    }
    amp_lock_atfork(&pool_lock, phase);
}
