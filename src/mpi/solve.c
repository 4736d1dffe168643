/* Distributed solvers: the single-process methods (src/solve/) run on a
 * vector backend that is the single-process backend of this rank's rows
 * (the host one, or on GPU ranks the device one) with two changes: the
 * SpMV is the distributed one, and every operation that returns dot
 * products sums them over the ranks (the device backend has already
 * brought its few sums to the host, so MPI_Allreduce sums them there).
 * The methods' decisions depend only on those sums, so every rank takes
 * the same path.
 *
 * A failure on one rank (out of memory) must not leave the others in a
 * collective: each reduction carries a failure flag, and the allocations
 * (a few per solve) are agreed on. */
#include "dist_internal.h"
#include "solve/solve_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dist_backend {
    sv_backend be;    /* the methods see this (or a copy); ctx is inner's,  */
                      /* layer this struct                                 */
    sv_backend inner; /* this rank's rows: the host or the device backend   */
    bsrmv_dist_matrix *A;
    bsrmv_dist_gpu_matrix *dA; /* GPU ranks: the SpMV on the device      */
    void *stream;
    double *sum; /* reduction buffer: the most partial sums one op returns, + 1 */
} dist_backend;

static dist_backend *D(sv_backend *be)
{
    return (dist_backend *)be->layer;
}

/* out[0..k) summed over the ranks (k <= the scratch's room); a failed st
 * on any rank fails all, with that rank's message. */
static bsrmv_status allsum(sv_backend *be, bsrmv_status st, int k, double *out)
{
    dist_backend *d = D(be);
    double *b = d->sum;
    for (int i = 0; i < k; i++)
        b[i] = st ? 0.0 : out[i];
    b[k] = st ? 1.0 : 0.0;
    MPI_Allreduce(MPI_IN_PLACE, b, k + 1, MPI_DOUBLE, MPI_SUM, d->A->comm);
    if (b[k] != 0)
        return bsrmv_dist_agree(d->A->comm, st);
    for (int i = 0; i < k; i++)
        out[i] = b[i];
    return BSRMV_SUCCESS;
}

/* allsum of k scalars, both parts */
static bsrmv_status allsum_sc(sv_backend *be, bsrmv_status st, int k, sv_scalar *out)
{
    double *b = D(be)->sum;
    for (int i = 0; i < k && !st; i++) {
        b[2 * i] = out[i].re;
        b[2 * i + 1] = out[i].im;
    }
    if ((st = allsum(be, st, 2 * k, b)))
        return st;
    for (int i = 0; i < k; i++)
        out[i] = sv_sc(b[2 * i], b[2 * i + 1]);
    return BSRMV_SUCCESS;
}

static bsrmv_status d_alloc(sv_backend *be, int count, void **v)
{
    dist_backend *d = D(be);
    bsrmv_status st = d->inner.alloc(&d->inner, count, v);
    if ((st = bsrmv_dist_agree(d->A->comm, st)) && *v) {
        d->inner.release(&d->inner, *v);
        *v = NULL;
    }
    return st;
}

static bsrmv_status d_spmv(sv_backend *be, const void *x, void *y)
{
    dist_backend *d = D(be);
    if (d->dA)
        return bsrmv_dist_gpu_spmv_run(d->dA, x, y, d->stream);
    return bsrmv_dist_spmv_run(d->A, x, y);
}

static bsrmv_status d_dots(sv_backend *be, int k, const void *const *a, const void *const *b,
                           sv_scalar *out)
{
    sv_backend *c = &D(be)->inner;
    return allsum_sc(be, c->dots(c, k, a, b, out), k, out);
}

static bsrmv_status d_mdot(sv_backend *be, int k, const void *V, const void *u, sv_scalar *out)
{
    sv_backend *c = &D(be)->inner;
    return allsum_sc(be, c->mdot(c, k, V, u, out), k, out);
}

static bsrmv_status d_residual(sv_backend *be, const void *b, void *r, double *rr)
{
    sv_backend *c = &D(be)->inner;
    return allsum(be, c->residual(c, b, r, rr), 1, rr);
}

static bsrmv_status d_cg_step(sv_backend *be, sv_scalar alpha, void *x, const void *p, void *r,
                              const void *q, void *z, double out[2])
{
    sv_backend *c = &D(be)->inner;
    return allsum(be, c->cg_step(c, alpha, x, p, r, q, z, out), 2, out);
}

