/* Coordinate matrices: allocation and the block count of an aligned split. */
#include "internal.h"

#include <stdlib.h>

/* The arrays come from malloc and are released with free, so code that
 * builds a COO incrementally (the Matrix Market reader) may realloc them. */
static bsrmv_status create(bsrmv_coo **coo, int64_t m, int64_t n, int64_t nnz, bool complex)
{
    if (!coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_coo_create: coo is NULL");
    *coo = NULL;
    if (m < 0 || n < 0 || nnz < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "bsrmv_coo_create: negative size (m=%lld, n=%lld, nnz=%lld)",
                          (long long)m, (long long)n, (long long)nnz);
    size_t ibytes, vbytes;
    if (!bsrmv_bytes(nnz, sizeof(int64_t), &ibytes) || !bsrmv_bytes(nnz, sizeof(double), &vbytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "bsrmv_coo_create: %lld entries do not fit in memory sizes",
                          (long long)nnz);
    bsrmv_coo *c = bsrmv_calloc(1, sizeof *c);
    if (!c)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_coo_create: out of memory");
    /* bsrmv_malloc(0) may return NULL; one byte keeps "NULL means failure". */
    c->row = bsrmv_malloc(ibytes ? ibytes : 1);
    c->col = bsrmv_malloc(ibytes ? ibytes : 1);
    c->val = bsrmv_malloc(vbytes ? vbytes : 1);
    if (complex)
        c->imag = bsrmv_malloc(vbytes ? vbytes : 1);
    if (!c->row || !c->col || !c->val || (complex && !c->imag)) {
        bsrmv_coo_destroy(c);
        return bsrmv_fail(BSRMV_ERR_NOMEM,
                          "bsrmv_coo_create: out of memory for %lld entries", (long long)nnz);
    }
    c->m = m;
    c->n = n;
    c->nnz = nnz;
    *coo = c;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_coo_create(bsrmv_coo **coo, int64_t m, int64_t n, int64_t nnz)
{
    return create(coo, m, n, nnz, false);
}

bsrmv_status bsrmv_coo_create_complex(bsrmv_coo **coo, int64_t m, int64_t n, int64_t nnz)
{
    return create(coo, m, n, nnz, true);
}

void bsrmv_coo_destroy(bsrmv_coo *coo)
{
    if (!coo)
        return;
    bsrmv_free(coo->row);
    bsrmv_free(coo->col);
    bsrmv_free(coo->val);
    bsrmv_free(coo->imag);
    bsrmv_free(coo);
}

typedef struct block_pair {
    int64_t r, c;
} block_pair;

static int cmp_pair(const void *a, const void *b)
{
    const block_pair *x = a, *y = b;
    if (x->r != y->r)
        return x->r < y->r ? -1 : 1;
    if (x->c != y->c)
        return x->c < y->c ? -1 : 1;
    return 0;
}

/* Few entries in a huge matrix: arrays indexed by block row or column would
 * dwarf the entries, so sort the block coordinates instead. */
static bsrmv_status count_by_sorting(const bsrmv_coo *coo, int bs, int64_t *nnzb)
{
    size_t bytes;
    if (!bsrmv_bytes(coo->nnz, sizeof(block_pair), &bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "bsrmv_coo_count_blocks: too many entries");
    block_pair *p = bsrmv_malloc(bytes ? bytes : 1);
    if (!p)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_coo_count_blocks: out of memory");
    for (int64_t k = 0; k < coo->nnz; k++) {
        p[k].r = coo->row[k] / bs;
        p[k].c = coo->col[k] / bs;
    }
    qsort(p, (size_t)coo->nnz, sizeof *p, cmp_pair);
    int64_t count = 0;
    for (int64_t k = 0; k < coo->nnz; k++)
        if (k == 0 || cmp_pair(&p[k - 1], &p[k]) != 0)
            count++;
    bsrmv_free(p);
    *nnzb = count;
    return BSRMV_SUCCESS;
}

/* Bucket the block columns by block row (counting sort), then count the
 * distinct ones per row with a stamp per block column: O(nnz + mb + nb). */
static bsrmv_status count_by_buckets(const bsrmv_coo *coo, int bs, int64_t mb, int64_t nb,
                                     int64_t *nnzb)
{
    size_t bucket_bytes, stamp_bytes;
    if (!bsrmv_bytes(coo->nnz, sizeof(int64_t), &bucket_bytes) ||
        !bsrmv_bytes(nb, sizeof(int64_t), &stamp_bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "bsrmv_coo_count_blocks: too many entries");
    int64_t *start = bsrmv_calloc((size_t)mb + 1, sizeof *start);
    int64_t *bucket = bsrmv_malloc(bucket_bytes ? bucket_bytes : 1);
    int64_t *stamp = bsrmv_malloc(stamp_bytes ? stamp_bytes : 1);
    if (!start || !bucket || !stamp) {
        bsrmv_free(start);
        bsrmv_free(bucket);
        bsrmv_free(stamp);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_coo_count_blocks: out of memory");
    }
    for (int64_t k = 0; k < coo->nnz; k++)
        start[coo->row[k] / bs + 1]++;
    for (int64_t i = 0; i < mb; i++)
        start[i + 1] += start[i];
    /* start[i] now advances as bucket i fills, ending at the old start[i+1]. */
    for (int64_t k = 0; k < coo->nnz; k++)
        bucket[start[coo->row[k] / bs]++] = coo->col[k] / bs;
    for (int64_t j = 0; j < nb; j++)
        stamp[j] = -1;
    int64_t count = 0, begin = 0;
    for (int64_t i = 0; i < mb; i++) {
        for (int64_t k = begin; k < start[i]; k++) {
            if (stamp[bucket[k]] != i) {
                stamp[bucket[k]] = i;
                count++;
            }
        }
        begin = start[i];
    }
    bsrmv_free(start);
    bsrmv_free(bucket);
    bsrmv_free(stamp);
    *nnzb = count;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_coo_count_blocks(const bsrmv_coo *coo, int bs, int64_t *nnzb)
{
    if (!coo || !nnzb)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_coo_count_blocks: NULL argument");
    if (bs < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_coo_count_blocks: block size %d < 1", bs);
    if (coo->m < 0 || coo->n < 0 || coo->nnz < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_coo_count_blocks: negative size in coo");
    if (coo->nnz > 0 && (!coo->row || !coo->col))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_coo_count_blocks: NULL index array");
    for (int64_t k = 0; k < coo->nnz; k++) {
        if (coo->row[k] < 0 || coo->row[k] >= coo->m || coo->col[k] < 0 ||
            coo->col[k] >= coo->n)
            return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                              "bsrmv_coo_count_blocks: entry %lld at (%lld, %lld) is outside "
                              "the %lld x %lld matrix",
                              (long long)k, (long long)coo->row[k], (long long)coo->col[k],
                              (long long)coo->m, (long long)coo->n);
    }
    /* Written to avoid the overflow of m + bs - 1 near INT64_MAX. */
    int64_t mb = coo->m / bs + (coo->m % bs != 0);
    int64_t nb = coo->n / bs + (coo->n % bs != 0);
    /* Per-row and per-column arrays are worth it while they are not much
     * larger than the entries themselves (the 2^20 covers small matrices). */
    int64_t limit;
    if (!bsrmv_add64(coo->nnz, (int64_t)1 << 20, &limit))
        limit = INT64_MAX;
    int64_t stored = 0;
    bsrmv_status s = mb <= limit && nb <= limit ? count_by_buckets(coo, bs, mb, nb, &stored)
                                                : count_by_sorting(coo, bs, &stored);
    if (s == BSRMV_SUCCESS)
        *nnzb = stored;
    return s;
}
