/* CPU SpMM kernels for float values and vectors. */
#include "spmm_kernels.h"

#define V float
#define T float
#define SUF s
#include "spmm_template.h"
