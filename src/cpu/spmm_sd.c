/* CPU SpMM kernels for float values with double vectors and sums. */
#include "spmm_kernels.h"

#define V float
#define T double
#define SUF sd
#include "spmm_template.h"
