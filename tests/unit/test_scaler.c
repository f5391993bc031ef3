/* The loss scaler against hand-computed GradScaler sequences; unscale of
 * special values in fp32, fp16 and bf16; the vector kernels against the
 * scalar reference; errors that must change nothing; state files; and the
 * found_inf agreement between two ranks (two processes over a socketpair). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "amp_scaler.h"
#include "kernels/cpu/unscale.h"
#include "tests/check.h"

static amp_scaler *make(double init, double growth, double backoff, int64_t interval)
{
    amp_scaler_config c;
    amp_scaler_config_default(&c);
    c.init_scale = init;
    c.growth_factor = growth;
    c.backoff_factor = backoff;
    c.growth_interval = interval;
    amp_scaler *s = amp_scaler_create(&c);
    if (!s) {
        printf("FAIL cannot create a scaler\n");
        exit(1);
    }
    return s;
}

/* One iteration: unscale a one-element fp32 buffer holding v, update. */
static void iterate(amp_scaler *s, float v)
{
    amp_buffer b = {.data = &v, .count = 1, .dtype = AMP_F32};
    CHECK(amp_scaler_unscale(s, &b, 1) == 0, "unscale: %s", amp_scaler_last_error(s));
    CHECK(amp_scaler_update(s, NULL) == 0, "update: %s", amp_scaler_last_error(s));
}

static void defaults_and_config(void)
{
    amp_scaler_config c;
    amp_scaler_config_default(&c);
    CHECK(c.init_scale == 65536.0 && c.growth_factor == 2.0 && c.backoff_factor == 0.5 &&
              c.growth_interval == 2000 && c.enabled == 1,
          "default configuration");
    amp_scaler *s = amp_scaler_create(NULL);
    CHECK(amp_scaler_get_scale(s) == 65536.0f && amp_scaler_get_growth_tracker(s) == 0 &&
              amp_scaler_is_enabled(s) && amp_scaler_step_ok(s),
          "a new scaler");
    amp_scaler_destroy(s);

    static const struct {
        double init, growth, backoff;
        int64_t interval;
    } bad[] = {{0, 2, 0.5, 10},    {-1, 2, 0.5, 10},   {INFINITY, 2, 0.5, 10}, {1e39, 2, 0.5, 10},
               {NAN, 2, 0.5, 10},  {1, 1.0, 0.5, 10},  {1, 0.5, 0.5, 10},      {1, NAN, 0.5, 10},
               {1, 2, 1.0, 10},    {1, 2, 0.0, 10},    {1, 2, -0.5, 10},       {1, 2, 0.5, 0},
               {1, 2, 0.5, -3}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        c.init_scale = bad[i].init;
        c.growth_factor = bad[i].growth;
        c.backoff_factor = bad[i].backoff;
        c.growth_interval = bad[i].interval;
        errno = 0;
        CHECK(amp_scaler_create(&c) == NULL && errno == EINVAL, "bad configuration %zu accepted", i);
    }

    s = make(1024, 2, 0.5, 10);
    CHECK(amp_scaler_set_growth_factor(s, 0.9) == -EINVAL && amp_scaler_get_growth_factor(s) == 2.0,
          "set_growth_factor rejects <= 1");
    CHECK(strstr(amp_scaler_last_error(s), "growth_factor") != NULL, "the error says why");
    CHECK(amp_scaler_set_backoff_factor(s, 1.5) == -EINVAL, "set_backoff_factor rejects >= 1");
    CHECK(amp_scaler_set_growth_interval(s, 0) == -EINVAL, "set_growth_interval rejects 0");
    CHECK(amp_scaler_set_growth_factor(s, 4.0) == 0 && amp_scaler_get_growth_factor(s) == 4.0 &&
              amp_scaler_set_backoff_factor(s, 0.25) == 0 &&
              amp_scaler_get_backoff_factor(s) == 0.25 &&
              amp_scaler_set_growth_interval(s, 7) == 0 && amp_scaler_get_growth_interval(s) == 7,
          "setters and getters");
    CHECK(amp_scaler_last_error(s)[0] == '\0', "success clears the error");
    amp_scaler_destroy(s);
}

