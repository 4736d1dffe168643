/* Mixed precision: float values with double x, y and sums.  bsrmv_spmv on
 * such a matrix against the long-double reference of the float-rounded
 * values, within the double error bound (a float accumulation fails it):
 * every compiled bs and runtime ones, the generic kernel, both block
 * orders, both ops, alpha/beta in {0, 1, -2.5}, empty rows, one block row,
 * non-square shapes, long rows, sizes that run threaded, y poisoned with
 * NaN.  Then the handle calls (vector type, conversion, refusals, overlap
 * measured in the vector type), the
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
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 15, 16, 24, 32, 10, 13, 48};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int bs = sizes[q];
#if !defined(BSRMV_CPU_FEW_SIZES) && !defined(BSRMV_CPU_DEPTH_SIZES) /* all sizes compiled */
        TU_CHECK((q < 14) == (bsrmv_cpu_has_kernel(bs) == 1), "bs %d: compiled kernel list", bs);
#endif
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

    /* x/y (X/Y for the SpMM, tests/test_spmm.c checks its results) overlap
     * is measured in doubles */
    double *xy = calloc(120, sizeof *xy);
    TU_FAILS(bsrmv_spmv(BSRMV_OP_N, 1.0, F, xy, 60, 0.0, xy + 59, 60), BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, F, xy, 60, 0.0, xy + 60, 60));
    TU_FAILS(bsrmv_spmm(BSRMV_OP_N, 1.0, F, 1, xy, 60, 0.0, xy + 59, 60, BSRMV_LAYOUT_COL),
             BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_spmm(BSRMV_OP_N, 1.0, F, 1, xy, 60, 0.0, xy + 60, 60, BSRMV_LAYOUT_COL));
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

/* ||b - A x|| / ||b|| in long double. */
static double true_residual(const bsrmv_matrix *A, const double *b, const double *x, int64_t n)
{
    long double *ref = malloc((size_t)n * sizeof *ref), *mag = malloc((size_t)n * sizeof *mag);
    int64_t *terms = malloc((size_t)n * sizeof *terms);
    TU_CHECK(ref && mag && terms, "out of memory");
    tu_ref_spmv(A, BSRMV_OP_N, 1.0, x, 0.0, NULL, ref, mag, terms);
    long double rr = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        rr += (b[i] - ref[i]) * (b[i] - ref[i]);
        bb += (long double)b[i] * b[i];
    }
    free(ref);
    free(mag);
    free(terms);
    return (double)sqrtl(rr / bb);
}

/* A mixed matrix in bsrmv_solve: double vectors, a double block-Jacobi
 * inverse of the float values; it converges for the float-rounded matrix,
 * not for A (what refinement is for). */
static void test_solve_on_mixed(void)
{
    bsrmv_matrix *A, *M;
    TU_OK(bsrmv_generate_block_laplacian(&A, 6, 5, 5, 3, 11, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    M = mixed_of(A);
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, M));
    const int64_t n = 6 * 5 * 5 * 3;
    double *b = tu_random_vector(n, BSRMV_DOUBLE, 5), *x = calloc((size_t)n, sizeof *x);
    double *z = calloc((size_t)n, sizeof *z);
    TU_OK(bsrmv_precond_apply(P, b, z, n)); /* double vectors */
    bsrmv_solve_options o = {.rtol = 1e-10, .x0_zero = 1};
    bsrmv_solve_report rp;
    TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, M, P, b, x, n, &o, &rp));
    TU_CHECK(rp.converged && rp.true_rel_residual <= 1e-10, "mixed CG: %g", rp.true_rel_residual);
    TU_CHECK(true_residual(M, b, x, n) <= 2e-10, "against the float-rounded matrix");
    /* a float preconditioner does not fit the double vectors */
    bsrmv_matrix *F;
    bsrmv_precond *PF;
    TU_OK(bsrmv_matrix_convert(&F, A, BSRMV_FLOAT));
    TU_OK(bsrmv_precond_block_jacobi(&PF, F));
    TU_FAILS(bsrmv_solve(BSRMV_SOLVER_CG, M, PF, b, x, n, &o, &rp), BSRMV_ERR_DIMENSION);
    bsrmv_precond_destroy(PF);
    bsrmv_matrix_destroy(F);
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(M);
    bsrmv_matrix_destroy(A);
    free(b);
    free(x);
    free(z);
}

