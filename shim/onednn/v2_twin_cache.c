/* oneDNN 2.x: the twin cache (twins by key, the least recently used
 * dropped) and a twin run: the inputs reordered into the thread's scratch,
 * the twin executed on the program's other arguments. */
#ifdef AMPSHIM_HAVE_ONEDNN

#include "shim/onednn/v2_twin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "policy/policy.h"
#include "runtime/log.h"

/* The cache: twins by key. Programs use few shapes (a model's layers);
 * past this many the least recently used twin not running is dropped. */
enum { CACHE = 256 };
static struct twin *cache[CACHE];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t told[AMP_HOOK_COUNT];

void amp_dnnl_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&cache_lock, phase);
}

/* The twin for key (made if new), marked running; NULL if it has none
 * (*refused: -1, or AMP_DNNL_NO_KERNEL). */
static struct twin *twin_take(const struct amp_dnnl_call *c, const struct key *key, enum pkind k,
                              enum dir d, const union op_desc *op, int *refused, int *built)
{
    *refused = -1;
    *built = 0;
    uint64_t h = amp_dn_hash(key, sizeof *key);
    struct amp_quiet quiet;
    struct twin *tw = NULL;
    int free_slot = -1, lru = -1;
    amp_lock_quietly(&cache_lock, &quiet);
    for (int i = 0; i < CACHE; i++) {
        struct twin *e = cache[i];
        if (!e) {
            if (free_slot < 0)
                free_slot = i;
        } else if (e->hash == h && memcmp(&e->key, key, sizeof *key) == 0) {
            tw = e;
            break;
        } else if (!e->running && (lru < 0 || e->last_use < cache[lru]->last_use)) {
            lru = i;
        }
    }
    if (!tw && (free_slot >= 0 || lru >= 0) && (tw = calloc(1, sizeof *tw))) {
        char why[160] = "";
        tw->key = *key;
        tw->hash = h;
        int made = amp_dn_twin_build(tw, c->pd, k, d, op, why, sizeof why);
        tw->state = made == 0 ? 1 : made;
        *built = 1;
        if (tw->state < 0 && !__atomic_exchange_n(&told[c->hook], 1, __ATOMIC_RELAXED)) {
            amp_log(AMP_LOG_INFO, "%s in %s: no native twin (%s); such calls run as made in fp32%s",
                    amp_hook_names[c->hook], amp_dtype_names[key->dtype],
                    why[0] ? why : "oneDNN refused it",
                    tw->state == AMP_DNNL_NO_KERNEL ? ", counted nounits" : "");
        }
        if (free_slot < 0) {
            amp_dn_twin_release(cache[lru]);
            free_slot = lru;
        }
        cache[free_slot] = tw;
    }
    if (tw) {
        tw->last_use = ++cache_clock;
        if (tw->state == 1) {
            tw->running++;
        } else {
            *refused = tw->state;
            tw = NULL;
        }
    }
    amp_unlock_quietly(&cache_lock, &quiet);
    return tw;
}

static void twin_give(struct twin *tw)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&cache_lock, &quiet);
    tw->running--;
    amp_unlock_quietly(&cache_lock, &quiet);
}

enum { MAX_ARGS = 32 };

