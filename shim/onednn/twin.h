/* The oneDNN family's rooms: what a primitive the program executes is, and
 * its low-precision twin (a primitive of the same kind, direction, shapes and
 * attributes whose inputs are bf16 or fp16 and whose outputs are the
 * program's own fp32 memory). One implementation per major version of
 * oneDNN's C API: shim/onednn/v2_*.c for 2.x (libdnnl.so.2; v2.h names its
 * rooms); the door, shim/onednn/primitive.c, knows none of them.
 *
 * A twin is made from the program's own primitive descriptor: its op
 * descriptor copied with the inputs of its direction (forward: src and
 * weights; backward data: diff_dst and weights; backward weights: src and
 * diff_dst) turned into bf16 or fp16 in whatever layout oneDNN prefers, and
 * its outputs, bias included, left exactly as the program's primitive has
 * them (fp32, the program's layout), so the twin writes the program's memory
 * itself. Its attributes are a clone of the program's (post-ops and their
 * arguments, output scales, fpmath mode), with a scratchpad the shim owns
 * (the thread's scratch). The inputs are converted by oneDNN reorders into
 * that scratch; every other argument of the call (post-op operands, runtime
 * scales) is passed to the twin as the program passed it.
 *
 * A twin is only made where oneDNN has a native kernel for it (its
 * implementation is not a reference one): elsewhere the primitive runs as
 * made, and one info line says so. Twins are cached by what they depend on
 * (the engine, the kind, direction and geometry, the memory descriptors of
 * the program's primitive and a digest of its attributes), not by any
 * address of the program's: torch makes a primitive for every call. The
 * program's primitive descriptor, primitives and memory are only read. */
#ifndef AMPSHIM_ONEDNN_TWIN_H
#define AMPSHIM_ONEDNN_TWIN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/threads.h"

/* A primitive being executed, as far as the policy needs it. */
struct amp_dnnl_call {
    int hook;         /* its primitive row (dnnl_convolution_2d_forward, ...), or -1 when
                      ampshim never lowers it (reorders, eltwise, not fp32, not a CPU
                      engine, not oneDNN 2.x) */
    double madds;     /* multiply-adds, for the size rule and the CPU time (an RNN's are
                         not counted: 1e300, past any size rule, a time with no flops) */
    int64_t shape[3]; /* as a product, for the audit's table: rows and columns of the
                         large side (forward: dst) and the multiply-adds per element */
    const void *pd;   /* its primitive descriptor */
    int lowered;      /* a convolution whose descriptor the shim lowered for a listed caller
                       (amp_dnnl_desc_lower): it is run as made, counted lowered */
};

typedef int (*amp_dnnl_execute_fn)(void *prim, void *stream, int nargs, const void *args);

/* Fills c for the primitive prim; real_execute is the program's
 * dnnl_primitive_execute, by which the library is found. Cheap: a few
 * queries of the primitive descriptor. */
void amp_dnnl_classify(void *prim, amp_dnnl_execute_fn real_execute, struct amp_dnnl_call *c);

/* amp_dnnl_twin_run's and amp_dnnl_desc_lower's answer when oneDNN has no
 * native kernel for the lowered primitive on this CPU (no bf16 units, no
 * fp16 convolutions): counted nounits. */
#define AMP_DNNL_NO_KERNEL (-2)

/* Runs c's twin in dtype (AMP_DTYPE_BF16 or AMP_DTYPE_FP16) on the
 * program's stream and arguments: its inputs converted into t's scratch by
 * oneDNN reorders, the twin writing the program's outputs. Returns 0 when
 * it ran (*converted: elements converted; *built: 1 when this call made the
 * twin, oneDNN's kernel generation then part of its time), else, with
 * nothing of the program's written, AMP_DNNL_NO_KERNEL (no native kernel
 * here) or -1 (an attribute the twin cannot copy, no scratch, a failure). */
int amp_dnnl_twin_run(const struct amp_dnnl_call *c, struct amp_thread *t, int dtype,
                      amp_dnnl_execute_fn real_execute, void *stream, int nargs, const void *args,
                      uint64_t *converted, int *built);