/* Refinement reaches the all-double solve's residual on the SPD and the
 * reservoir generators, with every method, and is refused or stops
 * cleanly where it should. */
static void test_refined(void)
{
    for (int spd = 0; spd < 2; spd++) {
        const int nc = spd ? 4 : 3;
        bsrmv_matrix *A;
        if (spd)
            TU_OK(bsrmv_generate_block_laplacian(&A, 10, 9, 8, nc, 3, BSRMV_DOUBLE,
                                                 BSRMV_COL_MAJOR));
        else
            TU_OK(bsrmv_generate_reservoir(&A, 10, 9, 8, nc, 3, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        bsrmv_matrix *M = mixed_of(A);
        bsrmv_precond *P, *PA;
        TU_OK(bsrmv_precond_block_jacobi(&P, M));
        TU_OK(bsrmv_precond_block_jacobi(&PA, A));
        const int64_t n = 10 * 9 * 8 * nc;
        double *b = tu_random_vector(n, BSRMV_DOUBLE, 9);
        double *x = calloc((size_t)n, sizeof *x), *xd = calloc((size_t)n, sizeof *xd);
        const int methods[] = {BSRMV_SOLVER_CG, BSRMV_SOLVER_BICGSTAB, BSRMV_SOLVER_GMRES};
        for (int k = spd ? 0 : 1; k < 3; k++) {
            const bsrmv_solver m = (bsrmv_solver)methods[k];
            bsrmv_solve_options o = {.rtol = 1e-10, .x0_zero = 1, .max_iter = 3000};
            bsrmv_solve_report rd, rm;
            TU_OK(bsrmv_solve(m, A, PA, b, xd, n, &o, &rd));
            for (int i = 0; i < n; i++)
                x[i] = NAN; /* x0_zero: never read */
            TU_OK(bsrmv_solve_refined(m, A, M, P, b, x, n, &o, &rm));
            const double got = true_residual(A, b, x, n), want = true_residual(A, b, xd, n);
            printf("refined %s method %d: %d iterations in %d corrections, residual %.2e "
                   "(double: %d iterations, %.2e)\n",
                   spd ? "SPD" : "reservoir", k, rm.iterations, rm.refinements, got,
                   rd.iterations, want);
            TU_CHECK(rm.converged && rm.refinements >= 2, "refined: %d corrections",
                     rm.refinements);
            TU_CHECK(got <= 1e-10 && fabs(got - rm.true_rel_residual) <= 1e-2 * got + 1e-15,
                     "residual %g, reported %g", got, rm.true_rel_residual);
            TU_CHECK(rm.iterations <= 2 * rd.iterations + 10, "%d iterations vs %d",
                     rm.iterations, rd.iterations);
            /* starting from the solution: converged at once */
            TU_OK(bsrmv_solve_refined(m, A, M, P, b, x, n, &(bsrmv_solve_options){.rtol = 1e-8},
                                      &rm));
            TU_CHECK(rm.refinements == 0 && rm.iterations == 0, "warm start");
        }
        /* an unreachable rtol: refinement stalls at the double floor */
        bsrmv_solve_options tight = {.rtol = 1e-19, .x0_zero = 1};
        bsrmv_solve_report rs;
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_GMRES, A, M, P, b, x, n, &tight, &rs),
                 BSRMV_ERR_NOT_CONVERGED);
        TU_CHECK(!rs.converged && rs.true_rel_residual < 1e-12, "stalled at %g",
                 rs.true_rel_residual);
        /* the iteration limit counts over all corrections */
        bsrmv_solve_options few = {.rtol = 1e-10, .x0_zero = 1, .max_iter = 3};
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_BICGSTAB, A, M, P, b, x, n, &few, &rs),
                 BSRMV_ERR_NOT_CONVERGED);
        TU_CHECK(rs.iterations <= 3, "%d iterations past the limit", rs.iterations);
        /* b == 0: x = 0 */
        double *zero = calloc((size_t)n, sizeof *zero);
        TU_OK(bsrmv_solve_refined(BSRMV_SOLVER_GMRES, A, M, NULL, zero, x, n, NULL, &rs));
        TU_CHECK(rs.converged && x[0] == 0 && x[n - 1] == 0, "b == 0");
        free(zero);
        /* refusals */
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_CG, M, M, P, b, x, n, NULL, NULL),
                 BSRMV_ERR_ARGUMENT);
        bsrmv_matrix *F;
        TU_OK(bsrmv_matrix_convert(&F, A, BSRMV_FLOAT));
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_CG, A, F, NULL, b, x, n, NULL, NULL),
                 BSRMV_ERR_ARGUMENT);
        bsrmv_matrix_destroy(F);
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_CG, A, NULL, NULL, b, x, n, NULL, NULL),
                 BSRMV_ERR_ARGUMENT);
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_CG, A, M, P, b, x, n - 1, NULL, NULL),
                 BSRMV_ERR_DIMENSION);
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_CG, A, M, P, b, x, n,
                                     &(bsrmv_solve_options){.inner_rtol = 1.5}, NULL),
                 BSRMV_ERR_ARGUMENT);
        bsrmv_matrix *S;
        TU_OK(bsrmv_generate_block_laplacian(&S, 3, 3, 3, nc, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        bsrmv_matrix *SM = mixed_of(S);
        TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_CG, A, SM, NULL, b, x, n, NULL, NULL),
                 BSRMV_ERR_DIMENSION);
        bsrmv_matrix_destroy(SM);
        bsrmv_matrix_destroy(S);
        bsrmv_precond_destroy(PA);
        bsrmv_precond_destroy(P);
        bsrmv_matrix_destroy(M);
        bsrmv_matrix_destroy(A);
        free(b);
        free(x);
        free(xd);
    }
}

