/* Complex products in the tests: values of any bsrmv_type as long double
 * complex, scalars stored as a value of a vector type (what
 * bsrmv_spmv_scalars and bsrmv_gpu_spmv_scalars read), and the check of
 * y = alpha*op(A)*x + beta*y0 against a long double complex reference.
 * Separate from testutil.h so that <complex.h> (its I and complex macros)
 * reaches only the tests that include it. */
#ifndef BSRMV_TESTUTIL_COMPLEX_H
#define BSRMV_TESTUTIL_COMPLEX_H

#include "testutil.h"

#include <complex.h>
#include <stdbool.h>

typedef long double _Complex tu_ldc;

/* A scalar of each vector type. */
typedef union tu_scalar {
    float f;
    double d;
    float _Complex c;
    double _Complex z;
} tu_scalar;

/* Whether t's parts are doubles. */
bool tu_is_double(bsrmv_type t);

/* Value i of a vector of type t. */
tu_ldc tu_cget(const void *v, bsrmv_type t, int64_t i);

/* v stored in *b as a value of type t; returns the value it holds after
 * the rounding. */
tu_ldc tu_put_scalar(tu_scalar *b, bsrmv_type t, double _Complex v);

/* "A*x", "A^T*x", "A^H*x". */
const char *tu_op_name(bsrmv_op op);

/* y against the long double complex reference of alpha*op(A)*x + beta*y0
 * (beta == 0 ignores y0) within the bound of a complex product and sum per
 * term; on failure prints `what` and the first bad entry and exits 1. */
void tu_check_complex(const char *what, const bsrmv_matrix *A, bsrmv_op op, tu_ldc alpha,
                      const void *x, tu_ldc beta, const void *y0, const void *y);

/* Upper storage (kind: BSRMV_SYM_SYMMETRIC or _HERMITIAN) of a random
 * square matrix of the shape: its diagonal and upper blocks, the diagonal
 * blocks made symmetric or Hermitian (real diagonal); with all_diag every
 * block row gets a diagonal block (zeros where the random matrix has
 * none). */
bsrmv_matrix *tu_random_sym(const tu_shape *sh, bsrmv_type t, bsrmv_order order, int kind,
                            uint64_t seed, bool all_diag);

/* A test system: the BSR arrays and the dense copy of the stored values. */
typedef struct tu_csys {
    int64_t mb, n;
    int bs;
    bsrmv_type type;
    tu_ldc *dense; /* n x n, row-major, as stored (rounded to the type) */
    bsrmv_matrix *A;
} tu_csys;

enum tu_ckind { TU_NONHERM, TU_HPD, TU_INDEFINITE };

/* A block pattern symmetric about the diagonal (tridiagonal plus random
 * far blocks), values random; TU_NONHERM: independent values with a dominant
 * diagonal; TU_HPD: B + B^H plus a shift above every row's sum of moduli;
 * TU_INDEFINITE: the same Hermitian matrix with its shift negated on every
 * other row. */
tu_csys tu_csys_make(int64_t mb, int bs, bsrmv_type type, bsrmv_order order, enum tu_ckind k,
                     uint64_t seed);
void tu_csys_drop(tu_csys *S);
/* ||b - A x|| / ||b|| in long double from the dense copy. */
double tu_csys_residual(const tu_csys *S, const void *b, const void *x);

#endif
