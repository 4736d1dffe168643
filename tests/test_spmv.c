/* CPU SpMV against the long-double reference: every bs 1..33 and 48, both
 * block orders, both types, both ops, alpha/beta in {0, 1, -2.5}, with
 * empty rows, one block row, non-square shapes, very long rows, rows of a
 * few blocks and of many (the two row kernels), matrices
 * large enough to run on several threads, and y poisoned with NaN. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static const double coefs[] = {0.0, 1.0, -2.5};

/* Runs the op/alpha/beta cases on A: all nine (alpha, beta) pairs when
 * `full`, else three that still cover alpha in {0, 1, other} and beta in
 * {0, 1, other}; `what` names the shape. */
static void run_cases(const char *what, const bsrmv_matrix *A, uint64_t seed, bool full)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    for (int op = 0; op < 2; op++) {
        int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
        int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
        void *x = tu_random_vector(nx, in.type, seed + 1);
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++) {
                if (!full && (ia + 1) % 3 != ib)
                    continue;
                double alpha = coefs[ia], beta = coefs[ib];
                /* beta == 0: y starts as NaN and must not leak into the result. */
                void *y0 = beta == 0 ? tu_nan_vector(ny, in.type)
                                     : tu_random_vector(ny, in.type, seed + 2);
                void *y = tu_copy_vector(y0, ny, in.type);
                TU_OK(bsrmv_spmv((bsrmv_op)op, alpha, A, x, nx, beta, y, ny));
                tu_check_result(what, A, (bsrmv_op)op, alpha, x, beta, y0, y);
                free(y0);
                free(y);
            }
        free(x);
    }
}

/* The cases on A in both orders and types.  `full`: all alpha/beta pairs,
 * and the generic kernel as well as the specialised one. */
static void run_all(const char *what, const tu_shape *sh, uint64_t seed, bool full)
{
    for (int t = 0; t < 2; t++) {
        bsrmv_matrix *A = tu_random_bsr(sh, (bsrmv_type)t, BSRMV_COL_MAJOR, seed);
        bsrmv_matrix *B = tu_reorder(A, BSRMV_ROW_MAJOR);
        /* The same matrices with a 32-bit row_ptr. */
        bsrmv_matrix *A32 = tu_narrow(A), *B32 = tu_narrow(B);
        for (int k = 0; k < (full ? 2 : 1); k++) {
            TU_OK(bsrmv_matrix_set_cpu_kernel(A, (bsrmv_cpu_kernel)k));
            TU_OK(bsrmv_matrix_set_cpu_kernel(B, (bsrmv_cpu_kernel)k));
            TU_OK(bsrmv_matrix_set_cpu_kernel(A32, (bsrmv_cpu_kernel)k));
            TU_OK(bsrmv_matrix_set_cpu_kernel(B32, (bsrmv_cpu_kernel)k));
            run_cases(what, A, seed, full);
            run_cases(what, B, seed, full);
            /* alpha/beta do not depend on the width: the short list. */
            run_cases(what, A32, seed, false);
            run_cases(what, B32, seed, false);
        }
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(B);
        bsrmv_matrix_destroy(A32);
        bsrmv_matrix_destroy(B32);
    }
}

static void test_block_sizes(void)
{
    int sizes[35];
    int n = 0;
    for (int bs = 1; bs <= 33; bs++)
        sizes[n++] = bs;
    sizes[n++] = 48;
    for (int q = 0; q < n; q++) {
        int bs = sizes[q];
        uint64_t seed = 1000 + (uint64_t)bs;
        /* Small, rectangular, with a fifth of the rows empty. */
        tu_shape small = {37, 23, bs, 4.0, 0.2, -1, 0};
        run_all("small non-square", &small, seed, true);
        /* Wider than tall. */
        tu_shape wide = {9, 61, bs, 6.0, 0.1, -1, 0};
        run_all("wide", &wide, seed + 7, false);
        /* One block row. */
        tu_shape one = {1, 40, bs, 10.0, 0.0, -1, 0};
        run_all("one block row", &one, seed + 11, false);
        /* Enough work for the threaded split (> PARALLEL_MIN_WORK). */
        int64_t mb = 20000 / ((int64_t)bs * bs * 6) + 64;
        tu_shape big = {mb, mb + 5, bs, 6.0, 0.05, mb / 2, mb < 300 ? mb : 300};
        run_all("threaded", &big, seed + 13, false);
    }
}

