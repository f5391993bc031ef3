/* fork while another thread holds one of the shim's locks (a first call
 * resolving, a caller being classified, a primitive being made) would leave
 * it held for ever in the child. Each part that owns a lock has a handler
 * for the three phases (loader/loader.h); this table calls them in the
 * order the locks nest, outermost first: PREPARE takes them down the table,
 * PARENT and CHILD let them go up it. A new lock gets its row here, at the
 * place its nesting decides. */
#include "shim/fork.h"

#include <pthread.h>

#include "shim/blas/native_onednn.h"
#include "loader/loader.h"
#include "runtime/site_time.h"
#include "runtime/accuracy_audit.h"
#include "runtime/callers.h"
#include "runtime/threads.h"
#include "runtime/log.h"
#include "shim/blas/native_pool.h"
#include "shim/cublas/cublas_audit.h"
#include "shim/cuda/cuda_cupti.h"
#include "shim/cuda/cuda_timing.h"
#include "shim/cudnn_graph/cudnn_graph_lower.h"
#include "shim/onednn/twin.h"
#include "shim/resolve.h"

#include "runtime/sites.h"

static void (*const handlers[])(enum amp_fork_phase) = {
    amp_cublas_audit_atfork, /* the CUDA audit's device arrays (shim/cublas/cublas_audit.c) */
    amp_cuda_timing_atfork,  /* the GPU timing's event pairs (shim/cuda/cuda_timing.c) */
    amp_cupti_atfork,        /* its CUPTI records (shim/cuda/cuda_cupti.c) */
    amp_cudnn_graph_atfork,  /* the cuDNN graph book (shim/cudnn_graph/cudnn_graph_book.c) */
    amp_graph_cache_atfork,  /* the graph engines found (shim/cudnn_graph/cudnn_graph_lower.c) */
    amp_audit_atfork,        /* the audit's site table (runtime/accuracy_audit.c) */
    amp_site_time_atfork,    /* the CPU time's site rows (runtime/site_time.c) */
    amp_sites_atfork,        /* the call-site map (runtime/sites.c) */
    amp_callers_atfork,      /* the object verdicts (runtime/callers.c) */
    amp_resolve_atfork,      /* resolution (shim/resolve.c) */
    amp_walk_atfork,         /* walks of the loaded objects (loader/loader.c) */
    amp_runtime_atfork,      /* the thread registry and block (runtime/threads.c) */
    amp_dnnl_atfork,         /* the oneDNN twins (shim/onednn/v2_twin_cache.c); it logs */
    amp_log_atfork,          /* the log (runtime/log.c) */
    amp_onednn_atfork,       /* the native executor's primitives (shim/blas/native_onednn.c) */
    amp_native_pool_atfork,  /* its worker queue (shim/blas/native_pool.c) */
};
enum { N_HANDLERS = sizeof handlers / sizeof *handlers };

static void prepare(void)
{
    for (int i = 0; i < N_HANDLERS; i++)
        handlers[i](AMP_FORK_PREPARE);
}

static void parent(void)
{
    for (int i = N_HANDLERS - 1; i >= 0; i--)
        handlers[i](AMP_FORK_PARENT);
}

static void child(void)
{
    for (int i = N_HANDLERS - 1; i >= 0; i--)
        handlers[i](AMP_FORK_CHILD);
}

int amp_fork_install(void)
{
    return pthread_atfork(prepare, parent, child) == 0;
}
