/* COO/CSR -> BSR (aligned split with zero fill, or promotion of every
 * scalar to a dense block) and BSR -> COO. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The passes over every promoted value (a promoted matrix reaches 1 GB)
 * run on threads above this many values; each thread writes its own
 * blocks, so the result does not depend on the threads. */
#define CONVERT_PARALLEL_MIN ((int64_t)1 << 16)

/* Block pattern of coo cut into aligned bs x bs blocks: sorted, unique
 * block columns per block row, and for every entry the block it lands in. */
typedef struct pattern {
    int64_t mb, nb, nnzb;
    int64_t *row_ptr;  /* mb+1, bsrmv_big_alloc */
    int32_t *col_idx;  /* nnzb, bsrmv_big_alloc */
    int64_t *block_of; /* coo->nnz, bsrmv_malloc */
} pattern;

static void pattern_free(pattern *p)
{
    bsrmv_big_free(p->row_ptr);
    bsrmv_big_free(p->col_idx);
    bsrmv_free(p->block_of);
    memset(p, 0, sizeof *p);
}

typedef struct entry_key {
    int64_t br, bc, k;
} entry_key;

static int cmp_key(const void *a, const void *b)
{
    const entry_key *x = a, *y = b;
    if (x->br != y->br)
        return x->br < y->br ? -1 : 1;
    if (x->bc != y->bc)
        return x->bc < y->bc ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* Few entries in a huge matrix: arrays indexed by block row or column would
 * dwarf the entries, so sort the block coordinates (O(nnz log nnz)). */
static bool order_by_sorting(const bsrmv_coo *coo, int64_t bs, int64_t *perm)
{
    const int64_t nnz = coo->nnz;
    entry_key *key = bsrmv_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *key);
    if (!key)
        return false;
    for (int64_t k = 0; k < nnz; k++)
        key[k] = (entry_key){coo->row[k] / bs, coo->col[k] / bs, k};
    qsort(key, (size_t)nnz, sizeof *key, cmp_key);
    for (int64_t q = 0; q < nnz; q++)
        perm[q] = key[q].k;
    bsrmv_free(key);
    return true;
}

/* Stable counting sort of the entries in `from` by `by[k] / bs` into `to`. */
static void counting_pass(const int64_t *by, int64_t bs, int64_t nkeys, int64_t nnz,
                          const int64_t *from, int64_t *to, int64_t *count)
{
    memset(count, 0, (size_t)(nkeys + 1) * sizeof *count);
    for (int64_t q = 0; q < nnz; q++)
        count[by[from ? from[q] : q] / bs + 1]++;
    for (int64_t i = 0; i < nkeys; i++)
        count[i + 1] += count[i];
    for (int64_t q = 0; q < nnz; q++) {
        int64_t k = from ? from[q] : q;
        to[count[by[k] / bs]++] = k;
    }
}

/* Dimensions comparable to the entries: two counting passes (block column,
 * then block row), O(nnz + mb + nb). */
static bool order_by_counting(const bsrmv_coo *coo, int64_t bs, int64_t mb, int64_t nb,
                              int64_t *perm)
{
    const int64_t nnz = coo->nnz, keys = mb > nb ? mb : nb;
    int64_t *count = bsrmv_malloc((size_t)(keys + 1) * sizeof *count);
    int64_t *by_col = bsrmv_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *by_col);
    bool ok = count && by_col;
    if (ok) {
        counting_pass(coo->col, bs, nb, nnz, NULL, by_col, count);
        counting_pass(coo->row, bs, mb, nnz, by_col, perm, count);
    }
    bsrmv_free(count);
    bsrmv_free(by_col);
    return ok;
}