/* bsrmv_matrix_convert keeps what the values do not decide: a 32-bit
 * row_ptr stays 32-bit and read correctly, symmetric storage stays
 * symmetric (its product uses both triangles). */
static void test_convert_keeps(void)
{
    tu_shape sh = {60, 60, 3, 4.0, 0.1, -1, 0};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 77);
    bsrmv_matrix *N = tu_narrow(A), *C;
    TU_OK(bsrmv_matrix_convert(&C, N, BSRMV_FLOAT));
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(C, &in));
    TU_CHECK(in.index == BSRMV_INDEX_32 && in.type == BSRMV_FLOAT, "convert of an int32 row_ptr");
    int64_t n = in.rows;
    void *x = tu_random_vector(n, BSRMV_FLOAT, 78), *y = tu_nan_vector(n, BSRMV_FLOAT);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, C, x, n, 0.0, y, n));
    tu_check_result("convert int32 row_ptr", C, BSRMV_OP_N, 1.0, x, 0.0, NULL, y);
    free(x);
    free(y);
    bsrmv_matrix_destroy(C);
    bsrmv_matrix_destroy(N);
    bsrmv_matrix *F, *S, *SF, *FF;
    TU_OK(bsrmv_generate_block_laplacian(&F, 6, 5, 4, 3, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_to_sym(&S, F, 1e-14));
    TU_OK(bsrmv_matrix_convert(&SF, S, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_get_info(SF, &in));
    TU_CHECK(in.symmetric == 1, "convert dropped symmetric storage");
    TU_OK(bsrmv_matrix_convert(&FF, F, BSRMV_FLOAT));
    n = in.rows;
    x = tu_random_vector(n, BSRMV_FLOAT, 79);
    y = tu_nan_vector(n, BSRMV_FLOAT);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, SF, x, n, 0.0, y, n));
    tu_check_result("convert of symmetric storage", FF, BSRMV_OP_N, 1.0, x, 0.0, NULL, y);
    free(x);
    free(y);
    bsrmv_matrix_destroy(FF);
    bsrmv_matrix_destroy(SF);
    bsrmv_matrix_destroy(S);
    bsrmv_matrix_destroy(F);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    test_convert_keeps();
    test_handle();
    test_solve_on_mixed();
    test_refined();
    test_block_sizes();
    printf("test_mixed: ok\n");
    return 0;
}
