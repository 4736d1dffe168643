/* The BSR matrix handle: creation by copy or wrap, queries, destruction. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bsrmv_status bsrmv_matrix_shell(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                int64_t nnzb, bsrmv_type type, bsrmv_order order)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "matrix handle pointer is NULL");
    *A = NULL;
    if (bsrmv_type_size(type) == 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown value type %d", (int)type);
    if (order != BSRMV_COL_MAJOR && order != BSRMV_ROW_MAJOR)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown block order %d", (int)order);
    if (bs < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "block size %d < 1", bs);
    if (mb < 0 || nb < 0 || nnzb < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "negative size (mb %lld, nb %lld, nnzb %lld)",
                          (long long)mb, (long long)nb, (long long)nnzb);
    int64_t t;
    size_t bytes;
    if (nb > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%lld block columns do not fit 32-bit col_idx",
                          (long long)nb);
    if (!bsrmv_mul64(mb, bs, &t) || !bsrmv_mul64(nb, bs, &t) ||
        !bsrmv_mul64(nnzb, (int64_t)bs * bs, &t) ||
        !bsrmv_bytes(t, bsrmv_type_size(type), &bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "sizes overflow 64 bits (mb %lld, nb %lld, nnzb %lld, bs %d)",
                          (long long)mb, (long long)nb, (long long)nnzb, bs);
    bsrmv_matrix *M = bsrmv_calloc(1, sizeof *M);
    if (!M)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the matrix handle");
    M->mb = mb;
    M->nb = nb;
    M->nnzb = nnzb;
    M->bs = bs;
    M->type = type;
    M->vtype = type;
    M->order = order;
    M->cpu_kernel = BSRMV_CPU_AUTO;
    *A = M;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_alloc_arrays(bsrmv_matrix *A, int64_t **row_ptr,
                                       int32_t **col_idx, void **val)
{
    size_t rp_bytes, ci_bytes, v_bytes;
    /* Sizes were checked by the shell; these cannot overflow int64, but
     * size_t may be narrower on 32-bit hosts. */
    if (!bsrmv_bytes(A->mb + 1, sizeof(int64_t), &rp_bytes) ||
        !bsrmv_bytes(A->nnzb, sizeof(int32_t), &ci_bytes) ||
        !bsrmv_bytes(A->nnzb * A->bs * A->bs, bsrmv_type_size(A->type), &v_bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "matrix too large for this host");
    int64_t *rp = bsrmv_big_alloc(rp_bytes);
    int32_t *ci = bsrmv_big_alloc(ci_bytes);
    void *v = bsrmv_big_alloc(v_bytes);
    if (!rp || !ci || !v) {
        bsrmv_big_free(rp);
        bsrmv_big_free(ci);
        bsrmv_big_free(v);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for a matrix of %.3g GB",
                          (double)(rp_bytes + ci_bytes + v_bytes) * 1e-9);
    }
    A->row_ptr = rp;
    A->col_idx = ci;
    A->val = v;
    A->owns = true;
    *row_ptr = rp;
    *col_idx = ci;
    *val = v;
    return BSRMV_SUCCESS;
}

