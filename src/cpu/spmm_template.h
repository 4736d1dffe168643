/* One source for every CPU SpMM kernel variant.  spmm_<type>.c includes
 * it once per (value, vector) type pair with V (the matrix values' type),
 * T (the vectors' and sums' type) and SUF (a name suffix) defined, and
 * for the complex types CONJ(v) (the conjugate of a value of T).  Block
 * size, chunk width (vectors per pass) and block order reach the always_inline
 * bodies as arguments that are compile-time constants in the specialised
 * callers, so -O3 unrolls the block loops, keeps the bs*K sums in
 * registers and vectorises across the chunk's vectors; the generic-bs
 * callers pass a runtime bs and get the same loops unspecialised.  Op N
 * has no runtime-width kernel: with K unknown the sums stayed in memory,
 * and at bs 3 one such pass took longer than the passes of the
 * compile-time widths that add up to K (k = 3: 1.7 to 4.2 times 2 + 1). */

#include "template_defs.h"

#include <string.h>

/* A value of the matrix as a product uses it: conjugated where `on` (the
 * chunk's cj bits), for the complex types only. */
#ifdef CONJ
#define CJ_(on, v) ((on) ? CONJ(v) : (v))
#else
#define CJ_(on, v) ((void)(on), (v))
#endif

/* Offset of entry (i, j) of a multivector with leading dimension ld. */
#define AT(lay, i, j, ld) ((lay) == BSRMV_LAYOUT_ROW ? (i) * (ld) + (j) : (i) + (j) * (ld))

/* v[0..K) = the K entries of row i of a multivector: contiguous in the
 * row-major layout, ld apart in the column-major one.  The layout is a
 * runtime argument (the copy is K loads per bs*K multiply-adds), which
 * halves the kernels to compile. */
INLINE void FN(load_row)(const int K, const bsrmv_layout lay, const T *restrict M, int64_t i,
                         int64_t ld, T *restrict v)
{
    if (lay == BSRMV_LAYOUT_ROW) {
        const T *m = M + i * ld;
        for (int j = 0; j < K; j++)
            v[j] = m[j];
    } else {
        const T *m = M + i;
        for (int j = 0; j < K; j++)
            v[j] = m[j * ld];
    }
}

/* row_ptr[i] of either width: one predictable branch per block row, beside
 * the per-row branches on beta and the layout.  At bs 1 (the sensitive
 * case, k = 1 and 4) it timed within the noise of the 64-bit-only code, so
 * the SpMM kernels, the largest part of the build, are not doubled for
 * the width as the SpMV ones are. */
#define RP_(i) (rp64 ? rp64[i] : (int64_t)rp32[i])

/* The rows of X of block column j, K consecutive values each, *xs apart:
 * in place in the row-major layout, gathered into xt in the column-major
 * one. */
INLINE const T *FN(x_rows)(const int bs, const int K, const bsrmv_layout xlay,
                           const T *restrict X, const int64_t ldx, const int64_t j,
                           T *restrict xt, int64_t *xs)
{
    if (xlay == BSRMV_LAYOUT_COL) {
        for (int c = 0; c < bs; c++)
            FN(load_row)(K, xlay, X, j * bs + c, ldx, xt + c * K);
        *xs = K;
        return xt;
    }
    *xs = ldx;
    return X + j * bs * ldx;
}

/* Y's rows of block row i = alpha*acc (+ add where given; both bs*K
 * values, acc[r*K + j] for row r and vector j) + beta*Y.  beta == 0 does
 * not read Y: NaN there would survive 0*NaN. */
INLINE void FN(put_rows)(const int bs, const int K, const spmm_chunk *g, const int64_t i,
                         const T *restrict acc, const T *restrict add)
{
    const bsrmv_layout lay = g->layout;
    const int64_t ldy = g->ldy, cs = lay == BSRMV_LAYOUT_ROW ? 1 : ldy;
    const T alpha = (T)g->alpha, beta = (T)g->beta;
    T *restrict Y = g->Y;
    for (int r = 0; r < bs; r++) {
        T *y = Y + AT(lay, i * bs + r, 0, ldy);
        for (int j = 0; j < K; j++) {
            const T s = add ? alpha * acc[r * K + j] + add[r * K + j] : alpha * acc[r * K + j];
            y[j * cs] = beta == 0 ? s : s + beta * y[j * cs];
        }
    }
}

