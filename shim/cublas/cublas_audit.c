/* The accuracy audit of a lowered cuBLAS GEMM (cublasSgemm, cublasSgemmEx,
 * cublasGemmEx with fp32 types, and cublasSgemv / cublasSger, which lower
 * as GemmEx with one column or inner dimension 1). Everything stays on the
 * device and on the call's stream, done by cuBLAS and the CUDA runtime
 * themselves (no kernels of ampshim's, no synchronisation):
 *
 *   S = C                      cudaMemcpy2DAsync (compact, ld m)
 *   S = the call as made       the program's own entry point, output S
 *   C = the lowered call       GemmEx with the fast compute type
 *   D = C - S                  cublasSgeam on the program's handle
 *   |D|, |S| -> the site's     cublasSnrm2 on a private handle in device
 *   results on the device      pointer mode, bound to the call's stream
 *   C = S                      unless AMPSHIM_AUDIT=follow
 *
 * so the program's handle is used only for calls it would accept from the
 * program (host scalars), never reconfigured. The norms accumulate in a
 * device array per call site and device (1024 calls), taken from the shim's
 * pool on the call's stream, so a site called from threads on several
 * devices (DataParallel) keeps each device's norms on that device, written
 * by a private handle of that device. An event recorded after each call's
 * norms (the next call on another stream waits for it) marks them done.
 * They are read back when ampctl asks, at exit, and when a site's array is
 * full: on a stream of the shim's own per device (created non-blocking, so
 * it never synchronises with the legacy stream), which waits for the event
 * and copies to the host; the one host wait is that stream's. The read-back
 * runs with the thread's capture mode relaxed
 * (cudaThreadExchangeStreamCaptureMode), so it can never invalidate a
 * graph another thread is capturing in the default global mode. Only with
 * host pointer mode (the helpers take host scalars), m n < 2^31, a device
 * below AMP_CUDA_DEVICES, every helper present, and the cuBLAS of the first
 * audited call (its helpers; a second cuBLAS major's calls are not
 * audited); otherwise, or when scratch cannot be had, the call is not
 * audited and runs as the mode says: as made with AMPSHIM_AUDIT=1, lowered
 * with follow. The private handles are destroyed when their thread ends. */
#include "shim/cublas/cublas_audit.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "kernels/cpu/compare.h"
#include "runtime/accuracy_audit.h"
#include "runtime/decide.h"
#include "runtime/log.h"
#include "shim/cublas/cublas_abi.h"
#include "shim/cublas/cublas_gemm.h"
#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_scratch.h"
#include "loader/loader.h"
#include "shim/resolve.h"

enum {
    CAPACITY = 1024,
    OP_N = 0,
    POINTER_DEVICE = 1,
    OK = AMP_CUBLAS_STATUS_SUCCESS,
    EVENT_DISABLE_TIMING = 2, /* cudaEventDisableTiming */
    STREAM_NON_BLOCKING = 1,  /* cudaStreamNonBlocking */
    DEVICE_TO_HOST = 2,       /* cudaMemcpyDeviceToHost */
};

static struct {
    const struct amp_cublas_helpers *blas; /* the first audited call's cuBLAS */
    int (*nrm2)(void *, int, const float *, int, float *);
    const struct amp_cudart_helpers *rt;
    int complete;
} f;

/* Per call site and device: the device array of (|lowered - fp32|, |fp32|)
 * pairs not read back yet, and the event after the latest. Under `lock`,
 * which also covers enqueuing a call's norms, so a read-back never races a
 * slot being filled. */
struct norms {
    float *dev;
    void *done;
    uint32_t pending;
};
static struct norms results[AMP_CTL_AUDIT_SITES][AMP_CUDA_DEVICES];
static void *read_stream[AMP_CUDA_DEVICES]; /* the read-back's, per device */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int finished; /* exit read everything back: the runtime may be gone after */
static struct amp_cuda_own_handle own; /* device pointer mode: the norms land on the device */

