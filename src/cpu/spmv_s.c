/* CPU SpMV kernels for float values and vectors. */
#define T float
#define V float
#define SUF s
#define VOPS
#define SYM
#include "spmv_instance.h"
