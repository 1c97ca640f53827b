/* runner_create.c - building a runner: check, plan, resolve, fit, stage,
 * allocate state; reset and the runner's info. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

static const char *const arch_names[] = {"qwen3", "qwen3moe", "qwen3next"};

/* Resident dtype of a tensor in the load plan (its stored type if absent). */
static int resident_dtype(const vt_load_plan *plan, const char *name)
{
    size_t n = vt_load_plan_count(plan);
    for (size_t i = 0; i < n; i++) {
        const vt_gguf_tensor *t;
        const vt_weight_desc *d;
        const vt_weight_plan *w;
        if (vt_load_plan_entry(plan, i, &t, &d, &w) == VT_OK && !strcmp(t->name, name))
            return w->resident_dtype;
    }
    return -1;
}

/* The op list being built. */
typedef struct ops_acc {
    vt_plan_op *ops;
    size_t n, cap;
    bool oom;
} ops_acc;

static void add_op(ops_acc *a, vt_op op, uint32_t n, int d0, int d1, int d2)
{
    vt_dtype d[3] = {d0, d1, d2};
    vt_sig sig = vt_sig_make(n, d);
    for (size_t i = 0; i < a->n; i++)
        if (a->ops[i].op == (uint32_t)op && vt_sig_equal(a->ops[i].sig, sig))
            return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 32;
        vt_plan_op *no = realloc(a->ops, cap * sizeof *no);
        if (!no) {
            a->oom = true;
            return;
        }
        a->ops = no;
        a->cap = cap;
    }
    a->ops[a->n].op = op;
    a->ops[a->n].sig = sig;
    a->n++;
}

/* Record a MatMul / MoeExpertMatMul of each weight the forward pass reads. */
typedef struct ops_ctx {
    ops_acc *acc;
    const vt_load_plan *plan;
} ops_ctx;

static vt_status weight_op(void *user, const char *name, uint32_t n_dims, const int64_t *ne, bool required,
                           vt_tensor **slot)
{
    (void)ne;
    (void)required;
    (void)slot;
    ops_ctx *c = user;
    int dt = resident_dtype(c->plan, name);
    if (n_dims < 2 || dt < 0 || strstr(name, "ssm_conv1d"))
        return VT_OK;
    if (!strcmp(name, "token_embd.weight"))
        add_op(c->acc, VT_OP_GET_ROWS, 3, dt, VT_I32, VT_F32);
    else if (strstr(name, "_exps."))
        add_op(c->acc, VT_OP_MOE_EXPERT_MATMUL, 2, VT_F32, dt, 0);
    else
        add_op(c->acc, VT_OP_MATMUL, 2, VT_F32, dt, 0);
    return VT_OK;
}

/* Every (op, signature) of the forward pass, from the plan's dtypes. */
static vt_status plan_ops(vt_runner *r, ops_acc *a)
{
    const run_hparams *p = &r->hp;
    ops_ctx c = {a, r->plan};
    vt_status st = run_for_each_tensor(NULL, p, weight_op, &c);
    if (st != VT_OK)
        return st;
    if (p->tied && r->has_head)
        add_op(a, VT_OP_MATMUL, 2, VT_F32, resident_dtype(r->plan, "token_embd.weight"), 0);
    const vt_op f32_ops[] = {VT_OP_RMS_NORM, VT_OP_ADD, VT_OP_ROPE, VT_OP_SWIGLU, VT_OP_ARGMAX, VT_OP_SAMPLE};
    for (size_t i = 0; i < sizeof f32_ops / sizeof f32_ops[0]; i++)
        add_op(a, f32_ops[i], 1, VT_F32, 0, 0);
    add_op(a, VT_OP_INDEX_SELECT, 2, VT_I32, VT_I32, 0); /* the decode graph's position advance */
    add_op(a, VT_OP_COPY, 2, VT_I32, VT_I32, 0);
    add_op(a, VT_OP_KV_CACHE_WRITE, 2, VT_F32, r->kv_dtype, 0);
    add_op(a, VT_OP_ATTENTION, 2, VT_F32, r->kv_dtype, 0);
    if (p->arch != RUN_QWEN3) {
        add_op(a, VT_OP_MOE_ROUTER, 1, VT_F32, 0, 0);
        add_op(a, VT_OP_MOE_COMBINE, 1, VT_F32, 0, 0);
    }
    if (p->arch == RUN_QWEN3NEXT) {
        const vt_op next_ops[] = {
            VT_OP_SIGMOID,          VT_OP_MUL,           VT_OP_L2_NORM, VT_OP_GDN_GATE, VT_OP_CAUSAL_CONV1D_UPDATE,
            VT_OP_GATED_DELTA_RULE, VT_OP_GATED_RMS_NORM};
        for (size_t i = 0; i < sizeof next_ops / sizeof next_ops[0]; i++)
            add_op(a, next_ops[i], 1, VT_F32, 0, 0);
        add_op(a, VT_OP_INDEX_SELECT, 2, VT_F32, VT_I32, 0);
    }
    return a->oom ? vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory") : VT_OK;
}

