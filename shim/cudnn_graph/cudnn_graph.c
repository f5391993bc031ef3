/* The hooks of cuDNN's backend ("graph") API, through which PyTorch 2
 * (aten's cuDNN v8 convolutions, by cudnn-frontend), TensorFlow and JAX run
 * their convolutions. Descriptor calls are forwarded and booked
 * (shim/cudnn_graph/cudnn_graph_book.h): what the program set, never read back.
 * cudnnBackendFinalize of an execution plan of a convolution graph asks
 * the policy and may build a private down-converting plan beside it
 * (shim/cudnn_graph/cudnn_graph_lower.c); the plan's workspace query is answered
 * with the larger workspace; cudnnBackendExecute runs the private plan with
 * the program's variant pack when the policy lowers the call, and the
 * program's plan otherwise or when the private one fails. bf16 has no
 * down-converting engine: such plans run as made. */
#include "runtime/accuracy_audit.h"
#include "runtime/decide.h"
#include "runtime/export.h"
#include "runtime/log.h"
#include "shim/cuda/cuda_timing.h"
#include "shim/cudnn_graph/cudnn_graph_lower.h"
#include "shim/resolve.h"

/* ---- the descriptor calls: forwarded, then booked ---- */

static int create(enum amp_hook_id hook, int type, void **desc)
{
    int status = ((int (*)(int, void **))amp_real(hook))(type, desc);
    if (status == AMP_DNN_OK && desc && *desc && amp_gbook_books(type) && amp_thread_enter()) {
        struct amp_quiet q;
        amp_gbook_lock(&q);
        amp_gbook_created(*desc, type);
        amp_gbook_unlock(&q);
    }
    return status;
}

/* Drops what the book and the plan table hold of desc; when `keep_type`,
 * the descriptor lives on empty (cudnnBackendInitialize). */
static void forget(void *desc, int keep_type)
{
    struct amp_quiet q;
    amp_gbook_lock(&q);
    struct amp_gplan *p = amp_gplan_take(desc);
    struct amp_grec *r = amp_gbook_find(desc);
    int type = r ? r->type : -1;
    amp_gbook_forget(desc);
    if (keep_type && type >= 0)
        amp_gbook_created(desc, type);
    amp_gbook_unlock(&q);
    amp_graph_plan_release(p);
}

static int destroy(enum amp_hook_id hook, void *desc)
{
    if (desc && amp_gbook_maybe(desc) && amp_thread_enter())
        forget(desc, 0);
    return ((int (*)(void *))amp_real(hook))(desc);
}

static int initialize(enum amp_hook_id hook, void *desc)
{
    int status = ((int (*)(void *))amp_real(hook))(desc);
    if (status == AMP_DNN_OK && desc && amp_gbook_maybe(desc) && amp_thread_enter())
        forget(desc, 1);
    return status;
}

static int set_attribute(enum amp_hook_id hook, void *desc, int name, int type, int64_t count,
                         const void *array)
{
    int status = ((int (*)(void *, int, int, int64_t, const void *))amp_real(hook))(
        desc, name, type, count, array);
    if (status == AMP_DNN_OK && amp_gbook_maybe(desc) && amp_thread_enter()) {
        struct amp_quiet q;
        amp_gbook_lock(&q);
        amp_gbook_set(desc, name, type, count, array);
        amp_gbook_unlock(&q);
    }
    return status;
}

/* What cuDNN wrote into the program's descriptors: engine configurations
 * from heuristics (their graph noted), an engine out of such a
 * configuration; and the answer to a lowered plan's workspace query. */
