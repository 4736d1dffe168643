/* Structure checks: every rule broken once, reported with its row, and
 * rejected by create and wrap. */
#include "testutil.h"

#include <string.h>

static void expect_rule(const char *what, int64_t mb, int64_t nb, int bs, int64_t nnzb,
                        const int64_t *rp, const int32_t *ci, bsrmv_rule rule, int64_t row)
{
    bsrmv_check_report rep;
    bsrmv_status s = bsrmv_check_bsr(mb, nb, bs, nnzb, rp, ci, &rep);
    TU_CHECK(s == BSRMV_ERR_STRUCTURE, "%s: status %s", what, bsrmv_status_string(s));
    TU_CHECK(rep.rule == rule, "%s: rule %s, wanted %s", what, bsrmv_rule_string(rep.rule),
             bsrmv_rule_string(rule));
    TU_CHECK(rep.row == row, "%s: row %lld, wanted %lld", what, (long long)rep.row,
             (long long)row);
    TU_CHECK(strstr(bsrmv_last_error(), bsrmv_rule_string(rule)) != NULL,
             "%s: message '%s' does not name the rule", what, bsrmv_last_error());
    if (rule == BSRMV_RULE_SIZES)
        return; /* create/wrap reject these as argument/overflow errors */
    double val[64] = {0};
    bsrmv_matrix *A = (bsrmv_matrix *)&val; /* must be reset to NULL */
    TU_FAILS(bsrmv_matrix_create(&A, mb, nb, bs, nnzb, rp, ci, val, BSRMV_DOUBLE,
                                 BSRMV_COL_MAJOR), BSRMV_ERR_STRUCTURE);
    TU_CHECK(A == NULL, "%s: handle not cleared", what);
    TU_FAILS(bsrmv_matrix_wrap(&A, mb, nb, bs, nnzb, rp, ci, val, BSRMV_FLOAT,
                               BSRMV_ROW_MAJOR), BSRMV_ERR_STRUCTURE);
    TU_CHECK(A == NULL, "%s: handle not cleared", what);
}

/* A 32-bit row_ptr: the same rules, the same handle behaviour, the
 * arrays views by width. */
