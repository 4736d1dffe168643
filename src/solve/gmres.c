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
 * fused pass x += M (sum_i y_i c_i V_i).
 *
 * The complex types run the same recurrences with x^H y dots and a complex
 * Hessenberg matrix.  The entry below the diagonal, c_j ||u||, is always
 * real, so each rotation has a complex cosine and a real sine:
 * [conj(cs) sn; -sn cs], unitary since |cs|^2 + sn^2 = 1; for real values
 * it is the usual Givens rotation, operation for operation. */
#include "solve_internal.h"

#include <math.h>
#include <stdlib.h>

static bsrmv_status broke(const sv_run *r, const char *what, double v)
{
    return bsrmv_fail(BSRMV_ERR_NOT_CONVERGED, "GMRES broke down at iteration %d: %s = %g",
                      r->iterations, what, v);
}

/* s v for a real s */
static sv_scalar scale(double s, sv_scalar v)
{
    return sv_sc(s * v.re, s * v.im);
}

/* Orthogonalises u = V_{j+1} against V_0..V_j: h[i] += c_i c_j (V_i.u),
 * u -= sum c_i^2 (V_i.u) V_i; returns ||u||^2 in *nu. */
static bsrmv_status arnoldi(sv_run *r, void *V, int j, const double *c, sv_scalar *h,
                            sv_scalar *d, sv_scalar *coef, double *nu)
{
    bsrmv_status st;
    void *u = sv_vec(r->be, V, j + 1);
    /* the last dot of the first pass is u.u, for the reorthogonalisation test */
    if ((st = sv_mdot(r, j + 2, V, u, d)))
        return st;
    double uu = d[j + 1].re;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i <= j; i++) {
            h[i] = sv_sc_add(h[i], scale(c[i] * c[j], d[i]));
            coef[i] = scale(c[i] * c[i], d[i]);
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
    sv_scalar *H = bsrmv_calloc(m1 * (size_t)m, sizeof *H);
    sv_scalar *work = bsrmv_calloc(5 * m1, sizeof *work);
    double *rwork = bsrmv_calloc(2 * m1, sizeof *rwork);
    void *V = NULL, *z = NULL;
    bsrmv_status st = BSRMV_SUCCESS;
    if (!H || !work || !rwork) {
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for GMRES(%d)", m);
        goto done;
    }
    sv_scalar *cs = work, *g = cs + m1, *y = g + m1, *d = y + m1, *coef = d + m1;
    double *sn = rwork, *c = sn + m1;
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
        g[0] = sv_sc(beta, 0);
        int k = 0;
        while (k < m && r->iterations < r->max_iter) {
            const int j = k;
            sv_scalar *h = H + (size_t)j * m1;
            double nu;
            void *vj = sv_vec(be, V, j);
            for (int i = 0; i <= j + 1; i++)
                h[i] = sv_sc(0, 0);
            if (be->has_p && (st = sv_precond(r, vj, z)))
                goto done;
            if ((st = sv_spmv(r, be->has_p ? z : vj, sv_vec(be, V, j + 1))) ||
                (st = arnoldi(r, V, j, c, h, d, coef, &nu)))
                goto done;
            if (!isfinite(nu)) {
                st = broke(r, "||w||^2", nu);
                goto done;
            }
            const double sub = c[j] * sqrt(nu);
            h[j + 1] = sv_sc(sub, 0);
            for (int i = 0; i < j; i++) {
                const sv_scalar t =
                    sv_sc_add(sv_sc_mul(sv_sc_conj(cs[i]), h[i]), scale(sn[i], h[i + 1]));
                h[i + 1] = sv_sc_add(scale(-sn[i], h[i]), sv_sc_mul(cs[i], h[i + 1]));
                h[i] = t;
            }
            const double rho = hypot(sv_sc_abs(h[j]), sub);
            cs[j] = rho > 0 ? sv_sc_div(h[j], sv_sc(rho, 0)) : sv_sc(1, 0);
            sn[j] = rho > 0 ? sub / rho : 0;
            h[j] = sv_sc(rho, 0);
            h[j + 1] = sv_sc(0, 0);
            g[j + 1] = scale(-sn[j], g[j]);
            g[j] = sv_sc_mul(sv_sc_conj(cs[j]), g[j]);
            r->iterations++;
            k = j + 1;
            rel = sv_sc_abs(g[j + 1]) / r->bnorm;
            if (bsrmv_sv_monitor(r, rel, &st))
                break;
            if (rel <= r->rtol)
                break;
            c[j + 1] = 1 / sqrt(nu);
        }
        /* y = H^-1 g (upper triangular), x += M V diag(c) y */
        for (int i = k - 1; i >= 0; i--) {
            sv_scalar s = g[i];
            for (int l = i + 1; l < k; l++)
                s = sv_sc_sub(s, sv_sc_mul(H[i + (size_t)l * m1], y[l]));
            if (sv_sc_abs(H[i + (size_t)i * m1]) == 0) {
                st = broke(r, "H(i,i)", 0.0);
                goto done;
            }
            y[i] = sv_sc_div(s, H[i + (size_t)i * m1]);
            coef[i] = scale(c[i], y[i]);
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
    bsrmv_free(rwork);
    return st;
}
