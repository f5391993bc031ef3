/* cuDNN descriptors and per-call scratch for the cuDNN hooks: the function
 * table, views of descriptors, and the scope of one hook call
 * (shim/cudnn/cudnn_scope.h says what each does). */
#include "shim/cudnn/cudnn_scope.h"

#include "shim/cuda/cuda_helpers.h"
#include "shim/resolve.h"

/* The part of cuDNN's helpers the hooks call (shim/cuda/cuda_helpers.h). */
static const size_t needed[] = {AMP_CUDNN_LEGACY_HELPERS(AMP_CUDNN_OFFSET)};

__thread const void *amp_dnn_last_real __attribute__((tls_model("initial-exec")));
__thread const struct amp_cudnn_helpers *amp_dnn_last __attribute__((tls_model("initial-exec")));

const struct amp_cudnn_helpers *amp_dnn_of(const void *real)
{
    const struct amp_cudnn_helpers *f = amp_helpers_of_part(&amp_cudnn_helper_list, sizeof *f, real,
                                                            needed, sizeof needed / sizeof *needed);
    if (!f)
        return NULL;
    amp_dnn_last_real = real;
    amp_dnn_last = f;
    return f;
}

int amp_dnn_describe(const struct amp_cudnn_helpers *f, void *desc, int filter,
                     struct amp_dnn_view *v)
{
    v->filter = filter;
    v->format = AMP_CUDNN_TENSOR_NCHW;
    if (!desc)
        return 0;
    if (!filter)
        return f->get_tensor(desc, AMP_CUDNN_DIM_MAX, &v->type, &v->nb, v->dims, v->strides) ==
                   AMP_DNN_OK &&
               v->nb > 0 && v->nb <= AMP_CUDNN_DIM_MAX;
    if (f->get_filter(desc, AMP_CUDNN_DIM_MAX, &v->type, &v->format, &v->nb, v->dims) !=
            AMP_DNN_OK ||
        v->nb < 3 || v->nb > AMP_CUDNN_DIM_MAX ||
        (v->format != AMP_CUDNN_TENSOR_NCHW && v->format != AMP_CUDNN_TENSOR_NHWC))
        return 0;
    int order[AMP_CUDNN_DIM_MAX], n = 0; /* outermost first */
    order[n++] = 0;
    if (v->format == AMP_CUDNN_TENSOR_NCHW)
        order[n++] = 1;
    for (int i = 2; i < v->nb; i++)
        order[n++] = i;
    if (v->format == AMP_CUDNN_TENSOR_NHWC)
        order[n++] = 1;
    int stride = 1;
    for (int i = n; i-- > 0;) {
        v->strides[order[i]] = stride;
        stride *= v->dims[order[i]];
    }
    return 1;
}

int amp_dnn_is_half(int type)
{
    return type == AMP_CUDNN_DATA_HALF || type == AMP_CUDNN_DATA_BFLOAT16;
}

size_t amp_dnn_type_bytes(int type)
{
    return type == AMP_CUDNN_DATA_FLOAT ? 4 : amp_dnn_is_half(type) ? 2 : 0;
}

/* Elements from the first to the last one the view addresses; 0 if empty. */
size_t amp_dnn_span(const struct amp_dnn_view *v)
{
    size_t n = 1;
    for (int i = 0; i < v->nb; i++) {
        if (v->dims[i] <= 0 || v->strides[i] < 0)
            return 0;
        n += (size_t)(v->dims[i] - 1) * (size_t)v->strides[i];
    }
    return n;
}

void amp_dnn_scope_begin(struct amp_dnn_scope *s, const struct amp_cudnn_helpers *f, void *handle)
{
    *s = (struct amp_dnn_scope){.f = f, .handle = handle};
    if (f->get_stream(handle, &s->mem.stream) != AMP_DNN_OK)
        s->failed = 1;
}

void amp_dnn_scope_end(struct amp_dnn_scope *s)
{
    for (int i = 0; i < s->n_tensor; i++)
        s->f->destroy_tensor(s->tensor[i]);
    for (int i = 0; i < s->n_filter; i++)
        s->f->destroy_filter(s->filter[i]);
    for (int i = 0; i < s->n_owned; i++)
        s->owned[i].destroy(s->owned[i].desc);
    amp_cuda_scratch_end(&s->mem);
}

void *amp_dnn_scope_own(struct amp_dnn_scope *s, int (*create)(void **), int (*destroy)(void *))
{
    void *d = NULL;
    if (s->failed || s->n_owned == (int)(sizeof s->owned / sizeof *s->owned) ||
        create(&d) != AMP_DNN_OK || !d) {
        s->failed = 1;
        return NULL;
    }
    s->owned[s->n_owned].desc = d;
    s->owned[s->n_owned++].destroy = destroy;
    return d;
}

void *amp_dnn_scope_mem(struct amp_dnn_scope *s, size_t bytes)
{
    void *p = s->failed ? NULL : amp_cuda_take(&s->mem, bytes);
    s->failed |= !p;
    return p;
}

/* The workspace a changed call needs: the program's own if it is large
 * enough, else scratch (*ws and *ws_bytes replaced). */
int amp_dnn_scope_workspace(struct amp_dnn_scope *s, size_t need, void **ws, size_t *ws_bytes)
{
    if (need > *ws_bytes) {
        *ws = amp_dnn_scope_mem(s, need);
        *ws_bytes = need;
    }
    return !s->failed;
}

