/* Symmetric and Hermitian storage: conversions between the full matrix and
 * its diagonal and upper blocks. */
#include "internal.h"

#include <math.h>
#include <string.h>

/* Value at of A (complex: its real part in re, the imaginary one in im). */
static inline void value_at(const bsrmv_matrix *A, int64_t at, double *re, double *im)
{
    const int p = bsrmv_type_parts(A->type);
    *re = bsrmv_part_get(A->val, A->type, at * p);
    *im = p == 2 ? bsrmv_part_get(A->val, A->type, at * p + 1) : 0.0;
}

/* Offset of entry (r, c) inside a block of A. */
static inline int64_t entry(const bsrmv_matrix *A, int r, int c)
{
    return A->order == BSRMV_COL_MAJOR ? (int64_t)c * A->bs + r : (int64_t)r * A->bs + c;
}

/* Position of block (i, j) in A, -1 if it is not stored. */
static int64_t find_block(const bsrmv_matrix *A, int64_t i, int64_t j)
{
    int64_t lo = bsrmv_row_start(A, i), hi = bsrmv_row_start(A, i + 1);
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->col_idx[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < bsrmv_row_start(A, i + 1) && A->col_idx[lo] == j ? lo : -1;
}

/* Block k of row i against its mirror m (-1: zeros), entry by entry; herm
 * compares with the conjugate of the mirror. */
static bsrmv_status compare_mirror(const char *who, const bsrmv_matrix *A, int64_t i, int64_t k,
                                   int64_t m, double tol, bool herm)
{
    const int bs = A->bs;
    const int64_t bs2 = (int64_t)bs * bs, j = A->col_idx[k];
    for (int r = 0; r < bs; r++)
        for (int c = 0; c < bs; c++) {
            double a, ai, b = 0, bi = 0;
            value_at(A, k * bs2 + entry(A, r, c), &a, &ai);
            if (m >= 0)
                value_at(A, m * bs2 + entry(A, c, r), &b, &bi);
            if (herm)
                bi = -bi;
            /* equal first: tol 0 takes equal infinities, which hypot makes NaN */
            if ((a == b && ai == bi) || hypot(a - b, ai - bi) <= tol * fmax(hypot(a, ai), hypot(b, bi)))
                continue;
            if (herm && k == m && r == c)
                return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                                  "%s: not Hermitian: diagonal entry (%lld, %lld) is %.17g%+.17gi, "
                                  "its imaginary part not 0 (tolerance %g)",
                                  who, (long long)(i * bs + r), (long long)(i * bs + r), a, ai, tol);
            if (!bsrmv_type_is_complex(A->type))
                return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                                  "%s: not symmetric: entry (%lld, %lld) is %.17g, entry "
                                  "(%lld, %lld) %.17g%s (tolerance %g)",
                                  who, (long long)(i * bs + r), (long long)(j * bs + c), a,
                                  (long long)(j * bs + c), (long long)(i * bs + r), b,
                                  m < 0 ? ", its block not stored" : "", tol);
            return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                              "%s: not %s: entry (%lld, %lld) is %.17g%+.17gi, entry "
                              "(%lld, %lld) %.17g%+.17gi%s (tolerance %g)",
                              who, herm ? "Hermitian" : "symmetric", (long long)(i * bs + r),
                              (long long)(j * bs + c), a, ai, (long long)(j * bs + c),
                              (long long)(i * bs + r), b, herm ? -bi : bi,
                              m < 0 ? ", its block not stored" : "", tol);
        }
    return BSRMV_SUCCESS;
}

static bsrmv_status to_sym(const char *who, bsrmv_matrix **S, const bsrmv_matrix *A, double tol,
                           bool herm)
{
    if (!S || !A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: NULL argument", who);
    *S = NULL;
    if (A->sym)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "%s: the matrix is already in symmetric storage", who);
    if (!(tol >= 0))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: tolerance %g", who, tol);
    if (A->mb != A->nb)
        return bsrmv_fail(BSRMV_ERR_DIMENSION, "%s: %lld x %lld blocks, not square", who,
                          (long long)A->mb, (long long)A->nb);
    herm = herm && bsrmv_type_is_complex(A->type);
    int64_t upper = 0;
    for (int64_t i = 0; i < A->mb; i++)
        for (int64_t k = bsrmv_row_start(A, i); k < bsrmv_row_start(A, i + 1); k++) {
            const int64_t j = A->col_idx[k];
            const int64_t m = find_block(A, j, i);
            /* A pair of stored blocks is compared once, from above. */
            if (j < i && m >= 0)
                continue;
            bsrmv_status s = compare_mirror(who, A, i, k, m, tol, herm);
            if (s)
                return s;
            upper += j >= i;
        }
    bsrmv_status s = bsrmv_matrix_shell(S, A->mb, A->nb, A->bs, upper, A->type, A->order);
    if (s)
        return s;
    int64_t *rp;
    int32_t *ci;
    void *v;
    if ((s = bsrmv_matrix_alloc_arrays(*S, &rp, &ci, &v))) {
        bsrmv_matrix_destroy(*S);
        *S = NULL;
        return s;
    }
    (*S)->sym = true;
    (*S)->herm = herm;
    const size_t block_bytes = (size_t)A->bs * A->bs * bsrmv_type_size(A->type);
    int64_t n = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < A->mb; i++) {
        for (int64_t k = bsrmv_row_start(A, i); k < bsrmv_row_start(A, i + 1); k++)
            if (A->col_idx[k] >= i) {
                ci[n] = A->col_idx[k];
                memcpy((char *)v + (size_t)n * block_bytes,
                       (const char *)A->val + (size_t)k * block_bytes, block_bytes);
                n++;
            }
        rp[i + 1] = n;
    }
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_to_sym(bsrmv_matrix **S, const bsrmv_matrix *A, double tol)
{
    return to_sym("bsrmv_matrix_to_sym", S, A, tol, false);
}

