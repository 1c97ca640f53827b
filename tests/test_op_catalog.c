/* test_op_catalog.c - the op catalogue's families through the public API:
 * every op has a family of the catalogue's vocabulary, and
 * vt_op_output_shapes derives the outputs the operand rules then accept
 * (values written here from SPEC 7's definitions), leaves INOUT outputs
 * alone, and refuses what it cannot derive by name. No backend needed,
 * but for the check that the cpu backend's kernel table is its family
 * tables joined in the catalogue's order (VT_OP_FAMILIES). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* An input description: present (data non-NULL, never read), dtype, shape. */
static vt_operand operand(vt_dtype t, uint32_t nd, const int64_t *shape)
{
    static const unsigned char present;
    vt_operand o;
    memset(&o, 0, sizeof o);
    o.data = (void *)&present;
    o.dtype = t;
    o.ndim = nd;
    memcpy(o.shape, shape, sizeof(int64_t) * nd);
    return o;
}

static void assert_shape(const vt_operand *o, vt_dtype t, uint32_t nd, const int64_t *want, const char *what)
{
    ck_assert_msg(o->dtype == t, "%s: dtype %s, want %s", what, vt_dtype_name(o->dtype), vt_dtype_name(t));
    ck_assert_msg(o->ndim == nd, "%s: %u dims, want %u", what, o->ndim, nd);
    for (uint32_t i = 0; i < nd; i++)
        ck_assert_msg(o->shape[i] == want[i], "%s: dim %u is %lld, want %lld", what, i, (long long)o->shape[i],
                      (long long)want[i]);
}

START_TEST(every_op_has_a_family)
{
    static const char *const names[] = {"convert", "elementwise", "rows",   "conv",
                                        "matmul",  "attention",   "select", "gather"};
    uint32_t seen[8] = {0};
    for (uint32_t i = 0; i < vt_op_catalog_size(); i++) {
        const vt_op_info *info = vt_op_catalog_entry(i);
        if (i > 0)
            ck_assert_msg(vt_op_catalog_entry(i - 1)->op < info->op, "the catalogue is in id order");
        const char *f = vt_op_family_name(info->op);
        ck_assert_msg(f != NULL, "%s has no family", info->name);
        size_t k = 0;
        while (k < 8 && strcmp(names[k], f) != 0)
            k++;
        ck_assert_msg(k < 8, "%s: family '%s' is not the catalogue's", info->name, f);
        seen[k]++;
    }
    for (size_t k = 0; k < 8; k++)
        ck_assert_msg(seen[k] > 0, "family %s has no op", names[k]);
    ck_assert_uint_eq(vt_op_catalog_size(), 31);
    ck_assert_str_eq(vt_op_family_name(VT_OP_ROPE), "rows");
    ck_assert_str_eq(vt_op_family_name(VT_OP_DEQUANTIZE), "convert");
    ck_assert_str_eq(vt_op_family_name(VT_OP_MOE_ROUTER), "select");
    ck_assert_ptr_null(vt_op_family_name(17));
    ck_assert(vt_op_output_dtype_free(VT_OP_COPY) && vt_op_output_dtype_free(VT_OP_GET_ROWS) &&
              vt_op_output_dtype_free(VT_OP_DEQUANTIZE));
    ck_assert(!vt_op_output_dtype_free(VT_OP_MATMUL) && !vt_op_output_dtype_free(VT_OP_INDEX_SELECT));
}
END_TEST

/* VT_OP_FAMILIES is the catalogue's family list, in its order, and a
 * backend that joins per-family tables with it (the cpu) lists its rows
 * family by family in that order. */
#define FAMILY_NAME(unused, family) #family,
static const char *const listed[] = {VT_OP_FAMILIES(FAMILY_NAME, )};
#undef FAMILY_NAME

