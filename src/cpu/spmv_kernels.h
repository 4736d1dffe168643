/* What the CPU SpMV driver (spmv.c) and its kernel instances share: the
 * kernel signatures, the per-type tables, and the block sizes that have a
 * compile-time kernel.  Each value type's kernels are generated from
 * kernel_template.h in a translation unit of their own (spmv_<type>.c,
 * through spmv_instance.h), so that a parallel build compiles them side by
 * side.  Not installed. */
#ifndef BSRMV_CPU_SPMV_KERNELS_H
#define BSRMV_CPU_SPMV_KERNELS_H

#include "internal.h"

#include <complex.h>

/* alpha and beta inside: a double complex holds a value of every vector
 * type exactly. */
typedef double _Complex scalar;

/* Block sizes with a compile-time kernel (PETSc BAIJ style: the sizes
 * solvers use, then powers and multiples common in multi-component PDEs).
 * 11 and 15 are PETSc's hand-written sizes beyond 8: there the generic
 * kernel's padded columns ran at 0.69x and 0.81x of PETSc SeqBAIJ (bcsstk16
 * split, one thread), where at 9, 10, 13 and 14 they beat both PETSc
 * formats by 1.2-1.9x. */
#if defined(BSRMV_CPU_FEW_SIZES) /* CMakeLists.txt: the test builds */
#define BSRMV_CPU_BLOCK_SIZES(X) X(3)
#define BSRMV_CPU_SYM_BLOCK_SIZES(X) X(3)
#elif defined(BSRMV_CPU_DEPTH_SIZES) /* the ASan build: each UNROLL_FOR */
#define BSRMV_CPU_BLOCK_SIZES(X) X(1) X(2) X(3) X(8)
#define BSRMV_CPU_SYM_BLOCK_SIZES(X) X(1) X(2) X(3) X(8)
#else
#define BSRMV_CPU_BLOCK_SIZES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(11) X(12) X(15) X(16) X(24) X(32)
/* The symmetric-storage kernel (two uses of every block) costs twice the
 * compile time of the others per size: the sizes of structural and FE
 * matrices only; larger blocks run its runtime-bs version. */
#define BSRMV_CPU_SYM_BLOCK_SIZES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8)
#endif

/* Independent accumulator sets per block size: enough blocks in flight to
 * hide FMA latency, few enough to stay in registers. */
#define UNROLL_FOR(B) ((B) == 1 ? 1 : (B) <= 2 ? 4 : (B) <= 6 ? 2 : 1)
/* Below this mean of blocks per block row, op N runs kernel_set's n1 (one
 * accumulator set): rows that short rarely fill U sets, and pay for them
 * at every row.  On the real matrices at bs 2-6 one set won up to ~8
 * blocks a row (up to 1.4x) and U sets from ~10 on (up to 1.9x at 60). */
#define SHORT_ROW_BLOCKS 8

typedef void (*kernel_n)(int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A,
                         const void *x, scalar alpha, scalar beta, void *y);
/* out[0..bs) = blocks [k0, k1) of one block row times x (a cut row's share). */
typedef void (*kernel_p)(int bs, int64_t k0, int64_t k1, const bsrmv_matrix *A,
                         const void *x, void *out);
typedef void (*kernel_t)(int bs, bsrmv_cut c0, bsrmv_cut c1, const bsrmv_matrix *A,
                         const void *x, void *yt);
/* Symmetric storage, block rows [r0, r1): see rows_sym in kernel_template.h
 * (cj: which uses of the values are conjugated). */
typedef void (*kernel_s)(int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A,
                         const void *x, scalar alpha, void *y, void *buf, int cj);
typedef struct kernel_set {
    int bs;
    kernel_n n[2][2]; /* by row_ptr width (RP_WIDTH), then bsrmv_order */
    kernel_n n1[2][2]; /* the same for rows of a few blocks (SHORT_ROW_BLOCKS) */
    kernel_p p[2];    /* by bsrmv_order */
    kernel_t t[2][2];
    kernel_t c[2][2]; /* conjugate transpose (t for real values) */
} kernel_set;
/* Below this mean of stored blocks per block row, the symmetric product
 * runs sym_set's s1 (one accumulator set).  One thread, promoted to bs 2
 * and 3: bcsstk25, crystm01 and msc04515 (9-11 stored blocks a row)
 * 1.05-1.20x faster with one set, s1rmq4m1 and bcsstk16 (25-30) 1.07-1.10x
 * slower; level at bs 4 and 6. */
#define SYM_SHORT_ROW_BLOCKS 16
typedef struct sym_set {
    int bs;
    kernel_s s[2];  /* by bsrmv_order */
    kernel_s s1[2]; /* the same for rows of a few blocks (SYM_SHORT_ROW_BLOCKS) */
} sym_set;
/* The first index of kernel_set's n and t: 0 for a 64-bit row_ptr, 1 for
 * a 32-bit one. */
#define RP_WIDTH(A) ((A)->row_ptr ? 0 : 1)
typedef struct vector_ops {
    void (*scale)(int64_t j0, int64_t j1, scalar beta, void *y);
    void (*reduce)(int64_t j0, int64_t j1, int nbuf, int64_t stride, const void *bufs,
                   scalar alpha, scalar beta, void *y);
    void (*fixup)(int n, const int64_t *row, const void *part, int bs, scalar alpha,
                  scalar beta, void *y);
    void (*add)(int64_t n, const void *src, void *y);
} vector_ops;

/* The kernels of one (value type, vector type) pair. */
typedef struct cpu_kernels {
    const kernel_set *specialised;  /* one per BSRMV_CPU_BLOCK_SIZES, in order */
    const kernel_set *generic;      /* runtime bs */
    const sym_set *sym_specialised; /* one per BSRMV_CPU_SYM_BLOCK_SIZES; NULL:
                                       no symmetric storage for the type */
    const sym_set *sym_generic;
    const vector_ops *vops; /* y's operations; NULL: those of the vector type */
} cpu_kernels;

/* d: double, s: float, sd: float values with double vectors,
 * z: double complex, c: float complex. */
extern const cpu_kernels bsrmv_cpu_kernels_d, bsrmv_cpu_kernels_s, bsrmv_cpu_kernels_sd,
    bsrmv_cpu_kernels_z, bsrmv_cpu_kernels_c;
/* The complex types' symmetric and Hermitian storage kernels, each type in
 * a translation unit of its own (spmv_zsym.c, spmv_csym.c): the sym
 * entries alone are set. */
extern const cpu_kernels bsrmv_cpu_sym_kernels_z, bsrmv_cpu_sym_kernels_c;

#endif