static bsrmv_status pattern_build(const bsrmv_coo *coo, int64_t bs, pattern *p)
{
    memset(p, 0, sizeof *p);
    /* Written to avoid the overflow of m + bs - 1 near INT64_MAX. */
    p->mb = coo->m / bs + (coo->m % bs != 0);
    p->nb = coo->n / bs + (coo->n % bs != 0);
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
    size_t rp_bytes;
    int64_t rp_len;
    if (!bsrmv_add64(p->mb, 1, &rp_len) || !bsrmv_bytes(rp_len, sizeof *p->row_ptr, &rp_bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%lld block rows do not fit in memory sizes",
                          (long long)p->mb);

    size_t nnz_alloc = (size_t)(nnz > 0 ? nnz : 1);
    int64_t *perm = bsrmv_malloc(nnz_alloc * sizeof *perm); /* entries by block */
    int32_t *cols = bsrmv_malloc(nnz_alloc * sizeof *cols); /* nnzb <= nnz */
    p->block_of = bsrmv_malloc(nnz_alloc * sizeof *p->block_of);
    p->row_ptr = bsrmv_big_alloc(rp_bytes);
    bsrmv_status s = BSRMV_SUCCESS;
    bool ordered = false;
    if (perm && cols && p->block_of && p->row_ptr) {
        /* The same bound as bsrmv_coo_count_blocks: per-row and per-column
         * counts only while they are not much larger than the entries. */
        int64_t limit;
        if (!bsrmv_add64(nnz, (int64_t)1 << 20, &limit))
            limit = INT64_MAX;
        ordered = p->mb <= limit && p->nb <= limit
                      ? order_by_counting(coo, bs, p->mb, p->nb, perm)
                      : order_by_sorting(coo, bs, perm);
    }
    if (!ordered) {
        s = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory splitting %lld entries into blocks",
                       (long long)nnz);
        goto done;
    }
    /* perm lists the entries by (block row, block column): a new block
     * wherever the pair changes. */
    int64_t nnzb = 0, row = 0, prev_col = -1;
    p->row_ptr[0] = 0;
    for (int64_t q = 0; q < nnz; q++) {
        const int64_t k = perm[q], br = coo->row[k] / bs, bc = coo->col[k] / bs;
        if (br != row) {
            while (row < br)
                p->row_ptr[++row] = nnzb;
            prev_col = -1;
        }
        if (bc != prev_col) {
            cols[nnzb++] = (int32_t)bc;
            prev_col = bc;
        }
        p->block_of[k] = nnzb - 1;
    }
    while (row < p->mb)
        p->row_ptr[++row] = nnzb;
    p->nnzb = nnzb;
    p->col_idx = bsrmv_big_alloc((size_t)(nnzb > 0 ? nnzb : 1) * sizeof *p->col_idx);
    if (!p->col_idx) {
        s = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %lld block indices",
                       (long long)nnzb);
        goto done;
    }
    memcpy(p->col_idx, cols, (size_t)nnzb * sizeof *cols);
done:
    bsrmv_free(perm);
    bsrmv_free(cols);
    if (s)
        pattern_free(p);
    return s;
}

/* Offset of entry (r, c) inside a block stored in the given order. */
static inline int64_t in_block(bsrmv_order order, int64_t bs, int64_t r, int64_t c)
{
    return order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c;
}

static inline void add_part(void *val, bsrmv_type t, int64_t i, double v)
{
    if (bsrmv_type_is_double(t))
        ((double *)val)[i] += v;
    else
        ((float *)val)[i] += (float)v;
}

/* Value `at` (in values, not components) += re + i*im; a real type takes
 * re (check_values refused a non-zero im for it). */
static inline void add_value(void *val, bsrmv_type t, int64_t at, double re, double im)
{
    if (bsrmv_type_is_complex(t)) {
        add_part(val, t, 2 * at, re);
        add_part(val, t, 2 * at + 1, im);
    } else {
        add_part(val, t, at, re);
    }
}

/* Imaginary part of COO entry k. */
static inline double coo_imag(const bsrmv_coo *coo, int64_t k)
{
    return coo->imag ? coo->imag[k] : 0.0;
}

/* A real type cannot take a COO entry with an imaginary part. */
static bsrmv_status check_real(const bsrmv_coo *coo, bsrmv_type type, const char *who)
{
    if (bsrmv_type_is_complex(type) || !coo->imag)
        return BSRMV_SUCCESS;
    for (int64_t k = 0; k < coo->nnz; k++)
        if (coo->imag[k] != 0)
            return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                              "%s: COO entry %lld at (%lld, %lld) has the imaginary part %g; a %s "
                              "matrix cannot hold it (build a complex one)",
                              who, (long long)k, (long long)coo->row[k], (long long)coo->col[k],
                              coo->imag[k], bsrmv_type_name(type));
    return BSRMV_SUCCESS;
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

