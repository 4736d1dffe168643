/* One source for every CPU SpMV kernel variant.  spmv.c includes it once
 * per value type with T (the type) and SUF (a name suffix) defined.  The
 * block size, block order, unroll depth and row_ptr width reach the
 * always_inline bodies as arguments that are compile-time constants in
 * every specialised caller, so -O3 unrolls the block loops and vectorises
 * them for that size, and each width gets its own loop (no per-row
 * switch); the generic caller passes a runtime bs and gets the same loops
 * unspecialised. */

#include "template_defs.h"

/* acc[r] += sum_c A(r,c) * xb[c] for one block. */
INLINE void FN(block_n)(const int bs, const bsrmv_order order, T *restrict acc,
                        const T *restrict a, const T *restrict xb)
{
    if (order == BSRMV_COL_MAJOR) {
        /* Eberhardt & Hoemmen's Algorithm 1: stream val down each column.
         * Unrolling all columns of a 16x16 or larger block made GCC's code
         * slower than the runtime-bs loop; 8 keeps small blocks whole. */
#pragma GCC unroll 8
        for (int c = 0; c < bs; c++) {
            const T xc = xb[c];
#pragma omp simd
            for (int r = 0; r < bs; r++)
                acc[r] += a[c * bs + r] * xc;
        }
    } else {
        for (int r = 0; r < bs; r++) {
            T s = 0;
#pragma omp simd reduction(+ : s)
            for (int c = 0; c < bs; c++)
                s += a[r * bs + c] * xb[c];
            acc[r] += s;
        }
    }
}

/* acc[0..bs) = the blocks [k, k1) of one row times x.  U independent
 * accumulator sets take consecutive blocks so that small blocks are not
 * limited by the latency of one chain of FMAs; acc holds U*bs values. */
INLINE void FN(row_sum)(const int bs, const int U, const bsrmv_order order, int64_t k,
                        const int64_t k1, const int32_t *restrict ci, const T *restrict val,
                        const T *restrict x, T *restrict acc)
{
    const int64_t bs2 = (int64_t)bs * bs;
    for (int j = 0; j < U * bs; j++)
        acc[j] = 0;
    if (bs == 1) {
        /* Scalar CSR: a gathered dot product vectorises across blocks. */
        T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int64_t q = k;
        for (; q + 4 <= k1; q += 4) {
            s0 += val[q] * x[ci[q]];
            s1 += val[q + 1] * x[ci[q + 1]];
            s2 += val[q + 2] * x[ci[q + 2]];
            s3 += val[q + 3] * x[ci[q + 3]];
        }
        for (; q < k1; q++)
            s0 += val[q] * x[ci[q]];
        acc[0] = (s0 + s1) + (s2 + s3);
        return;
    }
    for (; k + U <= k1; k += U)
        for (int u = 0; u < U; u++)
            FN(block_n)(bs, order, acc + u * bs, val + (k + u) * bs2,
                        x + (int64_t)ci[k + u] * bs);
    for (; k < k1; k++)
        FN(block_n)(bs, order, acc, val + k * bs2, x + (int64_t)ci[k] * bs);
    for (int u = 1; u < U; u++)
        for (int r = 0; r < bs; r++)
            acc[r] += acc[u * bs + r];
}

/* row_ptr[i] of the width W64 (1: rp64, 0: rp32) names. */
#define RP_(i) (W64 ? rp64[i] : (int64_t)rp32[i])

/* y rows [r0, r1) = alpha * (A x) + beta * y; acc holds U*bs values. */
INLINE void FN(rows_n)(const int bs, const int U, const bsrmv_order order, int64_t r0,
                       int64_t r1, const int W64, const int64_t *restrict rp64,
                       const int32_t *restrict rp32, const int32_t *restrict ci,
                       const T *restrict val, const T *restrict x, T alpha, T beta,
                       T *restrict y, T *restrict acc)
{
    for (int64_t i = r0; i < r1; i++) {
        FN(row_sum)(bs, U, order, RP_(i), RP_(i + 1), ci, val, x, acc);
        T *yi = y + i * bs;
        /* beta == 0 must not read y: NaN there would survive 0*NaN. */
        if (beta == 0)
            for (int r = 0; r < bs; r++)
                yi[r] = alpha * acc[r];
        else
            for (int r = 0; r < bs; r++)
                yi[r] = alpha * acc[r] + beta * yi[r];
    }
}