vt_status run_plan_ops(const vt_runner *r, vt_plan_op **ops, size_t *n)
{
    ops_acc a = {0};
    vt_status st = plan_ops((vt_runner *)r, &a);
    if (st != VT_OK) {
        free(a.ops);
        return st;
    }
    *ops = a.ops;
    *n = a.n;
    return VT_OK;
}

long run_layer_of(const char *name)
{
    if (strncmp(name, "blk.", 4))
        return -1;
    char *end;
    long n = strtol(name + 4, &end, 10);
    return end != name + 4 && *end == '.' ? n : -1;
}

/* The tensors a part holds: its layers', token_embd on the first (and on
 * the last when the output is tied to it), the rest of the head on the
 * last. */
static bool part_selects(void *user, const char *name)
{
    const vt_runner *r = user;
    long l = run_layer_of(name);
    if (l >= 0)
        return l >= (long)r->l0 && l < (long)r->l1;
    if (!strcmp(name, "token_embd.weight"))
        return r->has_embd || (r->has_head && r->hp.tied);
    return r->has_head;
}

/* Take a staged tensor into its slot. */
static vt_status take_tensor(void *user, const char *name, uint32_t n_dims, const int64_t *ne, bool required,
                             vt_tensor **slot)
{
    (void)n_dims;
    (void)ne;
    vt_runner *r = user;
    if (run_merge_member(r, name))
        return VT_OK; /* a view of its group (run_merge_stage) */
    *slot = vt_model_find(r->model, name);
    if (!*slot && required && part_selects(r, name))
        return vt_set_error(VT_E_BAD_FILE, "runner: tensor '%s' was not staged", name);
    return VT_OK;
}

/* The tensors the model stages: the part's, less the merged groups'. */
static bool stage_selects(void *user, const char *name)
{
    const vt_runner *r = user;
    bool part = !(r->has_embd && r->has_head);
    return (!part || part_selects(user, name)) && !run_merge_member(r, name);
}

/* A device tensor filled with zeros (or with a host i32 table). */
static vt_status state_tensor(vt_runner *r, vt_tensor **t, vt_dtype dt, uint32_t nd, const int64_t *shape)
{
    vt_status st = vt_tensor_create(r->dev, dt, nd, shape, t);
    if (st == VT_OK)
        r->info.state_bytes += vt_tensor_nbytes(*t);
    return st;
}

static vt_status zero_tensor(vt_tensor *t)
{
    if (!t)
        return VT_OK;
    uint64_t n = vt_tensor_nbytes(t);
    void *z = calloc(1, n ? n : 1);
    if (!z)
        return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    vt_status st = vt_tensor_write(t, z, n);
    free(z);
    return st;
}

static vt_status i32_table(vt_runner *r, vt_tensor **t, int32_t first, int32_t n)
{
    int64_t shape[1] = {n};
    vt_status st = vt_tensor_create(r->dev, VT_I32, 1, shape, t);
    int32_t *v = malloc((size_t)n * sizeof *v);
    if (st == VT_OK && !v)
        st = vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    for (int32_t i = 0; st == VT_OK && i < n; i++)
        v[i] = first + i;
    if (st == VT_OK)
        st = vt_tensor_write(*t, v, (size_t)n * sizeof *v);
    free(v);
    return st;
}

