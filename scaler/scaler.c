/* The loss scaler: GradScaler's state machine (torch's _amp_update_scale_),
 * fused unscale + check over many buffers, state files, and multi-rank
 * agreement on found_inf. */
#include "runtime/export.h"
#include "amp_scaler.h"

#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/cpu/unscale.h"
#include "kernels/cuda/scaler_cuda.h"


struct amp_scaler {
    amp_scaler_config config; /* factors and interval as set now */
    float scale;              /* a float, as torch's scale tensor */
    int64_t growth_tracker;
    int unscaled;  /* unscale ran since the last update */
    int found_inf; /* ... and saw Inf or NaN (after agreement) */
    amp_scaler_agree_fn agree;
    void *agree_context;
    /* Device mode: from the first device buffer on, the state lives in
     * device memory (the CUDA plugin) and the host copies above are stale. */
    const struct amp_scaler_cuda_ops *cuda;
    struct amp_cuda_scaler *dev;
    void *stream; /* the stream of the last device call */
    char error[256];
};

static int fail(const amp_scaler *s, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int read_device(const amp_scaler *s, float *scale, int64_t *tracker, int *found_inf);

/* Records why a call failed and returns rc. The message buffer is the one
 * mutable part of a const scaler (like errno). */
static int fail(const amp_scaler *s, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(((amp_scaler *)s)->error, sizeof s->error, fmt, ap);
    va_end(ap);
    return rc;
}

static int succeed(amp_scaler *s)
{
    s->error[0] = '\0';
    return 0;
}

AMP_EXPORT void amp_scaler_config_default(amp_scaler_config *config)
{
    config->init_scale = 65536.0;
    config->growth_factor = 2.0;
    config->backoff_factor = 0.5;
    config->growth_interval = 2000;
    config->enabled = 1;
}

static const char *growth_factor_problem(double v)
{
    return isfinite(v) && v > 1.0 ? NULL : "growth_factor must be a finite number > 1";
}

static const char *backoff_factor_problem(double v)
{
    return v > 0.0 && v < 1.0 ? NULL : "backoff_factor must be in (0, 1)";
}

static const char *growth_interval_problem(int64_t v)
{
    return v > 0 ? NULL : "growth_interval must be > 0";
}

static const char *scale_problem(double v)
{
    return isfinite(v) && v > 0.0 && isfinite((float)v) && (float)v > 0.0f
               ? NULL
               : "the scale must be a finite float > 0";
}

static const char *config_problem(const amp_scaler_config *c)
{
    const char *p = scale_problem(c->init_scale);
    if (!p)
        p = growth_factor_problem(c->growth_factor);
    if (!p)
        p = backoff_factor_problem(c->backoff_factor);
    if (!p)
        p = growth_interval_problem(c->growth_interval);
    return p;
}

AMP_EXPORT amp_scaler *amp_scaler_create(const amp_scaler_config *config)
{
    amp_scaler_config c;
    if (config)
        c = *config;
    else
        amp_scaler_config_default(&c);
    if (c.enabled && config_problem(&c)) {
        errno = EINVAL;
        return NULL;
    }
    amp_scaler *s = calloc(1, sizeof *s);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    s->config = c;
    s->scale = c.enabled ? (float)c.init_scale : 1.0f;
    return s;
}

AMP_EXPORT void amp_scaler_destroy(amp_scaler *s)
{
    if (s && s->dev)
        s->cuda->destroy(s->dev);
    free(s);
}

AMP_EXPORT int amp_scaler_is_enabled(const amp_scaler *s)
{
    return s->config.enabled != 0;
}

/* The host copies of the state, refreshed from the device in device mode
 * (which waits for the scaler's stream, as torch's get_scale() syncs). */
static void current_state(const amp_scaler *s, float *scale, int64_t *tracker)
{
    *scale = s->scale;
    *tracker = s->growth_tracker;
    if (s->dev)
        read_device(s, scale, tracker, NULL);
}

AMP_EXPORT float amp_scaler_get_scale(const amp_scaler *s)
{
    if (!s->config.enabled)
        return 1.0f;
    float scale;
    int64_t tracker;
    current_state(s, &scale, &tracker);
    return scale;
}

AMP_EXPORT int64_t amp_scaler_get_growth_tracker(const amp_scaler *s)
{
    float scale;
    int64_t tracker;
    current_state(s, &scale, &tracker);
    return tracker;
}

AMP_EXPORT double amp_scaler_get_growth_factor(const amp_scaler *s)
{
    return s->config.growth_factor;
}

AMP_EXPORT double amp_scaler_get_backoff_factor(const amp_scaler *s)
{
    return s->config.backoff_factor;
}

AMP_EXPORT int64_t amp_scaler_get_growth_interval(const amp_scaler *s)
{
    return s->config.growth_interval;
}

AMP_EXPORT int amp_scaler_set_growth_factor(amp_scaler *s, double v)
{
    const char *p = growth_factor_problem(v);
    if (p)
        return fail(s, -EINVAL, "%s (got %g)", p, v);
    s->config.growth_factor = v;
    return succeed(s);
}

AMP_EXPORT int amp_scaler_set_backoff_factor(amp_scaler *s, double v)
{
    const char *p = backoff_factor_problem(v);
    if (p)
        return fail(s, -EINVAL, "%s (got %g)", p, v);
    s->config.backoff_factor = v;
    return succeed(s);
}

AMP_EXPORT int amp_scaler_set_growth_interval(amp_scaler *s, int64_t v)
{
    const char *p = growth_interval_problem(v);
    if (p)
        return fail(s, -EINVAL, "%s (got %" PRId64 ")", p, v);
    s->config.growth_interval = v;
    return succeed(s);
}

/* Every buffer is checked before any is touched, so a bad one changes
 * nothing. On success *on_device says whether the buffers are device memory
 * (all of one call must be the same kind, and on one stream). */
static int check_buffers(const amp_scaler *s, const amp_buffer *b, size_t n, int *on_device)
{
    *on_device = s->dev != NULL;
    if (n && !b)
        return fail(s, -EINVAL, "buffers is NULL with n = %zu", n);
    for (size_t i = 0; i < n; i++) {
        if (b[i].count && !b[i].data)
            return fail(s, -EINVAL, "buffer %zu: data is NULL with count %zu", i, b[i].count);
        if (b[i].dtype != AMP_F32 && b[i].dtype != AMP_F16 && b[i].dtype != AMP_BF16)
            return fail(s, -EINVAL, "buffer %zu: unknown dtype %d", i, (int)b[i].dtype);
        if (b[i].device != 0 && b[i].device != 1)
            return fail(s, -EINVAL, "buffer %zu: device must be 0 (host) or 1 (CUDA), not %d", i,
                        b[i].device);
        if (i == 0)
            *on_device = b[0].device == 1;
        else if ((b[i].device == 1) != *on_device || b[i].stream != b[0].stream)
            return fail(s, -EINVAL,
                        "buffer %zu: one call takes host buffers or device buffers "
                        "on one stream, not a mix",
                        i);
    }
    if (n && s->dev && !*on_device)
        return fail(s, -EINVAL,
                    "this scaler keeps its state on the device since its first "
                    "device buffer; pass device buffers");
    return 0;
}

/* The CUDA plugin, looked for beside libampscaler, then on the library path. */
static const struct amp_scaler_cuda_ops *cuda_plugin;
static char cuda_plugin_error[200];

static void load_cuda_plugin(void)
{
    static const char name[] = "libampscaler-cuda.so";
    Dl_info self;
    void *h = NULL;
    if (dladdr((void *)load_cuda_plugin, &self) && self.dli_fname) {
        char path[4096];
        snprintf(path, sizeof path, "%s", self.dli_fname);
        char beside[4200];
        snprintf(beside, sizeof beside, "%s/%s", dirname(path), name);
        h = dlopen(beside, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h)
        h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(cuda_plugin_error, sizeof cuda_plugin_error,
                 "device buffers need %s (built when the CUDA toolkit is found): %s", name,
                 dlerror());
        return;
    }
    const struct amp_scaler_cuda_ops *ops = dlsym(h, AMP_SCALER_CUDA_OPS_SYMBOL);
    if (!ops || ops->abi != AMP_SCALER_CUDA_ABI) {
        snprintf(cuda_plugin_error, sizeof cuda_plugin_error, "%s is not the expected version",
                 name);
        dlclose(h);
        return;
    }
    cuda_plugin = ops;
}

/* Moves the scaler's state to the device on its first device buffer. */
static int enter_device_mode(amp_scaler *s, void *stream)
{
    s->stream = stream;
    if (s->dev)
        return 0;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_cuda_plugin);
    if (!cuda_plugin)
        return fail(s, -ENOTSUP, "%s", cuda_plugin_error);
    int rc = cuda_plugin->create(&s->dev, s->scale, s->growth_tracker, s->error, sizeof s->error);
    if (rc)
        return rc;
    s->cuda = cuda_plugin;
    return 0;
}

