/* cuDNN's backend ("graph") API: the hooks (shim/cudnn_graph/cudnn_graph.c), the
 * book of what the program set (cudnn_graph_book.h) and the engine
 * substitution at plan finalize (cudnn_graph_lower.c). */
#ifndef AMPSHIM_CUDNN_GRAPH_H
#define AMPSHIM_CUDNN_GRAPH_H

#include "shim/cuda/cuda_abi.h"
#include "shim/cudnn_graph/cudnn_graph_book.h"

struct amp_thread;

/* The program finalized `plan` (cuDNN said yes): its record when the plan's
 * graph is one convolution (alone or fused with pointwise operations),
 * with a private down-converting plan when the policy lowers it to fp16
 * for thread t and an engine takes it; NULL for any other plan. */
struct amp_gplan *amp_graph_plan_finalized(const struct amp_cudnn_helpers *f, struct amp_thread *t,
                                           void *plan);

/* Destroys the private plan and what it was built of, and frees p. */
void amp_graph_plan_release(struct amp_gplan *p);

/* fork's share: the engine cache's lock. */
void amp_graph_cache_atfork(enum amp_fork_phase phase);

#endif
