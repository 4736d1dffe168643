/* One source for every CPU SpMV kernel variant.  spmv.c includes it once
 * per type pair with T (the matrix value type), V (the type of x, y and
 * the accumulators: T itself, or double for float values) and SUF (a name
 * suffix) defined, VOPS where the vector operations for V are still to
 * be made (they depend on V alone), BLOCK_SIMD(clauses), the pragma
 * of the loops inside a block, CONJ(v) (the conjugate of a value of T: v
 * itself for real types), COMPLEX for complex T (the conjugate-transpose
 * kernels are made; real types use the transpose ones for OP_C) and SYM
 * where the symmetric-storage kernels are made (SYM_ONLY: those alone, for
 * a type whose other kernels are in another translation unit).  The block size, block
 * order, unroll depth and row_ptr width reach the always_inline bodies as
 * arguments that are compile-time constants in every specialised caller,
 * so -O3 unrolls the block loops and vectorises them for that size, and
 * each width gets its own loop (no per-row switch); the generic caller
 * passes a runtime bs and gets the same loops unspecialised. */

#include "template_defs.h"

/* acc[r] += sum_c A(r,c) * xb[c] for one block (A conjugated when cj).
 * pad (a constant: 0, or a length with pad / 2 <= bs <= pad) gives a
 * runtime bs in column-major order loops of a constant length: each
 * column but the last is taken as pad rows, the rows past bs being the
 * head of the next column (still inside the block, as (bs - 2) * bs + pad
 * <= bs * bs), summed into acc[bs..pad), which nothing reads.  The
 * runtime-length loop kept acc in memory: bcsstk16 split at bs 9-15 ran
 * at 17-28 GB/s against 46-54 for the compiled 8 and 12.  The last column
 * as pad rows with the rows past bs masked was slower than its plain loop. */
INLINE void FN(block_n)(const int bs, const int pad, const bsrmv_order order, const int cj,
                        V *restrict acc, const T *restrict a, const V *restrict xb)
{
#define A_(at) ((V)(cj ? CONJ(a[at]) : a[at]))
    if (order == BSRMV_COL_MAJOR && pad) {
        for (int c = 0; c < bs - 1; c++) {
            const V xc = xb[c];
            BLOCK_SIMD()
            for (int r = 0; r < pad; r++)
                acc[r] += A_(c * bs + r) * xc;
        }
        const V xl = xb[bs - 1];
        for (int r = 0; r < bs; r++)
            acc[r] += A_((bs - 1) * bs + r) * xl;
    } else if (order == BSRMV_COL_MAJOR) {
        /* Eberhardt & Hoemmen's Algorithm 1: stream val down each column.
         * Unrolling all columns of a 16x16 or larger block made GCC's code
         * slower than the runtime-bs loop; 8 keeps small blocks whole. */
#pragma GCC unroll 8
        for (int c = 0; c < bs; c++) {
            const V xc = xb[c];
            BLOCK_SIMD()
            for (int r = 0; r < bs; r++)
                acc[r] += A_(c * bs + r) * xc;
        }
    } else {
        for (int r = 0; r < bs; r++) {
            V s = 0;
            BLOCK_SIMD(reduction(+ : s))
            for (int c = 0; c < bs; c++)
                s += A_(r * bs + c) * xb[c];
            acc[r] += s;
        }
    }
#undef A_
}

/* GCC's vector types (BLOCK_VECTORS: real values and vectors of one
 * type; __builtin_shufflevector: GCC 12, clang) for the transpose of
 * column-major blocks of even bs >= 4 below. */
#if defined(BLOCK_VECTORS) && (defined(__clang__) || __GNUC__ >= 12)
#define BLOCK_TILES
typedef V FN(v4) __attribute__((vector_size(4 * sizeof(V))));
typedef V FN(v2) __attribute__((vector_size(2 * sizeof(V))));
#define LD_(v, p) memcpy(&(v), (p), sizeof(v))
/* The rows at p of four columns of a block, as four named values: loaded
 * into an array by a loop, GCC 12 kept them in memory, and the symmetric
 * product fell from 1.45-1.55x the full storage to 1.0-1.15x at bs 4 and 8
 * (crystm01 promoted, one thread). */
#define LD4_(k0, k1, k2, k3, p)                                                         \
    (LD_(k0, p), LD_(k1, (p) + bs), LD_(k2, (p) + 2 * bs), LD_(k3, (p) + 3 * bs))
