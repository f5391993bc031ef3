/* What a program of cuDNN's backend API does to get a convolution plan, the
 * way PyTorch's cuDNN v8 convolutions (cudnn-frontend) do it: tensors with
 * unique ids, a convolution descriptor, one operation (forward, backward
 * data or backward filter), optionally a ReLU fused after a forward, an
 * operation graph, heuristics (mode A), then execution plans finalized
 * from the configurations they return, and the plan's workspace asked.
 * Shared by tests/cudnn_graph/cudnn_graph_check.c (the test-only fake cuDNN) and
 * tests/cudnn_graph/cudnn_graph_devless.c (the real cuDNN without a GPU, from a
 * device-properties JSON). Compiled against the real cudnn.h. */
#ifndef AMPSHIM_TEST_CUDNN_GRAPH_BUILD_H
#define AMPSHIM_TEST_CUDNN_GRAPH_BUILD_H

#include <cudnn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef cudnnBackendDescriptor_t gdesc;

/* A convolution's shape: x [n, c, h, w], filter [k, c, r, s], in NCHW
 * (packed, w fastest) or NHWC (channels_last: c fastest) layout; with a
 * depth d > 0, a 3-d one: x [n, c, d, h, w], filter [k, c, t, r, s]. */
struct gshape {
    int64_t n, c, h, w, k, r, s, pad, stride;
    int nhwc;
    int64_t d, t;
};

static inline int64_t gshape_out(const struct gshape *s, int64_t in, int64_t f)
{
    return (in + 2 * s->pad - f) / s->stride + 1;
}

enum { GB_X = 'x', GB_W = 'w', GB_Y = 'y', GB_OUT = 'o', GB_Z = 'z' };

static inline int gb_ok(int status, const char *what)
{
    if (status != CUDNN_STATUS_SUCCESS)
        fprintf(stderr, "cudnn_graph_build: %s: status %d\n", what, status);
    return status == CUDNN_STATUS_SUCCESS;
}

static inline gdesc gb_tensor(int64_t uid, cudnnDataType_t type, const int64_t *dims, int nd,
                              int nhwc, int virt)
{
    /* packed, the fastest dimension first: the last one, or the channels */
    int64_t strides[5], align = 16, at = 1;
    for (int i = 0; i < nd; i++) {
        int dim = !nhwc ? nd - 1 - i : i == 0 ? 1 : i == nd - 1 ? 0 : nd - i;
        strides[dim] = at;
        at *= dims[dim];
    }
    bool is_virtual = virt != 0;
    gdesc d = NULL;
    if (!gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &d), "tensor") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
                                        &type),
               "tensor type") ||
        !gb_ok(
            cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dims),
            "dims") ||
        !gb_ok(
            cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, strides),
            "strides") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid),
               "uid") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
                                        &align),
               "alignment") ||
        (virt && !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL,
                                                 CUDNN_TYPE_BOOLEAN, 1, &is_virtual),
                        "virtual")) ||
        !gb_ok(cudnnBackendFinalize(d), "tensor finalize"))
        return NULL;
    return d;
}

static inline gdesc gb_conv(const struct gshape *s)
{
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t dims = s->d > 0 ? 3 : 2, pad[3] = {s->pad, s->pad, s->pad},
            stride[3] = {s->stride, s->stride, s->stride}, one[3] = {1, 1, 1};
    gdesc d = NULL;
    if (!gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &d), "conv") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE,
                                        1, &compute),
               "comp type") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                        CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode),
               "mode") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
                                        &dims),
               "spatial dims") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64,
                                        dims, pad),
               "pre pad") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64,
                                        dims, pad),
               "post pad") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dims,
                                        one),
               "dilations") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
                                        dims, stride),
               "strides") ||
        !gb_ok(cudnnBackendFinalize(d), "conv finalize"))
        return NULL;
    return d;
}

/* Everything one graph is made of, destroyed together. */
struct gb_graph {
    gdesc tensor[5], conv, op, relu_desc, relu, graph;
    gdesc second_graph; /* gb_reuse's: B's operation in a graph made at A's address */
};

/* dir 0 forward (x, w -> y), 1 backward data (dy = y, w -> dx = x), 2
 * backward filter (x, dy = y -> dw = w); fused: a forward's y is virtual and
 * a ReLU writes the output (uid GB_OUT). handle may be NULL (device-less). */