static void state_machine(void)
{
    /* Growth after growth_interval clean steps, tracker counting up. */
    amp_scaler *s = make(1024, 2, 0.5, 3);
    iterate(s, 1.0f);
    CHECK(amp_scaler_get_scale(s) == 1024.0f && amp_scaler_get_growth_tracker(s) == 1, "clean 1");
    iterate(s, 1.0f);
    CHECK(amp_scaler_get_scale(s) == 1024.0f && amp_scaler_get_growth_tracker(s) == 2, "clean 2");
    iterate(s, 1.0f);
    CHECK(amp_scaler_get_scale(s) == 2048.0f && amp_scaler_get_growth_tracker(s) == 0,
          "clean 3: grown");

    /* Backoff on Inf resets the tracker; on NaN too; on -Inf too. */
    iterate(s, 1.0f);
    CHECK(amp_scaler_get_growth_tracker(s) == 1, "tracker 1 before the overflow");
    float v = INFINITY;
    amp_buffer b = {.data = &v, .count = 1, .dtype = AMP_F32};
    amp_scaler_unscale(s, &b, 1);
    CHECK(!amp_scaler_step_ok(s), "Inf: step skipped");
    amp_scaler_update(s, NULL);
    CHECK(amp_scaler_get_scale(s) == 1024.0f && amp_scaler_get_growth_tracker(s) == 0,
          "Inf: backoff and tracker reset");
    iterate(s, NAN);
    CHECK(amp_scaler_get_scale(s) == 512.0f && amp_scaler_get_growth_tracker(s) == 0, "NaN: backoff");
    iterate(s, -INFINITY);
    CHECK(amp_scaler_get_scale(s) == 256.0f, "-Inf: backoff");
    CHECK(amp_scaler_step_ok(s), "after update the next step is ok again");

    /* new_scale sets the scale; the tracker is not touched (as torch). */
    iterate(s, 1.0f);
    float ns = 3.0f;
    amp_scaler_unscale(s, &b, 0);
    CHECK(amp_scaler_update(s, &ns) == 0 && amp_scaler_get_scale(s) == 3.0f &&
              amp_scaler_get_growth_tracker(s) == 1,
          "update(new_scale)");
    ns = -1.0f;
    CHECK(amp_scaler_update(s, &ns) == -EINVAL && amp_scaler_get_scale(s) == 3.0f,
          "update(new_scale < 0) refused");
    ns = INFINITY;
    CHECK(amp_scaler_update(s, &ns) == -EINVAL, "update(new_scale = Inf) refused");
    amp_scaler_destroy(s);

    /* Growth refused at the top of the float range: 2^127 * 2 is Inf. */
    s = make(0x1p127, 2, 0.5, 2);
    iterate(s, 1.0f);
    iterate(s, 1.0f);
    CHECK(amp_scaler_get_scale(s) == 0x1p127f && amp_scaler_get_growth_tracker(s) == 0,
          "growth to Inf refused, tracker reset");
    amp_scaler_destroy(s);
    /* ... but a grown scale just below FLT_MAX is taken. */
    s = make(0x1.fffffcp126, 1.0 + 0x1p-23, 0.5, 1);
    iterate(s, 1.0f);
    CHECK(amp_scaler_get_scale(s) == (float)(0x1.fffffcp126 * (1.0 + 0x1p-23)), "finite growth taken");
    amp_scaler_destroy(s);

    /* The scale falls below 1.0 with no floor. */
    s = make(2.0, 2, 0.5, 100);
    static const float expected[] = {1.0f, 0.5f, 0.25f, 0.125f};
    for (int i = 0; i < 4; i++) {
        iterate(s, NAN);
        CHECK(amp_scaler_get_scale(s) == expected[i], "backoff %d: %g", i, amp_scaler_get_scale(s));
    }
    amp_scaler_destroy(s);

    /* Non-power-of-two factors: products in double, rounded to float. */
    s = make(65536, 3.0, 0.3, 1);
    iterate(s, INFINITY);
    CHECK(amp_scaler_get_scale(s) == (float)(65536.0 * 0.3), "backoff 0.3");
    iterate(s, 0.0f);
    CHECK(amp_scaler_get_scale(s) == (float)((double)(float)(65536.0 * 0.3) * 3.0), "growth 3");
    amp_scaler_destroy(s);

    /* update needs an unscale since the last update. */
    s = make(1024, 2, 0.5, 10);
    CHECK(amp_scaler_update(s, NULL) == -EINVAL && strstr(amp_scaler_last_error(s), "unscale"),
          "update without unscale refused");
    amp_scaler_destroy(s);
}

static uint16_t f16_bits(float x)
{
    _Float16 h = (_Float16)x;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}

static float f16_value(uint16_t u)
{
    _Float16 h;
    memcpy(&h, &u, 2);
    return (float)h;
}

