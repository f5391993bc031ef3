/* The book of cuDNN backend descriptors and the plan table: see
 * shim/cudnn_graph/cudnn_graph_book.h. */
#include "shim/cudnn_graph/cudnn_graph_book.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the functions of the cuDNN at hand ---- */

static const size_t needed[] = {AMP_CUDNN_GRAPH_HELPERS(AMP_CUDNN_OFFSET)
                                    offsetof(struct amp_cudnn_helpers, get_stream)};

const struct amp_cudnn_helpers *amp_dnng_of(const void *real)
{
    return amp_helpers_of_part(&amp_cudnn_helper_list, sizeof(struct amp_cudnn_helpers), real,
                               needed, sizeof needed / sizeof *needed);
}

/* ---- the records ---- */

#define BUCKETS 1024u
/* An attribute the book keeps at most this long (a device-properties JSON
 * is under 1 KiB); a longer one makes its descriptor opaque. */
#define ATTR_MAX_BYTES 65536u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct amp_grec *bucket[BUCKETS];
/* How many booked descriptors hash to each entry (written under the lock,
 * read without it): zero says a descriptor is certainly not booked. */
#define PRESENT 65536u
static _Atomic uint32_t present[PRESENT];

static unsigned present_of(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 48) % PRESENT;
}

int amp_gbook_maybe(const void *desc)
{
    return atomic_load_explicit(&present[present_of(desc)], memory_order_acquire) != 0;
}

static unsigned slot_of(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 40) % BUCKETS;
}

void amp_gbook_lock(struct amp_quiet *quiet)
{
    amp_lock_quietly(&lock, quiet);
}

void amp_gbook_unlock(const struct amp_quiet *quiet)
{
    amp_unlock_quietly(&lock, quiet);
}

static void rec_free(struct amp_grec *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->attrs[i].value);
        free(r->attrs[i].serials);
    }
    free(r->attrs);
    free(r);
}

struct amp_grec *amp_gbook_find(void *desc)
{
    for (struct amp_grec *r = bucket[slot_of(desc)]; r; r = r->next)
        if (r->desc == desc)
            return r;
    return NULL;
}

void amp_gbook_forget(void *desc)
{
    for (struct amp_grec **p = &bucket[slot_of(desc)]; *p; p = &(*p)->next)
        if ((*p)->desc == desc) {
            struct amp_grec *r = *p;
            *p = r->next;
            rec_free(r);
            atomic_fetch_sub_explicit(&present[present_of(desc)], 1, memory_order_release);
            return;
        }
}

/* The descriptor types a convolution plan is read from (shim/cuda/
 * cudnn_graph_lower.c); no other is booked, so the variant pack a program
 * such as PyTorch builds for every execute costs one lookup per call. */
int amp_gbook_books(int type)
{
    switch (type) {
    case AMP_DNNG_POINTWISE:
    case AMP_DNNG_CONVOLUTION:
    case AMP_DNNG_ENGINE:
    case AMP_DNNG_ENGINECFG:
    case AMP_DNNG_ENGINEHEUR:
    case AMP_DNNG_EXECUTION_PLAN:
    case AMP_DNNG_OP_CONV_FORWARD:
    case AMP_DNNG_OP_CONV_BACKWARD_FILTER:
    case AMP_DNNG_OP_CONV_BACKWARD_DATA:
    case AMP_DNNG_OP_POINTWISE:
    case AMP_DNNG_OPERATIONGRAPH:
    case AMP_DNNG_TENSOR:
        return 1;
    default:
        return 0;
    }
}

void amp_gbook_created(void *desc, int type)
{
    amp_gbook_forget(desc); /* an address cuDNN gave before, destroyed behind our back */
    if (!amp_gbook_books(type))
        return;
    struct amp_grec *r = calloc(1, sizeof *r);
    if (!r)
        return;              /* unknown to the book: its graphs run as made */
    static uint64_t serials; /* under the lock */
    r->desc = desc;
    r->serial = ++serials;
    r->type = type;
    unsigned s = slot_of(desc);
    r->next = bucket[s];
    bucket[s] = r;
    atomic_fetch_add_explicit(&present[present_of(desc)], 1, memory_order_release);
}