static void test_long_rows(void)
{
    const int sizes[] = {1, 2, 3, 5, 8, 16};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        tu_shape sh = {5, 6000, sizes[q], 2.0, 0.0, 2, 5000};
        run_all("block row with 5000 blocks", &sh, 77 + q, false);
    }
}

/* Both sides of the choice between one and several accumulator sets by
 * the mean row length (SHORT_ROW_BLOCKS in src/cpu/spmv_kernels.h): a
 * mean of 2 blocks a row with a quarter of the rows empty, and a mean of
 * 24; at the small bs on one thread, at the larger ones split. */
static void test_short_and_long_rows(void)
{
    for (int bs = 1; bs <= 8; bs++) {
        tu_shape few = {300, 280, bs, 2.0, 0.25, -1, 0};
        run_all("rows of a few blocks", &few, 500 + (uint64_t)bs, true);
        tu_shape many = {40, 300, bs, 24.0, 0.1, -1, 0};
        run_all("rows of many blocks", &many, 600 + (uint64_t)bs, true);
    }
}

static void test_edge_shapes(void)
{
    /* Every block row empty. */
    tu_shape empty = {20, 20, 3, 0.0, 1.0, -1, 0};
    run_all("all rows empty", &empty, 5, true);
    /* No block rows, no block columns. */
    for (int t = 0; t < 2; t++) {
        int64_t rp[1] = {0};
        bsrmv_matrix *A = NULL;
        TU_OK(bsrmv_matrix_create(&A, 0, 0, 4, 0, rp, NULL, NULL, (bsrmv_type)t,
                                  BSRMV_COL_MAJOR));
        TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, A, NULL, 0, 0.0, NULL, 0));
        bsrmv_matrix_destroy(A);
    }
}

static void test_alpha_zero_reads_nothing(void)
{
    /* A full of NaN and x == NULL: with alpha == 0 neither may be touched. */
    int64_t rp[3] = {0, 1, 2};
    int32_t ci[2] = {1, 0};
    double val[8];
    for (int i = 0; i < 8; i++)
        val[i] = NAN;
    bsrmv_matrix *A = NULL;
    TU_OK(bsrmv_matrix_wrap(&A, 2, 2, 2, 2, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    double y[4] = {1, 2, 3, 4};
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 0.0, A, NULL, 4, -2.5, y, 4));
    for (int i = 0; i < 4; i++)
        TU_CHECK(y[i] == -2.5 * (i + 1), "y[%d] = %g", i, y[i]);
    TU_OK(bsrmv_spmv(BSRMV_OP_T, 0.0, A, NULL, 4, 0.0, y, 4));
    for (int i = 0; i < 4; i++)
        TU_CHECK(y[i] == 0.0, "y[%d] = %g", i, y[i]);
    bsrmv_matrix_destroy(A);
}

static void test_bad_calls(void)
{
    tu_shape sh = {4, 3, 2, 2.0, 0.0, -1, 0};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 9);
    double x[8] = {0}, y[8] = {0};
    TU_FAILS(bsrmv_spmv(BSRMV_OP_N, 1, A, x, 8, 0, y, 8), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_spmv(BSRMV_OP_N, 1, A, x, 6, 0, y, 6), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_spmv(BSRMV_OP_T, 1, A, x, 6, 0, y, 8), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_spmv(BSRMV_OP_N, 1, A, NULL, 6, 0, y, 8), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmv(BSRMV_OP_N, 1, A, x, 6, 0, NULL, 8), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmv((bsrmv_op)7, 1, A, x, 6, 0, y, 8), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmv(BSRMV_OP_N, 1, NULL, x, 6, 0, y, 8), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_set_cpu_kernel(A, (bsrmv_cpu_kernel)5), BSRMV_ERR_ARGUMENT);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    test_bad_calls();
    test_alpha_zero_reads_nothing();
    test_edge_shapes();
    test_long_rows();
    test_short_and_long_rows();
    test_block_sizes();
    printf("test_spmv: all cases passed\n");
    return 0;
}
