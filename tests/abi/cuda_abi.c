/* The ABI values ampshim copies by hand from the CUDA runtime (shim/cuda/cuda_scratch.h's copy of cudaMemPoolProps and its enums),
 * checked against the real header at compile time: this file compiling is
 * the test. */
#include <cuda_runtime_api.h>
#include <stddef.h>

#include "shim/cuda/cuda_scratch.h"

/* The shim's copy of cudaMemPoolProps and the enum values it uses must be
 * the header's. */
_Static_assert(sizeof(struct cudaMemPoolProps) == sizeof(struct amp_cuda_pool_props), "props");
_Static_assert(offsetof(struct cudaMemPoolProps, location) ==
                   offsetof(struct amp_cuda_pool_props, location),
               "props");
_Static_assert(offsetof(struct cudaMemPoolProps, maxSize) ==
                   offsetof(struct amp_cuda_pool_props, max_size),
               "props");
_Static_assert(offsetof(struct cudaMemPoolProps, usage) ==
                   offsetof(struct amp_cuda_pool_props, usage),
               "props");
_Static_assert((int)cudaMemAllocationTypePinned == (int)AMP_CUDA_MEM_ALLOCATION_PINNED, "enum");
_Static_assert((int)cudaMemLocationTypeDevice == (int)AMP_CUDA_MEM_LOCATION_DEVICE, "enum");
_Static_assert((int)cudaMemPoolAttrReleaseThreshold == (int)AMP_CUDA_POOL_ATTR_RELEASE_THRESHOLD,
               "enum");
_Static_assert((int)cudaStreamCaptureStatusNone == (int)AMP_CUDA_STREAM_CAPTURE_NONE, "enum");
