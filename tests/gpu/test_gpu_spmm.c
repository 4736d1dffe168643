/* GPU SpMM (bsrmv_gpu_spmm) against k separate reference SpMVs (the
 * long-double loop of testutil, one column at a time): every bs with a
 * compile-time SpMM kernel (1..8) and runtime ones (11, 12, 16, 40: the
 * last larger than a warp's group), k in {1, 2, 3, 4, 7, 8, 16, 32, 33}
 * (every chunk width, full and partial, several passes), both layouts with
 * leading dimensions larger than needed (odd ones, so that the vector
 * loads of X are off as well as on), both block orders, the types double,
 * float and mixed (float values with double X and Y, against the reference
 * of the float-rounded values within the double bound; X with bits below
 * float precision, so that a kernel that rounded X or its sums to float
 * fails; runtime bs up to 32, the most the device handle takes for the
 * pair), both ops, alpha/beta in {0, 1, -2.5}, Y poisoned with NaN where
 * beta == 0 and its padding checked untouched; empty rows, one block row,
 * non-square shapes, a long row; then the bad calls (k < 1, ld too small,
 * overlap, measured in the vector type for mixed, NULL, host pointers);
 * symmetric storage on its own arrays and through its full copy against
 * the full storage (test_sym).  Exit 77 (skipped) without a CUDA device. */
#include "testutil.h"
#include "testutil_complex.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

static const double coefs[] = {0.0, 1.0, -2.5};
static const int ks[] = {1, 2, 3, 4, 7, 8, 16, 32, 33};
#define NK ((int)(sizeof ks / sizeof ks[0]))
static const int ks_few[] = {1, 4, 8, 19};
#define NK_FEW ((int)(sizeof ks_few / sizeof ks_few[0]))
static long calls;

/* One call checked column by column; pad: extra leading dimension. */
static void run_one(const char *what, const bsrmv_matrix *A, const bsrmv_gpu_matrix *dA,
                    bsrmv_op op, bsrmv_layout lay, int k, int64_t pad, double alpha, double beta,
                    uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    const int64_t ldx = (lay == BSRMV_LAYOUT_COL ? nx : k) + pad;
    const int64_t ldy = (lay == BSRMV_LAYOUT_COL ? ny : k) + pad + 1;
    const int64_t ex = tu_mv_span(lay, nx, k, ldx) + 1, ey = tu_mv_span(lay, ny, k, ldy) + 1;
    /* X, Y in the vector type (double for mixed) */
    const bsrmv_type vt = in.vector_type;
    const bool mixed = vt != in.type;
    const size_t vs = bsrmv_type_size(vt);
    void *X = tu_random_vector(ex, vt, seed);
    if (mixed)
        for (int64_t e = 0; e < ex; e++)
            ((double *)X)[e] *= 1.0 + 0x1p-30 * (double)(e % 7);
    void *Y0 = beta == 0 ? tu_nan_vector(ey, vt) : tu_random_vector(ey, vt, seed + 1);
    void *Y = malloc((size_t)ey * vs);
    TU_CHECK(Y, "out of memory");
    void *dX = tu_to_device(X, (size_t)ex * vs), *dY = tu_to_device(Y0, (size_t)ey * vs);
    bsrmv_status s = bsrmv_gpu_spmm(op, alpha, dA, k, dX, ldx, beta, dY, ldy, lay, NULL);
    const char *ls = lay == BSRMV_LAYOUT_ROW ? "row" : "col";
    TU_CHECK(s == BSRMV_SUCCESS, "%s: k=%d %s layout: %s", what, k, ls, bsrmv_last_error());
    TU_OK(bsrmv_gpu_to_host(Y, dY, (size_t)ey * vs));
    char name[256];
    for (int j = 0; j < k; j++) {
        void *xj = tu_mv_column(X, vt, lay, nx, j, ldx);
        void *y0j = tu_mv_column(Y0, vt, lay, ny, j, ldy);
        void *yj = tu_mv_column(Y, vt, lay, ny, j, ldy);
        snprintf(name, sizeof name, "gpu %s, bs=%d %s %s op=%c, k=%d, %s layout, alpha=%g beta=%g, vector %d",
                 what, in.bs, mixed ? "mixed" : in.type == BSRMV_DOUBLE ? "double" : "float",
                 in.order == BSRMV_COL_MAJOR ? "col" : "row", op == BSRMV_OP_N ? 'N' : 'T', k, ls,
                 alpha, beta, j);
        tu_check_result(name, A, op, alpha, xj, beta, y0j, yj);
        free(xj);
        free(y0j);
        free(yj);
    }
    bool *inside = calloc((size_t)ey, sizeof *inside);
    TU_CHECK(inside, "out of memory");
    for (int64_t i = 0; i < ny; i++)
        for (int j = 0; j < k; j++)
            inside[tu_mv_at(lay, i, j, ldy)] = true;
    for (int64_t e = 0; e < ey; e++)
        TU_CHECK(inside[e] || !memcmp((char *)Y + e * vs, (char *)Y0 + e * vs, vs),
                 "%s: k=%d: padding entry %lld of Y written", what, k, (long long)e);
    free(inside);
    bsrmv_gpu_free(dX);
    bsrmv_gpu_free(dY);
    free(X);
    free(Y0);
    free(Y);
    calls++;
}

