/* Preconditioned BiCGSTAB (van der Vorst 1992, M applied on the right as in
 * the Templates book).
 *
 * Per iteration, three reductions: r0.v; then t.s, t.t, s.s in one; then
 * r.r and the next rho = r0.r computed by the same fused pass that updates
 * x and r.  The fused passes: p = r + beta (p - omega v) with phat = M p;
 * s = r - alpha v (in place of r) with shat = M s; x += alpha phat + omega
 * shat with r = s - omega t.  A breakdown of rho restarts the shadow
 * vector; convergence is confirmed on the true residual as in cg.c.  The
 * scalars are complex for the complex types (dots x^H y); real ones keep
 * .im = 0 throughout. */
#include "solve_internal.h"

#include <float.h>
#include <math.h>

static bsrmv_status broke(const sv_run *r, const char *what, double v)
{
    return bsrmv_fail(BSRMV_ERR_NOT_CONVERGED, "BiCGSTAB broke down at iteration %d: %s = %g",
                      r->iterations + 1, what, v);
}

bsrmv_status bsrmv_sv_bicgstab(sv_run *r, const void *b, void *x)
{
    sv_backend *be = r->be;
    void *w;
    bsrmv_status st = be->alloc(be, be->has_p ? 7 : 5, &w);
    if (st)
        return st;
    void *res = sv_vec(be, w, 0), *r0 = sv_vec(be, w, 1), *p = sv_vec(be, w, 2);
    void *v = sv_vec(be, w, 3), *t = sv_vec(be, w, 4);
    void *phat = be->has_p ? sv_vec(be, w, 5) : p, *shat = be->has_p ? sv_vec(be, w, 6) : res;
    const double bb = r->bnorm * r->bnorm;
    double rel, last_true;
    bsrmv_sv_start(r);

    if ((st = bsrmv_sv_true_residual(r, b, x, res, &rel)))
        goto done;
    r->rel_residual = last_true = rel;
    while (rel > r->rtol && r->iterations < r->max_iter) {
        /* (re)start: shadow r0 = r, p = v = 0 so that the first p is r */
        if ((st = sv_copy(r, res, r0)) || (st = sv_zero(r, p)) || (st = sv_zero(r, v)))
            goto done;
        sv_scalar rho = sv_sc(rel * rel * bb, 0), rho_old = sv_sc(1, 0), alpha = sv_sc(1, 0),
                  omega = sv_sc(1, 0);
        int restart = 0;
        while (!restart && r->iterations < r->max_iter) {
            sv_scalar r0v, d3[3], out[2];
            const sv_scalar beta = sv_sc_mul(sv_sc_div(rho, rho_old), sv_sc_div(alpha, omega));
            const void *a1[1] = {r0}, *b1[1] = {v};
            if ((st = sv_bicg_p(r, beta, omega, res, p, v, phat)) || (st = sv_spmv(r, phat, v)) ||
                (st = sv_dots(r, 1, a1, b1, &r0v)))
                goto done;
            if (sv_sc_abs(r0v) == 0 || !sv_sc_isfinite(r0v)) {
                st = broke(r, "|r0.v|", sv_sc_abs(r0v));
                goto done;
            }
            alpha = sv_sc_div(rho, r0v);
            const void *a3[3] = {t, t, res}, *b3[3] = {res, t, res};
            if ((st = sv_bicg_s(r, alpha, res, v, shat)) || (st = sv_spmv(r, shat, t)) ||
                (st = sv_dots(r, 3, a3, b3, d3)))
                goto done;
            r->iterations++;
            const double srel = sqrt(d3[2].re) / r->bnorm;
            if (srel <= r->rtol) {
                /* converged at the half step: x += alpha phat */
                if ((st = sv_axpy(r, alpha, phat, x)))
                    goto done;
                rel = srel;
                if (bsrmv_sv_monitor(r, rel, &st))
                    goto done;
                break;
            }
            if (!(d3[1].re > 0) || !sv_sc_isfinite(d3[0])) {
                st = broke(r, "t.t", d3[1].re);
                goto done;
            }
            omega = sv_sc_div(d3[0], d3[1]);
            if (sv_sc_abs(omega) == 0) {
                st = broke(r, "omega", 0.0);
                goto done;
            }
            if ((st = sv_bicg_x(r, alpha, omega, x, phat, shat, res, t, r0, out)))
                goto done;
            rel = sqrt(out[0].re) / r->bnorm;
            if (bsrmv_sv_monitor(r, rel, &st))
                goto done;
            if (!isfinite(rel)) {
                st = broke(r, "||r||/||b||", rel);
                goto done;
            }
            if (rel <= r->rtol)
                break;
            rho_old = rho;
            rho = out[1];
            /* r has become orthogonal to the shadow vector: take a new one */
            restart = !(sv_sc_abs(rho) > DBL_EPSILON * DBL_EPSILON * out[0].re);
        }
        if (rel > r->rtol)
            continue; /* restart or iteration limit */
        if ((st = bsrmv_sv_confirm(r, "BiCGSTAB", b, x, res, &rel, &last_true)))
            goto done;
    }
    st = bsrmv_sv_finish(r, "BiCGSTAB", rel);
done:
    be->release(be, w);
    return st;
}
