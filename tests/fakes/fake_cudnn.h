/* TEST-ONLY: what the fake libcudnn.so.9 records of each call (per thread),
 * shared by the fake and the programs that check it. */
#ifndef AMPSHIM_FAKE_CUDNN_H
#define AMPSHIM_FAKE_CUDNN_H

#include <stddef.h>

struct fake_cudnn_record {
    char function[48];
    int math, type[3], compute; /* type: the two inputs and the output */
    size_t workspace;
    long calls;
};

/* The calling thread's last recorded call. */
const struct fake_cudnn_record *fake_cudnn_last_call(void);

#endif
