/* CPU SpMM kernels for double values and vectors. */
#include "spmm_kernels.h"

#define V double
#define T double
#define SUF d
#include "spmm_template.h"
