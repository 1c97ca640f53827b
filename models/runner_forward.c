/* runner_forward.c - the forward pass of qwen3, qwen3moe and qwen3next
 * over chunks of T tokens (MODELS.md section 4), as catalogue ops on the
 * runner's device: activations in a per-T workspace, the KV cache, conv
 * and recurrent state written by KvCacheWrite, CausalConv1dUpdate and
 * GatedDeltaRule only. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

struct run_ws {
    uint32_t T;
    vt_tensor **all;
    size_t n, cap;
    vt_tensor *tok, *pos, *x, *h, *a;
    vt_tensor *q, *k, *v, *qsel, *gsel, *qn, *kn, *qr, *kr, *att, *gsig, *attg;
    vt_tensor *qkn, *qkr;  /* T = 1: qn | kn and qr | kr side by side (views), so one Rope turns both */
    vt_tensor *qkvo, *fgu; /* T = 1: q | k | v and fg | fu side by side (views), one MatMul each when merged */
    vt_tensor *fg, *fu, *fs, *fd;
    vt_tensor *rl, *ids, *rw, *G, *U, *S, *D, *y;
    vt_tensor *shl, *shg, *gs, *us, *ss, *ds, *ys;
    vt_tensor *qkv, *z, *ba, *bsel, *asel, *gg, *beta, *xt, *perm_in, *yc, *qT, *kT, *vT, *perm_k, *perm_v;
    vt_tensor *ql, *kl, *o, *on;
    vt_tensor *hn, *logits;
};

vt_tensor *run_ws_tokens(run_ws *ws)
{
    return ws->tok;
}

vt_tensor *run_ws_pos(run_ws *ws)
{
    return ws->pos;
}

vt_tensor *run_ws_x(run_ws *ws)
{
    return ws->x;
}

vt_tensor *run_ws_logits(run_ws *ws)
{
    return ws->logits;
}

void run_ws_free(run_ws *ws)
{
    if (!ws)
        return;
    for (size_t i = ws->n; i-- > 0;) /* views before the tensors they view */
        vt_tensor_destroy(ws->all[i]);
    free(ws->all);
    free(ws);
}

/* Room for one more tensor in the workspace's list. */
static vt_status mk_slot(run_ws *ws)
{
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? 2 * ws->cap : 64;
        vt_tensor **na = realloc(ws->all, cap * sizeof *na);
        if (!na)
            return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
        ws->all = na;
        ws->cap = cap;
    }
    return VT_OK;
}

/* Allocate one workspace tensor. */
static vt_status mk(vt_runner *r, run_ws *ws, vt_tensor **t, vt_dtype dt, uint32_t nd, int64_t a, int64_t b, int64_t c,
                    int64_t d)
{
    vt_status st = mk_slot(ws);
    if (st != VT_OK)
        return st;
    int64_t shape[4] = {a, b, c, d};
    st = vt_tensor_create(r->dev, dt, nd, shape, t);
    if (st == VT_OK)
        ws->all[ws->n++] = *t;
    return st;
}

/* A view of base at element offset off (ndim dims: a, b[, c]), kept (and
 * freed) with the workspace. */
static vt_status mk_view(run_ws *ws, vt_tensor **t, vt_tensor *base, int64_t off, uint32_t ndim, int64_t a, int64_t b,
                         int64_t c)
{
    vt_tensor *base_view;
    vt_status st = mk_slot(ws);
    int64_t shape[3] = {a, b, c};
    if (st == VT_OK)
        st = vt_tensor_view(base, (uint64_t)off * sizeof(float), vt_tensor_dtype(base), ndim, shape, &base_view);
    if (st == VT_OK)
        ws->all[ws->n++] = *t = base_view;
    return st;
}

/* Write an i32 table. */
static vt_status write_i32(vt_tensor *t, const int32_t *v, size_t n)
{
    return vt_tensor_write(t, v, n * sizeof *v);
}

/* perm[i * n_inner + j] = j * n_outer + i: gathers a [n_inner][n_outer]
 * array into [n_outer][n_inner] order (a transpose). */
