/* bsrmv_solve and the method-independent part of every solve: argument
 * checks, defaults, b == 0, timing, the true residual at exit. */
#include "solve_internal.h"

#include <math.h>

#define DEFAULT_RESTART 30

bsrmv_status bsrmv_sv_check(bsrmv_solver method, int64_t mb, int64_t nb, int bs,
                            bsrmv_type type, int64_t n, const void *b, const void *x,
                            const bsrmv_solve_options *opt)
{
    if (method != BSRMV_SOLVER_CG && method != BSRMV_SOLVER_BICGSTAB &&
        method != BSRMV_SOLVER_GMRES)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown solver %d", (int)method);
    if (mb != nb)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "the solvers need a square matrix; A has %lld x %lld blocks",
                          (long long)mb, (long long)nb);
    if (n != mb * bs)
        return bsrmv_fail(BSRMV_ERR_DIMENSION, "b and x have %lld entries, A has %lld rows",
                          (long long)n, (long long)(mb * bs));
    if (n > 0 && (!b || !x))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s is NULL", b ? "x" : "b");
    /* x is written while b is still read (host or device addresses). */
    bsrmv_status st = bsrmv_check_disjoint("bsrmv_solve", b, n, x, n, bsrmv_type_size(type));
    if (st)
        return st;
    if (opt && (!(opt->rtol >= 0) || opt->max_iter < 0 || opt->restart < 0))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "bad options: rtol %g, max_iter %d, restart %d (none may be negative)",
                          opt->rtol, opt->max_iter, opt->restart);
    return BSRMV_SUCCESS;
}

int bsrmv_sv_restart(const bsrmv_solve_options *opt)
{
    const int m = opt && opt->restart > 0 ? opt->restart : DEFAULT_RESTART;
    const int lim = opt && opt->max_iter > 0 ? opt->max_iter : SV_DEFAULT_MAX_ITER;
    return m < lim ? m : lim;
}

bsrmv_status bsrmv_sv_check_precond(int64_t pmb, int pbs, bsrmv_type ptype, int64_t mb, int bs,
                                    bsrmv_type type)
{
    if (pmb != mb || pbs != bs || ptype != type)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "the preconditioner was built for %lld block rows of bs %d (%s), "
                          "A has %lld of bs %d (%s)",
                          (long long)pmb, pbs, bsrmv_type_name(ptype), (long long)mb, bs,
                          bsrmv_type_name(type));
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_sv_solve(bsrmv_solver method, sv_backend *be, const void *b, void *x,
                            const bsrmv_solve_options *opt, bsrmv_solve_report *rep)
{
    bsrmv_solve_options o = {0};
    if (opt)
        o = *opt;
    sv_run r = {0};
    r.be = be;
    r.rtol = o.rtol > 0 ? o.rtol : SV_DEFAULT_RTOL;
    r.max_iter = o.max_iter > 0 ? o.max_iter : SV_DEFAULT_MAX_ITER;
    r.restart = bsrmv_sv_restart(&o);
    r.monitor = o.monitor;
    r.monitor_ctx = o.monitor_ctx;
    r.x_is_zero = o.x0_zero;
    bsrmv_solve_report rp = {0};
    if (rep)
        *rep = rp;

    bsrmv_status st;
    double bb;
    sv_scalar d;
    const void *pair[1] = {b};
    if (be->n == 0 && !be->collective)
        bb = 0;
    else if ((st = be->dots(be, 1, pair, pair, &d)))
        return st;
    else
        bb = d.re;
    if (!isfinite(bb))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "b holds NaN or Inf");
    if (bb == 0) {
        /* the solution of A x = 0 is x = 0 for every nonsingular A */
        if (be->n > 0 && (st = be->zero(be, x)))
            return st;
        rp.converged = 1;
        if (rep)
            *rep = rp;
        return be->sync(be);
    }
    r.bnorm = sqrt(bb);
    if (r.x_is_zero && (st = be->zero(be, x)))
        return st;

    r.t0 = bsrmv_sv_now();
    bsrmv_status ms = method == BSRMV_SOLVER_CG         ? bsrmv_sv_cg(&r, b, x)
                      : method == BSRMV_SOLVER_BICGSTAB ? bsrmv_sv_bicgstab(&r, b, x)
                                                        : bsrmv_sv_gmres(&r, b, x);
    if ((st = be->sync(be)))
        return st;
    rp.seconds = bsrmv_sv_now() - r.t0;
    rp.iterations = r.iterations;
    rp.converged = ms == BSRMV_SUCCESS && r.converged;
    rp.rel_residual = r.rel_residual;
    rp.bytes = r.bytes;
    if (ms != BSRMV_SUCCESS && ms != BSRMV_ERR_NOT_CONVERGED)
        return ms;

    /* the true residual, without touching the method's message */
    void *res;
    double rr;
    if ((st = be->alloc(be, 1, &res)))
        return st;
    if (!(st = be->spmv(be, x, res)) && !(st = be->residual(be, b, res, &rr)))
        rp.true_rel_residual = sqrt(rr) / r.bnorm;
    be->release(be, res);
    if (st)
        return st;
    if (rep)
        *rep = rp;
    return ms;
}

bsrmv_status bsrmv_solve(bsrmv_solver method, const bsrmv_matrix *A, const bsrmv_precond *P,
                         const void *b, void *x, int64_t n, const bsrmv_solve_options *opt,
                         bsrmv_solve_report *report)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "A is NULL");
    bsrmv_status st = bsrmv_sv_check(method, A->mb, A->nb, A->bs, A->vtype, n, b, x, opt);
    if (st)
        return st;
    if (P && (st = bsrmv_sv_check_precond(P->mb, P->bs, P->type, A->mb, A->bs, A->vtype)))
        return st;
    sv_backend be;
    if ((st = bsrmv_sv_cpu_init(&be, A, P)))
        return st;
    st = bsrmv_sv_solve(method, &be, b, x, opt, report);
    bsrmv_sv_cpu_free(&be);
    return st;
}

bsrmv_status bsrmv_solve_multi(bsrmv_solver method, const bsrmv_matrix *A,
                               const bsrmv_precond *P, int64_t n, int k, const void *B,
                               int64_t ldb, void *X, int64_t ldx, const bsrmv_solve_options *opt,
                               bsrmv_solve_report *reports)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "A is NULL");
    bsrmv_status st = bsrmv_sv_check(method, A->mb, A->nb, A->bs, A->vtype, n, B, X, opt);
    if (st || (st = bsrmv_sv_check_multi("bsrmv_solve_multi", n, k, B, ldb, X, ldx,
                                         bsrmv_type_size(A->vtype))))
        return st;
    if (P && (st = bsrmv_sv_check_precond(P->mb, P->bs, P->type, A->mb, A->bs, A->vtype)))
        return st;
    sv_backend be;
    if ((st = bsrmv_sv_cpu_init(&be, A, P)))
        return st;
    st = bsrmv_sv_solve_multi(method, &be, k, B, ldb, X, ldx, opt, reports);
    bsrmv_sv_cpu_free(&be);
    return st;
}