static bsrmv_status d_bicg_x(sv_backend *be, sv_scalar alpha, sv_scalar omega, void *x,
                             const void *phat, const void *shat, void *r, const void *t,
                             const void *r0, sv_scalar out[2])
{
    sv_backend *c = &D(be)->inner;
    return allsum_sc(be, c->bicg_x(c, alpha, omega, x, phat, shat, r, t, r0, out), 2, out);
}

static bsrmv_status d_lincomb(sv_backend *be, int k, const sv_scalar *cf, const void *V, void *u,
                              double *uu)
{
    sv_backend *c = &D(be)->inner;
    return allsum(be, c->lincomb(c, k, cf, V, u, uu), 1, uu);
}

/* Square with the same row and column partition, on this rank. */
static bsrmv_status check_square(const bsrmv_dist_matrix *A)
{
    if (A->mb_global != A->nb_global || A->row_begin != A->col_begin || A->mb != A->nb)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "the solvers need a square matrix whose column partition is its row "
                          "partition; this rank has rows %lld+%lld, columns %lld+%lld",
                          (long long)A->row_begin, (long long)A->mb, (long long)A->col_begin,
                          (long long)A->nb);
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_dist_precond_block_jacobi(bsrmv_precond **P, const bsrmv_dist_matrix *A)
{
    if (P)
        *P = NULL;
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_precond_block_jacobi: NULL matrix");
    bsrmv_status st = check_square(A);
    if (!st && !P)
        st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_precond_block_jacobi: NULL handle");
    if (!st && (st = bsrmv_precond_block_jacobi(P, A->local)) == BSRMV_ERR_SINGULAR) {
        char why[400];
        snprintf(why, sizeof why, "%s", bsrmv_last_error());
        st = bsrmv_fail(st, "%s (a local block row; its global number is %lld more)", why,
                        (long long)A->row_begin);
    }
    if ((st = bsrmv_dist_agree(A->comm, st)) && P) {
        bsrmv_precond_destroy(*P);
        *P = NULL;
    }
    return st;
}

bsrmv_status bsrmv_dist_sv_check(bsrmv_dist_matrix *A, int has_p)
{
    int hp[2] = {has_p != 0, has_p == 0}, any[2];
    MPI_Allreduce(hp, any, 2, MPI_INT, MPI_MAX, A->comm);
    bsrmv_status st = check_square(A);
    if (!st && any[0] && any[1])
        st = bsrmv_fail(BSRMV_ERR_ARGUMENT,
                        "some ranks pass a preconditioner and some do not; this one does%s",
                        has_p ? "" : " not");
    return st;
}

static bsrmv_status d_spmm(sv_backend *be, int k, const void *X, int64_t ldx, void *Y,
                           int64_t ldy)
{
    return bsrmv_dist_spmm_cols(D(be)->A, k, X, ldx, Y, ldy);
}

/* bsrmv_dist_sv_run for k right-hand sides (bsrmv_sv_solve_multi, the
 * products of host ranks batched into distributed SpMMs where the local
 * part has SpMM), or k == 0 for one (b = B, x = X); reports: max(k, 1). */
