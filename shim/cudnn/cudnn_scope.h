/* What the cuDNN hooks share (shim/cudnn/cudnn_scope.c): the cuDNN functions
 * they call besides the hooked ones, a tensor or filter descriptor read back
 * as a view, and the scope of one hook call: the descriptors and device
 * scratch it creates on the side, conversions into that scratch and the
 * blend of a result back into the program's buffer. The hooks themselves
 * are in cudnn_conv.c, cudnn_fp32_ops.c and cudnn_rnn.c. */
#ifndef AMPSHIM_CUDNN_SCOPE_H
#define AMPSHIM_CUDNN_SCOPE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/cuda/cuda_helpers.h"
#include "shim/cuda/cuda_scratch.h"
#include "shim/cudnn/cudnn_abi.h"

/* The cuDNN functions of the object that defines `real` (a hook's real
 * function; shim/cuda/cuda_helpers.h's one list), or NULL if it lacks any
 * the hooks call (AMP_CUDNN_LEGACY_HELPERS): resolved at the first call for
 * that object and kept, so two cuDNN objects in one process each get their
 * own; the thread's last answer is kept in front. */
const struct amp_cudnn_helpers *amp_dnn_of(const void *real);
extern __thread const void *amp_dnn_last_real __attribute__((tls_model("initial-exec")));
extern __thread const struct amp_cudnn_helpers *amp_dnn_last
    __attribute__((tls_model("initial-exec")));

static inline const struct amp_cudnn_helpers *amp_dnn(const void *real)
{
    if (__builtin_expect(real == amp_dnn_last_real && amp_dnn_last != NULL, 1))
        return amp_dnn_last;
    return amp_dnn_of(real);
}

/* A tensor or filter as cuDNN describes it; a filter's strides follow from
 * its format (NCHW: packed, last dimension fastest; NHWC: channels fastest). */
struct amp_dnn_view {
    int type, nb, filter, format;
    int dims[AMP_CUDNN_DIM_MAX], strides[AMP_CUDNN_DIM_MAX];
};

/* What one hook call creates on the side: descriptors and device scratch,
 * all released by scope_end (scratch on the call's stream). */
struct amp_dnn_scope {
    const struct amp_cudnn_helpers *f;
    void *handle;
    struct amp_cuda_scratch mem;
    int failed, n_tensor, n_filter, n_owned;
    void *tensor[16], *filter[4];
    struct {
        void *desc;
        int (*destroy)(void *);
    } owned[4];         /* private copies of the program's descriptors (amp_dnn_scope_own) */
    uint64_t converted; /* elements converted, for the counters */
};

/* An fp32-list call made in fp32: up to three tensor inputs and one tensor
 * output. amp_dnn_upcast_begin converts every half or bf16 input into fp32
 * scratch and gives the output fp32 scratch; the caller then makes the call
 * on the new descriptors and pointers with alpha 1, beta 0;
 * amp_dnn_upcast_end blends the result into the program's output with its
 * alpha and beta. */
struct amp_dnn_upcast {
    struct amp_dnn_scope s;
    struct amp_dnn_view out;
    void *desc[4];
    const void *ptr[4]; /* [0..n-1] inputs, [3] the output */
};

extern const float amp_dnn_one, amp_dnn_zero;

int amp_dnn_describe(const struct amp_cudnn_helpers *f, void *desc, int filter,
                     struct amp_dnn_view *v);

int amp_dnn_is_half(int type);

size_t amp_dnn_type_bytes(int type);

/* Elements from the first to the last one the view addresses; 0 if empty. */
size_t amp_dnn_span(const struct amp_dnn_view *v);

void amp_dnn_scope_begin(struct amp_dnn_scope *s, const struct amp_cudnn_helpers *f, void *handle);

/* A descriptor made by create (cudnnCreate*Descriptor) that the scope
 * destroys at its end (with destroy), or NULL (the scope then failed). */
void *amp_dnn_scope_own(struct amp_dnn_scope *s, int (*create)(void **), int (*destroy)(void *));

void amp_dnn_scope_end(struct amp_dnn_scope *s);

void *amp_dnn_scope_mem(struct amp_dnn_scope *s, size_t bytes);

/* The workspace a changed call needs: the program's own if it is large
 * enough, else scratch (*ws and *ws_bytes replaced). */
int amp_dnn_scope_workspace(struct amp_dnn_scope *s, size_t need, void **ws, size_t *ws_bytes);

/* A descriptor with v's shape in `type`: a filter descriptor when as_filter,
 * else a tensor descriptor with v's strides (for a filter: the strides its
 * format implies, so cudnnTransformTensor can address filter memory). */
void *amp_dnn_scope_desc(struct amp_dnn_scope *s, const struct amp_dnn_view *v, int type,
                         int as_filter);

/* Scratch for v's elements in `type`, with *call_desc the descriptor a call
 * takes it by (tensor or filter, as v is) and *alias a tensor descriptor of
 * it for cudnnTransformTensor. */
void *amp_dnn_scope_buffer(struct amp_dnn_scope *s, const struct amp_dnn_view *v, int type,
                           void **call_desc, void **alias);

/* A copy of src (described by v) in `type`; *call_desc describes it. */
void *amp_dnn_scope_convert(struct amp_dnn_scope *s, const struct amp_dnn_view *v, const void *src,
                            int type, void **call_desc);

/* dst = alpha * tmp + beta * dst, tmp being scratch of v's shape in
 * tmp_type and dst the program's buffer of v's shape and type. */
int amp_dnn_scope_blend(struct amp_dnn_scope *s, const struct amp_dnn_view *v, const void *tmp,
                        int tmp_type, const void *alpha, const void *beta, void *dst);

/* Whether any of the tensors is half or bf16 (and all are half, bf16 or
 * fp32): the calls worth converting. */
int amp_dnn_any_half(const struct amp_cudnn_helpers *f, int n, void *const *descs);

int amp_dnn_upcast_begin(struct amp_dnn_upcast *u, const struct amp_cudnn_helpers *f, void *handle,
                         int n_in, void *const *descs, const void *const *ptrs, void *out_desc);

int amp_dnn_upcast_end(struct amp_dnn_upcast *u, int status, const void *alpha, const void *beta,
                       void *out);

#endif
