/* The inverse of one diagonal block, for one value kind: included by
 * precond.c with E (the factorisation's type: double, or double _Complex
 * for the complex matrix types), ABS (its modulus) and SUF (a name suffix)
 * defined.  Every block is factored in E whatever the precision of A. */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SUF)

/* Value at of A's values as E. */
static E F(value)(const bsrmv_matrix *A, int64_t at)
{
#ifdef CPLX
    if (A->type == BSRMV_COMPLEX_DOUBLE)
        return ((const double _Complex *)A->val)[at];
    return ((const float _Complex *)A->val)[at];
#else
    if (A->type == BSRMV_DOUBLE)
        return ((const double *)A->val)[at];
    return ((const float *)A->val)[at];
#endif
}

/* Diagonal block of block row i as a column-major matrix; 0 if the row has
 * no diagonal block. */
static int F(load_diagonal)(const bsrmv_matrix *A, int64_t i, E *d)
{
    const int bs = A->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    for (int64_t k = bsrmv_row_start(A, i), k1 = bsrmv_row_start(A, i + 1); k < k1; k++) {
        if (A->col_idx[k] != i)
            continue;
        for (int r = 0; r < bs; r++)
            for (int c = 0; c < bs; c++) {
                int64_t at = k * bs2 + (A->order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                d[r + c * bs] = F(value)(A, at);
            }
        return 1;
    }
    return 0;
}

/* Inverts the column-major bs x bs matrix a into inv (a is destroyed);
 * piv is scratch of bs entries.  Returns 0 if a pivot falls below tol. */
static int F(invert)(int bs, E *a, E *inv, int *piv, double tol)
{
    for (int k = 0; k < bs; k++) {
        int p = k;
        for (int r = k + 1; r < bs; r++)
            if (ABS(a[r + k * bs]) > ABS(a[p + k * bs]))
                p = r;
        if (!(ABS(a[p + k * bs]) > tol))
            return 0;
        piv[k] = p;
        if (p != k)
            for (int c = 0; c < bs; c++) {
                E t = a[k + c * bs];
                a[k + c * bs] = a[p + c * bs];
                a[p + c * bs] = t;
            }
        const E inv_pivot = 1 / a[k + k * bs];
        for (int r = k + 1; r < bs; r++)
            a[r + k * bs] *= inv_pivot;
        for (int c = k + 1; c < bs; c++) {
            const E f = a[k + c * bs];
            for (int r = k + 1; r < bs; r++)
                a[r + c * bs] -= a[r + k * bs] * f;
        }
    }
    /* solve L U X = P I column by column */
    for (int c = 0; c < bs; c++) {
        E *x = inv + (size_t)c * bs;
        for (int r = 0; r < bs; r++)
            x[r] = r == c;
        for (int k = 0; k < bs; k++)
            if (piv[k] != k) {
                E t = x[k];
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

/* The inverse of block row i's diagonal block into inv (mb blocks of the
 * vector type, whose precision is A's), through the scratch work (2 bs^2
 * values of E) and piv; 0, or 1 for a missing block, 2 for a singular one
 * (a pivot below PIVOT_TOL * bs * eps * max|block|). */
static int F(block_inverse)(const bsrmv_matrix *A, int64_t i, E *work, int *piv, double eps,
                            void *inv)
{
    const int bs = A->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    E *d = work, *di = work + bs2;
    if (!F(load_diagonal)(A, i, d))
        return 1;
    double amax = 0;
    for (int64_t e = 0; e < bs2; e++)
        amax = fmax(amax, ABS(d[e]));
    if (!F(invert)(bs, d, di, piv, PIVOT_TOL * bs * eps * amax))
        return 2;
    for (int64_t e = 0; e < bs2; e++) {
#ifdef CPLX
        if (A->vtype == BSRMV_COMPLEX_DOUBLE)
            ((double _Complex *)inv)[i * bs2 + e] = di[e];
        else
            ((float _Complex *)inv)[i * bs2 + e] = (float _Complex)di[e];
#else
        if (A->vtype == BSRMV_DOUBLE)
            ((double *)inv)[i * bs2 + e] = di[e];
        else
            ((float *)inv)[i * bs2 + e] = (float)di[e];
#endif
    }
    return 0;
}

#undef F
#undef CAT
#undef CAT_
