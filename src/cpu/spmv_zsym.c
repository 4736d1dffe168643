/* CPU SpMV kernels for double complex values in symmetric and Hermitian storage:
 * a translation unit of their own, so that a parallel build compiles them
 * beside the type's full-storage kernels (spmv_z.c). */
#include <complex.h>
#define T double _Complex
#define V double _Complex
#define SUF z
#define COMPLEX
#define SYM
#define SYM_ONLY
#define CONJ(v) conj(v)
#define BLOCK_SIMD(clauses) BLOCK_UNROLL
#include "spmv_instance.h"
