/* The host solvers on small matrices of every kind (well and badly
 * conditioned, symmetric and Hermitian storage, complex values, float
 * values with double vectors), with or without block Jacobi, odd options
 * (tiny or coarse tolerances, short iteration limits and restarts, a
 * start vector or none, a zero or non-finite right-hand side) and one or
 * several right-hand sides.  Whatever the method does, a call must end
 * with a documented status, and a success must be true: the residual of
 * the returned x, recomputed here in long double, within the tolerance
 * (plus the rounding of a residual computed in the vector type), and the
 * report's residual that one. */
#include "fuzz_common.h"

#include "fuzz_values.h"
#include <omp.h>
#include <stdio.h>

#define MAXB 8

static void fail(const char *what, bsrmv_status s)
{
    fprintf(stderr, "%s: status %d: %s\n", what, (int)s, bsrmv_last_error());
    abort();
}

/* The outcome of one solve of column j: a documented status, a report
 * that agrees with it, and on success a true residual. */
static void check_solution(bsrmv_status s, const bsrmv_solve_report *rep, int max_iter,
                           double rtol, const lc *D, int64_t n, const lc *b, const void *x,
                           bsrmv_type vt, int bad_input)
{
    if (bad_input) {
        if (s != BSRMV_ERR_ARGUMENT)
            fail("non-finite input not refused", s);
        return;
    }
    if (s != BSRMV_SUCCESS && s != BSRMV_ERR_NOT_CONVERGED)
        fail("undocumented status", s);
    if (rep->converged != (s == BSRMV_SUCCESS) || rep->iterations < 0 ||
        rep->iterations > max_iter)
        fail("report disagrees", s);
    if (s != BSRMV_SUCCESS)
        return;
    const int vfloat = vt == BSRMV_FLOAT || vt == BSRMV_COMPLEX_FLOAT;
    const long double eps = vfloat ? 6e-8L : 1.2e-16L;
    long double rr = 0, bb = 0, ss = 0;
    for (int64_t i = 0; i < n; i++) {
        lc r = b[i];
        long double mag = cabsl(b[i]);
        for (int64_t l = 0; l < n; l++) {
            lc ax = D[i * n + l] * getv(vt, x, l);
            r -= ax;
            mag += cabsl(ax);
        }
        rr += cabsl(r) * cabsl(r);
        bb += cabsl(b[i]) * cabsl(b[i]);
        ss += mag * mag;
    }
    rr = sqrtl(rr);
    bb = sqrtl(bb);
    /* The residual computed in the vector type errs by up to about
     * (n + 2) eps (|A||x| + |b|) per entry. */
    const long double slack = 4 * (n + 2) * eps * sqrtl(ss);
    if (bb == 0) {
        for (int64_t i = 0; i < n; i++)
            if (getv(vt, x, i) != 0)
                fail("b = 0 but x != 0", s);
        return;
    }
    if (!(rr <= rtol * bb + slack))
        fail("converged, but the true residual is above the tolerance", s);
    if (!(fabsl(rep->true_rel_residual - rr / bb) <= slack / bb + 1e-6L * rr / bb))
        fail("the report's true residual is not that of x", s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int sizes[] = {1, 2, 3, 4, 5, 6, 8};
    static const double rtols[] = {0, 1e-2, 1e-6, 1e-10, 1e-14, 1e-300};
    fz f = {data, size};
    omp_set_num_threads(1 + (int)(fz_u8(&f) % 3));
    const bsrmv_solver method = (bsrmv_solver)(fz_u8(&f) % 3);
    const bsrmv_type type = (bsrmv_type)(fz_u8(&f) % 4);
    const int cplx = type >= BSRMV_COMPLEX_FLOAT;
    const int bs = sizes[fz_u8(&f) % 7];
    const int64_t nb = 1 + fz_u8(&f) % MAXB, n = nb * bs, bs2 = (int64_t)bs * bs;
    const bsrmv_order order = (bsrmv_order)(fz_u8(&f) & 1);
    const unsigned mode = fz_u8(&f), mode2 = fz_u8(&f);
    const int dominant = mode & 1, symmetric = mode & 2, stored_sym = (mode & 4) && symmetric;
    const int herm = cplx && (mode & 8); /* Hermitian mirror instead of symmetric */
    const int precond = mode & 16, mixed = type == BSRMV_FLOAT && (mode & 32);
    const int multi = mode & 64, x0_zero = mode & 128;
    const bsrmv_type vt = mixed ? BSRMV_DOUBLE : type;
    const size_t ts = bsrmv_type_size(type), vs = bsrmv_type_size(vt);

    /* The dense matrix, then its blocks: a column mask per block row, the
     * diagonal always there, mirrored when symmetric. */
    lc *D = calloc((size_t)(n * n), sizeof *D);
    int present[MAXB][MAXB] = {{0}};
    for (int64_t i = 0; i < nb; i++) {
        unsigned mask = fz_u8(&f) | 1u << i;
        for (int64_t j = 0; j < nb; j++)
            if (mask >> j & 1) {
                present[i][j] = 1;
                if (symmetric)
                    present[j][i] = 1;
            }
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = symmetric ? i : 0; j < n; j++) {
            if (!present[i / bs][j / bs])
                continue;
            lc v = fz_small(&f);
            if (cplx)
                v += I * (long double)fz_small(&f);
            if (i == j && herm)
                v = creall(v);
            if (i == j && dominant)
                v += 16.0L * n;
            D[i * n + j] = v;
            if (symmetric)
                D[j * n + i] = herm ? conjl(v) : v;
        }
    int64_t rp[MAXB + 1], nnzb = 0;
    int32_t ci[MAXB * MAXB];
    void *val = malloc((size_t)(nb * nb * bs2) * ts);
    rp[0] = 0;
    for (int64_t i = 0; i < nb; i++) {
        for (int64_t j = 0; j < nb; j++)
            if (present[i][j]) {
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c < bs; c++)
                        setv(type, val,
                             nnzb * bs2 + (order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c),
                             D[(i * bs + r) * n + j * bs + c]);
                ci[nnzb++] = (int32_t)j;
            }
        rp[i + 1] = nnzb;
    }
    bsrmv_matrix *F = NULL, *A = NULL;
    bsrmv_status s = bsrmv_matrix_create(&F, nb, nb, bs, nnzb, rp, ci, val, type, order);
    if (s)
        fail("create", s);
    if (stored_sym) {
        s = herm ? bsrmv_matrix_to_herm(&A, F, 0) : bsrmv_matrix_to_sym(&A, F, 0);
        if (s)
            fail("to_sym", s);
    } else {
        A = F;
        F = NULL;
    }
    if (mixed && (s = bsrmv_matrix_set_vector_type(A, BSRMV_DOUBLE)))
        fail("set_vector_type", s);
    bsrmv_precond *P = NULL;
    if (precond) {
        s = bsrmv_precond_block_jacobi(&P, A);
        if (s != BSRMV_SUCCESS && s != BSRMV_ERR_SINGULAR)
            fail("block jacobi", s);
        if (s != BSRMV_SUCCESS && P)
            fail("block jacobi refused, but made", s);
    }

    bsrmv_solve_options opt = {0};
    opt.rtol = rtols[mode2 % 6];
    opt.max_iter = 1 + (int)(fz_u8(&f) % 60);
    opt.restart = 1 + (int)(fz_u8(&f) % 10);
    opt.x0_zero = x0_zero != 0;
    const double rtol = opt.rtol == 0 ? 1e-8 : opt.rtol;
    const int k = multi ? 1 + (int)(fz_u8(&f) % 4) : 1;
    const int zero_b = (mode2 >> 3) % 8 == 0, nan_b = (mode2 >> 3) % 8 == 1;
    const int nan_x = !x0_zero && (mode2 >> 3) % 8 == 2;
    lc *b = calloc((size_t)(n * k) + 1, sizeof *b);
    void *bv = malloc((size_t)(n * k) * vs + 1), *xv = malloc((size_t)(n * k) * vs + 1);
    for (int64_t i = 0; i < n * k; i++) {
        if (!zero_b) {
            b[i] = fz_small(&f);
            if (cplx)
                b[i] += I * (long double)fz_small(&f);
        }
        setv(vt, bv, i, b[i]);
        setv(vt, xv, i, x0_zero ? NAN : fz_small(&f)); /* x0_zero: x is not read */
    }
    if (nan_b)
        setv(vt, bv, (int64_t)(fz_u8(&f) % (unsigned)(n * k)), NAN);
    /* An infinite start is refused where it is read: b == 0 gives x = 0
     * without reading x. */
    int bad = nan_b;
    if (nan_x) {
        const int64_t e = (int64_t)(fz_u8(&f) % (unsigned)(n * k)), j = e / n;
        setv(vt, xv, e, INFINITY);
        for (int64_t i = 0; i < n; i++)
            bad |= b[j * n + i] != 0;
    }

    if (!multi) {
        bsrmv_solve_report rep;
        s = bsrmv_solve(method, A, P, bv, xv, n, &opt, &rep);
        check_solution(s, &rep, opt.max_iter, rtol, D, n, b, xv, vt, bad);
    } else {
        bsrmv_solve_report rep[4];
        s = bsrmv_solve_multi(method, A, P, n, k, bv, n, xv, n, &opt, rep);
        if (bad) {
            if (s != BSRMV_ERR_ARGUMENT)
                fail("non-finite input not refused", s);
        } else {
            int all = 1;
            for (int j = 0; j < k; j++) {
                bsrmv_status sj = rep[j].converged ? BSRMV_SUCCESS : BSRMV_ERR_NOT_CONVERGED;
                all &= rep[j].converged;
                check_solution(sj, &rep[j], opt.max_iter, rtol, D, n, b + j * n,
                               (char *)xv + (size_t)(j * n) * vs, vt, 0);
            }
            if (s != (all ? BSRMV_SUCCESS : BSRMV_ERR_NOT_CONVERGED))
                fail("multi: status and reports disagree", s);
        }
    }
    free(b);
    free(bv);
    free(xv);
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(F);
    free(val);
    free(D);
    return 0;
}
