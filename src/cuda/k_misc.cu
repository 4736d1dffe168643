/* Transpose SpMV (y = alpha*A^T*x + beta*y), the y = beta*y pass, the
 * two bounds of the benchmark (the read-only bandwidth kernel and the
 * gather bound of a matrix) and the stall that its timings start behind. */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T> __global__ void k_scale(T *y, int64_t n, T beta)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = beta == T(0) ? T(0) : beta * y[i];
}

template <typename T> cudaError_t launch_scale(T *y, int64_t n, T beta, cudaStream_t s)
{
    if (n <= 0)
        return cudaSuccess;
    unsigned g = bsrmv_grid(n, 256);
    if (g > 65536)
        g = 65536;
    k_scale<T><<<g, 256, 0, s>>>(y, n, beta);
    return cudaGetLastError();
}
template cudaError_t launch_scale<float>(float *, int64_t, float, cudaStream_t);
template cudaError_t launch_scale<double>(double *, int64_t, double, cudaStream_t);
template cudaError_t launch_scale<cplx<float>>(cplx<float> *, int64_t, cplx<float>, cudaStream_t);
template cudaError_t launch_scale<cplx<double>>(cplx<double> *, int64_t, cplx<double>, cudaStream_t);

/* A warp per block row; lane t covers (block, column) pairs of the row and
 * adds alpha * sum_r A(r, c) x[row*bs + r] to y[col*bs + c] atomically
 * (CONJ: conj(A(r, c)), the conjugate transpose of a complex matrix).
 * y must already hold beta*y. */
template <typename T, int ORD, bool CONJ>
__global__ void k_transpose(const Args<T> a)
{
    const int bs = a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int lane = threadIdx.x & 31;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t row = warp; row < a.mb; row += nwarps) {
        const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
        const T *xr = a.x + row * bs;
        for (int64_t t = s * bs + lane; t < e * bs; t += 32) {
            const int64_t b = t / bs;
            const int c = (int)(t - b * bs);
            const T *v = a.val + b * bs2;
            T sum = T(0);
            for (int r = 0; r < bs; ++r)
                madd(sum, conj_if(ld(v + (ORD == COL ? (int64_t)c * bs + r : (int64_t)r * bs + c)), CONJ),
                     ld(xr + r));
            atomicAdd(a.y + (int64_t)ldc(a.col_idx + b) * bs + c, a.alpha * sum);
        }
    }
}

template <typename T>
int launch_transpose(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    const int threads = 256;
    if (l.dry)
        return LAUNCH_OK;
    const unsigned g = bsrmv_grid(a.mb * 32, threads);
    /* param 1: the conjugate transpose, built for the complex types only */
    if constexpr (is_cplx<T>::value) {
        if (l.param == 1) {
            if (order == COL)
                k_transpose<T, COL, true><<<g, threads, 0, s>>>(a);
            else
                k_transpose<T, ROW, true><<<g, threads, 0, s>>>(a);
            *err = cudaGetLastError();
            return *err == cudaSuccess ? LAUNCH_OK : LAUNCH_CUDA_ERROR;
        }
    }
    if (order == COL)
        k_transpose<T, COL, false><<<g, threads, 0, s>>>(a);
    else
        k_transpose<T, ROW, false><<<g, threads, 0, s>>>(a);
    *err = cudaGetLastError();
    return *err == cudaSuccess ? LAUNCH_OK : LAUNCH_CUDA_ERROR;
}
BSRMV_INSTANTIATE_LAUNCHER(launch_transpose)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_transpose)

/* Reads every byte of buf once with 16-byte loads: a warp per contiguous
 * chunk of 32 x RU loads, all in flight before the first use, and as many
 * thread blocks as the chunks need.  A grid-stride loop (SMs x 8 blocks, 4
 * loads in flight per thread) read 3% slower, below what a bsrmv SpMV
 * reaches (H100: 3081 against 3173 GB/s over 2 GiB, tools/probes/read_probe.cu).  The xor of everything goes to *sink only if
 * it equals a value the fill never produces, so the loads cannot be
 * dropped. */
constexpr int RU = 8;
__global__ void k_read(const uint4 *__restrict__ buf, size_t n, unsigned long long *sink)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t base = warp * 32 * RU + (threadIdx.x & 31);
    uint4 v[RU];
#pragma unroll
    for (int u = 0; u < RU; ++u)
        v[u] = base + u * 32 < n ? __ldg(buf + base + u * 32) : make_uint4(0, 0, 0, 0);
    unsigned acc = 0;
#pragma unroll
    for (int u = 0; u < RU; ++u)
        acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

cudaError_t read_bandwidth_pass(const void *buf, size_t bytes, unsigned long long *sink, cudaStream_t s)
{
    const size_t n = bytes / 16, per_block = 32 * RU * 8; /* 8 warps of 256 threads */
    k_read<<<(unsigned)((n + per_block - 1) / per_block), 256, 0, s>>>((const uint4 *)buf, n, sink);
    return cudaGetLastError();
}