/* yj += A^T xi for a column-major block of even bs >= 4, by tiles of 4 or
 * 2 rows and columns (4 where 4 are left): each tile's columns transposed
 * in registers into rows, then yj += xi[r] * row r.  crystm01 promoted,
 * one thread: the symmetric product 1.45-1.52x the full storage at bs 4
 * (the dot products: 1.13-1.38x), 1.44-1.57x at bs 8 (1.27-1.52x),
 * 1.13-1.21x at bs 12 (0.94-1.06x); five promoted matrices at bs 6
 * 1.43-1.68x (1.28-1.49x); the transpose product 1.05-1.4x faster at bs 4
 * and 8, up to 1.14x at bs 6, level at 16.  At bs 2 the 2x2 tile was level
 * with the rows. */
INLINE void FN(block_tiles)(const int bs, V *restrict yj, const T *restrict a,
                            const V *restrict xi)
{
    int c = 0;
    for (; c + 4 <= bs; c += 4) {
        FN(v4) y;
        LD_(y, yj + c);
        int r = 0;
        for (; r + 4 <= bs; r += 4) {
            FN(v4) c0, c1, c2, c3; /* columns c.. of rows r..r+3 */
            LD4_(c0, c1, c2, c3, a + c * bs + r);
            const FN(v4) t0 = __builtin_shufflevector(c0, c1, 0, 4, 2, 6);
            const FN(v4) t1 = __builtin_shufflevector(c0, c1, 1, 5, 3, 7);
            const FN(v4) t2 = __builtin_shufflevector(c2, c3, 0, 4, 2, 6);
            const FN(v4) t3 = __builtin_shufflevector(c2, c3, 1, 5, 3, 7);
            y += __builtin_shufflevector(t0, t2, 0, 1, 4, 5) * xi[r];
            y += __builtin_shufflevector(t1, t3, 0, 1, 4, 5) * xi[r + 1];
            y += __builtin_shufflevector(t0, t2, 2, 3, 6, 7) * xi[r + 2];
            y += __builtin_shufflevector(t1, t3, 2, 3, 6, 7) * xi[r + 3];
        }
        if (r < bs) { /* 2 rows x 4 columns */
            FN(v2) h0, h1, h2, h3;
            LD4_(h0, h1, h2, h3, a + c * bs + r);
            const FN(v4) p = __builtin_shufflevector(h0, h1, 0, 2, 1, 3);
            const FN(v4) q = __builtin_shufflevector(h2, h3, 0, 2, 1, 3);
            y += __builtin_shufflevector(p, q, 0, 1, 4, 5) * xi[r];
            y += __builtin_shufflevector(p, q, 2, 3, 6, 7) * xi[r + 1];
        }
        memcpy(yj + c, &y, sizeof y);
    }
    if (c < bs) { /* the last 2 columns: pairs of rows in the halves of s */
        FN(v2) y;
        LD_(y, yj + c);
        FN(v4) s = {0};
        int r = 0;
        for (; r + 4 <= bs; r += 4) {
            FN(v4) c0, c1, xv;
            LD_(c0, a + c * bs + r);
            LD_(c1, a + (c + 1) * bs + r);
            LD_(xv, xi + r);
            s += __builtin_shufflevector(c0, c1, 0, 4, 1, 5) * __builtin_shufflevector(xv, xv, 0, 0, 1, 1);
            s += __builtin_shufflevector(c0, c1, 2, 6, 3, 7) * __builtin_shufflevector(xv, xv, 2, 2, 3, 3);
        }
        if (r < bs) {
            FN(v2) h0, h1;
            LD_(h0, a + c * bs + r);
            LD_(h1, a + (c + 1) * bs + r);
            y += __builtin_shufflevector(h0, h1, 0, 2) * xi[r];
            y += __builtin_shufflevector(h0, h1, 1, 3) * xi[r + 1];
        }
        y += __builtin_shufflevector(s, s, 0, 1) + __builtin_shufflevector(s, s, 2, 3);
        memcpy(yj + c, &y, sizeof y);
    }
}
#undef LD4_
#undef LD_
#endif