static void test_int32_row_ptr(void)
{
    int32_t rp[4] = {0, 2, 2, 5};
    int32_t ci[5] = {0, 3, 1, 2, 3};
    double val[20] = {0};
    bsrmv_check_report rep;
    TU_OK(bsrmv_check_bsr_i32(3, 4, 2, 5, rp, ci, &rep));
    const struct {
        int32_t rp[4];
        bsrmv_rule rule;
        int64_t row;
    } bad[] = {{{1, 2, 2, 5}, BSRMV_RULE_ROW_PTR_START, 0},
               {{0, 3, 2, 5}, BSRMV_RULE_ROW_PTR_ORDER, 1},
               {{0, 2, 2, 4}, BSRMV_RULE_ROW_PTR_END, 3},
               {{0, 2, 2, -5}, BSRMV_RULE_ROW_PTR_ORDER, 2}};
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        TU_FAILS(bsrmv_check_bsr_i32(3, 4, 2, 5, bad[q].rp, ci, &rep), BSRMV_ERR_STRUCTURE);
        TU_CHECK(rep.rule == bad[q].rule && rep.row == bad[q].row,
                 "int32 case %zu: rule %d at row %lld", q, (int)rep.rule, (long long)rep.row);
        bsrmv_matrix *M = NULL;
        TU_FAILS(bsrmv_matrix_wrap_i32(&M, 3, 4, 2, 5, bad[q].rp, ci, val, BSRMV_DOUBLE,
                                       BSRMV_COL_MAJOR),
                 BSRMV_ERR_STRUCTURE);
        TU_CHECK(M == NULL, "failed wrap_i32 made a handle");
        TU_FAILS(bsrmv_matrix_create_i32(&M, 3, 4, 2, 5, bad[q].rp, ci, val, BSRMV_DOUBLE,
                                         BSRMV_COL_MAJOR),
                 BSRMV_ERR_STRUCTURE);
    }
    int32_t ci_dup[5] = {0, 3, 1, 3, 3};
    TU_FAILS(bsrmv_check_bsr_i32(3, 4, 2, 5, rp, ci_dup, &rep), BSRMV_ERR_STRUCTURE);
    TU_CHECK(rep.rule == BSRMV_RULE_COL_DUPLICATE && rep.row == 2, "int32 duplicate");
    TU_FAILS(bsrmv_check_bsr_i32(3, 4, 2, 5, NULL, ci, NULL), BSRMV_ERR_ARGUMENT);
    bsrmv_matrix *A = NULL;
    TU_FAILS(bsrmv_matrix_wrap_i32(&A, 3, 4, 2, 5, NULL, ci, val, BSRMV_DOUBLE,
                                   BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);

    /* Wrapped: reads the caller's arrays in place; copied: keeps int32. */
    bsrmv_matrix *W = NULL, *C = NULL;
    TU_OK(bsrmv_matrix_wrap_i32(&W, 3, 4, 2, 5, rp, ci, val, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    TU_OK(bsrmv_matrix_create_i32(&C, 3, 4, 2, 5, rp, ci, val, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    val[2 * 4 + 1] = 2.0; /* block 2 (row 2, col 1), entry (0,1) */
    double x[8] = {1, 1, 1, 1, 1, 1, 1, 1}, yw[6], yc[6];
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1, W, x, 8, 0, yw, 6));
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1, C, x, 8, 0, yc, 6));
    TU_CHECK(yw[4] == 2.0 && yc[4] == 0.0, "int32 wrap/copy: %g %g", yw[4], yc[4]);
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(W, &in));
    TU_CHECK(in.index == BSRMV_INDEX_32 && !in.owns_arrays && in.empty_rows == 1 &&
                 in.row_len_max == 3,
             "info of the int32 matrix is wrong");
    TU_OK(bsrmv_matrix_get_info(C, &in));
    TU_CHECK(in.index == BSRMV_INDEX_32 && in.owns_arrays, "info of the int32 copy");
    const int32_t *r32, *c32;
    const int64_t *r64;
    const void *v;
    TU_OK(bsrmv_matrix_arrays_i32(W, &r32, &c32, &v));
    TU_CHECK(r32 == rp && c32 == ci && v == val, "arrays_i32 of a wrapped matrix");
    TU_OK(bsrmv_matrix_arrays_i32(C, &r32, &c32, &v));
    TU_CHECK(r32 != rp && memcmp(r32, rp, sizeof rp) == 0, "arrays_i32 of the copy");
    r64 = NULL;
    TU_FAILS(bsrmv_matrix_arrays(W, &r64, &c32, &v), BSRMV_ERR_UNSUPPORTED);
    TU_CHECK(r64 == NULL, "arrays set row_ptr on an int32 matrix");
    bsrmv_coo *coo = NULL;
    TU_OK(bsrmv_matrix_to_coo(W, &coo));
    TU_CHECK(coo->nnz == 20 && coo->row[16] == 4 && coo->col[17] == 7, "to_coo of int32");
    bsrmv_coo_destroy(coo);
    TU_CHECK(bsrmv_matrix_spmv_bytes(W) == 20 * 8 + 5 * 4 + 4 * 4 + 8 * 8 + 6 * 8,
             "spmv_bytes counts a 32-bit row_ptr");
    bsrmv_matrix_destroy(W);
    bsrmv_matrix_destroy(C);

    int64_t rp64[4] = {0, 2, 2, 5};
    TU_OK(bsrmv_matrix_wrap(&W, 3, 4, 2, 5, rp64, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_get_info(W, &in));
    TU_CHECK(in.index == BSRMV_INDEX_64, "info.index of a 64-bit matrix");
    r32 = NULL;
    TU_FAILS(bsrmv_matrix_arrays_i32(W, &r32, &c32, &v), BSRMV_ERR_UNSUPPORTED);
    TU_CHECK(r32 == NULL, "arrays_i32 set row_ptr on an int64 matrix");
    bsrmv_matrix_destroy(W);
}

