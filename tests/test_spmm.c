/* CPU SpMM against k separate reference SpMVs (the long-double triple loop
 * of testutil, one column at a time): bs 1..8 (compile-time kernels), 11,
 * 12 and 16 (generic bs), the generic kernel forced as well, k in {1, 2,
 * 3, 4, 7, 8, 15, 16, 19, 32, 33} (every chunk width alone, and op N's
 * splits into several: 3 = 2 + 1, 15 = 8 + 4 + 2 + 1, 33 = 16 + 16 + 1;
 * the transpose's runtime width; the larger shapes a subset),
 * both layouts with leading dimensions larger than needed, both block
 * orders and types (double, float, and float values with double vectors
 * against the reference of the float-rounded matrix), both ops,
 * alpha/beta in {0, 1, other}, Y poisoned with
 * NaN where beta == 0 and its padding checked untouched; empty rows, one
 * block row, non-square shapes, a long row cut between threads; and the
 * bad calls (k < 1, ld too small, overlap, NULL, overflow). */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static const double coefs[] = {0.0, 1.0, -2.5};
static const int ks[] = {1, 2, 3, 4, 7, 8, 15, 16, 19, 32, 33};
#define NK ((int)(sizeof ks / sizeof ks[0]))
/* For the larger shapes: one width alone, one split, a chunk of 16 and one more. */
static const int ks_few[] = {1, 3, 8, 17};
#define NK_FEW ((int)(sizeof ks_few / sizeof ks_few[0]))

/* One SpMM call checked column by column; pad: extra leading dimension. */
static void run_one(const char *what, const bsrmv_matrix *A, bsrmv_op op, bsrmv_layout lay,
                    int k, int64_t pad, double alpha, double beta, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    const int64_t ldx = (lay == BSRMV_LAYOUT_COL ? nx : k) + pad;
    const int64_t ldy = (lay == BSRMV_LAYOUT_COL ? ny : k) + pad + 1;
    const int64_t ex = tu_mv_span(lay, nx, k, ldx), ey = tu_mv_span(lay, ny, k, ldy);
    const bsrmv_type vt = in.vector_type;
    void *X = tu_random_vector(ex + 1, vt, seed);
    /* beta == 0: Y starts as NaN (padding included) and must not leak. */
    void *Y0 = beta == 0 ? tu_nan_vector(ey + 1, vt) : tu_random_vector(ey + 1, vt, seed + 1);
    void *Y = tu_copy_vector(Y0, ey + 1, vt);
    bsrmv_status s = bsrmv_spmm(op, alpha, A, k, X, ldx, beta, Y, ldy, lay);
    TU_CHECK(s == BSRMV_SUCCESS, "%s: k=%d %s: %s", what, k,
             lay == BSRMV_LAYOUT_ROW ? "row layout" : "col layout", bsrmv_last_error());
    char name[200];
    for (int j = 0; j < k; j++) {
        void *xj = tu_mv_column(X, vt, lay, nx, j, ldx);
        void *y0j = tu_mv_column(Y0, vt, lay, ny, j, ldy);
        void *yj = tu_mv_column(Y, vt, lay, ny, j, ldy);
        snprintf(name, sizeof name, "%s, k=%d, %s layout, vector %d", what, k,
                 lay == BSRMV_LAYOUT_ROW ? "row" : "col", j);
        tu_check_result(name, A, op, alpha, xj, beta, y0j, yj);
        free(xj);
        free(y0j);
        free(yj);
    }
    /* Entries outside the k columns keep their bits. */
    tu_check_mv_padding(what, Y, Y0, vt, lay, ny, k, ldy);
    free(X);
    free(Y0);
    free(Y);
}

/* Every op, layout and k (all of ks, or ks_few) on A; alpha/beta rotate
 * through the nine pairs. */
