/* Block-Jacobi preconditioner: the explicit inverse of every diagonal block,
 * so that applying it is one small dense mat-vec per block row (fused into
 * the solvers' vector passes).  Each block is factored in double (double
 * complex for the complex types) by LU with partial pivoting whatever the
 * matrix precision; a pivot below
 * PIVOT_TOL * bs * eps(type) * max|block| counts as singular, since its
 * inverse would be mostly rounding noise of the stored values. */
#include "solve_internal.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PIVOT_TOL 4.0

#define E double
#define ABS fabs
#define SUF r
#include "precond_lu.h"
#undef E
#undef ABS
#undef SUF
#define CPLX
#define E double _Complex
#define ABS cabs
#define SUF c
#include "precond_lu.h"
#undef E
#undef ABS
#undef SUF
#undef CPLX

bsrmv_status bsrmv_precond_block_jacobi(bsrmv_precond **P, const bsrmv_matrix *A)
{
    if (!P)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "preconditioner handle pointer is NULL");
    *P = NULL;
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "A is NULL");
    if (A->mb != A->nb)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "block Jacobi needs a square matrix; A has %lld x %lld blocks",
                          (long long)A->mb, (long long)A->nb);
    const int bs = A->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const size_t ts = bsrmv_type_size(A->vtype);
    size_t bytes;
    if (!bsrmv_bytes(A->mb * bs2, ts, &bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "preconditioner too large for this host");
    bsrmv_precond *M = bsrmv_calloc(1, sizeof *M);
    void *inv = bsrmv_big_alloc(bytes);
    if (!M || !inv) {
        bsrmv_free(M);
        bsrmv_big_free(inv);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %.3g GB of inverse blocks",
                          (double)bytes * 1e-9);
    }
    M->mb = A->mb;
    M->bs = bs;
    M->type = A->vtype;
    M->inv = inv;
    const double eps = bsrmv_type_is_double(A->type) ? DBL_EPSILON : FLT_EPSILON;
    const bool cplx = bsrmv_type_is_complex(A->type);

    /* first bad block row (missing: code 1, singular: 2), smallest row wins */
    int64_t bad_row = INT64_MAX;
    int bad_kind = 0, nomem = 0;
#pragma omp parallel if (A->mb * bs2 * bs > 100000)
    {
        double _Complex *a = bsrmv_malloc((size_t)(2 * bs2) * sizeof *a);
        int *piv = bsrmv_malloc((size_t)bs * sizeof *piv);
        if (!a || !piv) {
#pragma omp atomic write
            nomem = 1;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < A->mb; i++) {
            if (!a || !piv)
                continue;
            const int kind = cplx ? block_inverse_c(A, i, a, piv, eps, inv)
                                  : block_inverse_r(A, i, (double *)a, piv, eps, inv);
            if (kind) {
#pragma omp critical(bsrmv_precond_bad)
                if (i < bad_row) {
                    bad_row = i;
                    bad_kind = kind;
                }
            }
        }
        bsrmv_free(a);
        bsrmv_free(piv);
    }
    if (nomem || bad_kind) {
        bsrmv_precond_destroy(M);
        if (nomem)
            return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for block scratch (bs %d)", bs);
        return bsrmv_fail(BSRMV_ERR_SINGULAR,
                          bad_kind == 1 ? "block row %lld has no diagonal block"
                                        : "the diagonal block of block row %lld is singular "
                                          "(pivot below the relative threshold)",
                          (long long)bad_row);
    }
    *P = M;
    return BSRMV_SUCCESS;
}

void bsrmv_precond_destroy(bsrmv_precond *P)
{
    if (!P)
        return;
    bsrmv_big_free(P->inv);
    bsrmv_free(P);
}

bsrmv_status bsrmv_precond_apply(const bsrmv_precond *P, const void *r, void *z, int64_t n)
{
    if (!P)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "P is NULL");
    if (n != P->mb * P->bs)
        return bsrmv_fail(BSRMV_ERR_DIMENSION, "r and z have %lld entries, P has %lld rows",
                          (long long)n, (long long)(P->mb * P->bs));
    if (n > 0 && (!r || !z))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s is NULL", r ? "z" : "r");
    bsrmv_status st = bsrmv_check_disjoint("bsrmv_precond_apply", r, n, z, n,
                                           bsrmv_type_size(P->type));
    if (st)
        return st;
    sv_backend be;
    if ((st = bsrmv_sv_cpu_init(&be, NULL, P)))
        return st;
    st = be.precond(&be, r, z);
    bsrmv_sv_cpu_free(&be);
    return st;
}