/* One of rp64, rp32 is the caller's row_ptr; a copy keeps its width. */
static bsrmv_status create(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs, int64_t nnzb,
                           const int64_t *rp64, const int32_t *rp32, const int32_t *col_idx,
                           const void *val, bsrmv_type type, bsrmv_order order, bool copy,
                           bsrmv_symmetry sym)
{
    bsrmv_status s = bsrmv_matrix_shell(A, mb, nb, bs, nnzb, type, order);
    if (s)
        return s;
    if ((!rp64 && !rp32) || (nnzb > 0 && (!col_idx || !val))) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "NULL BSR array");
    }
    s = rp64 ? bsrmv_check_bsr(mb, nb, bs, nnzb, rp64, col_idx, NULL)
             : bsrmv_check_bsr_i32(mb, nb, bs, nnzb, rp32, col_idx, NULL);
    /* Sorted columns: the first block of a row is its leftmost.  Symmetric
     * storage comes with a 64-bit row_ptr only. */
    for (int64_t i = 0; sym && !s && i < mb; i++)
        if (rp64[i + 1] > rp64[i] && col_idx[rp64[i]] < i)
            s = bsrmv_fail(BSRMV_ERR_STRUCTURE,
                           "symmetric storage: block (%lld, %d) is below the diagonal; only "
                           "the diagonal and upper blocks are stored",
                           (long long)i, col_idx[rp64[i]]);
    if (s) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return s;
    }
    bsrmv_matrix *M = *A;
    M->sym = sym != BSRMV_SYM_NONE;
    M->herm = sym == BSRMV_SYM_HERMITIAN && bsrmv_type_is_complex(type);
    if (!copy) {
        M->row_ptr = rp64;
        M->row_ptr32 = rp32;
        M->col_idx = col_idx;
        M->val = val;
        return BSRMV_SUCCESS;
    }
    int64_t *rp;
    int32_t *ci;
    void *v;
    s = bsrmv_matrix_alloc_arrays(M, &rp, &ci, &v);
    if (s) {
        bsrmv_matrix_destroy(M);
        *A = NULL;
        return s;
    }
    /* A 32-bit row_ptr is copied into the front of the int64 array, which
     * the matrix then reads as int32 (and frees as before). */
    const size_t rp_width = rp64 ? sizeof *rp64 : sizeof *rp32;
    memcpy(rp, rp64 ? (const void *)rp64 : (const void *)rp32, (size_t)(mb + 1) * rp_width);
    if (!rp64) {
        M->row_ptr32 = (const int32_t *)rp;
        M->row_ptr = NULL;
    }
    if (nnzb > 0) {
        memcpy(ci, col_idx, (size_t)nnzb * sizeof *ci);
        memcpy(v, val, (size_t)(nnzb * bs * bs) * bsrmv_type_size(type));
    }
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_create(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                 int64_t nnzb, const int64_t *row_ptr,
                                 const int32_t *col_idx, const void *val,
                                 bsrmv_type type, bsrmv_order order)
{
    return create(A, mb, nb, bs, nnzb, row_ptr, NULL, col_idx, val, type, order,
                  true, BSRMV_SYM_NONE);
}

bsrmv_status bsrmv_matrix_wrap(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                               int64_t nnzb, const int64_t *row_ptr,
                               const int32_t *col_idx, const void *val,
                               bsrmv_type type, bsrmv_order order)
{
    return create(A, mb, nb, bs, nnzb, row_ptr, NULL, col_idx, val, type, order,
                  false, BSRMV_SYM_NONE);
}

bsrmv_status bsrmv_matrix_create_i32(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                     int64_t nnzb, const int32_t *row_ptr,
                                     const int32_t *col_idx, const void *val,
                                     bsrmv_type type, bsrmv_order order)
{
    return create(A, mb, nb, bs, nnzb, NULL, row_ptr, col_idx, val, type, order,
                  true, BSRMV_SYM_NONE);
}

bsrmv_status bsrmv_matrix_wrap_i32(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                   int64_t nnzb, const int32_t *row_ptr,
                                   const int32_t *col_idx, const void *val,
                                   bsrmv_type type, bsrmv_order order)
{
    return create(A, mb, nb, bs, nnzb, NULL, row_ptr, col_idx, val, type, order,
                  false, BSRMV_SYM_NONE);
}

bsrmv_status bsrmv_matrix_create_sym(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                     const int64_t *row_ptr, const int32_t *col_idx,
                                     const void *val, bsrmv_type type, bsrmv_order order)
{
    return create(A, nb, nb, bs, nnzb, row_ptr, NULL, col_idx, val, type, order, true,
                  BSRMV_SYM_SYMMETRIC);
}

bsrmv_status bsrmv_matrix_wrap_sym(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                   const int64_t *row_ptr, const int32_t *col_idx,
                                   const void *val, bsrmv_type type, bsrmv_order order)
{
    return create(A, nb, nb, bs, nnzb, row_ptr, NULL, col_idx, val, type, order, false,
                  BSRMV_SYM_SYMMETRIC);
}