static void fold(void);

static void final_fold(void)
{
    fold();
    pthread_mutex_lock(&lock);
    finished = 1;
    pthread_mutex_unlock(&lock);
}

static int device_pointers(void *h)
{
    return f.blas->set_pointer_mode(h, POINTER_DEVICE);
}

/* The helpers, from the cuBLAS of the first audited call's real function
 * (shim/cuda/cuda_helpers.h), and the CUDA runtime's. */
static const void *_Atomic first_real;

static void resolve_helpers(void)
{
    const void *real = atomic_load(&first_real);
    const struct amp_cublas_helpers *b = f.blas = amp_cublas_helpers(real);
    const struct amp_cudart_helpers *rt = f.rt = amp_cudart_helpers();
    /* A hooked name: the same object's own. */
    *(void **)&f.nrm2 = amp_sibling_symbol(real, "cublasSnrm2_v2");
    f.complete = b->get_stream && b->get_pointer_mode && b->create && b->destroy && b->set_stream &&
                 b->set_pointer_mode && b->geam && f.nrm2 && rt->set_device && rt->event_create &&
                 rt->event_record && rt->stream_wait_event && rt->stream_create &&
                 rt->stream_sync && rt->memcpy_async && rt->exchange_capture_mode;
    if (!f.complete)
        amp_log(AMP_LOG_INFO, "audit: the CUDA libraries lack a function the audit of cuBLAS "
                              "calls needs; those calls are not audited");
    own = (struct amp_cuda_own_handle){.create = b->create,
                                       .destroy = b->destroy,
                                       .set_stream = b->set_stream,
                                       .setup = device_pointers};
    f.complete &= amp_cuda_own_handle_init(&own);
    if (f.complete) {
        amp_audit_set_device_fold(fold);
        atexit(final_fold); /* after the runtime's own atexit: runs before it */
    }
}

/* Whether the audit can run a call of the cuBLAS that defines real. */
static int helpers(const void *real)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    const void *none = NULL;
    atomic_compare_exchange_strong(&first_real, &none, real);
    pthread_once(&once, resolve_helpers);
    return f.complete && amp_cublas_helpers(real) == f.blas;
}

/* Reads one site's norms on device d back into host (under `lock`, on
 * device d): 1 when they are there. */
static int read_back(struct norms *r, int d, float *host)
{
    const struct amp_cudart_helpers *rt = f.rt;
    if (!read_stream[d] && rt->stream_create(&read_stream[d], STREAM_NON_BLOCKING) != 0)
        read_stream[d] = NULL;
    return read_stream[d] && rt->stream_wait_event(read_stream[d], r->done, 0) == 0 &&
           rt->memcpy_async(host, r->dev, 2 * r->pending * sizeof(float), DEVICE_TO_HOST,
                            read_stream[d]) == 0 &&
           rt->stream_sync(read_stream[d]) == 0;
}

static void record(struct amp_audit_site *site, const float *host, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++) {
        struct amp_compare_sums s = {.diff2 = (double)host[2 * j] * host[2 * j],
                                     .ref2 = (double)host[2 * j + 1] * host[2 * j + 1]};
        /* A norm of Inf or NaN: lowering made Inf or NaN (the fp32 one
         * finite), or the program's own product did (not counted). */
        int low_bad = !(host[2 * j] <= 3.4e38f), ref_bad = !(host[2 * j + 1] <= 3.4e38f);
        if (ref_bad)
            continue;
        struct amp_audit_result res = {.elem_max = -1, .nonfinite_call = low_bad};
        res.err = low_bad ? INFINITY : amp_compare_relative_error(&s);
        amp_audit_record(site, &res);
    }
}

/* Reads back and records a site's pending norms on device d (the current
 * one), the read-back begun. Under `lock`. */