/* Bytes per element of an attribute type, or 0 for one the book does not
 * know (a newer cuDNN's). */
static size_t type_bytes(int type)
{
    switch (type) {
    case AMP_DNNG_TYPE_HANDLE:
    case AMP_DNNG_TYPE_INT64:
    case AMP_DNNG_TYPE_DOUBLE:
    case AMP_DNNG_TYPE_VOID_PTR:
    case AMP_DNNG_TYPE_BACKEND_DESCRIPTOR:
        return 8;
    case AMP_DNNG_TYPE_BOOLEAN:
    case AMP_DNNG_TYPE_CHAR:
        return 1;
    case AMP_DNNG_TYPE_FRACTION:
        return 16;
    default: /* FLOAT, INT32, DATA_TYPE and the enumerations */
        return type >= 0 && type <= AMP_DNNG_TYPE_LAST_KNOWN ? 4 : 0;
    }
}

void amp_gbook_set(void *desc, int name, int type, int64_t count, const void *array)
{
    struct amp_grec *r = amp_gbook_find(desc);
    if (!r || r->opaque)
        return;
    size_t each = type_bytes(type);
    if (!each || count < 0 || (uint64_t)count > ATTR_MAX_BYTES / each || (count && !array)) {
        r->opaque = 1;
        return;
    }
    size_t bytes = (size_t)count * each;
    unsigned char *value = malloc(bytes ? bytes : 1);
    if (!value) {
        r->opaque = 1;
        return;
    }
    if (bytes)
        memcpy(value, array, bytes);
    uint64_t *serials = NULL;
    if (type == AMP_DNNG_TYPE_BACKEND_DESCRIPTOR &&
        !(serials = calloc(count ? (size_t)count : 1, sizeof *serials))) {
        free(value);
        r->opaque = 1;
        return;
    }
    for (int64_t k = 0; serials && k < count; k++) {
        void *d;
        memcpy(&d, value + (size_t)k * sizeof d, sizeof d);
        const struct amp_grec *to = d ? amp_gbook_find(d) : NULL;
        serials[k] = to ? to->serial : 0;
    }
    struct amp_gattr *a = NULL;
    for (int i = 0; i < r->n && !a; i++)
        if (r->attrs[i].name == name)
            a = &r->attrs[i];
    if (!a) {
        if (r->n == r->cap) {
            int cap = r->cap ? 2 * r->cap : 8;
            struct amp_gattr *grown = realloc(r->attrs, (size_t)cap * sizeof *grown);
            if (!grown) {
                free(value);
                free(serials);
                r->opaque = 1;
                return;
            }
            r->attrs = grown;
            r->cap = cap;
        }
        a = &r->attrs[r->n++];
        a->value = NULL;
        a->serials = NULL;
    }
    free(a->value);
    free(a->serials);
    *a = (struct amp_gattr){name, type, count, bytes, value, serials};
}

const struct amp_gattr *amp_gbook_attr(const struct amp_grec *r, int name)
{
    for (int i = 0; r && i < r->n; i++)
        if (r->attrs[i].name == name)
            return &r->attrs[i];
    return NULL;
}

void *amp_gbook_desc(const struct amp_grec *r, int name, int i)
{
    const struct amp_gattr *a = amp_gbook_attr(r, name);
    void *d = NULL;
    if (a && a->type == AMP_DNNG_TYPE_BACKEND_DESCRIPTOR && i >= 0 && i < a->count)
        memcpy(&d, a->value + (size_t)i * sizeof d, sizeof d);
    return d;
}

/* The record at desc if it is the one of serial (0: none was booked). */
static struct amp_grec *resolve_ref(void *desc, uint64_t serial, int *stale)
{
    struct amp_grec *now = desc ? amp_gbook_find(desc) : NULL;
    if (now && now->serial == serial)
        return now;
    if (now || serial)
        *stale = 1;
    return NULL;
}

