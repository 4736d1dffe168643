/* Preconditioned conjugate gradients (Hestenes-Stiefel recurrences).
 *
 * Per iteration: q = A p; p.q (one reduction); then one fused pass
 * x += alpha p, r -= alpha q, z = M r with r.z and r.r (second reduction);
 * then p = z + beta p.  When the recurrence says converged, the true
 * residual is computed; if it is still above rtol (drift) the method
 * restarts from it, and stops when that no longer helps.  For the complex
 * types the dots are x^H y: with a Hermitian A and M, p.q and r.z are real
 * and their real parts are used; a p.q that is not positive is a breakdown,
 * so an indefinite A ends in an error, never in a claimed solution. */
#include "solve_internal.h"

#include <math.h>

bsrmv_status bsrmv_sv_cg(sv_run *r, const void *b, void *x)
{
    sv_backend *be = r->be;
    void *w;
    bsrmv_status st = be->alloc(be, be->has_p ? 4 : 3, &w);
    if (st)
        return st;
    void *res = sv_vec(be, w, 0), *p = sv_vec(be, w, 1), *q = sv_vec(be, w, 2);
    void *z = be->has_p ? sv_vec(be, w, 3) : res;
    double rel, last_true;
    bsrmv_sv_start(r);

    if ((st = bsrmv_sv_true_residual(r, b, x, res, &rel)))
        goto done;
    r->rel_residual = last_true = rel;
    while (rel > r->rtol) {
        double rz;
        if (be->has_p) {
            const void *a[1] = {res}, *c[1] = {z};
            sv_scalar d;
            if ((st = sv_precond(r, res, z)) || (st = sv_dots(r, 1, a, c, &d)))
                goto done;
            rz = d.re;
        } else {
            rz = rel * rel * r->bnorm * r->bnorm;
        }
        if ((st = sv_copy(r, z, p)))
            goto done;
        while (r->iterations < r->max_iter) {
            double pq, out[2];
            sv_scalar d;
            const void *a[1] = {p}, *c[1] = {q};
            if ((st = sv_spmv(r, p, q)) || (st = sv_dots(r, 1, a, c, &d)))
                goto done;
            pq = d.re;
            if (!(pq > 0) || !isfinite(pq)) {
                st = bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                                "CG broke down at iteration %d: p.Ap = %g; A is not "
                                "symmetric (Hermitian) positive definite",
                                r->iterations + 1, pq);
                goto done;
            }
            const double alpha = rz / pq;
            if ((st = sv_cg_step(r, sv_sc(alpha, 0), x, p, res, q, z, out)))
                goto done;
            r->iterations++;
            rel = sqrt(out[1]) / r->bnorm;
            if (bsrmv_sv_monitor(r, rel, &st))
                goto done;
            /* converged first: an exact solution leaves r = 0 and so r.z = 0 */
            if (isfinite(rel) && rel <= r->rtol)
                break;
            if (!isfinite(rel) || !(out[0] > 0)) {
                st = bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                                "CG broke down at iteration %d: r.z = %g, ||r||/||b|| = %g; "
                                "the preconditioner is not positive definite",
                                r->iterations, out[0], rel);
                goto done;
            }
            const double beta = out[0] / rz;
            rz = out[0];
            if ((st = sv_xpby(r, z, sv_sc(beta, 0), p)))
                goto done;
        }
        if (rel > r->rtol)
            break; /* iteration limit */
        if ((st = bsrmv_sv_confirm(r, "CG", b, x, res, &rel, &last_true)))
            goto done;
    }
    st = bsrmv_sv_finish(r, "CG", rel);
done:
    be->release(be, w);
    return st;
}