/* KV cache, conv and recurrent state, index tables, the decode workspace. */
static vt_status allocate_state(vt_runner *r)
{
    const run_hparams *p = &r->hp;
    vt_status st = VT_OK;
    for (uint32_t il = r->l0; st == VT_OK && il < r->l1; il++) {
        run_layer *l = &r->layers[il];
        if (l->linear) {
            int64_t cs[3] = {1, p->C, p->K - 1}, rs[4] = {1, p->nv, p->dk, p->dv};
            st = state_tensor(r, &l->conv_state, VT_F32, 3, cs);
            if (st == VT_OK)
                st = state_tensor(r, &l->rec_state, VT_F32, 4, rs);
        } else {
            int64_t ks[3] = {r->ctx, p->nkv, p->hd};
            st = state_tensor(r, &l->k_cache, r->kv_dtype, 3, ks);
            if (st == VT_OK)
                st = state_tensor(r, &l->v_cache, r->kv_dtype, 3, ks);
            if (st == VT_OK)
                st = zero_tensor(l->k_cache);
            if (st == VT_OK)
                st = zero_tensor(l->v_cache);
        }
    }
    int64_t one[1] = {1};
    if (st == VT_OK)
        st = vt_tensor_create(r->dev, VT_I32, 1, one, &r->tok_dev);
    if (st == VT_OK)
        st = i32_table(r, &r->slot0, 0, 1);
    if (st == VT_OK)
        st = i32_table(r, &r->pos_next, 1, (int32_t)r->ctx);
    if (st == VT_OK)
        st = vt_tensor_create(r->dev, VT_I32, 1, one, &r->pos_tmp);
    if (st == VT_OK && p->arch == RUN_QWEN3NEXT) {
        int32_t hd = (int32_t)p->hd, rr = (int32_t)(p->nv / p->nk);
        st = i32_table(r, &r->idx[0], 0, hd);
        if (st == VT_OK)
            st = i32_table(r, &r->idx[1], hd, hd);
        if (st == VT_OK)
            st = i32_table(r, &r->idx[2], 0, rr);
        if (st == VT_OK)
            st = i32_table(r, &r->idx[3], rr, rr);
    }
    if (st == VT_OK)
        st = run_ws_create(r, 1, &r->ws1);
    if (st == VT_OK)
        st = vt_runner_reset(r);
    return st;
}

void vt_runner_destroy(vt_runner *r)
{
    if (!r)
        return;
    if (r->n_part) {
        run_split_free(r);
        return;
    }
    if (r->q && vt_queue_synchronize(r->q) != VT_OK) {
        /* destroy has no one to report to: a pending error is dropped, as vt_queue_destroy drops it */
    }
    vt_graph_destroy(r->graph);
    for (size_t i = 0; i < r->n_graph_views; i++)
        vt_tensor_destroy(r->graph_views[i]);
    free(r->graph_views);
    r->recording = false;
    run_views_free(r);
    free(r->views);
    if (r->host_io)
        vt_device_host_free(r->dev, r->host_io, r->host_pinned);
    run_ws_free(r->ws1);
    run_ws_free(r->wsT);
    if (r->layers)
        for (uint32_t il = 0; il < r->hp.L; il++) {
            run_layer *l = &r->layers[il];
            vt_tensor_destroy(l->k_cache);
            vt_tensor_destroy(l->v_cache);
            vt_tensor_destroy(l->conv_state);
            vt_tensor_destroy(l->rec_state);
        }
    run_merge_free(r);
    free(r->layers);
    vt_tensor_destroy(r->tok_dev);
    vt_tensor_destroy(r->slot0);
    vt_tensor_destroy(r->pos_next);
    vt_tensor_destroy(r->pos_tmp);
    for (int i = 0; i < 4; i++)
        vt_tensor_destroy(r->idx[i]);
    vt_model_destroy(r->model);
    vt_load_plan_destroy(r->plan_stage);
    vt_load_plan_destroy(r->plan);
    free(r);
}

