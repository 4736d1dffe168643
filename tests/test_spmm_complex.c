/* CPU SpMM of complex matrices against k long double complex reference
 * SpMVs, one column at a time (testutil_complex): double and float
 * complex, both block orders, OP_N, OP_T and OP_C, full, symmetric and
 * Hermitian storage; bs 1..8 (compile-time kernels) and 12 (generic bs),
 * the generic kernel forced as well; k in {1, 3, 5, 17} (one width alone
 * and op N's splits 2 + 1, 4 + 1, 16 + 1), both layouts with leading
 * dimensions larger than needed; complex alpha and beta through
 * bsrmv_spmm_scalars (0, 1 and a complex value) and real ones through
 * bsrmv_spmm; Y poisoned with NaN where beta == 0 and its padding checked
 * untouched; empty rows, one block row, non-square shapes, and enough
 * rows for several threads with a long row cut between them. */
#include "testutil_complex.h"

#include <math.h>
#include <omp.h>
#include <string.h>

static const double _Complex coefs[] = {0.0, 1.0, -1.5 + 0.75 * I};
static const int ks[] = {1, 3, 5, 17};
#define NK ((int)(sizeof ks / sizeof ks[0]))

/* One SpMM call (scalars: through bsrmv_spmm_scalars, else bsrmv_spmm
 * with the real parts) checked column by column against the products of
 * R (A's full storage); pad: extra leading dimension. */
static void run_one(const char *what, const bsrmv_matrix *A, const bsrmv_matrix *R, bsrmv_op op,
                    bsrmv_layout lay,
                    int k, int64_t pad, double _Complex alpha, double _Complex beta,
                    bool scalars, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    const int64_t ldx = (lay == BSRMV_LAYOUT_COL ? nx : k) + pad;
    const int64_t ldy = (lay == BSRMV_LAYOUT_COL ? ny : k) + pad + 1;
    const int64_t ex = tu_mv_span(lay, nx, k, ldx), ey = tu_mv_span(lay, ny, k, ldy);
    const bsrmv_type vt = in.vector_type;
    if (!scalars) {
        alpha = creal(alpha);
        beta = creal(beta);
    }
    tu_scalar a, b;
    const tu_ldc ar = tu_put_scalar(&a, vt, alpha), br = tu_put_scalar(&b, vt, beta);
    void *X = tu_random_vector(ex + 1, vt, seed);
    void *Y0 = beta == 0 ? tu_nan_vector(ey + 1, vt) : tu_random_vector(ey + 1, vt, seed + 1);
    void *Y = tu_copy_vector(Y0, ey + 1, vt);
    const bsrmv_status s = scalars ? bsrmv_spmm_scalars(op, &a, A, k, X, ldx, &b, Y, ldy, lay)
                                   : bsrmv_spmm(op, creal(alpha), A, k, X, ldx, creal(beta), Y,
                                                ldy, lay);
    TU_CHECK(s == BSRMV_SUCCESS, "%s: %s k=%d %s layout: %s", what, tu_op_name(op), k,
             lay == BSRMV_LAYOUT_ROW ? "row" : "col", bsrmv_last_error());
    char name[200];
    for (int j = 0; j < k; j++) {
        void *xj = tu_mv_column(X, vt, lay, nx, j, ldx);
        void *y0j = tu_mv_column(Y0, vt, lay, ny, j, ldy);
        void *yj = tu_mv_column(Y, vt, lay, ny, j, ldy);
        snprintf(name, sizeof name, "%s, k=%d, %s layout, vector %d", what, k,
                 lay == BSRMV_LAYOUT_ROW ? "row" : "col", j);
        tu_check_complex(name, R, op, ar, xj, br, y0j, yj);
        free(xj);
        free(y0j);
        free(yj);
    }
    tu_check_mv_padding(what, Y, Y0, vt, lay, ny, k, ldy);
    free(X);
    free(Y0);
    free(Y);
}

/* Every op, layout and k on A; alpha/beta rotate through the nine pairs,
 * one call in four with real scalars through bsrmv_spmm. */
static void run_cases(const char *what, const bsrmv_matrix *A, const bsrmv_matrix *R,
                      uint64_t seed)
{
    int c = (int)(seed % 9);
    for (int op = 0; op < 3; op++)
        for (int lay = 0; lay < 2; lay++)
            for (int q = 0; q < NK; q++, c++)
                run_one(what, A, R, (bsrmv_op)op, (bsrmv_layout)lay, ks[q], 1 + q % 3,
                        coefs[c % 3], coefs[(c / 3) % 3], c % 4 != 0,
                        seed + 100 * (uint64_t)q);
}

/* Both complex types and orders, full storage of the shape and, where it
 * is square, its symmetric and Hermitian storage; `generic`: the
 * generic-bs kernels as well. */