/* Y rows of the blocks from cut c0 to cut c1 = alpha*(A X) + beta*Y for the
 * chunk's K vectors.  A row the cuts leave partial gets its unscaled sum in
 * part slot 0 (cut at its start) or 1 (cut at its end only), and its index
 * in prow[slot]; the driver finishes it.  acc holds bs*K values,
 * acc[r*K + j] for row r of the block row and vector j, so the innermost
 * loop runs over the vectors: one load of each matrix entry serves all K.
 * xt: bs*K values of scratch for the column-major layout. */
INLINE void FN(mm_n)(const int bs, const int K, const bsrmv_order order,
                     const spmm_chunk *g, const bsrmv_cut c0,
                     const bsrmv_cut c1, T *restrict part, int64_t *restrict prow,
                     T *restrict acc, T *restrict xt)
{
    const int64_t *restrict rp64 = g->A->row_ptr;
    const int32_t *restrict rp32 = g->A->row_ptr32;
    const int32_t *restrict ci = g->A->col_idx;
    const V *restrict val = g->A->val;
    const T *restrict X = g->X;
    const int64_t ldx = g->ldx;
    const int64_t bs2 = (int64_t)bs * bs;
    const bool cd = g->cj & 1;
    const int64_t r1 = c1.blk > RP_(c1.row) ? c1.row + 1 : c1.row;
    for (int64_t i = c0.row; i < r1; i++) {
        const int64_t ka = RP_(i), kb = RP_(i + 1);
        const int64_t k0 = ka > c0.blk ? ka : c0.blk;
        const int64_t k1 = kb < c1.blk ? kb : c1.blk;
        for (int q = 0; q < bs * K; q++)
            acc[q] = 0;
        for (int64_t b = k0; b < k1; b++) {
            const V *a = val + b * bs2;
            int64_t xs;
            const T *xb = FN(x_rows)(bs, K, g->xlayout, X, ldx, ci[b], xt, &xs);
            for (int c = 0; c < bs; c++)
                for (int r = 0; r < bs; r++) {
                    const T arc = CJ_(cd, order == BSRMV_COL_MAJOR ? a[c * bs + r] : a[r * bs + c]);
#pragma omp simd
                    for (int j = 0; j < K; j++)
                        acc[r * K + j] += arc * xb[c * xs + j];
                }
        }
        if (k0 > ka || k1 < kb) {
            const int s = k0 > ka ? 0 : 1;
            memcpy(part + (int64_t)s * bs * SPMM_MAX_WIDTH, acc, (size_t)(bs * K) * sizeof(T));
            prow[s] = i;
            continue;
        }
        FN(put_rows)(bs, K, g, i, acc, NULL);
    }
}

/* yt += (the blocks from cut c0 to cut c1)^T X for the chunk's K vectors;
 * yt is interleaved (yt[row*K + j]).  xi holds bs*K values: the block row's
 * part of X, loaded once for all its blocks. */