int main(void)
{
    /* A valid 3 x 4 block pattern with an empty row. */
    int64_t rp[4] = {0, 2, 2, 5};
    int32_t ci[5] = {0, 3, 1, 2, 3};
    bsrmv_check_report rep;
    TU_OK(bsrmv_check_bsr(3, 4, 2, 5, rp, ci, &rep));
    TU_CHECK(rep.rule == BSRMV_RULE_OK, "valid pattern reported %d", rep.rule);

    int64_t rp_start[4] = {1, 2, 2, 5};
    expect_rule("row_ptr[0]", 3, 4, 2, 5, rp_start, ci, BSRMV_RULE_ROW_PTR_START, 0);
    int64_t rp_order[4] = {0, 3, 2, 5};
    expect_rule("row_ptr decreases", 3, 4, 2, 5, rp_order, ci, BSRMV_RULE_ROW_PTR_ORDER, 1);
    int64_t rp_end[4] = {0, 2, 2, 4};
    expect_rule("row_ptr[mb]", 3, 4, 2, 5, rp_end, ci, BSRMV_RULE_ROW_PTR_END, 3);
    int32_t ci_hi[5] = {0, 4, 1, 2, 3};
    expect_rule("col >= nb", 3, 4, 2, 5, rp, ci_hi, BSRMV_RULE_COL_RANGE, 0);
    int32_t ci_neg[5] = {0, 3, 1, -1, 3};
    expect_rule("col < 0", 3, 4, 2, 5, rp, ci_neg, BSRMV_RULE_COL_RANGE, 2);
    int32_t ci_unsorted[5] = {0, 3, 2, 1, 3};
    expect_rule("unsorted", 3, 4, 2, 5, rp, ci_unsorted, BSRMV_RULE_COL_ORDER, 2);
    int32_t ci_dup[5] = {0, 3, 1, 3, 3};
    expect_rule("duplicate", 3, 4, 2, 5, rp, ci_dup, BSRMV_RULE_COL_DUPLICATE, 2);
    /* Sorted across a row boundary is not required: row 2 may restart at 0. */
    int32_t ci_restart[5] = {2, 3, 0, 1, 2};
    TU_OK(bsrmv_check_bsr(3, 4, 2, 5, rp, ci_restart, NULL));

    expect_rule("bs 0", 3, 4, 0, 5, rp, ci, BSRMV_RULE_SIZES, -1);
    expect_rule("negative mb", -1, 4, 2, 5, rp, ci, BSRMV_RULE_SIZES, -1);
    expect_rule("nb past int32", 3, (int64_t)INT32_MAX + 1, 2, 5, rp, ci, BSRMV_RULE_SIZES, -1);
    expect_rule("nnzb*bs*bs overflows", 3, 4, 1 << 20, INT64_MAX / 1000, rp, ci,
                BSRMV_RULE_SIZES, -1);
    TU_FAILS(bsrmv_check_bsr(3, 4, 2, 5, NULL, ci, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_check_bsr(3, 4, 2, 5, rp, NULL, NULL), BSRMV_ERR_ARGUMENT);

    /* create/wrap argument errors */
    bsrmv_matrix *A = NULL;
    double val[20] = {0};
    TU_FAILS(bsrmv_matrix_create(&A, 3, 4, 0, 5, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_create(&A, 3, 4, 2, 5, rp, ci, val, (bsrmv_type)9, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_create(&A, 3, 4, 2, 5, rp, ci, val, BSRMV_DOUBLE, (bsrmv_order)4),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_create(&A, 3, 4, 2, 5, rp, ci, NULL, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_create(NULL, 3, 4, 2, 5, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);

    /* A wrapped matrix sees later value changes; a copied one does not. */
    bsrmv_matrix *W = NULL, *C = NULL;
    TU_OK(bsrmv_matrix_wrap(&W, 3, 4, 2, 5, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_create(&C, 3, 4, 2, 5, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    val[0] = 1.0; /* block 0, entry (0,0) */
    double x[8] = {1, 1, 1, 1, 1, 1, 1, 1}, yw[6], yc[6];
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1, W, x, 8, 0, yw, 6));
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1, C, x, 8, 0, yc, 6));
    TU_CHECK(yw[0] == 1.0 && yc[0] == 0.0, "wrap/copy: %g %g", yw[0], yc[0]);
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(W, &in));
    TU_CHECK(!in.owns_arrays && in.empty_rows == 1 && in.row_len_max == 3 &&
                 in.row_len_min == 0 && in.rows == 6 && in.cols == 8,
             "info of the wrapped matrix is wrong");
    bsrmv_matrix_destroy(W);
    bsrmv_matrix_destroy(C);
    bsrmv_matrix_destroy(NULL);
    test_int32_row_ptr();
    TU_CHECK(strcmp(bsrmv_status_string(BSRMV_ERR_STRUCTURE), "BSRMV_ERR_STRUCTURE") == 0,
             "status name");
    printf("test_check: all passed\n");
    return 0;
}