static vt_status transpose_table(vt_tensor *t, int64_t n_outer, int64_t n_inner)
{
    int32_t *p = malloc((size_t)(n_outer * n_inner) * sizeof *p);
    if (!p)
        return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    for (int64_t i = 0; i < n_outer; i++)
        for (int64_t j = 0; j < n_inner; j++)
            p[i * n_inner + j] = (int32_t)(j * n_outer + i);
    vt_status st = write_i32(t, p, (size_t)(n_outer * n_inner));
    free(p);
    return st;
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        st = (x);                                                                                                      \
        if (st != VT_OK)                                                                                               \
            goto fail;                                                                                                 \
    } while (0)

vt_status run_ws_create(vt_runner *r, uint32_t T, run_ws **out)
{
    const run_hparams *p = &r->hp;
    *out = NULL;
    vt_status st = VT_OK;
    run_ws *w = calloc(1, sizeof *w);
    if (!w)
        return vt_set_error(VT_E_NO_MEMORY, "runner: out of host memory");
    w->T = T;
    bool next = p->arch == RUN_QWEN3NEXT;
    int64_t H = p->H;
    TRY(mk(r, w, &w->tok, VT_I32, 1, T, 0, 0, 0));
    TRY(mk(r, w, &w->pos, VT_I32, 1, T, 0, 0, 0));
    TRY(mk(r, w, &w->x, VT_F32, 2, T, H, 0, 0));
    TRY(mk(r, w, &w->h, VT_F32, 2, T, H, 0, 0));
    TRY(mk(r, w, &w->a, VT_F32, 2, T, H, 0, 0));
    int64_t nqw = (int64_t)p->nh * p->hd * (next ? 2 : 1), nkvd = (int64_t)p->nkv * p->hd;
    if (T == 1) { /* decode: q | k | v side by side, the output of a merged q|k|v weight */
        TRY(mk(r, w, &w->qkvo, VT_F32, 2, 1, nqw + 2 * nkvd, 0, 0));
        TRY(mk_view(w, &w->q, w->qkvo, 0, 2, 1, nqw, 0));
        TRY(mk_view(w, &w->k, w->qkvo, nqw, 2, 1, nkvd, 0));
        TRY(mk_view(w, &w->v, w->qkvo, nqw + nkvd, 2, 1, nkvd, 0));
    } else {
        TRY(mk(r, w, &w->q, VT_F32, 2, T, nqw, 0, 0));
        TRY(mk(r, w, &w->k, VT_F32, 2, T, nkvd, 0, 0));
        TRY(mk(r, w, &w->v, VT_F32, 2, T, nkvd, 0, 0));
    }
    if (T == 1) { /* decode: q and k heads side by side, one Rope for both */
        int64_t nq = (int64_t)p->nh * p->hd;
        TRY(mk(r, w, &w->qkn, VT_F32, 3, 1, p->nh + p->nkv, p->hd, 0));
        TRY(mk(r, w, &w->qkr, VT_F32, 3, 1, p->nh + p->nkv, p->hd, 0));
        TRY(mk_view(w, &w->qn, w->qkn, 0, 3, 1, p->nh, p->hd));
        TRY(mk_view(w, &w->kn, w->qkn, nq, 3, 1, p->nkv, p->hd));
        TRY(mk_view(w, &w->qr, w->qkr, 0, 3, 1, p->nh, p->hd));
        TRY(mk_view(w, &w->kr, w->qkr, nq, 3, 1, p->nkv, p->hd));
    } else {
        TRY(mk(r, w, &w->qn, VT_F32, 3, T, p->nh, p->hd, 0));
        TRY(mk(r, w, &w->qr, VT_F32, 3, T, p->nh, p->hd, 0));
        TRY(mk(r, w, &w->kn, VT_F32, 3, T, p->nkv, p->hd, 0));
        TRY(mk(r, w, &w->kr, VT_F32, 3, T, p->nkv, p->hd, 0));
    }
    TRY(mk(r, w, &w->att, VT_F32, 3, T, p->nh, p->hd, 0));
    if (next) {
        TRY(mk(r, w, &w->qsel, VT_F32, 3, T, p->nh, p->hd, 0));
        TRY(mk(r, w, &w->gsel, VT_F32, 3, T, p->nh, p->hd, 0));
        TRY(mk(r, w, &w->gsig, VT_F32, 3, T, p->nh, p->hd, 0));
        TRY(mk(r, w, &w->attg, VT_F32, 3, T, p->nh, p->hd, 0));
    }
    if (p->arch == RUN_QWEN3 && T == 1) { /* gate | up side by side, the output of a merged weight */
        TRY(mk(r, w, &w->fgu, VT_F32, 2, 1, 2 * (int64_t)p->F, 0, 0));
        TRY(mk_view(w, &w->fg, w->fgu, 0, 2, 1, p->F, 0));
        TRY(mk_view(w, &w->fu, w->fgu, p->F, 2, 1, p->F, 0));
    } else if (p->arch == RUN_QWEN3) {
        TRY(mk(r, w, &w->fg, VT_F32, 2, T, p->F, 0, 0));
        TRY(mk(r, w, &w->fu, VT_F32, 2, T, p->F, 0, 0));
    }
    if (p->arch == RUN_QWEN3) {
        TRY(mk(r, w, &w->fs, VT_F32, 2, T, p->F, 0, 0));
        TRY(mk(r, w, &w->fd, VT_F32, 2, T, H, 0, 0));
    } else {
        TRY(mk(r, w, &w->rl, VT_F32, 2, T, p->E, 0, 0));
        TRY(mk(r, w, &w->ids, VT_I32, 2, T, p->k, 0, 0));
        TRY(mk(r, w, &w->rw, VT_F32, 2, T, p->k, 0, 0));
        TRY(mk(r, w, &w->G, VT_F32, 3, T, p->k, p->Fe, 0));
        TRY(mk(r, w, &w->U, VT_F32, 3, T, p->k, p->Fe, 0));
        TRY(mk(r, w, &w->S, VT_F32, 3, T, p->k, p->Fe, 0));
        TRY(mk(r, w, &w->D, VT_F32, 3, T, p->k, H, 0));
        TRY(mk(r, w, &w->y, VT_F32, 2, T, H, 0, 0));
    }
    if (next) {
        int64_t r2 = p->nv / p->nk, nq = (int64_t)p->nk * p->dk, nvd = (int64_t)p->nv * p->dv;
        TRY(mk(r, w, &w->shl, VT_F32, 2, T, 1, 0, 0));
        TRY(mk(r, w, &w->shg, VT_F32, 2, T, 1, 0, 0));
        TRY(mk(r, w, &w->gs, VT_F32, 2, T, p->Fsh, 0, 0));
        TRY(mk(r, w, &w->us, VT_F32, 2, T, p->Fsh, 0, 0));
        TRY(mk(r, w, &w->ss, VT_F32, 2, T, p->Fsh, 0, 0));
        TRY(mk(r, w, &w->ds, VT_F32, 2, T, H, 0, 0));
        TRY(mk(r, w, &w->ys, VT_F32, 2, T, H, 0, 0));
        TRY(mk(r, w, &w->qkv, VT_F32, 2, T, p->C, 0, 0));
        TRY(mk(r, w, &w->z, VT_F32, 2, T, nvd, 0, 0));
        TRY(mk(r, w, &w->ba, VT_F32, 2, T, 2 * (int64_t)p->nv, 0, 0));
        TRY(mk(r, w, &w->bsel, VT_F32, 3, T, p->nk, r2, 0));
        TRY(mk(r, w, &w->asel, VT_F32, 3, T, p->nk, r2, 0));
        TRY(mk(r, w, &w->gg, VT_F32, 2, T, p->nv, 0, 0));
        TRY(mk(r, w, &w->beta, VT_F32, 2, T, p->nv, 0, 0));
        TRY(mk(r, w, &w->yc, VT_F32, 3, 1, p->C, T, 0));
        if (T > 1) {
            TRY(mk(r, w, &w->xt, VT_F32, 3, 1, p->C, T, 0));
            TRY(mk(r, w, &w->perm_in, VT_I32, 1, (int64_t)p->C * T, 0, 0, 0));
            TRY(mk(r, w, &w->qT, VT_F32, 1, nq * T, 0, 0, 0));
            TRY(mk(r, w, &w->kT, VT_F32, 1, nq * T, 0, 0, 0));
            TRY(mk(r, w, &w->vT, VT_F32, 1, nvd * T, 0, 0, 0));
            TRY(mk(r, w, &w->perm_k, VT_I32, 1, nq * T, 0, 0, 0));
            TRY(mk(r, w, &w->perm_v, VT_I32, 1, nvd * T, 0, 0, 0));
            TRY(transpose_table(w->perm_in, p->C, T));
            TRY(transpose_table(w->perm_k, T, nq));
            TRY(transpose_table(w->perm_v, T, nvd));
        }
        TRY(mk(r, w, &w->ql, VT_F32, 4, 1, T, p->nk, p->dk));
        TRY(mk(r, w, &w->kl, VT_F32, 4, 1, T, p->nk, p->dk));
        TRY(mk(r, w, &w->o, VT_F32, 4, 1, T, p->nv, p->dv));
        TRY(mk(r, w, &w->on, VT_F32, 3, T, p->nv, p->dv, 0));
    }
    TRY(mk(r, w, &w->hn, VT_F32, 2, 1, H, 0, 0));
    TRY(mk(r, w, &w->logits, VT_F32, 2, 1, p->V, 0, 0));
    *out = w;
    return VT_OK;
fail:
    run_ws_free(w);
    return st;
}

