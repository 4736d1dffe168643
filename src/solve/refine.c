/* Mixed-precision solves by iterative refinement (docs/MIXED.md): the
 * residual of the working-precision matrix, corrections from the method
 * run on its lower-precision copy (float values, double vectors: half the
 * matrix bytes per SpMV).  Written against two vector backends with the
 * same vectors -- `hi` for A, `lo` for the copy and the preconditioner --
 * so the host and the device share it. */
#include "solve_internal.h"

#include <math.h>

/* The first correction solves to this relative residual (opt->inner_rtol
 * overrides it): tight enough that one or two loose steps follow, loose
 * enough not to chase the copy's own solution. */
#define DEFAULT_INNER_RTOL 1e-6
/* A step must cut the true residual at least this much; less means the
 * copy no longer resolves the residual (A too ill-conditioned for float). */
#define MIN_GAIN 0.5

bsrmv_status bsrmv_sv_refine(bsrmv_solver method, sv_backend *hi, sv_backend *lo, const void *b,
                             void *x, const bsrmv_solve_options *opt, bsrmv_solve_report *rep)
{
    bsrmv_solve_options o = {0};
    if (opt)
        o = *opt;
    sv_run r = {0};
    r.be = hi;
    r.rtol = o.rtol > 0 ? o.rtol : SV_DEFAULT_RTOL;
    r.max_iter = o.max_iter > 0 ? o.max_iter : SV_DEFAULT_MAX_ITER;
    r.monitor = o.monitor;
    r.monitor_ctx = o.monitor_ctx;
    const double inner_rtol = o.inner_rtol > 0 ? o.inner_rtol : DEFAULT_INNER_RTOL;
    bsrmv_solve_report rp = {0};
    if (rep)
        *rep = rp;

    bsrmv_status st;
    double bb;
    sv_scalar b2;
    const void *pair[1] = {b};
    if (hi->n == 0)
        bb = 0;
    else if ((st = hi->dots(hi, 1, pair, pair, &b2)))
        return st;
    else
        bb = b2.re;
    if (!isfinite(bb))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "b holds NaN or Inf");
    if (bb == 0) {
        if (hi->n > 0 && (st = hi->zero(hi, x)))
            return st;
        rp.converged = 1;
        if (rep)
            *rep = rp;
        return hi->sync(hi);
    }
    r.bnorm = sqrt(bb);
    if (o.x0_zero && (st = hi->zero(hi, x)))
        return st;
    void *v;
    if ((st = hi->alloc(hi, 2, &v)))
        return st;
    void *res = v, *d = sv_vec(hi, v, 1);

    bsrmv_sv_start(&r);
    double rel = 0, last = INFINITY;
    bsrmv_status ms = BSRMV_SUCCESS;
    for (;;) {
        if ((st = bsrmv_sv_true_residual(&r, b, x, res, &rel)))
            break;
        if (rel <= r.rtol) {
            r.converged = 1;
            break;
        }
        if (bsrmv_sv_monitor(&r, rel, &ms))
            break;
        if (!(rel <= MIN_GAIN * last)) {
            ms = bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                            "refinement stagnated after %d steps at true relative residual %g "
                            "> rtol %g: the float copy does not resolve the residual",
                            rp.refinements, rel, r.rtol);
            break;
        }
        if (r.iterations >= r.max_iter) {
            ms = bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                            "refinement reached the limit of %d iterations at true relative "
                            "residual %g > rtol %g",
                            r.max_iter, rel, r.rtol);
            break;
        }
        last = rel;
        /* the last step need only close the gap to rtol */
        bsrmv_solve_options io = {0};
        io.rtol = fmin(0.5, fmax(inner_rtol, 0.5 * r.rtol / rel));
        io.max_iter = r.max_iter - r.iterations;
        io.restart = o.restart;
        io.x0_zero = 1;
        bsrmv_solve_report ir;
        const bsrmv_status is = bsrmv_sv_solve(method, lo, res, d, &io, &ir);
        r.iterations += ir.iterations;
        r.bytes += ir.bytes;
        ++rp.refinements;
        /* a correction that missed its target still helps: the gain test
         * above judges it */
        if (is != BSRMV_SUCCESS && is != BSRMV_ERR_NOT_CONVERGED) {
            st = is;
            break;
        }
        if ((st = sv_axpy(&r, sv_sc(1, 0), d, x)))
            break;
    }
    bsrmv_status ss = hi->sync(hi);
    hi->release(hi, v);
    if (st)
        return st;
    if (ss)
        return ss;
    rp.seconds = bsrmv_sv_now() - r.t0;
    rp.iterations = r.iterations;
    rp.converged = r.converged;
    rp.rel_residual = rel;
    rp.true_rel_residual = rel;
    rp.bytes = r.bytes;
    if (rep)
        *rep = rp;
    return ms;
}

bsrmv_status bsrmv_sv_check_refine(const char *who, int64_t mb, int64_t nb, int bs,
                                   bsrmv_type type, bsrmv_type vtype, int64_t lmb, int64_t lnb,
                                   int lbs, bsrmv_type lvtype)
{
    if (bsrmv_type_is_complex(type))
        return bsrmv_refuse_complex(type, who);
    if (type != BSRMV_DOUBLE || vtype != BSRMV_DOUBLE)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: A must be double (values and vectors)", who);
    if (lvtype != BSRMV_DOUBLE)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "%s: the copy must have double vectors (bsrmv_matrix_set_vector_type)",
                          who);
    if (lmb != mb || lnb != nb || lbs != bs)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "%s: A has %lld x %lld blocks of bs %d, the copy %lld x %lld of bs %d",
                          who, (long long)mb, (long long)nb, bs, (long long)lmb, (long long)lnb,
                          lbs);
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_solve_refined(bsrmv_solver method, const bsrmv_matrix *A,
                                 const bsrmv_matrix *Af, const bsrmv_precond *P, const void *b,
                                 void *x, int64_t n, const bsrmv_solve_options *opt,
                                 bsrmv_solve_report *report)
{
    if (!A || !Af)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s is NULL", A ? "Af" : "A");
    bsrmv_status st = bsrmv_sv_check_refine("bsrmv_solve_refined", A->mb, A->nb, A->bs, A->type,
                                            A->vtype, Af->mb, Af->nb, Af->bs, Af->vtype);
    if (st || (st = bsrmv_sv_check(method, A->mb, A->nb, A->bs, A->vtype, n, b, x, opt)))
        return st;
    if (opt && !(opt->inner_rtol >= 0 && opt->inner_rtol < 1))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bad options: inner_rtol %g (0 <= inner_rtol < 1)",
                          opt->inner_rtol);
    if (P && (st = bsrmv_sv_check_precond(P->mb, P->bs, P->type, A->mb, A->bs, A->vtype)))
        return st;
    sv_backend hi, lo;
    if ((st = bsrmv_sv_cpu_init(&hi, A, NULL)))
        return st;
    if ((st = bsrmv_sv_cpu_init(&lo, Af, P))) {
        bsrmv_sv_cpu_free(&hi);
        return st;
    }
    st = bsrmv_sv_refine(method, &hi, &lo, b, x, opt, report);
    bsrmv_sv_cpu_free(&lo);
    bsrmv_sv_cpu_free(&hi);
    return st;
}
