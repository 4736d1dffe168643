/* GPU solvers against the host ones: for each method, type (real and
 * complex) and with and without block Jacobi, the device solution must
 * pass the independent long-double residual check, agree with the host
 * solution, and take the same iterations and traffic (the same method code
 * runs on both).  Then several right-hand sides (bsrmv_gpu_solve_multi)
 * against single device solves, and the failure modes and what stays
 * refused for complex values.  Exit 77 (skipped) when there is no CUDA
 * device. */
#include "testutil_complex.h"

#include <math.h>
#include <string.h>

static const char *const method_name[] = {"cg", "bicgstab", "gmres"};

static double ref_residual(const bsrmv_matrix *A, const void *b, const void *x, int64_t n,
                           bsrmv_type t)
{
    long double *r = malloc((size_t)n * sizeof *r), *mag = malloc((size_t)n * sizeof *mag);
    int64_t *terms = malloc((size_t)n * sizeof *terms);
    TU_CHECK(r && mag && terms, "out of memory");
    tu_ref_spmv(A, BSRMV_OP_N, -1.0, x, 1.0, b, r, mag, terms);
    long double rr = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        rr += r[i] * r[i];
        bb += (long double)tu_get(b, t, i) * tu_get(b, t, i);
    }
    free(r);
    free(mag);
    free(terms);
    return (double)sqrtl(rr / bb);
}

typedef struct dev {
    bsrmv_gpu_matrix *A;
    bsrmv_gpu_precond *P;
    void *b, *x;
    size_t bytes;
} dev;

static dev upload(const bsrmv_matrix *A, const bsrmv_precond *P, const void *b, int64_t n,
                  bsrmv_type t)
{
    dev d = {0};
    d.bytes = (size_t)n * bsrmv_type_size(t);
    TU_OK(bsrmv_gpu_matrix_upload(&d.A, A, 0, NULL));
    if (P)
        TU_OK(bsrmv_gpu_precond_upload(&d.P, P, 0));
    TU_OK(bsrmv_gpu_malloc(&d.b, d.bytes));
    TU_OK(bsrmv_gpu_malloc(&d.x, d.bytes));
    TU_OK(bsrmv_gpu_to_device(d.b, b, d.bytes));
    return d;
}

static void release(dev *d)
{
    bsrmv_gpu_free(d->b);
    bsrmv_gpu_free(d->x);
    bsrmv_gpu_precond_destroy(d->P);
    bsrmv_gpu_matrix_destroy(d->A);
}

static void compare(bsrmv_solver m, const bsrmv_matrix *A, int precond)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t n = in.rows;
    const bsrmv_type t = in.type;
    bsrmv_precond *P = NULL;
    if (precond)
        TU_OK(bsrmv_precond_block_jacobi(&P, A));
    void *b = tu_random_vector(n, t, 3), *xc = tu_nan_vector(n, t), *xg = tu_nan_vector(n, t);
    const double rtol = t == BSRMV_DOUBLE ? 1e-8 : 1e-5;
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .x0_zero = 1};
    bsrmv_solve_report rc, rg;
    TU_OK(bsrmv_solve(m, A, P, b, xc, n, &o, &rc));
    dev d = upload(A, P, b, n, t);
    TU_OK(bsrmv_gpu_solve(m, d.A, d.P, d.b, d.x, n, &o, &rg, NULL));
    TU_OK(bsrmv_gpu_to_host(xg, d.x, d.bytes));
    const double rel = ref_residual(A, b, xg, n, t);
    double dx = 0, xx = 0;
    for (int64_t i = 0; i < n; i++) {
        const double a = tu_get(xg, t, i), c = tu_get(xc, t, i);
        dx += (a - c) * (a - c);
        xx += c * c;
    }
    dx = sqrt(dx / xx);
    printf("  %-8s bs %2d %-6s %s: gpu %3d iterations, residual %.2e; cpu %3d; |xg-xc|/|xc| "
           "%.2e\n",
           method_name[m], in.bs, t == BSRMV_DOUBLE ? "double" : "float",
           precond ? "jacobi" : "none  ", rg.iterations, rel, rc.iterations, dx);
    TU_CHECK(rg.converged && rel <= 2 * rtol, "GPU residual %g", rel);
    TU_CHECK(fabs(rg.true_rel_residual - rel) <= 0.05 * rel + 1e-3 * rtol,
             "GPU reports %g, independent %g", rg.true_rel_residual, rel);
    /* The GPU kernels add a row's block products in another order than the
     * CPU; unpreconditioned BiCGSTAB turns that rounding into a few more or
     * fewer iterations (H200, bs 4: 41 against 38 in float with the wide
     * kernel, 60 against 57 in double with by-block), so it, and float
     * everywhere, get 10% more slack. */
    const int sensitive = t == BSRMV_FLOAT || (m == BSRMV_SOLVER_BICGSTAB && !precond);
    const int slack = 2 + (sensitive ? rc.iterations / 10 : 0);
    TU_CHECK(abs(rg.iterations - rc.iterations) <= slack, "iterations gpu %d, cpu %d", rg.iterations,
             rc.iterations);
    TU_CHECK(dx <= (t == BSRMV_DOUBLE ? 1e-5 : 1e-2), "solutions differ by %g", dx);
    /* Same iterations, same passes, same count for CG.  BiCGSTAB's early
     * exit on a small s and GMRES's second Gram-Schmidt pass depend on
     * rounding, so there the two may differ by a few vector passes. */
    if (rg.iterations == rc.iterations)
        TU_CHECK(m == BSRMV_SOLVER_CG ? rg.bytes == rc.bytes
                                      : fabs(rg.bytes - rc.bytes) <= 0.02 * rc.bytes,
                 "traffic gpu %g, cpu %g", rg.bytes, rc.bytes);
    release(&d);
    free(b);
    free(xc);
    free(xg);
    bsrmv_precond_destroy(P);
}