START_TEST(family_list_orders_the_backends_kernel_tables)
{
    static const char *const names[] = {"convert", "elementwise", "rows",   "conv",
                                        "matmul",  "attention",   "select", "gather"};
    size_t n_listed = sizeof listed / sizeof listed[0];
    ck_assert_uint_eq(n_listed, 8);
    for (size_t k = 0; k < n_listed; k++)
        ck_assert_str_eq(listed[k], names[k]);
    vt_registry *reg = vt_test_open(NULL, "cpu", 0);
    const vt_kernel *rows = NULL;
    uint32_t n = 0;
    ck_assert_int_eq(vt_registry_backend_kernels(reg, "cpu", &rows, &n), VT_OK);
    ck_assert_uint_gt(n, 100);
    size_t prev = 0;
    uint32_t per_family[8] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const char *f = vt_op_family_name(rows[i].op);
        ck_assert_msg(f != NULL, "row %u: op %u is not in the catalogue", i, rows[i].op);
        size_t k = 0;
        while (k < n_listed && strcmp(listed[k], f) != 0)
            k++;
        ck_assert_msg(k < n_listed, "row %u: family '%s' is not listed", i, f);
        ck_assert_msg(k >= prev, "row %u (%s, family %s) after a row of family %s", i, vt_op_get_info(rows[i].op)->name,
                      f, listed[prev]);
        prev = k;
        per_family[k]++;
    }
    for (size_t k = 0; k < n_listed; k++)
        ck_assert_msg(per_family[k] > 0, "the cpu has no row of family %s", listed[k]);
    vt_registry_close(reg);
}
END_TEST

/* Derived outputs, then the same call through the operand rules. */
START_TEST(output_shapes_follow_the_catalogue)
{
    /* MatMul: x [2,3,64], W [5,64] q4_0 -> y f32 [2,3,5] */
    int64_t xs[3] = {2, 3, 64}, ws[2] = {5, 64}, ys[3] = {2, 3, 5};
    vt_operand in[3] = {operand(VT_F32, 3, xs), operand(VT_Q4_0, 2, ws)}, out[2];
    memset(out, 0, sizeof out);
    ck_assert_msg(vt_op_output_shapes(VT_OP_MATMUL, in, 2, NULL, 0, VT_F32, out, 1) == VT_OK, "%s", vt_last_error());
    assert_shape(&out[0], VT_F32, 3, ys, "MatMul y");
    out[0].data = (void *)&out[1];
    vt_op_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.op = VT_OP_MATMUL;
    a.n_in = 2;
    a.n_out = 1;
    memcpy(a.in, in, 2 * sizeof in[0]);
    a.out[0] = out[0];
    ck_assert_msg(vt_op_check_args(&a) == VT_OK, "%s", vt_last_error());

    /* GetRows: table [7,32] q8_0, idx [2,3] -> dst [2,3,32] of the free dtype */
    int64_t ts[2] = {7, 32}, is[2] = {2, 3}, ds[3] = {2, 3, 32};
    in[0] = operand(VT_Q8_0, 2, ts);
    in[1] = operand(VT_I32, 2, is);
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_GET_ROWS, in, 2, NULL, 0, VT_F16, out, 1), VT_OK);
    assert_shape(&out[0], VT_F16, 3, ds, "GetRows dst");

    /* TopK k=4 over [3,9] -> values f32 [3,4], indices i32 [3,4] */
    int64_t xk[2] = {3, 9}, yk[2] = {3, 4};
    vt_params_topk pk = {4};
    in[0] = operand(VT_F32, 2, xk);
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_TOPK, in, 1, &pk, sizeof pk, VT_F32, out, 2), VT_OK);
    assert_shape(&out[0], VT_F32, 2, yk, "TopK values");
    assert_shape(&out[1], VT_I32, 2, yk, "TopK indices");

    /* CausalConv1d: x [2,6,5], w [6,4] -> y [2,6,5], state [2,6,3] */
    int64_t cx[3] = {2, 6, 5}, cw[2] = {6, 4}, cs[3] = {2, 6, 3};
    vt_params_conv pc = {1};
    in[0] = operand(VT_F32, 3, cx);
    in[1] = operand(VT_F32, 2, cw);
    memset(&in[2], 0, sizeof in[2]); /* bias absent */
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_CAUSAL_CONV1D, in, 3, &pc, sizeof pc, VT_F32, out, 2), VT_OK);
    assert_shape(&out[0], VT_F32, 3, cx, "CausalConv1d y");
    assert_shape(&out[1], VT_F32, 3, cs, "CausalConv1d state");

    /* IndexSelect keeps the source dtype: src [4,5] i64, dim -1, idx [3] */
    int64_t ss[2] = {4, 5}, ix[1] = {3}, so[2] = {4, 3};
    vt_params_index_select pi = {-1};
    in[0] = operand(VT_I64, 2, ss);
    in[1] = operand(VT_I32, 1, ix);
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_INDEX_SELECT, in, 2, &pi, sizeof pi, VT_F32, out, 1), VT_OK);
    assert_shape(&out[0], VT_I64, 2, so, "IndexSelect dst");
}
END_TEST