/* A finite value that the matrix type cannot hold is an error, not an
 * infinity; NaN and infinities in the COO pass through as they are. */
static bsrmv_status check_values(const bsrmv_coo *coo, bsrmv_type type, bool *all_finite)
{
    const double max = bsrmv_type_is_double(type) ? DBL_MAX : FLT_MAX;
    *all_finite = true;
    for (int64_t k = 0; k < coo->nnz; k++)
        for (int part = 0; part < 2; part++) {
            const double v = part ? coo_imag(coo, k) : coo->val[k];
            if (!isfinite(v))
                *all_finite = false;
            else if (fabs(v) > max)
                return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                                  "COO entry %lld at (%lld, %lld): value %g exceeds the float "
                                  "range",
                                  (long long)k, (long long)coo->row[k], (long long)coo->col[k], v);
        }
    return BSRMV_SUCCESS;
}

/* Finite entries whose sum (duplicates) overflowed the type.  reached
 * (NULL: none) marks the values that a NaN or infinity of the COO went
 * into, `per` consecutive values a mark: those pass through. */
static bsrmv_status check_sums(const bsrmv_matrix *A, const unsigned char *reached, int64_t per)
{
    const int parts = bsrmv_type_parts(A->type);
    const int64_t n = A->nnzb * A->bs * A->bs * parts;
    /* the first bad value, whichever thread finds it: the same message */
    int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n > CONVERT_PARALLEL_MIN)
    for (int64_t k = 0; k < n; k++)
        if (k < bad && !isfinite(bsrmv_part_get(A->val, A->type, k)) &&
            !(reached && reached[k / parts / per]))
            bad = k;
    if (bad < n)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "value %lld of block %lld overflows %s when the entries are "
                          "summed into blocks",
                          (long long)(bad / parts % ((int64_t)A->bs * A->bs)),
                          (long long)(bad / parts / ((int64_t)A->bs * A->bs)),
                          bsrmv_type_name(A->type));
    return BSRMV_SUCCESS;
}

/* Whether COO entry k holds a NaN or an infinity. */
static inline bool coo_nonfinite(const bsrmv_coo *coo, int64_t k)
{
    return !isfinite(coo->val[k]) || !isfinite(coo_imag(coo, k));
}

/* n zeroed marks, or NULL with *s set. */
static unsigned char *alloc_marks(int64_t n, bsrmv_status *s)
{
    unsigned char *m = bsrmv_calloc((size_t)(n > 0 ? n : 1), 1);
    if (!m)
        *s = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory checking %lld values", (long long)n);
    return m;
}

/* all_finite false: the COO holds NaN or infinities, whose blocks the sum
 * check passes over (the values they reached, not the whole matrix). */
static bsrmv_status split(bsrmv_matrix **A, const bsrmv_coo *coo, int bs, bsrmv_type type,
                          bsrmv_order order, bool all_finite)
{
    pattern p;
    bsrmv_status s = pattern_build(coo, bs, &p);
    if (s)
        return s;
    void *val;
    s = adopt_pattern(A, &p, bs, type, order, &val);
    const int64_t bs2 = (int64_t)bs * bs;
    unsigned char *reached = NULL;
    if (!s && !all_finite)
        reached = alloc_marks(p.nnzb * bs2, &s);
    if (!s) {
        for (int64_t k = 0; k < coo->nnz; k++) {
            const int64_t at =
                p.block_of[k] * bs2 + in_block(order, bs, coo->row[k] % bs, coo->col[k] % bs);
            add_value(val, type, at, coo->val[k], coo_imag(coo, k));
            if (reached && coo_nonfinite(coo, k))
                reached[at] = 1;
        }
        s = check_sums(*A, reached, 1);
    }
    bsrmv_free(reached);
    pattern_free(&p);
    return s;
}

