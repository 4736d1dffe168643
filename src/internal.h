/* Definitions shared by the library's source files; not installed. */
#ifndef BSRMV_INTERNAL_H
#define BSRMV_INTERNAL_H

#include "bsrmv.h"
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define BSRMV_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define BSRMV_PRINTF(f, a)
#endif

struct bsrmv_matrix {
    int64_t mb, nb, nnzb;
    int bs;
    bsrmv_type type;           /* of val                                */
    bsrmv_type vtype;          /* of x, y, alpha, beta and the sums: type,
                                * or double for float values            */
    bsrmv_order order;
    /* Exactly one of the two row_ptr is set: the width the caller passed
     * (bsrmv_matrix_create/_wrap or their _i32 forms); the kernels are
     * built for both, so a wrapped int32 row_ptr is never widened. */
    const int64_t *row_ptr;
    const int32_t *row_ptr32;
    const int32_t *col_idx;
    const void *val;
    bool owns;                 /* arrays allocated by bsrmv_big_alloc   */
    /* Symmetric storage: square, only the diagonal blocks (full) and the
     * blocks above the diagonal are stored; block (j, i) is block (i, j)
     * transposed, or (herm, complex types only) conjugate-transposed. */
    bool sym;
    bool herm;
    bsrmv_cpu_kernel cpu_kernel;
};

/* Complex value types: (re, im) pairs of their real type's components. */
static inline bool bsrmv_type_is_complex(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_FLOAT || t == BSRMV_COMPLEX_DOUBLE;
}
/* Real components per value: 2 for the complex types, else 1. */
static inline int bsrmv_type_parts(bsrmv_type t)
{
    return bsrmv_type_is_complex(t) ? 2 : 1;
}
/* Whether the components are doubles (else floats). */
static inline bool bsrmv_type_is_double(bsrmv_type t)
{
    return t == BSRMV_DOUBLE || t == BSRMV_COMPLEX_DOUBLE;
}
/* "float", "double", "complex float", "complex double". */
const char *bsrmv_type_name(bsrmv_type t);
/* Component i of an array of type t seen as its real components (value
 * k's real part at k*parts, imaginary part at k*parts + 1). */
static inline double bsrmv_part_get(const void *v, bsrmv_type t, int64_t i)
{
    return bsrmv_type_is_double(t) ? ((const double *)v)[i] : (double)((const float *)v)[i];
}
static inline void bsrmv_part_set(void *v, bsrmv_type t, int64_t i, double x)
{
    if (bsrmv_type_is_double(t))
        ((double *)v)[i] = x;
    else
        ((float *)v)[i] = (float)x;
}
/* Value k of an array of type t = re + i*im (im dropped for a real t). */
static inline void bsrmv_value_set(void *v, bsrmv_type t, int64_t k, double re, double im)
{
    const int parts = bsrmv_type_parts(t);
    bsrmv_part_set(v, t, k * parts, re);
    if (parts == 2)
        bsrmv_part_set(v, t, k * parts + 1, im);
}

/* BSRMV_ERR_UNSUPPORTED naming `who` for a complex matrix, for the entry
 * points built for real values only. */
bsrmv_status bsrmv_refuse_complex(bsrmv_type t, const char *who);

/* row_ptr[i] of whichever width is set (the other pointer NULL). */
static inline int64_t bsrmv_rp_at(const int64_t *rp64, const int32_t *rp32, int64_t i)
{
    return rp64 ? rp64[i] : (int64_t)rp32[i];
}
static inline int64_t bsrmv_row_start(const bsrmv_matrix *A, int64_t i)
{
    return bsrmv_rp_at(A->row_ptr, A->row_ptr32, i);
}

/* Record the failure message for bsrmv_last_error() and return s. */
bsrmv_status bsrmv_fail(bsrmv_status s, const char *fmt, ...) BSRMV_PRINTF(2, 3);

/* Large arrays: 64-byte aligned; above 2 MiB, aligned to 2 MiB and advised
 * for transparent huge pages, which moves streaming SpMV by up to 1.5x on
 * machines whose THP mode is "madvise".  Freed with bsrmv_big_free. */
void *bsrmv_big_alloc(size_t bytes);
void bsrmv_big_free(void *p);

/* The calling thread's scratch buffer of at least `bytes` (src/scratch.c):
 * a bsrmv_big_alloc kept for the thread's next call, its contents not kept
 * when it grows; NULL when out of memory.  Not freed by the caller. */
void *bsrmv_scratch(size_t bytes);

/* malloc, calloc, realloc and free for everything else the library
 * allocates (the memory is the C library's: free() may release it). */
