/* The book of cuDNN backend descriptors (shim/cudnn_graph/cudnn_graph_book.c):
 * what the program set on each descriptor it created, recorded as it sets
 * it (cudnnBackendSetAttribute) and dropped when it destroys it, never read
 * back from cuDNN; and the plans of convolution graphs, found by the one
 * lock-free lookup cudnnBackendExecute makes. The graph hooks are in
 * cudnn_graph.c, the engine substitution in cudnn_graph_lower.c. */
#ifndef AMPSHIM_CUDNN_GRAPH_BOOK_H
#define AMPSHIM_CUDNN_GRAPH_BOOK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/cuda/cuda_helpers.h"
#include "loader/loader.h"
#include "runtime/threads.h"
#include "shim/cudnn_graph/cudnn_graph_abi.h"

/* The cuDNN functions of the object that defines real (shim/cuda/
 * cuda_helpers.h's one list), or NULL if it lacks any the substitution
 * calls for its own descriptors (AMP_CUDNN_GRAPH_HELPERS) or the stream
 * query the GPU timing needs. */
const struct amp_cudnn_helpers *amp_dnng_of(const void *real);

/* One attribute as the program set it: its value's bytes, as many elements
 * of its type as it gave; for descriptors (BACKEND_DESCRIPTOR), also the
 * serial number of each one's record when it was set (0: none was booked).
 * cuDNN allows a descriptor to be destroyed while another refers to it,
 * and its address may then be given to a new one: a reference resolves
 * only to the record it was taken from (amp_gbook_ref). */
struct amp_gattr {
    int32_t name, type;
    int64_t count;
    size_t bytes;
    unsigned char *value;
    uint64_t *serials; /* count of them, for BACKEND_DESCRIPTOR; else NULL */
};

/* One descriptor the program created. */
struct amp_grec {
    void *desc;
    uint64_t serial; /* this record's own, never reused in the process */
    int type;        /* cudnnBackendDescriptorType_t */
    int opaque;      /* an attribute the book could not keep: its graphs are never lowered */
    int n, cap;
    struct amp_gattr *attrs;
    void *heur_graph;           /* an engine config cuDNN's heuristics filled: their graph, */
    uint64_t heur_graph_serial; /* and its record's serial then */
    struct amp_grec *next;
};

/* The book's lock: every function below but the plan lookup needs it held;
 * a record is the book's, valid while the lock is held. */
void amp_gbook_lock(struct amp_quiet *quiet);
void amp_gbook_unlock(const struct amp_quiet *quiet);

/* Whether descriptors of this type are booked (those a convolution plan is
 * read from); whether desc may be booked (0: certainly not), without the
 * lock: the descriptors a program makes for every call (variant packs)
 * cost no lock at all. */
int amp_gbook_books(int type);
int amp_gbook_maybe(const void *desc);

void amp_gbook_created(void *desc, int type);
void amp_gbook_set(void *desc, int name, int type, int64_t count, const void *array);
struct amp_grec *amp_gbook_find(void *desc);
/* Drops desc's record (when it has one). */
void amp_gbook_forget(void *desc);

/* The attribute `name` of r, or NULL; the i-th descriptor an attribute of
 * type BACKEND_DESCRIPTOR holds (its address, for what the book does not
 * keep, such as a device-properties descriptor), or NULL. */
const struct amp_gattr *amp_gbook_attr(const struct amp_grec *r, int name);
void *amp_gbook_desc(const struct amp_grec *r, int name, int i);
/* The record of that i-th descriptor, only while it is the one the program
 * set; NULL otherwise, and then *stale is set when the reference no longer
 * resolves to what it was (destroyed since, its address perhaps another
 * descriptor's now). Unchanged *stale for a reference that never resolved. */
struct amp_grec *amp_gbook_ref(const struct amp_grec *r, int name, int i, int *stale);
/* The same for the graph cuDNN's heuristics filled r from (heur_graph). */
struct amp_grec *amp_gbook_heur_graph(const struct amp_grec *r, int *stale);
/* Notes that r came from the heuristics of graph (its record). */
void amp_gbook_note_heur_graph(struct amp_grec *r, const struct amp_grec *graph);
/* An INT64 (or INT32, DATA_TYPE, enum) attribute's i-th element, or dflt. */
int64_t amp_gbook_int(const struct amp_grec *r, int name, int i, int64_t dflt);

/* A program's finalized plan of a convolution graph: the row it is decided
 * as, and the private plan that runs it lowered (NULL when none could be
 * had: it runs as made). Owned by the plan table from amp_gplan_put until
 * amp_gplan_take. */
struct amp_gplan {
    const struct amp_cudnn_helpers *f;
    int row;          /* the hook id of its cudnn_graph row */
    double madds;     /* for the size rule */
    int64_t shape[3]; /* as a GEMM: output pixels, output channels, C/groups * filter (the audit) */
    uint64_t converted;        /* elements a down-converting engine converts per execute */
    void *plan, *cfg, *engine; /* the private plan and what it was built of */
    void *knobs[16];
    int n_knobs;
    int64_t engine_index;
    int64_t workspace;    /* the private plan's, answered to the program */
    _Atomic int answered; /* the program asked the plan's workspace and got that answer */
};

/* The plan record of program plan `plan`, or NULL: lock-free, any time. */
struct amp_gplan *amp_gplan_of(void *plan);
/* Keeps p for plan (lock held); 0 when the table is full (p not kept). */
int amp_gplan_put(void *plan, struct amp_gplan *p);
/* Removes plan's record and returns it (lock held), or NULL. */
struct amp_gplan *amp_gplan_take(void *plan);

void amp_cudnn_graph_atfork(enum amp_fork_phase phase);

#endif