static void run_cases(const char *what, const bsrmv_matrix *A, uint64_t seed, bool few)
{
    bsrmv_gpu_matrix *dA = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    int c = (int)(seed % 9);
    const int *kl = few ? ks_few : ks;
    const int nk = few ? NK_FEW : NK;
    for (int op = 0; op < 2; op++)
        for (int lay = 0; lay < 2; lay++)
            for (int q = 0; q < nk; q++, c++) {
                const double alpha = coefs[c % 3], beta = coefs[(c / 3) % 3];
                /* pads 0, 1, 2: ld k (vector loads of X where aligned) and odd ones */
                run_one(what, A, dA, (bsrmv_op)op, (bsrmv_layout)lay, kl[q], q % 3, alpha, beta,
                        seed + 100 * (uint64_t)q);
            }
    bsrmv_gpu_matrix_destroy(dA);
}

/* The float copy of A set to double vectors. */
static bsrmv_matrix *mixed_of(const bsrmv_matrix *A)
{
    bsrmv_matrix *M;
    TU_OK(bsrmv_matrix_convert(&M, A, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_set_vector_type(M, BSRMV_DOUBLE));
    return M;
}

/* double, float, then mixed (t == 2: the float-rounded double matrix with
 * double vectors; the device handle takes the pair up to bs 32) */
static void run_all(const char *what, const tu_shape *sh, uint64_t seed, bool few)
{
    for (int t = 0; t < 3; t++) {
        if (t == 2 && sh->bs > 32)
            break;
        bsrmv_matrix *A = tu_random_bsr(sh, t == 2 ? BSRMV_DOUBLE : (bsrmv_type)t,
                                        BSRMV_COL_MAJOR, seed);
        bsrmv_matrix *B = tu_reorder(A, BSRMV_ROW_MAJOR);
        if (t == 2) {
            bsrmv_matrix *MA = mixed_of(A), *MB = mixed_of(B);
            bsrmv_matrix_destroy(A);
            bsrmv_matrix_destroy(B);
            A = MA;
            B = MB;
        }
        run_cases(what, A, seed, few);
        run_cases(what, B, seed + 7, few);
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(B);
    }
}

static void test_block_sizes(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 16, 40};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int bs = sizes[q];
        const uint64_t seed = 3000 + (uint64_t)bs;
        tu_shape small = {13, 9, bs, 3.0, 0.2, -1, 0};
        run_all("small non-square", &small, seed, false);
        tu_shape one = {1, 17, bs, 6.0, 0.0, -1, 0};
        run_all("one block row", &one, seed + 11, true);
        /* Many block rows (several thread blocks), one of them long. */
        const int64_t mb = 20000 / ((int64_t)bs * bs * 4) + 40;
        tu_shape big = {mb, mb + 3, bs, 5.0, 0.05, mb / 2, mb < 120 ? mb : 120};
        run_all("many rows, long row", &big, seed + 13, true);
        printf("bs=%d: ok (%ld calls so far)\n", bs, calls);
        fflush(stdout);
    }
}