static int run(struct twin *tw, struct amp_thread *t, amp_dnnl_execute_fn exec, void *stream,
               int nargs, const dnnl_exec_arg_t *args)
{
    dnnl_memory_t from[2] = {NULL, NULL}, to[2] = {NULL, NULL}, pad = NULL, dst = NULL, own = NULL;
    for (int a = 0; a < nargs; a++) {
        for (int i = 0; i < 2; i++)
            if (args[a].arg == tw->in_arg[i])
                from[i] = args[a].memory;
        if (args[a].arg == DNNL_ARG_DST)
            dst = args[a].memory;
    }
    if (!from[0] || !from[1] || (tw->out && !dst) || nargs + 1 > MAX_ARGS)
        return -1;
    char *scratch = amp_scratch(t, tw->bytes ? tw->bytes : 1);
    if (!scratch)
        return -1;
    int ok = -1;
    for (int i = 0; i < 2; i++) {
        dnnl_exec_arg_t conv[2] = {{DNNL_ARG_FROM, from[i]}, {DNNL_ARG_TO, NULL}};
        if (amp_dn.dnnl_memory_create(&to[i], &tw->in_md[i], tw->key.engine,
                                      scratch + tw->in_off[i]) != dnnl_success)
            goto out;
        conv[1].memory = to[i];
        if (exec(tw->reorder[i], stream, 2, conv) != dnnl_success)
            goto out;
    }
    if (tw->out) { /* the twin's own output layout (v2_twin.h) */
        dnnl_exec_arg_t back[2] = {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, NULL}};
        if (amp_dn.dnnl_memory_create(&own, &tw->out_md, tw->key.engine, scratch + tw->out_off) !=
            dnnl_success)
            goto out;
        back[1].memory = own;
        if (tw->back && exec(tw->back, stream, 2, back) != dnnl_success)
            goto out;
    }
    if (tw->scratchpad_md.ndims > 0 &&
        amp_dn.dnnl_memory_create(&pad, &tw->scratchpad_md, tw->key.engine,
                                  scratch + tw->scratchpad_off) != dnnl_success)
        goto out;
    dnnl_exec_arg_t twin_args[MAX_ARGS];
    int n = 0;
    for (int a = 0; a < nargs; a++) {
        if (args[a].arg == DNNL_ARG_SCRATCHPAD)
            continue;
        twin_args[n] = args[a];
        for (int i = 0; i < 2; i++)
            if (args[a].arg == tw->in_arg[i])
                twin_args[n].memory = to[i];
        if (own && args[a].arg == DNNL_ARG_DST)
            twin_args[n].memory = own;
        n++;
    }
    if (pad)
        twin_args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, pad};
    ok = exec(tw->prim, stream, n, twin_args) == dnnl_success ? 0 : -1;
    if (ok == 0 && own) {
        dnnl_exec_arg_t put[2] = {{DNNL_ARG_FROM, own}, {DNNL_ARG_TO, dst}};
        ok = exec(tw->out, stream, 2, put) == dnnl_success ? 0 : -1;
    }
out:
    for (int i = 0; i < 2; i++)
        if (to[i])
            amp_dn.dnnl_memory_destroy(to[i]);
    if (pad)
        amp_dn.dnnl_memory_destroy(pad);
    if (own)
        amp_dn.dnnl_memory_destroy(own);
    amp_scratch_done(t);
    return ok;
}

int amp_dnnl_twin_run(const struct amp_dnnl_call *c, struct amp_thread *t, int dtype,
                      amp_dnnl_execute_fn real_execute, void *stream, int nargs, const void *args,
                      uint64_t *converted, int *built)
{
    *built = 0;
    if (dtype != AMP_DTYPE_BF16 && dtype != AMP_DTYPE_FP16)
        return -1;
    struct key key;
    enum pkind k;
    enum dir d;
    const union op_desc *op;
    if (amp_dn_twin_key(c, dtype, &key, &k, &d, &op) < 0) {
        if (!__atomic_exchange_n(&told[c->hook], 1, __ATOMIC_RELAXED))
            amp_log(AMP_LOG_INFO,
                    "%s: no twin for this primitive (an attribute ampshim does not copy, or an "
                    "RNN, whose low-precision kernels refuse fp32 outputs); such calls run as made",
                    amp_hook_names[c->hook]);
        return -1;
    }
    int refused;
    struct twin *tw = twin_take(c, &key, k, d, op, &refused, built);
    if (!tw)
        return refused;
    int ok = run(tw, t, real_execute, stream, nargs, args);
    *converted = tw->in_elems;
    twin_give(tw);
    return ok;
}

#endif