bsrmv_status bsrmv_matrix_to_herm(bsrmv_matrix **S, const bsrmv_matrix *A, double tol)
{
    return to_sym("bsrmv_matrix_to_herm", S, A, tol, true);
}

bsrmv_status bsrmv_matrix_from_sym(bsrmv_matrix **A, const bsrmv_matrix *S)
{
    if (!A || !S)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_from_sym: NULL argument");
    *A = NULL;
    if (!S->sym)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "bsrmv_matrix_from_sym: the matrix is not in symmetric storage");
    const int64_t mb = S->mb;
    int64_t diag = 0;
    for (int64_t i = 0; i < mb; i++)
        diag += S->row_ptr[i + 1] > S->row_ptr[i] && S->col_idx[S->row_ptr[i]] == i;
    /* 2*nnzb - diag <= 2*nnzb, which the shell checks against the sizes. */
    bsrmv_status s =
        bsrmv_matrix_shell(A, mb, mb, S->bs, 2 * S->nnzb - diag, S->type, S->order);
    if (s)
        return s;
    int64_t *rp;
    int32_t *ci;
    void *v;
    if ((s = bsrmv_matrix_alloc_arrays(*A, &rp, &ci, &v))) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return s;
    }
    /* rp[i+1] counts row i's blocks: the mirrored ones, then its own. */
    memset(rp, 0, (size_t)(mb + 1) * sizeof *rp);
    for (int64_t i = 0; i < mb; i++)
        for (int64_t k = S->row_ptr[i]; k < S->row_ptr[i + 1]; k++)
            rp[S->col_idx[k] + 1] += S->col_idx[k] > i;
    for (int64_t i = 0; i < mb; i++)
        rp[i + 1] += rp[i] + (S->row_ptr[i + 1] - S->row_ptr[i]);
    /* next[i]: where row i's next mirrored block goes; rows are visited in
     * order, so the mirrored columns of every row come out sorted. */
    int64_t *next = bsrmv_malloc((size_t)(mb > 0 ? mb : 1) * sizeof *next);
    if (!next) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory expanding %lld block rows",
                          (long long)mb);
    }
    memcpy(next, rp, (size_t)mb * sizeof *next);
    const int bs = S->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const size_t vs = bsrmv_type_size(S->type);
    for (int64_t i = 0; i < mb; i++) {
        /* Row i's own blocks follow its mirrored ones, all of which come
         * from rows before i. */
        int64_t own = rp[i + 1] - (S->row_ptr[i + 1] - S->row_ptr[i]);
        for (int64_t k = S->row_ptr[i]; k < S->row_ptr[i + 1]; k++) {
            const int32_t j = S->col_idx[k];
            ci[own] = j;
            memcpy((char *)v + (size_t)(own * bs2) * vs,
                   (const char *)S->val + (size_t)(k * bs2) * vs, (size_t)bs2 * vs);
            own++;
            if (j == i)
                continue;
            const int64_t t = next[j]++;
            ci[t] = (int32_t)i;
            for (int r = 0; r < bs; r++)
                for (int c = 0; c < bs; c++) {
                    const size_t to = (size_t)(t * bs2 + entry(S, c, r)) * vs;
                    const size_t from = (size_t)(k * bs2 + entry(S, r, c)) * vs;
                    memcpy((char *)v + to, (const char *)S->val + from, vs);
                    if (S->herm) /* negate the imaginary part */
                        bsrmv_part_set(v, S->type, (int64_t)(to / vs) * 2 + 1,
                                       -bsrmv_part_get(v, S->type, (int64_t)(to / vs) * 2 + 1));
                }
        }
    }
    bsrmv_free(next);
    return BSRMV_SUCCESS;
}