/* yt += (the blocks from cut c0 to cut c1)^T x: each block scatters into
 * its block column, so a partial row needs nothing beyond the reduction
 * of the per-thread yt. */
INLINE void FN(rows_t)(const int bs, const bsrmv_order order, bsrmv_cut c0, bsrmv_cut c1,
                       const int W64, const int64_t *restrict rp64,
                       const int32_t *restrict rp32, const int32_t *restrict ci,
                       const T *restrict val, const T *restrict x, T *restrict yt)
{
    const int64_t bs2 = (int64_t)bs * bs;
    const int64_t r1 = c1.blk > RP_(c1.row) ? c1.row + 1 : c1.row;
    for (int64_t i = c0.row; i < r1; i++) {
        const T *xi = x + i * bs;
        const int64_t k0 = RP_(i) > c0.blk ? RP_(i) : c0.blk;
        const int64_t k1 = RP_(i + 1) < c1.blk ? RP_(i + 1) : c1.blk;
        for (int64_t k = k0; k < k1; k++) {
            const T *a = val + k * bs2;
            T *yj = yt + (int64_t)ci[k] * bs;
            if (order == BSRMV_COL_MAJOR) {
                for (int c = 0; c < bs; c++) {
                    T s = 0;
#pragma omp simd reduction(+ : s)
                    for (int r = 0; r < bs; r++)
                        s += a[c * bs + r] * xi[r];
                    yj[c] += s;
                }
            } else {
                for (int r = 0; r < bs; r++) {
                    const T xr = xi[r];
                    for (int c = 0; c < bs; c++)
                        yj[c] += a[r * bs + c] * xr;
                }
            }
        }
    }
}

#undef RP_

/* Entry points with a uniform signature for the dispatch tables. */
#define ARGS_N                                                                          \
    int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A, const void *x, double alpha, \
        double beta, void *y
#define PASS_N(BS, U, ORDER, W64, ACC)                                                  \
    FN(rows_n)(BS, U, ORDER, r0, r1, W64, A->row_ptr, A->row_ptr32, A->col_idx,         \
               (const T *)A->val, (const T *)x, (T)alpha, (T)beta, (T *)y, ACC)
#define ARGS_P int bs, int64_t k0, int64_t k1, const bsrmv_matrix *A, const void *x, void *out
#define PASS_P(BS, U, ORDER, ACC)                                                       \
    FN(row_sum)(BS, U, ORDER, k0, k1, A->col_idx, (const T *)A->val, (const T *)x, ACC); \
    memcpy(out, ACC, (size_t)(BS) * sizeof(T))
#define ARGS_T                                                                          \
    int bs, bsrmv_cut c0, bsrmv_cut c1, const bsrmv_matrix *A, const void *x, void *yt
#define PASS_T(BS, ORDER, W64)                                                          \
    FN(rows_t)(BS, ORDER, c0, c1, W64, A->row_ptr, A->row_ptr32, A->col_idx,            \
               (const T *)A->val, (const T *)x, (T *)yt)

/* The kernels that walk row_ptr, for one width: W64 1 (64-bit), 0 (32-bit);
 * RW names it.  NAME is the block size's name, B the block size (constant,
 * or the runtime bs of the generic set), U the unroll depth, AL the
 * accumulators' alignment (none for the generic set's variable array). */
