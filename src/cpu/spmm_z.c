/* CPU SpMM kernels for double complex values and vectors (C's complex
 * arithmetic, compiled with -fcx-limited-range as the SpMV ones). */
#include "spmm_kernels.h"

#define V double _Complex
#define T double _Complex
#define SUF z
#define CONJ(v) conj(v)
#include "spmm_template.h"