uint64_t run_ws_bytes(const run_hparams *p, uint32_t T)
{
    /* Elements per token of the tensors run_ws_create makes (all 4 bytes). */
    bool next = p->arch == RUN_QWEN3NEXT;
    uint64_t H = p->H, nhd = (uint64_t)p->nh * p->hd, nkvd = (uint64_t)p->nkv * p->hd;
    uint64_t e = 2 + 3 * H + nhd * (next ? 2 : 1) + 2 * nkvd + 3 * nhd + 2 * nkvd;
    if (next)
        e += 4 * nhd;
    if (p->arch == RUN_QWEN3)
        e += 3ull * p->F + H;
    else
        e += p->E + 2ull * p->k + 3ull * p->k * p->Fe + (uint64_t)p->k * H + H;
    if (next) {
        uint64_t nq = (uint64_t)p->nk * p->dk, nvd = (uint64_t)p->nv * p->dv;
        e += 2 + 3ull * p->Fsh + 2 * H + p->C + nvd + 6ull * p->nv + p->C + 2 * nq + 2 * nvd;
        if (T > 1)
            e += 2ull * p->C + 3 * nq + 2 * nvd;
    }
    return 4 * (e * T + H + p->V);
}

/* Run one op; on failure prefix the layer. */
static vt_status op(vt_runner *r, int layer, vt_op id, const vt_tensor *const *in, uint32_t n_in, vt_tensor *const *out,
                    uint32_t n_out, const void *params, size_t params_size)
{
    vt_status st = vt_op_enqueue(r->q, id, in, n_in, out, n_out, params, params ? params_size : 0);
    if (st != VT_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", vt_last_error());
        return vt_set_error(st, "runner layer %d: %s", layer, msg);
    }
    return VT_OK;
}

