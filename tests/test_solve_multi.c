/* Several right-hand sides (bsrmv_solve_multi): every column must be what
 * bsrmv_solve gives for it alone (iterations within 1, unpreconditioned
 * BiCGSTAB within the SpMM's rounding; the same solution within a
 * tolerance far below rtol's effect; without SpMM the same bits), checked
 * by an independent long-double residual; columns that converge at different iterations (a
 * tiny one, a zero one, a point source), padding of ld untouched, X
 * poisoned where it is output only; symmetric storage (the stored half's
 * SpMM) and mixed precision (the float-value SpMM);
 * non-convergence of some columns; bad arguments. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const char *const method_name[] = {"cg", "bicgstab", "gmres"};

#define PAD_VALUE 7.25

/* Column j of B: random; 1: scaled by 1e-8; 2: zero; 3: a point source. */
static void fill_column(void *col, int64_t n, bsrmv_type t, int j, uint64_t seed)
{
    const size_t vs = bsrmv_type_size(t);
    void *r = tu_random_vector(n, t, seed + (uint64_t)j);
    memcpy(col, r, (size_t)n * vs);
    free(r);
    for (int64_t i = 0; i < n; i++) {
        double v = tu_get(col, t, i);
        if (j == 1)
            v *= 1e-8;
        else if (j == 2 || (j == 3 && i != n / 2))
            v = 0;
        if (t == BSRMV_DOUBLE)
            ((double *)col)[i] = v;
        else
            ((float *)col)[i] = (float)v;
    }
}

static void set_value(void *v, bsrmv_type t, int64_t i, double x)
{
    if (t == BSRMV_DOUBLE)
        ((double *)v)[i] = x;
    else
        ((float *)v)[i] = (float)x;
}

/* Solves k columns together and one by one; returns the largest
 * iteration count of a column.  The residual is checked with `full` (A in
 * full storage) where given. */
static int agree_ref(bsrmv_solver m, const bsrmv_matrix *A, const bsrmv_matrix *full, int precond,
                     int k, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const bsrmv_type t = in.vector_type;
    const size_t vs = bsrmv_type_size(t);
    const int64_t n = in.rows, ldb = n + 3, ldx = n + 5;
    const double rtol = t == BSRMV_DOUBLE ? 1e-8 : 1e-5;
    bsrmv_precond *P = NULL;
    if (precond)
        TU_OK(bsrmv_precond_block_jacobi(&P, A));
    char *B = malloc((size_t)(ldb * k) * vs), *X = malloc((size_t)(ldx * k) * vs);
    TU_CHECK(B && X, "out of memory");
    for (int64_t e = 0; e < ldb * k; e++)
        set_value(B, t, e, PAD_VALUE);
    for (int64_t e = 0; e < ldx * k; e++)
        set_value(X, t, e, e % ldx < n ? NAN : PAD_VALUE); /* x0_zero: never read */
    for (int j = 0; j < k; j++)
        fill_column(B + (size_t)(j * ldb) * vs, n, t, k == 1 ? 0 : j, seed);
    char *B0 = tu_copy_vector(B, ldb * k, t);

    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 3000, .x0_zero = 1};
    bsrmv_solve_report *rep = malloc((size_t)k * sizeof *rep);
    TU_OK(bsrmv_solve_multi(m, A, P, n, k, B, ldb, X, ldx, &o, rep));
    TU_CHECK(memcmp(B, B0, (size_t)(ldb * k) * vs) == 0, "B was written");
    int most = 0;
    printf("  %-8s bs %d %-6s %s%s k %d: iterations", method_name[m], in.bs,
           t == BSRMV_DOUBLE ? "double" : "float", in.type != t ? "(mixed) " : "",
           precond ? "jacobi" : "none", k);
    void *xs = malloc((size_t)n * vs);
    for (int j = 0; j < k; j++) {
        const char *b = B + (size_t)(j * ldb) * vs, *x = X + (size_t)(j * ldx) * vs;
        for (int64_t i = n; i < ldx && j < k - 1; i++)
            TU_CHECK(tu_get(x, t, i) == PAD_VALUE, "column %d: padding of X written", j);
        bsrmv_solve_report one;
        TU_OK(bsrmv_solve(m, A, P, b, xs, n, &o, &one));
        printf(" %d", rep[j].iterations);
        /* The SpMM rounds otherwise than the SpMV (fused multiply-adds, its
         * order of sums); unpreconditioned BiCGSTAB turns that into a few
         * iterations more or fewer (as between the CPU and the GPU, see
         * tests/gpu/test_gpu_solve.c; float: 28 against 23 at bs 4), the
         * other cases into at most one. */
        const int slack = m == BSRMV_SOLVER_BICGSTAB && !precond
                              ? 2 + one.iterations / (t == BSRMV_DOUBLE ? 10 : 4)
                              : 1;
        TU_CHECK(rep[j].converged && abs(rep[j].iterations - one.iterations) <= slack,
                 "column %d: %d iterations (converged %d), alone %d", j, rep[j].iterations,
                 rep[j].converged, one.iterations);
        double dd = 0, ss = 0, bb = 0;
        for (int64_t i = 0; i < n; i++) {
            const double d = tu_get(x, t, i) - tu_get(xs, t, i);
            dd += d * d;
            ss += tu_get(xs, t, i) * tu_get(xs, t, i);
            bb += tu_get(b, t, i) * tu_get(b, t, i);
        }
        if (bb == 0) {
            TU_CHECK(rep[j].iterations == 0 && dd == 0 && ss == 0, "zero column %d: x != 0", j);
            continue;
        }
        TU_CHECK(sqrt(dd) <= (t == BSRMV_DOUBLE ? 1e-6 : 1e-2) * sqrt(ss),
                 "column %d: |x - x_alone| = %g, |x_alone| = %g", j, sqrt(dd), sqrt(ss));
        const double rel = tu_rel_residual(full ? full : A, b, x);
        TU_CHECK(rel <= 2 * rtol, "column %d: true residual %g > 2*rtol", j, rel);
        if (rep[j].iterations > most)
            most = rep[j].iterations;
    }
    printf("\n");
    free(xs);
    free(rep);
    free(B);
    free(B0);
    free(X);
    bsrmv_precond_destroy(P);
    return most;
}

