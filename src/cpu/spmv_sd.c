/* CPU SpMV kernels for float values with double x, y and sums; y's
 * operations are the double ones.  GCC does not vectorise the small block
 * loops that widen float to double, and the simd loops it then leaves
 * rolled keep the sums in memory (2x slower than double at bs 3);
 * unrolled, they stay in registers. */
#define T float
#define V double
#define SUF sd
#define SYM
#define BLOCK_SIMD(clauses) BLOCK_UNROLL
#include "spmv_instance.h"