void *bsrmv_malloc(size_t bytes);
void *bsrmv_calloc(size_t n, size_t size);
void *bsrmv_realloc(void *p, size_t bytes);
void bsrmv_free(void *p);

#ifdef BSRMV_FAULT_INJECTION
/* Test builds only: the n-th allocation counted from this call fails
 * (n >= 1; 0 disarms); bsrmv_fault_count() is the number counted since. */
void bsrmv_fault_fail_at(int64_t n);
int64_t bsrmv_fault_count(void);
#endif

/* Whether the byte ranges [a, a+abytes) and [b, b+bbytes) share a byte. */
bool bsrmv_ranges_overlap(const void *a, size_t abytes, const void *b, size_t bbytes);

/* BSRMV_ERR_ARGUMENT naming `who` when the n_x values of the input x and
 * the n_y of the output y (vs bytes each) overlap, else success: x is
 * still read while y is written.  Host or device addresses alike: only the
 * pointer values are compared. */
bsrmv_status bsrmv_check_disjoint(const char *who, const void *x, int64_t n_x, const void *y,
                                  int64_t n_y, size_t vs);

/* The argument checks of bsrmv_spmm and bsrmv_gpu_spmm (messages start
 * with `who`): op, layout, k >= 1, the leading dimensions, the spans of X
 * and Y within the address space, NULL (X only where alpha != 0) and
 * overlap of the spans.  rows, cols: of A; op C counts as op T.  On
 * success *nx and *ny are the rows of X and Y. */
bsrmv_status bsrmv_spmm_check(const char *who, bsrmv_op op, int64_t rows, int64_t cols,
                              bsrmv_type type, bool alpha_zero, int k, const void *X, int64_t ldx,
                              const void *Y, int64_t ldy, bsrmv_layout layout, int64_t *nx,
                              int64_t *ny);

/* Y = A X for k column-major vectors of A's vector type without the
 * checks of bsrmv_spmm: the solvers' products of several columns (src/solve/
 * multi.c), whose X and Y columns lie interleaved in one allocation (their
 * spans overlap, their entries do not). */
bsrmv_status bsrmv_spmm_cols(const bsrmv_matrix *A, int k, const void *X, int64_t ldx, void *Y,
                             int64_t ldy);

/* a*b and a+b for non-negative sizes; false on overflow of int64_t. */
static inline bool bsrmv_mul64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
static inline bool bsrmv_add64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}
/* n elements of size sz as size_t bytes; false on overflow. */
static inline bool bsrmv_bytes(int64_t n, size_t sz, size_t *r)
{
    if (n < 0)
        return false;
    return !__builtin_mul_overflow((size_t)n, sz, r);
}

/* The Matrix Market reader's number parsers: the whole token, decimal
 * only.  Integers in int64 range; reals finite in double range (underflow
 * to a subnormal or zero allowed), no nan, inf or hexadecimal forms. */
bool bsrmv_parse_int(const char *s, int64_t *v);
bool bsrmv_parse_real(const char *s, double *v);

/* Allocates an empty matrix shell with the given shape and arrays. */
bsrmv_status bsrmv_matrix_shell(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                int64_t nnzb, bsrmv_type type, bsrmv_order order);

/* Allocates owned arrays for a matrix of the shell's shape. */
bsrmv_status bsrmv_matrix_alloc_arrays(bsrmv_matrix *A, int64_t **row_ptr,
                                       int32_t **col_idx, void **val);

/* Reproducible random numbers: splitmix64 and a uniform double in [0,1). */
static inline uint64_t bsrmv_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double bsrmv_uniform01(uint64_t *state)
{
    return (double)(bsrmv_splitmix64(state) >> 11) * 0x1.0p-53;
}
/* Stateless hash to [0,1): value of stream `seed` at position i. */
static inline double bsrmv_hash01(uint64_t seed, uint64_t i)
{
    uint64_t s = seed ^ (i * 0xD1B54A32D192ED03ull);
    return bsrmv_uniform01(&s);
}

/* A point of a BSR matrix in row-major block order: before block `blk` of
 * block row `row`, row_ptr[row] <= blk < row_ptr[row+1], or at the start
 * of the row (blk == row_ptr[row]; row == mb at the end). */
typedef struct bsrmv_cut {
    int64_t row, blk;
} bsrmv_cut;

/* Work-balanced split of rows and blocks into nparts parts: part p runs
 * from cut(p) to cut(p+1); cut(0) = {0, 0}, cut(nparts) = {mb, nnzb}.  A
 * cut inside a row leaves it partial in the parts on both sides.  One of
 * rp64, rp32 is the row_ptr, the other NULL. */
bsrmv_cut bsrmv_partition_cut(const int64_t *rp64, const int32_t *rp32, int64_t mb, int bs,
                              int p, int nparts);

#endif