#define IN(...)   ((const vt_tensor *const[]){__VA_ARGS__})
#define OUT(...)  ((vt_tensor *const[]){__VA_ARGS__})
#define NARG(...) (sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define RUN(id, ins, nin, outs, nout, prm)                                                                             \
    do {                                                                                                               \
        vt_status st_ = op(r, il, id, ins, nin, outs, nout, prm, sizeof *prm);                                         \
        if (st_ != VT_OK)                                                                                              \
            return st_;                                                                                                \
    } while (0)
#define V(base, off, ...) run_view(r, base, off, (uint32_t)NARG(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})

#define NOP ((const char *)NULL)

/* Gated attention over the KV cache (the mixer of qwen3/qwen3moe layers
 * and of qwen3next's full-attention layers), into ws->a. */
static vt_status attention(vt_runner *r, run_ws *w, int il, int64_t T)
{
    const run_hparams *p = &r->hp;
    run_layer *l = &r->layers[il];
    bool next = p->arch == RUN_QWEN3NEXT;
    vt_params_norm pn = {p->eps};
    vt_params_rope pr = {p->theta, (int32_t)p->n_rot, VT_ROPE_NEOX};
    vt_params_attention pa = {1.0f / sqrtf((float)p->hd), 0};
    int64_t nh = p->nh, nkv = p->nkv, hd = p->hd;
    if (T == 1 && l->wqkv) { /* q | k | v in one product */
        RUN(VT_OP_MATMUL, IN(w->h, l->wqkv), 2, OUT(w->qkvo), 1, NOP);
    } else {
        RUN(VT_OP_MATMUL, IN(w->h, l->q), 2, OUT(w->q), 1, NOP);
        RUN(VT_OP_MATMUL, IN(w->h, l->k), 2, OUT(w->k), 1, NOP);
        RUN(VT_OP_MATMUL, IN(w->h, l->v), 2, OUT(w->v), 1, NOP);
    }
    vt_tensor *qsrc;
    if (next) {
        vt_params_index_select ps = {2};
        vt_tensor *q3 = V(w->q, 0, T, nh, 2 * hd);
        RUN(VT_OP_INDEX_SELECT, IN(q3, r->idx[0]), 2, OUT(w->qsel), 1, &ps);
        RUN(VT_OP_INDEX_SELECT, IN(q3, r->idx[1]), 2, OUT(w->gsel), 1, &ps);
        qsrc = w->qsel;
    } else {
        qsrc = V(w->q, 0, T, nh, hd);
    }
    RUN(VT_OP_RMS_NORM, IN(qsrc, l->q_norm), 2, OUT(w->qn), 1, &pn);
    RUN(VT_OP_RMS_NORM, IN(V(w->k, 0, T, nkv, hd), l->k_norm), 2, OUT(w->kn), 1, &pn);
    if (w->qkn) { /* T = 1: q and k heads in one Rope */
        RUN(VT_OP_ROPE, IN(w->qkn, w->pos), 2, OUT(w->qkr), 1, &pr);
    } else {
        RUN(VT_OP_ROPE, IN(w->qn, w->pos), 2, OUT(w->qr), 1, &pr);
        RUN(VT_OP_ROPE, IN(w->kn, w->pos), 2, OUT(w->kr), 1, &pr);
    }
    RUN(VT_OP_KV_CACHE_WRITE, IN(w->kr, V(w->v, 0, T, nkv, hd), w->pos), 3, OUT(l->k_cache, l->v_cache), 2, NOP);
    RUN(VT_OP_ATTENTION, IN(w->qr, l->k_cache, l->v_cache, w->pos), 4, OUT(w->att), 1, &pa);
    vt_tensor *src = w->att;
    if (next) {
        RUN(VT_OP_SIGMOID, IN(w->gsel), 1, OUT(w->gsig), 1, NOP);
        RUN(VT_OP_MUL, IN(w->att, w->gsig), 2, OUT(w->attg), 1, NOP);
        src = w->attg;
    }
    RUN(VT_OP_MATMUL, IN(V(src, 0, T, nh * hd), l->o), 2, OUT(w->a), 1, NOP);
    return VT_OK;
}

