/* COO/CSR -> BSR (aligned split with zero fill, or promotion of every
 * scalar to a dense block) and BSR -> COO. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Block pattern of coo cut into aligned bs x bs blocks: sorted, unique
 * block columns per block row, and for every entry the block it lands in. */
typedef struct pattern {
    int64_t mb, nb, nnzb;
    int64_t *row_ptr;  /* mb+1, bsrmv_big_alloc */
    int32_t *col_idx;  /* nnzb, bsrmv_big_alloc */
    int64_t *block_of; /* coo->nnz, malloc */
} pattern;

static void pattern_free(pattern *p)
{
    bsrmv_big_free(p->row_ptr);
    bsrmv_big_free(p->col_idx);
    free(p->block_of);
    memset(p, 0, sizeof *p);
}

static bsrmv_status pattern_build(const bsrmv_coo *coo, int64_t bs, pattern *p)
{
    memset(p, 0, sizeof *p);
    p->mb = (coo->m + bs - 1) / bs;
    p->nb = (coo->n + bs - 1) / bs;
    if (p->nb > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "%lld block columns do not fit 32-bit col_idx", (long long)p->nb);
    const int64_t nnz = coo->nnz;
    for (int64_t k = 0; k < nnz; k++)
        if (coo->row[k] < 0 || coo->row[k] >= coo->m || coo->col[k] < 0 ||
            coo->col[k] >= coo->n)
            return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                              "COO entry %lld at (%lld, %lld) outside the %lld x %lld matrix",
                              (long long)k, (long long)coo->row[k], (long long)coo->col[k],
                              (long long)coo->m, (long long)coo->n);

    size_t nnz_alloc = (size_t)(nnz > 0 ? nnz : 1);
    int64_t *start = calloc((size_t)p->mb + 1, sizeof *start); /* bucket offsets */
    int64_t *perm = malloc(nnz_alloc * sizeof *perm);         /* entries by block row */
    int64_t *stamp = malloc(((size_t)p->nb + 1) * sizeof *stamp);
    int32_t *cols = malloc(nnz_alloc * sizeof *cols);         /* nnzb <= nnz */
    p->block_of = malloc(nnz_alloc * sizeof *p->block_of);
    p->row_ptr = bsrmv_big_alloc(((size_t)p->mb + 1) * sizeof *p->row_ptr);
    bsrmv_status s = BSRMV_SUCCESS;
    if (!start || !perm || !stamp || !cols || !p->block_of || !p->row_ptr) {
        s = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory splitting %lld entries into blocks",
                       (long long)nnz);
        goto done;
    }
    for (int64_t k = 0; k < nnz; k++)
        start[coo->row[k] / bs + 1]++;
    for (int64_t i = 0; i < p->mb; i++)
        start[i + 1] += start[i];
    for (int64_t k = 0; k < nnz; k++)
        perm[start[coo->row[k] / bs]++] = k;
    /* start[i] now holds the end of bucket i; shift back to starts. */
    memmove(start + 1, start, (size_t)p->mb * sizeof *start);
    start[0] = 0;

    for (int64_t j = 0; j < p->nb; j++)
        stamp[j] = -1;
    int64_t nnzb = 0;
    p->row_ptr[0] = 0;
    for (int64_t i = 0; i < p->mb; i++) {
        int64_t first = nnzb;
        for (int64_t q = start[i]; q < start[i + 1]; q++) {
            int64_t bj = coo->col[perm[q]] / bs;
            if (stamp[bj] != i) {
                stamp[bj] = i;
                cols[nnzb++] = (int32_t)bj;
            }
        }
        qsort(cols + first, (size_t)(nnzb - first), sizeof *cols, cmp_i32);
        p->row_ptr[i + 1] = nnzb;
        for (int64_t q = start[i]; q < start[i + 1]; q++) {
            int32_t bj = (int32_t)(coo->col[perm[q]] / bs);
            const int32_t *hit = bsearch(&bj, cols + first, (size_t)(nnzb - first),
                                         sizeof *cols, cmp_i32);
            p->block_of[perm[q]] = hit - cols;
        }
    }
    p->nnzb = nnzb;
    p->col_idx = bsrmv_big_alloc((size_t)(nnzb > 0 ? nnzb : 1) * sizeof *p->col_idx);
    if (!p->col_idx) {
        s = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %lld block indices",
                       (long long)nnzb);
        goto done;
    }
    memcpy(p->col_idx, cols, (size_t)nnzb * sizeof *cols);
