/*
 * bsrmv: block-sparse matrix times vector, y = alpha*op(A)*x + beta*y.
 *
 * One header, C11.  Every symbol starts with bsrmv_ / BSRMV_.
 *
 * Conventions
 *  - Every function that can fail returns a bsrmv_status.  On failure it
 *    leaves its outputs untouched (handles set to NULL), frees what it
 *    allocated, and records a message that bsrmv_last_error() returns
 *    (per thread).  Nothing in the library aborts or prints.
 *  - Matrices are standard BSR (a.k.a. BCSR): mb block rows, nb block
 *    columns, square bs x bs blocks, nnzb stored blocks.
 *      row_ptr[mb+1]  64-bit, or 32-bit through the _i32 functions (the
 *                     kernels read either width in place); row_ptr[0] == 0,
 *                     non-decreasing, row_ptr[mb] == nnzb
 *      col_idx[nnzb]  32-bit block-column indices, 0-based, strictly
 *                     increasing within a block row
 *      val[nnzb*bs*bs] block k starts at val + k*bs*bs; inside a block the
 *                     entries are column-major (BSRMV_COL_MAJOR, the default,
 *                     Eberhardt & Hoemmen's layout) or row-major
 *                     (BSRMV_ROW_MAJOR, cuSPARSE's BSR direction "row").
 *    The matrix is (mb*bs) x (nb*bs).  x has nb*bs entries and y mb*bs
 *    (swapped for the transpose).
 *  - Types: the values of A are float, double, or their complex forms
 *    (docs/COMPLEX.md), and x, y, alpha, beta and the sums are of the
 *    matrix's vector type: its value type, or double for a float matrix set
 *    to mixed precision (bsrmv_matrix_set_vector_type, docs/MIXED.md).
 *    alpha and beta are passed as double and rounded to the vector type, or
 *    as pointers to values of the vector type (bsrmv_spmv_scalars).
 *  - Threads.  Calls on different handles may run in different threads at
 *    once.  A bsrmv_matrix, bsrmv_precond or bsrmv_coo may be read by
 *    several threads at once (bsrmv_spmv, bsrmv_solve and
 *    bsrmv_precond_apply only read A and P); calls that change a handle
 *    (bsrmv_matrix_set_cpu_kernel, _destroy) need it to themselves.  A
 *    bsrmv_gpu_matrix or bsrmv_gpu_precond is used by one thread at a time
 *    (its plan owns scratch buffers).  The GPU tune table is global: load it
 *    (bsrmv_gpu_load_tune_file, or $BSRMV_TUNE_FILE, read by the first
 *    plan) before other threads make GPU handles.  bsrmv_last_error() is
 *    per thread.  Each CPU call runs its own OpenMP parallel region.
 *  - Scratch.  The host calls that need a buffer beyond their arguments
 *    (op T and C, symmetric storage, bsrmv_spmm with column-major vectors
 *    or op T) keep one per calling thread for its next call, as large as
 *    the largest such call needed: freed when the thread exits or by
 *    bsrmv_release_scratch().
 *
 * Other headers: bsrmv_gen.h (test-matrix generators), bsrmv_bench.h (the
 * benchmark's instruments, no ABI promise).  The version: bsrmv_version.h,
 * included here.
 */