INLINE void FN(mm_t)(const int bs, const int K, const bsrmv_order order,
                     const spmm_chunk *g, const bsrmv_cut c0,
                     const bsrmv_cut c1, T *restrict yt, T *restrict xi)
{
    const int64_t *restrict rp64 = g->A->row_ptr;
    const int32_t *restrict rp32 = g->A->row_ptr32;
    const int32_t *restrict ci = g->A->col_idx;
    const V *restrict val = g->A->val;
    const T *restrict X = g->X;
    const bsrmv_layout lay = g->xlayout;
    const int64_t ldx = g->ldx;
    const int64_t bs2 = (int64_t)bs * bs;
    const bool cd = g->cj & 1;
    const int64_t r1 = c1.blk > RP_(c1.row) ? c1.row + 1 : c1.row;
    for (int64_t i = c0.row; i < r1; i++) {
        const int64_t ka = RP_(i), kb = RP_(i + 1);
        const int64_t k0 = ka > c0.blk ? ka : c0.blk;
        const int64_t k1 = kb < c1.blk ? kb : c1.blk;
        if (k0 == k1)
            continue;
        for (int r = 0; r < bs; r++)
            FN(load_row)(K, lay, X, i * bs + r, ldx, xi + r * K);
        for (int64_t b = k0; b < k1; b++) {
            const V *a = val + b * bs2;
            T *yj = yt + (int64_t)ci[b] * bs * K;
            for (int c = 0; c < bs; c++)
                for (int r = 0; r < bs; r++) {
                    const T arc = CJ_(cd, order == BSRMV_COL_MAJOR ? a[c * bs + r] : a[r * bs + c]);
#pragma omp simd
                    for (int j = 0; j < K; j++)
                        yj[c * K + j] += arc * xi[r * K + j];
                }
        }
    }
}

/* Symmetric storage (the diagonal and upper blocks, sorted, a 64-bit
 * row_ptr), block rows [r0, r1) of one part, for the chunk's K vectors:
 * row i's blocks times X, and every block (i, j) above the diagonal read
 * once more for its mirror, A_ij^T (alpha X_i) added to buf row j - r0
 * (interleaved, bs*K values a block row).  A mirror lands below its
 * source row, so when row i is reached its part of buf holds all the
 * mirrors from this part's rows: Y_i = alpha*acc + buf_i + beta*Y_i is
 * final but for the mirrors of earlier parts, which the driver adds.
 * acc, xt and ax hold bs*K values each (xt: X_j gathered in the
 * column-major layout). */
INLINE void FN(mm_sym)(const int bs, const int K, const bsrmv_order order,
                       const spmm_chunk *g, const int64_t r0, const int64_t r1,
                       T *restrict buf, T *restrict acc, T *restrict xt, T *restrict ax)
{
    const int64_t *restrict rp = g->A->row_ptr;
    const int32_t *restrict ci = g->A->col_idx;
    const V *restrict val = g->A->val;
    const T *restrict X = g->X;
    const bsrmv_layout xlay = g->xlayout;
    const int64_t ldx = g->ldx;
    const T alpha = (T)g->alpha;
    const int64_t bs2 = (int64_t)bs * bs, bk = (int64_t)bs * K;
    const bool cd = g->cj & 1, cm = g->cj & 2;
    for (int64_t i = r0; i < r1; i++) {
        for (int q = 0; q < bs * K; q++)
            acc[q] = 0;
        for (int r = 0; r < bs; r++)
            FN(load_row)(K, xlay, X, i * bs + r, ldx, ax + r * K);
        for (int q = 0; q < bs * K; q++)
            ax[q] *= alpha;
        for (int64_t b = rp[i]; b < rp[i + 1]; b++) {
            const V *a = val + b * bs2;
            const int64_t j = ci[b];
            int64_t xs;
            const T *xb = FN(x_rows)(bs, K, xlay, X, ldx, j, xt, &xs);
            /* each entry once for both uses: acc_r += a_rc x_jc and, but
             * for the diagonal block, buf_jc += a_rc (alpha x_ir) */
            const bool mirror = j != i;
            T *yj = buf + (j - r0) * bk;
            for (int c = 0; c < bs; c++)
                for (int r = 0; r < bs; r++) {
                    const T arc = order == BSRMV_COL_MAJOR ? a[c * bs + r] : a[r * bs + c];
                    const T ad = CJ_(cd, arc);
#pragma omp simd
                    for (int v = 0; v < K; v++)
                        acc[r * K + v] += ad * xb[c * xs + v];
                    if (mirror) {
                        const T am = CJ_(cm, arc);
#pragma omp simd
                        for (int v = 0; v < K; v++)
                            yj[c * K + v] += am * ax[r * K + v];
                    }
                }
        }
        FN(put_rows)(bs, K, g, i, acc, buf + (i - r0) * bk);
    }
}

