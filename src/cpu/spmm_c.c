/* CPU SpMM kernels for float complex values and vectors (C's complex
 * arithmetic, compiled with -fcx-limited-range as the SpMV ones). */
#include "spmm_kernels.h"

#define V float _Complex
#define T float _Complex
#define SUF c
#define CONJ(v) conjf(v)
#include "spmm_template.h"
