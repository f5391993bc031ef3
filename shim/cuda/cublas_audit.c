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
 * device array per call site (1024 calls); they are read back (the one
 * synchronisation: cudaDeviceSynchronize, then cudaMemcpy) when ampctl asks,
 * at exit, and when a site's array is full. Only with host pointer mode
 * (the helpers take host scalars), m n < 2^31, and every helper present;
 * otherwise, or when scratch cannot be had, the call is not audited and runs
 * as the mode says: as made with AMPSHIM_AUDIT=1, lowered with follow. The
 * private handle is made on the calling thread's current device (a program
 * using several devices from one thread is not audited correctly) and
 * destroyed when the thread ends. */
#include "shim/cuda/cublas_lowered.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/accuracy_audit.h"
#include "runtime/decide.h"
#include "runtime/log.h"
#include "shim/cuda/cublas_abi.h"
#include "shim/cuda/cublas_gemm.h"
#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_scratch.h"
#include "shim/resolve.h"

enum { CAPACITY = 1024, OP_N = 0, POINTER_DEVICE = 1, OK = AMP_CUBLAS_STATUS_SUCCESS };

static struct {
    int (*get_stream)(void *, void **);
    int (*get_pointer_mode)(void *, int *);
    int (*create)(void **);
    int (*destroy)(void *);
    int (*set_stream)(void *, void *);
    int (*set_pointer_mode)(void *, int);
    int (*geam)(void *, int, int, int, int, const float *, const float *, int, const float *,
                const float *, int, float *, int);
    int (*nrm2)(void *, int, const float *, int, float *);
    int (*device_malloc)(void **, size_t);
    int (*copy)(void *, const void *, size_t, int);
    int (*synchronize)(void);
    int complete;
} f;

/* Per call site: the device array of (|lowered - fp32|, |fp32|) pairs not
 * read back yet. Under `lock`, which also covers enqueuing a call's norms,
 * so a read-back never races a slot being filled. */
static struct {
    float *dev;
    uint32_t pending;
} results[AMP_CTL_AUDIT_SITES];
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
    return f.set_pointer_mode(h, POINTER_DEVICE);
}

/* The helpers, from the cuBLAS of the first audited call's real function
 * (the audit keeps one private handle per thread: a process with two
 * cuBLAS majors has the second one's calls audited with the first's) and
 * the CUDA runtime (shim/cuda/cuda_helpers.h). */
static const void *_Atomic first_real;

static void resolve_helpers(void)
{
    const struct amp_cublas_helpers *b = amp_cublas_helpers(atomic_load(&first_real));
    const struct amp_cudart_helpers *rt = amp_cudart_helpers();
    f.get_stream = b->get_stream;
    f.get_pointer_mode = b->get_pointer_mode;
    f.create = b->create;
    f.destroy = b->destroy;
    f.set_stream = b->set_stream;
    f.set_pointer_mode = b->set_pointer_mode;
    f.geam = b->geam;
    /* Hooked names: the real library's own. */
    *(void **)&f.nrm2 = amp_real_optional(AMP_HOOK_cublasSnrm2_v2);
    f.device_malloc = rt->device_malloc;
    f.copy = rt->copy;
    f.synchronize = rt->synchronize;
    f.complete = f.get_stream && f.get_pointer_mode && f.create && f.destroy && f.set_stream &&
                 f.set_pointer_mode && f.geam && f.nrm2 && f.device_malloc && f.copy &&
                 f.synchronize;
    if (!f.complete)
        amp_log(AMP_LOG_INFO, "audit: the CUDA libraries lack a function the audit of cuBLAS "
                              "calls needs; those calls run lowered, not audited");
    own = (struct amp_cuda_own_handle){.create = f.create,
                                       .destroy = f.destroy,
                                       .set_stream = f.set_stream,
                                       .setup = device_pointers};
    f.complete &= amp_cuda_own_handle_init(&own);
    if (f.complete) {
        amp_audit_set_device_fold(fold);
        atexit(final_fold); /* after the runtime's own atexit: runs before it */
    }
}

static int helpers(const void *real)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    const void *none = NULL;
    atomic_compare_exchange_strong(&first_real, &none, real);
    pthread_once(&once, resolve_helpers);
    return f.complete;
}

/* Reads back and records every site's pending norms. Under `lock`. */
static void fold_locked(void)
{
    if (finished || !amp_ctl)
        return;
    int any = 0;
    for (int i = 0; i < AMP_CTL_AUDIT_SITES; i++)
        any |= results[i].pending != 0;
    if (!any || f.synchronize() != 0)
        return;
    static float host[2 * CAPACITY];
    for (int i = 0; i < AMP_CTL_AUDIT_SITES; i++) {
        uint32_t n = results[i].pending;
        if (!n)
            continue;
        enum { DEVICE_TO_HOST = 2 };
        results[i].pending = 0;
        if (f.copy(host, results[i].dev, 2 * n * sizeof(float), DEVICE_TO_HOST) != 0)
            continue;
        for (uint32_t j = 0; j < n; j++) {
            struct amp_audit_sums s = {.diff2 = (double)host[2 * j] * host[2 * j],
                                       .ref2 = (double)host[2 * j + 1] * host[2 * j + 1]};
            /* A norm of Inf or NaN: lowering made Inf or NaN (the fp32 one
             * finite), or the program's own product did (not counted). */
            int low_bad = !(host[2 * j] <= 3.4e38f), ref_bad = !(host[2 * j + 1] <= 3.4e38f);
            if (ref_bad)
                continue;
            struct amp_audit_result r = {.elem_max = -1, .nonfinite_call = low_bad};
            r.err = low_bad ? INFINITY : amp_audit_relative_error(&s);
            amp_audit_record(&amp_ctl->audit_site[i], &r);
        }
    }
}