/* yj[c] += sum_r A(r,c) * xi[r]: one block transposed (conjugated when
 * cj) times xi.  Column-major blocks of even bs >= 4 by tiles (block_tiles) where
 * the vector types apply; the others either as a dot product per column
 * or, with by_rows, as yj += xi[r] * (row r of the block), values bs
 * apart, both loops unrolled.  GCC makes each dot product a vector
 * multiply and a chain of scalar adds: in the symmetric product
 * (rows_sym), beside the direct use of the block, that ran 1.4-3x slower
 * at bs 2 and 3 than by rows (crystm01 promoted, one thread; at bs 4-8
 * level or, at bs 4, up to 10% slower by rows), and the transpose product (rows_t) ran
 * 1.1-1.35x faster with the dot products at bs 3-8: rows_sym takes rows
 * below bs 4. */
INLINE void FN(block_t)(const int bs, const bsrmv_order order, const int cj, const int by_rows,
                        V *restrict yj, const T *restrict a, const V *restrict xi)
{
#define A_(at) ((V)(cj ? CONJ(a[at]) : a[at]))
#ifdef BLOCK_TILES
    if (order == BSRMV_COL_MAJOR && bs % 2 == 0 && bs >= 4) {
        FN(block_tiles)(bs, yj, a, xi);
        return;
    }
#endif
    if (order == BSRMV_COL_MAJOR && by_rows) {
#pragma GCC unroll 8
        for (int r = 0; r < bs; r++) {
            const V xr = xi[r];
            BLOCK_UNROLL
            for (int c = 0; c < bs; c++)
                yj[c] += A_(c * bs + r) * xr;
        }
    } else if (order == BSRMV_COL_MAJOR) {
        for (int c = 0; c < bs; c++) {
            V s = 0;
            BLOCK_SIMD(reduction(+ : s))
            for (int r = 0; r < bs; r++)
                s += A_(c * bs + r) * xi[r];
            yj[c] += s;
        }
    } else {
        for (int r = 0; r < bs; r++) {
            const V xr = xi[r];
            BLOCK_SIMD()
            for (int c = 0; c < bs; c++)
                yj[c] += A_(r * bs + c) * xr;
        }
    }
#undef A_
}

#ifndef PREFETCH_AHEAD
#define PREFETCH_AHEAD 4096
#endif
/* The lines of block a's size PREFETCH_AHEAD bytes past it.  Left to the
 * hardware prefetchers one core read 11.5 GB/s on a 2-core Xeon VM, 14.2
 * with these: the 27-point grid at bs 3 (357 MB) took 25.6 ms on one
 * thread against 35.9 (two threads 12.8 against 18.1), at bs 6 23.7
 * against 26.4, at bs 12 35.7 against 39.3; the symmetric product (twice
 * the work per byte) went from 1.30-1.35x the full storage to 1.9x at bs
 * 4 and 6.  1, 2, 4 and 8 KiB ahead: the symmetric set's geometric mean
 * 1.65, 1.70, 1.73, 1.73.  Real matrices that stay in the caches: level
 * (24 cases promoted to bs 2-12, 1.03x).  The general product asks for it
 * for blocks up to bsrmv_cpu_prefetch_max bytes (spmv.c); the symmetric
 * product always, for its twice the work per byte: on the AMD VM bcsstk25
 * promoted to bs 3 took 0.48-0.56 ms with it and 0.55-0.65 without. */
INLINE void FN(prefetch_ahead)(const int on, const T *a, const int64_t bs2)
{
    if (!on)
        return;
    /* Blocks past 2 KiB are long runs the hardware follows by itself; the
     * prefetches only took issue slots there (bcsstk16 split at bs 18-32:
     * 0.61-0.95x, bs 24 1.09x). */
    if (bs2 * (int64_t)sizeof(T) > 2048)
        return;
    const char *p = (const char *)a + PREFETCH_AHEAD;
    for (int64_t q = 0; q < bs2 * (int64_t)sizeof(T); q += 64)
        __builtin_prefetch(p + q);
}

/* acc[0..bs) = the blocks [k, k1) of one row times x.  U independent
 * accumulator sets take consecutive blocks so that small blocks are not
 * limited by the latency of one chain of FMAs; acc holds U*bs values (pad
 * where pad is not 0). */
