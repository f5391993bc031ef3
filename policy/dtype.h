/* The low-precision types a lowered call runs in: what the policy, the
 * configuration, the block and the kernels all name. */
#ifndef AMPSHIM_DTYPE_H
#define AMPSHIM_DTYPE_H

enum amp_lowp_dtype { AMP_DTYPE_BF16, AMP_DTYPE_FP16, AMP_DTYPE_TF32, AMP_DTYPE_COUNT };

/* Their names in variables, messages and reports (a header's static table:
 * the scaler library has it without the policy's code). */
static const char *const amp_dtype_names[AMP_DTYPE_COUNT] = {"bf16", "fp16", "tf32"};

#endif
