/* libFuzzer target for ampctl's reading of control blocks, which another
 * process writes. Even first byte: the input is the block as it comes (the
 * validator must refuse nonsense). Odd: a valid header followed by fuzzed
 * fields, policy bytes, thread slots and audit sites (names without NUL,
 * wild enum values, any tid, any counts and errors), rendered as status,
 * stats, ps, the audit report and its policy, and read by name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "render.h"
#include "runtime/accuracy_audit.h"
#include "runtime/control.h"
#include "runtime/ctl_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct amp_ctl_block *b;
    static FILE *sink;
    if (!b) {
        b = calloc(1, sizeof *b);
        sink = fopen("/dev/null", "w");
    }
    if (size < 1)
        return 0;
    memset(b, 0, offsetof(struct amp_ctl_block, threads) + 4 * sizeof(struct amp_thread));
    size_t audit_at = offsetof(struct amp_ctl_block, audit_sites);
    size_t audit_cap =
        offsetof(struct amp_ctl_block, audit_site) + 4 * sizeof(struct amp_audit_site) - audit_at;
    memset((char *)b + audit_at, 0, audit_cap);
    size_t body = size - 1;
    if (!(data[0] & 1)) {
        memcpy(b, data + 1, body < sizeof *b ? body : sizeof *b);
        if (amp_ctl_block_problem(b, body) == NULL)
            ampctl_render_status(sink, b, 0); /* a valid block is rendered too */
        return 0;
    }
    b->magic = AMP_CTL_MAGIC;
    b->version = AMP_CTL_VERSION;
    b->size = sizeof *b;
    b->op_count = AMP_OP_COUNT;
    b->hook_count = AMP_HOOK_COUNT;
    b->max_threads = AMP_CTL_MAX_THREADS;
    b->list_hash = amp_ctl_list_hash();
    /* Fuzzed from the exe name on: settings, policy, then four slots. */
    size_t start = offsetof(struct amp_ctl_block, exe);
    size_t room = offsetof(struct amp_ctl_block, exited) - start;
    memcpy((char *)b + start, data + 1, body < room ? body : room);
    if (body > room) {
        size_t slots = body - room, cap = 4 * sizeof(struct amp_thread);
        memcpy(b->threads, data + 1 + room, slots < cap ? slots : cap);
        if (slots > cap) {
            size_t rest = slots - cap;
            memcpy((char *)b + audit_at, data + 1 + room + cap,
                   rest < audit_cap ? rest : audit_cap);
        }
    }
    if (amp_ctl_block_problem(b, sizeof *b) != NULL)
        abort(); /* a valid header must be accepted */
    ampctl_render_status(sink, b, data[0] & 2);
    ampctl_render_stats(sink, b, data[0] & 4);
    struct amp_emitter e;
    struct amp_emit_table t;
    amp_emit_begin(&e, sink, data[0] & 8);
    ampctl_render_ps_begin(&e, &t);
    ampctl_render_ps_row(&e, &t, b, 1, "a \"command\"\n");
    amp_emit_end_table(&e, &t);
    amp_audit_write_report(sink, b, 0.01, data[0] & 16);
    amp_audit_write_policy(sink, b, 0.01);
    char value[256], name[64];
    static const char *const names[] = {
        "opt.enabled",           "opt.dtype",           "opt.cuda_dtype", "opt.output",
        "policy.cpu.mm",         "policy.cuda.softmax", "process.exe",    "stats.cblas_sgemm.calls",
        "stats.sgemm_.converted"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        amp_ctl_get(b, names[i], value, sizeof value, NULL);
    for (int t = 0; t < 4; t++) {
        static const char *const fields[] = {"enabled", "active", "name", "dtype", "lowered"};
        for (int f = 0; f < 5; f++) {
            snprintf(name, sizeof name, "thread.%lld.%s", (long long)b->threads[t].tid, fields[f]);
            amp_ctl_get(b, name, value, sizeof value, NULL);
        }
    }
    return 0;
}
