/* Helpers shared by the tests: a plain reference SpMV, random matrices,
 * and failure reporting.  Every check prints what failed and exits 1. */
#ifndef BSRMV_TESTUTIL_H
#define BSRMV_TESTUTIL_H

#include "bsrmv.h"
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TU_CHECK(cond, ...)                                                      \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, "\n");                                               \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* A call that must succeed. */
#define TU_OK(call)                                                              \
    do {                                                                         \
        bsrmv_status tu_s_ = (call);                                             \
        TU_CHECK(tu_s_ == BSRMV_SUCCESS, "%s: %s", bsrmv_status_string(tu_s_),  \
                 bsrmv_last_error());                                            \
    } while (0)

/* A call that must fail with status `want` and a non-empty message. */
#define TU_FAILS(call, want)                                                     \
    do {                                                                         \
        bsrmv_status tu_s_ = (call);                                             \
        TU_CHECK(tu_s_ == (want), "got %s, wanted %s (%s)", bsrmv_status_string(tu_s_), \
                 bsrmv_status_string(want), bsrmv_last_error());                 \
        TU_CHECK(bsrmv_last_error()[0] != '\0', "no error message");             \
    } while (0)

typedef struct tu_shape {
    int64_t mb, nb;
    int bs;
    double mean_len;      /* mean blocks per block row                    */
    double empty_frac;    /* fraction of block rows forced empty          */
    int64_t long_row;     /* this block row gets long_len blocks (-1: none) */
    int64_t long_len;
} tu_shape;

/* Random BSR matrix of the given shape; values (parts of complex values)
 * in [-1, -0.25] and [0.25, 1]. */
bsrmv_matrix *tu_random_bsr(const tu_shape *sh, bsrmv_type type, bsrmv_order order,
                            uint64_t seed);

/* The same matrix with the other block order (same type). */
bsrmv_matrix *tu_reorder(const bsrmv_matrix *A, bsrmv_order order);

/* A's row_ptr (either width) as a malloc'd int64 copy, and its col_idx and
 * val (views). */
int64_t *tu_row_ptr64(const bsrmv_matrix *A, const int32_t **ci, const void **val);

/* A copy of A with a 32-bit row_ptr (bsrmv_matrix_create_i32). */
bsrmv_matrix *tu_narrow(const bsrmv_matrix *A);

/* Real components per value of t: 2 for the complex types, else 1. */
int tu_parts(bsrmv_type t);

/* Random vector of n values of type t (never zero: |v| in [0.25, 1]; a
 * complex value gets two such parts). */
void *tu_random_vector(int64_t n, bsrmv_type t, uint64_t seed);
/* Vector of n NaNs of type t. */
void *tu_nan_vector(int64_t n, bsrmv_type t);
/* Copy of a vector. */
void *tu_copy_vector(const void *v, int64_t n, bsrmv_type t);

/* Multivectors (SpMM) of k columns in `lay` with leading dimension ld:
 * the offset of entry (i, j), the entries an n x k one spans, and a new
 * copy of column j (n values, the caller frees it). */
int64_t tu_mv_at(bsrmv_layout lay, int64_t i, int j, int64_t ld);
int64_t tu_mv_span(bsrmv_layout lay, int64_t n, int k, int64_t ld);
void *tu_mv_column(const void *M, bsrmv_type t, bsrmv_layout lay, int64_t n, int j, int64_t ld);
/* The entries of Y (n x k in `lay`, leading dimension ld, values of t)
 * outside its k columns, up to its span and one past it, hold Y0's bits;
 * on failure prints `what` and exits 1. */
void tu_check_mv_padding(const char *what, const void *Y, const void *Y0, bsrmv_type t,
                         bsrmv_layout lay, int64_t n, int k, int64_t ld);
double tu_get(const void *v, bsrmv_type t, int64_t i);

/* Reference y_ref = alpha*op(A)*x + beta*y0 (x, y0 of A's vector type),
 * accumulated in long double with the plain triple loop, plus for each entry the magnitude
 * |alpha|*sum|a||x| + |beta||y0| and the number of terms, for error bounds.
 * beta == 0 ignores y0 entirely. */
void tu_ref_spmv(const bsrmv_matrix *A, bsrmv_op op, double alpha, const void *x,
                 double beta, const void *y0, long double *y_ref, long double *mag,
                 int64_t *terms);

/* Checks y against the reference within the floating-point error bound
 * of A's vector type (the type of the sums); on failure prints `what` and the first bad entry and exits. */
void tu_check_result(const char *what, const bsrmv_matrix *A, bsrmv_op op, double alpha,
                     const void *x, double beta, const void *y0, const void *y);

/* ||b - A x||_2 / ||b||_2 in long double (tu_ref_spmv), b and x of A's
 * vector type. */
double tu_rel_residual(const bsrmv_matrix *A, const void *b, const void *x);

/* GPU tests: 0 after printing the name of device 0, or 1 (after printing
 * why) when no CUDA device can be used; the caller then exits 77, ctest's
 * skip code for the gpu label. */
int tu_no_gpu(void);

/* BSRMV_GPU_TEST_QUICK: 0 unset or "0", 2 for "2" (racecheck), else 1. */
int tu_gpu_quick(void);

/* A device copy of the `bytes` at h (a failed allocation or copy fails the
 * test). */
void *tu_to_device(const void *h, size_t bytes);

#endif