static bsrmv_status promote(bsrmv_matrix **A, const bsrmv_coo *coo, int bs, bsrmv_type type,
                            bsrmv_order order, bool all_finite)
{
    int64_t t;
    if (!bsrmv_mul64(coo->m, bs, &t) || !bsrmv_mul64(coo->n, bs, &t))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "promoted matrix size overflows");
    pattern p;
    bsrmv_status s = pattern_build(coo, 1, &p);
    if (s)
        return s;
    /* (re, im) of every scalar entry, duplicates summed */
    double *scalar = bsrmv_calloc(2 * (size_t)(p.nnzb > 0 ? p.nnzb : 1), sizeof *scalar);
    void *val = NULL;
    if (!scalar) {
        pattern_free(&p);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory promoting %lld entries",
                          (long long)coo->nnz);
    }
    unsigned char *reached = NULL; /* a mark per block: its scalar entry */
    if (!all_finite)
        reached = alloc_marks(p.nnzb, &s);
    for (int64_t k = 0; !s && k < coo->nnz; k++) {
        scalar[2 * p.block_of[k]] += coo->val[k];
        scalar[2 * p.block_of[k] + 1] += coo_imag(coo, k);
        if (reached && coo_nonfinite(coo, k))
            reached[p.block_of[k]] = 1;
    }
    if (!s)
        s = adopt_pattern(A, &p, bs, type, order, &val);
    if (!s) {
        const int64_t bs2 = (int64_t)bs * bs;
#pragma omp parallel for schedule(static) if (p.nnzb * bs2 > CONVERT_PARALLEL_MIN)
        for (int64_t k = 0; k < p.nnzb; k++)
            for (int64_t e = 0; e < bs2; e++)
                add_value(val, type, k * bs2 + e, scalar[2 * k], scalar[2 * k + 1]);
        s = check_sums(*A, reached, bs2);
    }
    bsrmv_free(reached);
    bsrmv_free(scalar);
    pattern_free(&p);
    return s;
}

static bsrmv_status check_coo_args(const bsrmv_coo *coo, int bs, bsrmv_blocking how,
                                   bsrmv_type type, bsrmv_order order)
{
    if (coo->m < 0 || coo->n < 0 || coo->nnz < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "COO with negative size");
    if (coo->nnz > 0 && (!coo->row || !coo->col || !coo->val))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "COO with NULL arrays");
    if (bs < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "block size %d < 1", bs);
    if (bsrmv_type_size(type) == 0 || (order != BSRMV_COL_MAJOR && order != BSRMV_ROW_MAJOR))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown value type or block order");
    if (how != BSRMV_SPLIT && how != BSRMV_PROMOTE)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown blocking %d", (int)how);
    return BSRMV_SUCCESS;
}

static bsrmv_status build(bsrmv_matrix **A, const bsrmv_coo *coo, int bs, bsrmv_blocking how,
                          bsrmv_type type, bsrmv_order order, bool sym)
{
    bool all_finite;
    bsrmv_status s = check_real(coo, type, "bsrmv_matrix_from_coo");
    if (!s)
        s = check_values(coo, type, &all_finite);
    if (s)
        return s;
    s = how == BSRMV_SPLIT ? split(A, coo, bs, type, order, all_finite)
                           : promote(A, coo, bs, type, order, all_finite);
    if (s && *A) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
    }
    if (!s)
        (*A)->sym = sym;
    return s;
}

