/* CPU SpMV kernels for float complex values in symmetric and Hermitian storage:
 * a translation unit of their own, so that a parallel build compiles them
 * beside the type's full-storage kernels (spmv_c.c). */
#include <complex.h>
#define T float _Complex
#define V float _Complex
#define SUF c
#define COMPLEX
#define SYM
#define SYM_ONLY
#define CONJ(v) conjf(v)
#define BLOCK_SIMD(clauses) BLOCK_UNROLL
#include "spmv_instance.h"