#undef RP_

/* Entry points with a uniform signature for the dispatch tables.  A bs of
 * 0 stands for the matrix's bs, whose scratch (2*bs*K values) then comes
 * from the driver; a width of 0 (the transpose's scratch) for the chunk's
 * width at run time, at most SPMM_MAX_WIDTH. */
#define BS_(B) ((B) ? (B) : g->A->bs)
#define SCRATCH_(B, K)                                                                  \
    _Alignas(64) T local[(B) ? 2 * (B) * ((K) ? (K) : SPMM_MAX_WIDTH) : 1];             \
    T *buf = (B) ? local : (T *)scratch
#define MM_N(B, K, ORD, TAG)                                                            \
    KERNEL void FN(mm_n_##B##_##K##_##TAG)(SPMM_ARGS_N)                                 \
    {                                                                                   \
        SCRATCH_(B, K);                                                                 \
        FN(mm_n)(BS_(B), K, ORD, g, c0, c1, part, prow, buf, buf + BS_(B) * (K));       \
    }
/* The symmetric product: three bs*K slots of scratch (acc, xt, ax). */
#define MM_S(B, K, ORD, TAG)                                                            \
    KERNEL void FN(mm_s_##B##_##K##_##TAG)(SPMM_ARGS_S)                                 \
    {                                                                                   \
        _Alignas(64) T local[(B) ? 3 * (B) * (K) : 1];                                  \
        T *sb = (B) ? local : (T *)scratch;                                             \
        const int64_t w = (int64_t)BS_(B) * (K);                                        \
        FN(mm_sym)(BS_(B), K, ORD, g, r0, r1, buf, sb, sb + w, sb + 2 * w);             \
    }
/* The transpose only at the runtime width: its scatter into the per-thread
 * buffers, not the loop over the vectors, sets its speed, and each
 * compile-time width costs build time. */
#define MM_T(B, ORD, TAG)                                                               \
    KERNEL void FN(mm_t_##B##_##TAG)(SPMM_ARGS_T)                                       \
    {                                                                                   \
        SCRATCH_(B, 0);                                                                 \
        FN(mm_t)(BS_(B), g->kc, ORD, g, c0, c1, yt, buf);                               \
    }
#define MM_SPECIALISE(B, K)                                                             \
    MM_N(B, K, BSRMV_COL_MAJOR, col) MM_N(B, K, BSRMV_ROW_MAJOR, row)                   \
    MM_S(B, K, BSRMV_COL_MAJOR, col) MM_S(B, K, BSRMV_ROW_MAJOR, row)
#define MM_FOR_BS(B)                                                                    \
    SPMM_WIDTHS(MM_SPECIALISE, B) MM_T(B, BSRMV_COL_MAJOR, col) MM_T(B, BSRMV_ROW_MAJOR, row)
SPMM_BLOCK_SIZES(MM_FOR_BS)
MM_FOR_BS(0)

/* The table: one row per bs (the generic bs last), one mm_set per width
 * (the kernels of that width; the transpose's in every column). */
#define MM_ENTRY(B, K)                                                                  \
    {{FN(mm_n_##B##_##K##_col), FN(mm_n_##B##_##K##_row)},                              \
     {FN(mm_t_##B##_col), FN(mm_t_##B##_row)},                                          \
     {FN(mm_s_##B##_##K##_col), FN(mm_s_##B##_##K##_row)}},
#define MM_ROW(B) {SPMM_WIDTHS(MM_ENTRY, B)},
const mm_set FN(mm_table)[][SPMM_NUM_WIDTHS] = {SPMM_BLOCK_SIZES(MM_ROW) MM_ROW(0)};

/* Y rows [i0, i1) of the chunk = beta*Y, never reading Y when beta == 0. */
static void FN(mm_scale)(const spmm_chunk *g, int64_t i0, int64_t i1)
{
    const bsrmv_layout lay = g->layout;
    T *Y = g->Y;
    const T b = (T)g->beta;
    for (int64_t i = i0; i < i1; i++)
        for (int j = 0; j < g->kc; j++) {
            T *y = Y + AT(lay, i, j, g->ldy);
            *y = g->beta == 0 ? 0 : b * *y;
        }
}

/* Y rows [i0, i1) of the chunk = alpha * sum_q bufs[q] + beta*Y, the nbuf
 * interleaved buffers `stride` values apart. */
static void FN(mm_reduce)(const spmm_chunk *g, int64_t i0, int64_t i1, int nbuf,
                          int64_t stride, const void *bufv)
{
    const bsrmv_layout lay = g->layout;
    const T *buf = bufv;
    T *Y = g->Y;
    const T a = (T)g->alpha, b = (T)g->beta;
    const int K = g->kc;
    for (int64_t i = i0; i < i1; i++)
        for (int j = 0; j < K; j++) {
            T s = 0;
            for (int q = 0; q < nbuf; q++)
                s += buf[q * stride + i * K + j];
            T *y = Y + AT(lay, i, j, g->ldy);
            *y = g->beta == 0 ? a * s : a * s + b * *y;
        }
}

/* The rows cut between threads: as in the SpMV driver, the n slots in
 * thread order (row < 0: unused), each bs*SPMM_MAX_WIDTH values apart,
 * summed in slot order so the result does not depend on timing. */
static void FN(mm_fixup)(const spmm_chunk *g, int n, const int64_t *row, const void *partv)
{
    const bsrmv_layout lay = g->layout;
    const T *part = partv;
    T *Y = g->Y;
    const int bs = g->A->bs, K = g->kc;
    const int64_t stride = (int64_t)bs * SPMM_MAX_WIDTH;
    const T a = (T)g->alpha, b = (T)g->beta;
    for (int s = 0; s < n;) {
        if (row[s] < 0) {
            s++;
            continue;
        }
        int e = s + 1;
        while (e < n && (row[e] < 0 || row[e] == row[s]))
            e++;
        for (int r = 0; r < bs; r++)
            for (int j = 0; j < K; j++) {
                T sum = 0;
                for (int q = s; q < e; q++)
                    if (row[q] == row[s])
                        sum += part[q * stride + r * K + j];
                T *y = Y + AT(lay, row[s] * bs + r, j, g->ldy);
                *y = g->beta == 0 ? a * sum : a * sum + b * *y;
            }
        s = e;
    }
}

/* Rows [i0, i1) of the chunk's X (column-major) into pk, row-major with
 * leading dimension kc. */
static void FN(mm_pack)(const spmm_chunk *g, int64_t i0, int64_t i1, void *pkv)
{
    const T *X = g->X;
    T *pk = pkv;
    const int K = g->kc;
    for (int64_t i = i0; i < i1; i++)
        for (int j = 0; j < K; j++)
            pk[i * K + j] = X[i + j * g->ldx];
}

/* Y rows [i0, i1) of the chunk += rows (interleaved, kc values a row). */
static void FN(mm_add)(const spmm_chunk *g, int64_t i0, int64_t i1, const void *rowsv)
{
    const T *rows = rowsv;
    T *Y = g->Y;
    const int K = g->kc;
    for (int64_t i = i0; i < i1; i++)
        for (int j = 0; j < K; j++)
            Y[AT(g->layout, i, j, g->ldy)] += rows[(i - i0) * K + j];
}

const mm_vops FN(mm_vops) = {FN(mm_scale), FN(mm_reduce), FN(mm_fixup), FN(mm_pack),
                             FN(mm_add)};

#undef MM_ROW
#undef MM_ENTRY
#undef MM_FOR_BS
#undef MM_SPECIALISE
#undef MM_N
#undef MM_T
#undef MM_S
#undef SCRATCH_
#undef BS_
#undef AT
#undef CJ_
