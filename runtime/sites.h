/* Call sites: where a product comes from in the program's own code. One
 * map serves the accuracy audit, AMPSHIM_AUDIT=auto, the CPU time table and
 * the policy (runtime/sites.c). A call's site is found by walking past the
 * frames of frameworks (policy/data/frameworks.txt) from the hook's return
 * address: in a Python process to the Python frame that made the product
 * (runtime/python_frames.h), elsewhere to the first native frame outside
 * them. On the way the walk notes the op around the product: a frame that is
 * an op of a CPU float32 list (torch's at::_ops::OP / at::native::OP, the
 * Python functions of policy/data/op_frames.txt). Sites are keyed by a hash
 * of their full names, never by a cut one. */
#ifndef AMPSHIM_SITES_H
#define AMPSHIM_SITES_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "loader/atfork.h"
#include "policy/policy.h"

struct amp_site {
    uint64_t key;                        /* hash of kind, names, line, op around and hook */
    uint64_t object_hash, function_hash; /* amp_policy_name_hash of the full names */
    uint16_t hook;
    uint8_t python;       /* a Python frame: object is its file, function its qualname */
    uint8_t category[2];  /* what the policy's Python entries give it (accumulates), or
                            AMP_CAT_UNSET */
    int16_t op_around;    /* the float32-list op whose frame lies between the site and the
                            call, or -1 */
    int16_t autocast_op;  /* the innermost op of the CPU lower-precision list (an op
                            torch.autocast lowers: conv2d, linear, ...) whose frame lies
                            between, or -1: a site known by it (amp_site_op) is not held
                            to its output's spread (amp_audit_holds_spread) */
    uint32_t line;        /* Python sites */
    uintptr_t offset;     /* native sites: the return address in its object */
    const char *object;   /* full: a native object's basename, a Python file's path */
    const char *function; /* full: "" when the object names none */
    _Atomic int16_t audit_slot, time_slot; /* index + 1 in the control block's tables; 0
                                              none yet, -1 no room */
    _Atomic uint64_t kept_by_op;           /* calls op_around kept fp32 (amp_site_kept_by_op) */
    /* Recurrences (shim/blas/blas_recurrence.h): the fingerprints of the last
     * output a gemm of this site kept lowered and of that call's operands;
     * whether a later call was a step (the site is a recurrence), and its
     * calls kept fp32 since */
    _Atomic uint64_t last_output, last_a, last_b;
    _Atomic uint8_t recurrent;
    /* a lowered output of this site went into a LAPACK solve or
     * factorisation (runtime/products.h): its name, and the calls
     * kept fp32 since */
    _Atomic uint8_t consumed;
    _Atomic int16_t consumer_hook;
    _Atomic uint64_t consumer_calls;
    _Atomic uint64_t recurrence_calls;
};

/* The op a site is known by (the audit's op around): its fp32-list op, else
 * its lower-list op, else -1 (also for NULL). */
static inline int amp_site_op(const struct amp_site *w)
{
    return !w ? -1 : w->op_around >= 0 ? w->op_around : w->autocast_op;
}

/* The site of the current call of hook from return_address; NULL when the
 * map is full. A thread's calls from one place find theirs in a few loads;
 * a new place is named once (the loader is asked outside any lock). */
const struct amp_site *amp_site_of_call(void *return_address, enum amp_hook_id hook);

/* A site's names for the tables: "kmeans.py" / "42 assign" for a Python
 * site, the object's basename and function for a native one; cut to the
 * sizes given. */
void amp_site_display(const struct amp_site *s, char *object, size_t object_size, char *function,
                      size_t function_size);

/* A call of site s that its op_around kept fp32: counted for the report. */
void amp_site_kept_by_op(const struct amp_site *s);

/* The report's lines on sites (runtime/report.c): the calls the op around
 * them kept fp32, by op, and, in a Python process whose frames ampshim
 * cannot read, that its sites are native ones. Nothing when there is
 * nothing to say. */
void amp_sites_report(FILE *out);

/* After a dlclose that unloaded something: forgets the answers cached for
 * addresses no loaded object holds. Sites themselves stay (their names are
 * copies). */
void amp_sites_forget_unloaded(void);

/* fork's share. */
void amp_sites_atfork(enum amp_fork_phase phase);

#endif