INLINE void FN(row_sum)(const int bs, const int U, const int pad, const bsrmv_order order,
                        const int pf, int64_t k, const int64_t k1, const int32_t *restrict ci,
                        const T *restrict val, const V *restrict x, V *restrict acc)
{
    const int64_t bs2 = (int64_t)bs * bs;
    for (int j = 0; j < (pad ? pad : U * bs); j++)
        acc[j] = 0;
    if (bs == 1) {
        /* Scalar CSR: a gathered dot product vectorises across blocks. */
        V s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int64_t q = k;
        for (; q + 4 <= k1; q += 4) {
            s0 += (V)val[q] * x[ci[q]];
            s1 += (V)val[q + 1] * x[ci[q + 1]];
            s2 += (V)val[q + 2] * x[ci[q + 2]];
            s3 += (V)val[q + 3] * x[ci[q + 3]];
        }
        for (; q < k1; q++)
            s0 += (V)val[q] * x[ci[q]];
        acc[0] = (s0 + s1) + (s2 + s3);
        return;
    }
    for (; k + U <= k1; k += U)
        for (int u = 0; u < U; u++) {
            FN(prefetch_ahead)(pf, val + (k + u) * bs2, bs2);
            FN(block_n)(bs, pad, order, 0, acc + u * bs, val + (k + u) * bs2,
                        x + (int64_t)ci[k + u] * bs);
        }
    for (; k < k1; k++)
        FN(block_n)(bs, pad, order, 0, acc, val + k * bs2, x + (int64_t)ci[k] * bs);
    /* One vector add per set, on the sets as the blocks stored them: left
     * to itself GCC combined bs 2's sets with loads that straddle two of
     * those stores, which the store buffer cannot forward (a stall of
     * tens of cycles per row, half the time of rows of a few blocks). */
    for (int u = 1; u < U; u++) {
        BLOCK_SIMD()
        for (int r = 0; r < bs; r++)
            acc[r] += acc[u * bs + r];
    }
}

/* row_ptr[i] of the width W64 (1: rp64, 0: rp32) names. */
#define RP_(i) (W64 ? rp64[i] : (int64_t)rp32[i])

/* y rows [r0, r1) = alpha * (A x) + beta * y; acc holds U*bs values, or
 * pad where pad is not 0 (U is 1 then). */
INLINE void FN(rows_n_pf)(const int bs, const int U, const int pad, const bsrmv_order order,
                          const int pf, int64_t r0, int64_t r1, const int W64,
                          const int64_t *restrict rp64, const int32_t *restrict rp32,
                          const int32_t *restrict ci, const T *restrict val,
                          const V *restrict x, V alpha, V beta, V *restrict y, V *restrict acc)
{
    for (int64_t i = r0; i < r1; i++) {
        FN(row_sum)(bs, U, pad, order, pf, RP_(i), RP_(i + 1), ci, val, x, acc);
        V *yi = y + i * bs;
        /* beta == 0 must not read y: NaN there would survive 0*NaN. */
        if (beta == 0)
            for (int r = 0; r < bs; r++)
                yi[r] = alpha * acc[r];
        else
            for (int r = 0; r < bs; r++)
                yi[r] = alpha * acc[r] + beta * yi[r];
    }
}

/* rows_n_pf with prefetch_ahead on or off (bsrmv_cpu_prefetch_max), each
 * a loop of its own: a test of the flag per block ran lns_3937 promoted to
 * bs 2 at 0.80x (AMD EPYC, one and two threads). */
INLINE void FN(rows_n)(const int bs, const int U, const int pad, const bsrmv_order order,
                       int64_t r0, int64_t r1, const int W64, const int64_t *restrict rp64,
                       const int32_t *restrict rp32, const int32_t *restrict ci,
                       const T *restrict val, const V *restrict x, V alpha, V beta,
                       V *restrict y, V *restrict acc)
{
    if ((int64_t)bs * bs * (int64_t)sizeof(T) <= bsrmv_cpu_prefetch_max)
        FN(rows_n_pf)(bs, U, pad, order, 1, r0, r1, W64, rp64, rp32, ci, val, x, alpha, beta,
                      y, acc);
    else
        FN(rows_n_pf)(bs, U, pad, order, 0, r0, r1, W64, rp64, rp32, ci, val, x, alpha, beta,
                      y, acc);
}

/* yt += (the blocks from cut c0 to cut c1)^T x: each block scatters into
 * its block column, so a partial row needs nothing beyond the reduction
 * of the per-thread yt. */
