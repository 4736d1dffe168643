/* Complex solvers on the host: BiCGSTAB and GMRES on diagonally dominant
 * non-Hermitian systems, CG on Hermitian positive definite ones, with and
 * without block Jacobi, float and double complex, compiled and runtime
 * block sizes, both block orders.  Every solution is checked by a long
 * double complex residual b - A x from a dense copy of the stored values
 * (tu_csys_residual), not by the solver's report; CG on matrices that are
 * not HPD must not claim a solution it does not have. */
#include "testutil_complex.h"

#include <complex.h>
#include <math.h>
#include <string.h>

static const char *const method_name[] = {"cg", "bicgstab", "gmres"};

static const char *tname(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_DOUBLE ? "complex double" : "complex float";
}

static double rtol_for(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_DOUBLE ? 1e-9 : 1e-4;
}

/* Solves from x = 0 and checks the residual independently. */
static void solve_checked(bsrmv_solver m, const tu_csys *S, int precond, int restart, uint64_t seed)
{
    bsrmv_precond *P = NULL;
    if (precond)
        TU_OK(bsrmv_precond_block_jacobi(&P, S->A));
    void *b = tu_random_vector(S->n, S->type, seed);
    void *x = tu_nan_vector(S->n, S->type); /* x0_zero: never read */
    const double rtol = rtol_for(S->type);
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .restart = restart, .x0_zero = 1};
    bsrmv_solve_report rep;
    TU_OK(bsrmv_solve(m, S->A, P, b, x, S->n, &o, &rep));
    const double rel = tu_csys_residual(S, b, x);
    printf("  %-8s bs %2d %-14s %s restart %2d: %4d iterations, residual %.2e (solver says "
           "%.2e)\n",
           method_name[m], S->bs, tname(S->type), precond ? "jacobi" : "none  ", restart,
           rep.iterations, rel, rep.true_rel_residual);
    TU_CHECK(rep.converged && rep.iterations > 0, "not converged");
    TU_CHECK(rel <= 2 * rtol, "%s bs %d: true residual %g > 2*rtol", method_name[m], S->bs, rel);
    TU_CHECK(fabs(rep.true_rel_residual - rel) <= 0.05 * rel + 1e-2 * rtol,
             "reported true residual %g, independent %g", rep.true_rel_residual, rel);
    free(b);
    free(x);
    bsrmv_precond_destroy(P);
}

/* z = P r satisfies D_i z_i = r_i on every block row (D_i from the dense
 * copy). */
static void check_precond(const tu_csys *S)
{
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, S->A));
    void *r = tu_random_vector(S->n, S->type, 5);
    void *z = tu_nan_vector(S->n, S->type);
    TU_OK(bsrmv_precond_apply(P, r, z, S->n));
    const double tol = S->type == BSRMV_COMPLEX_DOUBLE ? 1e-12 : 1e-4;
    for (int64_t i = 0; i < S->n; i++) {
        const int64_t b0 = i / S->bs * S->bs;
        tu_ldc s = 0;
        long double mag = 0;
        for (int64_t j = b0; j < b0 + S->bs; j++) {
            s += S->dense[i * S->n + j] * tu_cget(z, S->type, j);
            mag += cabsl(S->dense[i * S->n + j] * tu_cget(z, S->type, j));
        }
        const tu_ldc want = tu_cget(r, S->type, i);
        TU_CHECK(cabsl(s - want) <= tol * (mag + cabsl(want)), "bs %d row %lld: D z = %Lg%+Lgi, r = %Lg%+Lgi",
                 S->bs, (long long)i, creall(s), cimagl(s), creall(want), cimagl(want));
    }
    free(r);
    free(z);
    bsrmv_precond_destroy(P);
}

static void test_methods(void)
{
    const bsrmv_type types[2] = {BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT};
    const int bss[5] = {1, 2, 4, 8, 9}; /* 9: no compile-time kernel */
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 5; i++) {
            const bsrmv_order order = i % 2 ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR;
            const int64_t mb = 48 / bss[i] + 5;
            tu_csys N = tu_csys_make(mb, bss[i], types[t], order, TU_NONHERM, 100 + i);
            check_precond(&N);
            for (int p = 0; p < 2; p++) {
                solve_checked(BSRMV_SOLVER_BICGSTAB, &N, p, 0, 7 + p);
                /* restart 3: several cycles, the rotations restarted */
                solve_checked(BSRMV_SOLVER_GMRES, &N, p, p ? 20 : 3, 9 + p);
            }
            tu_csys_drop(&N);
            tu_csys H = tu_csys_make(mb, bss[i], types[t], order, TU_HPD, 200 + i);
            for (int p = 0; p < 2; p++)
                solve_checked(BSRMV_SOLVER_CG, &H, p, 0, 11 + p);
            solve_checked(BSRMV_SOLVER_GMRES, &H, 1, 0, 13);
            tu_csys_drop(&H);
        }
}