static uint16_t bf16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

static void unscale_values(void)
{
    const float scale = 1024.0f, inv = 1.0f / 1024.0f;
    /* fp32: exact results, including the largest finite and subnormals. */
    float f[] = {3.0f * scale, -2.5f * scale, 0x1.fffffep127f, 0x1p-140f, 0.0f, -0.0f, 1e-3f};
    float want[7];
    for (int i = 0; i < 7; i++)
        want[i] = f[i] * inv;
    amp_scaler *s = make(scale, 2, 0.5, 100);
    amp_buffer b = {.data = f, .count = 7, .dtype = AMP_F32};
    CHECK(amp_scaler_unscale(s, &b, 1) == 0 && amp_scaler_step_ok(s), "fp32 finite values");
    CHECK(memcmp(f, want, sizeof f) == 0, "fp32 values divided by the scale exactly");
    amp_scaler_update(s, NULL);

    /* fp16 and bf16: each element widened, multiplied, rounded back. */
    float values[] = {65504.0f, -65504.0f, 6e-8f, 1.0f, -3.75f, 1000.0f, 0.0f, 0x1p-24f};
    uint16_t h[8], bf[8];
    for (int i = 0; i < 8; i++) {
        h[i] = f16_bits(values[i]);
        bf[i] = bf16_bits(values[i]);
    }
    amp_buffer two[2] = {{.data = h, .count = 8, .dtype = AMP_F16},
                         {.data = bf, .count = 8, .dtype = AMP_BF16}};
    CHECK(amp_scaler_unscale(s, two, 2) == 0 && amp_scaler_step_ok(s), "fp16 + bf16 finite");
    for (int i = 0; i < 8; i++) {
        CHECK(h[i] == f16_bits(f16_value(f16_bits(values[i])) * inv), "fp16 element %d", i);
        CHECK(bf[i] == bf16_bits(bf16_value(bf16_bits(values[i])) * inv), "bf16 element %d", i);
    }
    amp_scaler_update(s, NULL);

    /* Inf, -Inf and NaN in each type are found. */
    static const uint16_t h_special[] = {0x7c00, 0xfc00, 0x7e00, 0x7c01};
    static const uint16_t b_special[] = {0x7f80, 0xff80, 0x7fc0, 0x7f81};
    for (int i = 0; i < 4; i++) {
        uint16_t hv[3] = {0x3c00, h_special[i], 0x3c00}, bv[3] = {0x3f80, b_special[i], 0x3f80};
        amp_buffer one = {.data = hv, .count = 3, .dtype = AMP_F16};
        amp_scaler_unscale(s, &one, 1);
        CHECK(!amp_scaler_step_ok(s), "fp16 special 0x%04x found", h_special[i]);
        amp_scaler_update(s, &(float){scale});
        one = (amp_buffer){.data = bv, .count = 3, .dtype = AMP_BF16};
        amp_scaler_unscale(s, &one, 1);
        CHECK(!amp_scaler_step_ok(s), "bf16 special 0x%04x found", b_special[i]);
        amp_scaler_update(s, &(float){scale});
    }

    /* Zero-length buffers, and one Inf among many buffers. */
    enum { MANY = 100 };
    amp_buffer many[MANY];
    float *store = calloc(MANY * 37, sizeof(float));
    for (int i = 0; i < MANY; i++)
        many[i] = (amp_buffer){.data = store + i * 37, .count = (size_t)(i % 37), .dtype = AMP_F32};
    CHECK(amp_scaler_unscale(s, many, MANY) == 0 && amp_scaler_step_ok(s), "100 clean buffers");
    amp_scaler_update(s, NULL);
    store[57 * 37 + 19] = INFINITY; /* buffer 57 holds 57 % 37 = 20 elements */
    CHECK(amp_scaler_unscale(s, many, MANY) == 0 && !amp_scaler_step_ok(s),
          "one Inf among 100 buffers");
    amp_scaler_update(s, NULL);
    amp_buffer empty = {.data = NULL, .count = 0, .dtype = AMP_F16};
    CHECK(amp_scaler_unscale(s, &empty, 1) == 0 && amp_scaler_step_ok(s), "a zero-length buffer");
    amp_scaler_update(s, NULL);
    free(store);
    amp_scaler_destroy(s);
}

