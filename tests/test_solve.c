/* Iterative solvers on the host: every converged solution is checked by an
 * independent long-double residual b - A x (tu_ref_spmv), not by the
 * solver's own numbers; then the options, the failure modes and the
 * generators the solvers are benchmarked on. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const char *const method_name[] = {"cg", "bicgstab", "gmres"};

static double rtol_for(bsrmv_type t)
{
    return t == BSRMV_DOUBLE ? 1e-8 : 1e-5;
}

/* Solves with a random b from x = 0 and checks the residual independently;
 * returns the iterations. */
static int solve_checked(bsrmv_solver m, const bsrmv_matrix *A, int precond, int restart,
                         uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    bsrmv_precond *P = NULL;
    if (precond)
        TU_OK(bsrmv_precond_block_jacobi(&P, A));
    void *b = tu_random_vector(in.rows, in.type, seed);
    void *x = tu_nan_vector(in.rows, in.type); /* x0_zero: never read */
    const double rtol = rtol_for(in.type);
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 3000, .restart = restart, .x0_zero = 1};
    bsrmv_solve_report rep;
    TU_OK(bsrmv_solve(m, A, P, b, x, in.rows, &o, &rep));
    const double rel = tu_rel_residual(A, b, x);
    printf("  %-8s bs %2d %-6s %s: %4d iterations, residual %.2e (solver says %.2e), %.3g MB\n",
           method_name[m], in.bs, in.type == BSRMV_DOUBLE ? "double" : "float",
           precond ? "jacobi" : "none  ", rep.iterations, rel, rep.true_rel_residual,
           rep.bytes * 1e-6);
    TU_CHECK(rep.converged && rep.iterations > 0, "not converged");
    TU_CHECK(rel <= 2 * rtol, "%s bs %d: true residual %g > 2*rtol", method_name[m], in.bs, rel);
    TU_CHECK(fabs(rep.true_rel_residual - rel) <= 0.05 * rel + 1e-3 * rtol,
             "reported true residual %g, independent %g", rep.true_rel_residual, rel);
    TU_CHECK(rep.bytes > rep.iterations * bsrmv_matrix_spmv_bytes(A), "traffic %g too small",
             rep.bytes);
    free(b);
    free(x);
    bsrmv_precond_destroy(P);
    return rep.iterations;
}

static void test_methods(void)
{
    const bsrmv_type types[2] = {BSRMV_DOUBLE, BSRMV_FLOAT};
    const int spd_bs[3] = {1, 3, 9}; /* 9: no compile-time kernel */
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 3; i++) {
            bsrmv_matrix *A;
            TU_OK(bsrmv_generate_block_laplacian(&A, 6, 5, 5, spd_bs[i], 11 + i, types[t],
                                                 i == 1 ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR));
            solve_checked(BSRMV_SOLVER_CG, A, 1, 0, 3);
            if (i != 1)
                solve_checked(BSRMV_SOLVER_CG, A, 0, 0, 4);
            bsrmv_matrix_destroy(A);
        }
    const int nc[3] = {3, 4, 9};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 3; i++) {
            bsrmv_matrix *A;
            TU_OK(bsrmv_generate_reservoir(&A, 8, 6, 4, nc[i], 21 + i, types[t],
                                           i == 2 ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR));
            solve_checked(BSRMV_SOLVER_BICGSTAB, A, 1, 0, 5);
            solve_checked(BSRMV_SOLVER_GMRES, A, 1, 0, 6);
            if (i == 0) {
                solve_checked(BSRMV_SOLVER_BICGSTAB, A, 0, 0, 7);
                solve_checked(BSRMV_SOLVER_GMRES, A, 0, 8, 8); /* short cycles: restarts */
            }
            bsrmv_matrix_destroy(A);
        }
}

typedef struct monitor_log {
    int calls, last_iter, stop_at;
} monitor_log;

static int monitor(int iter, double rel, void *ctx)
{
    monitor_log *l = ctx;
    TU_CHECK(iter == l->last_iter + 1 && rel >= 0, "monitor: iteration %d after %d, residual %g",
             iter, l->last_iter, rel);
    l->calls++;
    l->last_iter = iter;
    return iter == l->stop_at;
}