static int get_attribute(enum amp_hook_id hook, void *desc, int name, int type, int64_t requested,
                         int64_t *count, void *array)
{
    int status = ((int (*)(void *, int, int, int64_t, int64_t *, void *))amp_real(hook))(
        desc, name, type, requested, count, array);
    if (status != AMP_DNN_OK || !array || !count || !amp_thread_enter())
        return status;
    if (name == AMP_DNNG_PLAN_WORKSPACE_SIZE && type == AMP_DNNG_TYPE_INT64 && requested >= 1) {
        struct amp_gplan *p = amp_gplan_of(desc);
        if (p && p->plan) {
            *(int64_t *)array = p->workspace;
            atomic_store_explicit(&p->answered, 1, memory_order_release);
        }
    } else if ((name == AMP_DNNG_HEUR_RESULTS || name == AMP_DNNG_CFG_ENGINE) &&
               type == AMP_DNNG_TYPE_BACKEND_DESCRIPTOR && amp_gbook_maybe(desc)) {
        struct amp_quiet q;
        amp_gbook_lock(&q);
        const struct amp_grec *from = amp_gbook_find(desc), *graph = NULL;
        int stale = 0; /* a graph destroyed since: what it gave is not noted */
        if (from)
            graph = name == AMP_DNNG_HEUR_RESULTS
                        ? amp_gbook_ref(from, AMP_DNNG_HEUR_OPERATION_GRAPH, 0, &stale)
                        : amp_gbook_heur_graph(from, &stale);
        for (int64_t i = 0; graph && i < *count && i < requested; i++) {
            struct amp_grec *r = amp_gbook_find(((void **)array)[i]);
            if (r)
                amp_gbook_note_heur_graph(r, graph);
        }
        amp_gbook_unlock(&q);
    }
    return status;
}

static int finalize(enum amp_hook_id hook, void *desc)
{
    int (*real)(void *) = (int (*)(void *))amp_real(hook);
    void *caller = amp_tls_caller;
    int status = real(desc);
    struct amp_thread *t;
    if (status != AMP_DNN_OK || !amp_gbook_maybe(desc) || !(t = amp_thread_enter()))
        return status;
    struct amp_quiet q;
    amp_gbook_lock(&q);
    const struct amp_grec *r = amp_gbook_find(desc);
    int plan = r && r->type == AMP_DNNG_EXECUTION_PLAN;
    amp_gbook_unlock(&q);
    const struct amp_cudnn_helpers *f;
    if (!plan || amp_call_from_library(caller) || !(f = amp_dnng_of((const void *)real)))
        return status;
    struct amp_gplan *p = amp_graph_plan_finalized(f, t, desc), *old = NULL;
    if (p) {
        amp_gbook_lock(&q);
        old = amp_gplan_take(desc);
        if (!amp_gplan_put(desc, p)) { /* more plans at once than the table holds: as made */
            amp_graph_plan_release(old);
            old = p;
        }
        amp_gbook_unlock(&q);
        amp_graph_plan_release(old);
    }
    return status;
}

/* ---- execute ---- */

typedef int (*execute_fn)(void *, void *, void *);

static void bf16_runs_as_made(void)
{
    static _Atomic int said;
    if (!atomic_exchange_explicit(&said, 1, memory_order_relaxed))
        amp_log(AMP_LOG_INFO, "cuDNN graph: bf16 has no down-converting engine; "
                              "fp32 convolution plans run as made");
}

/* Under the audit, a lowered call's site is named in its table (calls and
 * flops; nothing measured: the audit does not run a graph plan both
 * ways); with AMPSHIM_AUDIT=1 the call then runs as made, with follow it
 * is lowered. The dtype it runs in, or -1. */
static int audit_site(const struct amp_gplan *p, int dtype, enum amp_ctl_counter *outcome)
{
    int ignored;
    amp_audit_enter(amp_site_of_call(amp_tls_caller, (enum amp_hook_id)p->row),
                    (enum amp_lowp_dtype)dtype, 2 * p->madds, p->shape, &ignored);
    if (amp_audit_follows())
        return dtype;
    *outcome = amp_not_lowered_after_all(*outcome);
    return -1;
}