static void errors_change_nothing(void)
{
    amp_scaler *s = make(1024, 2, 0.5, 100);
    float v[4] = {1024, 2048, 3072, 4096}, keep[4];
    memcpy(keep, v, sizeof v);
    amp_buffer b[3] = {{.data = v, .count = 4, .dtype = AMP_F32},
                       {.data = NULL, .count = 5, .dtype = AMP_F32},
                       {.data = v, .count = 4, .dtype = AMP_F32}};
    CHECK(amp_scaler_unscale(s, b, 3) == -EINVAL && memcmp(v, keep, sizeof v) == 0,
          "NULL data: -EINVAL, nothing changed");
    b[1] = (amp_buffer){.data = v, .count = 4, .dtype = (amp_dtype)7};
    CHECK(amp_scaler_unscale(s, b, 3) == -EINVAL && memcmp(v, keep, sizeof v) == 0,
          "unknown dtype: -EINVAL, nothing changed");
    b[1] = (amp_buffer){.data = v, .count = 4, .dtype = AMP_F32, .device = 1};
    CHECK(amp_scaler_unscale(s, b, 3) == -EINVAL && memcmp(v, keep, sizeof v) == 0 &&
              strstr(amp_scaler_last_error(s), "not a mix"),
          "host and device buffers mixed: -EINVAL, nothing changed");
    b[1].device = 2;
    CHECK(amp_scaler_unscale(s, b, 3) == -EINVAL, "device 2: -EINVAL");
    const char *no_gpu = getenv("AMPSHIM_TEST_NO_GPU");
    if (no_gpu && strcmp(no_gpu, "1") == 0) {
        /* No GPU here: a device buffer fails cleanly (no plugin: -ENOTSUP;
         * plugin but no device: -ENODEV or -EIO) and changes nothing. */
        amp_buffer d = {.data = v, .count = 4, .dtype = AMP_F32, .device = 1};
        int rc = amp_scaler_unscale(s, &d, 1);
        CHECK(rc < 0 && memcmp(v, keep, sizeof v) == 0 && amp_scaler_last_error(s)[0],
              "a device buffer without a GPU fails cleanly (rc %d: %s)", rc,
              amp_scaler_last_error(s));
        CHECK(amp_scaler_get_scale(s) == 1024.0f, "and the scaler stays on the host");
    }
    CHECK(amp_scaler_unscale(s, b, 1) == 0 && v[0] == 1.0f, "a good unscale");
    float after[4];
    memcpy(after, v, sizeof v);
    CHECK(amp_scaler_unscale(s, b, 1) == -EALREADY && memcmp(v, after, sizeof v) == 0 &&
              strstr(amp_scaler_last_error(s), "already"),
          "unscale twice: -EALREADY, nothing changed");
    CHECK(amp_scaler_update(s, NULL) == 0 && amp_scaler_unscale(s, b, 1) == 0,
          "after update unscale works again");
    amp_scaler_destroy(s);
}

static void disabled(void)
{
    amp_scaler_config c;
    amp_scaler_config_default(&c);
    c.enabled = 0;
    c.growth_factor = 0; /* not validated when disabled */
    amp_scaler *s = amp_scaler_create(&c);
    CHECK(s != NULL && !amp_scaler_is_enabled(s) && amp_scaler_get_scale(s) == 1.0f,
          "disabled: scale 1");
    float v[3] = {1.5f, INFINITY, NAN}, keep[3];
    memcpy(keep, v, sizeof v);
    amp_buffer b = {.data = v, .count = 3, .dtype = AMP_F32};
    CHECK(amp_scaler_scale(s, &b, 1) == 0 && amp_scaler_unscale(s, &b, 1) == 0 &&
              amp_scaler_unscale(s, &b, 1) == 0 && memcmp(v, keep, sizeof v) == 0,
          "disabled: scale and unscale are no-ops");
    CHECK(amp_scaler_step_ok(s), "disabled: steps always ok");
    CHECK(amp_scaler_update(s, NULL) == 0 && amp_scaler_get_scale(s) == 1.0f, "disabled: update");
    char path[] = "/tmp/ampscaler_disabled_XXXXXX";
    close(mkstemp(path));
    unlink(path);
    CHECK(amp_scaler_save(s, path) == 0 && access(path, F_OK) != 0, "disabled: save writes nothing");
    amp_scaler_destroy(s);
}

static void scale_buffers(void)
{
    amp_scaler *s = make(256, 2, 0.5, 100);
    float loss = 0.75f;
    uint16_t h = f16_bits(300.0f);
    amp_buffer b[2] = {{.data = &loss, .count = 1, .dtype = AMP_F32},
                       {.data = &h, .count = 1, .dtype = AMP_F16}};
    CHECK(amp_scaler_scale(s, b, 2) == 0 && loss == 192.0f && f16_value(h) == INFINITY,
          "scale multiplies (fp16 300 * 256 overflows to Inf)");
    amp_scaler_destroy(s);
}

