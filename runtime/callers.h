/* Who calls: each hooked call's return address named, classified (a
 * numerical library calling itself?), matched against AMPSHIM_CALLERS and
 * the policy's call-site entries, every answer cached by address
 * (runtime/callers.c). */
#ifndef AMPSHIM_CALLERS_H
#define AMPSHIM_CALLERS_H

#include <stdint.h>

#include "loader/loader.h"
#include "policy/policy.h"

/* Is the code at this return address a numerical library calling itself?
 * Cached. */
enum amp_library {
    AMP_NOT_LIBRARY,
    /* an object that defines hooked entry points (a BLAS, a LAPACK), or a
     * CUDA library of a hooked family */
    AMP_LIBRARY_ITSELF,
    /* a numerical library outside them (policy/data/libraries.txt): a
     * call-site policy entry naming it wins */
    AMP_LIBRARY_LISTED,
};
int amp_caller_is_library(void *return_address); /* enum amp_library */

/* The same, with the thread's last call site remembered in front of the
 * shared cache: a hot loop calls from one site. */
extern __thread void *amp_tls_library_site __attribute__((tls_model("initial-exec")));
extern __thread uint8_t amp_tls_library_answer __attribute__((tls_model("initial-exec")));

static inline int amp_call_from_library(void *return_address)
{
    if (__builtin_expect(return_address == amp_tls_library_site, 1))
        return amp_tls_library_answer;
    int answer = amp_caller_is_library(return_address);
    amp_tls_library_site = return_address;
    amp_tls_library_answer = (uint8_t)answer;
    return answer;
}

/* The names a caller goes by in AMPSHIM_CALLERS, call-site policy entries
 * and the audit: its object's path (matched by basename) and its function,
 * as dladdr(3) names them. Code in no loaded object (JIT code, an anonymous
 * executable mapping) is the object "?" with no function: `?`, `?:*` and
 * `*` select it. */
#define AMP_CALLER_UNNAMED "?"
struct amp_caller {
    const char *object;   /* a path, or AMP_CALLER_UNNAMED */
    const char *function; /* NULL when dladdr names none */
    uintptr_t base;       /* the object's load address; 0 when unnamed */
};
void amp_caller_name(void *return_address, struct amp_caller *c);

/* After a dlclose that unloaded something: forgets every answer cached for
 * an address no loaded object holds any more, and makes every thread drop
 * its last-site answer. Never under a lock of ours (it asks the loader). */
void amp_callers_forget_unloaded(void);

/* Whether the object a return address lies in is one of
 * policy/data/onednn_callers.txt's (torch's ideep), cached by address:
 * dladdr takes 0.3 ms in libtorch_cpu (it scans the symbol table for the
 * name), and ideep makes a convolution descriptor for every call. */
int amp_caller_is_onednn_caller(void *return_address);

/* Does AMPSHIM_CALLERS select the code at this return address? Cached. */
int amp_caller_selected(void *return_address);

/* The category the policy's call-site entries (NAME@CALLER=CATEGORY) give a
 * call of hook from this return address, or AMP_CAT_UNSET. Cached. */
int amp_caller_site_category(void *return_address, enum amp_device dev, enum amp_hook_id hook,
                             int accumulates);

/* fork's share: the object verdicts' lock. */
void amp_callers_atfork(enum amp_fork_phase phase);

#endif