done:
    free(start);
    free(perm);
    free(stamp);
    free(cols);
    if (s)
        pattern_free(p);
    return s;
}

/* Offset of entry (r, c) inside a block stored in the given order. */
static inline int64_t in_block(bsrmv_order order, int64_t bs, int64_t r, int64_t c)
{
    return order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c;
}

static inline void add_value(void *val, bsrmv_type t, int64_t at, double v)
{
    if (t == BSRMV_DOUBLE)
        ((double *)val)[at] += v;
    else
        ((float *)val)[at] += (float)v;
}

/* Moves the pattern's arrays into a new owned matrix with zeroed values. */
static bsrmv_status adopt_pattern(bsrmv_matrix **A, pattern *p, int bs, bsrmv_type type,
                                  bsrmv_order order, void **val)
{
    bsrmv_status s = bsrmv_matrix_shell(A, p->mb, p->nb, bs, p->nnzb, type, order);
    if (s)
        return s;
    size_t bytes;
    if (!bsrmv_bytes(p->nnzb * bs * bs, bsrmv_type_size(type), &bytes) ||
        !(*val = bsrmv_big_alloc(bytes))) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %lld blocks of %d x %d",
                          (long long)p->nnzb, bs, bs);
    }
    memset(*val, 0, bytes);
    (*A)->row_ptr = p->row_ptr;
    (*A)->col_idx = p->col_idx;
    (*A)->val = *val;
    (*A)->owns = true;
    p->row_ptr = NULL;
    p->col_idx = NULL;
    return BSRMV_SUCCESS;
}

static bsrmv_status split(bsrmv_matrix **A, const bsrmv_coo *coo, int bs, bsrmv_type type,
                          bsrmv_order order)
{
    pattern p;
    bsrmv_status s = pattern_build(coo, bs, &p);
    if (s)
        return s;
    void *val;
    s = adopt_pattern(A, &p, bs, type, order, &val);
    if (!s) {
        const int64_t bs2 = (int64_t)bs * bs;
        for (int64_t k = 0; k < coo->nnz; k++)
            add_value(val, type,
                      p.block_of[k] * bs2 + in_block(order, bs, coo->row[k] % bs, coo->col[k] % bs),
                      coo->val[k]);
    }
    pattern_free(&p);
    return s;
}

static bsrmv_status promote(bsrmv_matrix **A, const bsrmv_coo *coo, int bs, uint64_t seed,
                            bsrmv_type type, bsrmv_order order)
{
    int64_t t;
    if (!bsrmv_mul64(coo->m, bs, &t) || !bsrmv_mul64(coo->n, bs, &t))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "promoted matrix size overflows");
    pattern p;
    bsrmv_status s = pattern_build(coo, 1, &p);
    if (s)
        return s;
    double *scalar = calloc((size_t)(p.nnzb > 0 ? p.nnzb : 1), sizeof *scalar);
    void *val = NULL;
    if (!scalar) {
        pattern_free(&p);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory promoting %lld entries",
                          (long long)coo->nnz);
    }
    for (int64_t k = 0; k < coo->nnz; k++)
        scalar[p.block_of[k]] += coo->val[k];
    s = adopt_pattern(A, &p, bs, type, order, &val);
    if (!s) {
        const int64_t bs2 = (int64_t)bs * bs;
        /* The random factor is indexed by (block, r, c), not by storage
         * position, so both block orders hold the same matrix. */
        for (int64_t k = 0; k < p.nnzb; k++)
            for (int64_t r = 0; r < bs; r++)
                for (int64_t c = 0; c < bs; c++) {
                    double u = 2.0 * bsrmv_hash01(seed, (uint64_t)(k * bs2 + r * bs + c)) - 1.0;
                    add_value(val, type, k * bs2 + in_block(order, bs, r, c),
                              scalar[k] * (1.0 + 0.25 * u));
                }
    }
    free(scalar);
    pattern_free(&p);
    return s;
}