START_TEST(inout_outputs_are_left_alone)
{
    /* KvCacheWrite: both caches are the caller's */
    int64_t k[3] = {2, 1, 8}, sl[1] = {2};
    vt_operand in[3] = {operand(VT_F32, 3, k), operand(VT_F32, 3, k), operand(VT_I32, 1, sl)}, out[2];
    memset(out, 0x5a, sizeof out);
    vt_operand before[2];
    memcpy(before, out, sizeof out);
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_KV_CACHE_WRITE, in, 3, NULL, 0, VT_F32, out, 2), VT_OK);
    ck_assert(memcmp(before, out, sizeof out) == 0);
}
END_TEST

START_TEST(what_cannot_be_derived_is_refused_by_name)
{
    int64_t xs[2] = {3, 64};
    vt_operand in[2] = {operand(VT_F32, 2, xs)}, out[2];
    memset(out, 0, sizeof out);
    memset(&in[1], 0, sizeof in[1]);
    /* MatMul without W */
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_MATMUL, in, 2, NULL, 0, VT_F32, out, 1), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "MatMul (20) needs input W") != NULL, "%s", vt_last_error());
    /* W of the wrong rank */
    in[1] = operand(VT_F32, 1, xs);
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_MATMUL, in, 2, NULL, 0, VT_F32, out, 1), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "MatMul (20): W must be [m,k]") != NULL, "%s", vt_last_error());
    /* TopK without its params */
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_TOPK, in, 1, NULL, 0, VT_F32, out, 2), VT_E_INVALID_ARG);
    ck_assert_msg(strstr(vt_last_error(), "TopK (35) needs its params") != NULL, "%s", vt_last_error());
    /* the wrong number of outputs, and an op that is not in the catalogue */
    ck_assert_int_eq(vt_op_output_shapes(VT_OP_SILU, in, 1, NULL, 0, VT_F32, out, 2), VT_E_INVALID_ARG);
    ck_assert_int_eq(vt_op_output_shapes(17, in, 1, NULL, 0, VT_F32, out, 1), VT_E_NOT_FOUND);
}
END_TEST

int main(void)
{
    Suite *s;
    TCase *tc;
    int gate = vt_test_suite_begin(NULL, "op catalogue", "families", 60, &s, &tc);
    if (gate != 0)
        return gate;
    tcase_add_test(tc, every_op_has_a_family);
    tcase_add_test(tc, family_list_orders_the_backends_kernel_tables);
    tcase_add_test(tc, output_shapes_follow_the_catalogue);
    tcase_add_test(tc, inout_outputs_are_left_alone);
    tcase_add_test(tc, what_cannot_be_derived_is_refused_by_name);
    return vt_test_run_suite(s);
}
