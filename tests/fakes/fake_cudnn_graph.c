/* TEST-ONLY: the backend ("graph") API of the fake libcudnn.so.9, never
 * installed. Descriptors keep their attributes typed, as set; finalize
 * checks what each type needs and makes a descriptor immutable (a later
 * set answers BAD_PARAM); get answers from what was set, and computes what
 * cuDNN computes: heuristic results, engines' numerical notes, a plan's
 * workspace, the graph's engine count. Execute runs a 4-d convolution
 * (forward, backward data, backward filter; a fused ReLU after a forward)
 * on host memory through the variant pack's unique ids, in its engine's
 * precision, and records which plan ran (fake_cudnn_graph_last).
 *
 * The engines (global index: notes on an fp32 graph):
 *   0  FP32, exact;                      1  TF32 tensor cores (the fp32
 *   graph's heuristic gives 1, then 0);  2  down-converting (fp16 copies of
 *   the inputs in the workspace), never offered by a heuristic, fused
 *   graphs only with FAKE_CUDNN_GRAPH_FUSED_DOWN_CONVERT=1;
 *   3  fp16 tensor cores: the fp16 graph's top engine (knob TILE_SIZE 2),
 *   down-converting on a single fp32 convolution;
 *   4  fp16 only (FAKE_CUDNN_GRAPH_HALF_TOP=4 puts it first for fp16).
 * FAKE_CUDNN_GRAPH_DOWN_CONVERT_FAILS=1 makes a down-converting plan's
 * execute fail (before it writes anything). */
#include <cudnn.h>
#include <math.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "runtime/export.h"
#include "shim/cudnn_graph/cudnn_graph_abi.h"
#include "tests/fakes/fake_cudnn_internal.h"

#define ENGINES 5
#define MAGIC 0x6e6e6475u

struct attr {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    int64_t count;
    unsigned char value[256];
};

struct desc {
    unsigned magic;
    cudnnBackendDescriptorType_t type;
    int finalized, n;
    struct attr a[24];
    int64_t workspace; /* a plan's */
};

/* What the calling thread's last graph execute ran. */
struct fake_cudnn_graph_record {
    void *plan;
    int64_t engine;
    int down_convert;
    long executes;
};
static __thread struct fake_cudnn_graph_record last_run;

AMP_EXPORT const struct fake_cudnn_graph_record *fake_cudnn_graph_last(void)
{
    return &last_run;
}

static _Atomic long live_descriptors;

/* Descriptors created and not yet destroyed (the test checks the shim
 * gives back every one of its own). */
AMP_EXPORT long fake_cudnn_graph_live(void)
{
    return live_descriptors;
}

static struct desc *D(cudnnBackendDescriptor_t d)
{
    struct desc *p = d;
    return p && p->magic == MAGIC ? p : NULL;
}

static size_t type_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
        return 8;
    case CUDNN_TYPE_BOOLEAN:
    case CUDNN_TYPE_CHAR:
        return 1;
    case CUDNN_TYPE_FRACTION:
        return 16;
    default:
        return 4;
    }
}

static const struct attr *find(const struct desc *d, cudnnBackendAttributeName_t name)
{
    for (int i = 0; d && i < d->n; i++)
        if (d->a[i].name == name)
            return &d->a[i];
    return NULL;
}

static struct desc *ref(const struct desc *d, cudnnBackendAttributeName_t name, int i)
{
    const struct attr *a = find(d, name);
    void *p = NULL;
    if (a && a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR && i < a->count)
        memcpy(&p, a->value + 8 * i, 8);
    return D(p);
}