/* Reads the device state back (synchronises the scaler's stream). */
static int read_device(const amp_scaler *s, float *scale, int64_t *tracker, int *found_inf)
{
    amp_scaler *m = (amp_scaler *)s;
    return s->cuda->read(s->dev, scale, tracker, found_inf, s->stream, m->error, sizeof m->error);
}

static int multiply_device(amp_scaler *s, amp_buffer *b, size_t n, int unscale)
{
    for (size_t i = 0; i < n; i++) {
        int rc = s->cuda->multiply(s->dev, b[i].data, b[i].count, (int)b[i].dtype, unscale,
                                   b[i].stream, s->error, sizeof s->error);
        if (rc)
            return rc;
    }
    return 0;
}

/* Multiplies every buffer by factor; returns 1 if any input was Inf/NaN. */
static int multiply_buffers(amp_buffer *b, size_t n, float factor)
{
    const struct amp_unscale_kernels *k = amp_unscale();
    int nonfinite = 0;
    for (size_t i = 0; i < n; i++) {
        switch (b[i].dtype) {
        case AMP_F32:
            nonfinite |= k->f32(b[i].data, b[i].count, factor);
            break;
        case AMP_F16:
            nonfinite |= k->f16(b[i].data, b[i].count, factor);
            break;
        case AMP_BF16:
            nonfinite |= k->bf16(b[i].data, b[i].count, factor);
            break;
        }
    }
    return nonfinite;
}

