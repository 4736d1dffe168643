/* The device complex value: an interleaved (re, im) pair with the size and
 * alignment of cuFloatComplex / cuDoubleComplex (the layout of C's
 * _Complex), so the kernels read the caller's arrays in place and load a
 * value in one 8- or 16-byte access.  It supplies what the kernel templates
 * do with their value type T and vector type V -- V(0), +, +=, -, -=, *, ==,
 * madd, the warp shuffles and atomicAdd -- so the real kernels' sources
 * (the SpMV kernels, the solvers' vector passes) serve complex values
 * unchanged; the loads (ld, ldv) are in common.cuh beside
 * the real ones.
 * Included by common.cuh.  Not installed. */
#ifndef BSRMV_CUDA_COMPLEX_CUH
#define BSRMV_CUDA_COMPLEX_CUH

#include <cuda_runtime.h>
#include <type_traits>

namespace bsrmv_cuda {

template <typename R> struct alignas(2 * sizeof(R)) cplx {
    R re, im;
    cplx() = default;
    /* V(0), T(0) and a real alpha in the templates: the imaginary part 0 */
    __host__ __device__ constexpr cplx(R r, R i = R(0)) : re(r), im(i) {}
    __host__ __device__ __forceinline__ cplx &operator+=(const cplx &o)
    {
        re += o.re;
        im += o.im;
        return *this;
    }
    __host__ __device__ __forceinline__ cplx &operator-=(const cplx &o)
    {
        re -= o.re;
        im -= o.im;
        return *this;
    }
};
static_assert(sizeof(cplx<double>) == 16 && alignof(cplx<double>) == 16, "cuDoubleComplex layout");
static_assert(sizeof(cplx<float>) == 8 && alignof(cplx<float>) == 8, "cuFloatComplex layout");

template <typename T> struct is_cplx : std::false_type {};
template <typename R> struct is_cplx<cplx<R>> : std::true_type {};

template <typename R>
__host__ __device__ __forceinline__ cplx<R> operator+(const cplx<R> &a, const cplx<R> &b)
{
    return cplx<R>(a.re + b.re, a.im + b.im);
}

template <typename R>
__host__ __device__ __forceinline__ cplx<R> operator-(const cplx<R> &a, const cplx<R> &b)
{
    return cplx<R>(a.re - b.re, a.im - b.im);
}

template <typename R>
__host__ __device__ __forceinline__ cplx<R> operator*(const cplx<R> &a, const cplx<R> &b)
{
    return cplx<R>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}

/* acc += a * b as four fused multiply-adds: written as acc += a * b, the
 * compiler may not fold the accumulation into the product's FMAs (that
 * would reassociate), which costs two multiplies and two adds more. */
template <typename R>
__device__ __forceinline__ void madd(cplx<R> &acc, const cplx<R> &a, const cplx<R> &b)
{
    acc.re = fma(a.re, b.re, fma(-a.im, b.im, acc.re));
    acc.im = fma(a.re, b.im, fma(a.im, b.re, acc.im));
}

template <typename R>
__host__ __device__ __forceinline__ bool operator==(const cplx<R> &a, const cplx<R> &b)
{
    return a.re == b.re && a.im == b.im;
}

template <typename R>
__host__ __device__ __forceinline__ bool operator!=(const cplx<R> &a, const cplx<R> &b)
{
    return !(a == b);
}

template <typename R> __host__ __device__ __forceinline__ cplx<R> conj(const cplx<R> &a)
{
    return cplx<R>(a.re, -a.im);
}

/* The conjugate transpose takes the conjugate of each value as it is
 * loaded; a real value is its own conjugate. */
template <typename T> __device__ __forceinline__ T conj_if(const T &v, bool c)
{
    if constexpr (is_cplx<T>::value)
        return c ? conj(v) : v;
    else
        return v;
}

/* Warp shuffles and atomics of a complex value: the two parts, each with
 * the real intrinsic (the using-declarations keep CUDA's own overloads
 * visible beside these inside the namespace). */
using ::__shfl_down_sync;
using ::__shfl_xor_sync;
using ::atomicAdd;

template <typename R>
__device__ __forceinline__ cplx<R> __shfl_down_sync(unsigned mask, const cplx<R> &v, unsigned d,
                                                     int width = 32)
{
    return cplx<R>(::__shfl_down_sync(mask, v.re, d, width), ::__shfl_down_sync(mask, v.im, d, width));
}

template <typename R>
__device__ __forceinline__ cplx<R> __shfl_xor_sync(unsigned mask, const cplx<R> &v, int lm,
                                                    int width = 32)
{
    return cplx<R>(::__shfl_xor_sync(mask, v.re, lm, width), ::__shfl_xor_sync(mask, v.im, lm, width));
}

template <typename R> __device__ __forceinline__ void atomicAdd(cplx<R> *p, const cplx<R> &v)
{
    ::atomicAdd(&p->re, v.re);
    ::atomicAdd(&p->im, v.im);
}

} // namespace bsrmv_cuda

#endif
