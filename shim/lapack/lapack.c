/* The exported LAPACK entry points, expanded from AMPSHIM_HOOK_LIST_LAPACK.
 * Each runs the real routine inside an fp32 region when its category is
 * fp32 (the CPU float32 list's linalg ops): the program's own BLAS calls made
 * while it runs stay fp32, and it is counted. The BLAS calls LAPACK makes to
 * itself are its own business in any case (runtime/decide.h).
 *
 * LAPACK routines have many signatures; shim/region_hook.h forwards them
 * without reading or copying an argument. */
#include "runtime/decide.h"
#include "shim/region_hook.h"
#include "shim/resolve.h"

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta)                                    \
    AMP_DEFINE_FP32_REGION_HOOK(sym, AMP_DEVICE_CPU)
AMPSHIM_HOOK_LIST_LAPACK(AMP_X_HOOK)
#undef AMP_X_HOOK
