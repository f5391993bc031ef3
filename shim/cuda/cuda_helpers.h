/* The functions of the CUDA libraries the hooks call on their own account
 * (not hooked themselves): one X-macro list per library, X(member, symbol,
 * return type, parameter types), for the one resolver (shim/helpers.h),
 * which takes each from the object that defines the hook's real function,
 * so a process with two majors of a library (cuBLAS 12 beside 13) pairs
 * each call with its own library's helpers. A library's soname appears
 * here once, for the libraries the shim may open itself. */
#ifndef AMPSHIM_CUDA_HELPERS_H
#define AMPSHIM_CUDA_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "shim/helpers.h"

/* cuBLAS: handle queries, the audit's own handle, the level-3 rebuilds. */
#define AMP_CUBLAS_HELPERS(X)                                                                      \
    X(get_math_mode, cublasGetMathMode, int, void *, int *)                                        \
    X(get_pointer_mode, cublasGetPointerMode_v2, int, void *, int *)                               \
    X(set_pointer_mode, cublasSetPointerMode_v2, int, void *, int)                                 \
    X(get_stream, cublasGetStream_v2, int, void *, void **)                                        \
    X(set_stream, cublasSetStream_v2, int, void *, void *)                                         \
    X(create, cublasCreate_v2, int, void **)                                                       \
    X(destroy, cublasDestroy_v2, int, void *)                                                      \
    X(geam, cublasSgeam, int, void *, int, int, int, int, const float *, const float *, int,       \
      const float *, const float *, int, float *, int)                                             \
    X(trttp, cublasStrttp, int, void *, int, int, const float *, int, float *)                     \
    X(tpttr, cublasStpttr, int, void *, int, int, const float *, float *, int)                     \
    X(scal, cublasSscal_v2, int, void *, int, const float *, float *, int)                         \
    X(axpy, cublasSaxpy_v2, int, void *, int, const float *, const float *, int, float *, int)

/* cuBLASLt: descriptors and the algorithm heuristic. */
#define AMP_CUBLASLT_HELPERS(X)                                                                    \
    X(desc_get, cublasLtMatmulDescGetAttribute, int, void *, int, void *, size_t, size_t *)        \
    X(desc_set, cublasLtMatmulDescSetAttribute, int, void *, int, const void *, size_t)            \
    X(layout_get, cublasLtMatrixLayoutGetAttribute, int, void *, int, void *, size_t, size_t *)    \
    X(desc_create, cublasLtMatmulDescCreate, int, void **, int, int)                               \
    X(desc_destroy, cublasLtMatmulDescDestroy, int, void *)                                        \
    X(pref_create, cublasLtMatmulPreferenceCreate, int, void **)                                   \
    X(pref_set, cublasLtMatmulPreferenceSetAttribute, int, void *, int, const void *, size_t)      \
    X(pref_destroy, cublasLtMatmulPreferenceDestroy, int, void *)                                  \
    X(heuristic, cublasLtMatmulAlgoGetHeuristic, int, void *, void *, void *, void *, void *,      \
      void *, void *, int, void *, int *)

/* The CUDA runtime: stream-ordered scratch and the audit's read-back
 * (events and copies on a stream of the shim's own: never a call that
 * synchronises the device or the legacy stream). */
#define AMP_CUDART_SONAME "libcudart.so.13"
#define AMP_CUDART_HELPERS(X)                                                                      \
    X(malloc_async, cudaMallocAsync, int, void **, size_t, void *)                                 \
    X(free_async, cudaFreeAsync, int, void *, void *)                                              \
    X(memset_async, cudaMemsetAsync, int, void *, int, size_t, void *)                             \
    X(memset2d_async, cudaMemset2DAsync, int, void *, size_t, int, size_t, size_t, void *)         \
    X(memcpy2d_async, cudaMemcpy2DAsync, int, void *, size_t, const void *, size_t, size_t,        \
      size_t, int, void *)                                                                         \
    X(is_capturing, cudaStreamIsCapturing, int, void *, int *)                                     \
    X(get_device, cudaGetDevice, int, int *)                                                       \
    X(set_device, cudaSetDevice, int, int)                                                         \
    X(pool_create, cudaMemPoolCreate, int, void **, const void *)                                  \
    X(pool_set, cudaMemPoolSetAttribute, int, void *, int, void *)                                 \
    X(pool_trim, cudaMemPoolTrimTo, int, void *, size_t)                                           \
    X(malloc_from_pool, cudaMallocFromPoolAsync, int, void **, size_t, void *, void *)             \
    X(event_create, cudaEventCreateWithFlags, int, void **, unsigned)                              \
    X(event_record, cudaEventRecord, int, void *, void *)                                          \
    X(event_query, cudaEventQuery, int, void *)                                                    \
    X(event_sync, cudaEventSynchronize, int, void *)                                               \
    X(event_elapsed, cudaEventElapsedTime, int, float *, void *, void *)                           \
    X(stream_wait_event, cudaStreamWaitEvent, int, void *, void *, unsigned)                       \
    X(stream_create, cudaStreamCreateWithFlags, int, void **, unsigned)                            \
    X(stream_sync, cudaStreamSynchronize, int, void *)                                             \
    X(memcpy_async, cudaMemcpyAsync, int, void *, const void *, size_t, int, void *)               \
    X(exchange_capture_mode, cudaThreadExchangeStreamCaptureMode, int, int *)