bsrmv_status bsrmv_matrix_from_coo(bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                   bsrmv_blocking how, bsrmv_type type, bsrmv_order order)
{
    if (!A || !coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_from_coo: NULL argument");
    *A = NULL;
    bsrmv_status s = check_coo_args(coo, bs, how, type, order);
    return s ? s : build(A, coo, bs, how, type, order, false);
}

/* Symmetric (herm: Hermitian) storage from one triangle of COO entries. */
static bsrmv_status from_coo_sym(const char *who, bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                 bsrmv_blocking how, bsrmv_type type, bsrmv_order order,
                                 bool herm)
{
    if (!A || !coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: NULL argument", who);
    *A = NULL;
    bsrmv_status s = check_coo_args(coo, bs, how, type, order);
    if (!s)
        s = check_real(coo, type, who);
    if (s)
        return s;
    const bool cplx = bsrmv_type_is_complex(type) && coo->imag;
    herm = herm && bsrmv_type_is_complex(type);
    if (herm && how != BSRMV_SPLIT)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "%s: Hermitian storage is built with BSRMV_SPLIT only", who);
    if (coo->m != coo->n)
        return bsrmv_fail(BSRMV_ERR_DIMENSION, "%s: %lld x %lld, not square", who,
                          (long long)coo->m, (long long)coo->n);
    /* The upper triangle, plus (split only) the mirror of every
     * off-diagonal entry that lands in a diagonal block, which is stored
     * whole. */
    int64_t lower = -1, upper = -1, extra = 0;
    for (int64_t k = 0; k < coo->nnz; k++) {
        const int64_t i = coo->row[k], j = coo->col[k];
        if (i > j && lower < 0)
            lower = k;
        if (i < j && upper < 0)
            upper = k;
        extra += how == BSRMV_SPLIT && i != j && i / bs == j / bs;
    }
    if (lower >= 0 && upper >= 0)
        return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                          "%s: entry %lld (%lld, %lld) is below the diagonal and entry %lld "
                          "(%lld, %lld) above it; give one triangle",
                          who, (long long)lower, (long long)coo->row[lower],
                          (long long)coo->col[lower], (long long)upper,
                          (long long)coo->row[upper], (long long)coo->col[upper]);
    bsrmv_coo *U;
    if ((s = cplx ? bsrmv_coo_create_complex(&U, coo->m, coo->n, coo->nnz + extra)
                  : bsrmv_coo_create(&U, coo->m, coo->n, coo->nnz + extra)))
        return s;
    /* Hermitian: an entry that moves across the diagonal is conjugated */
    const double flip = herm ? -1.0 : 1.0;
    int64_t e = 0;
    for (int64_t k = 0; k < coo->nnz; k++) {
        const int64_t i = coo->row[k], j = coo->col[k];
        U->row[e] = i < j ? i : j;
        U->col[e] = i < j ? j : i;
        if (cplx)
            U->imag[e] = i > j ? flip * coo->imag[k] : coo->imag[k];
        U->val[e++] = coo->val[k];
        if (how == BSRMV_SPLIT && i != j && i / bs == j / bs) {
            U->row[e] = U->col[e - 1];
            U->col[e] = U->row[e - 1];
            if (cplx)
                U->imag[e] = flip * U->imag[e - 1];
            U->val[e++] = coo->val[k];
        }
    }
    s = build(A, U, bs, how, type, order, true);
    bsrmv_coo_destroy(U);
    if (!s)
        (*A)->herm = herm;
    return s;
}

bsrmv_status bsrmv_matrix_from_coo_sym(bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                       bsrmv_blocking how, bsrmv_type type, bsrmv_order order)
{
    return from_coo_sym("bsrmv_matrix_from_coo_sym", A, coo, bs, how, type, order, false);
}

bsrmv_status bsrmv_matrix_from_coo_herm(bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                        bsrmv_blocking how, bsrmv_type type,
                                        bsrmv_order order)
{
    return from_coo_sym("bsrmv_matrix_from_coo_herm", A, coo, bs, how, type, order, true);
}

bsrmv_status bsrmv_matrix_from_csr(bsrmv_matrix **A, int64_t m, int64_t n,
                                   const int64_t *row_ptr, const int64_t *col_idx,
                                   const double *val, int bs, bsrmv_blocking how,
                                   bsrmv_type type, bsrmv_order order)
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
    int64_t *rows = bsrmv_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *rows);
    if (!rows)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory converting CSR");
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
            rows[k] = i;
    bsrmv_coo view = {m, n, nnz, rows, (int64_t *)col_idx, (double *)val, NULL};
    bsrmv_status s = bsrmv_matrix_from_coo(A, &view, bs, how, type, order);
    bsrmv_free(rows);
    return s;
}

/* The factor of entry (r, c) of block k: indexed by (block, r, c), not by
 * storage position, so both block orders hold the same matrix. */
static double perturbation(uint64_t seed, int64_t k, int64_t bs, int64_t r, int64_t c)
{
    const double u = 2.0 * bsrmv_hash01(seed, (uint64_t)((k * bs + r) * bs + c)) - 1.0;
    return 1.0 + 0.25 * u;
}

