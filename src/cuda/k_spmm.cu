/* The SpMM kernels (k_spmm_impl.cuh) of the real type pairs: double,
 * float, and float values with double vectors. */
#include "k_spmm_impl.cuh"

namespace bsrmv_cuda {

BSRMV_SPMM_PAIR(float, float)
BSRMV_SPMM_PAIR(double, double)
BSRMV_SPMM_PAIR(float, double)
BSRMV_SPMM_VEC(float)
BSRMV_SPMM_VEC(double)

} // namespace bsrmv_cuda