#define KERNELS_RP(NAME, B, U, AL, W64, RW)                                             \
    KERNEL void FN(n_col_##NAME##_##RW)(ARGS_N)                                         \
    {                                                                                   \
        AL T acc[(U) * (B)];                                                            \
        PASS_N(B, U, BSRMV_COL_MAJOR, W64, acc);                                        \
    }                                                                                   \
    KERNEL void FN(n_row_##NAME##_##RW)(ARGS_N)                                         \
    {                                                                                   \
        AL T acc[(U) * (B)];                                                            \
        PASS_N(B, U, BSRMV_ROW_MAJOR, W64, acc);                                        \
    }                                                                                   \
    KERNEL void FN(t_col_##NAME##_##RW)(ARGS_T) { PASS_T(B, BSRMV_COL_MAJOR, W64); }    \
    KERNEL void FN(t_row_##NAME##_##RW)(ARGS_T) { PASS_T(B, BSRMV_ROW_MAJOR, W64); }
#define KERNELS(NAME, B, U, AL)                                                         \
    KERNELS_RP(NAME, B, U, AL, 1, 64)                                                   \
    KERNELS_RP(NAME, B, U, AL, 0, 32)                                                   \
    KERNEL void FN(p_col_##NAME)(ARGS_P)                                                \
    {                                                                                   \
        AL T acc[(U) * (B)];                                                            \
        PASS_P(B, U, BSRMV_COL_MAJOR, acc);                                             \
    }                                                                                   \
    KERNEL void FN(p_row_##NAME)(ARGS_P)                                                \
    {                                                                                   \
        AL T acc[(U) * (B)];                                                            \
        PASS_P(B, U, BSRMV_ROW_MAJOR, acc);                                             \
    }

/* Specialised: bs and the unroll depth are constants. */
#define SPECIALISE(B) KERNELS(B, B, UNROLL_FOR(B), _Alignas(64))
BSRMV_CPU_BLOCK_SIZES(SPECIALISE)
#undef SPECIALISE
/* Generic: any bs, one accumulator set (the plain triple loop). */
KERNELS(any, bs, 1, )

#define ENTRY_(NAME, B)                                                                 \
    {B,                                                                                 \
     {{FN(n_col_##NAME##_64), FN(n_row_##NAME##_64)},                                   \
      {FN(n_col_##NAME##_32), FN(n_row_##NAME##_32)}},                                  \
     {FN(p_col_##NAME), FN(p_row_##NAME)},                                              \
     {{FN(t_col_##NAME##_64), FN(t_row_##NAME##_64)},                                   \
      {FN(t_col_##NAME##_32), FN(t_row_##NAME##_32)}}}
#define ENTRY(B) ENTRY_(B, B),
static const kernel_set FN(specialised)[] = {BSRMV_CPU_BLOCK_SIZES(ENTRY)};
static const kernel_set FN(generic) = ENTRY_(any, 0);
#undef ENTRY
#undef ENTRY_
#undef KERNELS
#undef KERNELS_RP

/* y = beta * y over [j0, j1), never reading y when beta == 0. */
static void FN(scale)(int64_t j0, int64_t j1, double beta, void *yv)
{
    T *y = yv;
    const T b = (T)beta;
    if (beta == 0)
        for (int64_t j = j0; j < j1; j++)
            y[j] = 0;
    else
        for (int64_t j = j0; j < j1; j++)
            y[j] *= b;
}

/* y[j] = alpha * sum_q bufs[q][j] + beta * y[j] over [j0, j1). */
static void FN(reduce)(int64_t j0, int64_t j1, int nbuf, int64_t stride, const void *bufv,
                       double alpha, double beta, void *yv)
{
    const T *buf = bufv;
    T *y = yv;
    const T a = (T)alpha, b = (T)beta;
    for (int64_t j = j0; j < j1; j++) {
        T s = 0;
        for (int q = 0; q < nbuf; q++)
            s += buf[q * stride + j];
        y[j] = beta == 0 ? a * s : a * s + b * y[j];
    }
}

/* The rows cut between threads: y[row[s]] = alpha * (sum of the partial
 * sums part[s] of that row) + beta * y[row[s]], over the n slots in thread
 * order (row < 0: unused slot).  The slots of one row are consecutive
 * apart from unused ones, and the sum runs in slot order, so the result
 * does not depend on timing. */
static void FN(fixup)(int n, const int64_t *row, const void *partv, int bs, double alpha,
                      double beta, void *yv)
{
    const T *part = partv;
    T *y = yv;
    const T a = (T)alpha, b = (T)beta;
    for (int s = 0; s < n;) {
        if (row[s] < 0) {
            s++;
            continue;
        }
        int e = s + 1;
        while (e < n && (row[e] < 0 || row[e] == row[s]))
            e++;
        T *yi = y + row[s] * bs;
        for (int r = 0; r < bs; r++) {
            T sum = 0;
            for (int q = s; q < e; q++)
                if (row[q] == row[s])
                    sum += part[(int64_t)q * bs + r];
            yi[r] = beta == 0 ? a * sum : a * sum + b * yi[r];
        }
        s = e;
    }
}

static const vector_ops FN(vops) = {FN(scale), FN(reduce), FN(fixup)};

#undef ARGS_N
#undef PASS_N
#undef ARGS_P
#undef PASS_P
#undef ARGS_T
#undef PASS_T