static void run_cases(const char *what, const bsrmv_matrix *A, uint64_t seed, bool few)
{
    int c = (int)(seed % 9);
    const int *kl = few ? ks_few : ks;
    const int nk = few ? NK_FEW : NK;
    for (int op = 0; op < 2; op++)
        for (int lay = 0; lay < 2; lay++)
            for (int q = 0; q < nk; q++, c++) {
                const double alpha = coefs[c % 3], beta = coefs[(c / 3) % 3];
                run_one(what, A, (bsrmv_op)op, (bsrmv_layout)lay, kl[q], 1 + q % 3, alpha,
                        beta, seed + 100 * (uint64_t)q);
            }
}

/* Every type pair (t 2: float values, double vectors) and both orders;
 * `generic`: the generic-bs kernels as well. */
static void run_all(const char *what, const tu_shape *sh, uint64_t seed, bool generic,
                    bool few)
{
    for (int t = 0; t < 3; t++) {
        bsrmv_matrix *A = tu_random_bsr(sh, t == 0 ? BSRMV_DOUBLE : BSRMV_FLOAT, BSRMV_COL_MAJOR,
                                        seed);
        bsrmv_matrix *B = tu_reorder(A, BSRMV_ROW_MAJOR);
        /* The same matrices with a 32-bit row_ptr. */
        bsrmv_matrix *A32 = tu_narrow(A), *B32 = tu_narrow(B);
        if (t == 2) {
            bsrmv_matrix *all[4] = {A, B, A32, B32};
            for (int i = 0; i < 4; i++)
                TU_OK(bsrmv_matrix_set_vector_type(all[i], BSRMV_DOUBLE));
        }
        for (int g = 0; g < (generic ? 2 : 1); g++) {
            TU_OK(bsrmv_matrix_set_cpu_kernel(A, (bsrmv_cpu_kernel)g));
            TU_OK(bsrmv_matrix_set_cpu_kernel(B, (bsrmv_cpu_kernel)g));
            TU_OK(bsrmv_matrix_set_cpu_kernel(A32, (bsrmv_cpu_kernel)g));
            TU_OK(bsrmv_matrix_set_cpu_kernel(B32, (bsrmv_cpu_kernel)g));
            run_cases(what, A, seed + (uint64_t)g, few);
            run_cases(what, B, seed + 7 + (uint64_t)g, few);
            /* The vector counts do not depend on the width: the short list. */
            run_cases(what, A32, seed + 13 + (uint64_t)g, true);
            run_cases(what, B32, seed + 19 + (uint64_t)g, true);
        }
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(B);
        bsrmv_matrix_destroy(A32);
        bsrmv_matrix_destroy(B32);
    }
}

static void test_block_sizes(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 16};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int bs = sizes[q];
        const uint64_t seed = 2000 + (uint64_t)bs;
        /* Rectangular, a fifth of the block rows empty. */
        tu_shape small = {13, 9, bs, 3.0, 0.2, -1, 0};
        run_all("small non-square", &small, seed, true, false);
        /* One block row, wider than tall. */
        tu_shape one = {1, 17, bs, 6.0, 0.0, -1, 0};
        run_all("one block row", &one, seed + 11, false, false);
        /* Enough work for several threads, with one long row that the
         * work split cuts. */
        const int64_t mb = 6000 / ((int64_t)bs * bs * 4) + 24;
        tu_shape big = {mb, mb + 3, bs, 4.0, 0.05, mb / 2, mb < 150 ? mb : 150};
        run_all("threaded, long row", &big, seed + 13, false, true);
    }
}

static void test_edge_shapes(void)
{
    tu_shape empty = {6, 5, 3, 0.0, 1.0, -1, 0};
    run_all("all rows empty", &empty, 5, false, true);
    for (int t = 0; t < 2; t++) {
        int64_t rp[1] = {0};
        bsrmv_matrix *A = NULL;
        TU_OK(bsrmv_matrix_create(&A, 0, 0, 4, 0, rp, NULL, NULL, (bsrmv_type)t,
                                  BSRMV_COL_MAJOR));
        TU_OK(bsrmv_spmm(BSRMV_OP_N, 1.0, A, 3, NULL, 1, 0.0, NULL, 1, BSRMV_LAYOUT_COL));
        TU_OK(bsrmv_spmm(BSRMV_OP_T, 1.0, A, 3, NULL, 3, 0.0, NULL, 3, BSRMV_LAYOUT_ROW));
        bsrmv_matrix_destroy(A);
    }
}

