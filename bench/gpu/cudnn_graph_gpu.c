/* cuDNN's graph API on a GPU, per layer of ResNet-50 (N 32, NHWC, forward):
 * the time of the program's own fp32 plan (the heuristic's first, TF32 on
 * Ampere and later), of an FP32 plan (the heuristic's first engine without
 * tensor cores) and of the down-converting plan ampshim substitutes (the
 * fp16 graph's top engine created by global index on the fp32 graph, else
 * the first down-converting engine), side by side in one run, with the
 * ratios. Run without the shim: it builds the three plans itself. Exits 77
 * without a GPU. */
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/cudnn_graph/cudnn_graph_build.h"

static int has_note(gdesc engine, cudnnBackendNumericalNote_t note)
{
    cudnnBackendNumericalNote_t notes[32];
    int64_t n = 0;
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE, 32, &n, notes) != 0)
        return 0;
    for (int64_t i = 0; i < n; i++)
        if (notes[i] == note)
            return 1;
    return 0;
}

static gdesc plan_of(gdesc cfg, cudnnHandle_t h)
{
    gdesc p = NULL;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p) != 0 ||
        cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg) != 0 ||
        cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) !=
            0 ||
        cudnnBackendFinalize(p) != 0)
        return NULL;
    return p;
}

/* The heuristic's configurations for a graph (up to 16), and how many. */
static int64_t heuristic(gdesc graph, gdesc cfgs[16])
{
    gdesc heur;
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    int64_t n = 0;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
    cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (cudnnBackendFinalize(heur) == 0) {
        for (int i = 0; i < 16; i++)
            cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]);
        cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 16, &n, cfgs);
    }
    return n < 16 ? n : 16;
}

static gdesc engine_of(gdesc cfg)
{
    gdesc e;
    int64_t n;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e);
    cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                             &e);
    return e;
}

/* A down-converting plan on the fp32 graph: engine `index` first, then
 * every index in turn. */
static gdesc down_converting(gdesc graph, int64_t index, cudnnHandle_t h, int64_t *used)
{
    for (int64_t i = -1; i < 256; i++) {
        int64_t gi = i < 0 ? index : i;
        if (gi < 0 || (i >= 0 && i == index))
            continue;
        gdesc e, cfg;
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e);
        cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
        cudnnBackendSetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &gi);
        if (cudnnBackendFinalize(e) != 0 || !has_note(e, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))
            continue;
        cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
        cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &e);
        gdesc p;
        if (cudnnBackendFinalize(cfg) == 0 && (p = plan_of(cfg, h))) {
            *used = gi;
            return p;
        }
    }
    return NULL;
}

static double time_plan(cudnnHandle_t h, gdesc plan, void *x, void *w, void *y)
{
    if (!plan)
        return -1;
    int64_t ws = 0, n;
    cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                             &n, &ws);
    void *dws = NULL;
    if (ws > 0 && cudaMalloc(&dws, (size_t)ws) != cudaSuccess)
        return -1;
    int64_t uids[3] = {GB_X, GB_W, GB_Y};
    void *ptrs[3] = {x, w, y};
    gdesc pack;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
                             ptrs);
    cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &dws);
    cudnnBackendFinalize(pack);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; i++)
        cudnnBackendExecute(h, plan, pack);
    cudaEventRecord(a, 0);
    int ok = 1;
    for (int i = 0; i < 20; i++)
        ok &= cudnnBackendExecute(h, plan, pack) == 0;
    cudaEventRecord(b, 0);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudnnBackendDestroyDescriptor(pack);
    cudaFree(dws);
    return ok ? ms / 20 : -1;
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("cudnn_graph_gpu bench: no CUDA device; skipped\n");
        return 77;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    cudnnHandle_t h;
    cudnnCreate(&h);
    printf("%s, cuDNN %zu; ResNet-50 layers, N 32, NHWC, forward; ms per call (20 calls)\n",
           prop.name, cudnnGetVersion());
    printf("%-26s %9s %9s %9s %7s %9s %9s\n", "layer (C->K, HxW, RxS)", "fp32", "tf32", "down-cvt",
           "engine", "tf32/dc", "fp32/dc");
    static const struct gshape layers[] = {
        {32, 64, 56, 56, 64, 1, 1, 0, 1, 1, 0, 0},   {32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 0, 0},
        {32, 64, 56, 56, 256, 1, 1, 0, 1, 1, 0, 0},  {32, 256, 56, 56, 64, 1, 1, 0, 1, 1, 0, 0},
        {32, 128, 28, 28, 128, 3, 3, 1, 1, 1, 0, 0}, {32, 256, 14, 14, 256, 3, 3, 1, 1, 1, 0, 0},
        {32, 512, 7, 7, 512, 3, 3, 1, 1, 1, 0, 0},   {32, 1024, 14, 14, 256, 1, 1, 0, 1, 1, 0, 0},
    };
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++) {
        const struct gshape *s = &layers[l];
        size_t xn = (size_t)(s->n * s->c * s->h * s->w), wn = (size_t)(s->k * s->c * s->r * s->s),
               yn = (size_t)(s->n * s->k * s->h * s->w);
        void *x, *w, *y;
        cudaMalloc(&x, xn * 4);
        cudaMalloc(&w, wn * 4);
        cudaMalloc(&y, yn * 4);
        cudaMemset(x, 0, xn * 4);
        cudaMemset(w, 0, wn * 4);
        struct gb_graph g32, g16;
        gdesc cfgs[16] = {0}, half_cfgs[16] = {0}, tf32 = NULL, fp32 = NULL, dc = NULL;
        int64_t engine = -1, top16 = -1, n;
        if (gb_graph(&g32, 0, s, CUDNN_DATA_FLOAT, 0, h)) {
            int64_t count = heuristic(g32.graph, cfgs);
            for (int64_t i = 0; i < count; i++) {
                gdesc e = engine_of(cfgs[i]);
                int tc = has_note(e, CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
                if (tc && !tf32)
                    tf32 = plan_of(cfgs[i], h);
                if (!tc && !fp32)
                    fp32 = plan_of(cfgs[i], h);
            }
            if (gb_graph(&g16, 0, s, CUDNN_DATA_HALF, 0, h) && heuristic(g16.graph, half_cfgs) > 0)
                cudnnBackendGetAttribute(engine_of(half_cfgs[0]), CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                         CUDNN_TYPE_INT64, 1, &n, &top16);
            dc = down_converting(g32.graph, top16, h, &engine);
        }
        double t32 = time_plan(h, fp32, x, w, y), ttf = time_plan(h, tf32, x, w, y),
               tdc = time_plan(h, dc, x, w, y);
        char name[64];
        snprintf(name, sizeof name, "%lld->%lld, %lldx%lld, %lldx%lld", (long long)s->c,
                 (long long)s->k, (long long)s->h, (long long)s->w, (long long)s->r,
                 (long long)s->s);
        printf("%-26s %9.3f %9.3f %9.3f %7lld %9.2f %9.2f\n", name, t32, ttf, tdc,
               (long long)engine, tdc > 0 && ttf > 0 ? ttf / tdc : 0,
               tdc > 0 && t32 > 0 ? t32 / tdc : 0);
        cudaFree(x);
        cudaFree(w);
        cudaFree(y);
    }
    cudnnDestroy(h);
    return 0;
}