static void kernels_match_reference(void)
{
    const struct amp_unscale_kernels *k = amp_unscale();
    int bad = 0;
    for (size_t n = 0; n < 300; n += 7) {
        float *a = malloc((n + 1) * 4), *r = malloc((n + 1) * 4);
        uint16_t *h = malloc((n + 1) * 2), *hr = malloc((n + 1) * 2);
        uint16_t *g = malloc((n + 1) * 2), *gr = malloc((n + 1) * 2);
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)(i * 2654435761u) ^ 0x3f000000u;
            memcpy(&a[i], &u, 4);
            h[i] = (uint16_t)(u >> 7);
            g[i] = (uint16_t)(u >> 11);
        }
        memcpy(r, a, n * 4);
        memcpy(hr, h, n * 2);
        memcpy(gr, g, n * 2);
        float factor = 1.0f / 3072.0f;
        bad += k->f32(a, n, factor) != amp_unscale_scalar.f32(r, n, factor);
        bad += k->f16(h, n, factor) != amp_unscale_scalar.f16(hr, n, factor);
        bad += k->bf16(g, n, factor) != amp_unscale_scalar.bf16(gr, n, factor);
        bad += memcmp(a, r, n * 4) != 0;
        bad += memcmp(h, hr, n * 2) != 0;
        bad += memcmp(g, gr, n * 2) != 0;
        free(a), free(r), free(h), free(hr), free(g), free(gr);
    }
    CHECK(bad == 0, "%s kernels differ from the scalar reference %d times", k->name, bad);
}

static void state_files(void)
{
    char path[] = "/tmp/ampscaler_state_XXXXXX";
    close(mkstemp(path));
    amp_scaler *s = make(4096, 3.0, 0.25, 7);
    iterate(s, 1.0f);
    iterate(s, 1.0f);
    iterate(s, INFINITY);
    iterate(s, 1.0f); /* scale 1024, tracker 1 */
    CHECK(amp_scaler_save(s, path) == 0, "save: %s", amp_scaler_last_error(s));
    amp_scaler *t = make(65536, 2, 0.5, 2000);
    CHECK(amp_scaler_load(t, path) == 0, "load: %s", amp_scaler_last_error(t));
    CHECK(amp_scaler_get_scale(t) == 1024.0f && amp_scaler_get_growth_factor(t) == 3.0 &&
              amp_scaler_get_backoff_factor(t) == 0.25 && amp_scaler_get_growth_interval(t) == 7 &&
              amp_scaler_get_growth_tracker(t) == 1,
          "round trip of all five keys");
    /* An awkward scale survives exactly. */
    float odd = 0x1.234566p-3f;
    amp_scaler_unscale(s, NULL, 0);
    amp_scaler_update(s, &odd);
    amp_scaler_save(s, path);
    amp_scaler_load(t, path);
    CHECK(amp_scaler_get_scale(t) == odd, "an arbitrary float scale round-trips exactly");

    static const struct {
        const char *text, *message;
    } bad[] = {
        {"", "empty"},
        {"{\"scale\": 65536.0}\n", "not an ampscaler state file"},
        {"ampscaler-state 2\nscale 1\n", "not an ampscaler state file"},
        {"ampscaler-state 1\nscale 65536\ngrowth_factor 2\n", "truncated"},
        {"ampscaler-state 1\nscale 65536\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n",
         "truncated: no '_growth_tracker'"},
        {"ampscaler-state 1\nscale 65536\nscale 2\n", "appears twice"},
        {"ampscaler-state 1\nscale 65536x\n", "bad value"},
        {"ampscaler-state 1\nscale\n", "expected \"key value\""},
        {"ampscaler-state 1\nlearning_rate 0.1\n", "unknown key"},
        {"ampscaler-state 1\nscale -1\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n"
         "_growth_tracker 0\n",
         "scale must be"},
        {"ampscaler-state 1\nscale 1\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n"
         "_growth_tracker 10\n",
         "_growth_tracker must be"},
        {"ampscaler-state 1\nscale 1\ngrowth_factor 1\nbackoff_factor 0.5\ngrowth_interval 10\n"
         "_growth_tracker 0\n",
         "growth_factor must be"},
        {"ampscaler-state 1\nscale 1e39\ngrowth_factor 2\nbackoff_factor 0.5\ngrowth_interval 10\n"
         "_growth_tracker 0\n",
         "scale must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i].text, f);
        fclose(f);
        int rc = amp_scaler_load(t, path);
        CHECK(rc == -EBADMSG, "bad file %zu accepted (rc %d)", i, rc);
        CHECK(strstr(amp_scaler_last_error(t), bad[i].message) != NULL,
              "bad file %zu: message '%s' lacks '%s'", i, amp_scaler_last_error(t), bad[i].message);
        CHECK(amp_scaler_get_scale(t) == odd && amp_scaler_get_growth_factor(t) == 3.0 &&
                  amp_scaler_get_growth_tracker(t) == 1,
              "bad file %zu changed the scaler", i);
    }
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 5000; i++)
        fputc('x', f);
    fclose(f);
    CHECK(amp_scaler_load(t, path) == -EBADMSG, "an oversized file is rejected");
    f = fopen(path, "w");
    fwrite("ampscaler-state 1\n\0scale", 1, 24, f);
    fclose(f);
    CHECK(amp_scaler_load(t, path) == -EBADMSG, "a binary file is rejected");
    CHECK(amp_scaler_load(t, "/nonexistent/state") == -ENOENT, "a missing file");
    unlink(path);
    amp_scaler_destroy(s);
    amp_scaler_destroy(t);
}