static inline int gb_graph(struct gb_graph *g, int dir, const struct gshape *s,
                           cudnnDataType_t type, int fused, cudnnHandle_t handle)
{
    memset(g, 0, sizeof *g);
    int nd = s->d > 0 ? 5 : 4;
    int64_t x[5] = {s->n, s->c, s->h, s->w}, w[5] = {s->k, s->c, s->r, s->s},
            y[5] = {s->n, s->k, gshape_out(s, s->h, s->r), gshape_out(s, s->w, s->s)};
    if (nd == 5) { /* depth before height */
        int64_t x5[5] = {s->n, s->c, s->d, s->h, s->w}, w5[5] = {s->k, s->c, s->t, s->r, s->s},
                y5[5] = {s->n, s->k, gshape_out(s, s->d, s->t), y[2], y[3]};
        memcpy(x, x5, sizeof x);
        memcpy(w, w5, sizeof w);
        memcpy(y, y5, sizeof y);
    }
    float alpha = 1.0f, beta = 0.0f;
    g->tensor[0] = gb_tensor(GB_X, type, x, nd, s->nhwc, 0);
    g->tensor[1] = gb_tensor(GB_W, type, w, nd, s->nhwc, 0);
    g->tensor[2] = gb_tensor(GB_Y, type, y, nd, s->nhwc, fused);
    g->conv = gb_conv(s);
    if (!g->tensor[0] || !g->tensor[1] || !g->tensor[2] || !g->conv)
        return 0;
    static const cudnnBackendDescriptorType_t types[3] = {
        CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    static const cudnnBackendAttributeName_t names[3][6] = {
        {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA}};
    const cudnnBackendAttributeName_t *n = names[dir];
    if (!gb_ok(cudnnBackendCreateDescriptor(types[dir], &g->op), "op") ||
        !gb_ok(
            cudnnBackendSetAttribute(g->op, n[0], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[0]),
            "op x") ||
        !gb_ok(
            cudnnBackendSetAttribute(g->op, n[1], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[1]),
            "op w") ||
        !gb_ok(
            cudnnBackendSetAttribute(g->op, n[2], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[2]),
            "op y") ||
        !gb_ok(cudnnBackendSetAttribute(g->op, n[3], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->conv),
               "op conv") ||
        !gb_ok(cudnnBackendSetAttribute(g->op, n[4], CUDNN_TYPE_FLOAT, 1, &alpha), "alpha") ||
        !gb_ok(cudnnBackendSetAttribute(g->op, n[5], CUDNN_TYPE_FLOAT, 1, &beta), "beta") ||
        !gb_ok(cudnnBackendFinalize(g->op), "op finalize"))
        return 0;
    gdesc ops[2] = {g->op, NULL};
    if (fused) {
        cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD;
        cudnnDataType_t prec = CUDNN_DATA_FLOAT;
        g->tensor[3] = gb_tensor(GB_OUT, type, y, nd, s->nhwc, 0);
        if (!g->tensor[3] ||
            !gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &g->relu_desc),
                   "pointwise") ||
            !gb_ok(cudnnBackendSetAttribute(g->relu_desc, CUDNN_ATTR_POINTWISE_MODE,
                                            CUDNN_TYPE_POINTWISE_MODE, 1, &mode),
                   "pointwise mode") ||
            !gb_ok(cudnnBackendSetAttribute(g->relu_desc, CUDNN_ATTR_POINTWISE_MATH_PREC,
                                            CUDNN_TYPE_DATA_TYPE, 1, &prec),
                   "pointwise prec") ||
            !gb_ok(cudnnBackendFinalize(g->relu_desc), "pointwise finalize") ||
            !gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                                                &g->relu),
                   "relu") ||
            !gb_ok(cudnnBackendSetAttribute(g->relu, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->relu_desc),
                   "relu desc") ||
            !gb_ok(cudnnBackendSetAttribute(g->relu, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[2]),
                   "relu x") ||
            !gb_ok(cudnnBackendSetAttribute(g->relu, CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[3]),
                   "relu y") ||
            !gb_ok(cudnnBackendFinalize(g->relu), "relu finalize"))
            return 0;
        ops[1] = g->relu;
    }
    if (!gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g->graph),
               "graph") ||
        !gb_ok(cudnnBackendSetAttribute(g->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, fused ? 2 : 1, ops),
               "graph ops") ||
        (handle && !gb_ok(cudnnBackendSetAttribute(g->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                                   CUDNN_TYPE_HANDLE, 1, &handle),
                          "graph handle")) ||
        !gb_ok(cudnnBackendFinalize(g->graph), "graph finalize"))
        return 0;
    return 1;
}

static inline void gb_graph_destroy(struct gb_graph *g)
{
    gdesc all[] = {g->second_graph, g->graph,     g->relu,      g->relu_desc,
                   g->op,           g->conv,      g->tensor[0], g->tensor[1],
                   g->tensor[2],    g->tensor[3], g->tensor[4]};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i])
            cudnnBackendDestroyDescriptor(all[i]);
}

/* Mode A's heuristic configurations for g's graph into cfgs (8 made;
 * those past the returned count left empty); -1 when the heuristics could
 * not be asked. devprop replaces the handle where there is no GPU. */