static int64_t get_int(const struct desc *d, cudnnBackendAttributeName_t name, int i, int64_t dflt)
{
    const struct attr *a = find(d, name);
    if (!a || i >= a->count)
        return dflt;
    if (a->type == CUDNN_TYPE_INT64) {
        int64_t v;
        memcpy(&v, a->value + 8 * i, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, a->value + 4 * i, 4);
    return v;
}

static int put(struct desc *d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
               int64_t count, const void *value)
{
    size_t bytes = (size_t)count * type_size(type);
    if (count < 0 || bytes > sizeof d->a[0].value || (count && !value))
        return 0;
    struct attr *a = (struct attr *)find(d, name);
    if (!a) {
        if (d->n == (int)(sizeof d->a / sizeof *d->a))
            return 0;
        a = &d->a[d->n++];
    }
    a->name = name;
    a->type = type;
    a->count = count;
    if (bytes)
        memcpy(a->value, value, bytes);
    return 1;
}

/* Destroyed descriptors are kept and given out again, last first, as a
 * real allocator often gives a freed address back: a program that
 * destroys a descriptor another still refers to then finds the next one
 * at its address (the address-reuse sequence the shim's graph book must
 * survive), and the memory behind the stale reference stays valid, so
 * the fake itself never reads freed memory. */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct desc *spare[64];
static int n_spare;

AMP_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                      cudnnBackendDescriptor_t *out)
{
    struct desc *d = NULL;
    if (out) {
        pthread_mutex_lock(&spare_lock);
        d = n_spare ? spare[--n_spare] : NULL;
        pthread_mutex_unlock(&spare_lock);
        if (d)
            memset(d, 0, sizeof *d);
        else
            d = calloc(1, sizeof *d);
    }
    if (!d)
        return BAD;
    d->magic = MAGIC;
    d->type = type;
    *out = d;
    live_descriptors++;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t desc)
{
    struct desc *d = D(desc);
    if (!d)
        return BAD;
    d->magic = 0;
    pthread_mutex_lock(&spare_lock);
    if (n_spare < (int)(sizeof spare / sizeof *spare)) {
        spare[n_spare++] = d;
        d = NULL;
    }
    pthread_mutex_unlock(&spare_lock);
    free(d);
    live_descriptors--;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t desc)
{
    struct desc *d = D(desc);
    if (!d)
        return BAD;
    d->n = 0;
    d->finalized = 0;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t desc,
                                                  cudnnBackendAttributeName_t name,
                                                  cudnnBackendAttributeType_t type, int64_t count,
                                                  const void *value)
{
    struct desc *d = D(desc);
    return d && !d->finalized && put(d, name, type, count, value) ? CUDNN_STATUS_SUCCESS : BAD;
}

/* ---- graphs and engines ---- */

/* What an operation graph holds: its convolution, the direction, its
 * tensors (in1, in2, out: x w y / dy w dx / x dy dw), whether a ReLU
 * follows it, and the type of its data. */
struct graph {
    const struct desc *conv_op, *conv, *t[3], *relu_out;
    int dir, fused;
    int64_t type;
};

static const cudnnBackendAttributeName_t operands[3][4] = {
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC},
};

static int direction(cudnnBackendDescriptorType_t t)
{
    return t == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR           ? 0
           : t == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR   ? 1
           : t == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR ? 2
                                                                                 : -1;
}

