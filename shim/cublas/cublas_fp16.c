/* AMPSHIM_CUDA_FP16=explicit: a GEMM lowered to fp16 gets fp16 inputs by
 * conversion, not by the compute type. cublas_api.h says CUBLAS_COMPUTE_32F_
 * FAST_16F "allows down-converting inputs to half or TF32": cuBLAS may run it
 * with TF32 inputs (fp32's range, so no overflow above 65504 and no flush
 * below fp16's subnormals). Here A and B are converted to compact fp16 in
 * stream-ordered scratch by cuDNN's cudnnTransformTensor (round to nearest
 * even; a library routine, no kernel of ampshim's) on a cuDNN handle of the
 * shim's own bound to the call's stream, and the product runs as
 * cublasGemmEx with CUDA_R_16F inputs, the program's fp32 C and
 * CUBLAS_COMPUTE_32F: fp16 numerics by construction, fp32 accumulation.
 *
 * libcudnn.so.9 is opened here at the first such call when the program has
 * not loaded it. Without it, without scratch (or under stream capture), or
 * with sizes beyond int, the call runs as the program made it (fp32), never
 * with the fast compute type: explicit means fp16 or nothing. */
#include "shim/cublas/cublas_fp16.h"

#include <limits.h>
#include <pthread.h>

#include "runtime/log.h"
#include "shim/cublas/cublas_abi.h"
#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_scratch.h"
#include "shim/resolve.h"

/* cuDNN's transform (shim/cuda/cuda_helpers.h: the program's cuDNN, else
 * AMP_CUDNN_SONAME opened) and a cuDNN handle of the shim's own per thread:
 * the handle's part of the list and the tensor functions. */
static struct amp_cudnn_helpers f;
static const size_t needed[] = {
    AMP_CUDNN_HANDLE_HELPERS(AMP_CUDNN_OFFSET) offsetof(struct amp_cudnn_helpers, create_tensor),
    offsetof(struct amp_cudnn_helpers, set_tensor), offsetof(struct amp_cudnn_helpers, transform),
    offsetof(struct amp_cudnn_helpers, destroy_tensor)};
static int complete;
static struct amp_cuda_own_handle own;

static void resolve(void)
{
    complete =
        amp_helpers_resolve(&amp_cudnn_helper_list, &f, NULL) ||
        amp_helpers_complete(&amp_cudnn_helper_list, &f, needed, sizeof needed / sizeof *needed);
    own = (struct amp_cuda_own_handle){
        .create = f.create, .destroy = f.destroy, .set_stream = f.set_stream};
    complete = complete && amp_cuda_own_handle_init(&own);
    if (!complete)
        amp_log(AMP_LOG_INFO, "AMPSHIM_CUDA_FP16=explicit: no usable " AMP_CUDNN_SONAME " (its "
                              "cudnnTransformTensor converts the inputs); fp16 GEMMs run as made");
}

static int ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, resolve);
    return complete;
}

/* A stored column-major matrix (rows x cols, leading dimension ld) of fp32
 * into compact fp16 at dst, as a 4-d tensor 1 x 1 x cols x rows. */
static int to_half(void *h, const float *src, int64_t rows, int64_t cols, int64_t ld, void *dst)
{
    if (rows > INT_MAX || cols > INT_MAX || ld > INT_MAX || rows * cols > INT_MAX ||
        cols * ld > INT_MAX)
        return 0;
    int dims[4] = {1, 1, (int)cols, (int)rows};
    int from[4] = {(int)(cols * ld), (int)(cols * ld), (int)ld, 1};
    int to[4] = {(int)(cols * rows), (int)(cols * rows), (int)rows, 1};
    void *sd = NULL, *dd = NULL;
    static const float one = 1.0f, zero = 0.0f;
    int ok = f.create_tensor(&sd) == AMP_CUDNN_STATUS_SUCCESS &&
             f.create_tensor(&dd) == AMP_CUDNN_STATUS_SUCCESS &&
             f.set_tensor(sd, AMP_CUDNN_DATA_FLOAT, 4, dims, from) == AMP_CUDNN_STATUS_SUCCESS &&
             f.set_tensor(dd, AMP_CUDNN_DATA_HALF, 4, dims, to) == AMP_CUDNN_STATUS_SUCCESS &&
             f.transform(h, &one, sd, src, &zero, dd, dst) == AMP_CUDNN_STATUS_SUCCESS;
    if (sd)
        f.destroy_tensor(sd);
    if (dd)
        f.destroy_tensor(dd);
    return ok;
}

int amp_cublas_fp16_explicit(void *gemmex, int is64, const struct amp_gemmex_args *a)
{
    void *stream = NULL;
    const struct amp_cublas_helpers *blas = amp_cublas_helpers(gemmex);
    if (!ready() || a->m <= 0 || a->n <= 0 || a->k <= 0 || !blas->get_stream ||
        blas->get_stream(a->h, &stream) != AMP_CUBLAS_STATUS_SUCCESS)
        return -1;
    int64_t a_rows = a->ta == 0 ? a->m : a->k, a_cols = a->ta == 0 ? a->k : a->m;
    int64_t b_rows = a->tb == 0 ? a->k : a->n, b_cols = a->tb == 0 ? a->n : a->k;
    struct amp_cuda_scratch s = {.stream = stream};
    /* Scratch first: taking it checks for stream capture, under which the
     * shim's own handle must not be made either (cudnnCreate allocates). */
    void *a16 = amp_cuda_take(&s, (size_t)(a_rows * a_cols) * 2);
    void *b16 = a16 ? amp_cuda_take(&s, (size_t)(b_rows * b_cols) * 2) : NULL;
    void *h = b16 ? amp_cuda_own_handle(&own, stream) : NULL;
    int status = -1;
    if (h && to_half(h, a->A, a_rows, a_cols, a->lda, a16) &&
        to_half(h, a->B, b_rows, b_cols, a->ldb, b16)) {
        struct amp_gemmex_args half = *a;
        half.A = a16;
        half.at = AMP_CUDA_R_16F;
        half.lda = a_rows;
        half.B = b16;
        half.bt = AMP_CUDA_R_16F;
        half.ldb = b_rows;
        half.compute = AMP_CUBLAS_COMPUTE_32F;
        half.algo = AMP_CUBLAS_GEMM_DEFAULT;
        status = amp_cublas_run_gemmex(gemmex, is64, &half, half.compute);
    }
    amp_cuda_scratch_end(&s);
    return status == AMP_CUBLAS_STATUS_SUCCESS ? status : -1;
}
