/* GPU SpMM of complex matrices (bsrmv_gpu_spmm_scalars, bsrmv_gpu_spmm)
 * against k long double complex reference SpMVs, one column at a time
 * (testutil_complex): double and float complex, both block orders, OP_N,
 * OP_T and OP_C; bs 1..8 (the staged kernel) and 11, 16, 32 (the
 * runtime-bs kernel); k in {1, 2, 3, 4, 7, 8, 16, 17, 33} (every chunk
 * width, full and partial, several chunks), both layouts with leading
 * dimensions larger than needed (odd and even pads, so that the vector
 * loads of X are off as well as on); complex alpha and beta (0, 1 and a
 * complex value), one call in four with real ones through bsrmv_gpu_spmm;
 * Y poisoned with NaN where beta == 0 and its padding checked untouched;
 * empty rows, one block row, non-square shapes, a long row; complex
 * symmetric and Hermitian storage through the full copy the handle keeps
 * and on their own arrays (every op: op T of Hermitian and op C of
 * symmetric storage are conj(A)); then the bad calls.  Exit 77 (skipped) without a CUDA device.
 * BSRMV_GPU_TEST_QUICK=1: fewer sizes and k. */
#include "testutil_complex.h"

#include <cuda_runtime.h>
#include <string.h>

static const double _Complex coefs[] = {0.0, 1.0, -1.5 + 0.75 * I};
static const int ks[] = {1, 2, 3, 4, 7, 8, 16, 17, 33};
#define NK ((int)(sizeof ks / sizeof ks[0]))
static const int ks_few[] = {2, 5, 16};
#define NK_FEW ((int)(sizeof ks_few / sizeof ks_few[0]))
static int quick;
static long calls;

/* One call on dA checked column by column against the products of R (A's
 * full storage); pad: extra leading dimension; scalars: complex alpha and
 * beta through bsrmv_gpu_spmm_scalars, else their real parts through
 * bsrmv_gpu_spmm. */
static void run_one(const char *what, const bsrmv_matrix *R, const bsrmv_gpu_matrix *dA,
                    bsrmv_op op, bsrmv_layout lay, int k, int64_t pad, double _Complex alpha,
                    double _Complex beta, bool scalars, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(R, &in));
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    const int64_t ldx = (lay == BSRMV_LAYOUT_COL ? nx : k) + pad;
    const int64_t ldy = (lay == BSRMV_LAYOUT_COL ? ny : k) + pad + 1;
    const int64_t ex = tu_mv_span(lay, nx, k, ldx) + 1, ey = tu_mv_span(lay, ny, k, ldy) + 1;
    const bsrmv_type vt = in.vector_type;
    const size_t vs = bsrmv_type_size(vt);
    if (!scalars) {
        alpha = creal(alpha);
        beta = creal(beta);
    }
    tu_scalar a, b;
    const tu_ldc ar = tu_put_scalar(&a, vt, alpha), br = tu_put_scalar(&b, vt, beta);
    void *X = tu_random_vector(ex, vt, seed);
    void *Y0 = beta == 0 ? tu_nan_vector(ey, vt) : tu_random_vector(ey, vt, seed + 1);
    void *Y = malloc((size_t)ey * vs);
    TU_CHECK(Y, "out of memory");
    void *dX = tu_to_device(X, (size_t)ex * vs), *dY = tu_to_device(Y0, (size_t)ey * vs);
    const bsrmv_status s =
        scalars ? bsrmv_gpu_spmm_scalars(op, &a, dA, k, dX, ldx, &b, dY, ldy, lay, NULL)
                : bsrmv_gpu_spmm(op, creal(alpha), dA, k, dX, ldx, creal(beta), dY, ldy, lay, NULL);
    const char *ls = lay == BSRMV_LAYOUT_ROW ? "row" : "col";
    TU_CHECK(s == BSRMV_SUCCESS, "%s: %s k=%d %s layout: %s", what, tu_op_name(op), k, ls,
             bsrmv_last_error());
    TU_CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s: %s k=%d: kernel failed: %s", what,
             tu_op_name(op), k, cudaGetErrorString(cudaGetLastError()));
    TU_OK(bsrmv_gpu_to_host(Y, dY, (size_t)ey * vs));
    char name[256];
    for (int j = 0; j < k; j++) {
        void *xj = tu_mv_column(X, vt, lay, nx, j, ldx);
        void *y0j = tu_mv_column(Y0, vt, lay, ny, j, ldy);
        void *yj = tu_mv_column(Y, vt, lay, ny, j, ldy);
        snprintf(name, sizeof name, "gpu %s, bs=%d %s %s, k=%d, %s layout, vector %d", what, in.bs,
                 vt == BSRMV_COMPLEX_DOUBLE ? "z" : "c", in.order == BSRMV_COL_MAJOR ? "col" : "row",
                 k, ls, j);
        tu_check_complex(name, R, op, ar, xj, br, y0j, yj);
        free(xj);
        free(y0j);
        free(yj);
    }
    tu_check_mv_padding(what, Y, Y0, vt, lay, ny, k, ldy);
    bsrmv_gpu_free(dX);
    bsrmv_gpu_free(dY);
    free(X);
    free(Y0);
    free(Y);
    calls++;
}

