/* CPU SpMV kernels for float complex values and vectors: C's complex
 * arithmetic, the block loops unrolled as for the mixed pair (symmetric
 * storage: spmv_csym.c). */
#include <complex.h>
#define T float _Complex
#define V float _Complex
#define SUF c
#define VOPS
#define COMPLEX
#define CONJ(v) conjf(v)
#define BLOCK_SIMD(clauses) BLOCK_UNROLL
#include "spmv_instance.h"
