/* Dense LU with partial pivoting: the direct reference the iterative
 * bridge solves are checked against (small models only). */
#include "bridge_model.h"

#include <math.h>
#include <stdlib.h>

/* Factors the n x n row-major a in place (PA = LU) and solves for b,
 * overwriting b with the solution.  0, or -1 on a zero pivot. */
static int lu_solve(double *a, int64_t n, double *b)
{
    for (int64_t k = 0; k < n; k++) {
        int64_t piv = k;
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(a[i * n + k]) > fabs(a[piv * n + k]))
                piv = i;
        if (a[piv * n + k] == 0)
            return bridge_fail("dense LU: singular matrix at column %lld", (long long)k);
        if (piv != k) {
            for (int64_t j = 0; j < n; j++) {
                double t = a[k * n + j];
                a[k * n + j] = a[piv * n + j];
                a[piv * n + j] = t;
            }
            double t = b[k];
            b[k] = b[piv];
            b[piv] = t;
        }
        for (int64_t i = k + 1; i < n; i++) {
            double l = a[i * n + k] / a[k * n + k];
            if (l == 0)
                continue;
            a[i * n + k] = l;
            for (int64_t j = k + 1; j < n; j++)
                a[i * n + j] -= l * a[k * n + j];
            b[i] -= l * b[k];
        }
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int64_t j = i + 1; j < n; j++)
            s -= a[i * n + j] * b[j];
        b[i] = s / a[i * n + i];
    }
    return 0;
}

int bridge_dense_solve(const bsrmv_matrix *K, const double *f, double *u)
{
    bsrmv_matrix_info in;
    if (bsrmv_matrix_get_info(K, &in) != BSRMV_SUCCESS)
        return bridge_fail("dense solve: %s", bsrmv_last_error());
    int64_t n = in.rows;
    if (n > BRIDGE_DENSE_MAX || in.cols != n)
        return bridge_fail("dense solve: %lld x %lld, the limit is %d x %d", (long long)n,
                           (long long)in.cols, BRIDGE_DENSE_MAX, BRIDGE_DENSE_MAX);
    bsrmv_coo *coo;
    if (bsrmv_matrix_to_coo(K, &coo) != BSRMV_SUCCESS)
        return bridge_fail("dense solve: %s", bsrmv_last_error());
    double *a = calloc((size_t)(n * n), sizeof *a);
    if (!a) {
        bsrmv_coo_destroy(coo);
        return bridge_fail("dense solve: out of memory for %lld x %lld", (long long)n,
                           (long long)n);
    }
    for (int64_t k = 0; k < coo->nnz; k++)
        a[coo->row[k] * n + coo->col[k]] += coo->val[k];
    bsrmv_coo_destroy(coo);
    for (int64_t i = 0; i < n; i++)
        u[i] = f[i];
    int rc = lu_solve(a, n, u);
    free(a);
    return rc;
}