static void take_in(int site, int d)
{
    static float host[2 * CAPACITY];
    struct norms *r = &results[site][d];
    uint32_t n = r->pending;
    int ok = read_back(r, d, host);
    r->pending = 0;
    if (ok)
        record(&amp_ctl->audit_site[site], host, n);
}

/* Reads back and records every site's pending norms. Under `lock`. */
static void fold_locked(void)
{
    if (finished || !amp_ctl || !f.complete)
        return;
    int any = 0;
    for (int i = 0; i < AMP_CTL_AUDIT_SITES; i++)
        for (int d = 0; d < AMP_CUDA_DEVICES; d++)
            any |= results[i][d].pending != 0;
    if (!any)
        return;
    const struct amp_cudart_helpers *rt = f.rt;
    struct amp_cuda_readback back;
    if (!amp_cuda_readback_begin(&back))
        return;
    for (int d = 0; d < AMP_CUDA_DEVICES; d++) {
        int on_device = 0;
        for (int i = 0; i < AMP_CTL_AUDIT_SITES; i++) {
            struct norms *r = &results[i][d];
            if (!r->pending)
                continue;
            if (!on_device && rt->set_device(d) != 0)
                break;
            on_device = 1;
            take_in(i, d);
        }
    }
    amp_cuda_readback_end(&back);
}

static void fold(void)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&lock, &quiet);
    fold_locked();
    amp_unlock_quietly(&lock, &quiet);
}

/* AMPSHIM_AUDIT=auto: the site's norms on this device are read back as
 * soon as the GPU has computed them, found by an event query at the site's
 * next call (no wait for the device in a hooked call: the copy waits only
 * for norms already there), so its decision follows within the calls the
 * program queued meanwhile. Under `lock`. */
static void fold_when_ready(int site, int d)
{
    struct norms *r = &results[site][d];
    if (!r->pending || finished || !amp_ctl || !f.complete || f.rt->event_query(r->done) != 0)
        return;
    struct amp_cuda_readback back;
    if (!amp_cuda_readback_begin(&back))
        return;
    take_in(site, d);
    amp_cuda_readback_end(&back);
}

/* A lowered call the audit does not run both ways (the sampling skips it,
 * the site table is full, or what the audit needs cannot be had) runs as the
 * program keeps it: as made with AMPSHIM_AUDIT=1, which never changes the
 * program's results, lowered with follow, and with auto as its site stands
 * (its pending verdicts taken in first, when the GPU has them). */
static int not_audited(void *gemmex, int is64, const struct amp_gemmex_args *a,
                       struct amp_audit_site *site, int *run_as_made)
{
    if (site && amp_audit_auto() && amp_ctl) {
        int d = amp_cuda_device();
        if (d >= 0 && results[site - amp_ctl->audit_site][d].pending) {
            struct amp_quiet quiet;
            amp_lock_quietly(&lock, &quiet);
            fold_when_ready((int)(site - amp_ctl->audit_site), d);
            amp_unlock_quietly(&lock, &quiet);
        }
    }
    double flops = 2.0 * (double)a->m * (double)a->n * (double)a->k;
    if (amp_audit_keeps_lowered(site, flops)) {
        amp_audit_ran_lowered(site, flops);
        return amp_cublas_run_gemmex(gemmex, is64, a, a->compute);
    }
    *run_as_made = 1; /* counted so by the caller */
    return OK;
}