bsrmv_status bsrmv_matrix_perturb_promoted(bsrmv_matrix *A, uint64_t seed)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_perturb_promoted: NULL matrix");
    if (!A->owns)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "bsrmv_matrix_perturb_promoted: the matrix "
                          "wraps the caller's arrays; it changes only library-owned values");
    const int64_t bs = A->bs, bs2 = bs * bs;
    const bool dbl = bsrmv_type_is_double(A->type);
    const int parts = bsrmv_type_parts(A->type);
    /* First every new value is checked, so a failure changes nothing.  In
     * symmetric storage a diagonal block stays symmetric: (r, c) and
     * (c, r) get the same factor.  Both parts of a complex value get the
     * same factor.  Threads take block rows; the first value that would
     * overflow (the lowest position) is the one reported. */
    const int64_t per = bs2 * parts, n = A->nnzb * per;
    int64_t bad = n;
    for (int pass = 0; pass < 2 && bad == n; pass++) {
#pragma omp parallel for schedule(dynamic, 256) reduction(min : bad) if (n > CONVERT_PARALLEL_MIN)
        for (int64_t i = 0; i < A->mb; i++)
            for (int64_t k = bsrmv_row_start(A, i); k < bsrmv_row_start(A, i + 1); k++)
                for (int64_t e = 0; e < per; e++) {
                    const int64_t r = e / parts / bs, c = e / parts % bs;
                    const bool mirror = A->sym && A->col_idx[k] == i && r > c;
                    const int64_t at = (k * bs2 + in_block(A->order, bs, r, c)) * parts + e % parts;
                    const double v = bsrmv_part_get(A->val, A->type, at);
                    const double w = v * perturbation(seed, k, bs, mirror ? c : r, mirror ? r : c);
                    if (pass == 1)
                        bsrmv_part_set((void *)A->val, A->type, at, w);
                    else if (isfinite(v) && !isfinite(dbl ? w : (double)(float)w) && k * per + e < bad)
                        bad = k * per + e;
                }
    }
    if (bad < n) {
        const int64_t k = bad / per, e = bad % per;
        const int64_t at = (k * bs2 + in_block(A->order, bs, e / parts / bs, e / parts % bs)) * parts + e % parts;
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "bsrmv_matrix_perturb_promoted: %g times up to 1.25 overflows %s (block %lld)",
                          bsrmv_part_get(A->val, A->type, at), dbl ? "double" : "float", (long long)k);
    }
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_to_coo(const bsrmv_matrix *A, bsrmv_coo **coo)
{
    if (!A || !coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_to_coo: NULL argument");
    const int64_t bs = A->bs, bs2 = bs * bs;
    /* Symmetric storage: every block above the diagonal stands for two. */
    int64_t blocks = A->nnzb;
    for (int64_t i = 0; A->sym && i < A->mb; i++)
        for (int64_t k = bsrmv_row_start(A, i); k < bsrmv_row_start(A, i + 1); k++)
            blocks += A->col_idx[k] != i;
    const bool cplx = bsrmv_type_is_complex(A->type);
    bsrmv_status s = cplx ? bsrmv_coo_create_complex(coo, A->mb * bs, A->nb * bs, blocks * bs2)
                          : bsrmv_coo_create(coo, A->mb * bs, A->nb * bs, blocks * bs2);
    if (s)
        return s;
    bsrmv_coo *C = *coo;
    int64_t e = 0;
    for (int64_t i = 0; i < A->mb; i++)
        for (int64_t k = bsrmv_row_start(A, i); k < bsrmv_row_start(A, i + 1); k++) {
            const int64_t j = A->col_idx[k];
            const bool mirror = A->sym && j != i;
            for (int64_t r = 0; r < bs; r++)
                for (int64_t c = 0; c < bs; c++) {
                    const int64_t at = (k * bs2 + in_block(A->order, bs, r, c)) * (cplx ? 2 : 1);
                    const double v = bsrmv_part_get(A->val, A->type, at);
                    const double im = cplx ? bsrmv_part_get(A->val, A->type, at + 1) : 0.0;
                    C->row[e] = i * bs + r;
                    C->col[e] = j * bs + c;
                    if (cplx)
                        C->imag[e] = im;
                    C->val[e++] = v;
                    if (mirror) {
                        C->row[e] = j * bs + c;
                        C->col[e] = i * bs + r;
                        if (cplx)
                            C->imag[e] = A->herm ? -im : im;
                        C->val[e++] = v;
                    }
                }
        }
    return BSRMV_SUCCESS;
}