static int agree(bsrmv_solver m, const bsrmv_matrix *A, int precond, int k, uint64_t seed)
{
    return agree_ref(m, A, NULL, precond, k, seed);
}

static void test_agree(void)
{
    const int ks[4] = {1, 2, 3, 8};
    for (int t = 0; t < 2; t++) {
        const bsrmv_type type = t ? BSRMV_FLOAT : BSRMV_DOUBLE;
        bsrmv_matrix *L, *R;
        TU_OK(bsrmv_generate_block_laplacian(&L, 6, 5, 5, 3, 11, type, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_generate_reservoir(&R, 8, 6, 4, 4, 21, type, BSRMV_ROW_MAJOR));
        for (int i = 0; i < 4; i++) {
            agree(BSRMV_SOLVER_CG, L, 1, ks[i], 3);
            agree(BSRMV_SOLVER_BICGSTAB, R, 1, ks[i], 5);
            agree(BSRMV_SOLVER_GMRES, R, 1, ks[i], 6);
        }
        agree(BSRMV_SOLVER_CG, L, 0, 8, 4);
        agree(BSRMV_SOLVER_BICGSTAB, R, 0, 3, 7);
        bsrmv_matrix_destroy(L);
        bsrmv_matrix_destroy(R);
    }
    /* bs 9 (no compile-time kernel) and 17 columns (two SpMM chunks) */
    bsrmv_matrix *A;
    TU_OK(bsrmv_generate_block_laplacian(&A, 4, 4, 3, 9, 2, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    agree(BSRMV_SOLVER_CG, A, 1, 17, 9);
    bsrmv_matrix_destroy(A);
    /* large enough for the threaded vector passes (>= 32768 values) */
    TU_OK(bsrmv_generate_reservoir(&A, 23, 22, 22, 3, 5, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    agree(BSRMV_SOLVER_BICGSTAB, A, 1, 3, 10);
    bsrmv_matrix_destroy(A);
}

/* Symmetric storage (one part, and threaded) and mixed precision. */
static void test_other_storage(void)
{
    bsrmv_matrix *A, *S, *F;
    TU_OK(bsrmv_generate_block_laplacian(&A, 12, 12, 10, 3, 4, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    TU_OK(bsrmv_matrix_to_sym(&S, A, 0));
    agree_ref(BSRMV_SOLVER_CG, S, A, 1, 5, 14);
    bsrmv_matrix_destroy(S);
    bsrmv_matrix_destroy(A);
    TU_OK(bsrmv_generate_block_laplacian(&A, 5, 5, 4, 2, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_to_sym(&S, A, 0));
    agree_ref(BSRMV_SOLVER_CG, S, A, 1, 3, 12);
    TU_OK(bsrmv_matrix_convert(&F, A, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_set_vector_type(F, BSRMV_DOUBLE));
    agree(BSRMV_SOLVER_CG, F, 1, 3, 13);
    bsrmv_matrix_destroy(F);
    bsrmv_matrix_destroy(S);
    bsrmv_matrix_destroy(A);
}

/* Columns that do not converge do not stop the others; the status and
 * the message name the first of them. */
static void test_failures(void)
{
    bsrmv_matrix *A;
    TU_OK(bsrmv_generate_reservoir(&A, 8, 6, 4, 3, 2, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    const int64_t n = 8 * 6 * 4 * 3;
    const int k = 4;
    double *B = calloc((size_t)(n * k), sizeof *B), *X = calloc((size_t)(n * k), sizeof *X);
    TU_CHECK(B && X, "out of memory");
    /* column 0: zero; 1: random, tiny; 2, 3: random */
    for (int j = 1; j < k; j++)
        fill_column(B + j * n, n, BSRMV_DOUBLE, j == 1, 40 + (uint64_t)j);
    bsrmv_solve_report rep[4];
    bsrmv_solve_options o = {.max_iter = 3, .x0_zero = 1};
    TU_FAILS(bsrmv_solve_multi(BSRMV_SOLVER_BICGSTAB, A, NULL, n, k, B, n, X, n, &o, rep),
             BSRMV_ERR_NOT_CONVERGED);
    TU_CHECK(strstr(bsrmv_last_error(), "column 1 of 4"), "message: %s", bsrmv_last_error());
    TU_CHECK(rep[0].converged && rep[0].iterations == 0, "zero column: %d iterations",
             rep[0].iterations);
    for (int j = 1; j < k; j++)
        TU_CHECK(!rep[j].converged && rep[j].iterations == 3, "column %d: %d iterations", j,
                 rep[j].iterations);

    /* with room to converge, the same columns all converge; x given
     * (x0_zero off): from the solution no iterations are left */
    o.max_iter = 0;
    TU_OK(bsrmv_solve_multi(BSRMV_SOLVER_BICGSTAB, A, NULL, n, k, B, n, X, n, &o, rep));
    o.x0_zero = 0;
    TU_OK(bsrmv_solve_multi(BSRMV_SOLVER_BICGSTAB, A, NULL, n, k, B, n, X, n, &o, rep));
    for (int j = 0; j < k; j++)
        TU_CHECK(rep[j].converged && rep[j].iterations == 0, "from the solution: column %d: %d",
                 j, rep[j].iterations);

    /* deterministic: the same bits twice */
    double *X2 = calloc((size_t)(n * k), sizeof *X2);
    o.x0_zero = 1;
    TU_OK(bsrmv_solve_multi(BSRMV_SOLVER_GMRES, A, NULL, n, k, B, n, X, n, &o, rep));
    TU_OK(bsrmv_solve_multi(BSRMV_SOLVER_GMRES, A, NULL, n, k, B, n, X2, n, &o, rep));
    TU_CHECK(memcmp(X, X2, (size_t)(n * k) * sizeof *X) == 0, "two solves differ");

    /* NaN in column 3: an argument error that stops every column */
    B[3 * n + 5] = NAN;
    TU_FAILS(bsrmv_solve_multi(BSRMV_SOLVER_CG, A, NULL, n, k, B, n, X, n, &o, rep),
             BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "column 3 of 4") && strstr(bsrmv_last_error(), "NaN"),
             "message: %s", bsrmv_last_error());
    free(B);
    free(X);
    free(X2);
    bsrmv_matrix_destroy(A);
}

static void test_arguments(void)
{
    bsrmv_matrix *A;
    TU_OK(bsrmv_generate_block_laplacian(&A, 3, 3, 3, 2, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    const int64_t n = 54;
    double B[3 * 54], X[3 * 54 + 10] = {0};
    for (int i = 0; i < 3 * 54; i++)
        B[i] = 1;
    const bsrmv_solver cg = BSRMV_SOLVER_CG;
    TU_FAILS(bsrmv_solve_multi(cg, NULL, NULL, n, 3, B, n, X, n, NULL, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 0, B, n, X, n, NULL, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, -2, B, n, X, n, NULL, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 3, B, n - 1, X, n, NULL, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 3, B, n, X, n - 1, NULL, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 3, NULL, n, X, n, NULL, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 3, B, n, NULL, n, NULL, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n - 2, 3, B, n, X, n, NULL, NULL),
             BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_solve_multi((bsrmv_solver)9, A, NULL, n, 3, B, n, X, n, NULL, NULL),
             BSRMV_ERR_ARGUMENT);
    /* X's last column reaches into B's first: the spans overlap */
    double *M = malloc((size_t)(6 * n) * sizeof *M);
    for (int i = 0; i < 6 * n; i++)
        M[i] = 1;
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 3, M + 2 * n, n, M, n, NULL, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 2, M + 2 * n, n, M, 2 * n, NULL, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "overlap"), "%s", bsrmv_last_error());
    TU_FAILS(bsrmv_solve_multi(cg, A, NULL, n, 3, B, INT64_MAX / 2, X, n, NULL, NULL),
             BSRMV_ERR_OVERFLOW);
    /* X 10 values longer than the columns need: fine */
    TU_OK(bsrmv_solve_multi(cg, A, NULL, n, 3, B, n, X, n, NULL, NULL));
    free(M);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    test_arguments();
    test_failures();
    test_other_storage();
    test_agree();
    printf("test_solve_multi: ok\n");
    return 0;
}