/* Every op and layout and the k of the list on A (R: its full storage);
 * alpha/beta rotate through the nine pairs.  cfg: a configuration set on
 * the handle (a SYM kernel: symmetric storage on its own arrays). */
static void run_cases(const char *what, const bsrmv_matrix *A, const bsrmv_matrix *R,
                      uint64_t seed, bool few, const bsrmv_gpu_config *cfg)
{
    bsrmv_gpu_matrix *dA = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    if (cfg)
        TU_OK(bsrmv_gpu_matrix_set_config(dA, cfg));
    const int *kl = few || quick ? ks_few : ks;
    const int nk = few || quick ? NK_FEW : NK;
    int c = (int)(seed % 9);
    for (int op = 0; op < 3; op++)
        for (int lay = 0; lay < 2; lay++)
            for (int q = 0; q < nk; q++, c++)
                run_one(what, R, dA, (bsrmv_op)op, (bsrmv_layout)lay, kl[q], q % 3, coefs[c % 3],
                        coefs[(c / 3) % 3], c % 4 != 0, seed + 100 * (uint64_t)q);
    bsrmv_gpu_matrix_destroy(dA);
}

/* Both complex types and orders: full storage of the shape and, with
 * `sym` (a square shape), its symmetric and Hermitian storage, through
 * the plan (the full copy of a small matrix) and on their own arrays (the
 * SpMM's two passes). */