/* Gated DeltaNet (qwen3next linear layers), into ws->a. */
static vt_status deltanet(vt_runner *r, run_ws *w, int il, int64_t T)
{
    const run_hparams *p = &r->hp;
    run_layer *l = &r->layers[il];
    int64_t C = p->C, nk = p->nk, nv = p->nv, dk = p->dk, dv = p->dv, rr = nv / nk;
    int64_t nq = nk * dk, nvd = nv * dv;
    vt_params_norm pn = {p->eps};
    vt_params_conv pc = {1};
    vt_params_gdn pg = {0};
    vt_params_index_select ps2 = {2}, ps0 = {0};
    RUN(VT_OP_MATMUL, IN(w->h, l->qkv), 2, OUT(w->qkv), 1, NOP);
    RUN(VT_OP_MATMUL, IN(w->h, l->zgate), 2, OUT(w->z), 1, NOP);
    RUN(VT_OP_MATMUL, IN(w->h, l->ba), 2, OUT(w->ba), 1, NOP);
    vt_tensor *ba3 = V(w->ba, 0, T, nk, 2 * rr);
    RUN(VT_OP_INDEX_SELECT, IN(ba3, r->idx[2]), 2, OUT(w->bsel), 1, &ps2);
    RUN(VT_OP_INDEX_SELECT, IN(ba3, r->idx[3]), 2, OUT(w->asel), 1, &ps2);
    RUN(VT_OP_GDN_GATE, IN(V(w->asel, 0, T, nv), l->dt_bias, l->ssm_a, V(w->bsel, 0, T, nv)), 4, OUT(w->gg, w->beta), 2,
        NOP);
    /* The conv runs over [1, C, T]: channels outer, time inner. */
    vt_tensor *xin = T == 1 ? V(w->qkv, 0, 1, C, 1) : w->xt;
    if (T > 1)
        RUN(VT_OP_INDEX_SELECT, IN(V(w->qkv, 0, T * C), w->perm_in), 2, OUT(V(w->xt, 0, C * T)), 1, &ps0);
    RUN(VT_OP_CAUSAL_CONV1D_UPDATE, IN(xin, l->conv, NULL, NULL), 4, OUT(w->yc, l->conv_state), 2, &pc);
    vt_tensor *q, *k, *v;
    if (T == 1) {
        q = V(w->yc, 0, 1, 1, nk, dk);
        k = V(w->yc, nq, 1, 1, nk, dk);
        v = V(w->yc, 2 * nq, 1, 1, nv, dv);
    } else {
        RUN(VT_OP_INDEX_SELECT, IN(V(w->yc, 0, nq * T), w->perm_k), 2, OUT(w->qT), 1, &ps0);
        RUN(VT_OP_INDEX_SELECT, IN(V(w->yc, nq * T, nq * T), w->perm_k), 2, OUT(w->kT), 1, &ps0);
        RUN(VT_OP_INDEX_SELECT, IN(V(w->yc, 2 * nq * T, nvd * T), w->perm_v), 2, OUT(w->vT), 1, &ps0);
        q = V(w->qT, 0, 1, T, nk, dk);
        k = V(w->kT, 0, 1, T, nk, dk);
        v = V(w->vT, 0, 1, T, nv, dv);
    }
    RUN(VT_OP_L2_NORM, IN(q), 1, OUT(w->ql), 1, &pn);
    RUN(VT_OP_L2_NORM, IN(k), 1, OUT(w->kl), 1, &pn);
    RUN(VT_OP_GATED_DELTA_RULE, IN(w->ql, w->kl, v, V(w->gg, 0, 1, T, nv), V(w->beta, 0, 1, T, nv), r->slot0, NULL), 7,
        OUT(w->o, l->rec_state), 2, &pg);
    RUN(VT_OP_GATED_RMS_NORM, IN(V(w->o, 0, T, nv, dv), V(w->z, 0, T, nv, dv), l->ssm_norm), 3, OUT(w->on), 1, &pn);
    RUN(VT_OP_MATMUL, IN(V(w->on, 0, T, nvd), l->ssm_out), 2, OUT(w->a), 1, NOP);
    return VT_OK;
}

