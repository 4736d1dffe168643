/* Grid generators: exact block counts, valid structure, diagonal
 * dominance, reproducibility from the seed, and SpMV on them. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static int64_t expected_nnzb(int64_t nx, int64_t ny, int64_t nz, int points)
{
    if (points == 27)
        return (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2);
    return nx * ny * nz + 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1));
}

static void check_grid(int64_t nx, int64_t ny, int64_t nz, int bs, int points,
                       bsrmv_type t)
{
    bsrmv_matrix *A = NULL, *B = NULL, *C = NULL;
    TU_OK(bsrmv_generate_grid(&A, nx, ny, nz, bs, points, 42, t, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_generate_grid(&B, nx, ny, nz, bs, points, 42, t, BSRMV_ROW_MAJOR));
    TU_OK(bsrmv_generate_grid(&C, nx, ny, nz, bs, points, 43, t, BSRMV_COL_MAJOR));
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    TU_CHECK(in.nnzb == expected_nnzb(nx, ny, nz, points), "nnzb %lld, wanted %lld",
             (long long)in.nnzb, (long long)expected_nnzb(nx, ny, nz, points));
    TU_CHECK(in.row_len_max == (nx > 2 && ny > 2 && nz > 2 ? points : in.row_len_max),
             "interior rows must have %d blocks", points);
    const int64_t *rp;
    const int32_t *ci;
    const void *va, *vb, *vc;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &va));
    TU_OK(bsrmv_check_bsr(in.mb, in.nb, bs, in.nnzb, rp, ci, NULL));
    TU_OK(bsrmv_matrix_arrays(B, &rp, &ci, &vb));
    TU_OK(bsrmv_matrix_arrays(C, &rp, &ci, &vc));
    /* Same seed, other order: the same matrix (transposed storage of each block). */
    int64_t bs2 = (int64_t)bs * bs, differ = 0;
    for (int64_t k = 0; k < in.nnzb; k++)
        for (int r = 0; r < bs; r++)
            for (int c = 0; c < bs; c++) {
                double a = tu_get(va, t, k * bs2 + c * bs + r);
                double b = tu_get(vb, t, k * bs2 + r * bs + c);
                TU_CHECK(a == b, "orders disagree at block %lld (%d,%d)", (long long)k, r, c);
                differ += a != tu_get(vc, t, k * bs2 + c * bs + r);
            }
    TU_CHECK(differ > in.nnzb * bs2 / 2, "another seed gave nearly the same values");
    /* Strict diagonal dominance by rows. */
    for (int64_t i = 0; i < in.mb; i++)
        for (int r = 0; r < bs; r++) {
            double diag = 0, off = 0;
            for (int64_t k = rp[i]; k < rp[i + 1]; k++)
                for (int c = 0; c < bs; c++) {
                    double a = tu_get(va, t, k * bs2 + c * bs + r);
                    if (ci[k] == i && c == r)
                        diag = a;
                    else
                        off += fabs(a);
                }
            TU_CHECK(diag > off, "row %lld: diagonal %g <= off-diagonal sum %g",
                     (long long)(i * bs + r), diag, off);
        }
    /* A second call with the same seed reproduces every value. */
    bsrmv_matrix *D = NULL;
    const void *vd;
    TU_OK(bsrmv_generate_grid(&D, nx, ny, nz, bs, points, 42, t, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_arrays(D, &rp, &ci, &vd));
    TU_CHECK(memcmp(va, vd, (size_t)(in.nnzb * bs2) * bsrmv_type_size(t)) == 0,
             "same seed, different values");
    void *x = tu_random_vector(in.cols, t, 3);
    void *y = tu_nan_vector(in.rows, t);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, A, x, in.cols, 0.0, y, in.rows));
    tu_check_result("grid", A, BSRMV_OP_N, 1.0, x, 0.0, NULL, y);
    free(x);
    free(y);
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(B);
    bsrmv_matrix_destroy(C);
    bsrmv_matrix_destroy(D);
}

int main(void)
{
    check_grid(1, 1, 1, 3, 27, BSRMV_DOUBLE);
    check_grid(5, 4, 3, 2, 27, BSRMV_DOUBLE);
    check_grid(5, 4, 3, 2, 7, BSRMV_FLOAT);
    check_grid(12, 11, 10, 3, 27, BSRMV_DOUBLE);
    check_grid(9, 1, 7, 5, 7, BSRMV_DOUBLE);
    check_grid(4, 4, 4, 16, 27, BSRMV_FLOAT);
    bsrmv_matrix *A = NULL;
    TU_FAILS(bsrmv_generate_grid(&A, 0, 4, 4, 2, 27, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_generate_grid(&A, 4, 4, 4, 2, 9, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_generate_grid(&A, 4, 4, 4, 0, 7, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_generate_grid(&A, 1 << 20, 1 << 20, 1 << 20, 2, 7, 1, BSRMV_DOUBLE,
                                 BSRMV_COL_MAJOR), BSRMV_ERR_OVERFLOW);
    TU_CHECK(A == NULL, "handle set on failure");
    printf("test_generate: all passed\n");
    return 0;
}
