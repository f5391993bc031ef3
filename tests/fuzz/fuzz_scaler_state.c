/* libFuzzer over the scaler's state-file parser (amp_scaler_load): any bytes
 * are either refused with the scaler unchanged, or accepted as a state that
 * is valid (finite positive scale, tracker in [0, interval)) and that
 * save/load reproduces exactly. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amp_scaler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64], copy[80];
    static amp_scaler *s, *t;
    if (!s) {
        snprintf(path, sizeof path, "/tmp/fuzz-scaler-%ld", (long)getpid());
        snprintf(copy, sizeof copy, "%s.copy", path);
        s = amp_scaler_create(NULL);
        t = amp_scaler_create(NULL);
    }
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    float before = amp_scaler_get_scale(s);
    int64_t interval_before = amp_scaler_get_growth_interval(s);
    if (amp_scaler_load(s, path) != 0) {
        if (amp_scaler_get_scale(s) != before || amp_scaler_get_growth_interval(s) != interval_before)
            abort(); /* a refused file changed the scaler */
        return 0;
    }
    float scale = amp_scaler_get_scale(s);
    int64_t tracker = amp_scaler_get_growth_tracker(s),
            interval = amp_scaler_get_growth_interval(s);
    if (!isfinite(scale) || !(scale > 0) || tracker < 0 || tracker >= interval)
        abort(); /* an invalid state was accepted */
    if (amp_scaler_save(s, copy) != 0 || amp_scaler_load(t, copy) != 0 ||
        amp_scaler_get_scale(t) != scale || amp_scaler_get_growth_tracker(t) != tracker ||
        amp_scaler_get_growth_interval(t) != interval ||
        amp_scaler_get_growth_factor(t) != amp_scaler_get_growth_factor(s) ||
        amp_scaler_get_backoff_factor(t) != amp_scaler_get_backoff_factor(s))
        abort(); /* save/load is not exact */
    return 0;
}