/* The feed-forward half: dense SwiGLU or routed experts (plus qwen3next's
 * shared expert), added into ws->x. */
static vt_status ffn(vt_runner *r, run_ws *w, int il, int64_t T)
{
    const run_hparams *p = &r->hp;
    run_layer *l = &r->layers[il];
    if (p->arch == RUN_QWEN3) {
        if (T == 1 && l->wgu) { /* gate | up in one product */
            RUN(VT_OP_MATMUL, IN(w->h, l->wgu), 2, OUT(w->fgu), 1, NOP);
        } else {
            RUN(VT_OP_MATMUL, IN(w->h, l->gate), 2, OUT(w->fg), 1, NOP);
            RUN(VT_OP_MATMUL, IN(w->h, l->up), 2, OUT(w->fu), 1, NOP);
        }
        RUN(VT_OP_SWIGLU, IN(w->fg, w->fu), 2, OUT(w->fs), 1, NOP);
        RUN(VT_OP_MATMUL, IN(w->fs, l->down), 2, OUT(w->fd), 1, NOP);
        RUN(VT_OP_ADD, IN(w->x, w->fd), 2, OUT(w->x), 1, NOP);
        return VT_OK;
    }
    vt_params_moe_router pm = {(int32_t)p->k, VT_ROUTER_SOFTMAX, 1, 1.0f};
    RUN(VT_OP_MATMUL, IN(w->h, l->gate_inp), 2, OUT(w->rl), 1, NOP);
    RUN(VT_OP_MOE_ROUTER, IN(w->rl, NULL), 2, OUT(w->ids, w->rw), 2, &pm);
    RUN(VT_OP_MOE_EXPERT_MATMUL, IN(w->h, l->gate_exps, w->ids), 3, OUT(w->G), 1, NOP);
    RUN(VT_OP_MOE_EXPERT_MATMUL, IN(w->h, l->up_exps, w->ids), 3, OUT(w->U), 1, NOP);
    RUN(VT_OP_SWIGLU, IN(w->G, w->U), 2, OUT(w->S), 1, NOP);
    RUN(VT_OP_MOE_EXPERT_MATMUL, IN(w->S, l->down_exps, w->ids), 3, OUT(w->D), 1, NOP);
    RUN(VT_OP_MOE_COMBINE, IN(w->D, w->rw), 2, OUT(w->y), 1, NOP);
    RUN(VT_OP_ADD, IN(w->x, w->y), 2, OUT(w->x), 1, NOP);
    if (p->arch == RUN_QWEN3NEXT) {
        RUN(VT_OP_MATMUL, IN(w->h, l->gate_inp_sh), 2, OUT(w->shl), 1, NOP);
        RUN(VT_OP_SIGMOID, IN(w->shl), 1, OUT(w->shg), 1, NOP);
        RUN(VT_OP_MATMUL, IN(w->h, l->gate_sh), 2, OUT(w->gs), 1, NOP);
        RUN(VT_OP_MATMUL, IN(w->h, l->up_sh), 2, OUT(w->us), 1, NOP);
        RUN(VT_OP_SWIGLU, IN(w->gs, w->us), 2, OUT(w->ss), 1, NOP);
        RUN(VT_OP_MATMUL, IN(w->ss, l->down_sh), 2, OUT(w->ds), 1, NOP);
        RUN(VT_OP_MOE_COMBINE, IN(V(w->ds, 0, T, 1, p->H), w->shg), 2, OUT(w->ys), 1, NOP);
        RUN(VT_OP_ADD, IN(w->x, w->ys), 2, OUT(w->x), 1, NOP);
    }
    return VT_OK;
}