int amp_cublas_audited(const struct amp_cublas_call *c, void *gemmex,
                       const struct amp_gemmex_args *a, int *run_as_made)
{
    *run_as_made = 0;
    enum amp_hook_id hook = c->hook;
    int is64 = c->is64;
    int64_t shape[3] = {a->m, a->n, a->k};
    int audit_this;
    struct amp_audit_site *site =
        amp_audit_enter(amp_site_of_call(amp_tls_caller, hook),
                        (enum amp_lowp_dtype)amp_cublas_compute_dtype(a->compute),
                        2.0 * (double)a->m * (double)a->n * (double)a->k, shape, &audit_this);
    if (!site || !audit_this)
        return not_audited(gemmex, is64, a, site, run_as_made);
    int mode, device = -1;
    void *stream = NULL;
    int64_t m = a->m, n = a->n;
    size_t bytes = (size_t)(m > 0 ? m : 0) * (size_t)(n > 0 ? n : 0) * sizeof(float);
    if (!helpers(c->real) || m <= 0 || n <= 0 || a->k <= 0 || m * n > 0x7fffffff || a->ldc < m ||
        f.blas->get_pointer_mode(a->h, &mode) != OK || mode != AMP_CUBLAS_POINTER_MODE_HOST ||
        f.blas->get_stream(a->h, &stream) != OK || (device = amp_cuda_device()) < 0)
        return not_audited(gemmex, is64, a, site, run_as_made);
    struct amp_cuda_scratch scratch = {.stream = stream};
    float *S = amp_cuda_take(&scratch, bytes), *D = amp_cuda_take(&scratch, bytes);
    size_t pitch = (size_t)a->ldc * sizeof(float), width = (size_t)m * sizeof(float);
    /* S = C as it is, then the call as the program made it into S. */
    if (!S || !D || !amp_cuda_copy_2d(S, width, a->C, pitch, width, (size_t)n, stream) ||
        c->as_made(c, S, m) != OK) {
        amp_cuda_scratch_end(&scratch);
        return not_audited(gemmex, is64, a, site, run_as_made);
    }
    int status = amp_cublas_run_gemmex(gemmex, is64, a, a->compute);
    if (status != OK) {
        amp_cuda_scratch_end(&scratch);
        return status;
    }
    static const float one = 1.0f, minus_one = -1.0f;
    struct amp_quiet quiet;
    amp_lock_quietly(&lock, &quiet);
    struct norms *r = &results[site - amp_ctl->audit_site][device];
    if (!r->dev && !finished) {
        r->dev = amp_cuda_keep(2 * CAPACITY * sizeof(float), stream);
        if (r->dev && f.rt->event_create(&r->done, EVENT_DISABLE_TIMING) != 0)
            r->done = NULL;
    }
    void *priv = r->dev && r->done && !finished ? amp_cuda_own_handle(&own, stream) : NULL;
    /* A call on another stream than the pending ones': after them, so the
     * event recorded after it covers them all. */
    if (priv && r->pending && f.rt->stream_wait_event(stream, r->done, 0) != 0)
        priv = NULL;
    if (priv) {
        float *slot = r->dev + 2 * r->pending;
        int n2 = (int)(m * n);
        if (f.blas->geam(a->h, OP_N, OP_N, (int)m, (int)n, &one, a->C, (int)a->ldc, &minus_one, S,
                         (int)m, D, (int)m) == OK &&
            f.nrm2(priv, n2, D, 1, slot) == OK && f.nrm2(priv, n2, S, 1, slot + 1) == OK &&
            f.rt->event_record(r->done, stream) == 0 && ++r->pending == CAPACITY)
            fold_locked();
        else if (amp_audit_auto())
            fold_when_ready((int)(site - amp_ctl->audit_site), device);
    }
    amp_unlock_quietly(&lock, &quiet);
    /* The program keeps the fp32 result unless it follows the lowered one. */
    if (amp_audit_follows())
        amp_audit_ran_lowered(site, 2.0 * (double)m * (double)n * (double)a->k);
    else if (!amp_cuda_copy_2d(a->C, pitch, S, width, width, (size_t)n, stream))
        amp_log(AMP_LOG_WARN, "audit: could not copy an fp32 result back: the lowered one stays");
    amp_cuda_scratch_end(&scratch);
    return status;
}

void amp_cublas_audit_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&lock, phase);
    if (phase == AMP_FORK_CHILD)
        finished = 1;
}
