/* oneDNN 2.x twins, as the two twin rooms share them: a twin's key (what
 * it depends on), the twin itself, and its making (v2_twin_build.c) for the
 * cache (v2_twin_cache.c). */
#ifndef AMPSHIM_ONEDNN_V2_TWIN_H
#define AMPSHIM_ONEDNN_V2_TWIN_H

#include "shim/onednn/v2.h"

/* A digest of the attributes a twin must copy (its clone copies them all;
 * the digest tells twins apart). Post-ops other than sum, eltwise and
 * binary (a fused depthwise convolution, prelu) get no twin. */
enum { MAX_POST_OPS = 8 };
struct digest {
    int32_t n_post, fpmath, scale_count, scale_mask;
    int32_t kinds[MAX_POST_OPS], algs[MAX_POST_OPS];
    float params[MAX_POST_OPS][3];
    uint64_t md_hash[MAX_POST_OPS], scale_hash;
};

struct key {
    void *engine;
    int32_t dtype, kind, dir, prop; /* prop: oneDNN's propagation kind (0 for a matmul) */
    dnnl_dims_t geometry[4];        /* strides, dilates, padding left and right */
    int32_t alg, pad2;
    dnnl_memory_desc_t md[4]; /* the program's inputs, bias or second output, output */
    struct digest attr;
};

struct twin {
    struct key key;
    uint64_t hash, last_use;
    int state; /* 1 ready, -1 none, AMP_DNNL_NO_KERNEL none: no native kernel here */
    int running;
    dnnl_primitive_t prim, reorder[2];
    int in_arg[2];
    dnnl_memory_desc_t in_md[2], scratchpad_md;
    size_t in_off[2], scratchpad_off, bytes;
    uint64_t in_elems;
    /* A forward twin whose best kernel writes another layout than the
     * program's dst: it writes out_md in the scratch at out_off, and a
     * reorder (out) puts that into the program's dst; with a sum post-op,
     * one (back) brings the program's dst in first. NULL: the twin writes
     * the program's dst itself. */
    dnnl_primitive_t out, back;
    dnnl_memory_desc_t out_md;
    size_t out_off;
};

/* The op descriptors that have twins. */
union op_desc {
    dnnl_convolution_desc_t conv; /* deconvolution's too */
    dnnl_inner_product_desc_t ip;
    dnnl_matmul_desc_t mm;
};

/* Fills the key of c's twin in dtype; -1 when it can have none. */
int amp_dn_twin_key(const struct amp_dnnl_call *c, int dtype, struct key *key, enum pkind *k,
                    enum dir *d, const union op_desc **op);

/* Makes the twin of the program's primitive descriptor pd into tw (key
 * filled): 0, or -1 or AMP_DNNL_NO_KERNEL with why. */
int amp_dn_twin_build(struct twin *tw, const_dnnl_primitive_desc_t pd, enum pkind k, enum dir d,
                      const union op_desc *op, char *why, size_t whylen);

/* Whether a primitive reads its outputs before writing them (a sum
 * post-op adds to what dst held); 1 when its attributes cannot be read. */
int amp_dn_reads_outputs(const_dnnl_primitive_desc_t pd);

/* Destroys tw's primitives and frees it. */
void amp_dn_twin_release(struct twin *tw);

#endif