static vt_status forward_layers(vt_runner *r, run_ws *w, int64_t T, bool from_device_token)
{
    const run_hparams *p = &r->hp;
    vt_params_norm pn = {p->eps};
    int il = -1;
    if (r->has_embd) /* a later part of a split finds x written by the host */
        RUN(VT_OP_GET_ROWS, IN(r->tok_embd, from_device_token ? r->tok_dev : w->tok), 2, OUT(w->x), 1, NOP);
    for (il = (int)r->l0; il < (int)r->l1; il++) {
        run_layer *l = &r->layers[il];
        RUN(VT_OP_RMS_NORM, IN(w->x, l->attn_norm), 2, OUT(w->h), 1, &pn);
        vt_status st = l->linear ? deltanet(r, w, il, T) : attention(r, w, il, T);
        if (st != VT_OK)
            return st;
        RUN(VT_OP_ADD, IN(w->x, w->a), 2, OUT(w->x), 1, NOP);
        RUN(VT_OP_RMS_NORM, IN(w->x, l->ffn_norm), 2, OUT(w->h), 1, &pn);
        st = ffn(r, w, il, T);
        if (st != VT_OK)
            return st;
        run_views_free(r);
    }
    il = (int)p->L;
    if (!r->has_head)
        return VT_OK;
    RUN(VT_OP_RMS_NORM, IN(V(w->x, (T - 1) * p->H, 1, p->H), r->out_norm), 2, OUT(w->hn), 1, &pn);
    RUN(VT_OP_MATMUL, IN(w->hn, r->output ? r->output : r->tok_embd), 2, OUT(w->logits), 1, NOP);
    return VT_OK;
}

vt_status run_forward(vt_runner *r, run_ws *ws, uint32_t T, bool from_device_token)
{
    vt_status st = forward_layers(r, ws, T, from_device_token);
    run_views_free(r);
    return st;
}

vt_status run_sample(vt_runner *r, run_ws *w, const vt_sampler *s, uint64_t step)
{
    int il = (int)r->hp.L;
    if (s && s->temperature > 0) {
        vt_params_sample ps = {s->temperature, s->top_k, s->top_p > 0 ? s->top_p : 1.0f, 0, s->seed, step};
        RUN(VT_OP_SAMPLE, IN(w->logits), 1, OUT(r->tok_dev), 1, &ps);
    } else {
        RUN(VT_OP_ARGMAX, IN(w->logits), 1, OUT(r->tok_dev), 1, NOP);
    }
    return VT_OK;
}
