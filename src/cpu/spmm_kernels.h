/* What the CPU SpMM driver (spmm.c) and its kernel instances share: the
 * chunk a kernel works on, the kernel signatures, the block sizes and
 * widths with compile-time kernels, and the per-type tables.  Each type
 * pair's kernels are generated from spmm_template.h in a translation unit
 * of its own (spmm_<type>.c), so that a parallel build compiles them side
 * by side.  Not installed. */
#ifndef BSRMV_CPU_SPMM_KERNELS_H
#define BSRMV_CPU_SPMM_KERNELS_H

#include "internal.h"

#include <complex.h>

/* Vectors per pass over A (op N: the chunk widths with compile-time
 * kernels, the widest that fits first: k = 7 is 4 + 2 + 1, three passes;
 * op T: up to SPMM_MAX_WIDTH at the runtime width).  Wider chunks would
 * spill the accumulators of the larger blocks. */
#define SPMM_MAX_WIDTH 16
/* Block sizes with compile-time SpMM kernels (others run the generic-bs
 * ones).  Above 8 the block loops are long enough that the runtime-bs code
 * keeps up, and every size costs twelve kernels per type pair of build time. */
#if defined(BSRMV_CPU_FEW_SIZES) /* CMakeLists.txt: the test builds */
#define SPMM_BLOCK_SIZES(X) X(3)
#elif defined(BSRMV_CPU_DEPTH_SIZES) /* the ASan build: as the SpMV kernels' */
#define SPMM_BLOCK_SIZES(X) X(1) X(2) X(3) X(8)
#else
#define SPMM_BLOCK_SIZES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
#endif
#define SPMM_WIDTHS(X, B) X(B, 1) X(B, 2) X(B, 4) X(B, 8) X(B, 16)
#define SPMM_NUM_WIDTHS 5

/* One chunk of vectors: X and Y point at its first column. */
typedef struct spmm_chunk {
    const bsrmv_matrix *A;
    const void *X;
    void *Y;
    int64_t ldx, ldy;
    int kc;
    bsrmv_layout layout;  /* of Y, and of X as the caller passed it   */
    bsrmv_layout xlayout; /* of X as the kernels read it (ldx its ld) */
    double _Complex alpha, beta; /* the real types take the real parts */
    /* Complex values: conjugated in their direct use (bit 0) and, in
     * symmetric storage, in the mirrored one (bit 1). */
    int cj;
} spmm_chunk;

#define SPMM_ARGS_N                                                                     \
    const spmm_chunk *g, bsrmv_cut c0, bsrmv_cut c1, void *part, int64_t *prow, void *scratch
#define SPMM_ARGS_T const spmm_chunk *g, bsrmv_cut c0, bsrmv_cut c1, void *yt, void *scratch
#define SPMM_ARGS_S const spmm_chunk *g, int64_t r0, int64_t r1, void *buf, void *scratch
typedef void (*mm_kernel_n)(SPMM_ARGS_N);
typedef void (*mm_kernel_t)(SPMM_ARGS_T);
typedef void (*mm_kernel_s)(SPMM_ARGS_S);
typedef struct mm_set {
    mm_kernel_n n[2]; /* by bsrmv_order */
    mm_kernel_t t[2];
    mm_kernel_s s[2]; /* symmetric storage */
} mm_set;
typedef struct mm_vops {
    void (*scale)(const spmm_chunk *g, int64_t i0, int64_t i1);
    void (*reduce)(const spmm_chunk *g, int64_t i0, int64_t i1, int nbuf, int64_t stride,
                   const void *bufs);
    void (*fixup)(const spmm_chunk *g, int n, const int64_t *row, const void *part);
    void (*pack)(const spmm_chunk *g, int64_t i0, int64_t i1, void *pk);
    /* Y rows [i0, i1) of the chunk += rows (interleaved, kc values a row) */
    void (*add)(const spmm_chunk *g, int64_t i0, int64_t i1, const void *rows);
} mm_vops;

/* d: double, s: float, sd: float values with double vectors and sums,
 * z: double complex, c: float complex.  Each table has a row per
 * SPMM_BLOCK_SIZES, in order, then the generic bs's; a column per
 * SPMM_WIDTHS. */
extern const mm_set mm_table_d[][SPMM_NUM_WIDTHS], mm_table_s[][SPMM_NUM_WIDTHS],
    mm_table_sd[][SPMM_NUM_WIDTHS], mm_table_z[][SPMM_NUM_WIDTHS], mm_table_c[][SPMM_NUM_WIDTHS];
extern const mm_vops mm_vops_d, mm_vops_s, mm_vops_sd, mm_vops_z, mm_vops_c;

#endif
