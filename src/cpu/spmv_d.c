/* CPU SpMV kernels for double values and vectors. */
#define T double
#define V double
#define SUF d
#define VOPS
#define SYM
#include "spmv_instance.h"