/* Resolve every op of the plan on the device; all refusals in one message. */
static vt_status resolve_all(vt_runner *r)
{
    vt_plan_op *ops = NULL;
    size_t n = 0, n_refused = 0;
    vt_status st = run_plan_ops(r, &ops, &n);
    if (st != VT_OK)
        return st;
    vt_resolution *res = calloc(n, sizeof *res);
    if (!res)
        st = vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    if (st == VT_OK) {
        /* flags 0: the registry's tier policy (read once at its open) applies */
        st = vt_resolve_plan(r->dev, ops, n, 0, res, &n_refused);
        if (st != VT_OK && n_refused == 0) {
            /* not an op's refusal (a bad $VT_TIER_POLICY): its reason as given */
            char why[1024];
            snprintf(why, sizeof why, "%s", vt_last_error());
            st = vt_set_error(st, "%s model on %s: %s", r->info.arch, vt_device_id(r->dev), why);
        } else if (st != VT_OK) {
            /* One line naming every refused op, then the first reason in full. */
            char msg[3072], sb[96];
            size_t len =
                (size_t)snprintf(msg, sizeof msg, "%s model on %s: %zu of %zu planned ops refused:", r->info.arch,
                                 vt_device_id(r->dev), n_refused, n);
            const char *first = NULL;
            for (size_t i = 0; i < n && len < sizeof msg; i++)
                if (res[i].tier == VT_TIER_REFUSED) {
                    len += (size_t)snprintf(msg + len, sizeof msg - len, " %s (%u) %s;", vt_op_name(res[i].op),
                                            res[i].op, vt_sig_format(res[i].sig, sb, sizeof sb));
                    first = first ? first : res[i].reason;
                }
            st = vt_set_error(st, "%s first: %s", msg, first ? first : "");
        }
        for (size_t i = 0; st == VT_OK && i < n; i++)
            r->info.n_cpu_tier += res[i].tier == VT_TIER_CPU;
    }
    r->info.n_plan_ops = (uint32_t)n;
    free(res);
    free(ops);
    return st;
}

/* Resolve defaults of options into o. */
static vt_status resolve_options(const vt_runner_options *opt, vt_runner_options *o)
{
    vt_runner_options d = {sizeof d, 0, 0, 0, -1, 0, 0, NULL, NULL, 0};
    *o = d;
    if (opt) {
        if (opt->struct_size < sizeof(uint32_t) || opt->struct_size > sizeof *o)
            return vt_set_error(VT_E_INVALID_ARG, "vt_runner_options.struct_size %u", opt->struct_size);
        memcpy(o, opt, opt->struct_size);
        o->struct_size = sizeof *o;
    }
    if (o->kv_type < VT_RUNNER_KV_F16 || o->kv_type > VT_RUNNER_KV_F32)
        return vt_set_error(VT_E_INVALID_ARG, "runner: KV cache type %d (VT_RUNNER_KV_F16, _BF16 or _F32)", o->kv_type);
    return VT_OK;
}

int run_kv_dtype(int kv_type)
{
    return kv_type == VT_RUNNER_KV_F32 ? VT_F32 : kv_type == VT_RUNNER_KV_BF16 ? VT_BF16 : VT_F16;
}

uint32_t run_ctx_of(const run_hparams *hp, uint32_t ctx)
{
    ctx = ctx ? ctx : 4096;
    return ctx > hp->n_ctx_train ? hp->n_ctx_train : ctx;
}

int run_expand_of(vt_gguf *g, int expand)
{
    const vt_gguf_tensor *te;
    if (expand >= 0 || vt_gguf_find_tensor(g, "token_embd.weight", &te) != VT_OK)
        return expand < 0 ? VT_EXPAND_F32 : expand;
    return te->type == VT_F16 ? VT_EXPAND_F16 : te->type == VT_BF16 ? VT_EXPAND_BF16 : VT_EXPAND_F32;
}