bsrmv_status bsrmv_matrix_from_coo(bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                   bsrmv_blocking how, uint64_t seed,
                                   bsrmv_type type, bsrmv_order order)
{
    if (!A || !coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_from_coo: NULL argument");
    *A = NULL;
    if (coo->m < 0 || coo->n < 0 || coo->nnz < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "COO with negative size");
    if (coo->nnz > 0 && (!coo->row || !coo->col || !coo->val))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "COO with NULL arrays");
    if (bs < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "block size %d < 1", bs);
    if (bsrmv_type_size(type) == 0 || (order != BSRMV_COL_MAJOR && order != BSRMV_ROW_MAJOR))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown value type or block order");
    switch (how) {
    case BSRMV_SPLIT: return split(A, coo, bs, type, order);
    case BSRMV_PROMOTE: return promote(A, coo, bs, seed, type, order);
    }
    return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown blocking %d", (int)how);
}

bsrmv_status bsrmv_matrix_from_csr(bsrmv_matrix **A, int64_t m, int64_t n,
                                   const int64_t *row_ptr, const int64_t *col_idx,
                                   const double *val, int bs, bsrmv_blocking how,
                                   uint64_t seed, bsrmv_type type, bsrmv_order order)
{
    if (!A || !row_ptr)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_from_csr: NULL argument");
    *A = NULL;
    if (m < 0 || n < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "CSR with negative size");
    if (row_ptr[0] != 0)
        return bsrmv_fail(BSRMV_ERR_STRUCTURE, "CSR row_ptr[0] = %lld, not 0",
                          (long long)row_ptr[0]);
    for (int64_t i = 0; i < m; i++)
        if (row_ptr[i + 1] < row_ptr[i])
            return bsrmv_fail(BSRMV_ERR_STRUCTURE, "CSR row_ptr decreases at row %lld",
                              (long long)i);
    const int64_t nnz = row_ptr[m];
    if (nnz > 0 && (!col_idx || !val))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "CSR with NULL arrays");
    /* The COO view borrows col_idx and val; only the row array is made. */
    int64_t *rows = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *rows);
    if (!rows)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory converting CSR");
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
            rows[k] = i;
    bsrmv_coo view = {m, n, nnz, rows, (int64_t *)col_idx, (double *)val};
    bsrmv_status s = bsrmv_matrix_from_coo(A, &view, bs, how, seed, type, order);
    free(rows);
    return s;
}

bsrmv_status bsrmv_matrix_to_coo(const bsrmv_matrix *A, bsrmv_coo **coo)
{
    if (!A || !coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_to_coo: NULL argument");
    const int64_t bs = A->bs, bs2 = bs * bs;
    bsrmv_status s = bsrmv_coo_create(coo, A->mb * bs, A->nb * bs, A->nnzb * bs2);
    if (s)
        return s;
    bsrmv_coo *C = *coo;
    int64_t e = 0;
    for (int64_t i = 0; i < A->mb; i++)
        for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
            for (int64_t r = 0; r < bs; r++)
                for (int64_t c = 0; c < bs; c++, e++) {
                    int64_t at = k * bs2 + in_block(A->order, bs, r, c);
                    C->row[e] = i * bs + r;
                    C->col[e] = (int64_t)A->col_idx[k] * bs + c;
                    C->val[e] = A->type == BSRMV_DOUBLE ? ((const double *)A->val)[at]
                                                        : ((const float *)A->val)[at];
                }
    return BSRMV_SUCCESS;
}
