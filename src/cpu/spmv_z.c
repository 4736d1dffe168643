/* CPU SpMV kernels for double complex values and vectors: C's complex
 * arithmetic, the block loops unrolled as for the mixed pair (symmetric
 * storage: spmv_zsym.c). */
#include <complex.h>
#define T double _Complex
#define V double _Complex
#define SUF z
#define VOPS
#define COMPLEX
#define CONJ(v) conj(v)
#define BLOCK_SIMD(clauses) BLOCK_UNROLL
#include "spmv_instance.h"
