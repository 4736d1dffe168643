/* What every method calls during its iterations: the start of the timed
 * span, the monitor, the true residual and the stopping decisions.  The
 * dispatcher (solve.c) calls the methods; the methods call only this file
 * and the counted ops (ops.c). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include "solve_internal.h"

#include <math.h>
#include <time.h>

double bsrmv_sv_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void bsrmv_sv_start(sv_run *r)
{
    r->bytes = 0;
    r->t0 = bsrmv_sv_now();
}

int bsrmv_sv_monitor(sv_run *r, double rel, bsrmv_status *st)
{
    r->rel_residual = rel;
    if (r->monitor && r->monitor(r->iterations, rel, r->monitor_ctx)) {
        *st = bsrmv_fail(BSRMV_ERR_NOT_CONVERGED, "stopped by the monitor at iteration %d",
                         r->iterations);
        return 1;
    }
    return 0;
}

bsrmv_status bsrmv_sv_true_residual(sv_run *r, const void *b, const void *x, void *res,
                                    double *rel)
{
    bsrmv_status st;
    double rr;
    if (r->x_is_zero) {
        r->x_is_zero = 0;
        if ((st = sv_copy(r, b, res)))
            return st;
        *rel = 1.0;
        return BSRMV_SUCCESS;
    }
    if ((st = sv_spmv(r, x, res)) || (st = sv_residual(r, b, res, &rr)))
        return st;
    *rel = sqrt(rr) / r->bnorm;
    /* b is finite (checked first): a NaN or Inf here comes from x or A, and
     * a method would otherwise take it for a residual that never fell */
    if (!isfinite(*rel))
        return r->iterations == 0
                   ? bsrmv_fail(BSRMV_ERR_ARGUMENT,
                                "the starting residual b - A x is %g: x or A holds NaN or Inf", *rel)
                   : bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                                "the true residual b - A x is %g at iteration %d: the iterates "
                                "overflowed", *rel, r->iterations);
    return BSRMV_SUCCESS;
}

/* The true residual must fall at least this much between restarts. */
#define STALL_FACTOR 0.9

bsrmv_status bsrmv_sv_confirm(sv_run *r, const char *method, const void *b, const void *x,
                              void *res, double *rel, double *last_true)
{
    bsrmv_status st = bsrmv_sv_true_residual(r, b, x, res, rel);
    if (st)
        return st;
    if (*rel > r->rtol && *rel > STALL_FACTOR * *last_true)
        return bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                          "%s stagnated at iteration %d: true relative residual %g > rtol %g "
                          "(the recurrence reached %g; rtol below what the type resolves?)",
                          method, r->iterations, *rel, r->rtol, r->rel_residual);
    *last_true = *rel;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_sv_finish(sv_run *r, const char *method, double rel)
{
    if (rel <= r->rtol) {
        r->converged = 1;
        return BSRMV_SUCCESS;
    }
    return bsrmv_fail(BSRMV_ERR_NOT_CONVERGED,
                      "%s reached the limit of %d iterations at relative residual %g > rtol %g",
                      method, r->max_iter, rel, r->rtol);
}