static void run_all(const char *what, const tu_shape *sh, uint64_t seed, bool few, bool sym)
{
    const bsrmv_gpu_config symk = {BSRMV_GPU_SYM_ATOMIC, 32, 2, 256, 0};
    static const bsrmv_type types[] = {BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT};
    static const char *const storage[] = {"full", "symmetric", "Hermitian"};
    char name[160];
    for (int t = 0; t < 2; t++)
        for (int o = 0; o < 2; o++) {
            bsrmv_matrix *M[3] = {tu_random_bsr(sh, types[t], (bsrmv_order)o, seed), NULL, NULL};
            if (sym) {
                M[1] = tu_random_sym(sh, types[t], (bsrmv_order)o, BSRMV_SYM_SYMMETRIC, seed + 1,
                                     false);
                M[2] = tu_random_sym(sh, types[t], (bsrmv_order)o, BSRMV_SYM_HERMITIAN, seed + 2,
                                     true);
            }
            for (int m = 0; m < 3 && M[m]; m++) {
                bsrmv_matrix *R = M[m];
                if (m > 0)
                    TU_OK(bsrmv_matrix_from_sym(&R, M[m]));
                snprintf(name, sizeof name, "%s, %s storage", what, storage[m]);
                run_cases(name, M[m], R, seed + 31 * (uint64_t)m, few || m > 0, NULL);
                if (m > 0) {
                    snprintf(name, sizeof name, "%s, %s storage on its own arrays", what,
                             storage[m]);
                    run_cases(name, M[m], R, seed + 37 * (uint64_t)m, true, &symk);
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
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 32};
    const int nsz = (int)(sizeof sizes / sizeof sizes[0]);
    for (int q = 0; q < nsz; q++) {
        const int bs = sizes[q];
        if (quick && bs != 3 && bs != 8 && bs != 11)
            continue;
        const uint64_t seed = 6000 + (uint64_t)bs;
        /* square (for the symmetric storages), a fifth of the rows empty */
        tu_shape square = {11, 11, bs, 3.0, 0.2, -1, 0};
        run_all("small square", &square, seed, false, true);
        tu_shape wide = {9, 14, bs, 3.0, 0.2, -1, 0};
        run_all("non-square", &wide, seed + 5, true, false);
        tu_shape one = {1, 13, bs, 6.0, 0.0, -1, 0};
        run_all("one block row", &one, seed + 11, true, false);
        /* many block rows (several thread blocks), one of them long */
        const int64_t mb = 20000 / ((int64_t)bs * bs * 4) + 40;
        tu_shape big = {mb, mb + 3, bs, 5.0, 0.05, mb / 2, mb < 120 ? mb : 120};
        run_all("many rows, long row", &big, seed + 13, true, false);
        tu_shape bigsq = {mb, mb, bs, 5.0, 0.05, mb / 2, mb < 120 ? mb : 120};
        run_all("many rows, square", &bigsq, seed + 17, true, true);
        printf("bs=%d: ok (%ld calls so far)\n", bs, calls);
        fflush(stdout);
    }
    tu_shape empty = {6, 6, 3, 0.0, 1.0, -1, 0};
    run_all("all rows empty", &empty, 5, true, false);
}

static void test_bad_calls(void)
{
    tu_shape sh = {4, 3, 2, 2.0, 0.0, -1, 0}; /* 8 x 6 */
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR, 9);
    bsrmv_gpu_matrix *dA = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    void *dbuf = NULL;
    TU_OK(bsrmv_gpu_malloc(&dbuf, 256 * sizeof(double _Complex)));
    TU_CHECK(cudaMemset(dbuf, 0, 256 * sizeof(double _Complex)) == cudaSuccess, "cudaMemset");
    double _Complex *X = dbuf, *Y = (double _Complex *)dbuf + 128, one = 1;
    const bsrmv_layout C = BSRMV_LAYOUT_COL;
    TU_FAILS(bsrmv_gpu_spmm_scalars(BSRMV_OP_N, NULL, dA, 2, X, 6, &one, Y, 8, C, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm_scalars(BSRMV_OP_N, &one, dA, 2, X, 6, NULL, Y, 8, C, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm_scalars(BSRMV_OP_N, &one, NULL, 2, X, 6, &one, Y, 8, C, NULL),
             BSRMV_ERR_ARGUMENT);
    /* the overlap is measured in complex values: 8 x 2 from X + 8 reach X + 24 */
    TU_FAILS(bsrmv_gpu_spmm_scalars(BSRMV_OP_N, &one, dA, 2, X + 16, 6, &one, X + 8, 8, C, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "overlap") != NULL, "message: %s", bsrmv_last_error());
    TU_OK(bsrmv_gpu_spmm_scalars(BSRMV_OP_N, &one, dA, 2, X + 24, 6, &one, X + 8, 8, C, NULL));
    TU_FAILS(bsrmv_gpu_spmm_scalars((bsrmv_op)7, &one, dA, 2, X, 6, &one, Y, 8, C, NULL),
             BSRMV_ERR_ARGUMENT);
    /* real matrices take _scalars with a value of their type; op C is op T */
    bsrmv_matrix *D = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 9);
    bsrmv_gpu_matrix *dD = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dD, D, 0, NULL));
    const double d1 = 1.0, d0 = 0.0;
    TU_OK(bsrmv_gpu_spmm_scalars(BSRMV_OP_C, &d1, dD, 2, X, 8, &d0, Y, 6, C, NULL));
    bsrmv_gpu_matrix_destroy(dD);
    bsrmv_matrix_destroy(D);
    bsrmv_gpu_free(dbuf);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    quick = tu_gpu_quick();
    test_bad_calls();
    printf("bad calls: ok\n");
    test_block_sizes();
    printf("test_gpu_spmm_complex: all %ld calls passed\n", calls);
    return 0;
}