struct amp_grec *amp_gbook_ref(const struct amp_grec *r, int name, int i, int *stale)
{
    const struct amp_gattr *a = amp_gbook_attr(r, name);
    if (!a || a->type != AMP_DNNG_TYPE_BACKEND_DESCRIPTOR || !a->serials || i < 0 || i >= a->count)
        return NULL;
    void *d;
    memcpy(&d, a->value + (size_t)i * sizeof d, sizeof d);
    return resolve_ref(d, a->serials[i], stale);
}

struct amp_grec *amp_gbook_heur_graph(const struct amp_grec *r, int *stale)
{
    return r && r->heur_graph ? resolve_ref(r->heur_graph, r->heur_graph_serial, stale) : NULL;
}

void amp_gbook_note_heur_graph(struct amp_grec *r, const struct amp_grec *graph)
{
    r->heur_graph = graph->desc;
    r->heur_graph_serial = graph->serial;
}

int64_t amp_gbook_int(const struct amp_grec *r, int name, int i, int64_t dflt)
{
    const struct amp_gattr *a = amp_gbook_attr(r, name);
    if (!a || i < 0 || i >= a->count)
        return dflt;
    if (a->type == AMP_DNNG_TYPE_INT64) {
        int64_t v;
        memcpy(&v, a->value + (size_t)i * 8, 8);
        return v;
    }
    if (type_bytes(a->type) == 4 && a->type != AMP_DNNG_TYPE_FLOAT) {
        int32_t v;
        memcpy(&v, a->value + (size_t)i * 4, 4);
        return v;
    }
    return dflt;
}

/* ---- the plan table: open addressing, read without a lock ----
 * A slot's key is written once per plan address under the lock; a plan
 * destroyed leaves its slot keyed with no record, and a later plan takes
 * the first such slot on its probe path, so lookups of other plans, which
 * only stop at a slot never keyed, are not disturbed. */

#define PLANS 4096u
static struct {
    void *_Atomic key;
    struct amp_gplan *_Atomic rec;
} plans[PLANS];

struct amp_gplan *amp_gplan_of(void *plan)
{
    unsigned s = slot_of(plan) * (PLANS / BUCKETS);
    for (unsigned i = 0; i < PLANS; i++, s = (s + 1) % PLANS) {
        void *key = atomic_load_explicit(&plans[s].key, memory_order_acquire);
        if (key == plan)
            return atomic_load_explicit(&plans[s].rec, memory_order_acquire);
        if (!key)
            return NULL;
    }
    return NULL;
}

int amp_gplan_put(void *plan, struct amp_gplan *p)
{
    unsigned s = slot_of(plan) * (PLANS / BUCKETS), free_slot = PLANS;
    for (unsigned i = 0; i < PLANS; i++, s = (s + 1) % PLANS) {
        void *key = atomic_load_explicit(&plans[s].key, memory_order_relaxed);
        if (key == plan) {
            free_slot = s;
            break;
        }
        if (free_slot == PLANS && !atomic_load_explicit(&plans[s].rec, memory_order_relaxed))
            free_slot = s;
        if (!key)
            break;
    }
    if (free_slot == PLANS)
        return 0;
    atomic_store_explicit(&plans[free_slot].rec, NULL, memory_order_release);
    atomic_store_explicit(&plans[free_slot].key, plan, memory_order_release);
    atomic_store_explicit(&plans[free_slot].rec, p, memory_order_release);
    return 1;
}

struct amp_gplan *amp_gplan_take(void *plan)
{
    unsigned s = slot_of(plan) * (PLANS / BUCKETS);
    for (unsigned i = 0; i < PLANS; i++, s = (s + 1) % PLANS) {
        void *key = atomic_load_explicit(&plans[s].key, memory_order_relaxed);
        if (key == plan)
            return atomic_exchange_explicit(&plans[s].rec, NULL, memory_order_acq_rel);
        if (!key)
            return NULL;
    }
    return NULL;
}

void amp_cudnn_graph_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&lock, phase);
}
