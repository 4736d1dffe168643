/* The host side of alpha and beta: a scalar of any value type as its real
 * and imaginary parts, read from the caller's pointer (the _scalars entry
 * points) and rounded to the kernels' vector type.  Shared by the SpMV
 * (matrix.cu) and the SpMM (spmm.cu).  Not installed. */
#ifndef BSRMV_CUDA_SCALAR_CUH
#define BSRMV_CUDA_SCALAR_CUH

#include "bsrmv.h"
#include "complex.cuh"

namespace bsrmv_cuda {

/* A scalar as its real and imaginary parts (0 for the real types). */
struct Scalar {
    double re, im;
    bool zero() const { return re == 0.0 && im == 0.0; }
};

/* A host value of the vector type t at p. */
static inline Scalar load_scalar(bsrmv_type t, const void *p)
{
    switch (t) {
    case BSRMV_FLOAT: return {*(const float *)p, 0.0};
    case BSRMV_DOUBLE: return {*(const double *)p, 0.0};
    case BSRMV_COMPLEX_FLOAT: return {((const float *)p)[0], ((const float *)p)[1]};
    case BSRMV_COMPLEX_DOUBLE: return {((const double *)p)[0], ((const double *)p)[1]};
    }
    return {0.0, 0.0};
}

/* Room for one value of any type, for passing a Scalar on to an entry
 * point that takes pointers (store_scalar). */
union ScalarBuf {
    float f[2];
    double d[2];
};

/* s as a value of type t in *b; returns b's value. */
static inline const void *store_scalar(bsrmv_type t, Scalar s, ScalarBuf *b)
{
    switch (t) {
    case BSRMV_FLOAT:
    case BSRMV_COMPLEX_FLOAT:
        b->f[0] = (float)s.re;
        b->f[1] = (float)s.im;
        return b->f;
    default:
        b->d[0] = s.re;
        b->d[1] = s.im;
        return b->d;
    }
}

/* s rounded to V, as the CPU rounds it. */
template <typename V> static inline V to_vector_type(Scalar s)
{
    if constexpr (is_cplx<V>::value) {
        using R = decltype(V().re);
        return V((R)s.re, (R)s.im);
    } else {
        return (V)s.re;
    }
}

} // namespace bsrmv_cuda

#endif
