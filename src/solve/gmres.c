/* Restarted GMRES(m) with right preconditioning: A M y = b, x = x0 + M V y.
 *
 * Arnoldi by classical Gram-Schmidt, so that the m+1 dot products of a step
 * are one batched reduction (mdot) and the subtraction one pass (lincomb,
 * which also returns the new norm); a second pass is made only when the
 * first lost more than half the norm (the DGKS test), which keeps the basis
 * orthogonal to working precision.  Basis vectors are stored unnormalised,
 * v_i = c_i V_i: the scale factors c_i go into the coefficients, so no pass
 * is spent on normalising.  The residual norm comes from the Givens
 * rotations, with no extra reduction; x is updated once per cycle by one
 * fused pass x += M (sum_i y_i c_i V_i). */
#include "solve_internal.h"

#include <math.h>
#include <stdlib.h>

static bsrmv_status broke(const sv_run *r, const char *what, double v)
{
    return bsrmv_fail(BSRMV_ERR_NOT_CONVERGED, "GMRES broke down at iteration %d: %s = %g",
                      r->iterations, what, v);
}

/* Orthogonalises u = V_{j+1} against V_0..V_j: h[i] += c_i c_j (V_i.u),
 * u -= sum c_i^2 (V_i.u) V_i; returns ||u||^2 in *nu. */
static bsrmv_status arnoldi(sv_run *r, void *V, int j, const double *c, double *h, double *d,
                            double *coef, double *nu)
{
    bsrmv_status st;
    void *u = sv_vec(r->be, V, j + 1);
    /* the last dot of the first pass is u.u, for the reorthogonalisation test */
    if ((st = sv_mdot(r, j + 2, V, u, d)))
        return st;
    double uu = d[j + 1];
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i <= j; i++) {
            h[i] += c[i] * c[j] * d[i];
            coef[i] = c[i] * c[i] * d[i];
        }
        if ((st = sv_lincomb(r, j + 1, coef, V, u, nu)))
            return st;
        if (pass == 1 || !(*nu < 0.5 * uu))
            break;
        uu = *nu;
        if ((st = sv_mdot(r, j + 1, V, u, d)))
            return st;
    }
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_sv_gmres(sv_run *r, const void *b, void *x)
{
    sv_backend *be = r->be;
    const int m = r->restart;
    const size_t m1 = (size_t)m + 1;
    double *H = bsrmv_calloc(m1 * (size_t)m, sizeof *H);
    double *work = bsrmv_calloc(7 * m1, sizeof *work);
    void *V = NULL, *z = NULL;
    bsrmv_status st = BSRMV_SUCCESS;
    if (!H || !work) {
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for GMRES(%d)", m);
        goto done;
    }
    double *cs = work, *sn = cs + m1, *g = sn + m1, *c = g + m1, *y = c + m1, *d = y + m1,
           *coef = d + m1;
    if ((st = be->alloc(be, m + 1, &V)) || (be->has_p && (st = be->alloc(be, 1, &z))))
        goto done;

    double rel, cycle_start = INFINITY;
    bsrmv_sv_start(r);
    for (;;) {
        if ((st = bsrmv_sv_true_residual(r, b, x, V, &rel)))
            goto done;
        if (rel <= r->rtol) {
            r->converged = 1;
            break;
        }
        if (r->iterations >= r->max_iter) {
            st = bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                            "GMRES(%d) reached the limit of %d iterations at relative residual "
                            "%g > rtol %g",
                            m, r->max_iter, rel, r->rtol);
            break;
        }
        if (!(rel < cycle_start)) {
            st = bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                            "GMRES(%d) stagnated at iteration %d: a restart cycle left the "
                            "relative residual at %g (rtol %g)",
                            m, r->iterations, rel, r->rtol);
            break;
        }
        cycle_start = rel;
        const double beta = rel * r->bnorm;
        c[0] = 1 / beta;
        g[0] = beta;
        int k = 0;
        while (k < m && r->iterations < r->max_iter) {
            const int j = k;
            double *h = H + (size_t)j * m1, nu;
            void *vj = sv_vec(be, V, j);
            for (int i = 0; i <= j + 1; i++)
                h[i] = 0;
            if (be->has_p && (st = sv_precond(r, vj, z)))
                goto done;
            if ((st = sv_spmv(r, be->has_p ? z : vj, sv_vec(be, V, j + 1))) ||
                (st = arnoldi(r, V, j, c, h, d, coef, &nu)))
                goto done;
            if (!isfinite(nu)) {
                st = broke(r, "||w||^2", nu);
                goto done;
            }
            h[j + 1] = c[j] * sqrt(nu);
            for (int i = 0; i < j; i++) {
                const double t = cs[i] * h[i] + sn[i] * h[i + 1];
                h[i + 1] = -sn[i] * h[i] + cs[i] * h[i + 1];
                h[i] = t;
            }
            const double rho = hypot(h[j], h[j + 1]);
            cs[j] = rho > 0 ? h[j] / rho : 1;
            sn[j] = rho > 0 ? h[j + 1] / rho : 0;
            h[j] = rho;
            h[j + 1] = 0;
            g[j + 1] = -sn[j] * g[j];
            g[j] = cs[j] * g[j];
            r->iterations++;
            k = j + 1;
            rel = fabs(g[j + 1]) / r->bnorm;
            if (bsrmv_sv_monitor(r, rel, &st))
                break;
            if (rel <= r->rtol)
                break;
            c[j + 1] = 1 / sqrt(nu);
        }
        /* y = H^-1 g (upper triangular), x += M V diag(c) y */
        for (int i = k - 1; i >= 0; i--) {
            double s = g[i];
            for (int l = i + 1; l < k; l++)
                s -= H[i + (size_t)l * m1] * y[l];
            if (H[i + (size_t)i * m1] == 0) {
                st = broke(r, "H(i,i)", 0.0);
                goto done;
            }
            y[i] = s / H[i + (size_t)i * m1];
            coef[i] = y[i] * c[i];
        }
        bsrmv_status ms = st;
        if (k > 0 && (st = sv_gmres_x(r, k, coef, V, x)))
            goto done;
        if (ms) {
            st = ms; /* the monitor stopped the solve */
            break;
        }
    }
done:
    be->release(be, V);
    be->release(be, z);
    bsrmv_free(H);
    bsrmv_free(work);
    return st;
}