/* Symmetric storage on its own arrays (a SYM kernel set, so the full copy
 * is not used: the SpMM's two passes over the stored blocks) against the
 * full storage: double and float, both orders, bs 1-8 (the staged kernel
 * and the transpose kernel's compile-time sizes) and 11, 16 (runtime bs),
 * ops N and T (A^T = A), a fifth of the rows empty, one block row, many
 * rows with a long one; then the plan's choice (the full copy where it
 * fits the L2) on the small matrix. */
static void test_sym(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 16};
    const bsrmv_gpu_config symk = {BSRMV_GPU_SYM_ATOMIC, 32, 2, 256, 0};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int bs = sizes[q];
        const int64_t mb = 20000 / ((int64_t)bs * bs * 4) + 40;
        const tu_shape shapes[] = {{11, 11, bs, 3.0, 0.2, -1, 0},
                                   {1, 1, bs, 1.0, 0.0, -1, 0},
                                   {mb, mb, bs, 5.0, 0.05, mb / 2, mb < 120 ? mb : 120}};
        for (int t = 0; t < 2; t++)
            for (int o = 0; o < 2; o++)
                for (int h = 0; h < 3; h++) {
                    const uint64_t seed = 7000 + 10 * (uint64_t)bs + 4 * (uint64_t)h + 2 * t + o;
                    bsrmv_matrix *S = tu_random_sym(&shapes[h], (bsrmv_type)t, (bsrmv_order)o,
                                                    BSRMV_SYM_SYMMETRIC, seed, h == 1);
                    bsrmv_matrix *R;
                    TU_OK(bsrmv_matrix_from_sym(&R, S));
                    bsrmv_gpu_matrix *dS = NULL;
                    TU_OK(bsrmv_gpu_matrix_upload(&dS, S, 0, NULL));
                    for (int plan = 0; plan < (h == 0 ? 2 : 1); plan++) {
                        TU_OK(bsrmv_gpu_matrix_set_config(dS, plan ? NULL : &symk));
                        int c = (int)(seed % 9);
                        for (int op = 0; op < 2; op++)
                            for (int lay = 0; lay < 2; lay++)
                                for (int k = 0; k < NK_FEW; k++, c++)
                                    run_one(plan ? "symmetric storage, plan" : "symmetric storage",
                                            R, dS, (bsrmv_op)op, (bsrmv_layout)lay, ks_few[k],
                                            k % 3, coefs[c % 3], coefs[(c / 3) % 3],
                                            seed + 100 * (uint64_t)k);
                    }
                    bsrmv_gpu_matrix_destroy(dS);
                    bsrmv_matrix_destroy(R);
                    bsrmv_matrix_destroy(S);
                }
        printf("symmetric storage, bs=%d: ok\n", bs);
        fflush(stdout);
    }
}

static void test_edge_shapes(void)
{
    tu_shape empty = {6, 5, 3, 0.0, 1.0, -1, 0};
    run_all("all rows empty", &empty, 5, true);
}

