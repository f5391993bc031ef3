/* The ABI values ampshim copies by hand from CUPTI (the record layouts shim/cuda/cuda_cupti.c reads),
 * checked against the real header at compile time: this file compiling is
 * the test. */
#include <cupti.h>
#include <stddef.h>


/* What shim/cuda/cuda_cupti.c reads, where it reads it. */
_Static_assert(offsetof(CUpti_ActivityKernel10, start) == 16, "layout");
_Static_assert(offsetof(CUpti_ActivityKernel10, end) == 24, "layout");
_Static_assert(offsetof(CUpti_ActivityKernel10, correlationId) == 92, "layout");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, start) == 16, "layout");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, correlationId) == 44, "layout");
_Static_assert(offsetof(CUpti_ActivityMemset4, correlationId) == 44, "layout");
_Static_assert(offsetof(CUpti_ActivityExternalCorrelation, externalKind) == 4, "layout");
_Static_assert(offsetof(CUpti_ActivityExternalCorrelation, externalId) == 8, "layout");
_Static_assert(offsetof(CUpti_ActivityExternalCorrelation, correlationId) == 16, "layout");
_Static_assert(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION == 39, "kind");
_Static_assert(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL == 10, "kind");
_Static_assert(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1 == 4, "kind");
_Static_assert(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED == 39, "result");
_Static_assert(CUPTI_ERROR_MAX_LIMIT_REACHED == 12, "result");
