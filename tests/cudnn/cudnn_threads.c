/* Threads calling the cuDNN hooks at once, each with its own handle, from
 * their first call on (the hooks' one-time setup, device scratch and
 * counters are shared): every half softmax must be computed in fp32 and give
 * the fp32 answer. Run under TSan in CI. */
#include <cudnn.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tests/fakes/fake_cudnn.h"
#include "tests/check.h"


enum { THREADS = 4, ROUNDS = 200, C = 7 };
static pthread_barrier_t start;
static void *lib;
static _Atomic int wrong;

static void *worker(void *arg)
{
    int seed = (int)(long)arg;
    cudnnHandle_t h;
    cudnnCreate(&h);
    cudnnTensorDescriptor_t dh, df;
    cudnnCreateTensorDescriptor(&dh);
    cudnnCreateTensorDescriptor(&df);
    cudnnSetTensor4dDescriptor(dh, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 1, C, 1, 1);
    cudnnSetTensor4dDescriptor(df, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, C, 1, 1);
    __typeof__(&cudnnSoftmaxForward) real_softmax =
        (__typeof__(&cudnnSoftmaxForward))dlsym(lib, "cudnnSoftmaxForward");
    __typeof__(&cudnnTransformTensor) transform =
        (__typeof__(&cudnnTransformTensor))dlsym(lib, "cudnnTransformTensor");
    _Float16 x[C], got[C], want[C];
    float xf[C], yf[C], one = 1.0f, zero = 0.0f;
    pthread_barrier_wait(&start);
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < C; i++)
            x[i] = (_Float16)((float)((i + r + seed * 13) % 11) * 0.37f - 1.5f);
        cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, dh, x,
                            &zero, dh, got);
        int type = fake_cudnn_last_call()->type[0];
        transform(h, &one, dh, x, &zero, df, xf);
        real_softmax(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, df, xf, &zero, df,
                     yf);
        transform(h, &one, df, yf, &zero, dh, want);
        if (type != CUDNN_DATA_FLOAT || memcmp(got, want, sizeof got) != 0)
            wrong++;
    }
    cudnnDestroyTensorDescriptor(dh);
    cudnnDestroyTensorDescriptor(df);
    cudnnDestroy(h);
    return NULL;
}

int main(void)
{
    lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    CHECK(lib != NULL, "libcudnn.so.9 is loaded");
    if (!lib)
        return 1;
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(wrong == 0, "%d of %d half softmax calls were not the fp32 answer", (int)wrong,
          THREADS * ROUNDS);
    printf("cudnn_threads: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