static void test_options(void)
{
    bsrmv_matrix *A;
    /* large enough for the threaded vector passes (>= 32768 values) */
    TU_OK(bsrmv_generate_reservoir(&A, 23, 22, 22, 3, 5, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    const int64_t n = 23 * 22 * 22 * 3;
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, A));
    double *b = tu_random_vector(n, BSRMV_DOUBLE, 9), *x = calloc((size_t)n, sizeof *x);
    double *x2 = malloc((size_t)n * sizeof *x2);
    bsrmv_solve_report rep, rep2;
    for (int m = 0; m < 3; m++) {
        const bsrmv_solver s = (bsrmv_solver)m;
        /* the monitor sees every iteration and can stop the solve */
        monitor_log log = {0, 0, 1000};
        bsrmv_solve_options o = {.monitor = monitor, .monitor_ctx = &log, .x0_zero = 1};
        bsrmv_status st = bsrmv_solve(s, A, P, b, x, n, &o, &rep);
        /* CG on this nonsymmetric A may converge or break down; the others must converge */
        TU_CHECK(s == BSRMV_SOLVER_CG || st == BSRMV_SUCCESS, "%s: %s", method_name[m],
                 bsrmv_last_error());
        TU_CHECK(log.calls == rep.iterations, "%s: %d monitor calls, %d iterations",
                 method_name[m], log.calls, rep.iterations);
        if (s == BSRMV_SOLVER_CG)
            continue;
        const int full = rep.iterations;
        log = (monitor_log){0, 0, 3};
        TU_FAILS(bsrmv_solve(s, A, P, b, x, n, &o, &rep), BSRMV_ERR_NOT_CONVERGED);
        TU_CHECK(strstr(bsrmv_last_error(), "monitor") && rep.iterations == 3 && !rep.converged,
                 "%s: monitor stop: %d iterations (%s)", method_name[m], rep.iterations,
                 bsrmv_last_error());

        /* the iteration limit */
        bsrmv_solve_options lim = {.max_iter = 2, .x0_zero = 1};
        TU_FAILS(bsrmv_solve(s, A, P, b, x, n, &lim, &rep), BSRMV_ERR_NOT_CONVERGED);
        TU_CHECK(rep.iterations == 2 && !rep.converged && rep.true_rel_residual > 1e-8 &&
                     rep.true_rel_residual < 1,
                 "%s: limit: %d iterations, residual %g", method_name[m], rep.iterations,
                 rep.true_rel_residual);

        /* x0 given: from the solution nothing is left to do; from the
         * partial iterate of the limited run, fewer iterations than from 0 */
        TU_OK(bsrmv_solve(s, A, P, b, x, n, NULL, &rep));
        memcpy(x2, x, (size_t)n * sizeof *x2);
        TU_OK(bsrmv_solve(s, A, P, b, x2, n, NULL, &rep2));
        TU_CHECK(rep2.iterations == 0 && rep2.converged, "%s: from the solution: %d iterations",
                 method_name[m], rep2.iterations);
        TU_CHECK(rep.iterations < full, "%s: from a partial iterate %d iterations, from 0 %d",
                 method_name[m], rep.iterations, full);

        /* deterministic: the same solve twice gives the same bits */
        bsrmv_solve_options z = {.x0_zero = 1};
        TU_OK(bsrmv_solve(s, A, P, b, x, n, &z, &rep));
        TU_OK(bsrmv_solve(s, A, P, b, x2, n, &z, &rep2));
        TU_CHECK(memcmp(x, x2, (size_t)n * sizeof *x) == 0 && rep.bytes == rep2.bytes,
                 "%s: two solves differ", method_name[m]);
    }
    /* b == 0: x = 0 at once, whatever x held */
    memset(b, 0, (size_t)n * sizeof *b);
    for (int64_t i = 0; i < n; i++)
        x[i] = NAN;
    TU_OK(bsrmv_solve(BSRMV_SOLVER_BICGSTAB, A, P, b, x, n, NULL, &rep));
    TU_CHECK(rep.converged && rep.iterations == 0 && x[0] == 0 && x[n - 1] == 0, "b == 0");
    /* CG on a negative definite matrix breaks down at once */
    bsrmv_matrix *N;
    TU_OK(bsrmv_generate_block_laplacian(&N, 4, 4, 4, 2, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(N, &rp, &ci, &val));
    for (int64_t e = 0; e < rp[64] * 4; e++)
        ((double *)val)[e] = -((const double *)val)[e];
    double *bn = tu_random_vector(128, BSRMV_DOUBLE, 2), *xn = calloc(128, sizeof *xn);
    bsrmv_solve_options o = {.x0_zero = 1};
    TU_FAILS(bsrmv_solve(BSRMV_SOLVER_CG, N, NULL, bn, xn, 128, &o, &rep),
             BSRMV_ERR_NOT_CONVERGED);
    TU_CHECK(strstr(bsrmv_last_error(), "broke down"), "%s", bsrmv_last_error());
    bsrmv_matrix_destroy(N);
    free(bn);
    free(xn);
    free(b);
    free(x);
    free(x2);
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(A);
}

/* Block Jacobi: D_i z_i = r_i for every block row; missing and singular
 * diagonal blocks are named. */
static void test_precond(void)
{
    for (int t = 0; t < 2; t++) {
        const bsrmv_type type = t ? BSRMV_FLOAT : BSRMV_DOUBLE;
        bsrmv_matrix *A;
        TU_OK(bsrmv_generate_reservoir(&A, 4, 3, 2, 5, 3, type, BSRMV_ROW_MAJOR));
        const int bs = 5, mb = 24, n = mb * bs;
        bsrmv_precond *P;
        TU_OK(bsrmv_precond_block_jacobi(&P, A));
        void *r = tu_random_vector(n, type, 4), *z = tu_nan_vector(n, type);
        TU_OK(bsrmv_precond_apply(P, r, z, n));
        const int64_t *rp;
        const int32_t *ci;
        const void *val;
        TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &val));
        for (int i = 0; i < mb; i++) {
            int64_t k = rp[i];
            while (ci[k] != i)
                k++;
            for (int row = 0; row < bs; row++) {
                double s = 0, mag = 0;
                for (int c = 0; c < bs; c++) {
                    const double a = tu_get(val, type, k * bs * bs + row * bs + c);
                    s += a * tu_get(z, type, i * bs + c);
                    mag += fabs(a * tu_get(z, type, i * bs + c));
                }
                const double want = tu_get(r, type, i * bs + row);
                TU_CHECK(fabs(s - want) <= (t ? 1e-5 : 1e-13) * (mag + fabs(want)),
                         "block %d row %d: D z = %g, r = %g", i, row, s, want);
            }
        }
        TU_FAILS(bsrmv_precond_apply(P, r, z, n - 1), BSRMV_ERR_DIMENSION);
        TU_FAILS(bsrmv_precond_apply(NULL, r, z, n), BSRMV_ERR_ARGUMENT);
        free(r);
        free(z);
        bsrmv_precond_destroy(P);

        /* a rank-deficient diagonal block at block row 7: two equal rows */
        int64_t k = rp[7];
        while (ci[k] != 7)
            k++;
        void *v2 = tu_copy_vector(val, rp[mb] * bs * bs, type);
        memcpy((char *)v2 + (size_t)(k * bs * bs + bs) * bsrmv_type_size(type),
               (char *)v2 + (size_t)(k * bs * bs) * bsrmv_type_size(type),
               (size_t)bs * bsrmv_type_size(type));
        bsrmv_matrix *S;
        TU_OK(bsrmv_matrix_wrap(&S, mb, mb, bs, rp[mb], rp, ci, v2, type, BSRMV_ROW_MAJOR));
        P = (bsrmv_precond *)1;
        TU_FAILS(bsrmv_precond_block_jacobi(&P, S), BSRMV_ERR_SINGULAR);
        TU_CHECK(!P && strstr(bsrmv_last_error(), "block row 7 is singular"), "%s",
                 bsrmv_last_error());
        bsrmv_matrix_destroy(S);
        free(v2);
        bsrmv_matrix_destroy(A);
    }
    /* block row 1 has no diagonal block */
    const int64_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {0, 1, 0};
    const double val[3] = {2, 1, 1};
    bsrmv_matrix *M;
    bsrmv_precond *P;
    TU_OK(bsrmv_matrix_create(&M, 2, 2, 1, 3, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_precond_block_jacobi(&P, M), BSRMV_ERR_SINGULAR);
    TU_CHECK(strstr(bsrmv_last_error(), "block row 1 has no diagonal"), "%s",
             bsrmv_last_error());
    bsrmv_matrix_destroy(M);
}