/* Lowering in the descriptor (for the callers of policy/data/onednn_callers.txt):
 * after the program's convolution descriptor function filled desc for
 * direction dir (0 forward, 1 backward data, 2 backward weights), the
 * primitive row it belongs to (-1: not fp32 inputs in "any" layout; real_fn,
 * the real descriptor function, finds the library) and its
 * multiply-adds; then, if the policy lowers it, amp_dnnl_desc_lower asks for
 * dtype inputs in it and remembers it, so that its executions count. */
int amp_dnnl_desc_row(const void *desc, int dir, void *real_fn, double *madds);

/* The decision for a convolution made in its descriptor by caller (the
 * return address of the descriptor call), of primitive row row and madds
 * multiply-adds: the dtype to ask for (AMP_DTYPE_BF16 or AMP_DTYPE_FP16)
 * when the policy (or AMPSHIM_AUDIT=auto's verdict for the call site) and
 * the CPU gate lower it, else -1; *explicit_request: the user named the
 * dtype. Shared by oneDNN 2.x (desc_init.c, with amp_cpu_gate) and 3.x
 * inside a library (v3_inside.c, with a gate of its own: the library's
 * oneDNN, not the shim's, answers whether a kernel is native). */
typedef enum amp_cpu_gate (*amp_dnnl_gate_fn)(enum amp_lowp_dtype dtype, double madds,
                                              int explicit_request);
int amp_dnnl_desc_decide(struct amp_thread *t, int row, double madds, void *caller,
                         int *explicit_request, amp_dnnl_gate_fn gate);
/* It lowers desc only where oneDNN makes a native (not reference) kernel
 * for the lowered convolution on this CPU (asked once per shape and dtype):
 * returns 0 when it lowered desc, AMP_DNNL_NO_KERNEL when oneDNN has none
 * (desc untouched, one info line per row and dtype), -1 otherwise (desc
 * untouched). */
int amp_dnnl_desc_lower(void *desc, int dir, int dtype);

/* The fallback at primitive-descriptor creation (dnnl_primitive_desc_create,
 * dnnl_primitive_desc_iterator_create): when the program's call failed on an
 * op descriptor this thread lowered in amp_dnnl_desc_lower (a kernel the
 * probe found was refused with the caller's attributes or hint), *fp32 is
 * filled with that descriptor as the caller made it (fp32 inputs) and 1
 * returned, for the call to be made again on it; else 0. */
int amp_dnnl_desc_unlowered(const void *op_desc, void *fp32, size_t fp32_size);
/* The size fp32 must have: a oneDNN 2.x convolution descriptor. */
size_t amp_dnnl_conv_desc_size(void);

/* The memory a call of c writes (its direction's outputs: dst, diff_src,
 * diff_weights and diff_bias where the call passes one), for the audit
 * (shim/onednn/primitive_audit.c) to keep aside and compare, padding
 * included. Returns how many, or -1 when one is not fp32 memory whose
 * pointer oneDNN gives (or c has no twin). *reads: 0 when the call only
 * writes them (no sum post-op reads what they held), else 1. */
#define AMP_DNNL_OUTPUTS_MAX 2
struct amp_dnnl_output {
    float *p;
    size_t elems;
};
int amp_dnnl_outputs(const struct amp_dnnl_call *c, int nargs, const void *args,
                     struct amp_dnnl_output out[AMP_DNNL_OUTPUTS_MAX], int *reads);

/* The wing's tables of descriptor keys (a shape lowered, a shape with no
 * native kernel): open addressing over AMP_DNNL_KEYS slots, keys inserted
 * once and never removed (a program has few shapes; a full table
 * remembers no more), 0 meaning empty. Whether key is in table; with
 * insert, put there if not (1 when it is there after). */
#define AMP_DNNL_KEYS 4096
static inline int amp_dnnl_key_find(_Atomic uint64_t *table, uint64_t key, int insert)
{
    for (unsigned i = 0, slot = (unsigned)(key % AMP_DNNL_KEYS); i < AMP_DNNL_KEYS;
         i++, slot = (slot + 1) % AMP_DNNL_KEYS) {
        uint64_t seen = atomic_load_explicit(&table[slot], memory_order_acquire);
        if (seen == key)
            return 1;
        if (seen == 0) {
            if (!insert)
                return 0;
            if (atomic_compare_exchange_strong(&table[slot], &seen, key) || seen == key)
                return 1;
        }
    }
    return 0;
}

/* fork's share: the twin cache's lock. */
void amp_dnnl_atfork(enum amp_fork_phase phase);

#endif