/* cuDNN: every function of it the shim calls on its own account, one list
 * in three parts by who needs them, each checking only its own part
 * (amp_helpers_complete with AMP_CUDNN_OFFSET's offsets): the legacy hooks'
 * descriptors, workspaces and conversions (shim/cudnn), the graph API's
 * substitution (shim/cudnn_graph: its part and get_stream), and a handle of
 * the shim's own for AMPSHIM_CUDA_FP16=explicit's conversions
 * (shim/cublas/cublas_fp16.c: its part and the tensor functions), which
 * opens AMP_CUDNN_SONAME when the program has no cuDNN loaded. */
#define AMP_CUDNN_SONAME "libcudnn.so.9"
#define AMP_CUDNN_LEGACY_HELPERS(X)                                                                \
    X(get_tensor, cudnnGetTensorNdDescriptor, int, void *, int, int *, int *, int *, int *)        \
    X(set_tensor, cudnnSetTensorNdDescriptor, int, void *, int, int, const int *, const int *)     \
    X(create_tensor, cudnnCreateTensorDescriptor, int, void **)                                    \
    X(destroy_tensor, cudnnDestroyTensorDescriptor, int, void *)                                   \
    X(get_filter, cudnnGetFilterNdDescriptor, int, void *, int, int *, int *, int *, int *)        \
    X(set_filter, cudnnSetFilterNdDescriptor, int, void *, int, int, int, const int *)             \
    X(create_filter, cudnnCreateFilterDescriptor, int, void **)                                    \
    X(destroy_filter, cudnnDestroyFilterDescriptor, int, void *)                                   \
    X(get_conv, cudnnGetConvolutionNdDescriptor, int, void *, int, int *, int *, int *, int *,     \
      int *, int *)                                                                                \
    X(get_math, cudnnGetConvolutionMathType, int, void *, int *)                                   \
    X(set_math, cudnnSetConvolutionMathType, int, void *, int)                                     \
    X(create_conv, cudnnCreateConvolutionDescriptor, int, void **)                                 \
    X(destroy_conv, cudnnDestroyConvolutionDescriptor, int, void *)                                \
    X(set_conv, cudnnSetConvolutionNdDescriptor, int, void *, int, const int *, const int *,       \
      const int *, int, int)                                                                       \
    X(get_groups, cudnnGetConvolutionGroupCount, int, void *, int *)                               \
    X(set_groups, cudnnSetConvolutionGroupCount, int, void *, int)                                 \
    X(get_reorder, cudnnGetConvolutionReorderType, int, void *, int *)                             \
    X(set_reorder, cudnnSetConvolutionReorderType, int, void *, int)                               \
    X(create_reduce, cudnnCreateReduceTensorDescriptor, int, void **)                              \
    X(destroy_reduce, cudnnDestroyReduceTensorDescriptor, int, void *)                             \
    X(get_stream, cudnnGetStream, int, void *, void **)                                            \
    X(transform, cudnnTransformTensor, int, void *, const void *, void *, const void *,            \
      const void *, void *, void *)                                                                \
    X(ws_fwd, cudnnGetConvolutionForwardWorkspaceSize, int, void *, void *, void *, void *,        \
      void *, int, size_t *)                                                                       \
    X(ws_bwd_data, cudnnGetConvolutionBackwardDataWorkspaceSize, int, void *, void *, void *,      \
      void *, void *, int, size_t *)                                                               \
    X(ws_bwd_filter, cudnnGetConvolutionBackwardFilterWorkspaceSize, int, void *, void *, void *,  \
      void *, void *, int, size_t *)                                                               \
    X(get_reduce, cudnnGetReduceTensorDescriptor, int, void *, int *, int *, int *, int *, int *)  \
    X(set_reduce, cudnnSetReduceTensorDescriptor, int, void *, int, int, int, int, int)            \
    X(ws_reduce, cudnnGetReductionWorkspaceSize, int, void *, void *, void *, void *, size_t *)    \
    X(get_rnn, cudnnGetRNNDescriptor_v8, int, void *, int *, int *, int *, int *, int *, int *,    \
      int *, int *, int32_t *, int32_t *, int32_t *, int32_t *, void **, uint32_t *)               \
    X(set_rnn, cudnnSetRNNDescriptor_v8, int, void *, int, int, int, int, int, int, int, int,      \
      int32_t, int32_t, int32_t, int32_t, void *, uint32_t)                                        \
    X(ws_rnn, cudnnGetRNNTempSpaceSizes, int, void *, void *, int, void *, size_t *, size_t *)     \
    X(create_rnn, cudnnCreateRNNDescriptor, int, void **)                                          \
    X(destroy_rnn, cudnnDestroyRNNDescriptor, int, void *)                                         \
    X(get_clip, cudnnRNNGetClip_v8, int, void *, int *, int *, double *, double *)                 \
    X(get_rnn_data, cudnnGetRNNDataDescriptor, int, void *, int *, int *, int *, int *, int *,     \
      int, int *, void *)                                                                          \
    X(set_clip, cudnnRNNSetClip_v8, int, void *, int, int, double, double)                         \
    X(ws_norm_train, cudnnGetNormalizationForwardTrainingWorkspaceSize, int, void *, int, int,     \
      int, void *, void *, void *, void *, void *, void *, size_t *, int)