/* k columns (ld with padding; column 1 tiny, column 2 zero) solved
 * together on the device: each as bsrmv_gpu_solve solves it alone
 * (iterations within 1, solution within rounding), the padding of X
 * untouched, X poisoned where x0_zero makes it output only. */
static void multi(bsrmv_solver m, const bsrmv_matrix *A, int k)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const bsrmv_type t = in.vector_type;
    const size_t vs = bsrmv_type_size(t);
    const int64_t n = in.rows, ldb = n + 3, ldx = n + 5;
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, A));
    char *B = tu_nan_vector(ldb * k, t), *X = tu_nan_vector(ldx * k, t);
    for (int j = 0; j < k; j++) {
        void *col = tu_random_vector(n, t, 30 + (uint64_t)j);
        for (int64_t i = 0; i < n; i++) {
            const double v = j == 2 ? 0 : (j == 1 ? 1e-8 : 1) * tu_get(col, t, i);
            if (t == BSRMV_DOUBLE)
                ((double *)B)[j * ldb + i] = v;
            else
                ((float *)B)[j * ldb + i] = (float)v;
        }
        free(col);
    }
    const double rtol = t == BSRMV_DOUBLE ? 1e-8 : 1e-5;
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .x0_zero = 1};
    bsrmv_solve_report *rep = malloc((size_t)k * sizeof *rep), one;
    dev d = upload(A, P, B, ldb * k, t);
    void *dX, *dx1;
    TU_OK(bsrmv_gpu_malloc(&dX, (size_t)(ldx * k) * vs));
    TU_OK(bsrmv_gpu_malloc(&dx1, (size_t)n * vs));
    TU_OK(bsrmv_gpu_to_device(dX, X, (size_t)(ldx * k) * vs));
    TU_OK(bsrmv_gpu_solve_multi(m, d.A, d.P, n, k, d.b, ldb, dX, ldx, &o, rep, NULL));
    TU_OK(bsrmv_gpu_to_host(X, dX, (size_t)(ldx * k) * vs));
    void *x1 = malloc((size_t)n * vs);
    printf("  %-8s bs %2d %-6s%s k %2d: iterations", method_name[m], in.bs,
           t == BSRMV_DOUBLE ? "double" : "float", in.type != t ? " (mixed)" : "", k);
    for (int j = 0; j < k; j++) {
        const char *b = B + (size_t)(j * ldb) * vs, *x = X + (size_t)(j * ldx) * vs;
        TU_OK(bsrmv_gpu_solve(m, d.A, d.P, (const char *)d.b + (size_t)(j * ldb) * vs, dx1, n,
                              &o, &one, NULL));
        TU_OK(bsrmv_gpu_to_host(x1, dx1, (size_t)n * vs));
        printf(" %d", rep[j].iterations);
        /* The SpMM sums otherwise than the plan's SpMV kernel: float
         * BiCGSTAB gets the 10% slack of compare() */
        const int slack =
            1 + (t == BSRMV_FLOAT && m == BSRMV_SOLVER_BICGSTAB ? one.iterations / 10 : 0);
        TU_CHECK(rep[j].converged && abs(rep[j].iterations - one.iterations) <= slack,
                 "column %d: %d iterations, alone %d", j, rep[j].iterations, one.iterations);
        for (int64_t i = n; i < ldx; i++)
            TU_CHECK(isnan(tu_get(x, t, i)), "column %d: padding written", j);
        double dd = 0, ss = 0;
        for (int64_t i = 0; i < n; i++) {
            const double a = tu_get(x, t, i), c = tu_get(x1, t, i);
            dd += (a - c) * (a - c);
            ss += c * c;
        }
        if (j == 2) {
            TU_CHECK(rep[j].iterations == 0 && dd == 0 && ss == 0, "zero column: x != 0");
            continue;
        }
        TU_CHECK(sqrt(dd) <= (t == BSRMV_DOUBLE ? 1e-6 : 1e-2) * sqrt(ss),
                 "column %d: |x - x_alone| %g, |x_alone| %g", j, sqrt(dd), sqrt(ss));
        const double rel = ref_residual(A, b, x, n, t);
        TU_CHECK(rel <= 2 * rtol, "column %d: residual %g", j, rel);
    }
    printf("\n");
    /* bad arguments: k, ld, a host pointer */
    TU_FAILS(bsrmv_gpu_solve_multi(m, d.A, d.P, n, 0, d.b, ldb, dX, ldx, &o, rep, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_solve_multi(m, d.A, d.P, n, k, d.b, n - 1, dX, ldx, &o, rep, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_solve_multi(m, d.A, d.P, n, k, B, ldb, dX, ldx, &o, rep, NULL),
             BSRMV_ERR_ARGUMENT);
    release(&d);
    bsrmv_gpu_free(dX);
    bsrmv_gpu_free(dx1);
    free(x1);
    free(B);
    free(X);
    free(rep);
    bsrmv_precond_destroy(P);
}

static int stop_at_3(int iter, double rel, void *ctx)
{
    ++*(int *)ctx;
    return iter == 3;
}

static void failures(void)
{
    bsrmv_matrix *A, *B;
    TU_OK(bsrmv_generate_reservoir(&A, 6, 5, 4, 3, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_generate_reservoir(&B, 6, 5, 3, 3, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    const int64_t n = 6 * 5 * 4 * 3;
    bsrmv_precond *P, *PB;
    TU_OK(bsrmv_precond_block_jacobi(&P, A));
    TU_OK(bsrmv_precond_block_jacobi(&PB, B));
    double *b = tu_random_vector(n, BSRMV_DOUBLE, 1), *hx = calloc((size_t)n, sizeof *hx);
    dev d = upload(A, P, b, n, BSRMV_DOUBLE);
    bsrmv_gpu_precond *dPB;
    TU_OK(bsrmv_gpu_precond_upload(&dPB, PB, 0));
    const bsrmv_solver bi = BSRMV_SOLVER_BICGSTAB;
    bsrmv_solve_report rep;
    TU_FAILS(bsrmv_gpu_solve(bi, NULL, d.P, d.b, d.x, n, NULL, &rep, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_solve(bi, d.A, d.P, d.b, d.x, n - 1, NULL, &rep, NULL),
             BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_gpu_solve(bi, d.A, dPB, d.b, d.x, n, NULL, &rep, NULL), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_gpu_solve(bi, d.A, d.P, b, d.x, n, NULL, &rep, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_solve(bi, d.A, d.P, d.b, hx, n, NULL, &rep, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_precond_upload(NULL, P, 0), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_precond_upload(&dPB, NULL, 0), BSRMV_ERR_ARGUMENT);
    /* the monitor stops, the limit is reported */
    int calls = 0;
    bsrmv_solve_options o = {.x0_zero = 1, .monitor = stop_at_3, .monitor_ctx = &calls};
    TU_FAILS(bsrmv_gpu_solve(bi, d.A, d.P, d.b, d.x, n, &o, &rep, NULL), BSRMV_ERR_NOT_CONVERGED);
    TU_CHECK(calls == 3 && rep.iterations == 3, "monitor: %d calls", calls);
    bsrmv_solve_options lim = {.x0_zero = 1, .max_iter = 2};
    TU_FAILS(bsrmv_gpu_solve(BSRMV_SOLVER_GMRES, d.A, d.P, d.b, d.x, n, &lim, &rep, NULL),
             BSRMV_ERR_NOT_CONVERGED);
    TU_CHECK(rep.iterations == 2, "limit: %d iterations", rep.iterations);
    /* b == 0: x = 0 */
    double *zero = calloc((size_t)n, sizeof *zero);
    TU_OK(bsrmv_gpu_to_device(d.b, zero, d.bytes));
    TU_OK(bsrmv_gpu_solve(bi, d.A, d.P, d.b, d.x, n, NULL, &rep, NULL));
    TU_OK(bsrmv_gpu_to_host(hx, d.x, d.bytes));
    TU_CHECK(rep.converged && rep.iterations == 0 && memcmp(hx, zero, d.bytes) == 0, "b == 0");
    /* a singular diagonal block stops the preconditioner before the GPU */
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &val));
    double *v2 = tu_copy_vector(val, rp[120] * 9, BSRMV_DOUBLE);
    int64_t k = rp[17];
    while (ci[k] != 17)
        k++;
    memset(v2 + k * 9, 0, 9 * sizeof *v2);
    bsrmv_matrix *S;
    bsrmv_precond *PS;
    TU_OK(bsrmv_matrix_wrap(&S, 120, 120, 3, rp[120], rp, ci, v2, BSRMV_DOUBLE,
                            BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_precond_block_jacobi(&PS, S), BSRMV_ERR_SINGULAR);
    TU_CHECK(strstr(bsrmv_last_error(), "block row 17"), "%s", bsrmv_last_error());
    bsrmv_matrix_destroy(S);
    free(v2);
    free(zero);
    free(b);
    free(hx);
    bsrmv_gpu_precond_destroy(dPB);
    release(&d);
    bsrmv_precond_destroy(P);
    bsrmv_precond_destroy(PB);
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(B);
}

/* ---- complex values ------------------------------------------------ */

static const char *ctname(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_DOUBLE ? "complex double" : "complex float";
}

static double crtol(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_DOUBLE ? 1e-9 : 1e-4;
}

/* ||a - c|| / ||c|| of two complex vectors */
static double cdist(const void *a, const void *c, int64_t n, bsrmv_type t)
{
    long double dd = 0, cc = 0;
    for (int64_t i = 0; i < n; i++) {
        const tu_ldc v = tu_cget(c, t, i), d = tu_cget(a, t, i) - v;
        dd += creall(d * conjl(d));
        cc += creall(v * conjl(v));
    }
    return (double)sqrtl(dd / cc);
}

/* compare() for a complex system: the device solution's residual from the
 * dense copy of the stored values (tu_csys_residual, not the library's
 * SpMV), the host solve of the same system for iterations, solution and
 * traffic.  x on the device is NaN: x0_zero must not read it. */
static void compare_complex(bsrmv_solver m, const tu_csys *S, int precond, int restart,
                            uint64_t seed)
{
    const bsrmv_type t = S->type;
    const int64_t n = S->n;
    bsrmv_precond *P = NULL;
    if (precond)
        TU_OK(bsrmv_precond_block_jacobi(&P, S->A));
    void *b = tu_random_vector(n, t, seed), *xc = tu_nan_vector(n, t), *xg = tu_nan_vector(n, t);
    const double rtol = crtol(t);
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .restart = restart, .x0_zero = 1};
    bsrmv_solve_report rc, rg;
    TU_OK(bsrmv_solve(m, S->A, P, b, xc, n, &o, &rc));
    dev d = upload(S->A, P, b, n, t);
    TU_OK(bsrmv_gpu_to_device(d.x, xg, d.bytes));
    TU_OK(bsrmv_gpu_solve(m, d.A, d.P, d.b, d.x, n, &o, &rg, NULL));
    TU_OK(bsrmv_gpu_to_host(xg, d.x, d.bytes));
    const double rel = tu_csys_residual(S, b, xg), dx = cdist(xg, xc, n, t);
    printf("  %-8s bs %2d %-14s %s restart %2d: gpu %4d iterations, residual %.2e; cpu %4d; "
           "|xg-xc|/|xc| %.2e\n",
           method_name[m], S->bs, ctname(t), precond ? "jacobi" : "none  ", restart,
           rg.iterations, rel, rc.iterations, dx);
    TU_CHECK(rc.converged && rg.converged && rg.iterations > 0, "not converged");
    TU_CHECK(rel <= 2 * rtol, "GPU residual %g", rel);
    TU_CHECK(fabs(rg.true_rel_residual - rel) <= 0.05 * rel + 1e-2 * rtol,
             "GPU reports %g, independent %g", rg.true_rel_residual, rel);
    /* float gets the 10% slack of compare() */
    const int slack = 2 + (t == BSRMV_COMPLEX_FLOAT ? rc.iterations / 10 : 0);
    TU_CHECK(abs(rg.iterations - rc.iterations) <= slack, "iterations gpu %d, cpu %d",
             rg.iterations, rc.iterations);
    TU_CHECK(dx <= (t == BSRMV_COMPLEX_DOUBLE ? 1e-6 : 1e-2), "solutions differ by %g", dx);
    if (rg.iterations == rc.iterations)
        TU_CHECK(m == BSRMV_SOLVER_CG ? rg.bytes == rc.bytes
                                      : fabs(rg.bytes - rc.bytes) <= 0.02 * rc.bytes,
                 "traffic gpu %g, cpu %g", rg.bytes, rc.bytes);
    release(&d);
    free(b);
    free(xc);
    free(xg);
    bsrmv_precond_destroy(P);
}

/* multi() for a complex system: the columns' products are one SpMM each
 * (column 1 is zero, so k = 3 runs two columns: a chunk of width 2). */
static void multi_complex(bsrmv_solver m, const tu_csys *S, int k)
{
    const bsrmv_type t = S->type;
    const size_t vs = bsrmv_type_size(t);
    const int64_t n = S->n, ldb = n + 3, ldx = n + 5;
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, S->A));
    char *B = tu_random_vector(ldb * k, t, 40), *X = tu_nan_vector(ldx * k, t);
    memset(B + (size_t)ldb * vs, 0, (size_t)n * vs);
    const double rtol = crtol(t);
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .x0_zero = 1};
    bsrmv_solve_report *rep = malloc((size_t)k * sizeof *rep), one;
    dev d = upload(S->A, P, B, ldb * k, t);
    void *dX, *dx1;
    TU_OK(bsrmv_gpu_malloc(&dX, (size_t)(ldx * k) * vs));
    TU_OK(bsrmv_gpu_malloc(&dx1, (size_t)n * vs));
    TU_OK(bsrmv_gpu_to_device(dX, X, (size_t)(ldx * k) * vs));
    TU_OK(bsrmv_gpu_solve_multi(m, d.A, d.P, n, k, d.b, ldb, dX, ldx, &o, rep, NULL));
    TU_OK(bsrmv_gpu_to_host(X, dX, (size_t)(ldx * k) * vs));
    void *x1 = malloc((size_t)n * vs);
    TU_CHECK(rep && x1, "out of memory");
    printf("  %-8s bs %2d %-14s k %2d: iterations", method_name[m], S->bs, ctname(t), k);
    for (int j = 0; j < k; j++) {
        const char *b = B + (size_t)(j * ldb) * vs, *x = X + (size_t)(j * ldx) * vs;
        TU_OK(bsrmv_gpu_solve(m, d.A, d.P, (const char *)d.b + (size_t)(j * ldb) * vs, dx1, n,
                              &o, &one, NULL));
        TU_OK(bsrmv_gpu_to_host(x1, dx1, (size_t)n * vs));
        printf(" %d", rep[j].iterations);
        /* the SpMM sums otherwise than the plan's SpMV kernel: complex
         * float BiCGSTAB gets the 10% slack of the real multi() */
        const int slack =
            1 + (t == BSRMV_COMPLEX_FLOAT && m == BSRMV_SOLVER_BICGSTAB ? one.iterations / 10 : 0);
        TU_CHECK(rep[j].converged && abs(rep[j].iterations - one.iterations) <= slack,
                 "column %d: %d iterations, alone %d", j, rep[j].iterations, one.iterations);
        for (int64_t i = n; i < ldx; i++)
            TU_CHECK(isnan(creall(tu_cget(x, t, i))), "column %d: padding written", j);
        if (j == 1) {
            for (int64_t i = 0; i < n; i++)
                TU_CHECK(tu_cget(x, t, i) == 0, "zero column: x[%lld] != 0", (long long)i);
            TU_CHECK(rep[j].iterations == 0, "zero column: %d iterations", rep[j].iterations);
            continue;
        }
        const double dd = cdist(x, x1, n, t), rel = tu_csys_residual(S, b, x);
        TU_CHECK(dd <= (t == BSRMV_COMPLEX_DOUBLE ? 1e-6 : 1e-2), "column %d: |x - x_alone| %g",
                 j, dd);
        TU_CHECK(rel <= 2 * rtol, "column %d: residual %g", j, rel);
    }
    printf("\n");
    release(&d);
    bsrmv_gpu_free(dX);
    bsrmv_gpu_free(dx1);
    free(x1);
    free(B);
    free(X);
    free(rep);
    bsrmv_precond_destroy(P);
}

/* What complex values still get: the refinement (a real double matrix
 * with its float copy) refused with a message naming it, a real
 * preconditioner for a complex matrix refused, and CG on an indefinite
 * Hermitian matrix an error or a solution that really is one. */
static void complex_limits(void)
{
    tu_csys S = tu_csys_make(20, 3, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR, TU_INDEFINITE, 300);
    void *b = tu_random_vector(S.n, S.type, 21), *x = tu_nan_vector(S.n, S.type);
    dev d = upload(S.A, NULL, b, S.n, S.type);
    bsrmv_solve_report rep;
    TU_FAILS(bsrmv_gpu_solve_refined(BSRMV_SOLVER_GMRES, d.A, d.A, NULL, d.b, d.x, S.n, NULL,
                                     &rep, NULL),
             BSRMV_ERR_UNSUPPORTED);
    TU_CHECK(strstr(bsrmv_last_error(), "bsrmv_gpu_solve_refined") &&
                 strstr(bsrmv_last_error(), "complex"),
             "%s", bsrmv_last_error());
    printf("  refined, complex double: %s\n", bsrmv_last_error());

    bsrmv_matrix *R;
    bsrmv_precond *PR;
    bsrmv_gpu_precond *dPR;
    TU_OK(bsrmv_generate_block_laplacian(&R, 4, 5, 1, 3, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_precond_block_jacobi(&PR, R));
    TU_OK(bsrmv_gpu_precond_upload(&dPR, PR, 0));
    TU_FAILS(bsrmv_gpu_solve(BSRMV_SOLVER_GMRES, d.A, dPR, d.b, d.x, S.n, NULL, &rep, NULL),
             BSRMV_ERR_DIMENSION);

    bsrmv_solve_options o = {.rtol = crtol(S.type), .max_iter = 300, .x0_zero = 1};
    const bsrmv_status st = bsrmv_gpu_solve(BSRMV_SOLVER_CG, d.A, NULL, d.b, d.x, S.n, &o, &rep,
                                            NULL);
    printf("  cg on indefinite complex double: %s (%s)\n", bsrmv_status_string(st),
           st ? bsrmv_last_error() : "");
    if (st == BSRMV_SUCCESS) {
        TU_OK(bsrmv_gpu_to_host(x, d.x, d.bytes));
        TU_CHECK(tu_csys_residual(&S, b, x) <= 2 * o.rtol, "CG claimed a solution it has not");
    } else {
        TU_CHECK(st == BSRMV_ERR_NOT_CONVERGED && !rep.converged, "%s", bsrmv_status_string(st));
    }
    bsrmv_gpu_precond_destroy(dPR);
    bsrmv_precond_destroy(PR);
    bsrmv_matrix_destroy(R);
    release(&d);
    free(b);
    free(x);
    tu_csys_drop(&S);
}

static void test_complex(void)
{
    const bsrmv_type types[2] = {BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT};
    const int bss[5] = {1, 2, 3, 4, 11}; /* 11: the runtime-bs kernels */
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 5; i++) {
            /* each block size in both orders over the two types */
            const bsrmv_order order = (i + t) % 2 ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR;
            const int64_t mb = 600 / bss[i] + 7;
            const uint64_t seed = 100 + 10 * (uint64_t)t + (uint64_t)i;
            tu_csys N = tu_csys_make(mb, bss[i], types[t], order, TU_NONHERM, seed);
            for (int p = 0; p < 2; p++) {
                compare_complex(BSRMV_SOLVER_BICGSTAB, &N, p, 0, 7 + p);
                /* restart 3: many cycles, the rotations restarted */
                compare_complex(BSRMV_SOLVER_GMRES, &N, p, p ? 20 : 3, 9 + p);
            }
            if (bss[i] == 3)
                multi_complex(BSRMV_SOLVER_BICGSTAB, &N, 3);
            if (bss[i] == 11) /* the runtime-bs SpMM kernel */
                multi_complex(BSRMV_SOLVER_GMRES, &N, 5);
            tu_csys_drop(&N);
            tu_csys H = tu_csys_make(mb, bss[i], types[t], order, TU_HPD, 200 + seed);
            for (int p = 0; p < 2; p++)
                compare_complex(BSRMV_SOLVER_CG, &H, p, 0, 11 + p);
            compare_complex(BSRMV_SOLVER_GMRES, &H, 1, 0, 13);
            if (bss[i] == 2)
                multi_complex(BSRMV_SOLVER_CG, &H, 4);
            tu_csys_drop(&H);
        }
    complex_limits();
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    const bsrmv_type types[2] = {BSRMV_DOUBLE, BSRMV_FLOAT};
    for (int t = 0; t < 2; t++) {
        bsrmv_matrix *L, *R, *R9;
        TU_OK(bsrmv_generate_block_laplacian(&L, 12, 10, 9, 3, 2, types[t], BSRMV_COL_MAJOR));
        TU_OK(bsrmv_generate_reservoir(&R, 12, 10, 9, 4, 3, types[t], BSRMV_COL_MAJOR));
        TU_OK(bsrmv_generate_reservoir(&R9, 8, 7, 6, 9, 4, types[t], BSRMV_ROW_MAJOR));
        compare(BSRMV_SOLVER_CG, L, 1);
        compare(BSRMV_SOLVER_CG, L, 0);
        compare(BSRMV_SOLVER_BICGSTAB, R, 1);
        compare(BSRMV_SOLVER_BICGSTAB, R, 0);
        compare(BSRMV_SOLVER_GMRES, R, 1);
        compare(BSRMV_SOLVER_GMRES, R, 0);
        compare(BSRMV_SOLVER_BICGSTAB, R9, 1);
        compare(BSRMV_SOLVER_GMRES, R9, 1);
        bsrmv_matrix_destroy(L);
        bsrmv_matrix_destroy(R);
        bsrmv_matrix_destroy(R9);
    }
    bsrmv_matrix *L, *R, *F;
    TU_OK(bsrmv_generate_block_laplacian(&L, 12, 10, 9, 3, 2, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_generate_reservoir(&R, 12, 10, 9, 4, 3, BSRMV_FLOAT, BSRMV_ROW_MAJOR));
    const int ks[4] = {1, 3, 8, 17};
    for (int i = 0; i < 4; i++) {
        multi(BSRMV_SOLVER_CG, L, ks[i]);
        multi(BSRMV_SOLVER_BICGSTAB, R, ks[i]);
    }
    multi(BSRMV_SOLVER_GMRES, R, 3);
    /* mixed precision: the columns' products by SpMM too, in double */
    TU_OK(bsrmv_matrix_convert(&F, L, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_set_vector_type(F, BSRMV_DOUBLE));
    multi(BSRMV_SOLVER_CG, F, 3);
    bsrmv_matrix_destroy(F);
    bsrmv_matrix_destroy(L);
    bsrmv_matrix_destroy(R);
    failures();
    test_complex();
    printf("test_gpu_solve: ok\n");
    return 0;
}
