/* The real cuDNN 9 (>= 9.8) on a machine without a GPU: a program of its
 * backend API builds PyTorch-style fp32 convolution plans (forward,
 * backward data, backward filter, in NHWC and NCHW layouts, and 3-d in
 * NDHWC) for the
 * device a device-properties JSON describes, finalizes them and asks their
 * workspace, as it would before running them. Nothing runs: without a GPU
 * cuDNN plans, but cannot execute.
 * usage: cudnn_graph_devless JSON lowered|asis|reuse
 *   lowered: each NHWC plan's workspace holds fp16 copies of its two
 *            inputs (the shim's private down-converting plan answered);
 *   asis:    none does (the program's own TF32 plan, about 131 bytes);
 *   reuse:   the address-reuse sequence (tests/cudnn_graph/cudnn_graph_build.h,
 *            gb_reuse): prints whether graph B took graph A's address and
 *            the workspace A's plan answers, which tests/cudnn_graph/cudnn_graph_reuse.sh
 *            compares with the answer without the shim.
 * Which engine the shim chose, it says at AMPSHIM_LOG=info (the meson
 * test counts those lines).
 * Exit 77 (skip) when the cuDNN found is older than 9.8 (no device-less
 * planning). */
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cudnn_graph/cudnn_graph_build.h"

#if CUDNN_VERSION < 90800
int main(void)
{
    printf("built against cuDNN %d headers: device-less planning needs 9.8; skipped\n",
           CUDNN_VERSION);
    return 77;
}
#else
static gdesc devprop(const char *path)
{
    static char json[16384];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(json, 1, sizeof json - 1, f) : 0;
    if (f)
        fclose(f);
    json[n] = 0;
    gdesc d = NULL;
    if (!n ||
        !gb_ok(cudnnBackendCreateDescriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, &d), "devprop") ||
        !gb_ok(cudnnBackendSetAttribute(d, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION,
                                        CUDNN_TYPE_CHAR, (int64_t)n, json),
               "devprop json") ||
        !gb_ok(cudnnBackendFinalize(d), "devprop finalize"))
        return NULL;
    return d;
}

int main(int argc, char **argv)
{
    if (argc != 3 ||
        (strcmp(argv[2], "lowered") && strcmp(argv[2], "asis") && strcmp(argv[2], "reuse"))) {
        fprintf(stderr, "usage: cudnn_graph_devless JSON lowered|asis|reuse\n");
        return 2;
    }
    if (cudnnGetVersion() < 90800) {
        printf("cuDNN %zu plans device-less only from 9.8: skipped\n", cudnnGetVersion());
        return 77;
    }
    int lowered = strcmp(argv[2], "lowered") == 0, failures = 0;
    gdesc props = devprop(argv[1]);
    if (!props)
        return 1;
    if (strcmp(argv[2], "reuse") == 0) {
        /* A: a ResNet-50 stage-1 layer; B: a stage-4 one */
        const struct gshape sa = {32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 0, 0},
                            sb = {8, 256, 14, 14, 256, 3, 3, 1, 1, 1, 0, 0};
        struct gb_graph a, b;
        gdesc cfg = NULL;
        int reused = 0;
        gdesc plan = gb_reuse(&a, &b, &sa, &sb, NULL, props, &cfg, &reused);
        int64_t ws = plan ? gb_workspace(plan) : -1;
        printf("reuse: graph B %s graph A's address; A's plan %s, workspace %lld\n",
               reused ? "took" : "did not take", plan ? "finalized" : "not finalized",
               (long long)ws);
        if (plan) {
            cudnnBackendDestroyDescriptor(plan);
            cudnnBackendDestroyDescriptor(cfg);
        }
        gb_graph_destroy(&b);
        gb_graph_destroy(&a);
        cudnnBackendDestroyDescriptor(props);
        return plan ? 0 : 1;
    }
    /* a ResNet-50 stage-1 layer: N 32, 64 -> 64 channels, 56x56, 3x3; in
     * NHWC (channels_last, as TensorFlow and PyTorch's channels_last
     * models run) the program's TF32 plans need almost no workspace, in
     * NCHW they transpose in theirs */
    static const char *const names[3] = {"forward", "backward data", "backward filter"},
                             *const layouts[3] = {"NHWC", "NCHW", "3-d NDHWC"};
    /* and a 3-d one, channels last: N 4, 32 -> 32 channels, 16^3, 3x3x3 */
    for (int layout = 0; layout < 3; layout++)
        for (int dir = 0; dir < 3; dir++) {
            const int nhwc = layout != 1, three = layout == 2;
            const struct gshape s =
                three ? (struct gshape){4, 32, 16, 16, 32, 3, 3, 1, 1, 1, 16, 3}
                      : (struct gshape){32, 64, 56, 56, 64, 3, 3, 1, 1, nhwc, 0, 0};
            const int64_t depth = three ? s.d : 1, fdepth = three ? s.t : 1;
            const int64_t fp16_copies =
                2 * (s.n * s.c * depth * s.h * s.w + s.k * s.c * fdepth * s.r * s.s);
            struct gb_graph g;
            gdesc cfg = NULL, plan = NULL;
            if (!gb_graph(&g, dir, &s, CUDNN_DATA_FLOAT, 0, NULL) ||
                !(plan = gb_plan(&g, NULL, props, &cfg))) {
                printf("FAIL %s %s: no plan finalized\n", layouts[layout], names[dir]);
                failures++;
                gb_graph_destroy(&g);
                continue;
            }
            int64_t ws = gb_workspace(plan);
            /* (the program's own 3-d weight-gradient plan wants a workspace
             * that size already: there the info lines tell) */
            int telling = nhwc && !(three && dir == 2);
            int bad = ws < 0 || (telling && (ws >= fp16_copies) != lowered);
            printf("%s %s %s: plan finalized, workspace %lld bytes (fp16 copies of its inputs: "
                   "%lld)\n",
                   bad ? "FAIL" : "ok", layouts[layout], names[dir], (long long)ws,
                   (long long)fp16_copies);
            failures += bad;
            cudnnBackendDestroyDescriptor(plan);
            cudnnBackendDestroyDescriptor(cfg);
            gb_graph_destroy(&g);
        }
    cudnnBackendDestroyDescriptor(props);
    return failures != 0;
}
#endif