static bsrmv_status run(bsrmv_solver method, bsrmv_dist_matrix *A, bsrmv_dist_gpu_matrix *dA,
                        void *stream, bsrmv_status st, const sv_backend *inner,
                        void (*inner_free)(sv_backend *), int k, const void *B, int64_t ldb,
                        void *X, int64_t ldx, const bsrmv_solve_options *opt,
                        bsrmv_solve_report *reports)
{
    dist_backend d = {.A = A, .dA = dA, .stream = stream};
    if (!st)
        d.inner = *inner;
    const int nrep = k > 0 ? k : 1;
    /* GMRES sums up to restart + 1 products in one call, two parts each */
    const int most = 2 * (bsrmv_sv_restart(opt) + SV_MAX_DOTS) + 3;
    bsrmv_solve_report *rep = NULL;
    double *agg = NULL; /* the reports' bytes and seconds, to sum and to max */
    if (!st && (!(d.sum = malloc((size_t)most * sizeof *d.sum)) ||
                !(rep = calloc((size_t)nrep, sizeof *rep)) ||
                !(agg = malloc((size_t)(2 * nrep) * sizeof *agg))))
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the reduction buffers");
    if ((st = bsrmv_dist_agree(A->comm, st))) {
        if (d.inner.ctx)
            inner_free(&d.inner);
        free(d.sum);
        free(rep);
        free(agg);
        return st;
    }
    d.be = d.inner;
    d.be.layer = &d;
    d.be.collective = 1;
    /* the off-rank product: none without ghosts; over all rows it adds
     * into y, whose pass the local product's count already has; over a
     * few rows it passes over its own row buffer (counted as its y) */
    d.be.spmv_bytes = bsrmv_matrix_spmv_bytes(A->local);
    if (A->ghosts > 0)
        d.be.spmv_bytes += bsrmv_matrix_spmv_bytes(A->offrank) -
                           (A->offrank_rows ? 0.0
                                            : (double)A->mb * A->bs * bsrmv_type_size(A->type));
    d.be.alloc = d_alloc;
    d.be.spmv = d_spmv;
    d.be.dots = d_dots;
    d.be.mdot = d_mdot;
    d.be.residual = d_residual;
    d.be.cg_step = d_cg_step;
    d.be.bicg_x = d_bicg_x;
    d.be.lincomb = d_lincomb;
    /* the inner backend's SpMM is of the local part alone */
    d.be.spmm = k > 0 && !dA && d.inner.spmm ? d_spmm : NULL;
    st = k > 0 ? bsrmv_sv_solve_multi(method, &d.be, k, B, ldb, X, ldx, opt, rep)
               : bsrmv_sv_solve(method, &d.be, B, X, opt, rep);
    inner_free(&d.inner);
    free(d.sum);
    for (int j = 0; j < nrep; j++) {
        agg[j] = rep[j].bytes;
        agg[nrep + j] = rep[j].seconds;
    }
    MPI_Allreduce(MPI_IN_PLACE, agg, nrep, MPI_DOUBLE, MPI_SUM, A->comm);
    MPI_Allreduce(MPI_IN_PLACE, agg + nrep, nrep, MPI_DOUBLE, MPI_MAX, A->comm);
    for (int j = 0; j < nrep; j++) {
        rep[j].bytes = agg[j];
        rep[j].seconds = agg[nrep + j];
    }
    if (reports)
        memcpy(reports, rep, (size_t)nrep * sizeof *rep);
    free(rep);
    free(agg);
    return st;
}

bsrmv_status bsrmv_dist_sv_run(bsrmv_solver method, bsrmv_dist_matrix *A,
                               bsrmv_dist_gpu_matrix *dA, void *stream, bsrmv_status st,
                               const sv_backend *inner, void (*inner_free)(sv_backend *),
                               const void *b, void *x, const bsrmv_solve_options *opt,
                               bsrmv_solve_report *report)
{
    return run(method, A, dA, stream, st, inner, inner_free, 0, b, 0, x, 0, opt, report);
}

bsrmv_status bsrmv_dist_solve(bsrmv_solver method, bsrmv_dist_matrix *A, const bsrmv_precond *P,
                              const void *b, void *x, int64_t n, const bsrmv_solve_options *opt,
                              bsrmv_solve_report *report)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_solve: NULL matrix");
    bsrmv_status st = bsrmv_dist_sv_check(A, P != NULL);
    if (!st)
        st = bsrmv_sv_check(method, A->mb, A->nb, A->bs, A->type, n, b, x, opt);
    if (!st && P)
        st = bsrmv_sv_check_precond(P->mb, P->bs, P->type, A->mb, A->bs, A->type);
    sv_backend cpu = {0};
    if (!st)
        st = bsrmv_sv_cpu_init(&cpu, A->local, P);
    return bsrmv_dist_sv_run(method, A, NULL, NULL, st, &cpu, bsrmv_sv_cpu_free, b, x, opt,
                             report);
}

bsrmv_status bsrmv_dist_solve_multi(bsrmv_solver method, bsrmv_dist_matrix *A,
                                    const bsrmv_precond *P, int64_t n, int k, const void *B,
                                    int64_t ldb, void *X, int64_t ldx,
                                    const bsrmv_solve_options *opt, bsrmv_solve_report *reports)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_solve_multi: NULL matrix");
    bsrmv_status st = bsrmv_dist_sv_check(A, P != NULL);
    st = bsrmv_dist_same_k(A->comm, k, "bsrmv_dist_solve_multi", st);
    if (!st)
        st = bsrmv_sv_check(method, A->mb, A->nb, A->bs, A->type, n, B, X, opt);
    if (!st)
        st = bsrmv_sv_check_multi("bsrmv_dist_solve_multi", n, k, B, ldb, X, ldx,
                                  bsrmv_type_size(A->type));
    if (!st && P)
        st = bsrmv_sv_check_precond(P->mb, P->bs, P->type, A->mb, A->bs, A->type);
    sv_backend cpu = {0};
    if (!st)
        st = bsrmv_sv_cpu_init(&cpu, A->local, P);
    return run(method, A, NULL, NULL, st, &cpu, bsrmv_sv_cpu_free, k, B, ldb, X, ldx, opt,
               reports);
}