static int read_graph(const struct desc *g, struct graph *out)
{
    memset(out, 0, sizeof *out);
    const struct attr *ops = find(g, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    for (int64_t i = 0; ops && i < ops->count; i++) {
        const struct desc *op = ref(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, (int)i);
        if (op && direction(op->type) >= 0 && !out->conv_op)
            out->conv_op = op;
        else if (op && op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
            out->relu_out = ref(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, 0);
        else
            return 0;
    }
    if (!out->conv_op)
        return 0;
    out->dir = direction(out->conv_op->type);
    out->fused = ops->count > 1;
    for (int i = 0; i < 3; i++)
        if (!(out->t[i] = ref(out->conv_op, operands[out->dir][i], 0)))
            return 0;
    out->conv = ref(out->conv_op, operands[out->dir][3], 0);
    out->type = get_int(out->t[0], CUDNN_ATTR_TENSOR_DATA_TYPE, 0, -1);
    return out->conv && (!out->fused || (out->dir == 0 && out->relu_out));
}

static int64_t elements(const struct desc *t)
{
    int64_t n = 1;
    for (int i = 0; i < 4; i++)
        n *= get_int(t, CUDNN_ATTR_TENSOR_DIMENSIONS, i, 0);
    return n;
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

/* Whether engine `index` takes graph g, its notes (up to 2) and workspace. */
static int engine_takes(int64_t index, const struct graph *g, int *notes, int *n_notes,
                        int64_t *workspace)
{
    int fp32 = g->type == CUDNN_DATA_FLOAT, half = g->type == CUDNN_DATA_HALF;
    int64_t copies = 2 * (elements(g->t[0]) + elements(g->t[1]));
    *n_notes = 0;
    *workspace = 0;
    switch (index) {
    case 0:
        return fp32;
    case 1:
        notes[(*n_notes)++] = CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        *workspace = 64;
        return fp32;
    case 2:
        notes[(*n_notes)++] = CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        notes[(*n_notes)++] = CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
        *workspace = copies + 512;
        return fp32 && (!g->fused || env_on("FAKE_CUDNN_GRAPH_FUSED_DOWN_CONVERT"));
    case 3:
        notes[(*n_notes)++] = CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        if (fp32)
            notes[(*n_notes)++] = CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
        *workspace = fp32 ? copies + 256 : 128;
        return half || (fp32 && !g->fused);
    case 4:
        notes[(*n_notes)++] = CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        *workspace = 96;
        return half;
    }
    return 0;
}

/* An engine descriptor for `index` on graph, finalized, or NULL. */
static struct desc *make_engine(cudnnBackendDescriptor_t graph, int64_t index)
{
    cudnnBackendDescriptor_t e;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e) != 0)
        return NULL;
    put(D(e), CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    put(D(e), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    D(e)->finalized = 1;
    live_descriptors--; /* the library's own, not the program's */
    return D(e);
}

static int has(const struct desc *d, cudnnBackendAttributeName_t name)
{
    return find(d, name) != NULL;
}

static int finalized_ref(const struct desc *d, cudnnBackendAttributeName_t name)
{
    const struct desc *r = ref(d, name, 0);
    return r && r->finalized;
}

/* The engine a configuration holds and the graph it was made for. */
static const struct desc *cfg_engine(const struct desc *cfg, struct graph *g)
{
    const struct desc *e = ref(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
    return e && read_graph(ref(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0), g) ? e : NULL;
}

AMP_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t desc)
{
    struct desc *d = D(desc);
    if (!d || d->finalized)
        return BAD;
    struct graph g;
    int ok = 1;
    switch ((int)d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
        ok = has(d, CUDNN_ATTR_TENSOR_DATA_TYPE) && has(d, CUDNN_ATTR_TENSOR_DIMENSIONS) &&
             has(d, CUDNN_ATTR_TENSOR_STRIDES) && has(d, CUDNN_ATTR_TENSOR_UNIQUE_ID) &&
             has(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT);
        break;
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
        ok = has(d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE) && has(d, CUDNN_ATTR_CONVOLUTION_CONV_MODE) &&
             has(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS) &&
             has(d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS) &&
             has(d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS) &&
             has(d, CUDNN_ATTR_CONVOLUTION_DILATIONS) &&
             has(d, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
        break;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        for (int i = 0; i < 4; i++)
            ok = ok && finalized_ref(d, operands[direction(d->type)][i]);
        break;
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
        ok = has(d, CUDNN_ATTR_POINTWISE_MODE);
        break;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
        ok = finalized_ref(d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR) &&
             finalized_ref(d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC) &&
             finalized_ref(d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
        break;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
        ok = read_graph(d, &g);
        break;
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        ok = has(d, CUDNN_ATTR_ENGINEHEUR_MODE) &&
             finalized_ref(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
        break;
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: {
        int notes[2], n;
        int64_t ws;
        ok = read_graph(ref(d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0), &g) &&
             engine_takes(get_int(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0, -1), &g, notes, &n, &ws);
        if (!ok)
            return UNSUPPORTED;
        break;
    }
    case CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR:
        ok = has(d, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE) && has(d, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE);
        break;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: {
        const struct desc *e = ref(d, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
        const struct attr *knobs = find(d, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES);
        ok = e && e->finalized;
        /* only engine 3 has a knob: TILE_SIZE, 0 to 3 */
        for (int64_t i = 0; ok && knobs && i < knobs->count; i++) {
            const struct desc *k = ref(d, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, (int)i);
            ok = k && get_int(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0, -1) == 3 &&
                 get_int(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, 0, -1) == CUDNN_KNOB_TYPE_TILE_SIZE &&
                 (uint64_t)get_int(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, 0, -1) < 4;
        }
        break;
    }
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
        const struct desc *cfg = ref(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0), *e;
        int notes[2], n;
        ok = cfg && cfg->finalized && (e = cfg_engine(cfg, &g)) &&
             (has(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE) ||
              has(d, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP)) &&
             engine_takes(get_int(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0, -1), &g, notes, &n,
                          &d->workspace);
        break;
    }
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
        ok = has(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) &&
             has(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
        break;
    default:
        break;
    }
    if (!ok)
        return BAD;
    d->finalized = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* The heuristic's list for a graph: fp32 -> TF32 then FP32; fp16 -> the
 * top engine (3, or FAKE_CUDNN_GRAPH_HALF_TOP) then the other. */
static int heuristic(const struct graph *g, int64_t list[2])
{
    if (g->type == CUDNN_DATA_FLOAT) {
        list[0] = 1;
        list[1] = 0;
        return 2;
    }
    const char *top = getenv("FAKE_CUDNN_GRAPH_HALF_TOP");
    list[0] = top && strcmp(top, "4") == 0 ? 4 : 3;
    list[1] = list[0] == 3 ? 4 : 3;
    return 2;
}

static cudnnStatus_t fill_config(struct desc *cfg, cudnnBackendDescriptor_t graph, int64_t index)
{
    struct desc *e = make_engine(graph, index);
    if (!e || cfg->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
        return BAD;
    cfg->n = 0;
    put(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e);
    if (index == 3) { /* its knob: TILE_SIZE 2 */
        cudnnBackendDescriptor_t k;
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &k);
        live_descriptors--;
        cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_TILE_SIZE;
        int64_t value = 2;
        put(D(k), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
        put(D(k), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value);
        D(k)->finalized = 1;
        put(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &k);
    }
    cfg->finalized = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* A descriptor's contents copied into another of the same type (an engine
 * or a knob choice handed out of a configuration). */
static cudnnStatus_t copy_into(const struct desc *from, void *to)
{
    struct desc *d = D(to);
    if (!from || !d || d->type != from->type)
        return BAD;
    d->n = from->n;
    memcpy(d->a, from->a, sizeof d->a);
    d->finalized = 1;
    return CUDNN_STATUS_SUCCESS;
}

AMP_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const desc,
                                                  cudnnBackendAttributeName_t name,
                                                  cudnnBackendAttributeType_t type,
                                                  int64_t requested, int64_t *count, void *array)
{
    struct desc *d = D(desc);
    if (!d || !count || requested < 0)
        return BAD;
    if (!d->finalized)
        return CUDNN_STATUS_NOT_INITIALIZED;
    struct graph g;
    switch ((int)name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
        int64_t list[2];
        cudnnBackendDescriptor_t graph = ref(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0);
        if (!read_graph(graph, &g))
            return BAD;
        int n = heuristic(&g, list);
        *count = n;
        for (int64_t i = 0; array && i < n && i < requested; i++) {
            cudnnStatus_t s = fill_config(D(((void **)array)[i]), graph, list[i]);
            if (s != CUDNN_STATUS_SUCCESS)
                return s;
        }
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        *count = 1;
        return requested < 1 || !array
                   ? CUDNN_STATUS_SUCCESS
                   : copy_into(ref(d, CUDNN_ATTR_ENGINECFG_ENGINE, 0), *(void **)array);
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES: {
        const struct attr *k = find(d, name);
        *count = k ? k->count : 0;
        for (int64_t i = 0; array && i < *count && i < requested; i++)
            if (copy_into(ref(d, name, (int)i), ((void **)array)[i]) != CUDNN_STATUS_SUCCESS)
                return BAD;
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE: {
        int notes[2], n;
        int64_t ws;
        if (!read_graph(ref(d, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0), &g) ||
            !engine_takes(get_int(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0, -1), &g, notes, &n, &ws))
            return BAD;
        *count = n;
        for (int i = 0; array && i < n && i < requested; i++)
            ((cudnnBackendNumericalNote_t *)array)[i] = (cudnnBackendNumericalNote_t)notes[i];
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        *count = 1;
        if (requested >= 1 && array)
            *(int64_t *)array = d->workspace;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT:
        *count = 1;
        if (requested >= 1 && array)
            *(int64_t *)array = ENGINES;
        return CUDNN_STATUS_SUCCESS;
    }
    const struct attr *a = find(d, name);
    if (!a || a->type != type)
        return BAD;
    *count = a->count;
    if (array)
        memcpy(array, a->value,
               (size_t)(a->count < requested ? a->count : requested) * type_size(type));
    return CUDNN_STATUS_SUCCESS;
}

/* ---- execute ---- */

static void *pointer_of(const struct desc *pack, int64_t uid)
{
    const struct attr *ids = find(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    const struct attr *ptrs = find(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    for (int64_t i = 0; ids && ptrs && i < ids->count && i < ptrs->count; i++)
        if (get_int(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, (int)i, -1) == uid) {
            void *p;
            memcpy(&p, ptrs->value + 8 * i, 8);
            return p;
        }
    return NULL;
}

/* A tensor's element (n, c, h, w) offset by its strides. */
static long offset(const struct desc *t, long n, long c, long h, long w)
{
    return n * get_int(t, CUDNN_ATTR_TENSOR_STRIDES, 0, 0) +
           c * get_int(t, CUDNN_ATTR_TENSOR_STRIDES, 1, 0) +
           h * get_int(t, CUDNN_ATTR_TENSOR_STRIDES, 2, 0) +
           w * get_int(t, CUDNN_ATTR_TENSOR_STRIDES, 3, 0);
}

static float operand(const struct desc *t, const void *p, long i, int64_t engine)
{
    float v = fake_load((cudnnDataType_t)get_int(t, CUDNN_ATTR_TENSOR_DATA_TYPE, 0, 0), p, i);
    if (get_int(t, CUDNN_ATTR_TENSOR_DATA_TYPE, 0, 0) != CUDNN_DATA_FLOAT)
        return v;
    if (engine == 2 || engine == 3) /* down-converted */
        return fake_to_type(CUDNN_DATA_HALF, v);
    return engine == 1 && fake_tf32_allowed() ? fake_round_bits(v, 13) : v;
}

AMP_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                             cudnnBackendDescriptor_t pack)
{
    struct desc *p = D(plan), *vp = D(pack);
    struct graph g;
    const struct desc *cfg = p ? ref(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0) : NULL, *e;
    if (!handle || !p || !p->finalized || !vp || !vp->finalized || !cfg ||
        !(e = cfg_engine(cfg, &g)))
        return BAD;
    int64_t engine = get_int(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 0, -1), ws;
    int notes[2], n, down = 0;
    engine_takes(engine, &g, notes, &n, &ws);
    for (int i = 0; i < n; i++)
        down |= notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    void *io[3], *out = NULL;
    for (int i = 0; i < 3; i++)
        io[i] = pointer_of(vp, get_int(g.t[i], CUDNN_ATTR_TENSOR_UNIQUE_ID, 0, -1));
    if (g.fused)
        out = pointer_of(vp, get_int(g.relu_out, CUDNN_ATTR_TENSOR_UNIQUE_ID, 0, -1));
    void *workspace = NULL;
    const struct attr *w = find(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
    if (w)
        memcpy(&workspace, w->value, 8);
    if (!io[0] || !io[1] || (!io[2] && !g.fused) || (g.fused && !out) ||
        (p->workspace > 0 && !workspace))
        return BAD;
    if (down && env_on("FAKE_CUDNN_GRAPH_DOWN_CONVERT_FAILS"))
        return CUDNN_STATUS_EXECUTION_FAILED;
    /* the shapes: x [N,C,H,W], w [K,C,R,S], y [N,K,P,Q], whatever the
     * direction; which tensor is which follows from it */
    const struct desc *x = g.dir == 1 ? g.t[2] : g.t[0],
                      *wt = g.dir == 0   ? g.t[1]
                            : g.dir == 1 ? g.t[1]
                                         : g.t[2],
                      *y = g.dir == 0 ? g.t[2] : g.t[g.dir == 1 ? 0 : 1];
    const void *px = g.dir == 1 ? NULL : io[0], *pw = g.dir == 2 ? NULL : io[1],
               *py = g.dir == 0 ? NULL : io[g.dir == 1 ? 0 : 1];
    long N = get_int(x, CUDNN_ATTR_TENSOR_DIMENSIONS, 0, 0),
         C = get_int(x, CUDNN_ATTR_TENSOR_DIMENSIONS, 1, 0),
         H = get_int(x, CUDNN_ATTR_TENSOR_DIMENSIONS, 2, 0),
         W = get_int(x, CUDNN_ATTR_TENSOR_DIMENSIONS, 3, 0),
         K = get_int(wt, CUDNN_ATTR_TENSOR_DIMENSIONS, 0, 0),
         R = get_int(wt, CUDNN_ATTR_TENSOR_DIMENSIONS, 2, 0),
         S = get_int(wt, CUDNN_ATTR_TENSOR_DIMENSIONS, 3, 0),
         P = get_int(y, CUDNN_ATTR_TENSOR_DIMENSIONS, 2, 0),
         Q = get_int(y, CUDNN_ATTR_TENSOR_DIMENSIONS, 3, 0);
    long pad = get_int(g.conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 0, 0),
         stride = get_int(g.conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 0, 1);
    const struct desc *ot = g.t[2];
    long n_out = elements(ot);
    double *acc = calloc((size_t)n_out, sizeof *acc);
    if (!acc)
        return CUDNN_STATUS_ALLOC_FAILED;
    for (long b = 0; b < N; b++)
        for (long k = 0; k < K; k++)
            for (long i = 0; i < P; i++)
                for (long j = 0; j < Q; j++)
                    for (long c = 0; c < C; c++)
                        for (long r = 0; r < R; r++)
                            for (long s = 0; s < S; s++) {
                                long h = i * stride - pad + r, wc = j * stride - pad + s;
                                if (h < 0 || h >= H || wc < 0 || wc >= W)
                                    continue;
                                long ox = offset(x, b, c, h, wc), ow = offset(wt, k, c, r, s),
                                     oy = offset(y, b, k, i, j);
                                if (g.dir == 0)
                                    acc[oy] += (double)operand(x, px, ox, engine) *
                                               operand(wt, pw, ow, engine);
                                else if (g.dir == 1)
                                    acc[ox] += (double)operand(y, py, oy, engine) *
                                               operand(wt, pw, ow, engine);
                                else
                                    acc[ow] += (double)operand(x, px, ox, engine) *
                                               operand(y, py, oy, engine);
                            }
    float alpha = 1, beta = 0;
    const struct attr *aa = find(g.conv_op, operands[g.dir][3] - 2),
                      *ab = find(g.conv_op, operands[g.dir][3] - 1);
    if (aa)
        alpha = aa->type == CUDNN_TYPE_DOUBLE ? (float)*(const double *)aa->value
                                              : *(const float *)aa->value;
    if (ab)
        beta = ab->type == CUDNN_TYPE_DOUBLE ? (float)*(const double *)ab->value
                                             : *(const float *)ab->value;
    cudnnDataType_t t_out =
        (cudnnDataType_t)get_int(g.fused ? g.relu_out : ot, CUDNN_ATTR_TENSOR_DATA_TYPE, 0, 0);
    for (long i = 0; i < n_out; i++) {
        float v = (float)acc[i];
        if (g.fused) /* a virtual y, through the ReLU into its output */
            fake_store(t_out, out, i, v > 0 ? v : 0);
        else
            fake_blend(t_out, io[2], i, v, alpha, beta);
    }
    free(acc);
    last_run = (struct fake_cudnn_graph_record){plan, engine, down, last_run.executes + 1};
    return CUDNN_STATUS_SUCCESS;
}