AMP_EXPORT int amp_scaler_scale(amp_scaler *s, amp_buffer *buffers, size_t n)
{
    if (!s->config.enabled)
        return succeed(s);
    int on_device, rc = check_buffers(s, buffers, n, &on_device);
    if (rc)
        return rc;
    if (on_device) {
        if ((rc = enter_device_mode(s, n ? buffers[0].stream : s->stream)) ||
            (rc = multiply_device(s, buffers, n, 0)))
            return rc;
        return succeed(s);
    }
    multiply_buffers(buffers, n, s->scale);
    return succeed(s);
}

AMP_EXPORT int amp_scaler_unscale(amp_scaler *s, amp_buffer *buffers, size_t n)
{
    if (!s->config.enabled)
        return succeed(s);
    if (s->unscaled)
        return fail(s, -EALREADY, "unscale was already called since the last update");
    int on_device, rc = check_buffers(s, buffers, n, &on_device);
    if (rc)
        return rc;
    int found = 0;
    if (on_device) {
        /* Kernels on the buffers' stream; no wait unless an agreement hook
         * needs the flag on the host. */
        if ((rc = enter_device_mode(s, n ? buffers[0].stream : s->stream)) ||
            (rc = s->cuda->begin_unscale(s->dev, s->stream, s->error, sizeof s->error)) ||
            (rc = multiply_device(s, buffers, n, 1)))
            return rc;
        if (s->agree && (rc = read_device(s, NULL, NULL, &found)))
            return rc;
    } else {
        /* torch: inv_scale = scale.double().reciprocal().float() */
        float inv_scale = (float)(1.0 / (double)s->scale);
        found = multiply_buffers(buffers, n, inv_scale);
    }
    s->unscaled = 1;
    s->found_inf = found;
    if (s->agree) {
        int agreed = found;
        rc = s->agree(&agreed, s->agree_context);
        if (rc < 0)
            agreed = 1; /* ranks may disagree: never step on doubt */
        s->found_inf = agreed != 0;
        if (s->dev && s->found_inf != found) {
            int rc2 = s->cuda->write(s->dev, NULL, NULL, &s->found_inf, s->stream, s->error,
                                     sizeof s->error);
            if (rc2)
                return rc2;
        }
        if (rc < 0)
            return fail(s, rc, "found_inf agreement failed (%s); this step will be skipped",
                        strerror(-rc));
    }
    return succeed(s);
}

AMP_EXPORT int amp_scaler_step_ok(const amp_scaler *s)
{
    if (!s->config.enabled)
        return 1;
    if (s->dev && s->unscaled) {
        int found = 1; /* a failed read skips the step */
        read_device(s, NULL, NULL, &found);
        return !found;
    }
    return !s->found_inf;
}