bsrmv_status bsrmv_matrix_create_herm(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                      const int64_t *row_ptr, const int32_t *col_idx,
                                      const void *val, bsrmv_type type, bsrmv_order order)
{
    return create(A, nb, nb, bs, nnzb, row_ptr, NULL, col_idx, val, type, order, true,
                  BSRMV_SYM_HERMITIAN);
}

bsrmv_status bsrmv_matrix_wrap_herm(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                    const int64_t *row_ptr, const int32_t *col_idx,
                                    const void *val, bsrmv_type type, bsrmv_order order)
{
    return create(A, nb, nb, bs, nnzb, row_ptr, NULL, col_idx, val, type, order, false,
                  BSRMV_SYM_HERMITIAN);
}

void bsrmv_matrix_destroy(bsrmv_matrix *A)
{
    if (!A)
        return;
    if (A->owns) {
        bsrmv_big_free(A->row_ptr ? (void *)A->row_ptr : (void *)A->row_ptr32);
        bsrmv_big_free((void *)A->col_idx);
        bsrmv_big_free((void *)A->val);
    }
    bsrmv_free(A);
}

bsrmv_status bsrmv_matrix_get_info(const bsrmv_matrix *A, bsrmv_matrix_info *info)
{
    if (!A || !info)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_get_info: NULL argument");
    memset(info, 0, sizeof *info);
    info->mb = A->mb;
    info->nb = A->nb;
    info->nnzb = A->nnzb;
    info->bs = A->bs;
    info->type = A->type;
    info->vector_type = A->vtype;
    info->order = A->order;
    info->rows = A->mb * A->bs;
    info->cols = A->nb * A->bs;
    info->owns_arrays = A->owns;
    info->symmetric = !A->sym ? BSRMV_SYM_NONE : A->herm ? BSRMV_SYM_HERMITIAN : BSRMV_SYM_SYMMETRIC;
    info->index = A->row_ptr ? BSRMV_INDEX_64 : BSRMV_INDEX_32;
    int64_t lo = A->mb > 0 ? INT64_MAX : 0, hi = 0, empty = 0;
    for (int64_t i = 0; i < A->mb; i++) {
        int64_t len = bsrmv_row_start(A, i + 1) - bsrmv_row_start(A, i);
        lo = len < lo ? len : lo;
        hi = len > hi ? len : hi;
        empty += len == 0;
    }
    info->row_len_min = lo;
    info->row_len_max = hi;
    info->row_len_mean = A->mb > 0 ? (double)A->nnzb / (double)A->mb : 0.0;
    info->empty_rows = empty;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_arrays(const bsrmv_matrix *A, const int64_t **row_ptr,
                                 const int32_t **col_idx, const void **val)
{
    if (!A || !row_ptr || !col_idx || !val)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_arrays: NULL argument");
    if (!A->row_ptr)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "bsrmv_matrix_arrays: the matrix has a 32-bit "
                          "row_ptr (bsrmv_matrix_arrays_i32 returns it)");
    *row_ptr = A->row_ptr;
    *col_idx = A->col_idx;
    *val = A->val;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_arrays_i32(const bsrmv_matrix *A, const int32_t **row_ptr,
                                     const int32_t **col_idx, const void **val)
{
    if (!A || !row_ptr || !col_idx || !val)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_arrays_i32: NULL argument");
    if (!A->row_ptr32)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "bsrmv_matrix_arrays_i32: the matrix has a "
                          "64-bit row_ptr (bsrmv_matrix_arrays returns it)");
    *row_ptr = A->row_ptr32;
    *col_idx = A->col_idx;
    *val = A->val;
    return BSRMV_SUCCESS;
}

double bsrmv_matrix_spmv_bytes(const bsrmv_matrix *A)
{
    if (!A)
        return 0.0;
    const double ts = (double)bsrmv_type_size(A->type), vs = (double)bsrmv_type_size(A->vtype);
    return (double)A->nnzb * A->bs * A->bs * ts + (double)A->nnzb * sizeof(int32_t) +
           (double)(A->mb + 1) * (A->row_ptr ? sizeof(int64_t) : sizeof(int32_t)) +
           (double)A->nb * A->bs * vs +
           (double)A->mb * A->bs * vs;
}