static void test_arguments(void)
{
    bsrmv_matrix *A, *B, *R;
    TU_OK(bsrmv_generate_block_laplacian(&A, 3, 3, 3, 2, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_generate_block_laplacian(&B, 3, 3, 2, 2, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    const int64_t rp[2] = {0, 1};
    const int32_t ci[1] = {1};
    const double v[4] = {1, 0, 0, 1};
    TU_OK(bsrmv_matrix_create(&R, 1, 2, 2, 1, rp, ci, v, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_precond *PB, *PF;
    TU_OK(bsrmv_precond_block_jacobi(&PB, B));
    bsrmv_matrix *F;
    TU_OK(bsrmv_generate_block_laplacian(&F, 3, 3, 3, 2, 1, BSRMV_FLOAT, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_precond_block_jacobi(&PF, F));
    double b[54], x[54];
    for (int i = 0; i < 54; i++)
        b[i] = 1;
    const bsrmv_solver cg = BSRMV_SOLVER_CG;
    TU_FAILS(bsrmv_solve(cg, NULL, NULL, b, x, 54, NULL, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve(cg, A, NULL, NULL, x, 54, NULL, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve(cg, A, NULL, b, NULL, 54, NULL, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_solve(cg, A, NULL, b, x, 53, NULL, NULL), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_solve(cg, R, NULL, b, x, 2, NULL, NULL), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_solve(cg, A, PB, b, x, 54, NULL, NULL), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_solve(cg, A, PF, b, x, 54, NULL, NULL), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_solve((bsrmv_solver)7, A, NULL, b, x, 54, NULL, NULL), BSRMV_ERR_ARGUMENT);
    bsrmv_solve_options o = {.rtol = -1};
    TU_FAILS(bsrmv_solve(cg, A, NULL, b, x, 54, &o, NULL), BSRMV_ERR_ARGUMENT);
    b[3] = NAN;
    TU_FAILS(bsrmv_solve(cg, A, NULL, b, x, 54, NULL, NULL), BSRMV_ERR_ARGUMENT);
    bsrmv_precond *bad;
    TU_FAILS(bsrmv_precond_block_jacobi(NULL, A), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_precond_block_jacobi(&bad, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_precond_block_jacobi(&bad, R), BSRMV_ERR_DIMENSION);
    TU_CHECK(!bad, "handle set on failure");
    bsrmv_precond_destroy(NULL);
    bsrmv_precond_destroy(PB);
    bsrmv_precond_destroy(PF);
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(B);
    bsrmv_matrix_destroy(F);
    bsrmv_matrix_destroy(R);
}

/* A system the first step solves exactly (r = 0, so r.z = 0 in CG) is a
 * solution, not a breakdown; a NaN in x0 or A is named as the cause, not
 * taken for a residual that never fell. */
static void test_exact_and_nonfinite(void)
{
    const int64_t rp[5] = {0, 1, 2, 3, 4};
    const int32_t ci[4] = {0, 1, 2, 3};
    const double two[4] = {2, 2, 2, 2};
    bsrmv_matrix *A;
    TU_OK(bsrmv_matrix_create(&A, 4, 4, 1, 4, rp, ci, two, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, A));
    const double b[4] = {1, -3, 0.5, 7};
    double x[4], X[12], B[12];
    for (int i = 0; i < 12; i++)
        B[i] = b[i % 4] * (1 + i / 4);
    for (int m = 0; m < 3; m++)
        for (int pre = 0; pre < 2; pre++) {
            bsrmv_solve_options o = {.rtol = 1e-10, .max_iter = 50, .x0_zero = 1};
            bsrmv_solve_report rep;
            TU_OK(bsrmv_solve((bsrmv_solver)m, A, pre ? P : NULL, b, x, 4, &o, &rep));
            TU_CHECK(rep.converged, "%s: not converged", method_name[m]);
            for (int i = 0; i < 4; i++)
                TU_CHECK(fabs(x[i] - b[i] / 2) <= 1e-14, "%s: x[%d] = %g", method_name[m], i, x[i]);
            bsrmv_solve_report reps[3];
            TU_OK(bsrmv_solve_multi((bsrmv_solver)m, A, pre ? P : NULL, 4, 3, B, 4, X, 4, &o, reps));
            for (int i = 0; i < 12; i++)
                TU_CHECK(fabs(X[i] - B[i] / 2) <= 1e-13, "%s multi: X[%d] = %g", method_name[m], i, X[i]);
            /* a NaN start (x0 read) and a NaN in A */
            o.x0_zero = 0;
            double xn[4] = {0, NAN, 0, 0};
            TU_FAILS(bsrmv_solve((bsrmv_solver)m, A, NULL, b, xn, 4, &o, &rep), BSRMV_ERR_ARGUMENT);
            TU_CHECK(strstr(bsrmv_last_error(), "starting residual") != NULL, "%s: %s", method_name[m],
                     bsrmv_last_error());
        }
    const double bad[4] = {2, NAN, 2, 2};
    bsrmv_matrix *N;
    TU_OK(bsrmv_matrix_create(&N, 4, 4, 1, 4, rp, ci, bad, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    for (int m = 0; m < 3; m++) {
        double x0[4] = {1, 1, 1, 1};
        bsrmv_solve_options o = {.rtol = 1e-10, .max_iter = 50};
        TU_FAILS(bsrmv_solve((bsrmv_solver)m, N, NULL, b, x0, 4, &o, NULL), BSRMV_ERR_ARGUMENT);
    }
    bsrmv_matrix_destroy(N);
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(A);
}

/* The generators: reproducible, the two orders hold one matrix, the
 * reservoir matrix is nonsymmetric and strictly column diagonally dominant,
 * the Laplacian symmetric. */
static void test_generators(void)
{
    for (int spd = 0; spd < 2; spd++) {
        bsrmv_matrix *A, *B, *C;
        bsrmv_status (*gen)(bsrmv_matrix **, int64_t, int64_t, int64_t, int, uint64_t,
                            bsrmv_type, bsrmv_order) =
            spd ? bsrmv_generate_block_laplacian : bsrmv_generate_reservoir;
        TU_OK(gen(&A, 5, 4, 3, 3, 8, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        TU_OK(gen(&B, 5, 4, 3, 3, 8, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        TU_OK(gen(&C, 5, 4, 3, 3, 9, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        bsrmv_coo *a, *b, *c;
        TU_OK(bsrmv_matrix_to_coo(A, &a));
        TU_OK(bsrmv_matrix_to_coo(B, &b));
        TU_OK(bsrmv_matrix_to_coo(C, &c));
        const int64_t m = a->m;
        TU_CHECK(a->nnz == b->nnz && a->nnz == 3 * 3 * (7 * 60 - 2 * (12 + 15 + 20)),
                 "nnz %lld", (long long)a->nnz);
        double *dense = calloc((size_t)(m * m), sizeof *dense);
        int differs = 0;
        for (int64_t e = 0; e < a->nnz; e++) {
            dense[a->row[e] * m + a->col[e]] = a->val[e];
            differs |= a->val[e] != c->val[e];
        }
        for (int64_t e = 0; e < b->nnz; e++)
            TU_CHECK(dense[b->row[e] * m + b->col[e]] == b->val[e], "orders differ");
        TU_CHECK(differs, "the seed changes nothing");
        double asym = 0;
        for (int64_t j = 0; j < m; j++) {
            double off = 0;
            for (int64_t i = 0; i < m; i++) {
                asym = fmax(asym, fabs(dense[i * m + j] - dense[j * m + i]));
                if (i != j)
                    off += fabs(dense[i * m + j]);
            }
            if (!spd)
                TU_CHECK(dense[j * m + j] > off, "column %lld not dominant: %g <= %g",
                         (long long)j, dense[j * m + j], off);
        }
        TU_CHECK(spd ? asym == 0 : asym > 0.01, "asymmetry %g", asym);
        free(dense);
        bsrmv_coo_destroy(a);
        bsrmv_coo_destroy(b);
        bsrmv_coo_destroy(c);
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(B);
        bsrmv_matrix_destroy(C);
    }
    bsrmv_matrix *A;
    TU_FAILS(bsrmv_generate_reservoir(&A, 4, 4, 0, 3, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_generate_block_laplacian(&A, 4, 4, 4, 0, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
}

int main(void)
{
    test_generators();
    test_precond();
    test_arguments();
    test_exact_and_nonfinite();
    test_options();
    test_methods();
    printf("test_solve: ok\n");
    return 0;
}
