/* Engine substitution for cuDNN's backend API: when the program finalizes
 * an execution plan whose operation graph holds one fp32 convolution
 * (forward, backward data or backward filter; alone, or fused with
 * pointwise operations) and the policy lowers it to fp16, a private plan
 * is finalized beside the program's on the same graph, with an engine that
 * carries CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: cuDNN converts the fp32
 * operands to fp16 in the plan's workspace and runs fp16 tensor-core
 * kernels, writing the program's fp32 output.
 *
 * Which engine: cuDNN's heuristics never offer a down-converting engine for
 * an fp32 graph, but the engines they rank first for the same convolution
 * in fp16 are those engines (same global index). So, once per graph
 * signature (cached, bounded), an fp16 twin of a single-convolution graph
 * is built (the program's tensors with their type changed, the program's
 * convolution descriptor), its heuristic's top engine and knobs are taken
 * and created by global index on the program's fp32 graph; if that engine
 * does not down-convert or does not finalize, or the graph is fused, the
 * graph's engines are tried in index order for the first that
 * down-converts and finalizes. The program's descriptors are only
 * referenced, never written; the private plan has no scratch of its own
 * (its workspace is the program's, whose size query it answers), so CUDA
 * graph capture of its execution works as for the program's plan. */
#include <stdlib.h>
#include <string.h>

#include "runtime/decide.h"
#include "runtime/log.h"
#include "shim/cudnn_graph/cudnn_graph_lower.h"

/* ---- what the book says about a plan, copied out under its lock ---- */

enum { MAX_ATTRS = 16, SIG_MAX = 4096, KNOBS_MAX = 16 };

/* A descriptor's attributes copied out of the book (n < 0: too many or
 * too large to copy). */
struct attrs_copy {
    int n;
    struct amp_gattr a[MAX_ATTRS];
    unsigned char bytes[MAX_ATTRS][64];
};

struct plan_view {
    void *graph, *devprop;
    int has_handle;
    unsigned char handle[8];
    int dir, spatial, fused, lowerable;
    double madds;
    int64_t shape[3];
    uint64_t converted;
    /* for the fp16 twin of a single convolution: the op's attributes and
     * its three tensors' */
    int op_type;
    struct attrs_copy op, tensor[3]; /* tensors: operand_names[dir] order */
    size_t sig_len;
    unsigned char sig[SIG_MAX];
};

/* The operand attribute names of each direction: its two inputs, its output,
 * its convolution descriptor. */
static const int operand_names[3][4] = {
    {AMP_DNNG_FWD_X, AMP_DNNG_FWD_W, AMP_DNNG_FWD_Y, AMP_DNNG_FWD_CONV},
    {AMP_DNNG_BWD_DATA_DY, AMP_DNNG_BWD_DATA_W, AMP_DNNG_BWD_DATA_DX, AMP_DNNG_BWD_DATA_CONV},
    {AMP_DNNG_BWD_FILTER_X, AMP_DNNG_BWD_FILTER_DY, AMP_DNNG_BWD_FILTER_DW,
     AMP_DNNG_BWD_FILTER_CONV},
};

static int direction_of(int type)
{
    return type == AMP_DNNG_OP_CONV_FORWARD           ? 0
           : type == AMP_DNNG_OP_CONV_BACKWARD_DATA   ? 1
           : type == AMP_DNNG_OP_CONV_BACKWARD_FILTER ? 2
                                                      : -1;
}

static void sig_put(struct plan_view *v, const void *p, size_t n)
{
    if (v->sig_len + n > SIG_MAX) {
        v->lowerable = 0; /* too large to key: run as made */
        return;
    }
    memcpy(v->sig + v->sig_len, p, n);
    v->sig_len += n;
}

/* A descriptor's attributes into the signature, the descriptors it refers
 * to by their own attributes (depth-limited), never by address. */
static void sig_desc(struct plan_view *v, const struct amp_grec *r, int depth)
{
    if (!r || r->opaque || depth > 3) {
        v->lowerable = 0;
        return;
    }
    sig_put(v, &r->type, sizeof r->type);
    for (int i = 0; i < r->n; i++) {
        const struct amp_gattr *a = &r->attrs[i];
        sig_put(v, &a->name, sizeof a->name);
        sig_put(v, &a->count, sizeof a->count);
        if (a->type != AMP_DNNG_TYPE_BACKEND_DESCRIPTOR) {
            sig_put(v, a->value, a->bytes);
            continue;
        }
        for (int64_t k = 0; k < a->count; k++) {
            int stale = 0;
            sig_desc(v, amp_gbook_ref(r, a->name, (int)k, &stale), depth + 1);
        }
    }
}