vt_status run_create_part(vt_gguf *g, vt_device *dev, const vt_runner_options *opt, uint32_t l0, uint32_t l1,
                          vt_runner **out)
{
    *out = NULL;
    vt_runner_options o;
    vt_status st = resolve_options(opt, &o);
    vt_runner_info info;
    if (st == VT_OK)
        st = vt_runner_check_file(g, &info);
    if (st != VT_OK)
        return st;
    vt_runner *r = calloc(1, sizeof *r);
    if (!r)
        return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    r->g = g;
    r->dev = dev;
    r->info = info;
    run_read_hparams(g, &r->hp);
    r->l0 = l0;
    r->l1 = l1 < r->hp.L ? l1 : r->hp.L;
    r->has_embd = l0 == 0;
    r->has_head = r->l1 == r->hp.L;
    bool part = !(r->has_embd && r->has_head);
    r->ctx = run_ctx_of(&r->hp, o.ctx);
    r->info.ctx = r->ctx;
    r->chunk = o.chunk ? o.chunk : 512;
    r->kv_dtype = run_kv_dtype(o.kv_type);
    r->use_graph = !(o.flags & VT_RUNNER_NO_GRAPH);
    r->layers = calloc(r->hp.L, sizeof *r->layers);
    if (!r->layers) {
        vt_runner_destroy(r);
        return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    }
    vt_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.struct_size = sizeof lo;
    lo.expand = (uint32_t)run_expand_of(g, o.expand);
    lo.budget_bytes = o.budget_bytes;
    /* A part's state is its layers' only: the split planner checked it;
     * the loader checks the part's weights. */
    lo.ctx = part ? 0 : r->ctx;
    lo.batch = 1;
    lo.flags = o.load_flags;
    lo.progress = o.progress;
    lo.progress_user = o.progress_user;
    if (part) {
        lo.select = part_selects;
        lo.select_user = r;
    }
    /* 1. residency and fit; 2. every op resolved; 3. stage (the groups
     * multiplied together side by side, the rest through a plan of the
     * model's tensors without them); 4. state. */
    st = vt_load_plan_create(g, dev, &lo, &r->plan);
    if (st == VT_OK)
        st = resolve_all(r);
    if (st == VT_OK)
        st = run_merge_plan(r);
    vt_load_options ls = lo;
    if (st == VT_OK && r->n_merged) {
        ls.select = stage_selects;
        ls.select_user = r;
        st = vt_load_plan_create(g, dev, &ls, &r->plan_stage);
    }
    if (st == VT_OK)
        st = vt_model_stage(r->plan_stage ? r->plan_stage : r->plan, &ls, &r->model);
    if (st == VT_OK)
        st = run_merge_stage(r);
    if (st == VT_OK)
        st = run_for_each_tensor(r, &r->hp, take_tensor, r);
    if (st == VT_OK) {
        r->q = vt_device_default_queue(dev);
        st = r->q ? vt_device_host_alloc(dev, 64, (void **)&r->host_io, &r->host_pinned) : VT_E_DEVICE;
    }
    if (st == VT_OK) {
        r->info.weight_bytes = vt_load_plan_report(r->plan)->weight_bytes;
        r->info.n_merged = r->n_merged;
        st = allocate_state(r);
    }
    if (st != VT_OK) {
        char msg[4096];
        snprintf(msg, sizeof msg, "%s", vt_last_error());
        vt_runner_destroy(r);
        return vt_set_error(st, "%s", msg);
    }
    snprintf(r->info.arch, sizeof r->info.arch, "%s", arch_names[r->hp.arch]);
    r->info.n_devices = 1;
    snprintf(r->info.placement, sizeof r->info.placement, "layers %u-%u on %s", r->l0, r->l1 - 1, vt_device_id(dev));
    *out = r;
    return VT_OK;
}

vt_status vt_runner_create(vt_gguf *g, vt_device *dev, const vt_runner_options *opt, vt_runner **out)
{
    if (!out)
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_create: out is NULL");
    *out = NULL;
    if (!g || !dev)
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_create: NULL file or device");
    vt_runner_options o;
    vt_status st = resolve_options(opt, &o);
    run_hparams hp;
    if (st == VT_OK)
        st = vt_runner_check_file(g, NULL);
    if (st != VT_OK)
        return st;
    run_read_hparams(g, &hp);
    st = run_create_part(g, dev, &o, 0, hp.L, out);
    if (st == VT_E_DOES_NOT_FIT)
        run_split_hint(g, dev, &o); /* the refusal names the split that would fit */
    return st;
}

const vt_runner_info *vt_runner_get_info(const vt_runner *r)
{
    return r ? &r->info : NULL;
}

uint32_t vt_runner_position(const vt_runner *r)
{
    return r ? r->pos : 0;
}

vt_status vt_runner_reset(vt_runner *r)
{
    if (!r)
        return vt_set_error(VT_E_INVALID_ARG, "vt_runner_reset: NULL runner");
    if (r->n_part)
        return run_split_reset(r);
    vt_status qs = vt_queue_synchronize(r->q);
    if (qs != VT_OK)
        return qs;
    r->pos = 0;
    r->pos_on_device = false;
    for (uint32_t il = r->l0; il < r->l1; il++) {
        vt_status st = zero_tensor(r->layers[il].conv_state);
        if (st == VT_OK)
            st = zero_tensor(r->layers[il].rec_state);
        if (st != VT_OK)
            return st;
    }
    return VT_OK;
}
