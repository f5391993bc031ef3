/* The generic handlers over the settings table (runtime/settings.h; the
 * table itself is runtime/config.c's, beside the variables' parsers). */
#include "runtime/settings.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/threads.h"

_Static_assert(offsetof(struct amp_config, enable) == AMP_SETTING_NO_FIELD &&
                   offsetof(struct amp_ctl_block, magic) == AMP_SETTING_NO_FIELD,
               "a setting's 'no field' must be an offset no setting lives at");

const struct amp_setting *amp_setting_by_ctl(const char *ctl)
{
    for (size_t i = 0; i < amp_setting_count; i++)
        if (amp_settings[i].ctl && strcmp(amp_settings[i].ctl, ctl) == 0)
            return &amp_settings[i];
    return NULL;
}

int amp_setting_device(const struct amp_setting *s)
{
    for (size_t i = 0; s->ctl && i < amp_setting_count; i++)
        for (int dev = 0; dev < AMP_DEVICE_COUNT; dev++)
            if (amp_settings[i].per_device[dev] &&
                strcmp(amp_settings[i].per_device[dev], s->ctl) == 0)
                return dev;
    return -1;
}

static _Atomic uint32_t *block_word(const struct amp_setting *s, const struct amp_ctl_block *b)
{
    return (_Atomic uint32_t *)((char *)b + s->block_field);
}

static uint32_t *cfg_word(const struct amp_setting *s, const struct amp_config *cfg)
{
    return (uint32_t *)((char *)cfg + s->cfg_field);
}

static int valid(const struct amp_setting *s, uint32_t v)
{
    return v >= s->first && v < s->limit;
}

static void value_text(const struct amp_setting *s, uint32_t v, char *out, size_t outlen)
{
    if (s->word && v == AMP_SETTING_WORD_VALUE)
        snprintf(out, outlen, "%s", s->word);
    else if (!s->names)
        snprintf(out, outlen, "%u", (unsigned)v);
    else
        snprintf(out, outlen, "%s", valid(s, v) ? s->names[v] : "?");
}

int amp_setting_ctl(const struct amp_setting *s, struct amp_ctl_req *r)
{
    if (s->leaf)
        return s->leaf(r);
    if (s->per_device[0]) {
        const struct amp_setting *cpu = amp_setting_by_ctl(s->per_device[0]);
        int rc = amp_setting_ctl(cpu, r);
        for (int dev = 1; rc == 0 && r->value && dev < AMP_DEVICE_COUNT; dev++)
            atomic_store(block_word(amp_setting_by_ctl(s->per_device[dev]), r->b),
                         atomic_load(block_word(cpu, r->b)));
        return rc;
    }
    if (s->block_field == AMP_SETTING_NO_FIELD)
        return ENOENT;
    _Atomic uint32_t *word = block_word(s, r->b);
    if (!r->value) {
        value_text(s, atomic_load(word), r->out, r->outlen);
        r->type = s->type;
        return 0;
    }
    if (!s->live) {
        snprintf(r->why, r->whylen, "'%s' is read-only", r->name);
        return EPERM;
    }
    int64_t v = s->parse(r->value, r->why, r->whylen);
    if (v < 0)
        return EINVAL;
    atomic_store(word, (uint32_t)v);
    return 0;
}

int amp_setting_parse_env(const struct amp_setting *s, struct amp_config *cfg, const char *value,
                          char *err, size_t errlen)
{
    if (s->parse_env)
        return s->parse_env(cfg, value, err, errlen);
    if (s->per_device[0]) {
        const struct amp_setting *cpu = amp_setting_by_ctl(s->per_device[0]);
        int rc = amp_setting_parse_env(cpu, cfg, value, err, errlen);
        for (int dev = 1; rc == 0 && dev < AMP_DEVICE_COUNT; dev++)
            *cfg_word(amp_setting_by_ctl(s->per_device[dev]), cfg) = *cfg_word(cpu, cfg);
        return rc;
    }
    int64_t v = s->parse(value, err, errlen);
    if (v < 0)
        return -1;
    *cfg_word(s, cfg) = (uint32_t)v;
    return 0;
}

void amp_settings_apply(const struct amp_ctl_block *b, struct amp_config *cfg)
{
    for (size_t i = 0; i < amp_setting_count; i++) {
        const struct amp_setting *s = &amp_settings[i];
        if (!s->live || s->cfg_field == AMP_SETTING_NO_FIELD ||
            s->block_field == AMP_SETTING_NO_FIELD)
            continue;
        uint32_t v = atomic_load(block_word(s, b));
        if (valid(s, v))
            amp_live_store(cfg_word(s, cfg), v);
    }
}

void amp_settings_publish(struct amp_ctl_block *b, const struct amp_config *cfg)
{
    for (size_t i = 0; i < amp_setting_count; i++) {
        const struct amp_setting *s = &amp_settings[i];
        if (s->publish)
            s->publish(b, cfg);
        else if (s->block_field != AMP_SETTING_NO_FIELD)
            atomic_store(block_word(s, b),
                         s->cfg_field != AMP_SETTING_NO_FIELD ? *cfg_word(s, cfg) : 0);
    }
}

void amp_setting_text(const struct amp_setting *s, const struct amp_config *cfg, char *out,
                      size_t outlen)
{
    if (s->text) {
        s->text(cfg, out, outlen);
    } else if (s->per_device[0]) {
        char cpu[64], cuda[64];
        amp_setting_text(amp_setting_by_ctl(s->per_device[AMP_DEVICE_CPU]), cfg, cpu, sizeof cpu);
        amp_setting_text(amp_setting_by_ctl(s->per_device[AMP_DEVICE_CUDA]), cfg, cuda,
                         sizeof cuda);
        if (strcmp(cpu, cuda) == 0)
            snprintf(out, outlen, "%s", cpu);
        else
            snprintf(out, outlen, "%s on CPU, %s on CUDA", cpu, cuda);
    } else if (s->cfg_field != AMP_SETTING_NO_FIELD) {
        value_text(s, amp_live_load(cfg_word(s, cfg)), out, outlen);
    } else {
        snprintf(out, outlen, "%s", s->default_text ? s->default_text : "-");
    }
}

void amp_setting_default_text(const struct amp_setting *s, char *out, size_t outlen)
{
    if (s->default_text) {
        snprintf(out, outlen, "%s", s->default_text);
        return;
    }
    struct amp_config *defaults = malloc(sizeof *defaults);
    if (!defaults) {
        snprintf(out, outlen, "-");
        return;
    }
    amp_config_defaults(defaults);
    amp_setting_text(s, defaults, out, outlen);
    free(defaults);
}
