/* The scaler on device buffers against the same scaler on host buffers:
 * unscale of fp32, fp16 and bf16 data (with and without Inf/NaN) must give
 * the same bits (NaN payloads aside) and the same found_inf; a sequence of
 * updates must give the same scale and growth tracker; save and load work
 * from device mode. Exits 77 (skip) without a CUDA device. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amp_scaler.h"
#include "tests/check.h"


static amp_scaler *make(void)
{
    amp_scaler_config c;
    amp_scaler_config_default(&c);
    c.init_scale = 4096;
    c.growth_interval = 3;
    return amp_scaler_create(&c);
}

/* Same bits, or both NaN (CUDA's canonical NaN vs the CPU's quietened one). */
static int same_element(const void *a, const void *b, int size, int dtype)
{
    if (memcmp(a, b, (size_t)size) == 0)
        return 1;
    uint32_t x = 0, y = 0;
    memcpy(&x, a, (size_t)size);
    memcpy(&y, b, (size_t)size);
    if (dtype == AMP_F32)
        return (x & 0x7fffffffu) > 0x7f800000u && (y & 0x7fffffffu) > 0x7f800000u;
    uint16_t e = dtype == AMP_F16 ? 0x7c00 : 0x7f80, m = dtype == AMP_F16 ? 0x03ff : 0x007f;
    return (x & e) == e && (x & m) && (y & e) == e && (y & m);
}

static void compare_unscale(int dtype, size_t n, int with_inf)
{
    int size = dtype == AMP_F32 ? 4 : 2;
    unsigned char *host = malloc(n * (size_t)size), *back = malloc(n * (size_t)size);
    for (size_t i = 0; i < n * (size_t)size; i++)
        host[i] = (unsigned char)(i * 2654435761u >> 13);
    /* keep exponents modest so most values are finite */
    for (size_t i = 0; i < n; i++)
        host[i * size + size - 1] &= 0xbf;
    if (with_inf) {
        if (dtype == AMP_F32)
            ((float *)host)[n / 2] = INFINITY;
        else
            ((uint16_t *)host)[n / 2] = dtype == AMP_F16 ? 0x7c00 : 0x7f80;
    }
    void *dev;
    cudaMalloc(&dev, n * (size_t)size);
    cudaMemcpy(dev, host, n * (size_t)size, cudaMemcpyHostToDevice);
    amp_scaler *hs = make(), *ds = make();
    amp_buffer hb = {.data = host, .count = n, .dtype = (amp_dtype)dtype};
    amp_buffer db = {.data = dev, .count = n, .dtype = (amp_dtype)dtype, .device = 1};
    int rh = amp_scaler_unscale(hs, &hb, 1), rd = amp_scaler_unscale(ds, &db, 1);
    CHECK(rh == 0 && rd == 0, "unscale: host %d, device %d (%s)", rh, rd, amp_scaler_last_error(ds));
    cudaMemcpy(back, dev, n * (size_t)size, cudaMemcpyDeviceToHost);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !same_element(back + i * size, host + i * size, size, dtype);
    CHECK(bad == 0, "dtype %d, n %zu: %zu elements differ from the host scaler", dtype, n, bad);
    CHECK(amp_scaler_step_ok(ds) == amp_scaler_step_ok(hs) && amp_scaler_step_ok(ds) == !with_inf,
          "dtype %d, n %zu: found_inf", dtype, n);
    amp_scaler_destroy(hs);
    amp_scaler_destroy(ds);
    cudaFree(dev);
    free(host);
    free(back);
}

static void compare_sequence(void)
{
    amp_scaler *hs = make(), *ds = make();
    float *dev;
    cudaMalloc((void **)&dev, 4 * sizeof(float));
    static const int overflow[] = {0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0};
    for (size_t it = 0; it < sizeof overflow / sizeof *overflow; it++) {
        float g[4] = {1, 2, 3, overflow[it] ? NAN : 4};
        cudaMemcpy(dev, g, sizeof g, cudaMemcpyHostToDevice);
        amp_buffer hb = {.data = g, .count = 4, .dtype = AMP_F32};
        amp_buffer db = {.data = dev, .count = 4, .dtype = AMP_F32, .device = 1};
        amp_scaler_unscale(hs, &hb, 1);
        amp_scaler_unscale(ds, &db, 1);
        CHECK(amp_scaler_step_ok(ds) == amp_scaler_step_ok(hs), "iteration %zu: step_ok", it);
        amp_scaler_update(hs, NULL);
        amp_scaler_update(ds, NULL);
        CHECK(amp_scaler_get_scale(ds) == amp_scaler_get_scale(hs) &&
                  amp_scaler_get_growth_tracker(ds) == amp_scaler_get_growth_tracker(hs),
              "iteration %zu: device scale %g tracker %lld, host %g %lld", it,
              amp_scaler_get_scale(ds), (long long)amp_scaler_get_growth_tracker(ds),
              amp_scaler_get_scale(hs), (long long)amp_scaler_get_growth_tracker(hs));
    }
    char path[] = "/tmp/ampscaler_gpu_XXXXXX";
    close(mkstemp(path));
    CHECK(amp_scaler_save(ds, path) == 0, "save from device mode");
    amp_scaler *t = make();
    CHECK(amp_scaler_load(t, path) == 0 && amp_scaler_get_scale(t) == amp_scaler_get_scale(hs),
          "load what device mode saved");
    unlink(path);
    amp_scaler_destroy(t);
    amp_scaler_destroy(hs);
    amp_scaler_destroy(ds);
    cudaFree(dev);
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("test_scaler_gpu: no CUDA device; skipped\n");
        return 77;
    }
    static const size_t sizes[] = {1, 7, 1000, 4099, 1 << 20};
    for (int dtype = 0; dtype < 3; dtype++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int inf = 0; inf < 2; inf++)
                compare_unscale(dtype, sizes[s], inf);
    compare_sequence();
    printf("test_scaler_gpu: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