bsrmv_status bsrmv_matrix_set_vector_type(bsrmv_matrix *A, bsrmv_type vector_type)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_set_vector_type: NULL matrix");
    if (bsrmv_type_size(vector_type) == 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown vector type %d", (int)vector_type);
    if ((bsrmv_type_is_complex(A->type) || bsrmv_type_is_complex(vector_type)) &&
        vector_type != A->type)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "mixed precision is built for real types only (%s values with %s "
                          "vectors)",
                          bsrmv_type_name(A->type), bsrmv_type_name(vector_type));
    if (A->type == BSRMV_DOUBLE && vector_type == BSRMV_FLOAT)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "double values with float vectors are not built (the pairs are "
                          "float/float, double/double and float/double)");
    A->vtype = vector_type;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_convert(bsrmv_matrix **B, const bsrmv_matrix *A, bsrmv_type type)
{
    if (!B)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_convert: NULL handle pointer");
    *B = NULL;
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_convert: NULL matrix");
    if (bsrmv_type_size(type) == 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_convert: unknown type %d", (int)type);
    if (bsrmv_type_is_complex(A->type) && !bsrmv_type_is_complex(type))
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "bsrmv_matrix_convert: %s to %s would drop the imaginary parts",
                          bsrmv_type_name(A->type), bsrmv_type_name(type));
    /* Converted component by component: a real source gives zero
     * imaginary parts. */
    const int pa = bsrmv_type_parts(A->type), pb = bsrmv_type_parts(type);
    const int64_t n = A->nnzb * A->bs * A->bs;
    if (bsrmv_type_is_double(A->type) && !bsrmv_type_is_double(type))
        for (int64_t k = 0; k < n * pa; k++) {
            const double v = ((const double *)A->val)[k];
            if (isfinite(v) && isinf((float)v))
                return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                                  "bsrmv_matrix_convert: value %g (entry %lld) is beyond float",
                                  v, (long long)(k / pa));
        }
    bsrmv_matrix *M;
    bsrmv_status s = bsrmv_matrix_shell(&M, A->mb, A->nb, A->bs, A->nnzb, type, A->order);
    if (s)
        return s;
    int64_t *rp;
    int32_t *ci;
    void *v;
    if ((s = bsrmv_matrix_alloc_arrays(M, &rp, &ci, &v))) {
        bsrmv_matrix_destroy(M);
        return s;
    }
    /* The same row_ptr width (a 32-bit one at the front of the int64
     * array, as create() keeps it) and the same storage. */
    if (A->row_ptr) {
        memcpy(rp, A->row_ptr, (size_t)(A->mb + 1) * sizeof *rp);
    } else {
        memcpy(rp, A->row_ptr32, (size_t)(A->mb + 1) * sizeof *A->row_ptr32);
        M->row_ptr32 = (const int32_t *)rp;
        M->row_ptr = NULL;
    }
    M->sym = A->sym;
    M->herm = A->herm;
    if (A->nnzb > 0)
        memcpy(ci, A->col_idx, (size_t)A->nnzb * sizeof *ci);
#pragma omp parallel for schedule(static) if (n > 1000000)
    for (int64_t k = 0; k < n; k++)
        for (int c = 0; c < pb; c++)
            bsrmv_part_set(v, type, k * pb + c,
                           c < pa ? bsrmv_part_get(A->val, A->type, k * pa + c) : 0.0);
    M->cpu_kernel = A->cpu_kernel;
    *B = M;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_matrix_set_cpu_kernel(bsrmv_matrix *A, bsrmv_cpu_kernel k)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_matrix_set_cpu_kernel: NULL matrix");
    if (k != BSRMV_CPU_AUTO && k != BSRMV_CPU_GENERIC)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown CPU kernel %d", (int)k);
    A->cpu_kernel = k;
    return BSRMV_SUCCESS;
}