#ifndef BSRMV_H
#define BSRMV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The library is compiled with hidden symbols; what these headers declare
 * is its exported API. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* BSRMV_VERSION_MAJOR, _MINOR, _PATCH, _STRING: the version these headers
 * belong to (generated from the build's project version). */
#include "bsrmv_version.h"

/* The version of the library linked at run time, "MAJOR.MINOR.PATCH";
 * compare with BSRMV_VERSION_STRING to detect a header/library mismatch. */
const char *bsrmv_version(void);

/* ------------------------------------------------------------------ */
/* Status codes and errors                                             */
/* ------------------------------------------------------------------ */

typedef enum bsrmv_status {
    BSRMV_SUCCESS = 0,
    BSRMV_ERR_ARGUMENT,     /* NULL pointer, negative size, unknown enum   */
    BSRMV_ERR_NOMEM,        /* host allocation failed                      */
    BSRMV_ERR_OVERFLOW,     /* a size or offset does not fit its type      */
    BSRMV_ERR_STRUCTURE,    /* index arrays break a BSR/CSR/COO rule       */
    BSRMV_ERR_DIMENSION,    /* vector length does not match the matrix     */
    BSRMV_ERR_IO,           /* a file could not be opened, read or written */
    BSRMV_ERR_FORMAT,       /* malformed Matrix Market file                */
    BSRMV_ERR_UNSUPPORTED,  /* valid request this build cannot serve       */
    BSRMV_ERR_DEVICE,       /* a CUDA call failed                          */
    BSRMV_ERR_DEVICE_NOMEM, /* device allocation failed                    */
    BSRMV_ERR_NO_DEVICE,    /* no usable GPU, or library built without CUDA */
    BSRMV_ERR_SINGULAR,     /* a diagonal block is missing or singular      */
    BSRMV_ERR_NOT_CONVERGED /* a solver hit its iteration limit or broke down */
} bsrmv_status;

/* Fixed English name of a status, e.g. "BSRMV_ERR_STRUCTURE". */
const char *bsrmv_status_string(bsrmv_status s);

/* Message of the last failure in the calling thread ("" if none).  The
 * pointer stays valid until the thread's next failing call. */
const char *bsrmv_last_error(void);

/* Frees the calling thread's scratch buffer (see Scratch above); the next
 * call that needs one allocates it again.  Other threads' are untouched. */
void bsrmv_release_scratch(void);

/* ------------------------------------------------------------------ */
/* Enums                                                               */
/* ------------------------------------------------------------------ */

/* The complex types are interleaved (re, im) pairs: the layout of C11
 * float _Complex / double _Complex, C++ std::complex and CUDA's
 * cuFloatComplex / cuDoubleComplex (docs/COMPLEX.md says which entry points
 * take them). */
typedef enum bsrmv_type {
    BSRMV_FLOAT = 0,
    BSRMV_DOUBLE = 1,
    BSRMV_COMPLEX_FLOAT = 2,
    BSRMV_COMPLEX_DOUBLE = 3
} bsrmv_type;

typedef enum bsrmv_order {
    BSRMV_COL_MAJOR = 0,
    BSRMV_ROW_MAJOR = 1
} bsrmv_order;

typedef enum bsrmv_op {
    BSRMV_OP_N = 0, /* y = alpha*A*x   + beta*y */
    BSRMV_OP_T = 1, /* y = alpha*A^T*x + beta*y */
    BSRMV_OP_C = 2  /* y = alpha*A^H*x + beta*y (conjugate transpose); for a
                     * real matrix OP_T, in every entry point with an op */
} bsrmv_op;

/* Size in bytes of one value of type t (0 for an unknown type): 4, 8, and
 * 8, 16 for the complex types. */
size_t bsrmv_type_size(bsrmv_type t);

/* ------------------------------------------------------------------ */
/* Structure check                                                     */
/* ------------------------------------------------------------------ */

typedef enum bsrmv_rule {
    BSRMV_RULE_OK = 0,
    BSRMV_RULE_SIZES,          /* mb, nb, bs or nnzb out of range          */
    BSRMV_RULE_ROW_PTR_START,  /* row_ptr[0] != 0                          */
    BSRMV_RULE_ROW_PTR_ORDER,  /* row_ptr[i+1] < row_ptr[i]                */
    BSRMV_RULE_ROW_PTR_END,    /* row_ptr[mb] != nnzb                      */
    BSRMV_RULE_COL_RANGE,      /* col_idx outside [0, nb)                  */
    BSRMV_RULE_COL_ORDER,      /* col_idx decreasing within a block row    */
    BSRMV_RULE_COL_DUPLICATE   /* the same col_idx twice in a block row    */
} bsrmv_rule;

typedef struct bsrmv_check_report {
    bsrmv_rule rule; /* first rule broken, BSRMV_RULE_OK if none          */
    int64_t row;     /* block row where it broke (-1 if not row-specific) */
    int64_t pos;     /* index into col_idx or row_ptr where it broke      */
} bsrmv_check_report;

/* Check BSR index arrays.  Returns BSRMV_SUCCESS or BSRMV_ERR_STRUCTURE
 * (BSRMV_ERR_ARGUMENT for NULL pointers).  report may be NULL. */
bsrmv_status bsrmv_check_bsr(int64_t mb, int64_t nb, int bs, int64_t nnzb,
                             const int64_t *row_ptr, const int32_t *col_idx,
                             bsrmv_check_report *report);

/* The same for a 32-bit row_ptr (scipy, cuSPARSE and PETSc's default
 * builds). */
bsrmv_status bsrmv_check_bsr_i32(int64_t mb, int64_t nb, int bs, int64_t nnzb,
                                 const int32_t *row_ptr, const int32_t *col_idx,
                                 bsrmv_check_report *report);

/* Name of a rule, e.g. "col_idx not sorted within a block row". */
const char *bsrmv_rule_string(bsrmv_rule r);

/* ------------------------------------------------------------------ */
/* Coordinate (triplet) matrices: the exchange format of the I/O and   */
/* the converters.  A plain struct, owned by whoever allocated it.     */
/* ------------------------------------------------------------------ */

typedef struct bsrmv_coo {
    int64_t m, n;   /* scalar rows and columns                      */
    int64_t nnz;    /* entries in use                               */
    int64_t *row;   /* 0-based row of each entry                    */
    int64_t *col;   /* 0-based column of each entry                 */
    double *val;    /* value of each entry (its real part)           */
    double *imag;   /* imaginary part of each entry; NULL: a real matrix
                     * (zero-initialise a COO built by hand)            */
} bsrmv_coo;

/* Allocate a COO with room for nnz entries (nnz entries in use); imag is
 * NULL. */
bsrmv_status bsrmv_coo_create(bsrmv_coo **coo, int64_t m, int64_t n, int64_t nnz);
/* The same with imag allocated too (a complex matrix). */
bsrmv_status bsrmv_coo_create_complex(bsrmv_coo **coo, int64_t m, int64_t n, int64_t nnz);
void bsrmv_coo_destroy(bsrmv_coo *coo);

/* Number of aligned bs x bs blocks that hold at least one entry of coo, as
 * an aligned split would make.  Fill ratio = nnzb*bs*bs / nnz. */
bsrmv_status bsrmv_coo_count_blocks(const bsrmv_coo *coo, int bs, int64_t *nnzb);

/* ------------------------------------------------------------------ */
/* Matrix Market I/O                                                   */
/* ------------------------------------------------------------------ */

/* Read a coordinate Matrix Market file (.mtx or gzip-compressed .mtx.gz,
 * detected from the content).  Fields real, integer, pattern (pattern
 * entries get the value 1) and complex (the COO gets imag); symmetric,
 * skew-symmetric and (complex only) hermitian files store one triangle
 * and are expanded to both (hermitian: A(j,i) = conj(A(i,j)), diagonal
 * entries real).  Values are finite decimal numbers (no nan, inf or
 * hexadecimal), integers at most 2^53 in magnitude.
 * Errors: BSRMV_ERR_IO (cannot open/read, damaged gzip data),
 * BSRMV_ERR_FORMAT (the message names the line and what is wrong),
 * BSRMV_ERR_UNSUPPORTED (array files); docs/ERRORS.md lists them all.
 * Prints nothing. */
bsrmv_status bsrmv_mm_read(const char *path, bsrmv_coo **coo);

/* Options of bsrmv_mm_read_opts; a zeroed struct is the default. */
typedef struct bsrmv_mm_options {
    int progress; /* non-zero: long reads print progress to stderr when it is
                     a terminal */
} bsrmv_mm_options;

/* bsrmv_mm_read with options (opt NULL: the defaults). */
bsrmv_status bsrmv_mm_read_opts(const char *path, bsrmv_coo **coo, const bsrmv_mm_options *opt);

/* Write coo as "coordinate real general" ("complex general" when coo->imag
 * is set), 1-based, 17 significant digits; a path ending in ".gz" is
 * written gzip-compressed.  NaN or infinite values: BSRMV_ERR_ARGUMENT
 * (the reader would refuse them). */
bsrmv_status bsrmv_mm_write(const char *path, const bsrmv_coo *coo);

/* ------------------------------------------------------------------ */
/* BSR matrix (opaque)                                                 */
/* ------------------------------------------------------------------ */

typedef struct bsrmv_matrix bsrmv_matrix;

/* Create a matrix by copying the caller's BSR arrays (checked first). */
bsrmv_status bsrmv_matrix_create(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                 int64_t nnzb, const int64_t *row_ptr,
                                 const int32_t *col_idx, const void *val,
                                 bsrmv_type type, bsrmv_order order);

/* Wrap the caller's BSR arrays without copying (checked first).  The
 * arrays must outlive the handle and must not change structure; values
 * may change between calls. */
bsrmv_status bsrmv_matrix_wrap(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                               int64_t nnzb, const int64_t *row_ptr,
                               const int32_t *col_idx, const void *val,
                               bsrmv_type type, bsrmv_order order);

/* Width of a matrix's row_ptr. */
typedef enum bsrmv_index {
    BSRMV_INDEX_64 = 0, /* int64_t: bsrmv_matrix_create, _wrap, every builder */
    BSRMV_INDEX_32 = 1  /* int32_t: bsrmv_matrix_create_i32, _wrap_i32        */
} bsrmv_index;

/* bsrmv_matrix_create and _wrap for a 32-bit row_ptr (so nnzb <= INT32_MAX):
 * the matrix keeps that width, copied or wrapped, and bsrmv_spmv,
 * bsrmv_spmm, bsrmv_solve, bsrmv_matrix_to_coo and bsrmv_gpu_matrix_upload
 * read it as they read a 64-bit one (the CPU kernels are compiled for both
 * widths; the upload widens it into the device copy, which is the
 * library's own).  bsrmv_dist_matrix_scatter takes 64-bit matrices only
 * (BSRMV_ERR_UNSUPPORTED).  Ownership and threads as for the 64-bit forms. */
bsrmv_status bsrmv_matrix_create_i32(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                     int64_t nnzb, const int32_t *row_ptr,
                                     const int32_t *col_idx, const void *val,
                                     bsrmv_type type, bsrmv_order order);
bsrmv_status bsrmv_matrix_wrap_i32(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                   int64_t nnzb, const int32_t *row_ptr,
                                   const int32_t *col_idx, const void *val,
                                   bsrmv_type type, bsrmv_order order);

/* How scalar entries become blocks when building from COO/CSR. */
typedef enum bsrmv_blocking {
    /* Cut the matrix into aligned bs x bs blocks; a block holding any entry
     * is stored whole, missing entries as explicit zeros.  The scalar matrix
     * is padded with zero rows/columns to a multiple of bs. */
    BSRMV_SPLIT = 0,
    /* Replace every scalar a_ij by the bs x bs block a_ij * ones: the
     * matrix grows to (m*bs) x (n*bs) with the same block pattern as the
     * scalar one (bsrmv_matrix_perturb_promoted in bsrmv_gen.h makes the
     * blocks non-constant for benchmarks). */
    BSRMV_PROMOTE = 1
} bsrmv_blocking;

/* Build a BSR matrix from COO (any order; duplicates are summed).  A finite
 * value or sum the type cannot hold: BSRMV_ERR_OVERFLOW (NaN and infinities
 * in the COO pass through).  A complex type takes coo->imag (NULL: zero
 * imaginary parts); a real type refuses a COO with a non-zero imaginary
 * part (BSRMV_ERR_UNSUPPORTED).  Scratch memory scales with the entries,
 * not with m and n. */
bsrmv_status bsrmv_matrix_from_coo(bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                   bsrmv_blocking how, bsrmv_type type, bsrmv_order order);

/* Build from 0-based scalar CSR (row_ptr[m+1], col_idx[nnz], val[nnz]);
 * columns need not be sorted, duplicates are summed. */
bsrmv_status bsrmv_matrix_from_csr(bsrmv_matrix **A, int64_t m, int64_t n,
                                   const int64_t *row_ptr, const int64_t *col_idx,
                                   const double *val, int bs, bsrmv_blocking how,
                                   bsrmv_type type, bsrmv_order order);

/* Scalar entries of A (explicit zeros inside blocks included) as COO; a
 * complex A gives a COO with imag. */
bsrmv_status bsrmv_matrix_to_coo(const bsrmv_matrix *A, bsrmv_coo **coo);

void bsrmv_matrix_destroy(bsrmv_matrix *A);

typedef struct bsrmv_matrix_info {
    int64_t mb, nb, nnzb;
    int bs;
    bsrmv_type type;
    bsrmv_order order;
    int64_t rows, cols;          /* mb*bs, nb*bs                      */
    int64_t row_len_min;         /* blocks in the shortest block row  */
    int64_t row_len_max;         /* blocks in the longest block row   */
    double row_len_mean;
    int64_t empty_rows;          /* block rows with no block          */
    int owns_arrays;             /* 1 if created by copy, 0 if wrapped */
    int symmetric;               /* a bsrmv_symmetry: 1 symmetric, 2
                                  * Hermitian storage (nnzb and the row
                                  * lengths count the stored blocks)    */
    bsrmv_type vector_type;      /* of x, y and the sums (== type unless
                                  * mixed precision)                    */
    bsrmv_index index;           /* width of row_ptr                  */
} bsrmv_matrix_info;

bsrmv_status bsrmv_matrix_get_info(const bsrmv_matrix *A, bsrmv_matrix_info *info);

/* Read-only views of the arrays (for uploading or exporting), valid while
 * A lives.  bsrmv_matrix_arrays for a matrix with a 64-bit row_ptr,
 * bsrmv_matrix_arrays_i32 for a 32-bit one (bsrmv_matrix_info.index says
 * which); the other one returns BSRMV_ERR_UNSUPPORTED and sets nothing.
 * For a matrix in symmetric storage these are the stored (upper) blocks
 * only. */
bsrmv_status bsrmv_matrix_arrays(const bsrmv_matrix *A, const int64_t **row_ptr,
                                 const int32_t **col_idx, const void **val);
bsrmv_status bsrmv_matrix_arrays_i32(const bsrmv_matrix *A, const int32_t **row_ptr,
                                     const int32_t **col_idx, const void **val);

/* Bytes one SpMV must move at least: val + col_idx + row_ptr (of its
 * width) + x + y (y counted once; reading it when beta != 0 is not
 * added), x and y in the vector type. */
double bsrmv_matrix_spmv_bytes(const bsrmv_matrix *A);

/* Mixed precision (docs/MIXED.md).  The type of x, y and the accumulation
 * of every product with A: the value type when A is made, and
 * BSRMV_DOUBLE may be set on a float matrix: bsrmv_spmv then reads float
 * values and double vectors and sums in double (the matrix moves half the
 * bytes; the result is exactly that of the float-rounded matrix in double
 * arithmetic).  The pairs built: (float, float), (double, double) and
 * (float, double); (double, float) gives BSRMV_ERR_UNSUPPORTED.  The pair
 * is read by bsrmv_spmv, bsrmv_solve, bsrmv_precond_block_jacobi (the
 * inverse blocks are stored in the vector type) and bsrmv_gpu_matrix_upload
 * (the device handle inherits it), bsrmv_spmm and bsrmv_gpu_spmm (X and Y
 * in double).
 * A complex matrix keeps its own type (another: BSRMV_ERR_UNSUPPORTED).
 * Changes the handle: not while other threads use it. */
bsrmv_status bsrmv_matrix_set_vector_type(bsrmv_matrix *A, bsrmv_type vector_type);

/* *B = a new matrix with A's structure and block order and its values
 * rounded to `type` (round to nearest); B owns its arrays, its vector type
 * is `type`.  A finite value beyond the range of `type`: BSRMV_ERR_OVERFLOW
 * (NaN and infinities pass through).  With bsrmv_matrix_set_vector_type
 * it makes the float copy of a double matrix for mixed precision.  Real
 * to complex gives zero imaginary parts; complex to real:
 * BSRMV_ERR_UNSUPPORTED. */
bsrmv_status bsrmv_matrix_convert(bsrmv_matrix **B, const bsrmv_matrix *A, bsrmv_type type);

/* ------------------------------------------------------------------ */
/* Symmetric storage (docs/SYMMETRIC.md)                               */
/* ------------------------------------------------------------------ */

/* A square matrix with A(J,I) = A(I,J)^T blockwise can be stored by its
 * diagonal blocks (whole) and the blocks above the diagonal: the arrays
 * are those of a BSR matrix whose block rows hold only columns >= the row.
 * bsrmv_spmv and bsrmv_gpu_spmv compute with both triangles, moving about
 * half the bytes of the full matrix; OP_T is OP_N.  The diagonal blocks
 * are used as stored (they should be symmetric; bsrmv_matrix_to_sym
 * checks it, create/wrap do not look at values).  The solvers take such
 * a matrix, and so do bsrmv_spmm (one pass over the stored blocks per 16
 * vectors) and the MPI scatter and host ranks
 * (bsrmv_mpi.h).  Entry points that read the arrays as a full matrix
 * refuse it with BSRMV_ERR_UNSUPPORTED: bsrmv_gpu_spmm, bsrmv_dist_spmm
 * and GPU ranks; bsrmv_matrix_to_coo expands both triangles.
 *
 * Complex values come in two kinds of this storage: symmetric (the _sym
 * functions: A = A^T, as in electromagnetics; OP_C is conj(A)) and
 * Hermitian (the _herm functions: A(J,I) = A(I,J)^H, the diagonal blocks
 * Hermitian; OP_C is OP_N and OP_T is conj(A)).  For real types the _herm
 * functions make symmetric storage.  The CPU SpMV and solvers and the GPU
 * backend (upload, SpMV with every op, solvers) take both. */

/* The kind of storage a matrix has (bsrmv_matrix_info.symmetric). */
typedef enum bsrmv_symmetry {
    BSRMV_SYM_NONE = 0,      /* full storage                              */
    BSRMV_SYM_SYMMETRIC = 1, /* upper blocks; A(J,I) = A(I,J)^T           */
    BSRMV_SYM_HERMITIAN = 2  /* upper blocks; A(J,I) = A(I,J)^H (complex)  */
} bsrmv_symmetry;

/* Create (copy) or wrap nb x nb blocks in symmetric storage from the
 * diagonal and upper blocks.  Checked as bsrmv_matrix_create, and a block
 * below the diagonal gives BSRMV_ERR_STRUCTURE. */
bsrmv_status bsrmv_matrix_create_sym(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                     const int64_t *row_ptr, const int32_t *col_idx,
                                     const void *val, bsrmv_type type, bsrmv_order order);
bsrmv_status bsrmv_matrix_wrap_sym(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                   const int64_t *row_ptr, const int32_t *col_idx,
                                   const void *val, bsrmv_type type, bsrmv_order order);
/* The same for Hermitian storage (the diagonal blocks should be Hermitian;
 * their values are used as stored). */
bsrmv_status bsrmv_matrix_create_herm(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                      const int64_t *row_ptr, const int32_t *col_idx,
                                      const void *val, bsrmv_type type, bsrmv_order order);
bsrmv_status bsrmv_matrix_wrap_herm(bsrmv_matrix **A, int64_t nb, int bs, int64_t nnzb,
                                    const int64_t *row_ptr, const int32_t *col_idx,
                                    const void *val, bsrmv_type type, bsrmv_order order);

/* S = the symmetric storage of the full matrix A (a new owned matrix, same
 * type and order).  Every entry is compared with its mirror:
 * |a_ij - a_ji| <= tol * max(|a_ij|, |a_ji|) (tol = 0: exactly equal; a
 * missing block counts as zeros).  The upper triangle of A is kept.
 * Errors: BSRMV_ERR_DIMENSION (not square), BSRMV_ERR_ARGUMENT (tol < 0 or
 * NaN; not symmetric: the message names the first entry that differs),
 * BSRMV_ERR_UNSUPPORTED (A already symmetric), BSRMV_ERR_NOMEM. */
bsrmv_status bsrmv_matrix_to_sym(bsrmv_matrix **S, const bsrmv_matrix *A, double tol);
/* The same for Hermitian storage: |a_ij - conj(a_ji)| <= tol * max(|a_ij|,
 * |a_ji|) (moduli of complex values; the diagonal's imaginary parts are
 * compared with their negatives, so they must be zero within tol). */
bsrmv_status bsrmv_matrix_to_herm(bsrmv_matrix **S, const bsrmv_matrix *A, double tol);

/* A = the full storage of S (symmetric storage): every stored block and
 * the transpose (Hermitian: conjugate transpose) of every block above the
 * diagonal, a new owned matrix.
 * BSRMV_ERR_ARGUMENT if S is not in symmetric storage. */
bsrmv_status bsrmv_matrix_from_sym(bsrmv_matrix **A, const bsrmv_matrix *S);

/* Symmetric storage from COO entries of one triangle (either; entries in
 * both strict triangles: BSRMV_ERR_STRUCTURE; square m == n, else
 * BSRMV_ERR_DIMENSION): the matrix the triangle and its mirror make,
 * built as bsrmv_matrix_from_coo would build it, without expanding the
 * entries.  bsrmv_mm_read_sym gives such a COO from a symmetric Matrix
 * Market file. */
bsrmv_status bsrmv_matrix_from_coo_sym(bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                       bsrmv_blocking how, bsrmv_type type, bsrmv_order order);
/* The same for Hermitian storage: an entry below the diagonal stands for
 * its conjugate above it.  bsrmv_mm_read_sym gives such a COO from a
 * hermitian file. */
bsrmv_status bsrmv_matrix_from_coo_herm(bsrmv_matrix **A, const bsrmv_coo *coo, int bs,
                                        bsrmv_blocking how, bsrmv_type type,
                                        bsrmv_order order);

/* Read a Matrix Market file as bsrmv_mm_read does, but a "symmetric" file
 * keeps its one triangle, returned as the upper one (an entry stored below
 * the diagonal comes back mirrored), and *symmetric = BSRMV_SYM_SYMMETRIC;
 * a "hermitian" one the same (mirrored entries conjugated), and
 * *symmetric = BSRMV_SYM_HERMITIAN; general and skew-symmetric files come
 * back as bsrmv_mm_read gives them, with *symmetric = 0.  Errors as
 * bsrmv_mm_read. */
bsrmv_status bsrmv_mm_read_sym(const char *path, bsrmv_coo **coo, int *symmetric);

/* Write S (symmetric or Hermitian storage) as a Matrix Market coordinate
 * file of its lower triangle: "real symmetric", "complex symmetric" or
 * "complex hermitian", every entry of the stored blocks that falls on or
 * below the diagonal after mirroring (explicit zeros included); ".gz"
 * compresses.  BSRMV_ERR_ARGUMENT for a full-storage S or, Hermitian, a
 * diagonal entry with a non-zero imaginary part (the format has none);
 * BSRMV_ERR_IO. */
bsrmv_status bsrmv_mm_write_sym(const char *path, const bsrmv_matrix *S);

/* ------------------------------------------------------------------ */
/* CPU SpMV                                                            */
/* ------------------------------------------------------------------ */

/* Which CPU kernel bsrmv_spmv uses for this matrix. */
typedef enum bsrmv_cpu_kernel {
    /* Compile-time block size where one is built (bs 1..8, 11, 12, 15, 16, 24, 32),
     * else the generic kernel; at bs 2..6 op N takes the variant for rows
     * of a few blocks (one accumulator set) when the matrix has fewer than
     * 8 blocks per block row on average, else several sets. */
    BSRMV_CPU_AUTO = 0,
    /* The runtime-bs kernel for every bs (the baseline that shows what
     * specialisation gains). */
    BSRMV_CPU_GENERIC = 1
} bsrmv_cpu_kernel;

bsrmv_status bsrmv_matrix_set_cpu_kernel(bsrmv_matrix *A, bsrmv_cpu_kernel k);

/* 1 if this build has a compile-time CPU kernel for block size bs (what
 * BSRMV_CPU_AUTO then runs), else 0. */
int bsrmv_cpu_has_kernel(int bs);

/* y = alpha*op(A)*x + beta*y on the host, with OpenMP threads; x and y of
 * A's vector type (complex ones included: OP_C is A^H; alpha and beta are
 * real here, complex through bsrmv_spmv_scalars)
 * (omp_get_max_threads(), i.e. OMP_NUM_THREADS or omp_set_num_threads).
 * nx and ny are the lengths of x and y (checked against op(A)).
 * beta == 0: y is only written (NaN/Inf in y do not propagate).
 * alpha == 0: A and x are not read; y = beta*y.
 * x and y must not overlap (BSRMV_ERR_ARGUMENT when they do and alpha != 0). */
bsrmv_status bsrmv_spmv(bsrmv_op op, double alpha, const bsrmv_matrix *A,
                        const void *x, int64_t nx, double beta, void *y, int64_t ny);

/* bsrmv_spmv with alpha and beta given as pointers to one value each of
 * A's vector type (float, double, float _Complex or double _Complex; the
 * cuSPARSE convention), the way to pass complex scalars.  NULL alpha or
 * beta: BSRMV_ERR_ARGUMENT.  Otherwise as bsrmv_spmv. */
bsrmv_status bsrmv_spmv_scalars(bsrmv_op op, const void *alpha, const bsrmv_matrix *A,
                                const void *x, int64_t nx, const void *beta, void *y,
                                int64_t ny);

/* Threads bsrmv_spmv will use (for reports). */
int bsrmv_num_threads(void);

/* How the k vectors of a multivector are stored (docs/SPMM.md). */
typedef enum bsrmv_layout {
    /* Column-major with leading dimension ld >= max(1, n): entry (i, j) at
     * X[i + j*ld] (BLAS, cuSPARSE SpMM "column"). */
    BSRMV_LAYOUT_COL = 0,
    /* Row-major (interleaved) with ld >= k: entry (i, j) at X[i*ld + j]. */
    BSRMV_LAYOUT_ROW = 1
} bsrmv_layout;

/* Y = alpha*op(A)*X + beta*Y for k vectors at once on the host (SpMM): A
 * is read once per 16 vectors (any k <= 16 in one pass).  Every value
 * type: for the complex ones OP_C is A^H, and alpha and beta are real here
 * (complex through bsrmv_spmm_scalars); symmetric and Hermitian storage
 * read their stored half once per pass.  X has the
 * columns of op(A) as rows, Y its rows, both k columns wide, both in
 * `layout` with leading dimensions ldx and ldy, of A's vector type (for
 * a mixed-precision matrix float values times double vectors, summed in
 * double).  The caller owns X and Y; the call only reads A and X, so several
 * threads may multiply the same A at once (into different Y).
 * beta == 0: Y is only written (NaN/Inf in Y do not propagate).
 * alpha == 0: A and X are not read (X may be NULL); Y = beta*Y.
 * Entries of Y outside the k columns (the padding of ld) are not touched.
 * X and Y must not overlap: the memory from the first to the last entry
 * of each (padding included) is compared, also when beta == 0.
 * Errors: BSRMV_ERR_ARGUMENT (NULL, k < 1, unknown op or layout, ld too
 * small, X and Y overlapping), BSRMV_ERR_OVERFLOW (ld*k beyond
 * the address space), BSRMV_ERR_NOMEM. */
bsrmv_status bsrmv_spmm(bsrmv_op op, double alpha, const bsrmv_matrix *A, int k,
                        const void *X, int64_t ldx, double beta, void *Y, int64_t ldy,
                        bsrmv_layout layout);

/* bsrmv_spmm with alpha and beta given as pointers to one value each of
 * A's vector type (as bsrmv_spmv_scalars), the way to pass complex
 * scalars.  NULL alpha or beta: BSRMV_ERR_ARGUMENT.  Otherwise as
 * bsrmv_spmm. */
bsrmv_status bsrmv_spmm_scalars(bsrmv_op op, const void *alpha, const bsrmv_matrix *A, int k,
                                const void *X, int64_t ldx, const void *beta, void *Y,
                                int64_t ldy, bsrmv_layout layout);

/* ------------------------------------------------------------------ */
/* Iterative solvers: A x = b for square A (mb == nb) (docs/SOLVERS.md) */
/* ------------------------------------------------------------------ */

typedef enum bsrmv_solver {
    BSRMV_SOLVER_CG = 0,       /* preconditioned conjugate gradients (SPD A) */
    BSRMV_SOLVER_BICGSTAB = 1, /* preconditioned BiCGSTAB (general A)        */
    BSRMV_SOLVER_GMRES = 2     /* right-preconditioned restarted GMRES(m)    */
} bsrmv_solver;

/* Block-Jacobi preconditioner on the host: the inverse of every bs x bs
 * diagonal block, computed by LU with partial pivoting (in double, stored
 * in the matrix type).  A block row with no diagonal block, or a singular
 * one (a pivot below 4*bs*eps(type)*max|block entry|), gives
 * BSRMV_ERR_SINGULAR and the message names the first such block row. */
typedef struct bsrmv_precond bsrmv_precond;
bsrmv_status bsrmv_precond_block_jacobi(bsrmv_precond **P, const bsrmv_matrix *A);
void bsrmv_precond_destroy(bsrmv_precond *P);
/* z = P^-1 r (n = mb*bs values of the matrix type; r, z must not overlap:
 * BSRMV_ERR_ARGUMENT). */
bsrmv_status bsrmv_precond_apply(const bsrmv_precond *P, const void *r, void *z, int64_t n);

typedef struct bsrmv_solve_options {
    double rtol;      /* stop when ||b - A x||_2 <= rtol*||b||_2; 0: 1e-8       */
    int max_iter;     /* 0: 1000                                              */
    int restart;      /* GMRES(m); 0: 30                                      */
    int x0_zero;      /* 1: start from x = 0 without reading x                */
    /* Called after every iteration with the recurrence's relative residual
     * (may be NULL); a non-zero return stops the solve: the call returns
     * BSRMV_ERR_NOT_CONVERGED with x the current iterate. */
    int (*monitor)(int iter, double rel_residual, void *ctx);
    void *monitor_ctx;
    /* bsrmv_solve_refined: the relative residual the first correction is
     * solved to (later ones stop once rtol is in reach); 0: 1e-6 */
    double inner_rtol;
} bsrmv_solve_options;

typedef struct bsrmv_solve_report {
    int iterations;
    int converged;
    double rel_residual;      /* from the recurrence                         */
    double true_rel_residual; /* ||b - A x||_2 / ||b||_2 recomputed at exit  */
    double seconds;           /* wall time of the iterations                 */
    double bytes;             /* memory traffic of the iterations: matrix,
                               * inverse blocks and vectors as the fused
                               * passes move them (docs/SOLVERS.md)          */
    int refinements;          /* bsrmv_solve_refined: corrections solved     */
} bsrmv_solve_report;

/* Solve A x = b on the host.  P may be NULL (no preconditioner).  n is the
 * length of b and x, which must not overlap (BSRMV_ERR_ARGUMENT).  opt may
 * be NULL (defaults).  Float matrices solve in float with dot products
 * accumulated in double: ask for rtol >= ~1e-6.  A mixed-precision matrix
 * solves in double for its float values (b, x and P in double);
 * bsrmv_solve_refined reaches the double matrix's own residual.
 * Convergence of the recurrence is confirmed on the true residual (and the
 * method restarted from it if it drifted).  b == 0 gives x = 0, converged.
 * Returns BSRMV_ERR_NOT_CONVERGED when the limit is hit, the method breaks
 * down or stagnates, or the monitor stops it (x holds the last iterate,
 * report is filled, the message says which); BSRMV_ERR_DIMENSION for a
 * non-square A, n != mb*bs or a P built for another shape or type;
 * BSRMV_ERR_ARGUMENT for NaN or Inf in b, or in the starting residual
 * b - A x (x, without x0_zero, or A).  Complex A, b and x (the type of A):
 * dots are x^H y, CG for Hermitian positive definite A (docs/SOLVERS.md).
 * Deterministic for a given thread count. */
bsrmv_status bsrmv_solve(bsrmv_solver method, const bsrmv_matrix *A, const bsrmv_precond *P,
                         const void *b, void *x, int64_t n, const bsrmv_solve_options *opt,
                         bsrmv_solve_report *report);

/* Mixed precision (docs/MIXED.md): A x = b to A's double residual with
 * the iterations on Af, A's float copy set to double vectors
 * (bsrmv_matrix_convert, bsrmv_matrix_set_vector_type), whose SpMV moves
 * about half the bytes.  Iterative refinement: r = b - A x in double, the
 * correction d from `method` on Af d = r (preconditioned by P, built from
 * Af or A: double inverse blocks), x += d, until ||b - A x|| <= rtol ||b||.
 * The first correction is solved to opt->inner_rtol, later ones only as
 * far as rtol needs.  report->iterations counts the method's iterations
 * over all corrections, ->refinements the corrections, ->rel_residual and
 * ->true_rel_residual the last true residual; ->bytes includes A's SpMVs.
 * A step that does not halve the true residual (Af too coarse for an
 * ill-conditioned A) stops with BSRMV_ERR_NOT_CONVERGED, x the last
 * iterate, as do the iteration limit (over all corrections) and the
 * monitor (called once per correction with the true residual).  A must be
 * double with double vectors and Af of A's shape with double vectors
 * (BSRMV_ERR_ARGUMENT, BSRMV_ERR_DIMENSION); other errors as bsrmv_solve. */
bsrmv_status bsrmv_solve_refined(bsrmv_solver method, const bsrmv_matrix *A,
                                 const bsrmv_matrix *Af, const bsrmv_precond *P, const void *b,
                                 void *x, int64_t n, const bsrmv_solve_options *opt,
                                 bsrmv_solve_report *report);

/* Several right-hand sides (docs/SOLVERS.md): A X = B for the k columns of
 * B, column-major n x k with leading dimension ldb (column j at B + j*ldb),
 * into X (ldx), the vector type of A.  Every column runs its own
 * recurrence of `method` (its own scalars, stopping test, restarts), as
 * bsrmv_solve would for it alone; the matrix products of all unfinished
 * columns are done together, one SpMM per product of the method (A read
 * once per 16 columns), and a column drops out when it has converged (a
 * zero column at once, x = 0).  Each column's iterates are those of
 * bsrmv_solve up to the rounding of the SpMM (a product that runs as
 * SpMVs, as bsrmv_gpu_spmm does for few columns of symmetric storage:
 * the same bits).  reports: k entries
 * (may be NULL), each as bsrmv_solve fills it; their seconds span the
 * joint solve, their bytes count every product as a separate SpMV.
 * opt->monitor is called for every column's iterations (the column is not
 * passed).  B and X must not overlap (over their spans, ld included); with
 * x0_zero X is only written.  Returns BSRMV_SUCCESS when every column has
 * converged; BSRMV_ERR_NOT_CONVERGED when one has not (the others are still
 * solved; the message names the first such column, the reports say which);
 * BSRMV_ERR_ARGUMENT for k < 1 or ldb, ldx < max(1, n), BSRMV_ERR_OVERFLOW
 * for spans beyond the address space; other errors as bsrmv_solve (an
 * error other than non-convergence stops every column).  Runs on the
 * calling thread (each column on a stack of its own, 1 MiB reserved);
 * thread safety as bsrmv_solve. */
bsrmv_status bsrmv_solve_multi(bsrmv_solver method, const bsrmv_matrix *A,
                               const bsrmv_precond *P, int64_t n, int k, const void *B,
                               int64_t ldb, void *X, int64_t ldx, const bsrmv_solve_options *opt,
                               bsrmv_solve_report *reports);

/* ------------------------------------------------------------------ */
/* GPU (CUDA) backend.  Declared in every build; without CUDA the       */
/* functions return BSRMV_ERR_NO_DEVICE.                               */
/* ------------------------------------------------------------------ */

/* A BSR matrix in device memory plus its plan: row-length statistics and
 * the kernel and launch geometry chosen once, when the handle is made (like
 * cuSPARSE's preprocess or MKL's inspector).  Not thread-safe per handle. */
typedef struct bsrmv_gpu_matrix bsrmv_gpu_matrix;

/* Kernel families (docs/GPU.md). */
typedef enum bsrmv_gpu_kernel {
    BSRMV_GPU_AUTO = 0,           /* tune table, else the default rule      */
    BSRMV_GPU_BY_BLOCK = 1,       /* Eberhardt-Hoemmen by-block, bs <= 5    */
    BSRMV_GPU_BY_COLUMN = 2,      /* by-column, sub-warp groups, bs <= 32   */
    BSRMV_GPU_ROW_PER_THREAD = 3, /* row per thread, x in shared memory     */
    BSRMV_GPU_K1_SMALL = 4,       /* KSPARSE K1: truncated warps, bs <= 5   */
    BSRMV_GPU_K2_MEDIUM = 5,      /* KSPARSE K2: thread arrays, register blocking */
    BSRMV_GPU_K3_LARGE = 6,       /* KSPARSE K3: several thread blocks per row */
    BSRMV_GPU_TRANSPOSE = 7,      /* op = T (atomic scatter); chosen for OP_T */
    /* Load-balanced kernels for irregular row lengths (bs <= 32): one kernel,
     * three ways to cut the work, each made once by the plan; rows cut
     * between work units are finished by a fix-up pass (deterministic).
     * SEGMENTED and FRAGMENT with threads 0 (bs >= 2): K3 thread blocks
     * walk the units, group = column phases, rows = slices per block row;
     * FRAGMENT with threads 0 and rows 0: K2 thread arrays (group = NTG)
     * walk them instead, column-major blocks of bs 12, 16, 24 and 32. */
    BSRMV_GPU_SEGMENTED = 8,      /* KSPARSE: rows longer than param blocks split */
    BSRMV_GPU_MERGE_PATH = 9,     /* units of param block rows + blocks     */
    BSRMV_GPU_FRAGMENT = 10,      /* Yin et al.: units of param blocks      */
    BSRMV_GPU_WIDE = 11,          /* a group per block row, 16-byte loads along
                                   * a block's rows or columns, bs 2, 4, 8..32
                                   * (complex values: docs/COMPLEX.md) */
    BSRMV_GPU_VEC_STREAM = 12,    /* 1..32 block rows per warp, 16-byte loads
                                   * along each row's run of val, bs 2-6, 8
                                   * (group is ignored: 32) */
    BSRMV_GPU_STAGED = 13,        /* runs of block rows copied to shared memory
                                   * by the copy engine (sm_90 and later),
                                   * bs 2-8, 12; buffers sized by the longest
                                   * row; val or col_idx not 16-byte aligned
                                   * (wrapped arrays): runs by-column */
    /* Symmetric storage only (and the only kernels for it): a warp per block
     * row, every stored block read once for its row and its mirror; a
     * thread block's window of rows*threads/32 block rows keeps its sums in
     * shared memory (window bytes rows*threads/32*bs*sizeof value <= 48 KiB,
     * threads <= 256).  Results vary in the last bits between calls. */
    BSRMV_GPU_SYM_ATOMIC = 14,    /* mirrored blocks: global atomics        */
    BSRMV_GPU_SYM_WINDOW = 15,    /* mirrored blocks inside the window:
                                   * shared atomics, the rest global; the
                                   * plan's choice */
    BSRMV_GPU_LANE_BLOCK = 16     /* a lane per block, group lanes per block
                                   * row (4, 8, 16; at least bs rounded up to
                                   * a power of two), rows 1, param 0, bs 2-8,
                                   * float and double */
} bsrmv_gpu_kernel;

/* A kernel and its tuning parameters; 0 means "the family's default".
 *  group:   lanes per block row (BY_BLOCK, K1, BY_COLUMN, WIDE: 8, 16, 32; at
 *           bs 1 BY_COLUMN g1 is the scalar CSR kernel, g4..32 the vector
 *           one; LANE_BLOCK: 4, 8, 16), lanes per work unit (balanced
 *           kernels; MERGE_PATH: 32 streams the unit, 1 = each lane walks
 *           its own stretch of it, bs <= 8), or thread groups per block
 *           (K2: NTG), or
 *           threads per row of a slice (K3: NTG; row-major 1..32, a power
 *           of two), or lanes per scalar row (STAGED: 1..32, a power of two)
 *  rows:    consecutive block rows per group / thread array (VEC_STREAM:
 *           block rows per warp, one per slot of 32/rows lanes; at most
 *           32 / (lcm(bs*bs, 16/sizeof value) * sizeof value / 16);
 *           STAGED: stages the gather of x runs ahead of compute, 1 or 2;
 *           a stage is threads / (group*bs) block rows; MERGE_PATH group
 *           1: 2 to 4 = unit buffers per warp that the copy engine fills
 *           with the units' col_idx and row_ptr ahead of compute, bs 2 and
 *           4 on sm_90 and later only (elsewhere UNSUPPORTED), a unit
 *           size that does not fit shared memory UNSUPPORTED too;
 *           col_idx or row_ptr not 16-byte aligned (wrapped arrays): runs
 *           as rows 1; 1 = none)
 *  threads: threads per thread block (all but K2, K3)
 *  param:   ROW_PER_THREAD: blocks of x staged per step; K2: thread arrays
 *           per thread block; K3: row slices per block row (a thread block
 *           each, at most 512 threads); BY_COLUMN: > 0 selects the
 *           flat-stream mode; STAGED: stage buffers, 3 or 4 (>= rows + 2);
 *           balanced kernels: the work-unit size (see the enum); SYM
 *           kernels: 0 */
typedef struct bsrmv_gpu_config {
    bsrmv_gpu_kernel kernel;
    int group, rows, threads, param;
} bsrmv_gpu_config;

/* The plan of a device matrix. */
typedef struct bsrmv_gpu_plan_info {
    int device;
    int64_t mb, nb, nnzb;
    int bs;
    bsrmv_type type;
    bsrmv_order order;
    int64_t row_len_min, row_len_max, empty_rows;
    double row_len_mean, row_len_std;
    bsrmv_gpu_config config;   /* what bsrmv_gpu_spmv(OP_N) launches        */
    int from_tune_table;       /* 1: config came from the tune file; 2: from
                                  bsrmv_gpu_matrix_tune; 0: the built-in table */
    int owns_arrays;           /* 1 if uploaded, 0 if wrapped               */
    size_t device_bytes;       /* device memory the handle allocated        */
    bsrmv_type vector_type;    /* of x and y: type, or double for a float
                                  matrix uploaded with mixed precision      */
} bsrmv_gpu_plan_info;

/* Number of CUDA devices (0 when none or no driver: then BSRMV_ERR_NO_DEVICE
 * with the reason in bsrmv_last_error()). */
bsrmv_status bsrmv_gpu_device_count(int *count);

/* "NVIDIA H100 80GB HBM3" etc. */
bsrmv_status bsrmv_gpu_device_name(int device, char *name, size_t len);

/* Copy a host matrix to `device` (stream may be NULL: the legacy default
 * stream; the copy is complete when the call returns).  A matrix in
 * symmetric storage stays so on the device (the SYM kernels); where its
 * full storage fits the device's L2 cache, the handle also
 * holds that full storage (about twice the stored bytes more), which the
 * plan runs: there the SYM kernels' atomics cost more than the bytes they
 * save (docs/SYMMETRIC.md).  A configuration set by hand runs on the
 * symmetric arrays.  The device
 * matrix keeps A's vector type: a mixed-precision A (float values, double
 * vectors; bs <= 32) multiplies double x and y with the by-block,
 * by-column, wide, vector-stream and staged kernels, chosen from the
 * plan's rows for the pair and its float rows; op T and symmetric
 * storage are not built for it (BSRMV_ERR_UNSUPPORTED).  Complex matrices
 * (bs <= 32) upload, wrap, multiply (SpMV and SpMM, every op) and solve;
 * the refined solve and the benchmark's gather bound refuse them
 * (docs/COMPLEX.md). */
bsrmv_status bsrmv_gpu_matrix_upload(bsrmv_gpu_matrix **dA, const bsrmv_matrix *A,
                                     int device, void *stream);

/* Wrap BSR arrays already in device memory of `device` (no copy).  The
 * pointers must be device (or managed) memory: a host pointer gives
 * BSRMV_ERR_ARGUMENT.  row_ptr is copied to the host once to build the plan
 * (and checked: row_ptr[0] == 0, non-decreasing, row_ptr[mb] == nnzb); the
 * arrays must outlive the handle. */
bsrmv_status bsrmv_gpu_matrix_wrap(bsrmv_gpu_matrix **dA, int64_t mb, int64_t nb, int bs,
                                   int64_t nnzb, const int64_t *d_row_ptr,
                                   const int32_t *d_col_idx, const void *d_val,
                                   bsrmv_type type, bsrmv_order order, int device);

void bsrmv_gpu_matrix_destroy(bsrmv_gpu_matrix *dA);

/* y = alpha*op(A)*x + beta*y with x and y in device memory, enqueued on
 * `stream` (a cudaStream_t; NULL = default stream); asynchronous.  nx, ny
 * as for bsrmv_spmv.  beta == 0 never reads y; alpha == 0 reads neither A
 * nor x.  x and y must not overlap (BSRMV_ERR_ARGUMENT).  The balanced
 * kernels (merge path, fragment, segmented) keep partial sums in the
 * handle's own device memory: products of one handle must not run on two
 * streams at once (one stream per handle, or a handle per stream).
 * Errors: BSRMV_ERR_ARGUMENT (host pointer for x or y, NULL, overlap),
 * BSRMV_ERR_DIMENSION, BSRMV_ERR_DEVICE (launch failure). */
bsrmv_status bsrmv_gpu_spmv(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA,
                            const void *d_x, int64_t nx, double beta, void *d_y,
                            int64_t ny, void *stream);

/* bsrmv_gpu_spmv with alpha and beta given as host pointers to one value
 * each of dA's vector type (float, double, float _Complex or double
 * _Complex; the cuSPARSE convention), the way to pass complex scalars; read
 * before the call returns.  OP_C of a complex matrix multiplies by the
 * conjugate transpose; OP_T and OP_C scatter with atomic adds (the sums are
 * not bitwise reproducible from run to run).  NULL alpha or beta:
 * BSRMV_ERR_ARGUMENT.  Otherwise as bsrmv_gpu_spmv (stream, asynchrony,
 * checks, errors, one stream per handle). */
bsrmv_status bsrmv_gpu_spmv_scalars(bsrmv_op op, const void *alpha, const bsrmv_gpu_matrix *dA,
                                    const void *d_x, int64_t nx, const void *beta, void *d_y,
                                    int64_t ny, void *stream);

/* Y = alpha*op(A)*X + beta*Y for k vectors with X and Y in device memory
 * (SpMM; docs/SPMM.md), enqueued on `stream` (NULL = default stream);
 * asynchronous.  Layouts, leading dimensions, checks and errors as for
 * bsrmv_spmm (plus BSRMV_ERR_ARGUMENT for host pointers, BSRMV_ERR_DEVICE
 * for a failed launch): beta == 0 never reads Y, alpha == 0 reads neither A
 * nor X (X may be NULL), padding entries of Y are not touched, X and Y
 * must not overlap.  A is streamed once per 16 vectors.  k == 1 with a
 * contiguous vector (column layout, or ld 1) is bsrmv_gpu_spmv with the
 * matrix's plan.  OP_T scatters with atomic adds: its float sums are not
 * bitwise reproducible from run to run.  A column-major X (k >= 2) is
 * first copied row-major into scratch that the handle keeps (cols x
 * min(k, 16) values, allocated by the first call that needs more; then
 * the call synchronises the device): as for bsrmv_gpu_spmv, calls on one
 * handle must not run on two streams at once.  X, Y and the sums are in
 * dA's vector type: double for float values with double vectors (mixed
 * precision, both ops); complex values take complex X and Y (scalars
 * through bsrmv_gpu_spmm_scalars).  Symmetric and Hermitian storage, every
 * op: on the full copy where the handle keeps one, else two passes over
 * the stored blocks (the second scatters with atomic adds, so its sums are
 * not bitwise reproducible either; float values with double vectors there:
 * BSRMV_ERR_UNSUPPORTED, as for bsrmv_gpu_spmv). */
bsrmv_status bsrmv_gpu_spmm(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA, int k,
                            const void *d_X, int64_t ldx, double beta, void *d_Y, int64_t ldy,
                            bsrmv_layout layout, void *stream);

/* bsrmv_gpu_spmm with alpha and beta given as host pointers to one value
 * each of dA's vector type, as bsrmv_gpu_spmv_scalars takes them: the way
 * to pass complex scalars.  OP_C of a complex matrix multiplies by the
 * conjugate transpose.  NULL alpha or beta: BSRMV_ERR_ARGUMENT; otherwise
 * as bsrmv_gpu_spmm. */
bsrmv_status bsrmv_gpu_spmm_scalars(bsrmv_op op, const void *alpha, const bsrmv_gpu_matrix *dA,
                                    int k, const void *d_X, int64_t ldx, const void *beta,
                                    void *d_Y, int64_t ldy, bsrmv_layout layout, void *stream);

/* Force a kernel (cfg->kernel == BSRMV_GPU_AUTO or cfg == NULL: back to the
 * automatic choice).  BSRMV_ERR_UNSUPPORTED if that kernel/parameter set is
 * not built for this bs. */
bsrmv_status bsrmv_gpu_matrix_set_config(bsrmv_gpu_matrix *dA, const bsrmv_gpu_config *cfg);

bsrmv_status bsrmv_gpu_matrix_get_plan(const bsrmv_gpu_matrix *dA, bsrmv_gpu_plan_info *info);

/* "by_column", "k2_medium", ... and "by_column/g8/r4/t256/p0". */
const char *bsrmv_gpu_kernel_name(bsrmv_gpu_kernel k);
void bsrmv_gpu_config_string(const bsrmv_gpu_config *cfg, char *buf, size_t len);

/* Tune file: rows of the plan's table that come before the built-in one
 * (docs/GPU.md, "The plan").  Lines
 *   type order bs kernel/gG/rR/tT/pP [feature<value ...]
 * e.g. "double col 3 by_column/g16/r4/t256/p0 mean<12", or as `bsrmv tune`
 * writes them, "double col 3 by_column 16 4 256 0"; '#' starts a comment.
 * Loaded from path, or with path == NULL from $BSRMV_TUNE_FILE (nothing if
 * unset).  Plans made after the call read it; the first plan loads
 * $BSRMV_TUNE_FILE by itself.  Thread-safe. */
bsrmv_status bsrmv_gpu_load_tune_file(const char *path);

/* The measured choice, for a matrix that will be multiplied many times (a
 * solver): times the table's choice and the other configurations that
 * apply (bsrmv_gpu_candidates) on the matrix itself, reps calls each (0:
 * 10), on `stream`, and keeps the one of the lowest median; another
 * configuration must beat the table's by 1%.  max_candidates > 0 times only
 * that many others, the first in the plan's order: the configurations the
 * table would try next for this matrix (the next-ranked of its vote among
 * measured matrices, then its other matching rows), which makes a few
 * candidates a cheap choice (docs/GPU.md); 0 times them all.  Each timed call is timed as in a solver's loop: after a CG
 * iteration's other memory traffic (10 vectors of the matrix's rows, at
 * most 4x the L2) and a 20 us stall, so that a matrix that fits in L2 is
 * timed as a solver finds it.  *ms, if not NULL, gets the GPU time it
 * took (docs/GPU.md).  Uses scratch vectors and that traffic's buffer of
 * its own; the handle must not be in use by another thread meanwhile. */
bsrmv_status bsrmv_gpu_matrix_tune(bsrmv_gpu_matrix *dA, int max_candidates, int reps, void *stream,
                                   double *ms);

/* GPU solvers: the same methods (the same source, src/solve/) with A, P, b
 * and x on the device, all work enqueued on `stream` (NULL: the default
 * stream); the call returns when the solve is done.  Only the scalars a
 * Krylov method must inspect travel to the host (one small copy per
 * reduction point); dot products are two-stage device reductions in double,
 * deterministic on a given device.  Complex matrices as on the host (x^H y
 * dots; CG for Hermitian positive definite ones); bsrmv_gpu_solve_refined
 * is real only.  The preconditioner is uploaded from a host one
 * (bs <= 1024); errors as for bsrmv_solve plus the device ones
 * (BSRMV_ERR_DEVICE_NOMEM, BSRMV_ERR_ARGUMENT for host pointers). */
typedef struct bsrmv_gpu_precond bsrmv_gpu_precond;
bsrmv_status bsrmv_gpu_precond_upload(bsrmv_gpu_precond **dP, const bsrmv_precond *P,
                                      int device);
void bsrmv_gpu_precond_destroy(bsrmv_gpu_precond *dP);
bsrmv_status bsrmv_gpu_solve(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                             const bsrmv_gpu_precond *dP, const void *d_b, void *d_x,
                             int64_t n, const bsrmv_solve_options *opt,
                             bsrmv_solve_report *report, void *stream);
/* bsrmv_solve_multi on the device: B and X in device memory, the products
 * of the unfinished columns one bsrmv_gpu_spmm each; errors as
 * bsrmv_solve_multi plus those of bsrmv_gpu_solve. */
bsrmv_status bsrmv_gpu_solve_multi(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                                   const bsrmv_gpu_precond *dP, int64_t n, int k, const void *d_B,
                                   int64_t ldb, void *d_X, int64_t ldx,
                                   const bsrmv_solve_options *opt, bsrmv_solve_report *reports,
                                   void *stream);
/* bsrmv_solve_refined on the device: dA uploaded from the double A, dAf
 * from its mixed-precision copy (same device), dP from a host P for it. */
bsrmv_status bsrmv_gpu_solve_refined(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                                     const bsrmv_gpu_matrix *dAf, const bsrmv_gpu_precond *dP,
                                     const void *d_b, void *d_x, int64_t n,
                                     const bsrmv_solve_options *opt, bsrmv_solve_report *report,
                                     void *stream);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* BSRMV_H */
