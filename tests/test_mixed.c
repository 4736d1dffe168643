/* Mixed precision: float values with double x, y and sums.  bsrmv_spmv on
 * such a matrix against the long-double reference of the float-rounded
 * values, within the double error bound (a float accumulation fails it):
 * every compiled bs and runtime ones, the generic kernel, both block
 * orders, both ops, alpha/beta in {0, 1, -2.5}, empty rows, one block row,
 * non-square shapes, long rows, sizes that run threaded, y poisoned with
 * NaN.  Then the handle calls (vector type, conversion, refusals), the
 * block-Jacobi preconditioner and bsrmv_solve on a mixed matrix, and the
 * refinement solver against the all-double solve on the generators. */
#include "testutil.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static const double coefs[] = {0.0, 1.0, -2.5};

/* The float copy of A (double) set to double vectors. */
static bsrmv_matrix *mixed_of(const bsrmv_matrix *A)
{
    bsrmv_matrix *M;
    TU_OK(bsrmv_matrix_convert(&M, A, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_set_vector_type(M, BSRMV_DOUBLE));
    return M;
}

static void run_cases(const char *what, const bsrmv_matrix *A, uint64_t seed, bool full)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    TU_CHECK(in.type == BSRMV_FLOAT && in.vector_type == BSRMV_DOUBLE, "not a mixed matrix");
    for (int op = 0; op < 2; op++) {
        const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
        const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
        /* x with bits below float precision: a kernel that rounded x to
         * float would miss the double bound */
        double *x = tu_random_vector(nx, BSRMV_DOUBLE, seed + 1);
        for (int64_t j = 0; j < nx; j++)
            x[j] *= 1.0 + 0x1p-30 * (double)(j % 7);
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++) {
                if (!full && (ia + 1) % 3 != ib)
                    continue;
                const double alpha = coefs[ia], beta = coefs[ib];
                void *y0 = beta == 0 ? tu_nan_vector(ny, BSRMV_DOUBLE)
                                     : tu_random_vector(ny, BSRMV_DOUBLE, seed + 2);
                void *y = tu_copy_vector(y0, ny, BSRMV_DOUBLE);
                TU_OK(bsrmv_spmv((bsrmv_op)op, alpha, A, x, nx, beta, y, ny));
                tu_check_result(what, A, (bsrmv_op)op, alpha, x, beta, y0, y);
                free(y0);
                free(y);
            }
        free(x);
    }
}

/* Both block orders; `full`: all alpha/beta pairs and the generic kernel. */
static void run_all(const char *what, const tu_shape *sh, uint64_t seed, bool full)
{
    bsrmv_matrix *D = tu_random_bsr(sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, seed);
    bsrmv_matrix *R = tu_reorder(D, BSRMV_ROW_MAJOR);
    bsrmv_matrix *A = mixed_of(D), *B = mixed_of(R);
    for (int k = 0; k < (full ? 2 : 1); k++) {
        TU_OK(bsrmv_matrix_set_cpu_kernel(A, (bsrmv_cpu_kernel)k));
        TU_OK(bsrmv_matrix_set_cpu_kernel(B, (bsrmv_cpu_kernel)k));
        run_cases(what, A, seed, full);
        run_cases(what, B, seed, full);
    }
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(B);
    bsrmv_matrix_destroy(D);
    bsrmv_matrix_destroy(R);
}

static void test_block_sizes(void)
{
    /* the compiled sizes, then runtime ones (generic kernel) */
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 10, 13, 48};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int bs = sizes[q];
        TU_CHECK((q < 12) == (bsrmv_cpu_has_kernel(bs) == 1), "bs %d: compiled kernel list", bs);
        const uint64_t seed = 7000 + (uint64_t)bs;
        tu_shape small = {37, 23, bs, 4.0, 0.2, -1, 0};
        run_all("small non-square", &small, seed, true);
        tu_shape wide = {9, 61, bs, 6.0, 0.1, -1, 0};
        run_all("wide", &wide, seed + 7, false);
        tu_shape one = {1, 40, bs, 10.0, 0.0, -1, 0};
        run_all("one block row", &one, seed + 11, false);
        const int64_t mb = 20000 / ((int64_t)bs * bs * 6) + 64;
        tu_shape big = {mb, mb, bs, 6.0, 0.05, mb / 3, mb};
        run_all("threaded, one long row", &big, seed + 13, false);
    }
}