INLINE void FN(rows_t)(const int bs, const bsrmv_order order, const int cj, bsrmv_cut c0,
                       bsrmv_cut c1, const int W64, const int64_t *restrict rp64,
                       const int32_t *restrict rp32, const int32_t *restrict ci,
                       const T *restrict val, const V *restrict x, V *restrict yt)
{
    const int64_t bs2 = (int64_t)bs * bs;
    const int64_t r1 = c1.blk > RP_(c1.row) ? c1.row + 1 : c1.row;
    for (int64_t i = c0.row; i < r1; i++) {
        const V *xi = x + i * bs;
        const int64_t k0 = RP_(i) > c0.blk ? RP_(i) : c0.blk;
        const int64_t k1 = RP_(i + 1) < c1.blk ? RP_(i + 1) : c1.blk;
        for (int64_t k = k0; k < k1; k++)
            FN(block_t)(bs, order, cj, 0, yt + (int64_t)ci[k] * bs, val + k * bs2, xi);
    }
}

#undef RP_

#ifdef SYM
/* Symmetric storage (a 64-bit row_ptr only), block rows [r0, r1) of one
 * thread: y_i += alpha *
 * (row i's blocks times x), and every block (i, j) above the diagonal is
 * read once more for its mirror, adding A_ij^T (alpha x_i) to y_j: in y
 * itself while j < r1 (rows of this thread, whose y the caller has scaled
 * by beta), else in this thread's buffer, buf[(j - r1)*bs ...].  acc and
 * ax hold bs values.  The complex types conjugate the values of the direct
 * use where cj has bit 0 set and those of the mirrored use where it has
 * bit 1 (Hermitian storage: A_ji = A_ij^H; and the products with conj(A)). */
INLINE void FN(rows_sym)(const int bs, const int U, const bsrmv_order order, const int cj,
                         const int64_t r0, const int64_t r1, const int64_t *restrict rp,
                         const int32_t *restrict ci, const T *restrict val,
                         const V *restrict x, const V alpha, V *restrict y, V *restrict buf,
                         V *restrict acc, V *restrict ax)
{
    const int64_t bs2 = (int64_t)bs * bs;
    const int cn = cj & 1, ct = cj >> 1 & 1;
    for (int64_t i = r0; i < r1; i++) {
        const V *xi = x + i * bs;
        for (int r = 0; r < U * bs; r++)
            acc[r] = 0;
        for (int r = 0; r < bs; r++)
            ax[r] = alpha * xi[r];
        int64_t k = rp[i];
        const int64_t k1 = rp[i + 1];
        if (k < k1 && ci[k] == i) {
            FN(block_n)(bs, 0, order, cn, acc, val + k * bs2, xi);
            k++;
        }
        /* U accumulator sets, as in row_sum: consecutive blocks do not
         * wait on one chain of FMAs. */
        for (; k + U <= k1; k += U)
            for (int u = 0; u < U; u++) {
                const int64_t j = ci[k + u];
                const T *a = val + (k + u) * bs2;
                FN(prefetch_ahead)(1, a, bs2);
                FN(block_n)(bs, 0, order, cn, acc + u * bs, a, x + j * bs);
                FN(block_t)(bs, order, ct, bs < 4, j < r1 ? y + j * bs : buf + (j - r1) * bs, a,
                            ax);
            }
        for (; k < k1; k++) {
            const int64_t j = ci[k];
            const T *a = val + k * bs2;
            FN(prefetch_ahead)(1, a, bs2);
            FN(block_n)(bs, 0, order, cn, acc, a, x + j * bs);
            FN(block_t)(bs, order, ct, bs < 4, j < r1 ? y + j * bs : buf + (j - r1) * bs, a, ax);
        }
        for (int u = 1; u < U; u++) {
            BLOCK_SIMD() /* as in row_sum */
            for (int r = 0; r < bs; r++)
                acc[r] += acc[u * bs + r];
        }
        V *yi = y + i * bs;
        for (int r = 0; r < bs; r++)
            yi[r] += alpha * acc[r];
    }
}
#endif

/* Entry points with a uniform signature for the dispatch tables; alpha and
 * beta come as double complex (spmv.c's `scalar`), which holds the scalars
 * of every vector type exactly and converts to a real V by its real
 * part. */
#define ARGS_N                                                                          \
    int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A, const void *x, scalar alpha, \
        scalar beta, void *y
#define PASS_N(BS, U, PAD, ORDER, W64, ACC)                                             \
    FN(rows_n)(BS, U, PAD, ORDER, r0, r1, W64, A->row_ptr, A->row_ptr32, A->col_idx,    \
               (const T *)A->val, (const V *)x, (V)alpha, (V)beta, (V *)y, ACC)
