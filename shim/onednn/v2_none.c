/* A build without oneDNN's header (libdnnl-dev): the oneDNN wing's rooms
 * stand down, and every primitive runs as made. */
#include "shim/onednn/twin.h"

#ifndef AMPSHIM_HAVE_ONEDNN

void amp_dnnl_classify(void *prim, amp_dnnl_execute_fn real_execute, struct amp_dnnl_call *c)
{
    (void)prim;
    (void)real_execute;
    c->hook = -1;
    c->lowered = 0;
}

int amp_dnnl_twin_run(const struct amp_dnnl_call *c, struct amp_thread *t, int dtype,
                      amp_dnnl_execute_fn real_execute, void *stream, int nargs, const void *args,
                      uint64_t *converted, int *built)
{
    (void)c, (void)t, (void)dtype, (void)real_execute, (void)stream, (void)nargs, (void)args;
    *converted = 0;
    *built = 0;
    return -1;
}

int amp_dnnl_outputs(const struct amp_dnnl_call *c, int nargs, const void *args,
                     struct amp_dnnl_output out[AMP_DNNL_OUTPUTS_MAX], int *reads)
{
    (void)c, (void)nargs, (void)args, (void)out;
    *reads = 1;
    return -1;
}

int amp_dnnl_desc_row(const void *desc, int dir, void *real_fn, double *madds)
{
    (void)desc, (void)dir, (void)real_fn, (void)madds;
    return -1;
}

int amp_dnnl_desc_lower(void *desc, int dir, int dtype)
{
    (void)desc, (void)dir, (void)dtype;
    return -1;
}

int amp_dnnl_desc_unlowered(const void *op_desc, void *fp32, size_t fp32_size)
{
    (void)op_desc, (void)fp32, (void)fp32_size;
    return 0;
}

size_t amp_dnnl_conv_desc_size(void)
{
    return 0;
}

void amp_dnnl_atfork(enum amp_fork_phase phase)
{
    (void)phase;
}

#endif