/* alpha == 0: A full of NaN, X NULL, Y = beta*Y; beta == 0 clears NaN. */
static void test_alpha_zero(void)
{
    int64_t rp[3] = {0, 1, 2};
    int32_t ci[2] = {1, 0};
    double val[8];
    for (int i = 0; i < 8; i++)
        val[i] = NAN;
    bsrmv_matrix *A = NULL;
    bsrmv_gpu_matrix *dA = NULL;
    TU_OK(bsrmv_matrix_wrap(&A, 2, 2, 2, 2, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    double Y[12], back[12];
    for (int i = 0; i < 12; i++)
        Y[i] = i + 1;
    void *dY = tu_to_device(Y, sizeof Y);
    TU_OK(bsrmv_gpu_spmm(BSRMV_OP_N, 0.0, dA, 3, NULL, 4, -2.5, dY, 4, BSRMV_LAYOUT_COL, NULL));
    TU_OK(bsrmv_gpu_to_host(back, dY, sizeof back));
    for (int i = 0; i < 12; i++)
        TU_CHECK(back[i] == -2.5 * (i + 1), "Y[%d] = %g", i, back[i]);
    for (int i = 0; i < 12; i++)
        Y[i] = NAN;
    TU_OK(bsrmv_gpu_to_device(dY, Y, sizeof Y));
    TU_OK(bsrmv_gpu_spmm(BSRMV_OP_T, 0.0, dA, 3, NULL, 3, 0.0, dY, 3, BSRMV_LAYOUT_ROW, NULL));
    TU_OK(bsrmv_gpu_to_host(back, dY, sizeof back));
    for (int i = 0; i < 12; i++)
        TU_CHECK(back[i] == 0.0, "Y[%d] = %g", i, back[i]);
    bsrmv_gpu_free(dY);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_matrix_destroy(A);
}

static void test_bad_calls(void)
{
    tu_shape sh = {4, 3, 2, 2.0, 0.0, -1, 0}; /* 8 x 6 */
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 9);
    bsrmv_gpu_matrix *dA = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    void *dbuf = NULL;
    TU_OK(bsrmv_gpu_malloc(&dbuf, 256 * sizeof(double)));
    TU_CHECK(cudaMemset(dbuf, 0, 256 * sizeof(double)) == cudaSuccess, "cudaMemset");
    double *X = dbuf, *Y = (double *)dbuf + 128;
    double hX[64] = {0}, hY[64] = {0};
    const bsrmv_layout C = BSRMV_LAYOUT_COL, R = BSRMV_LAYOUT_ROW;
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 0, X, 6, 0, Y, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, X, 5, 0, Y, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 3, X, 3, 0, Y, 2, R, NULL), BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "ldy") != NULL, "message: %s", bsrmv_last_error());
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, X, 8, 0, X, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "overlap") != NULL, "message: %s", bsrmv_last_error());
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, X + 10, 6, 0, X, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, X + 16, 6, 0, X, 8, C, NULL));
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, NULL, 2, X, 6, 0, Y, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, NULL, 6, 0, Y, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, X, 6, 0, NULL, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm((bsrmv_op)5, 1, dA, 2, X, 6, 0, Y, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, X, 6, 0, Y, 8, (bsrmv_layout)9, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 4, X, INT64_MAX / 2, 0, Y, 8, C, NULL),
             BSRMV_ERR_OVERFLOW);
    /* host memory for X or Y */
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, hX, 6, 0, Y, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dA, 2, X, 6, 0, hY, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_T, 1, dA, 3, hX, 3, 0, Y, 3, R, NULL), BSRMV_ERR_ARGUMENT);
    /* mixed: X and Y are double, so the overlap is measured in doubles (8 x
     * 2 values of Y from X + 16 reach X + 32; as floats they would end at
     * X + 24) and the ld check is the same */
    bsrmv_matrix *M = mixed_of(A);
    bsrmv_gpu_matrix *dM = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dM, M, 0, NULL));
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dM, 2, X + 28, 6, 0, X + 16, 8, C, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "overlap") != NULL, "message: %s", bsrmv_last_error());
    TU_OK(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dM, 2, X + 32, 6, 0, X + 16, 8, C, NULL));
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dM, 2, X, 5, 0, Y, 8, C, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_T, 1, dM, 3, hX, 3, 0, Y, 3, R, NULL), BSRMV_ERR_ARGUMENT);
    bsrmv_gpu_matrix_destroy(dM);
    bsrmv_matrix_destroy(M);
    /* symmetric storage on its own arrays (a SYM kernel set): the overlap
     * check as for full storage */
    bsrmv_matrix *L, *S;
    TU_OK(bsrmv_generate_block_laplacian(&L, 4, 3, 2, 2, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_to_sym(&S, L, 1e-14));
    bsrmv_gpu_matrix *dS = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dS, S, 0, NULL));
    const bsrmv_gpu_config sym = {BSRMV_GPU_SYM_ATOMIC, 32, 16, 256, 0};
    TU_OK(bsrmv_gpu_matrix_set_config(dS, &sym));
    TU_FAILS(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dS, 2, X, 48, 0, X + 40, 48, C, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_gpu_spmm(BSRMV_OP_N, 1, dS, 2, X, 48, 0, Y, 48, C, NULL));
    bsrmv_gpu_matrix_destroy(dS);
    bsrmv_matrix_destroy(S);
    bsrmv_matrix_destroy(L);
    bsrmv_gpu_free(dbuf);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    test_bad_calls();
    printf("bad calls: ok\n");
    test_alpha_zero();
    test_edge_shapes();
    printf("alpha == 0, empty rows: ok\n");
    test_block_sizes();
    test_sym();
    printf("test_gpu_spmm: all %ld calls passed\n", calls);
    return 0;
}
