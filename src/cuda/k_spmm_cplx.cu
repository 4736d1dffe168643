/* The SpMM kernels (k_spmm_impl.cuh) of the complex types. */
#include "k_spmm_impl.cuh"

namespace bsrmv_cuda {

BSRMV_SPMM_PAIR(cplx<float>, cplx<float>)
BSRMV_SPMM_PAIR(cplx<double>, cplx<double>)
BSRMV_SPMM_VEC(cplx<float>)
BSRMV_SPMM_VEC(cplx<double>)

} // namespace bsrmv_cuda