static void test_alpha_zero_reads_nothing(void)
{
    /* A full of NaN and X == NULL: with alpha == 0 neither may be touched. */
    int64_t rp[3] = {0, 1, 2};
    int32_t ci[2] = {1, 0};
    double val[8];
    for (int i = 0; i < 8; i++)
        val[i] = NAN;
    bsrmv_matrix *A = NULL;
    TU_OK(bsrmv_matrix_wrap(&A, 2, 2, 2, 2, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    double Y[12];
    for (int i = 0; i < 12; i++)
        Y[i] = i + 1;
    TU_OK(bsrmv_spmm(BSRMV_OP_N, 0.0, A, 3, NULL, 4, -2.5, Y, 4, BSRMV_LAYOUT_COL));
    for (int i = 0; i < 12; i++)
        TU_CHECK(Y[i] == -2.5 * (i + 1), "Y[%d] = %g", i, Y[i]);
    TU_OK(bsrmv_spmm(BSRMV_OP_T, 0.0, A, 3, NULL, 3, 0.0, Y, 3, BSRMV_LAYOUT_ROW));
    for (int i = 0; i < 12; i++)
        TU_CHECK(Y[i] == 0.0, "Y[%d] = %g", i, Y[i]);
    bsrmv_matrix_destroy(A);
}

static void test_bad_calls(void)
{
    /* 8 x 6: X is 6 x k, Y 8 x k for OP_N. */
    tu_shape sh = {4, 3, 2, 2.0, 0.0, -1, 0};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 9);
    double X[64] = {0}, Y[64] = {0}, buf[128] = {0};
    const bsrmv_layout C = BSRMV_LAYOUT_COL, R = BSRMV_LAYOUT_ROW;
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 0, X, 6, 0, Y, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, -3, X, 6, 0, Y, 8, C), BSRMV_ERR_ARGUMENT);
    /* Leading dimensions below the rows (col) or k (row). */
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, X, 5, 0, Y, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, X, 6, 0, Y, 7, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_T, 1, A, 2, X, 6, 0, Y, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 3, X, 2, 0, Y, 3, R), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 3, X, 3, 0, Y, 2, R), BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "ldy") != NULL, "message: %s", bsrmv_last_error());
    /* Overlap: the same array, X starting inside Y (both layouts). */
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, buf, 8, 0, buf, 8, C), BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "overlap") != NULL, "message: %s", bsrmv_last_error());
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, buf + 10, 6, 0, buf, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, buf + 15, 6, 0, buf, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, buf + 15, 2, 0, buf, 2, R), BSRMV_ERR_ARGUMENT);
    /* Adjacent but disjoint is fine: Y spans 16 entries, X starts after. */
    TU_OK(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, buf + 16, 6, 0, buf, 8, C));
    TU_OK(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, buf, 6, 0, buf + 12, 8, C));
    /* NULL, unknown enums, overflow. */
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, NULL, 2, X, 6, 0, Y, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, NULL, 6, 0, Y, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, X, 6, 0, NULL, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm((bsrmv_op)5, 1, A, 2, X, 6, 0, Y, 8, C), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 2, X, 6, 0, Y, 8, (bsrmv_layout)9), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1, A, 4, X, INT64_MAX / 2, 0, Y, 8, C), BSRMV_ERR_OVERFLOW);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    test_bad_calls();
    test_alpha_zero_reads_nothing();
    test_edge_shapes();
    test_block_sizes();
    printf("test_spmm: all cases passed\n");
    return 0;
}