AMP_EXPORT int amp_scaler_update(amp_scaler *s, const float *new_scale)
{
    if (!s->config.enabled)
        return succeed(s);
    if (new_scale) {
        const char *p = scale_problem(*new_scale);
        if (p)
            return fail(s, -EINVAL, "new_scale: %s (got %g)", p, (double)*new_scale);
        if (s->dev) {
            int rc =
                s->cuda->write(s->dev, new_scale, NULL, NULL, s->stream, s->error, sizeof s->error);
            if (rc)
                return rc;
        }
        s->scale = *new_scale;
    } else {
        if (!s->unscaled)
            return fail(s, -EINVAL,
                        "no unscale since the last update: nothing to judge the "
                        "scale by (unscale the gradients first)");
        if (s->dev) {
            int rc =
                s->cuda->update(s->dev, s->config.growth_factor, s->config.backoff_factor,
                                s->config.growth_interval, s->stream, s->error, sizeof s->error);
            if (rc)
                return rc;
            s->unscaled = 0;
            s->found_inf = 0;
            return succeed(s);
        }
        /* torch's _amp_update_scale_: factors are doubles, the scale a float. */
        if (s->found_inf) {
            s->scale = (float)((double)s->scale * s->config.backoff_factor);
            s->growth_tracker = 0;
        } else {
            int64_t successful = s->growth_tracker + 1;
            if (successful == s->config.growth_interval) {
                float grown = (float)((double)s->scale * s->config.growth_factor);
                if (isfinite(grown))
                    s->scale = grown;
                s->growth_tracker = 0;
            } else {
                s->growth_tracker = successful;
            }
        }
    }
    s->unscaled = 0;
    s->found_inf = 0;
    return succeed(s);
}

AMP_EXPORT int amp_scaler_set_agreement(amp_scaler *s, amp_scaler_agree_fn agree, void *context)
{
    s->agree = agree;
    s->agree_context = context;
    return succeed(s);
}

/* ---- state files ---- */

#define STATE_MAGIC "ampscaler-state 1"
/* The longest state file amp_scaler_load reads; a real one is ~120 bytes. */
#define STATE_MAX_BYTES 4096

/* The state text in buf (at least 256 bytes); returns its length. */
static int format_state(const amp_scaler *s, char *buf, size_t size)
{
    float scale;
    int64_t tracker;
    current_state(s, &scale, &tracker);
    /* %.9g and %.17g print a float and a double exactly enough to read back
     * the same value. */
    return snprintf(buf, size,
                    STATE_MAGIC "\nscale %.9g\ngrowth_factor %.17g\nbackoff_factor %.17g\n"
                                "growth_interval %" PRId64 "\n_growth_tracker %" PRId64 "\n",
                    (double)scale, s->config.growth_factor, s->config.backoff_factor,
                    s->config.growth_interval, tracker);
}

/* Temporary names are PATH.ampscaler-tmp-PID-N. */
#define TEMP_MARK ".ampscaler-tmp-"

/* A save killed between naming its file and renaming it leaves the name
 * behind: the next save beside it removes such names of processes that no
 * longer exist. */
static void remove_dead_temporaries(const char *path)
{
    char dir[4096], base[4096];
    snprintf(dir, sizeof dir, "%s", path);
    snprintf(base, sizeof base, "%s", path);
    const char *b = basename(base);
    size_t blen = strlen(b), mlen = strlen(TEMP_MARK);
    DIR *d = opendir(dirname(dir));
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name;
        if (strncmp(n, b, blen) != 0 || strncmp(n + blen, TEMP_MARK, mlen) != 0)
            continue;
        char *end;
        long pid = strtol(n + blen + mlen, &end, 10);
        if (pid <= 0 || *end != '-' || pid == (long)getpid() ||
            (kill((pid_t)pid, 0) != 0 && errno == EPERM) || kill((pid_t)pid, 0) == 0)
            continue;
        unlinkat(dirfd(d), n, 0);
    }
    closedir(d);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The new state is written to an unnamed file in the target's directory
 * (O_TMPFILE), given a temporary name only once complete and synced, and
 * renamed over the target: a process killed at any point leaves the old
 * file or the new one, never a torn one. A kill between naming and renaming
 * (microseconds) leaves the name, which the next save beside it removes
 * once its process is gone (a named temporary file written in full leaked
 * one per kill). Filesystems without O_TMPFILE
 * get a named temporary file. Only a regular file (or nothing) at the path
 * is replaced: a symbolic link, a device, a FIFO or a directory there is
 * refused, so a mistaken path cannot destroy /dev/full or a link's target's
 * name. */