#define ARGS_P int bs, int64_t k0, int64_t k1, const bsrmv_matrix *A, const void *x, void *out
#define PASS_P(BS, U, ORDER, ACC)                                                       \
    FN(row_sum)(BS, U, 0, ORDER, (BS) * (BS) * (int)sizeof(T) <= bsrmv_cpu_prefetch_max,  \
                k0, k1, A->col_idx, (const T *)A->val, (const V *)x, ACC);              \
    memcpy(out, ACC, (size_t)(BS) * sizeof(V))
#define ARGS_T                                                                          \
    int bs, bsrmv_cut c0, bsrmv_cut c1, const bsrmv_matrix *A, const void *x, void *yt
#define PASS_T(BS, ORDER, CJ, W64)                                                      \
    FN(rows_t)(BS, ORDER, CJ, c0, c1, W64, A->row_ptr, A->row_ptr32, A->col_idx,        \
               (const T *)A->val, (const V *)x, (V *)yt)
#define ARGS_S                                                                          \
    int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A, const void *x, scalar alpha,   \
        void *y, void *buf, int cj
#define PASS_S(BS, U, ORDER, ACC, AX)                                                   \
    FN(rows_sym)(BS, U, ORDER, cj, r0, r1, A->row_ptr, A->col_idx, (const T *)A->val,          \
                 (const V *)x, (V)alpha, (V *)y, (V *)buf, ACC, AX)

/* The conjugate-transpose kernels (complex types only; ENTRY_ gives real
 * types their transpose kernels in their place). */
