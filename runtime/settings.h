/* Every setting in one table, in the manner of mimalloc's options: its
 * environment variable, its control name, what values it takes, its
 * default, where it lives in struct amp_config and in the control block,
 * and whether it is live (ampctl and ampshim_ctl change it in a running
 * process). The environment parser (runtime/config.c), the control names'
 * opt.* leaves (runtime/ctl_names.c), applying a changed block
 * (runtime/threads.c), publishing a new one (runtime/control.c), the exit
 * report, `ampctl settings`, ampshim(7)'s list and docs/settings.md all
 * read this table, amp_settings[] in runtime/config.c beside the variables'
 * parsers (runtime/settings.c holds the generic handlers over it). Adding a
 * setting is one row there plus its parser. */
#ifndef AMPSHIM_SETTINGS_H
#define AMPSHIM_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/config.h"
#include "runtime/control.h"

/* A control name's value type, for ampshim_ctl. */
enum amp_ctl_type { AMP_CTL_T_STRING, AMP_CTL_T_BOOL, AMP_CTL_T_U64 };

/* One request on a control name (runtime/ctl_names.c): a read fills out,
 * a write (value != NULL) parses value. Every handler answers 0, ENOENT
 * (no such name), EPERM (read-only) or EINVAL (bad value), with a reason in
 * why. */
struct amp_ctl_req {
    struct amp_ctl_block *b;
    const char *name;
    const char *value; /* NULL: a read */
    char *out;
    size_t outlen;
    enum amp_ctl_type type;
    char *why;
    size_t whylen;
};
typedef int (*amp_ctl_leaf)(struct amp_ctl_req *r);

/* A setting without a config or block field leaves it 0: offset 0 is
 * amp_config's enable and the block's magic, neither of them a setting's
 * field (runtime/settings.c checks). */
#define AMP_SETTING_NO_FIELD ((size_t)0)
/* The value a setting's `word` names. */
#define AMP_SETTING_WORD_VALUE UINT32_MAX

struct amp_setting {
    const char *env;    /* AMPSHIM_*, or NULL for a control-only name */
    const char *ctl;    /* its control name, or NULL for an environment-only one */
    const char *values; /* what it takes, in words */
    /* The default, in words, only where no value says it: a setting whose
     * value is a field or has a text handler below leaves this NULL, and
     * its default's text is derived from amp_config_defaults
     * (amp_setting_default_text), so a default is written once. */
    const char *default_text;
    uint8_t live; /* a write to ctl changes the running process */
    /* Where it lives: a 32-bit field of struct amp_config and an _Atomic
     * uint32_t of struct amp_ctl_block (left out, AMP_SETTING_NO_FIELD, where
     * none),
     * valid from `first` and below `limit`; `parse` turns text into such a
     * value (-1: bad, with the reason in err) and `names` a value into text
     * (NULL: decimal). A setting with these fields needs no handler of its
     * own. */
    size_t cfg_field, block_field;
    uint32_t first;
    uint64_t limit;
    int64_t (*parse)(const char *text, char *err, size_t errlen);
    const char *const *names;
    /* A setting with its own parser (parse_env): its value in cfg as the
     * text that parser reads back (NULL: the field's, or default_text's). */
    void (*text)(const struct amp_config *cfg, char *out, size_t outlen);
    /* A number's one word (NULL: none): the name of the value
     * AMP_SETTING_WORD_VALUE, which parse also takes ("auto"). */
    const char *word;
    enum amp_ctl_type type;
    /* A setting for every device at once (AMPSHIM_DTYPE): the control names
     * of the per-device settings it sets, CPU's first. It has no field of
     * its own: a read answers the CPU's value, a write or the environment
     * sets each device's (with the CPU's parser). */
    const char *per_device[AMP_DEVICE_COUNT];
    /* Its own handlers, where the fields above do not say it all: the
     * environment (0, -1 with err, or N > 0 problems it reported itself),
     * the control leaf, and publishing into a new block. */
    int (*parse_env)(struct amp_config *cfg, const char *value, char *err, size_t errlen);
    amp_ctl_leaf leaf;
    void (*publish)(struct amp_ctl_block *b, const struct amp_config *cfg);
};

extern const struct amp_setting amp_settings[];
extern const size_t amp_setting_count;

/* The device whose member of a per-device group s is (opt.cuda_dtype:
 * CUDA), or -1. */
int amp_setting_device(const struct amp_setting *s);

/* The setting whose control name is ctl, or NULL. */
const struct amp_setting *amp_setting_by_ctl(const char *ctl);

/* Runs a control request on setting s (its leaf handler, or the generic one
 * over its fields). */
int amp_setting_ctl(const struct amp_setting *s, struct amp_ctl_req *r);

/* Parses one environment value into cfg: 0, -1 with the reason in err, or
 * the number of problems the parser reported itself. */
int amp_setting_parse_env(const struct amp_setting *s, struct amp_config *cfg, const char *value,
                          char *err, size_t errlen);

/* The block's live values into cfg (a refresh after ampctl wrote), and
 * cfg's values into a new block. */
void amp_settings_apply(const struct amp_ctl_block *b, struct amp_config *cfg);
void amp_settings_publish(struct amp_ctl_block *b, const struct amp_config *cfg);

/* A setting's value in cfg, as text: its text handler's, its field's, a
 * group's from its per-device members ("bf16 on CPU, fp16 on CUDA" where
 * they differ), else its default_text (or "-"). */
void amp_setting_text(const struct amp_setting *s, const struct amp_config *cfg, char *out,
                      size_t outlen);

/* Its default as text: default_text where the setting has one, else its
 * value in amp_config_defaults'. What ampctl settings, the man page's table
 * and docs/settings.md print. */
void amp_setting_default_text(const struct amp_setting *s, char *out, size_t outlen);

#endif
