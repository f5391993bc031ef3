/* oneDNN 2.x, as the oneDNN wing's rooms share it (private to shim/onednn):
 * the program's libdnnl and the functions of it the wing calls, the
 * primitive kinds and directions that have twins and their hook rows, and
 * the helpers every room asks. The rooms: v2_library.c (finding the
 * library), v2_classify.c (what a primitive is), v2_desc.c (convolutions
 * lowered in their descriptors), v2_twin_build.c (a twin made) and
 * v2_twin_cache.c (the twin cache, and a twin run). v2_none.c stands in for
 * them all in a build without oneDNN's header. */
#ifndef AMPSHIM_ONEDNN_V2_H
#define AMPSHIM_ONEDNN_V2_H

#include <oneapi/dnnl/dnnl.h>

#include "shim/onednn/twin.h"

/* Every oneDNN function the wing calls, looked up in the program's own
 * libdnnl (never linked). */
#define AMP_DNNL_FUNCTIONS(X)                                                                      \
    X(dnnl_version)                                                                                \
    X(dnnl_primitive_get_primitive_desc)                                                           \
    X(dnnl_primitive_desc_query)                                                                   \
    X(dnnl_primitive_desc_query_md)                                                                \
    X(dnnl_primitive_desc_get_attr)                                                                \
    X(dnnl_primitive_desc_create)                                                                  \
    X(dnnl_primitive_desc_destroy)                                                                 \
    X(dnnl_primitive_attr_clone)                                                                   \
    X(dnnl_primitive_attr_destroy)                                                                 \
    X(dnnl_primitive_attr_set_scratchpad_mode)                                                     \
    X(dnnl_primitive_attr_get_fpmath_mode)                                                         \
    X(dnnl_primitive_attr_get_output_scales)                                                       \
    X(dnnl_primitive_attr_get_post_ops)                                                            \
    X(dnnl_post_ops_len)                                                                           \
    X(dnnl_post_ops_get_kind)                                                                      \
    X(dnnl_post_ops_get_params_sum_v2)                                                             \
    X(dnnl_post_ops_get_params_eltwise)                                                            \
    X(dnnl_post_ops_get_params_binary)                                                             \
    X(dnnl_engine_get_kind)                                                                        \
    X(dnnl_engine_create)                                                                          \
    X(dnnl_memory_desc_init_by_tag)                                                                \
    X(dnnl_memory_desc_get_size)                                                                   \
    X(dnnl_memory_desc_equal)                                                                      \
    X(dnnl_reorder_primitive_desc_create)                                                          \
    X(dnnl_primitive_create)                                                                       \
    X(dnnl_primitive_destroy)                                                                      \
    X(dnnl_memory_create)                                                                          \
    X(dnnl_memory_destroy)                                                                         \
    X(dnnl_memory_get_memory_desc)                                                                 \
    X(dnnl_memory_get_data_handle)

struct amp_dnnl_library {
#define AMP_X_FIELD(f) __typeof__(f) *f;
    AMP_DNNL_FUNCTIONS(AMP_X_FIELD)
#undef AMP_X_FIELD
};
extern struct amp_dnnl_library amp_dn;

/* The directions, and the primitive kinds that have twins. */
enum dir { FWD, BWD_DATA, BWD_WEIGHTS, N_DIRS };
enum pkind { P_CONV, P_DECONV, P_IP, P_MATMUL, P_RNN, N_PKINDS };

/* The primitive rows, found by name in the generated hook list: [kind][dir][rank - 1]
 * (rank: spatial dimensions for (de)convolutions, 1 for the others); -1
 * where none. */
extern int amp_dn_rows[N_PKINDS][N_DIRS][3];

/* The arguments of each direction: inputs converted, then the rest. */
struct amp_dn_roles {
    int in[2];
    int out[2]; /* outputs, 0 where none */
    int bias;   /* the bias input kept in fp32 (forward), 0 where none */
};
extern const struct amp_dn_roles amp_dn_roles[N_DIRS];

/* Whether the program's libdnnl is known (found by real_fn, one of its
 * functions, at the first call): 1 yes. amp_dn_known: whether it was found,
 * without looking. */
int amp_dn_ready(void *real_fn);
int amp_dn_known(void);

/* The kind and direction of pd, or -1. */
int amp_dn_kind_of(const_dnnl_primitive_desc_t pd, enum pkind *k, enum dir *d);

/* A hash of n bytes (callers compare what it hashes as well). */
uint64_t amp_dn_hash(const void *p, size_t n);

/* md as like's dimensions in dtype (bf16 or fp16), any layout: 0, or -1. */
int amp_dn_low_md(dnnl_memory_desc_t *md, const dnnl_memory_desc_t *like, int dtype);

/* Whether oneDNN's implementation of pd is a native kernel (not a
 * reference one); why says which it is when not. Asked of a twin and of the
 * probe of a lowered descriptor. */
int amp_dn_impl_is_native(const_dnnl_primitive_desc_t pd, char *why, size_t whylen);

/* Whether the shim lowered the convolution descriptor cd (direction d) in
 * its descriptor (v2_desc.c). */
int amp_dn_desc_was_lowered(const dnnl_convolution_desc_t *cd, enum dir d);

static inline const dnnl_memory_desc_t *amp_dn_arg_md(const_dnnl_primitive_desc_t pd, int arg)
{
    const dnnl_memory_desc_t *md =
        amp_dn.dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    return md && md->ndims > 0 ? md : NULL;
}

static inline double amp_dn_elems(const dnnl_memory_desc_t *md)
{
    double n = 1;
    for (int i = 0; i < md->ndims; i++)
        n *= (double)md->dims[i];
    return n;
}

static inline int amp_dn_low_type(dnnl_data_type_t t)
{
    return t == dnnl_bf16 || t == dnnl_f16;
}


static inline double amp_dn_conv_madds(const dnnl_memory_desc_t *y, const dnnl_memory_desc_t *w)
{
    return y->dims[1] > 0 ? amp_dn_elems(y) * amp_dn_elems(w) / (double)y->dims[1] : 0;
}

#endif
