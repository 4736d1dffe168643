/* COO and CSR -> BSR, split and promote, against the entries themselves:
 * every entry lands in its block at its place (duplicates summed), no
 * other block exists, promoted blocks are the scalar times a factor in
 * [0.75, 1.25], and the block count matches bsrmv_coo_count_blocks.
 * Dimensions range up to 2^31 so both the counting and the sorting
 * paths run. */
#include "fuzz_common.h"
#include "internal.h"

static int64_t find_block(const int64_t *rp, const int32_t *ci, int64_t i, int64_t bj)
{
    for (int64_t k = rp[i]; k < rp[i + 1]; k++)
        if (ci[k] == bj)
            return k;
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    const unsigned mode = fz_u8(&f);
    /* Rows stay small (row_ptr is sized by them); columns may be huge. */
    int64_t m = 1 + fz_u8(&f) % 64, n = 1 + fz_u8(&f) % 64;
    if (mode & 1)
        n = 1 + (int64_t)(fz_u32(&f) % INT32_MAX);
    const int bs = 1 + (int)(fz_u8(&f) % 9);
    const bsrmv_blocking how = (mode & 2) ? BSRMV_PROMOTE : BSRMV_SPLIT;
    const bsrmv_type type = (bsrmv_type)((mode >> 2) & 1);
    const bsrmv_order order = (bsrmv_order)((mode >> 3) & 1);
    const int64_t nnz = fz_u8(&f) % 128;
    bsrmv_coo *c = NULL;
    if (bsrmv_coo_create(&c, m, n, nnz))
        abort();
    for (int64_t k = 0; k < nnz; k++) {
        c->row[k] = fz_u8(&f) % m;
        c->col[k] = (mode & 1) ? fz_u32(&f) % n : fz_u8(&f) % n;
        c->val[k] = fz_small(&f);
    }
    /* Sometimes an entry out of range: an error, never a crash. */
    int bad = (mode & 16) && nnz > 0;
    if (bad)
        c->col[nnz - 1] = n + fz_u8(&f);
    bsrmv_matrix *A = NULL;
    uint64_t seed = fz_u8(&f);
    bsrmv_status s = bsrmv_matrix_from_coo(&A, c, bs, how, type, order);
    if (bad) {
        if (s != BSRMV_ERR_STRUCTURE || A)
            abort();
        bsrmv_coo_destroy(c);
        return 0;
    }
    const int eff = how == BSRMV_PROMOTE ? 1 : bs; /* rows of the COO per block */
    if (s != BSRMV_SUCCESS)
        abort();
    /* Promoted blocks are a_ij times ones; the benchmark perturbation keeps
     * each entry within 25% of a_ij (checked below). */
    if (how == BSRMV_PROMOTE && bsrmv_matrix_perturb_promoted(A, seed) != BSRMV_SUCCESS)
        abort();
    bsrmv_matrix_info in;
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    if (bsrmv_matrix_get_info(A, &in) || bsrmv_matrix_arrays(A, &rp, &ci, &v))
        abort();
    if (in.mb != (m + eff - 1) / eff || in.nb != (n + eff - 1) / eff)
        abort();
    if (bsrmv_check_bsr(in.mb, in.nb, bs, in.nnzb, rp, ci, NULL))
        abort();
    int64_t count;
    if (bsrmv_coo_count_blocks(c, eff, &count) || count != in.nnzb)
        abort();
    /* Sum of the entries per block position, by a quadratic scan. */
    const int64_t bs2 = (int64_t)bs * bs;
    int64_t used = 0;
    for (int64_t k = 0; k < nnz; k++) {
        int64_t b = find_block(rp, ci, c->row[k] / eff, c->col[k] / eff);
        if (b < 0)
            abort();
        double sum = 0;
        int first = 1;
        for (int64_t q = 0; q < nnz; q++)
            if (c->row[q] / eff == c->row[k] / eff && c->col[q] / eff == c->col[k] / eff) {
                if (how == BSRMV_SPLIT && (c->row[q] != c->row[k] || c->col[q] != c->col[k]))
                    continue;
                first &= q >= k;
                sum += c->val[q];
            }
        if (!first)
            continue;
        used++;
        if (how == BSRMV_SPLIT) {
            int64_t r = c->row[k] % bs, col = c->col[k] % bs;
            int64_t at = b * bs2 + (order == BSRMV_COL_MAJOR ? col * bs + r : r * bs + col);
            double got = type == BSRMV_DOUBLE ? ((const double *)v)[at]
                                              : ((const float *)v)[at];
            fz_close(got, sum, fabs(sum) + 16.0 * nnz, nnz, type == BSRMV_FLOAT);
        } else {
            for (int64_t e = 0; e < bs2; e++) {
                double got = type == BSRMV_DOUBLE ? ((const double *)v)[b * bs2 + e]
                                                  : ((const float *)v)[b * bs2 + e];
                double lo = 0.75 * fabs(sum), hi = 1.25 * fabs(sum);
                double slack = 1e-6 * (fabs(sum) + 16.0 * nnz);
                if (!(fabs(got) >= lo - slack && fabs(got) <= hi + slack))
                    abort();
            }
        }
    }
    if (how == BSRMV_PROMOTE && used != in.nnzb)
        abort();
    /* The same matrix through CSR (rows sorted stably by a counting pass). */
    int64_t *crp = calloc((size_t)m + 1, sizeof *crp), *ccol = malloc((size_t)(nnz + 1) * 8);
    double *cval = malloc((size_t)(nnz + 1) * sizeof *cval);
    for (int64_t k = 0; k < nnz; k++)
        crp[c->row[k] + 1]++;
    for (int64_t i = 0; i < m; i++)
        crp[i + 1] += crp[i];
    int64_t *fill = malloc((size_t)(m + 1) * sizeof *fill);
    memcpy(fill, crp, (size_t)(m + 1) * sizeof *fill);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t at = fill[c->row[k]]++;
        ccol[at] = c->col[k];
        cval[at] = c->val[k];
    }
    bsrmv_matrix *B = NULL;
    if (bsrmv_matrix_from_csr(&B, m, n, crp, ccol, cval, bs, how, type, order))
        abort();
    const int64_t *rp2;
    const int32_t *ci2;
    const void *v2;
    bsrmv_matrix_info in2;
    if (bsrmv_matrix_get_info(B, &in2) || bsrmv_matrix_arrays(B, &rp2, &ci2, &v2) ||
        in2.nnzb != in.nnzb || memcmp(rp, rp2, (size_t)(in.mb + 1) * sizeof *rp) ||
        memcmp(ci, ci2, (size_t)in.nnzb * sizeof *ci))
        abort();
    bsrmv_matrix_destroy(B);
    free(crp);
    free(ccol);
    free(cval);
    free(fill);
    bsrmv_matrix_destroy(A);
    bsrmv_coo_destroy(c);
    return 0;
}