#ifdef COMPLEX
#define CONJ_KERNELS(NAME, B, W64, RW)                                                  \
    KERNEL void FN(c_col_##NAME##_##RW)(ARGS_T) { PASS_T(B, BSRMV_COL_MAJOR, 1, W64); } \
    KERNEL void FN(c_row_##NAME##_##RW)(ARGS_T) { PASS_T(B, BSRMV_ROW_MAJOR, 1, W64); }
#define CONJ_NAME(NAME) c_##NAME
#else
#define CONJ_KERNELS(NAME, B, W64, RW)
#define CONJ_NAME(NAME) t_##NAME
#endif

/* The kernels that walk row_ptr, for one width: W64 1 (64-bit), 0 (32-bit);
 * RW names it.  NAME is the block size's name, B the block size (constant,
 * or the runtime bs of the generic set), U the unroll depth, AL the
 * accumulators' alignment (none for the generic set's variable array) and
 * PADDED 1 where a runtime bs of 6 to 16 takes block_n's padded columns in
 * column-major order, 12 rows up to bs 12 (bs 10 ran 1.2x as fast as with
 * 16) and 16 beyond (the generic set). */
#define KERNELS_RP(NAME, B, U, AL, PADDED, W64, RW)                                     \
    KERNEL void FN(n_col_##NAME##_##RW)(ARGS_N)                                         \
    {                                                                                   \
        if ((PADDED) && 2 * (B) >= 12 && (B) <= 12) {                                   \
            _Alignas(64) V acc[12];                                                     \
            PASS_N(B, 1, 12, BSRMV_COL_MAJOR, W64, acc);                                \
        } else if ((PADDED) && 2 * (B) >= 16 && (B) <= 16) {                            \
            _Alignas(64) V acc[16];                                                     \
            PASS_N(B, 1, 16, BSRMV_COL_MAJOR, W64, acc);                                \
        } else {                                                                        \
            AL V acc[(U) * (B)];                                                        \
            PASS_N(B, U, 0, BSRMV_COL_MAJOR, W64, acc);                                 \
        }                                                                               \
    }                                                                                   \
    KERNEL void FN(n_row_##NAME##_##RW)(ARGS_N)                                         \
    {                                                                                   \
        AL V acc[(U) * (B)];                                                            \
        PASS_N(B, U, 0, BSRMV_ROW_MAJOR, W64, acc);                                     \
    }                                                                                   \
    KERNEL void FN(t_col_##NAME##_##RW)(ARGS_T) { PASS_T(B, BSRMV_COL_MAJOR, 0, W64); } \
    KERNEL void FN(t_row_##NAME##_##RW)(ARGS_T) { PASS_T(B, BSRMV_ROW_MAJOR, 0, W64); } \
    CONJ_KERNELS(NAME, B, W64, RW)
/* The same rows with one accumulator set, for matrices whose rows hold a
 * few blocks (spmv.c chooses): U sets cost a row their zeroing and their
 * sum, and its blocks rarely fill them.  Made for every size; the tables
 * name them only where UNROLL_FOR(B) > 1, so the others are not built. */
#define SHORT_RP(NAME, B, AL, W64, RW)                                                  \
    KERNEL void FN(n1_col_##NAME##_##RW)(ARGS_N)                                        \
    {                                                                                   \
        AL V acc[B];                                                                    \
        PASS_N(B, 1, 0, BSRMV_COL_MAJOR, W64, acc);                                     \
    }                                                                                   \
    KERNEL void FN(n1_row_##NAME##_##RW)(ARGS_N)                                        \
    {                                                                                   \
        AL V acc[B];                                                                    \
        PASS_N(B, 1, 0, BSRMV_ROW_MAJOR, W64, acc);                                     \
    }
#define KERNELS(NAME, B, U, AL, PADDED)                                                 \
    KERNELS_RP(NAME, B, U, AL, PADDED, 1, 64)                                           \
    KERNELS_RP(NAME, B, U, AL, PADDED, 0, 32)                                           \
    KERNEL void FN(p_col_##NAME)(ARGS_P)                                                \
    {                                                                                   \
        AL V acc[(U) * (B)];                                                            \
        PASS_P(B, U, BSRMV_COL_MAJOR, acc);                                             \
    }                                                                                   \
    KERNEL void FN(p_row_##NAME)(ARGS_P)                                                \
    {                                                                                   \
        AL V acc[(U) * (B)];                                                            \
        PASS_P(B, U, BSRMV_ROW_MAJOR, acc);                                             \
    }

#ifndef SYM_ONLY
/* Specialised: bs and the unroll depth are constants. */
#define SPECIALISE(B)                                                                   \
    KERNELS(B, B, UNROLL_FOR(B), _Alignas(64), 0)                                       \
    SHORT_RP(B, B, _Alignas(64), 1, 64)                                                 \
    SHORT_RP(B, B, _Alignas(64), 0, 32)
BSRMV_CPU_BLOCK_SIZES(SPECIALISE)
#undef SPECIALISE
/* Generic: any bs, one accumulator set (the plain triple loop), with
 * padded columns at bs 6-16 for the real types: complex ones gained
 * 1.1-1.25x there for 6 s more compile time per type. */
#ifdef COMPLEX
KERNELS(any, bs, 1, , 0)
#else
KERNELS(any, bs, 1, , 1)
#endif
#endif

#ifdef SYM
/* The symmetric product's pair of orders, P_col_NAME and P_row_NAME, with
 * U accumulator sets. */
#define SYM_KERNELS(P, NAME, B, U, AL)                                                  \
    KERNEL void FN(P##_col_##NAME)(ARGS_S)                                              \
    {                                                                                   \
        AL V acc[(U) * (B)], ax[B];                                                     \
        PASS_S(B, U, BSRMV_COL_MAJOR, acc, ax);                                         \
    }                                                                                   \
    KERNEL void FN(P##_row_##NAME)(ARGS_S)                                              \
    {                                                                                   \
        AL V acc[(U) * (B)], ax[B];                                                     \
        PASS_S(B, U, BSRMV_ROW_MAJOR, acc, ax);                                         \
    }
#define SPECIALISE_SYM(B)                                                               \
    SYM_KERNELS(s, B, B, UNROLL_FOR(B), _Alignas(64))                                   \
    SYM_KERNELS(s1, B, B, 1, _Alignas(64))
BSRMV_CPU_SYM_BLOCK_SIZES(SPECIALISE_SYM)
#undef SPECIALISE_SYM
SYM_KERNELS(s, any, bs, 1, )
#undef SYM_KERNELS
/* s1: one accumulator set, for rows of a few stored blocks (spmv.c
 * chooses), where UNROLL_FOR(B) > 1; as with n1, the others are not built. */
#define SYM_ENTRY(B)                                                                    \
    {B,                                                                                 \
     {FN(s_col_##B), FN(s_row_##B)},                                                    \
     {UNROLL_FOR(B) > 1 ? FN(s1_col_##B) : FN(s_col_##B),                               \
      UNROLL_FOR(B) > 1 ? FN(s1_row_##B) : FN(s_row_##B)}},
static const sym_set FN(sym_specialised)[] = {BSRMV_CPU_SYM_BLOCK_SIZES(SYM_ENTRY)};
#undef SYM_ENTRY
static const sym_set FN(sym_generic) = {0, {FN(s_col_any), FN(s_row_any)},
                                        {FN(s_col_any), FN(s_row_any)}};
#endif

/* The short-row kernel K: n1_K where S (U > 1), else n_K, the same loop;
 * N1 is n1_, or n_ for the generic set, which has no n1_ kernels. */
#define N1_(S, N1, K) ((S) ? FN(N1##K) : FN(n_##K))
#define ENTRY_(NAME, B, S, N1)                                                          \
    {B,                                                                                 \
     {{FN(n_col_##NAME##_64), FN(n_row_##NAME##_64)},                                   \
      {FN(n_col_##NAME##_32), FN(n_row_##NAME##_32)}},                                  \
     {{N1_(S, N1, col_##NAME##_64), N1_(S, N1, row_##NAME##_64)},                       \
      {N1_(S, N1, col_##NAME##_32), N1_(S, N1, row_##NAME##_32)}},                      \
     {FN(p_col_##NAME), FN(p_row_##NAME)},                                              \
     {{FN(t_col_##NAME##_64), FN(t_row_##NAME##_64)},                                   \
      {FN(t_col_##NAME##_32), FN(t_row_##NAME##_32)}},                                  \
     {{FN(CONJ_NAME(col_##NAME##_64)), FN(CONJ_NAME(row_##NAME##_64))},                 \
      {FN(CONJ_NAME(col_##NAME##_32)), FN(CONJ_NAME(row_##NAME##_32))}}}
#define ENTRY(B) ENTRY_(B, B, UNROLL_FOR(B) > 1, n1_),
#ifndef SYM_ONLY
static const kernel_set FN(specialised)[] = {BSRMV_CPU_BLOCK_SIZES(ENTRY)};
static const kernel_set FN(generic) = ENTRY_(any, 0, 0, n_);
#endif
#undef ENTRY
#undef ENTRY_
#undef N1_
#undef KERNELS
#undef KERNELS_RP
#undef SHORT_RP
#undef CONJ_KERNELS
#undef CONJ_NAME

#ifdef VOPS
/* y = beta * y over [j0, j1), never reading y when beta == 0. */
static void FN(scale)(int64_t j0, int64_t j1, scalar beta, void *yv)
{
    V *y = yv;
    const V b = (V)beta;
    if (beta == 0)
        for (int64_t j = j0; j < j1; j++)
            y[j] = 0;
    else
        for (int64_t j = j0; j < j1; j++)
            y[j] *= b;
}

/* y[j] = alpha * sum_q bufs[q][j] + beta * y[j] over [j0, j1). */
static void FN(reduce)(int64_t j0, int64_t j1, int nbuf, int64_t stride, const void *bufv,
                       scalar alpha, scalar beta, void *yv)
{
    const V *buf = bufv;
    V *y = yv;
    const V a = (V)alpha, b = (V)beta;
    for (int64_t j = j0; j < j1; j++) {
        V s = 0;
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
static void FN(fixup)(int n, const int64_t *row, const void *partv, int bs, scalar alpha,
                      scalar beta, void *yv)
{
    const V *part = partv;
    V *y = yv;
    const V a = (V)alpha, b = (V)beta;
    for (int s = 0; s < n;) {
        if (row[s] < 0) {
            s++;
            continue;
        }
        int e = s + 1;
        while (e < n && (row[e] < 0 || row[e] == row[s]))
            e++;
        V *yi = y + row[s] * bs;
        for (int r = 0; r < bs; r++) {
            V sum = 0;
            for (int q = s; q < e; q++)
                if (row[q] == row[s])
                    sum += part[(int64_t)q * bs + r];
            yi[r] = beta == 0 ? a * sum : a * sum + b * yi[r];
        }
        s = e;
    }
}

/* y[j] += src[j] over [0, n). */
static void FN(add)(int64_t n, const void *srcv, void *yv)
{
    const V *src = srcv;
    V *y = yv;
    for (int64_t j = 0; j < n; j++)
        y[j] += src[j];
}

static const vector_ops FN(vops) = {FN(scale), FN(reduce), FN(fixup), FN(add)};
#endif

#undef ARGS_S
#undef PASS_S
#undef ARGS_N
#undef PASS_N
#undef ARGS_P
#undef PASS_P
#undef ARGS_T
#undef PASS_T