static void test_handle(void)
{
    tu_shape sh = {20, 20, 3, 4.0, 0.0, -1, 0};
    bsrmv_matrix *D = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 11);
    bsrmv_matrix *F = tu_random_bsr(&sh, BSRMV_FLOAT, BSRMV_COL_MAJOR, 12);
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(D, &in));
    TU_CHECK(in.vector_type == BSRMV_DOUBLE, "double matrix: vector type %d", in.vector_type);
    TU_OK(bsrmv_matrix_get_info(F, &in));
    TU_CHECK(in.vector_type == BSRMV_FLOAT, "float matrix: vector type %d", in.vector_type);

    TU_FAILS(bsrmv_matrix_set_vector_type(D, BSRMV_FLOAT), BSRMV_ERR_UNSUPPORTED);
    TU_FAILS(bsrmv_matrix_set_vector_type(F, (bsrmv_type)7), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_set_vector_type(NULL, BSRMV_DOUBLE), BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_matrix_set_vector_type(D, BSRMV_DOUBLE));

    /* bytes: float values, double vectors */
    const double plain = bsrmv_matrix_spmv_bytes(F);
    TU_OK(bsrmv_matrix_set_vector_type(F, BSRMV_DOUBLE));
    TU_OK(bsrmv_matrix_get_info(F, &in));
    TU_CHECK(in.vector_type == BSRMV_DOUBLE && in.type == BSRMV_FLOAT, "pair not set");
    const double mixed = bsrmv_matrix_spmv_bytes(F);
    TU_CHECK(mixed == plain + 4.0 * (double)(in.rows + in.cols), "bytes %g vs %g", mixed, plain);

    /* SpMM is not built for the pair; x/y overlap is measured in doubles */
    double X[60], Y[60];
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1.0, F, 1, X, 60, 0.0, Y, 60, BSRMV_LAYOUT_COL),
             BSRMV_ERR_UNSUPPORTED);
    double *xy = calloc(120, sizeof *xy);
    TU_FAILS(bsrmv_spmv(BSRMV_OP_N, 1.0, F, xy, 60, 0.0, xy + 59, 60), BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, F, xy, 60, 0.0, xy + 60, 60));
    free(xy);

    /* back to float vectors: the float kernels again */
    TU_OK(bsrmv_matrix_set_vector_type(F, BSRMV_FLOAT));
    float *xf = tu_random_vector(60, BSRMV_FLOAT, 3), *yf = tu_random_vector(60, BSRMV_FLOAT, 4);
    float *y0 = tu_copy_vector(yf, 60, BSRMV_FLOAT);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, F, xf, 60, 1.0, yf, 60));
    tu_check_result("float again", F, BSRMV_OP_N, 1.0, xf, 1.0, y0, yf);
    free(xf);
    free(yf);
    free(y0);

    /* conversion: rounding, overflow, NaN passing through, a float -> double copy */
    const int64_t *rp;
    const int32_t *ci;
    const void *dv, *fv;
    bsrmv_matrix *C;
    TU_OK(bsrmv_matrix_convert(&C, D, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_arrays(D, &rp, &ci, &dv));
    TU_OK(bsrmv_matrix_arrays(C, &rp, &ci, &fv));
    TU_OK(bsrmv_matrix_get_info(C, &in));
    TU_CHECK(in.type == BSRMV_FLOAT && in.vector_type == BSRMV_FLOAT && in.owns_arrays == 1,
             "converted handle");
    for (int64_t k = 0; k < in.nnzb * 9; k++)
        TU_CHECK(((const float *)fv)[k] == (float)((const double *)dv)[k], "entry %lld",
                 (long long)k);
    bsrmv_matrix *W;
    TU_OK(bsrmv_matrix_convert(&W, C, BSRMV_DOUBLE));
    TU_OK(bsrmv_matrix_arrays(W, &rp, &ci, &dv));
    for (int64_t k = 0; k < in.nnzb * 9; k++)
        TU_CHECK(((const double *)dv)[k] == (double)((const float *)fv)[k], "widened %lld",
                 (long long)k);
    bsrmv_matrix_destroy(W);
    bsrmv_matrix_destroy(C);

    int64_t rp1[2] = {0, 1};
    int32_t ci1[1] = {0};
    double big[4] = {1.0, 3.5e38, -1.0, 2.0};
    bsrmv_matrix *B1;
    TU_OK(bsrmv_matrix_create(&B1, 1, 1, 2, 1, rp1, ci1, big, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    C = (bsrmv_matrix *)1;
    TU_FAILS(bsrmv_matrix_convert(&C, B1, BSRMV_FLOAT), BSRMV_ERR_OVERFLOW);
    TU_CHECK(C == NULL, "handle not cleared on failure");
    bsrmv_matrix_destroy(B1);
    big[1] = NAN;
    big[2] = 3.4e38; /* rounds to FLT_MAX, not beyond */
    TU_OK(bsrmv_matrix_create(&B1, 1, 1, 2, 1, rp1, ci1, big, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    TU_OK(bsrmv_matrix_convert(&C, B1, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_get_info(C, &in));
    TU_CHECK(in.order == BSRMV_ROW_MAJOR, "order not kept");
    TU_OK(bsrmv_matrix_arrays(C, &rp, &ci, &fv));
    TU_CHECK(isnan(((const float *)fv)[1]) && isfinite(((const float *)fv)[2]), "NaN/large");
    bsrmv_matrix_destroy(C);
    bsrmv_matrix_destroy(B1);
    TU_FAILS(bsrmv_matrix_convert(NULL, D, BSRMV_FLOAT), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_convert(&C, NULL, BSRMV_FLOAT), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_convert(&C, D, (bsrmv_type)5), BSRMV_ERR_ARGUMENT);

    bsrmv_matrix_destroy(D);
    bsrmv_matrix_destroy(F);
}

int main(void)
{
    test_handle();
    test_block_sizes();
    printf("test_mixed: ok\n");
    return 0;
}
