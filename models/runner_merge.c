/* runner_merge.c - the weights a decode step multiplies by the same
 * activations, staged side by side: per attention layer q | k | v, per
 * dense FFN gate | up. Each group is one device tensor of the members' rows
 * in that order (the file's bytes, unconverted), and each member is a view
 * of its rows, so a step of one token runs one MatMul per group (fewer
 * launches, and the small k and v products no longer run alone) while
 * longer chunks multiply the member views as before. A group is staged so
 * only where the load plan copies every member at its stored type (not in
 * place from the file's mapping, not expanded); the load plan's fit check
 * counted the members' bytes, which the group allocates instead of the
 * model. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "runner_internal.h"

enum { GROUP_QKV, GROUP_GATE_UP, N_GROUP };

static const char *const member_names[N_GROUP][3] = {
    {"attn_q.weight", "attn_k.weight", "attn_v.weight"},
    {"ffn_gate.weight", "ffn_up.weight", NULL},
};

/* The member slots of group gi of layer l, in order (NULL-terminated). */
static void member_slots(run_layer *l, int gi, vt_tensor **slot[4])
{
    slot[0] = gi == GROUP_QKV ? &l->q : &l->gate;
    slot[1] = gi == GROUP_QKV ? &l->k : &l->up;
    slot[2] = gi == GROUP_QKV ? &l->v : NULL;
    slot[3] = NULL;
}

static vt_tensor **group_slot(run_layer *l, int gi)
{
    return gi == GROUP_QKV ? &l->wqkv : &l->wgu;
}

/* The plan's file entry and decision of a tensor, or false. */
static bool plan_find(const vt_load_plan *plan, const char *name, const vt_gguf_tensor **t, const vt_weight_plan **w)
{
    size_t n = vt_load_plan_count(plan);
    for (size_t i = 0; i < n; i++) {
        const vt_weight_desc *d;
        if (vt_load_plan_entry(plan, i, t, &d, w) == VT_OK && !strcmp((*t)->name, name))
            return true;
    }
    return false;
}

/* Whether group gi of layer il can be staged side by side: every member
 * in the plan, copied at its stored type, 2-D with the same row length. */
static bool group_fits(const vt_runner *r, uint32_t il, int gi)
{
    int64_t k = -1;
    vt_dtype dt = VT_F32;
    for (int m = 0; m < 3 && member_names[gi][m]; m++) {
        char name[96];
        snprintf(name, sizeof name, "blk.%u.%s", il, member_names[gi][m]);
        const vt_gguf_tensor *t;
        const vt_weight_plan *w;
        if (!plan_find(r->plan, name, &t, &w) || w->in_place || w->resident_dtype != t->type || t->n_dims != 2)
            return false;
        if (m > 0 && (t->ne[0] != k || t->type != dt))
            return false;
        k = t->ne[0];
        dt = t->type;
    }
    return true;
}

vt_status run_merge_plan(vt_runner *r)
{
    for (uint32_t il = r->l0; il < r->l1; il++) {
        run_layer *l = &r->layers[il];
        l->merge[GROUP_QKV] = !l->linear && group_fits(r, il, GROUP_QKV);
        l->merge[GROUP_GATE_UP] = r->hp.arch == RUN_QWEN3 && group_fits(r, il, GROUP_GATE_UP);
        r->n_merged += (uint32_t)l->merge[GROUP_QKV] + (uint32_t)l->merge[GROUP_GATE_UP];
    }
    return VT_OK;
}

bool run_merge_member(const vt_runner *r, const char *name)
{
    long il = run_layer_of(name);
    if (il < (long)r->l0 || il >= (long)r->l1)
        return false;
    const char *rest = strchr(name + 4, '.') + 1; /* run_layer_of found "blk.N." */
    const run_layer *l = &r->layers[il];
    for (int gi = 0; gi < N_GROUP; gi++)
        for (int m = 0; m < 3 && member_names[gi][m]; m++)
            if (l->merge[gi] && !strcmp(rest, member_names[gi][m]))
                return true;
    return false;
}

/* Allocate group gi of layer il, write its members from the file and
 * point the layer's member slots at views of their rows. */
static vt_status stage_group(vt_runner *r, uint32_t il, int gi)
{
    run_layer *l = &r->layers[il];
    const vt_gguf_tensor *t[3] = {NULL, NULL, NULL};
    int64_t rows = 0;
    int n = 0;
    for (; n < 3 && member_names[gi][n]; n++) {
        char name[96];
        snprintf(name, sizeof name, "blk.%u.%s", il, member_names[gi][n]);
        const vt_weight_plan *w;
        if (!plan_find(r->plan, name, &t[n], &w))
            return vt_set_error(VT_E_BAD_FILE, "runner: tensor '%s' is not in the load plan", name);
        rows += t[n]->shape[0];
    }
    int64_t shape[2] = {rows, t[0]->shape[1]};
    vt_status st = vt_tensor_create(r->dev, t[0]->type, 2, shape, group_slot(l, gi));
    vt_tensor **slot[4];
    member_slots(l, gi, slot);
    uint64_t off = 0;
    for (int m = 0; st == VT_OK && m < n; m++) {
        int64_t ms[2] = {t[m]->shape[0], t[m]->shape[1]};
        st = vt_tensor_view(*group_slot(l, gi), off, t[m]->type, 2, ms, slot[m]);
        if (st == VT_OK && vt_tensor_nbytes(*slot[m]) != t[m]->n_bytes)
            st = vt_set_error(VT_E_BAD_FILE, "runner: tensor '%s' holds %llu bytes, its shape %llu", t[m]->name,
                              (unsigned long long)t[m]->n_bytes, (unsigned long long)vt_tensor_nbytes(*slot[m]));
        if (st == VT_OK)
            st = vt_tensor_write(*slot[m], t[m]->data, t[m]->n_bytes);
        off += t[m]->n_bytes;
    }
    return st;
}

vt_status run_merge_stage(vt_runner *r)
{
    vt_status st = VT_OK;
    for (uint32_t il = r->l0; st == VT_OK && il < r->l1; il++)
        for (int gi = 0; st == VT_OK && gi < N_GROUP; gi++)
            if (r->layers[il].merge[gi])
                st = stage_group(r, il, gi);
    return st;
}

void run_merge_free(vt_runner *r)
{
    for (uint32_t il = 0; r->layers && il < r->hp.L; il++) {
        run_layer *l = &r->layers[il];
        for (int gi = 0; gi < N_GROUP; gi++) {
            if (!*group_slot(l, gi))
                continue;
            vt_tensor **slot[4];
            member_slots(l, gi, slot);
            for (int m = 0; slot[m]; m++) { /* the views before the tensor they view */
                vt_tensor_destroy(*slot[m]);
                *slot[m] = NULL;
            }
            vt_tensor_destroy(*group_slot(l, gi));
            *group_slot(l, gi) = NULL;
        }
    }
}