/* One thread waits on the GPU's nanosecond clock: a timed region queued
 * behind it is complete on the stream before the GPU reaches it (see
 * bsrmv_gpu_stall). */
__global__ void k_stall(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

cudaError_t stall_pass(double us, cudaStream_t s)
{
    k_stall<<<1, 1, 0, s>>>((unsigned long long)(us * 1e3));
    return cudaGetLastError();
}

/* The gather bound (bsrmv_gpu_gather_bound): the memory work of an SpMV
 * of this matrix without its rows -- val and col_idx streamed once, x
 * loaded at every block's columns -- and nothing else (no row_ptr, no
 * reductions, no y).  Two lane mappings, as the SpMV kernels have them:
 * a lane per row of a block (k_mergeseq's row-per-lane gather; FLAT false,
 * items are block rows) or a lane per value (the flat stream; items are
 * values), U items in flight per thread; vs/vr are the value strides of a
 * block column and row (the block order). */
template <typename T, int BS, int U, bool FLAT>
__global__ void __launch_bounds__(256)
k_gather(const T *__restrict__ val, const int32_t *__restrict__ col, const T *__restrict__ x,
         int64_t n, int bs_rt, int vs, int vr, T *sink)
{
    const int bs = BS ? BS : bs_rt;
    const int bs2 = bs * bs;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    T acc = T(0);
    for (int64_t t0 = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t0 < n; t0 += U * stride) {
        T p[U];
#pragma unroll
        for (int q = 0; q < U; ++q) {
            const int64_t t = t0 + q * stride;
            p[q] = T(0);
            if (t < n && FLAT) {
                const int64_t kb = t / bs2;
                const int o = (int)(t - kb * bs2), c = vs == 1 ? o % bs : o / bs;
                p[q] = ldv(val + t) * ld(x + (int64_t)ldc(col + kb) * bs + c);
            } else if (t < n) {
                const int64_t kb = t / bs;
                const T *v = val + kb * bs2 + (int)(t - kb * bs) * vr;
                const T *xp = x + (int64_t)ldc(col + kb) * bs;
#pragma unroll
                for (int c = 0; c < bs; ++c)
                    p[q] += ldv(v + c * vs) * ld(xp + c);
            }
        }
#pragma unroll
        for (int q = 0; q < U; ++q)
            acc += p[q];
    }
    if (acc == T(-0.123456789)) /* keeps the loads; practically never true */
        *sink = acc;
}

/* Variant 0-3 of the bound: a lane per block row with U * bs about 8 or 16
 * values in flight per thread (0, 1), a lane per value with 4 or 8 (2, 3);
 * sms: the device's SMs (the handle's plan has them). */
template <typename T>
cudaError_t gather_pass(const T *val, const int32_t *col, const T *x, int64_t nnzb, int bs,
                        int order, int variant, int sms, T *sink, cudaStream_t s)
{
    if (nnzb == 0)
        return cudaSuccess;
    const int64_t n = nnzb * bs * (variant >= 2 ? bs : 1);
    const int vs = order == COL ? bs : 1, vr = order == COL ? 1 : bs;
    const unsigned g = (unsigned)(n < (int64_t)sms * 2048 ? bsrmv_grid(n, 256) : sms * 8);
    const int bsk = BSRMV_COMPILED_BS(BSRMV_GATHER_LIST, bs);
#define X(BS, P)                                                                                   \
    if (bsk == BS) {                                                                               \
        constexpr int U0 = BS == 0 || BS > 8 ? 1 : 8 / (BS ? BS : 1); /* no 8/0 warning */         \
        if (variant == 0)                                                                          \
            k_gather<T, BS, U0, false><<<g, 256, 0, s>>>(val, col, x, n, bs, vs, vr, sink);        \
        else if (variant == 1)                                                                     \
            k_gather<T, BS, 2 * U0, false><<<g, 256, 0, s>>>(val, col, x, n, bs, vs, vr, sink);    \
        else if (variant == 2)                                                                     \
            k_gather<T, BS, 4, true><<<g, 256, 0, s>>>(val, col, x, n, bs, vs, vr, sink);          \
        else                                                                                       \
            k_gather<T, BS, 8, true><<<g, 256, 0, s>>>(val, col, x, n, bs, vs, vr, sink);          \
        return cudaGetLastError();                                                                 \
    }
    BSRMV_GATHER_LIST(X)
#undef X
    return cudaErrorInvalidValue;
}
template cudaError_t gather_pass<float>(const float *, const int32_t *, const float *, int64_t, int,
                                        int, int, int, float *, cudaStream_t);
template cudaError_t gather_pass<double>(const double *, const int32_t *, const double *, int64_t,
                                         int, int, int, int, double *, cudaStream_t);

} // namespace bsrmv_cuda
