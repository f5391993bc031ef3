/* The accuracy audit of a lowered oneDNN primitive (shim/onednn/primitive_audit.c),
 * asked by the door (shim/onednn/primitive.c) for a call the policy and the
 * gate lower while AMPSHIM_AUDIT is on. */
#ifndef AMPSHIM_ONEDNN_PRIMITIVE_AUDIT_H
#define AMPSHIM_ONEDNN_PRIMITIVE_AUDIT_H

#include "runtime/accuracy_audit.h"
#include "shim/onednn/twin.h"

/* How the door runs the call. */
enum amp_dnnl_audit_way {
    AMP_DNNL_AUDIT_RAN = 0, /* run both ways here: the program has its result (rc) */
    AMP_DNNL_AUDIT_LOWER,   /* not audited, and the site keeps lowered (follow, auto's
                               lowered sites, a call-site entry of the user's): run the twin */
    AMP_DNNL_AUDIT_AS_MADE, /* not audited, kept as made (AMPSHIM_AUDIT=1, auto's fp32) */
    /* < 0: the twin's answer (-1, AMP_DNNL_NO_KERNEL): nothing of the program's written */
};

struct amp_dnnl_audit_result {
    struct amp_audit_site *site; /* the call's site (NULL: none) */
    int rc;                      /* AMP_DNNL_AUDIT_RAN: the program's primitive's return */
    uint64_t converted;          /* AMP_DNNL_AUDIT_RAN: elements the twin converted */
};

/* Counts the call of c at its site and, when it is one to audit, runs it
 * both ways: the twin in dtype, then the program's primitive prim as made,
 * each on the program's arguments and timed, the outputs compared and
 * recorded. The program keeps the fp32 result (the lowered one with
 * AMPSHIM_AUDIT=follow). */
int amp_dnnl_audit(const struct amp_dnnl_call *c, struct amp_thread *t, int dtype,
                   amp_dnnl_execute_fn real, void *prim, void *stream, int nargs, const void *args,
                   struct amp_dnnl_audit_result *r);

#endif
