/* The cost of the dnnl_primitive_execute hook on calls it does not lower,
 * measured side by side in one process: the same primitive executed through
 * the exported name (the hook, when libampshim.so is preloaded) and through
 * libdnnl's own function (a dlopen handle, which the shim does not
 * intercept), alternating in rounds, medians. Primitives: a ReLU on 16
 * floats (a reorder or eltwise: classified and forwarded), and a 3x3
 * convolution of 1x8x8x8 (classified, decided, counted small by the size
 * rule as shipped). Run it with and without the preload; the difference of
 * the two columns is the hook.
 * usage: onednn_execute_bench */
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"

typedef dnnl_status_t (*exec_fn)(const_dnnl_primitive_t, dnnl_stream_t, int,
                                 const dnnl_exec_arg_t *);

static double per_call_ns(exec_fn exec, dnnl_primitive_t p, dnnl_stream_t s, int nargs,
                          const dnnl_exec_arg_t *args, int calls)
{
    double t0 = now();
    for (int i = 0; i < calls; i++)
        exec(p, s, nargs, args);
    return (now() - t0) * 1e9 / calls;
}

int main(void)
{
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_NOLOAD);
    exec_fn direct = h ? (exec_fn)dlsym(h, "dnnl_primitive_execute") : NULL;
    if (!direct)
        return 1;
    dnnl_engine_t eng;
    dnnl_stream_t s;
    dnnl_engine_create(&eng, dnnl_cpu, 0);
    dnnl_stream_create(&s, eng, dnnl_stream_default_flags);
    static float x[16], y[16], src[512], w[576], dst[512];
    dnnl_memory_desc_t md, smd, wmd, dmd;
    dnnl_dims_t d1 = {16}, sd = {1, 8, 8, 8}, wd = {8, 8, 3, 3}, one = {1, 1}, pad = {1, 1};
    dnnl_memory_desc_init_by_tag(&md, 1, d1, dnnl_f32, dnnl_a);
    dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, dnnl_abcd);
    dnnl_memory_desc_init_by_tag(&wmd, 4, wd, dnnl_f32, dnnl_abcd);
    dnnl_memory_desc_init_by_tag(&dmd, 4, sd, dnnl_f32, dnnl_abcd);
    dnnl_eltwise_desc_t ed;
    dnnl_convolution_desc_t cd;
    dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, dnnl_eltwise_relu, &md, 0, 0);
    dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &smd,
                                       &wmd, NULL, &dmd, one, pad, pad);
    dnnl_primitive_desc_t epd, cpd;
    dnnl_primitive_t relu, conv;
    dnnl_primitive_desc_create(&epd, &ed, NULL, eng, NULL);
    dnnl_primitive_desc_create(&cpd, &cd, NULL, eng, NULL);
    dnnl_primitive_create(&relu, epd);
    dnnl_primitive_create(&conv, cpd);
    dnnl_memory_t mx, my, ms, mw, mdst;
    dnnl_memory_create(&mx, &md, eng, x);
    dnnl_memory_create(&my, &md, eng, y);
    dnnl_memory_create(&ms, &smd, eng, src);
    dnnl_memory_create(&mw, &wmd, eng, w);
    dnnl_memory_create(&mdst, &dmd, eng, dst);
    dnnl_exec_arg_t ea[2] = {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}};
    dnnl_exec_arg_t ca[3] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mdst}};
    struct {
        const char *name;
        dnnl_primitive_t p;
        int nargs;
        const dnnl_exec_arg_t *args;
        int calls;
    } cases[] = {{"relu, 16 floats", relu, 2, ea, 200000},
                 {"conv 3x3, 1x8x8x8", conv, 3, ca, 20000}};
    print_cpu();
    printf("dnnl_primitive_execute, ns per call (median of 15 alternating rounds); %s\n",
           dlsym(RTLD_DEFAULT, "ampshim_version") ? "libampshim.so preloaded"
                                                  : "no shim (both columns direct)");
    printf("%-20s %12s %12s %10s\n", "primitive", "libdnnl", "exported", "hook");
    for (int c = 0; c < 2; c++) {
        double t[2][15];
        for (int r = 0; r < 15; r++) {
            t[0][r] =
                per_call_ns(direct, cases[c].p, s, cases[c].nargs, cases[c].args, cases[c].calls);
            t[1][r] = per_call_ns((exec_fn)dnnl_primitive_execute, cases[c].p, s, cases[c].nargs,
                                  cases[c].args, cases[c].calls);
        }
        double lib = median(t[0], 15), hooked = median(t[1], 15);
        printf("%-20s %12.1f %12.1f %+10.1f\n", cases[c].name, lib, hooked, hooked - lib);
    }
    return 0;
}
