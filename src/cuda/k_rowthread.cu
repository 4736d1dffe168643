/* Row-per-thread kernel with x in shared memory (Eberhardt & Hoemmen,
 * Algorithms 4-5).  A thread block takes R = max(1, threads/bs) block rows;
 * thread r of a row slot owns scalar row r of its block row.  The slot
 * stages x for `stage` blocks at a time in shared memory (coalesced loads of
 * x[col*bs .. col*bs+bs)), then each thread walks its row of those blocks:
 * in column-major blocks, consecutive threads read consecutive values of
 * val for every column c (fully coalesced when bs is a multiple of 16). */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T, int ORD, int BS>
__global__ void __launch_bounds__(BS ? 256 : 1024)
k_rowthread(const Args<T> a, int stage)
{
    extern __shared__ unsigned char smem_raw[];
    T *xs_all = reinterpret_cast<T *>(smem_raw);
    __shared__ long long maxlen;
    const int bs = BS ? BS : a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int R = blockDim.x >= (unsigned)bs ? blockDim.x / bs : 1;
    const int sub = threadIdx.x / bs, r = threadIdx.x % bs;
    const bool in_slot = sub < R;
    T *xs = xs_all + (int64_t)(in_slot ? sub : 0) * stage * bs;

    for (int64_t rb = blockIdx.x; rb * R < a.mb; rb += gridDim.x) { /* uniform per block */
        const int64_t row = rb * R + sub;
        const bool valid = in_slot && row < a.mb;
        int64_t s = 0, e = 0;
        if (valid) {
            s = a.row_ptr[row];
            e = a.row_ptr[row + 1];
        }
        if (threadIdx.x == 0)
            maxlen = 0;
        __syncthreads();
        if (valid && r == 0)
            atomicMax(&maxlen, (long long)(e - s));
        __syncthreads();
        const int64_t len = maxlen;
        T acc = T(0);
        for (int64_t k0 = 0; k0 < len; k0 += stage) {
            if (valid) {
                for (int q = r; q < stage * bs; q += bs) {
                    const int kb = q / bs, cc = q - kb * bs;
                    const int64_t blk = s + k0 + kb;
                    xs[q] = blk < e ? ld(a.x + (int64_t)ldc(a.col_idx + blk) * bs + cc) : T(0);
                }
            }
            __syncthreads();
            if (valid) {
                const int64_t nk = (e - s - k0) < stage ? (e - s - k0) : stage;
                for (int kb = 0; kb < nk; ++kb) {
                    const T *blkv = a.val + (s + k0 + kb) * bs2;
                    const T *xk = xs + kb * bs;
                    if (BS) {
#pragma unroll
                        for (int c = 0; c < BS; ++c)
                            acc += ldv(blkv + (ORD == COL ? c * BS + r : r * BS + c)) * xk[c];
                    } else {
                        for (int c = 0; c < bs; ++c)
                            acc += ldv(blkv + (ORD == COL ? (int64_t)c * bs + r : (int64_t)r * bs + c)) * xk[c];
                    }
                }
            }
            __syncthreads();
        }
        if (valid)
            store_y(a, row * bs + r, acc);
        __syncthreads(); /* maxlen is reset by the next iteration */
    }
}

template <typename T, int ORD, int BS>
static cudaError_t run(const Args<T> &a, const Launch &l, cudaStream_t st)
{
    int threads = l.threads;
    if (BS && threads > 256)
        threads = 256;
    if (threads < a.bs)
        threads = (a.bs + 31) / 32 * 32;
    const int R = threads >= a.bs ? threads / a.bs : 1;
    int stage = l.param > 0 ? l.param : 4;
    while (stage > 1 && (size_t)R * stage * a.bs * sizeof(T) > 48 * 1024)
        stage /= 2;
    const size_t smem = (size_t)R * stage * a.bs * sizeof(T);
    k_rowthread<T, ORD, BS><<<bsrmv_grid(a.mb, R), threads, smem, st>>>(a, stage);
    return cudaGetLastError();
}

template <typename T>
int launch_rowthread(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (a.bs > 1024 || l.threads % 32 || l.threads < 32 || l.threads > 1024)
        return LAUNCH_NOT_BUILT;
    const int bsk = BSRMV_COMPILED_BS(BSRMV_ROWTHREAD_LIST, a.bs);
#define X(BS, P) BSRMV_LAUNCH_IF(bsk == BS, run, BS)
    BSRMV_ROWTHREAD_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER(launch_rowthread)

} // namespace bsrmv_cuda