#define AMP_CUDNN_GRAPH_HELPERS(X)                                                                 \
    X(backend_create, cudnnBackendCreateDescriptor, int, int, void **)                             \
    X(backend_destroy, cudnnBackendDestroyDescriptor, int, void *)                                 \
    X(backend_set, cudnnBackendSetAttribute, int, void *, int, int, int64_t, const void *)         \
    X(backend_get, cudnnBackendGetAttribute, int, void *, int, int, int64_t, int64_t *, void *)    \
    X(backend_finalize, cudnnBackendFinalize, int, void *)                                         \
    X(backend_execute, cudnnBackendExecute, int, void *, void *, void *)
#define AMP_CUDNN_HANDLE_HELPERS(X)                                                                \
    X(create, cudnnCreate, int, void **)                                                           \
    X(destroy, cudnnDestroy, int, void *)                                                          \
    X(set_stream, cudnnSetStream, int, void *, void *)
#define AMP_CUDNN_HELPERS(X)                                                                       \
    AMP_CUDNN_LEGACY_HELPERS(X) AMP_CUDNN_GRAPH_HELPERS(X) AMP_CUDNN_HANDLE_HELPERS(X)
/* CUPTI, for AMPSHIM_CUDA_TIMING=cupti (its list: shim/cuda/cuda_cupti.c). */
#define AMP_CUPTI_SONAME "libcupti.so.13"

/* The tables of the lists: one function pointer per helper
 * (AMP_HELPER_MEMBER: shim/helpers.h). */
struct amp_cublas_helpers {
    AMP_CUBLAS_HELPERS(AMP_HELPER_MEMBER)
};
struct amp_cublaslt_helpers {
    AMP_CUBLASLT_HELPERS(AMP_HELPER_MEMBER)
};
struct amp_cudart_helpers {
    AMP_CUDART_HELPERS(AMP_HELPER_MEMBER)
};
struct amp_cudnn_helpers {
    AMP_CUDNN_HELPERS(AMP_HELPER_MEMBER)
};
/* A cuDNN helper's offset in its table, for the parts' needed lists. */
#define AMP_CUDNN_OFFSET(member, ...) offsetof(struct amp_cudnn_helpers, member),

/* cuBLAS's helpers of the object that defines real (a cuBLAS hook's real
 * function), resolved at their first use and kept; never NULL, but a
 * member may be. */
const struct amp_cublas_helpers *amp_cublas_helpers(const void *real);

/* The CUDA runtime's, resolved once (the program's own, else
 * libcudart.so.13 or libcudart.so.12 opened); NULL members are missing. */
const struct amp_cudart_helpers *amp_cudart_helpers(void);

extern const struct amp_helper_list amp_cublas_helper_list, amp_cublaslt_helper_list,
    amp_cudart_helper_list, amp_cudnn_helper_list;

#endif
