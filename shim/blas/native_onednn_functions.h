/* Every oneDNN function the adapter (shim/blas/native_onednn.c) calls, as one
 * list: expanded there into the pointer table and its lookup, and by the
 * test-only fault injector (tests/stress/dnnl_fault_injector.c) into its
 * forwarders. Execution is apart from the functions that set a run up, so
 * the injector can put itself in front of it alone. */
#ifndef AMPSHIM_ONEDNN_FUNCTIONS_H
#define AMPSHIM_ONEDNN_FUNCTIONS_H

#define AMP_ONEDNN_SETUP_FUNCTIONS(X)                                                              \
    X(dnnl_version)                                                                                \
    X(dnnl_engine_create)                                                                          \
    X(dnnl_stream_create)                                                                          \
    X(dnnl_stream_wait)                                                                            \
    X(dnnl_stream_destroy)                                                                         \
    X(dnnl_memory_desc_init_by_strides)                                                            \
    X(dnnl_memory_desc_get_size)                                                                   \
    X(dnnl_matmul_desc_init)                                                                       \
    X(dnnl_primitive_attr_create)                                                                  \
    X(dnnl_primitive_attr_destroy)                                                                 \
    X(dnnl_primitive_attr_set_scratchpad_mode)                                                     \
    X(dnnl_primitive_attr_set_output_scales)                                                       \
    X(dnnl_primitive_attr_set_post_ops)                                                            \
    X(dnnl_post_ops_create)                                                                        \
    X(dnnl_post_ops_destroy)                                                                       \
    X(dnnl_post_ops_append_sum)                                                                    \
    X(dnnl_primitive_desc_create)                                                                  \
    X(dnnl_primitive_desc_destroy)                                                                 \
    X(dnnl_primitive_desc_query)                                                                   \
    X(dnnl_primitive_desc_query_md)                                                                \
    X(dnnl_primitive_create)                                                                       \
    X(dnnl_primitive_destroy)                                                                      \
    X(dnnl_memory_create)                                                                          \
    X(dnnl_memory_destroy)

#define AMP_ONEDNN_FUNCTIONS(X)                                                                    \
    AMP_ONEDNN_SETUP_FUNCTIONS(X)                                                                  \
    X(dnnl_primitive_execute)

#endif