static int execute(enum amp_hook_id hook, execute_fn real, void *handle, void *plan, void *pack)
{
    struct amp_thread *t = amp_thread_enter();
    if (!t)
        return real(handle, plan, pack);
    struct amp_gplan *p = amp_gplan_of(plan);
    if (!p) { /* not a convolution plan the book knows, or cuDNN's own */
        amp_count(t, hook,
                  amp_call_from_library(amp_tls_caller) ? AMP_CTL_INTERNAL : AMP_CTL_PASSTHROUGH,
                  1);
        return real(handle, plan, pack);
    }
    enum amp_hook_id row = (enum amp_hook_id)p->row;
    enum amp_ctl_counter outcome;
    int dtype =
        amp_cuda_size_rule(t, row, 0, amp_decide_lower_dtype(t, AMP_DEVICE_CUDA, row, 0, &outcome),
                           p->madds, &outcome);
    if (dtype >= 0 && amp_unlikely(amp_live_load(&amp_rt.cfg.audit) != AMP_AUDIT_OFF))
        dtype = audit_site(p, dtype, &outcome);
    int status = -1;
    /* only a plan whose workspace the program asked for has room for ours */
    if (dtype == AMP_DTYPE_FP16 && p->plan &&
        atomic_load_explicit(&p->answered, memory_order_acquire)) {
        status = p->f->backend_execute(handle, p->plan, pack);
        if (status == AMP_DNN_OK)
            amp_count(t, row, AMP_CTL_CONVERTED, p->converted);
    } else if (dtype == AMP_DTYPE_BF16) {
        bf16_runs_as_made();
    }
    if (status != AMP_DNN_OK) { /* tf32 is cuDNN's own choice on fp32: as made too */
        if (dtype >= 0)
            outcome = amp_not_lowered_after_all(outcome);
        status = real(handle, plan, pack);
    }
    amp_count(t, row, outcome, 1);
    return status;
}

/* An execute whose GPU time is taken (shim/cuda/cuda_timing.h), on the
 * handle's stream, under its plan's row. */
__attribute__((noinline)) static int execute_timed(enum amp_hook_id hook, execute_fn real,
                                                   void *handle, void *plan, void *pack)
{
    struct amp_thread *t = amp_thread_enter();
    const struct amp_cudnn_helpers *f = t ? amp_dnng_of((const void *)real) : NULL;
    struct amp_gplan *p = amp_gplan_of(plan);
    enum amp_hook_id row = p ? (enum amp_hook_id)p->row : hook;
    struct amp_cuda_timed tm = {.pair = -1};
    void *stream = NULL;
    if (f && f->get_stream(handle, &stream) == AMP_DNN_OK)
        amp_cuda_time_start(&tm, t, row, stream);
    int status = execute(hook, real, handle, plan, pack);
    amp_cuda_time_end(&tm, t, row, stream);
    return status;
}

/* ---- the doors: each signature, then the room above ---- */

AMP_EXPORT int cudnnBackendCreateDescriptor(int type, void **desc)
{
    return create(AMP_HOOK_cudnnBackendCreateDescriptor, type, desc);
}

AMP_EXPORT int cudnnBackendDestroyDescriptor(void *desc)
{
    return destroy(AMP_HOOK_cudnnBackendDestroyDescriptor, desc);
}

AMP_EXPORT int cudnnBackendInitialize(void *desc)
{
    return initialize(AMP_HOOK_cudnnBackendInitialize, desc);
}

AMP_EXPORT int cudnnBackendSetAttribute(void *desc, int name, int type, int64_t count,
                                        const void *array)
{
    return set_attribute(AMP_HOOK_cudnnBackendSetAttribute, desc, name, type, count, array);
}

AMP_EXPORT int cudnnBackendGetAttribute(void *desc, int name, int type, int64_t requested,
                                        int64_t *count, void *array)
{
    return get_attribute(AMP_HOOK_cudnnBackendGetAttribute, desc, name, type, requested, count,
                         array);
}

AMP_EXPORT int cudnnBackendFinalize(void *desc)
{
    AMP_NOTE_CALLER();
    return finalize(AMP_HOOK_cudnnBackendFinalize, desc);
}

AMP_EXPORT int cudnnBackendExecute(void *handle, void *plan, void *pack)
{
    AMP_NOTE_CALLER();
    execute_fn real = (execute_fn)amp_real(AMP_HOOK_cudnnBackendExecute);
    return amp_likely(!amp_cuda_timing_due())
               ? execute(AMP_HOOK_cudnnBackendExecute, real, handle, plan, pack)
               : execute_timed(AMP_HOOK_cudnnBackendExecute, real, handle, plan, pack);
}