static int64_t elements(const struct amp_grec *tensor)
{
    const struct amp_gattr *d = amp_gbook_attr(tensor, AMP_DNNG_TENSOR_DIMENSIONS);
    int64_t n = 1;
    for (int64_t i = 0; d && i < d->count; i++)
        n *= amp_gbook_int(tensor, AMP_DNNG_TENSOR_DIMENSIONS, (int)i, 0);
    return d && d->count >= 3 ? n : 0;
}

static int copy_attrs(const struct amp_grec *r, struct attrs_copy *c)
{
    if (r->n > MAX_ATTRS)
        return c->n = -1;
    for (int i = 0; i < r->n; i++) {
        if (r->attrs[i].bytes > sizeof c->bytes[i])
            return c->n = -1;
        c->a[i] = r->attrs[i];
        memcpy(c->bytes[i], r->attrs[i].value, r->attrs[i].bytes);
        c->a[i].value = c->bytes[i];
        c->a[i].serials = NULL; /* the book's, not the copy's */
    }
    return c->n = r->n;
}

/* Reads the plan's graph from the book (its lock held): 0 when it is not a
 * graph of one convolution, PLAN_STALE when a descriptor it refers to is
 * not the one the program set (destroyed since, its address perhaps
 * another's: the plan is never read through it), else 1 and v is filled
 * (v->lowerable says whether every part is fp32 and known). */
enum { PLAN_STALE = -1 };
static int view_plan(void *plan, struct plan_view *v)
{
    memset(v, 0, offsetof(struct plan_view, sig));
    v->lowerable = 1;
    int stale = 0;
    const struct amp_grec *p = amp_gbook_find(plan), *cfg, *g, *op = NULL;
    if (!p || !(cfg = amp_gbook_ref(p, AMP_DNNG_PLAN_ENGINE_CONFIG, 0, &stale)))
        return stale ? PLAN_STALE : 0;
    const struct amp_grec *engine = amp_gbook_ref(cfg, AMP_DNNG_CFG_ENGINE, 0, &stale);
    g = engine ? amp_gbook_ref(engine, AMP_DNNG_ENGINE_OPERATION_GRAPH, 0, &stale) : NULL;
    if (!g && !stale) /* an engine or configuration cuDNN's heuristics gave */
        g = amp_gbook_heur_graph(engine ? engine : cfg, &stale);
    if (stale)
        return PLAN_STALE;
    if (!g)
        return 0;
    v->graph = g->desc;
    const struct amp_gattr *ops = amp_gbook_attr(g, AMP_DNNG_GRAPH_OPS);
    for (int64_t i = 0; ops && i < ops->count; i++) {
        const struct amp_grec *o = amp_gbook_ref(g, AMP_DNNG_GRAPH_OPS, (int)i, &stale);
        if (stale)
            return PLAN_STALE;
        if (o && direction_of(o->type) >= 0) {
            if (op)
                return 0; /* two convolutions: not one of ours */
            op = o;
        } else if (!o || o->type != AMP_DNNG_OP_POINTWISE) {
            return 0;
        }
    }
    if (!op)
        return 0;
    v->fused = ops->count > 1;
    v->dir = direction_of(op->type);
    const int *names = operand_names[v->dir];
    const struct amp_grec *t[3], *conv = amp_gbook_ref(op, names[3], 0, &stale);
    for (int i = 0; i < 3; i++)
        if (!(t[i] = amp_gbook_ref(op, names[i], 0, &stale)))
            return stale ? PLAN_STALE : 0;
    if (!conv)
        return stale ? PLAN_STALE : 0;
    v->spatial = (int)amp_gbook_int(conv, AMP_DNNG_CONV_SPATIAL_DIMS, 0, 0);
    if (v->spatial != 2 && v->spatial != 3)
        return 0;
    /* (a fused forward's y is virtual: fp32 still, as the graph sets it) */
    for (int i = 0; i < 3; i++)
        if (amp_gbook_int(t[i], AMP_DNNG_TENSOR_DATA_TYPE, 0, -1) != AMP_CUDNN_DATA_FLOAT)
            v->lowerable = 0;
    if (amp_gbook_int(conv, AMP_DNNG_CONV_COMP_TYPE, 0, -1) != AMP_CUDNN_DATA_FLOAT || p->opaque ||
        cfg->opaque || g->opaque || op->opaque || conv->opaque)
        v->lowerable = 0;
    /* a filter is [K, C/groups, spatial...]: each element of the output
     * side (y, dy) takes C/groups * spatial multiply-adds */
    const struct amp_grec *w = v->dir == 2 ? t[2] : t[1],
                          *y = v->dir == 0 ? t[2] : t[v->dir == 1 ? 0 : 1];
    int64_t k = amp_gbook_int(w, AMP_DNNG_TENSOR_DIMENSIONS, 0, 0);
    v->madds = k > 0 ? (double)elements(y) * (double)(elements(w) / k) : 0;
    v->shape[0] = k > 0 ? elements(y) / k : 0;
    v->shape[1] = k;
    v->shape[2] = k > 0 ? elements(w) / k : 0;
    v->converted = (uint64_t)(elements(t[0]) + elements(t[1]));
    const struct amp_gattr *h = amp_gbook_attr(p, AMP_DNNG_PLAN_HANDLE);
    v->has_handle = h && h->bytes == 8;
    if (v->has_handle)
        memcpy(v->handle, h->value, 8);
    v->devprop = amp_gbook_desc(p, AMP_DNNG_PLAN_DEVICEPROP, 0);
    if (!v->fused) {
        v->op_type = op->type;
        copy_attrs(op, &v->op);
        for (int i = 0; i < 3; i++)
            if (copy_attrs(t[i], &v->tensor[i]) < 0)
                v->op.n = -1;
    }
    v->sig_len = 0;
    sig_desc(v, g, 0);
    sig_put(v, v->handle, sizeof v->handle);
    sig_put(v, &v->devprop, sizeof v->devprop);
    return 1;
}

