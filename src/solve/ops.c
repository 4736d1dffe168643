/* Counted calls of the backend operations: each wrapper adds the bytes its
 * pass reads and writes (vector = n values, P = the mb inverse blocks), so
 * the report's traffic is what the fused kernels really touch. */
#include "solve_internal.h"

static double vec_bytes(const sv_run *r)
{
    return (double)r->be->n * (double)bsrmv_type_size(r->be->type);
}

/* vectors read or written, plus the inverse blocks where M is applied */
static void count(sv_run *r, int vectors, int with_p)
{
    r->bytes += vectors * vec_bytes(r);
    if (with_p && r->be->has_p)
        r->bytes += (double)r->be->bs * vec_bytes(r);
}

bsrmv_status sv_spmv(sv_run *r, const void *x, void *y)
{
    r->bytes += r->be->spmv_bytes;
    return r->be->spmv(r->be, x, y);
}

bsrmv_status sv_zero(sv_run *r, void *x)
{
    count(r, 1, 0);
    return r->be->zero(r->be, x);
}

bsrmv_status sv_copy(sv_run *r, const void *x, void *y)
{
    count(r, 2, 0);
    return r->be->copy(r->be, x, y);
}

bsrmv_status sv_precond(sv_run *r, const void *v, void *z)
{
    count(r, 2, 1);
    return r->be->precond(r->be, v, z);
}

bsrmv_status sv_dots(sv_run *r, int k, const void *const *a, const void *const *b,
                     sv_scalar *out)
{
    /* each distinct vector is read once */
    const void *seen[2 * SV_MAX_DOTS];
    int n = 0;
    for (int i = 0; i < 2 * k; i++) {
        const void *v = i < k ? a[i] : b[i - k];
        int j = 0;
        while (j < n && seen[j] != v)
            j++;
        if (j == n)
            seen[n++] = v;
    }
    count(r, n, 0);
    return r->be->dots(r->be, k, a, b, out);
}

bsrmv_status sv_mdot(sv_run *r, int k, const void *V, const void *u, sv_scalar *out)
{
    const char *last = sv_vec(r->be, (void *)V, k - 1);
    count(r, k + ((const char *)u == last ? 0 : 1), 0);
    return r->be->mdot(r->be, k, V, u, out);
}

bsrmv_status sv_axpy(sv_run *r, sv_scalar alpha, const void *x, void *y)
{
    count(r, 3, 0);
    return r->be->axpy(r->be, alpha, x, y);
}

bsrmv_status sv_xpby(sv_run *r, const void *z, sv_scalar beta, void *p)
{
    count(r, 3, 0);
    return r->be->xpby(r->be, z, beta, p);
}

bsrmv_status sv_residual(sv_run *r, const void *b, void *res, double *rr)
{
    count(r, 3, 0);
    return r->be->residual(r->be, b, res, rr);
}

bsrmv_status sv_cg_step(sv_run *r, sv_scalar alpha, void *x, const void *p, void *res,
                        const void *q, void *z, double out[2])
{
    /* reads x p r q, writes x r (and z) */
    count(r, 6 + r->be->has_p, 1);
    return r->be->cg_step(r->be, alpha, x, p, res, q, z, out);
}

bsrmv_status sv_bicg_p(sv_run *r, sv_scalar beta, sv_scalar omega, const void *res, void *p,
                       const void *v, void *phat)
{
    /* reads r p v, writes p (and phat) */
    count(r, 4 + r->be->has_p, 1);
    return r->be->bicg_p(r->be, beta, omega, res, p, v, phat);
}

bsrmv_status sv_bicg_s(sv_run *r, sv_scalar alpha, void *res, const void *v, void *shat)
{
    /* reads r v, writes s over r (and shat) */
    count(r, 3 + r->be->has_p, 1);
    return r->be->bicg_s(r->be, alpha, res, v, shat);
}

bsrmv_status sv_bicg_x(sv_run *r, sv_scalar alpha, sv_scalar omega, void *x, const void *phat,
                       const void *shat, void *res, const void *t, const void *r0,
                       sv_scalar out[2])
{
    /* reads x phat shat s t r0, writes x r; without M phat is p and shat is s */
    count(r, r->be->has_p ? 8 : 7, 0);
    return r->be->bicg_x(r->be, alpha, omega, x, phat, shat, res, t, r0, out);
}

bsrmv_status sv_lincomb(sv_run *r, int k, const sv_scalar *c, const void *V, void *u,
                        double *uu)
{
    count(r, k + 2, 0);
    return r->be->lincomb(r->be, k, c, V, u, uu);
}

bsrmv_status sv_gmres_x(sv_run *r, int k, const sv_scalar *c, const void *V, void *x)
{
    count(r, k + 2, 1);
    return r->be->gmres_x(r->be, k, c, V, x);
}
