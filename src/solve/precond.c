/* Block-Jacobi preconditioner: the explicit inverse of every diagonal block,
 * so that applying it is one small dense mat-vec per block row (fused into
 * the solvers' vector passes).  Each block is factored in double by LU with
 * partial pivoting whatever the matrix type; a pivot below
 * PIVOT_TOL * bs * eps(type) * max|block| counts as singular, since its
 * inverse would be mostly rounding noise of the stored values. */
#include "solve_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PIVOT_TOL 4.0

/* Diagonal block of block row i as a column-major double matrix; 0 if the
 * row has no diagonal block. */
static int load_diagonal(const bsrmv_matrix *A, int64_t i, double *d)
{
    const int bs = A->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    for (int64_t k = bsrmv_row_start(A, i), k1 = bsrmv_row_start(A, i + 1); k < k1; k++) {
        if (A->col_idx[k] != i)
            continue;
        for (int r = 0; r < bs; r++)
            for (int c = 0; c < bs; c++) {
                int64_t at = k * bs2 + (A->order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                d[r + c * bs] = A->type == BSRMV_DOUBLE ? ((const double *)A->val)[at]
                                                         : ((const float *)A->val)[at];
            }
        return 1;
    }
    return 0;
}

/* Inverts the column-major bs x bs matrix a into inv (a is destroyed);
 * piv and work are scratch of bs entries.  Returns 0 if a pivot falls
 * below tol. */
static int invert(int bs, double *a, double *inv, int *piv, double tol)
{
    for (int k = 0; k < bs; k++) {
        int p = k;
        for (int r = k + 1; r < bs; r++)
            if (fabs(a[r + k * bs]) > fabs(a[p + k * bs]))
                p = r;
        if (!(fabs(a[p + k * bs]) > tol))
            return 0;
        piv[k] = p;
        if (p != k)
            for (int c = 0; c < bs; c++) {
                double t = a[k + c * bs];
                a[k + c * bs] = a[p + c * bs];
                a[p + c * bs] = t;
            }
        const double inv_pivot = 1 / a[k + k * bs];
        for (int r = k + 1; r < bs; r++)
            a[r + k * bs] *= inv_pivot;
        for (int c = k + 1; c < bs; c++) {
            const double f = a[k + c * bs];
            for (int r = k + 1; r < bs; r++)
                a[r + c * bs] -= a[r + k * bs] * f;
        }
    }
    /* solve L U X = P I column by column */
    for (int c = 0; c < bs; c++) {
        double *x = inv + (size_t)c * bs;
        for (int r = 0; r < bs; r++)
            x[r] = r == c;
        for (int k = 0; k < bs; k++)
            if (piv[k] != k) {
                double t = x[k];
                x[k] = x[piv[k]];
                x[piv[k]] = t;
            }
        for (int r = 1; r < bs; r++)
            for (int k = 0; k < r; k++)
                x[r] -= a[r + k * bs] * x[k];
        for (int r = bs - 1; r >= 0; r--) {
            for (int k = r + 1; k < bs; k++)
                x[r] -= a[r + k * bs] * x[k];
            x[r] /= a[r + r * bs];
        }
    }
    return 1;
}

bsrmv_status bsrmv_precond_block_jacobi(bsrmv_precond **P, const bsrmv_matrix *A)
{
    if (!P)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "preconditioner handle pointer is NULL");
    *P = NULL;
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "A is NULL");
    if (bsrmv_type_is_complex(A->type))
        return bsrmv_refuse_complex(A->type, "bsrmv_precond_block_jacobi");
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
    const double eps = A->type == BSRMV_DOUBLE ? DBL_EPSILON : FLT_EPSILON;

    /* first bad block row (missing: code 1, singular: 2), smallest row wins */
    int64_t bad_row = INT64_MAX;
    int bad_kind = 0, nomem = 0;
#pragma omp parallel if (A->mb * bs2 * bs > 100000)
    {
        double *a = bsrmv_malloc((size_t)(2 * bs2 + bs) * sizeof *a);
        int *piv = bsrmv_malloc((size_t)bs * sizeof *piv);
        if (!a || !piv) {
#pragma omp atomic write
            nomem = 1;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < A->mb; i++) {
            if (!a || !piv)
                continue;
            double *d = a, *di = a + bs2;
            int kind = 0;
            if (!load_diagonal(A, i, d)) {
                kind = 1;
            } else {
                double amax = 0;
                for (int64_t e = 0; e < bs2; e++)
                    amax = fmax(amax, fabs(d[e]));
                if (!invert(bs, d, di, piv, PIVOT_TOL * bs * eps * amax))
                    kind = 2;
            }
            if (kind) {
#pragma omp critical(bsrmv_precond_bad)
                if (i < bad_row) {
                    bad_row = i;
                    bad_kind = kind;
                }
                continue;
            }
            for (int64_t e = 0; e < bs2; e++) {
                if (M->type == BSRMV_DOUBLE)
                    ((double *)inv)[i * bs2 + e] = di[e];
                else
                    ((float *)inv)[i * bs2 + e] = (float)di[e];
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