/* A descriptor with v's shape in `type`: a filter descriptor when as_filter,
 * else a tensor descriptor with v's strides (for a filter: the strides its
 * format implies, so cudnnTransformTensor can address filter memory). */
void *amp_dnn_scope_desc(struct amp_dnn_scope *s, const struct amp_dnn_view *v, int type,
                         int as_filter)
{
    void *d = NULL;
    if (s->failed)
        return NULL;
    if (as_filter) {
        if (s->n_filter < 4 && s->f->create_filter(&d) == AMP_DNN_OK) {
            s->filter[s->n_filter++] = d;
            if (s->f->set_filter(d, type, v->format, v->nb, v->dims) == AMP_DNN_OK)
                return d;
        }
    } else if (s->n_tensor < 16 && s->f->create_tensor(&d) == AMP_DNN_OK) {
        s->tensor[s->n_tensor++] = d;
        if (s->f->set_tensor(d, type, v->nb, v->dims, v->strides) == AMP_DNN_OK)
            return d;
    }
    s->failed = 1;
    return NULL;
}

const float amp_dnn_one = 1.0f, amp_dnn_zero = 0.0f;

/* Scratch for v's elements in `type`, with *call_desc the descriptor a call
 * takes it by (tensor or filter, as v is) and *alias a tensor descriptor of
 * it for cudnnTransformTensor. */
void *amp_dnn_scope_buffer(struct amp_dnn_scope *s, const struct amp_dnn_view *v, int type,
                           void **call_desc, void **alias)
{
    void *p = amp_dnn_scope_mem(s, amp_dnn_span(v) * amp_dnn_type_bytes(type));
    *alias = amp_dnn_scope_desc(s, v, type, 0);
    *call_desc = v->filter ? amp_dnn_scope_desc(s, v, type, 1) : *alias;
    return s->failed ? NULL : p;
}

/* A copy of src (described by v) in `type`; *call_desc describes it. */
void *amp_dnn_scope_convert(struct amp_dnn_scope *s, const struct amp_dnn_view *v, const void *src,
                            int type, void **call_desc)
{
    void *alias;
    void *dst = amp_dnn_scope_buffer(s, v, type, call_desc, &alias);
    void *src_alias = amp_dnn_scope_desc(s, v, v->type, 0);
    if (s->failed || s->f->transform(s->handle, &amp_dnn_one, src_alias, src, &amp_dnn_zero, alias,
                                     dst) != AMP_DNN_OK) {
        s->failed = 1;
        return NULL;
    }
    s->converted += amp_dnn_span(v);
    return dst;
}

/* dst = alpha * tmp + beta * dst, tmp being scratch of v's shape in
 * tmp_type and dst the program's buffer of v's shape and type. */
int amp_dnn_scope_blend(struct amp_dnn_scope *s, const struct amp_dnn_view *v, const void *tmp,
                        int tmp_type, const void *alpha, const void *beta, void *dst)
{
    void *tmp_alias = amp_dnn_scope_desc(s, v, tmp_type, 0);
    void *dst_alias = amp_dnn_scope_desc(s, v, v->type, 0);
    if (s->failed ||
        s->f->transform(s->handle, alpha, tmp_alias, tmp, beta, dst_alias, dst) != AMP_DNN_OK)
        return s->failed = 1, 0;
    s->converted += amp_dnn_span(v);
    return 1;
}

/* Whether any of the tensors is half or bf16 (and all are half, bf16 or
 * fp32): the calls worth converting. */
int amp_dnn_any_half(const struct amp_cudnn_helpers *f, int n, void *const *descs)
{
    int half = 0;
    for (int i = 0; i < n; i++) {
        struct amp_dnn_view v;
        if (!descs[i])
            continue;
        if (!amp_dnn_describe(f, descs[i], 0, &v) || !amp_dnn_type_bytes(v.type))
            return 0;
        half |= amp_dnn_is_half(v.type);
    }
    return half;
}

int amp_dnn_upcast_begin(struct amp_dnn_upcast *u, const struct amp_cudnn_helpers *f, void *handle,
                         int n_in, void *const *descs, const void *const *ptrs, void *out_desc)
{
    const int fp32 = AMP_CUDNN_DATA_FLOAT;
    void *alias;
    amp_dnn_scope_begin(&u->s, f, handle);
    for (int i = 0; i < n_in && !u->s.failed; i++) {
        struct amp_dnn_view v;
        u->desc[i] = descs[i];
        u->ptr[i] = ptrs[i];
        if (descs[i] && amp_dnn_describe(f, descs[i], 0, &v) && v.type != fp32)
            u->ptr[i] = amp_dnn_scope_convert(&u->s, &v, ptrs[i], fp32, &u->desc[i]);
    }
    if (!amp_dnn_describe(f, out_desc, 0, &u->out))
        u->s.failed = 1;
    u->ptr[3] =
        u->s.failed ? NULL : amp_dnn_scope_buffer(&u->s, &u->out, fp32, &u->desc[3], &alias);
    return !u->s.failed;
}

int amp_dnn_upcast_end(struct amp_dnn_upcast *u, int status, const void *alpha, const void *beta,
                       void *out)
{
    if (status == AMP_DNN_OK &&
        !amp_dnn_scope_blend(&u->s, &u->out, u->ptr[3], AMP_CUDNN_DATA_FLOAT, alpha, beta, out))
        status = -1;
    amp_dnn_scope_end(&u->s);
    return status;
}