static void run_all(const char *what, const tu_shape *sh, uint64_t seed, bool generic)
{
    static const bsrmv_type types[] = {BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT};
    char name[160];
    for (int t = 0; t < 2; t++)
        for (int o = 0; o < 2; o++) {
            bsrmv_matrix *M[3] = {tu_random_bsr(sh, types[t], (bsrmv_order)o, seed), NULL, NULL};
            if (sh->mb == sh->nb) {
                M[1] = tu_random_sym(sh, types[t], (bsrmv_order)o, BSRMV_SYM_SYMMETRIC, seed + 1,
                                     false);
                M[2] = tu_random_sym(sh, types[t], (bsrmv_order)o, BSRMV_SYM_HERMITIAN, seed + 2,
                                     true);
            }
            static const char *const storage[] = {"full", "symmetric", "Hermitian"};
            for (int m = 0; m < 3 && M[m]; m++) {
                bsrmv_matrix *R = M[m];
                if (m > 0)
                    TU_OK(bsrmv_matrix_from_sym(&R, M[m]));
                for (int g = 0; g < (generic ? 2 : 1); g++) {
                    TU_OK(bsrmv_matrix_set_cpu_kernel(M[m], (bsrmv_cpu_kernel)g));
                    snprintf(name, sizeof name, "%s, %s storage%s", what, storage[m],
                             g ? ", generic kernel" : "");
                    run_cases(name, M[m], R, seed + 31 * (uint64_t)(m + 3 * g));
                }
                if (R != M[m])
                    bsrmv_matrix_destroy(R);
            }
            for (int m = 0; m < 3; m++)
                bsrmv_matrix_destroy(M[m]);
        }
}

static void test_block_sizes(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 12};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int bs = sizes[q];
        const uint64_t seed = 3000 + (uint64_t)bs;
        /* Square (for the symmetric storages), a fifth of the rows empty. */
        tu_shape square = {11, 11, bs, 3.0, 0.2, -1, 0};
        run_all("small square", &square, seed, true);
        tu_shape wide = {9, 14, bs, 3.0, 0.2, -1, 0};
        run_all("non-square", &wide, seed + 5, false);
        tu_shape one = {1, 13, bs, 6.0, 0.0, -1, 0};
        run_all("one block row", &one, seed + 11, false);
    }
    /* Several threads, one long row that the work split cuts. */
    omp_set_num_threads(3);
    for (int bs = 2; bs <= 3; bs++) {
        const int64_t mb = 6000 / ((int64_t)bs * bs * 4) + 24;
        tu_shape big = {mb, mb, bs, 4.0, 0.05, mb / 2, mb < 150 ? mb : 150};
        run_all("threaded, long row", &big, 4000 + (uint64_t)bs, false);
    }
    tu_shape empty = {6, 6, 3, 0.0, 1.0, -1, 0};
    run_all("all rows empty", &empty, 5, false);
}

static void test_bad_calls(void)
{
    tu_shape sh = {4, 3, 2, 2.0, 0.0, -1, 0};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR, 9);
    double _Complex X[16] = {0}, Y[16] = {0}, one = 1;
    TU_FAILS(bsrmv_spmm_scalars(BSRMV_OP_N, NULL, A, 2, X, 6, &one, Y, 8, BSRMV_LAYOUT_COL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm_scalars(BSRMV_OP_N, &one, A, 2, X, 6, NULL, Y, 8, BSRMV_LAYOUT_COL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmm_scalars(BSRMV_OP_N, &one, NULL, 2, X, 6, &one, Y, 8, BSRMV_LAYOUT_COL),
             BSRMV_ERR_ARGUMENT);
    /* op C's shapes are op T's: X has the 8 rows, Y the 6 columns */
    TU_FAILS(bsrmv_spmm_scalars(BSRMV_OP_C, &one, A, 2, X, 6, &one, Y, 8, BSRMV_LAYOUT_COL),
             BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_spmm_scalars(BSRMV_OP_C, &one, A, 2, X, 8, &one, Y, 6, BSRMV_LAYOUT_COL));
    TU_FAILS(bsrmv_spmm_scalars((bsrmv_op)5, &one, A, 2, X, 6, &one, Y, 8, BSRMV_LAYOUT_COL),
             BSRMV_ERR_ARGUMENT);
    /* a complex alpha of zero reads neither A nor X */
    double _Complex zero = 0, half = 0.5 * I;
    TU_OK(bsrmv_spmm_scalars(BSRMV_OP_N, &zero, A, 2, NULL, 6, &half, Y, 8, BSRMV_LAYOUT_COL));
    TU_FAILS(bsrmv_spmm_scalars(BSRMV_OP_N, &half, A, 2, NULL, 6, &half, Y, 8, BSRMV_LAYOUT_COL),
             BSRMV_ERR_ARGUMENT);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    test_bad_calls();
    test_block_sizes();
    printf("test_spmm_complex: all cases passed\n");
    return 0;
}