/* ---- two ranks ---- */

/* Agreement over a socketpair: send this rank's flag, receive the peer's. */
static int agree_over_socket(int *found_inf, void *context)
{
    int fd = *(int *)context, mine = *found_inf, theirs = 0;
    if (write(fd, &mine, sizeof mine) != sizeof mine || read(fd, &theirs, sizeof theirs) != sizeof theirs)
        return -EIO;
    *found_inf = mine | theirs;
    return 0;
}

/* One rank's three iterations; returns a bit mask of what it saw. */
static int run_rank(int fd, int rank)
{
    amp_scaler *s = make(1024, 2, 0.5, 100);
    amp_scaler_set_agreement(s, agree_over_socket, &fd);
    int seen = 0;
    for (int it = 0; it < 3; it++) {
        /* Only rank 0 overflows, and only in iteration 1. */
        float g[4] = {1, 2, 3, (rank == 0 && it == 1) ? INFINITY : 4};
        amp_buffer b = {.data = g, .count = 4, .dtype = AMP_F32};
        if (amp_scaler_unscale(s, &b, 1) != 0)
            return -1;
        seen |= amp_scaler_step_ok(s) << it;
        amp_scaler_update(s, NULL);
    }
    seen |= (amp_scaler_get_scale(s) == 512.0f) << 3;
    amp_scaler_destroy(s);
    return seen;
}

static void two_ranks(void)
{
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    pid_t child = fork();
    if (child == 0) {
        close(sv[0]);
        _exit(run_rank(sv[1], 1));
    }
    close(sv[1]);
    int mine = run_rank(sv[0], 0), status;
    waitpid(child, &status, 0);
    int theirs = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    /* Both ranks: steps 0 and 2 ok, step 1 skipped, final scale 512. */
    CHECK(mine == 0xd, "rank 0 saw 0x%x, expected 0xd", mine);
    CHECK(theirs == 0xd, "rank 1 saw 0x%x, expected 0xd (it must skip rank 0's overflow)", theirs);
    close(sv[0]);

    /* A failing agreement skips the step and reports the error. */
    amp_scaler *s = make(1024, 2, 0.5, 100);
    int closed = -1;
    amp_scaler_set_agreement(s, agree_over_socket, &closed);
    float g = 1.0f;
    amp_buffer b = {.data = &g, .count = 1, .dtype = AMP_F32};
    CHECK(amp_scaler_unscale(s, &b, 1) == -EIO && !amp_scaler_step_ok(s) &&
              strstr(amp_scaler_last_error(s), "agreement failed"),
          "a failed agreement skips the step");
    amp_scaler_destroy(s);
    int flag = 1;
    CHECK(amp_scaler_agree_mpi(&flag, NULL) == -ENOSYS, "no MPI in this process: -ENOSYS");
}

int main(void)
{
    defaults_and_config();
    state_machine();
    unscale_values();
    errors_change_nothing();
    disabled();
    scale_buffers();
    kernels_match_reference();
    state_files();
    two_ranks();
    printf("test_scaler: %d passed, %d failed\n", checks - failures, (int)failures);
    return failures ? 1 : 0;
}
