/* The exported cuSOLVER entry points, expanded from
 * AMPSHIM_HOOK_LIST_CUSOLVER. Each runs the real routine inside an fp32
 * region (category fp32, from the CUDA linalg op list), so the cuBLAS
 * calls cuSOLVER makes inside are not lowered. Their arguments are all
 * machine words and they return a status: shim/region_hook.h forwards
 * them. */
#include "runtime/decide.h"
#include "shim/region_hook.h"
#include "shim/resolve.h"

#define AMP_X_HOOK(sym, routine, kind, form, ints, op, op_beta)                                    \
    AMP_DEFINE_FP32_REGION_HOOK(sym, AMP_DEVICE_CUDA)
AMPSHIM_HOOK_LIST_CUSOLVER(AMP_X_HOOK)
#undef AMP_X_HOOK