AMP_EXPORT int amp_scaler_save(const amp_scaler *s, const char *path)
{
    if (!s->config.enabled)
        return 0;
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return fail((amp_scaler *)s, -EEXIST, "%s: exists and is not a regular file; not replaced",
                    path);
    char text[512], tmp[4096], dir[4096];
    int len = format_state(s, text, sizeof text);
    static _Atomic unsigned saves;
    if (snprintf(tmp, sizeof tmp, "%s" TEMP_MARK "%ld-%u", path, (long)getpid(),
                 atomic_fetch_add(&saves, 1)) >= (int)sizeof tmp ||
        snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return fail(s, -ENAMETOOLONG, "%s: path too long", path);
    remove_dead_temporaries(path);
    int named = 0;
    int fd = open(dirname(dir), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
        named = 1;
    }
    if (fd < 0)
        return fail(s, -errno, "%s: cannot create a file beside it: %s", path, strerror(errno));
    int bad = write_all(fd, text, (size_t)len) != 0 || fsync(fd) != 0;
    int e = errno;
    if (!bad && !named) {
        /* A name for the finished file, then the rename. */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        bad = linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0;
        e = errno;
        named = !bad;
    }
    bad |= close(fd) != 0;
    if (bad || rename(tmp, path) != 0) {
        e = bad ? e : errno;
        if (named)
            unlink(tmp);
        return fail(s, -e, "%s: cannot write the state: %s", path, strerror(e));
    }
    return 0;
}

/* Decimal numbers exactly as amp_scaler_save prints them: an optional minus,
 * digits, an optional fraction and exponent. No hex, no '+', no spaces, no
 * inf or nan words. */
static int decimal_text(const char *t, int integer)
{
    const char *p = t + (*t == '-');
    if (!isdigit((unsigned char)*p))
        return 0;
    while (isdigit((unsigned char)*p))
        p++;
    if (!integer && *p == '.') {
        p++;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (!integer && (*p == 'e' || *p == 'E')) {
        p++;
        p += *p == '-' || *p == '+';
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

static int parse_double(const char *text, double *out)
{
    char *end;
    if (!decimal_text(text, 0))
        return -1;
    errno = 0;
    *out = strtod(text, &end);
    return *end == '\0' && errno == 0 && isfinite(*out) ? 0 : -1;
}

static int parse_int64(const char *text, int64_t *out)
{
    char *end;
    if (!decimal_text(text, 1))
        return -1;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    *out = v;
    return *end == '\0' && errno == 0 ? 0 : -1;
}

/* Reads at most STATE_MAX_BYTES of a regular file: a symbolic link is not
 * followed, and a FIFO or a device is refused without blocking on it. */
static int read_state_file(amp_scaler *s, const char *path, char *text, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return fail(s, -errno, "%s: %s%s", path, strerror(errno),
                    errno == ELOOP ? " (a symbolic link is not followed)" : "");
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(s, -EBADMSG, "%s: not a regular file", path);
    }
    if (st.st_size > STATE_MAX_BYTES) {
        close(fd);
        return fail(s, -EBADMSG, "%s: larger than a scaler state file can be (%d bytes)", path,
                    STATE_MAX_BYTES);
    }
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, text + n, STATE_MAX_BYTES + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return fail(s, -e, "%s: %s", path, strerror(e));
        }
        if (r == 0 || (n += (size_t)r) > STATE_MAX_BYTES)
            break;
    }
    close(fd);
    if (n > STATE_MAX_BYTES)
        return fail(s, -EBADMSG, "%s: larger than a scaler state file can be (%d bytes)", path,
                    STATE_MAX_BYTES);
    text[n] = '\0';
    *len = n;
    return 0;
}

AMP_EXPORT int amp_scaler_load(amp_scaler *s, const char *path)
{
    if (!s->config.enabled)
        return succeed(s);
    char text[STATE_MAX_BYTES + 2];
    size_t len = 0;
    int rc = read_state_file(s, path, text, &len);
    if (rc)
        return rc;
    if (strlen(text) != len)
        return fail(s, -EBADMSG, "%s: not a text file", path);
    if (len == 0)
        return fail(s, -EBADMSG, "%s: empty", path);
    if (text[len - 1] != '\n')
        return fail(s, -EBADMSG, "%s: truncated: the last line does not end", path);

    static const char *const keys[] = {"scale", "growth_factor", "backoff_factor",
                                       "growth_interval", "_growth_tracker"};
    double scale = 0, growth = 0, backoff = 0;
    int64_t interval = 0, tracker = 0;
    int seen[5] = {0};
    int lineno = 0;
    /* Every line ends with a newline; none is empty. */
    for (char *line = text, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        *nl = '\0';
        lineno++;
        if (!*line)
            return fail(s, -EBADMSG, "%s:%d: an empty line", path, lineno);
        if (lineno == 1) {
            if (strcmp(line, STATE_MAGIC) != 0)
                return fail(s, -EBADMSG,
                            "%s: not an ampscaler state file (first line is not \"%s\")", path,
                            STATE_MAGIC);
            continue;
        }
        char *value = strchr(line, ' ');
        if (!value)
            return fail(s, -EBADMSG, "%s:%d: expected \"key value\"", path, lineno);
        *value++ = '\0';
        int k = -1;
        for (int i = 0; i < 5; i++)
            if (strcmp(line, keys[i]) == 0)
                k = i;
        if (k < 0)
            return fail(s, -EBADMSG, "%s:%d: unknown key '%.64s'", path, lineno, line);
        if (seen[k]++)
            return fail(s, -EBADMSG, "%s:%d: '%s' appears twice", path, lineno, keys[k]);
        int bad = k == 0   ? parse_double(value, &scale)
                  : k == 1 ? parse_double(value, &growth)
                  : k == 2 ? parse_double(value, &backoff)
                  : k == 3 ? parse_int64(value, &interval)
                           : parse_int64(value, &tracker);
        if (bad)
            return fail(s, -EBADMSG, "%s:%d: '%s' has a bad value '%.64s'", path, lineno, keys[k],
                        value);
    }
    for (int i = 0; i < 5; i++)
        if (!seen[i])
            return fail(s, -EBADMSG, "%s: truncated: no '%s'", path, keys[i]);
    const char *p = scale_problem(scale);
    if (!p)
        p = growth_factor_problem(growth);
    if (!p)
        p = backoff_factor_problem(backoff);
    if (!p)
        p = growth_interval_problem(interval);
    if (!p && (tracker < 0 || tracker >= interval))
        p = "_growth_tracker must be in [0, growth_interval)";
    if (p)
        return fail(s, -EBADMSG, "%s: %s", path, p);
    if (s->dev) {
        float fscale = (float)scale;
        int rc =
            s->cuda->write(s->dev, &fscale, &tracker, NULL, s->stream, s->error, sizeof s->error);
        if (rc)
            return rc;
    }
    s->scale = (float)scale;
    s->config.growth_factor = growth;
    s->config.backoff_factor = backoff;
    s->config.growth_interval = interval;
    s->growth_tracker = tracker;
    return succeed(s);
}

AMP_EXPORT const char *amp_scaler_last_error(const amp_scaler *s)
{
    return s->error;
}

/* ---- MPI agreement, found at run time ---- */

AMP_EXPORT int amp_scaler_agree_mpi(int *found_inf, void *context)
{
    int (*initialized)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "MPI_Initialized");
    void *allreduce = dlsym(RTLD_DEFAULT, "MPI_Allreduce");
    int ready = 0;
    if (!initialized || !allreduce || initialized(&ready) != 0 || !ready)
        return -ENOSYS;
    int in = *found_inf != 0, out = 0, rc;
    void *ompi_world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
    if (ompi_world) {
        /* Open MPI: handles are pointers to its predefined objects. */
        void *type = dlsym(RTLD_DEFAULT, "ompi_mpi_int");
        void *op = dlsym(RTLD_DEFAULT, "ompi_mpi_op_max");
        if (!type || !op)
            return -ENOSYS;
        void *comm = context ? *(void **)context : ompi_world;
        rc = ((int (*)(const void *, void *, int, void *, void *, void *))allreduce)(
            &in, &out, 1, type, op, comm);
    } else {
        /* The MPICH ABI (MPICH, Intel MPI, MVAPICH): integer handles. */
        int comm = context ? *(int *)context : 0x44000000; /* MPI_COMM_WORLD */
        rc = ((int (*)(const void *, void *, int, int, int, int))allreduce)(
            &in, &out, 1, 0x4c000405 /* MPI_INT */, 0x58000001 /* MPI_MAX */, comm);
    }
    if (rc != 0)
        return -EIO;
    *found_inf = out;
    return 0;
}