static inline int64_t gb_heuristics(const struct gb_graph *g, gdesc devprop, gdesc cfgs[8])
{
    gdesc heur = NULL;
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    int64_t n = 0;
    for (int i = 0; i < 8; i++)
        cfgs[i] = NULL;
    if (!gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur), "heur") ||
        !gb_ok(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->graph),
               "heur graph") ||
        !gb_ok(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                        &mode),
               "heur mode") ||
        (devprop && !gb_ok(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &devprop),
                           "heur devprop")) ||
        !gb_ok(cudnnBackendFinalize(heur), "heur finalize")) {
        if (heur)
            cudnnBackendDestroyDescriptor(heur);
        return -1;
    }
    for (int i = 0; i < 8; i++)
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]);
    gb_ok(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 8, &n, cfgs),
          "heur results");
    cudnnBackendDestroyDescriptor(heur);
    return n;
}

/* The first of the n configurations cfgs that finalizes into a plan: the
 * plan (its configuration moved to *cfg_out, the rest destroyed), or NULL. */
static inline gdesc gb_plan_of(gdesc cfgs[8], int64_t n, cudnnHandle_t handle, gdesc devprop,
                               gdesc *cfg_out)
{
    gdesc plan = NULL;
    for (int64_t i = 0; i < n && i < 8 && !plan; i++) {
        gdesc p = NULL;
        if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p) !=
                CUDNN_STATUS_SUCCESS ||
            cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                     &cfgs[i]) != CUDNN_STATUS_SUCCESS ||
            (handle &&
             cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                      &handle) != CUDNN_STATUS_SUCCESS) ||
            (devprop && cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP,
                                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                 &devprop) != CUDNN_STATUS_SUCCESS) ||
            cudnnBackendFinalize(p) != CUDNN_STATUS_SUCCESS) {
            if (p)
                cudnnBackendDestroyDescriptor(p);
            continue;
        }
        plan = p;
        *cfg_out = cfgs[i];
        cfgs[i] = NULL;
    }
    for (int i = 0; i < 8; i++)
        if (cfgs[i]) {
            cudnnBackendDestroyDescriptor(cfgs[i]);
            cfgs[i] = NULL;
        }
    return plan;
}

/* The first heuristic configuration (mode A) that finalizes into a plan:
 * the plan (with its configuration in *cfg), or NULL. devprop replaces the
 * handle where there is no GPU. */
static inline gdesc gb_plan(const struct gb_graph *g, cudnnHandle_t handle, gdesc devprop,
                            gdesc *cfg_out)
{
    gdesc cfgs[8];
    int64_t n = gb_heuristics(g, devprop, cfgs);
    return n < 0 ? NULL : gb_plan_of(cfgs, n, handle, devprop, cfg_out);
}

/* The address-reuse sequence (cuDNN allows a descriptor to be destroyed
 * while another refers to it): the heuristics of graph A (forward, shape
 * sa) fill engine configurations; graph B (forward, shape sb) is made; A's
 * operation-graph descriptor is destroyed and at once a graph of B's
 * operation is made (b->second_graph), at A's old address where the
 * allocator gives it back (*reused says whether it did); then a plan is
 * finalized from A's configurations. The plan, or NULL; a and b hold the
 * rest, for gb_graph_destroy. */
static inline gdesc gb_reuse(struct gb_graph *a, struct gb_graph *b, const struct gshape *sa,
                             const struct gshape *sb, cudnnHandle_t handle, gdesc devprop,
                             gdesc *cfg_out, int *reused)
{
    gdesc cfgs[8];
    *reused = 0;
    if (!gb_graph(a, 0, sa, CUDNN_DATA_FLOAT, 0, handle))
        return NULL;
    int64_t n = gb_heuristics(a, devprop, cfgs);
    if (n < 0)
        return NULL;
    if (!gb_graph(b, 0, sb, CUDNN_DATA_FLOAT, 0, handle))
        return NULL;
    gdesc old = a->graph;
    cudnnBackendDestroyDescriptor(a->graph);
    a->graph = NULL;
    if (!gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR,
                                            &b->second_graph),
               "second graph") ||
        !gb_ok(cudnnBackendSetAttribute(b->second_graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b->op),
               "second graph ops") ||
        (handle && !gb_ok(cudnnBackendSetAttribute(b->second_graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                                   CUDNN_TYPE_HANDLE, 1, &handle),
                          "second graph handle")) ||
        !gb_ok(cudnnBackendFinalize(b->second_graph), "second graph finalize"))
        return NULL;
    *reused = b->second_graph == old;
    return gb_plan_of(cfgs, n, handle, devprop, cfg_out);
}

static inline int64_t gb_workspace(gdesc plan)
{
    int64_t ws = -1, n = 0;
    return gb_ok(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                          CUDNN_TYPE_INT64, 1, &n, &ws),
                 "workspace")
               ? ws
               : -1;
}

#endif