/* CG on an indefinite Hermitian matrix or a non-Hermitian one: an error,
 * or (non-Hermitian) a success whose residual really is below rtol. */
static void test_cg_not_hpd(void)
{
    const bsrmv_type types[2] = {BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++) {
            tu_csys S = tu_csys_make(20, 3, types[t], BSRMV_COL_MAJOR, k ? TU_NONHERM : TU_INDEFINITE, 300 + t);
            void *b = tu_random_vector(S.n, S.type, 21);
            void *x = tu_nan_vector(S.n, S.type);
            bsrmv_solve_options o = {.rtol = rtol_for(S.type), .max_iter = 300, .x0_zero = 1};
            bsrmv_solve_report rep;
            bsrmv_status st = bsrmv_solve(BSRMV_SOLVER_CG, S.A, NULL, b, x, S.n, &o, &rep);
            printf("  cg on %s %s: %s (%s)\n", k ? "non-Hermitian" : "indefinite",
                   tname(S.type), bsrmv_status_string(st), bsrmv_last_error());
            if (k == 0)
                TU_FAILS(st, BSRMV_ERR_NOT_CONVERGED);
            if (st == BSRMV_SUCCESS)
                TU_CHECK(tu_csys_residual(&S, b, x) <= 2 * o.rtol, "CG claimed a solution it has not");
            else
                TU_CHECK(st == BSRMV_ERR_NOT_CONVERGED && !rep.converged, "%s",
                         bsrmv_status_string(st));
            free(b);
            free(x);
            tu_csys_drop(&S);
        }
}

/* b = 0 gives x = 0; a singular complex diagonal block is refused; several
 * right-hand sides solve column by column; refinement is real only. */
static void test_edges(void)
{
    tu_csys S = tu_csys_make(10, 2, BSRMV_COMPLEX_DOUBLE, BSRMV_ROW_MAJOR, TU_NONHERM, 400);
    double _Complex b[20] = {0}, x[20];
    for (int i = 0; i < 20; i++)
        x[i] = NAN;
    bsrmv_solve_report rep;
    TU_OK(bsrmv_solve(BSRMV_SOLVER_GMRES, S.A, NULL, b, x, 20, NULL, &rep));
    for (int i = 0; i < 20; i++)
        TU_CHECK(x[i] == 0, "b = 0: x[%d] = %g%+gi", i, creal(x[i]), cimag(x[i]));

    /* several right-hand sides */
    const int k = 3;
    double _Complex *B = tu_random_vector(20 * k, S.type, 31), X[60];
    bsrmv_solve_options o = {.rtol = 1e-9, .x0_zero = 1};
    bsrmv_solve_report reps[3];
    TU_OK(bsrmv_solve_multi(BSRMV_SOLVER_BICGSTAB, S.A, NULL, 20, k, B, 20, X, 20, &o, reps));
    for (int j = 0; j < k; j++) {
        const double rel = tu_csys_residual(&S, B + 20 * j, X + 20 * j);
        TU_CHECK(reps[j].converged && rel <= 2e-9, "column %d: residual %g", j, rel);
    }
    free(B);

    bsrmv_precond *P = NULL;
    TU_FAILS(bsrmv_solve_refined(BSRMV_SOLVER_GMRES, S.A, S.A, NULL, b, x, 20, NULL, &rep),
             BSRMV_ERR_UNSUPPORTED);
    tu_csys_drop(&S);

    /* a zero diagonal block */
    const int64_t rp[3] = {0, 1, 2};
    const int32_t ci[2] = {0, 1};
    double _Complex v[2] = {1 + 1 * I, 0};
    bsrmv_matrix *Z;
    TU_OK(bsrmv_matrix_create(&Z, 2, 2, 1, 2, rp, ci, v, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_precond_block_jacobi(&P, Z), BSRMV_ERR_SINGULAR);
    TU_CHECK(P == NULL, "handle set on failure");
    bsrmv_matrix_destroy(Z);
}

int main(void)
{
    test_methods();
    test_cg_not_hpd();
    test_edges();
    printf("test_solve_complex: all passed\n");
    return 0;
}