/* ---- building descriptors of the shim's own ---- */

struct own {
    const struct amp_cudnn_helpers *f;
    void *d[24];
    int n, failed;
};

static void *own_create(struct own *o, int type)
{
    void *d = NULL;
    if (o->failed || o->n == (int)(sizeof o->d / sizeof *o->d) ||
        o->f->backend_create(type, &d) != AMP_DNN_OK || !d) {
        o->failed = 1;
        return NULL;
    }
    return o->d[o->n++] = d;
}

static void own_set(struct own *o, void *d, int name, int type, int64_t count, const void *value)
{
    if (!o->failed && (!d || o->f->backend_set(d, name, type, count, value) != AMP_DNN_OK))
        o->failed = 1;
}

static void own_finalize(struct own *o, void *d)
{
    if (!o->failed && (!d || o->f->backend_finalize(d) != AMP_DNN_OK))
        o->failed = 1;
}

static void own_release(struct own *o)
{
    while (o->n > 0)
        o->f->backend_destroy(o->d[--o->n]);
}

struct engine_choice {
    int64_t index;
    int n_knobs;
    int32_t knob_type[KNOBS_MAX];
    int64_t knob_value[KNOBS_MAX];
};

/* The fp16 twin's top engine and knobs; 0 when there is none. */
static int twin_choice(const struct amp_cudnn_helpers *f, const struct plan_view *v,
                       struct engine_choice *c)
{
    if (v->fused || v->op.n < 0)
        return 0;
    struct own o = {.f = f};
    void *tensor[3];
    const int32_t half = AMP_CUDNN_DATA_HALF;
    for (int i = 0; i < 3; i++) {
        tensor[i] = own_create(&o, AMP_DNNG_TENSOR);
        for (int k = 0; k < v->tensor[i].n; k++) {
            const struct amp_gattr *a = &v->tensor[i].a[k];
            int type_attr = a->name == AMP_DNNG_TENSOR_DATA_TYPE;
            own_set(&o, tensor[i], a->name, a->type, a->count,
                    type_attr ? (const void *)&half : a->value);
        }
        own_finalize(&o, tensor[i]);
    }
    void *op = own_create(&o, v->op_type);
    for (int k = 0; k < v->op.n; k++) {
        const struct amp_gattr *a = &v->op.a[k];
        const void *value = a->value;
        for (int i = 0; i < 3; i++)
            if (a->name == operand_names[v->dir][i])
                value = &tensor[i];
        own_set(&o, op, a->name, a->type, a->count, value);
    }
    own_finalize(&o, op);
    void *graph = own_create(&o, AMP_DNNG_OPERATIONGRAPH);
    own_set(&o, graph, AMP_DNNG_GRAPH_OPS, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    if (v->has_handle)
        own_set(&o, graph, AMP_DNNG_GRAPH_HANDLE, AMP_DNNG_TYPE_HANDLE, 1, v->handle);
    own_finalize(&o, graph);
    void *heur = own_create(&o, AMP_DNNG_ENGINEHEUR);
    const int32_t mode = AMP_DNNG_HEUR_MODE_A;
    own_set(&o, heur, AMP_DNNG_HEUR_OPERATION_GRAPH, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    own_set(&o, heur, AMP_DNNG_HEUR_MODE, AMP_DNNG_TYPE_HEUR_MODE, 1, &mode);
    if (v->devprop)
        own_set(&o, heur, AMP_DNNG_HEUR_DEVICEPROP, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1,
                &v->devprop);
    own_finalize(&o, heur);
    void *cfg = own_create(&o, AMP_DNNG_ENGINECFG), *engine = own_create(&o, AMP_DNNG_ENGINE);
    void *knob[KNOBS_MAX];
    for (int i = 0; i < KNOBS_MAX; i++)
        knob[i] = own_create(&o, AMP_DNNG_KNOB_CHOICE);
    int64_t n = 0, got = 0, one = 0;
    int ok = !o.failed &&
             f->backend_get(heur, AMP_DNNG_HEUR_RESULTS, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                            &cfg) == AMP_DNN_OK &&
             n >= 1 &&
             f->backend_get(cfg, AMP_DNNG_CFG_ENGINE, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1, &one,
                            &engine) == AMP_DNN_OK &&
             f->backend_get(engine, AMP_DNNG_ENGINE_GLOBAL_INDEX, AMP_DNNG_TYPE_INT64, 1, &one,
                            &c->index) == AMP_DNN_OK;
    c->n_knobs = 0;
    if (ok && f->backend_get(cfg, AMP_DNNG_CFG_KNOB_CHOICES, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR,
                             KNOBS_MAX, &got, knob) == AMP_DNN_OK)
        for (int64_t i = 0; i < got && i < KNOBS_MAX; i++)
            if (f->backend_get(knob[i], AMP_DNNG_KNOB_TYPE, AMP_DNNG_TYPE_KNOB_TYPE, 1, &one,
                               &c->knob_type[c->n_knobs]) == AMP_DNN_OK &&
                f->backend_get(knob[i], AMP_DNNG_KNOB_VALUE, AMP_DNNG_TYPE_INT64, 1, &one,
                               &c->knob_value[c->n_knobs]) == AMP_DNN_OK)
                c->n_knobs++;
    own_release(&o);
    return ok;
}

/* Whether an engine carries DOWN_CONVERT_INPUTS. */
static int down_converts(const struct amp_cudnn_helpers *f, void *engine)
{
    int32_t notes[32];
    int64_t n = 0;
    if (f->backend_get(engine, AMP_DNNG_ENGINE_NUMERICAL_NOTE, AMP_DNNG_TYPE_NUMERICAL_NOTE, 32, &n,
                       notes) != AMP_DNN_OK)
        return 0;
    for (int64_t i = 0; i < n && i < 32; i++)
        if (notes[i] == AMP_DNNG_NOTE_DOWN_CONVERT_INPUTS)
            return 1;
    return 0;
}

/* The private plan of engine choice c on the program's graph, into p; 0
 * when the engine does not down-convert or anything fails (nothing kept). */
static int build_plan(const struct amp_cudnn_helpers *f, const struct plan_view *v,
                      const struct engine_choice *c, int with_knobs, struct amp_gplan *p)
{
    struct own o = {.f = f};
    void *engine = own_create(&o, AMP_DNNG_ENGINE);
    own_set(&o, engine, AMP_DNNG_ENGINE_OPERATION_GRAPH, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1,
            &v->graph);
    own_set(&o, engine, AMP_DNNG_ENGINE_GLOBAL_INDEX, AMP_DNNG_TYPE_INT64, 1, &c->index);
    if (v->devprop)
        own_set(&o, engine, AMP_DNNG_ENGINE_DEVICEPROP, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1,
                &v->devprop);
    own_finalize(&o, engine);
    if (o.failed || !down_converts(f, engine)) {
        own_release(&o);
        return 0;
    }
    int n_knobs = with_knobs ? c->n_knobs : 0;
    void *knobs[KNOBS_MAX];
    for (int i = 0; i < n_knobs; i++) {
        knobs[i] = own_create(&o, AMP_DNNG_KNOB_CHOICE);
        own_set(&o, knobs[i], AMP_DNNG_KNOB_TYPE, AMP_DNNG_TYPE_KNOB_TYPE, 1, &c->knob_type[i]);
        own_set(&o, knobs[i], AMP_DNNG_KNOB_VALUE, AMP_DNNG_TYPE_INT64, 1, &c->knob_value[i]);
        own_finalize(&o, knobs[i]);
    }
    void *cfg = own_create(&o, AMP_DNNG_ENGINECFG);
    own_set(&o, cfg, AMP_DNNG_CFG_ENGINE, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
    if (n_knobs)
        own_set(&o, cfg, AMP_DNNG_CFG_KNOB_CHOICES, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, n_knobs,
                knobs);
    own_finalize(&o, cfg);
    void *plan = own_create(&o, AMP_DNNG_EXECUTION_PLAN);
    own_set(&o, plan, AMP_DNNG_PLAN_ENGINE_CONFIG, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (v->has_handle)
        own_set(&o, plan, AMP_DNNG_PLAN_HANDLE, AMP_DNNG_TYPE_HANDLE, 1, v->handle);
    if (v->devprop)
        own_set(&o, plan, AMP_DNNG_PLAN_DEVICEPROP, AMP_DNNG_TYPE_BACKEND_DESCRIPTOR, 1,
                &v->devprop);
    own_finalize(&o, plan);
    int64_t ws = -1, one = 0;
    if (o.failed ||
        f->backend_get(plan, AMP_DNNG_PLAN_WORKSPACE_SIZE, AMP_DNNG_TYPE_INT64, 1, &one, &ws) !=
            AMP_DNN_OK ||
        ws < 0) {
        own_release(&o);
        return n_knobs ? build_plan(f, v, c, 0, p) : 0; /* the knobs may not carry over */
    }
    p->plan = plan;
    p->cfg = cfg;
    p->engine = engine;
    p->n_knobs = n_knobs;
    memcpy(p->knobs, knobs, (size_t)n_knobs * sizeof *knobs);
    p->engine_index = c->index;
    p->workspace = ws;
    return 1;
}

/* ---- the engine each graph signature gets, found once ---- */

enum { CACHE_SLOTS = 256, ENGINES_MAX = 256 };
static struct cached {
    size_t len;
    unsigned char *sig;
    struct engine_choice choice; /* index -1: no engine down-converts this graph */
} cache[CACHE_SLOTS];
static unsigned cache_next;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int cache_get(const struct plan_view *v, struct engine_choice *c)
{
    struct amp_quiet q;
    int hit = 0;
    amp_lock_quietly(&cache_lock, &q);
    for (unsigned i = 0; i < CACHE_SLOTS && !hit; i++)
        if (cache[i].sig && cache[i].len == v->sig_len &&
            !memcmp(cache[i].sig, v->sig, v->sig_len)) {
            *c = cache[i].choice;
            hit = 1;
        }
    amp_unlock_quietly(&cache_lock, &q);
    return hit;
}

static void cache_put(const struct plan_view *v, const struct engine_choice *c)
{
    unsigned char *sig = malloc(v->sig_len ? v->sig_len : 1);
    if (!sig)
        return;
    memcpy(sig, v->sig, v->sig_len);
    struct amp_quiet q;
    amp_lock_quietly(&cache_lock, &q);
    struct cached *e = &cache[cache_next++ % CACHE_SLOTS]; /* the oldest goes */
    free(e->sig);
    *e = (struct cached){v->sig_len, sig, *c};
    amp_unlock_quietly(&cache_lock, &q);
}

/* Finds the engine for v and builds the private plan with it (into p). */
static int substitute(const struct amp_cudnn_helpers *f, const struct plan_view *v,
                      struct amp_gplan *p)
{
    struct engine_choice c;
    if (cache_get(v, &c))
        return c.index >= 0 && build_plan(f, v, &c, 1, p);
    int64_t tried = -1, count = 0, one = 0;
    int built = 0;
    if (twin_choice(f, v, &c)) {
        tried = c.index;
        built = build_plan(f, v, &c, 1, p);
    }
    if (!built && (f->backend_get(v->graph, AMP_DNNG_GRAPH_ENGINE_GLOBAL_COUNT, AMP_DNNG_TYPE_INT64,
                                  1, &one, &count) != AMP_DNN_OK ||
                   count <= 0 || count > ENGINES_MAX))
        count = ENGINES_MAX;
    for (int64_t i = 0; !built && i < count; i++) {
        if (i == tried)
            continue;
        c = (struct engine_choice){.index = i};
        built = build_plan(f, v, &c, 0, p);
    }
    if (!built)
        c.index = -1;
    cache_put(v, &c);
    return built;
}

static const enum amp_hook_id rows[2][3] = {
    {AMP_HOOK_cudnn_graph_convolution_2d_forward, AMP_HOOK_cudnn_graph_convolution_2d_backward_data,
     AMP_HOOK_cudnn_graph_convolution_2d_backward_filter},
    {AMP_HOOK_cudnn_graph_convolution_3d_forward, AMP_HOOK_cudnn_graph_convolution_3d_backward_data,
     AMP_HOOK_cudnn_graph_convolution_3d_backward_filter},
};

static const char *const directions[3] = {"forward", "backward data", "backward filter"};

struct amp_gplan *amp_graph_plan_finalized(const struct amp_cudnn_helpers *f, struct amp_thread *t,
                                           void *plan)
{
    struct plan_view *v = malloc(sizeof *v);
    if (!v)
        return NULL;
    struct amp_quiet q;
    amp_gbook_lock(&q);
    int conv = view_plan(plan, v);
    amp_gbook_unlock(&q);
    if (conv == PLAN_STALE)
        amp_log(AMP_LOG_INFO,
                "cuDNN graph: a plan refers to a descriptor the program destroyed (its address "
                "may be another's now); it runs as made, counted passthrough");
    sig_put(v, &f, sizeof f); /* an engine index is one library's */
    struct amp_gplan *p = conv == 1 ? calloc(1, sizeof *p) : NULL;
    if (!p) {
        free(v);
        return NULL;
    }
    p->f = f;
    p->row = rows[v->spatial == 3][v->dir];
    p->madds = v->madds;
    memcpy(p->shape, v->shape, sizeof p->shape);
    p->converted = v->converted;
    enum amp_ctl_counter outcome;
    int dtype =
        v->lowerable
            ? amp_cuda_size_rule(t, (enum amp_hook_id)p->row, 0,
                                 amp_decide_lower_dtype_unaudited(
                                     t, AMP_DEVICE_CUDA, (enum amp_hook_id)p->row, 0, &outcome),
                                 v->madds, &outcome)
            : -1;
    if (dtype == AMP_DTYPE_FP16) {
        if (substitute(f, v, p)) {
            int64_t mine = 0, one = 0;
            if (f->backend_get(plan, AMP_DNNG_PLAN_WORKSPACE_SIZE, AMP_DNNG_TYPE_INT64, 1, &one,
                               &mine) == AMP_DNN_OK &&
                mine > p->workspace)
                p->workspace = mine; /* enough for either plan */
            amp_log(AMP_LOG_INFO,
                    "cuDNN graph: a %s conv%dd plan%s lowered to fp16 by engine %lld "
                    "(down-converting), workspace %lld bytes",
                    directions[v->dir], v->spatial, v->fused ? " (fused)" : "",
                    (long long)p->engine_index, (long long)p->workspace);
        } else {
            amp_log(AMP_LOG_INFO,
                    "cuDNN graph: no down-converting engine takes a %s conv%dd plan%s; it runs "
                    "as made",
                    directions[v->dir], v->spatial, v->fused ? " (fused)" : "");
        }
    }
    free(v);
    return p;
}

void amp_graph_plan_release(struct amp_gplan *p)
{
    if (!p)
        return;
    if (p->plan) {
        p->f->backend_destroy(p->plan);
        p->f->backend_destroy(p->cfg);
        for (int i = 0; i < p->n_knobs; i++)
            p->f->backend_destroy(p->knobs[i]);
        p->f->backend_destroy(p->engine);
    }
    free(p);
}

void amp_graph_cache_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&cache_lock, phase);
}