static void fold(void)
{
    struct amp_quiet quiet;
    amp_lock_quietly(&lock, &quiet);
    fold_locked();
    amp_unlock_quietly(&lock, &quiet);
}

/* A lowered call the audit does not run both ways (the sampling skips it,
 * the site table is full, or what the audit needs cannot be had) runs as the
 * program keeps it: as made with AMPSHIM_AUDIT=1, which never changes the
 * program's results, or lowered with follow. */
static int not_audited(struct amp_thread *t, enum amp_hook_id hook, void *gemmex, int is64,
                       const struct amp_gemmex_args *a, int *run_as_made)
{
    if (amp_audit_follows())
        return amp_cublas_run_gemmex(gemmex, is64, a, a->compute);
    amp_count_not_lowered_after_all(t, hook);
    *run_as_made = 1;
    return OK;
}

int amp_cublas_audited(struct amp_thread *t, const struct amp_cublas_call *c, void *gemmex,
                       const struct amp_gemmex_args *a, int *run_as_made)
{
    *run_as_made = 0;
    enum amp_hook_id hook = c->hook;
    int is64 = c->is64;
    int64_t shape[3] = {a->m, a->n, a->k};
    int audit_this;
    struct amp_audit_site *site = amp_audit_enter(
        amp_tls_caller, hook, (enum amp_lowp_dtype)amp_cublas_compute_dtype(a->compute),
        2.0 * (double)a->m * (double)a->n * (double)a->k, shape, &audit_this);
    if (!site || !audit_this)
        return not_audited(t, hook, gemmex, is64, a, run_as_made);
    int mode;
    void *stream = NULL;
    int64_t m = a->m, n = a->n;
    size_t bytes = (size_t)(m > 0 ? m : 0) * (size_t)(n > 0 ? n : 0) * sizeof(float);
    if (!helpers(c->real) || m <= 0 || n <= 0 || a->k <= 0 || m * n > 0x7fffffff || a->ldc < m ||
        f.get_pointer_mode(a->h, &mode) != OK || mode != AMP_CUBLAS_POINTER_MODE_HOST ||
        f.get_stream(a->h, &stream) != OK)
        return not_audited(t, hook, gemmex, is64, a, run_as_made);
    struct amp_cuda_scratch scratch = {.stream = stream};
    float *S = amp_cuda_take(&scratch, bytes), *D = amp_cuda_take(&scratch, bytes);
    size_t pitch = (size_t)a->ldc * sizeof(float), width = (size_t)m * sizeof(float);
    /* S = C as it is, then the call as the program made it into S. */
    if (!S || !D || !amp_cuda_copy_2d(S, width, a->C, pitch, width, (size_t)n, stream) ||
        c->as_made(c, S, m) != OK) {
        amp_cuda_scratch_end(&scratch);
        return not_audited(t, hook, gemmex, is64, a, run_as_made);
    }
    int status = amp_cublas_run_gemmex(gemmex, is64, a, a->compute);
    if (status != OK) {
        amp_cuda_scratch_end(&scratch);
        return status;
    }
    static const float one = 1.0f, minus_one = -1.0f;
    struct amp_quiet quiet;
    amp_lock_quietly(&lock, &quiet);
    size_t index = (size_t)(site - amp_ctl->audit_site);
    if (!results[index].dev && !finished &&
        f.device_malloc((void **)&results[index].dev, 2 * CAPACITY * sizeof(float)) != 0)
        results[index].dev = NULL;
    void *priv = results[index].dev && !finished ? amp_cuda_own_handle(&own, stream) : NULL;
    if (priv) {
        float *slot = results[index].dev + 2 * results[index].pending;
        int n2 = (int)(m * n);
        if (f.geam(a->h, OP_N, OP_N, (int)m, (int)n, &one, a->C, (int)a->ldc, &minus_one, S, (int)m,
                   D, (int)m) == OK &&
            f.nrm2(priv, n2, D, 1, slot) == OK && f.nrm2(priv, n2, S, 1, slot + 1) == OK &&
            ++results[index].pending == CAPACITY)
            fold_locked();
    }
    amp_unlock_quietly(&lock, &quiet);
    /* The program keeps the fp32 result unless it follows the lowered one. */
    if (!amp_audit_follows() && !amp_cuda_copy_2d(a->C, pitch, S, width, width, (size_t)n, stream))
        amp_log(AMP_LOG_WARN, "audit: could not copy an fp32 result back: the lowered one stays");
    amp_cuda_scratch_end(&scratch);
    return status;
}
