/* KSPARSE medium (K2) and large (K3) kernels (Abdelfattah et al. 2016,
 * sections 4-5).
 *
 * K2: a thread array of bs x NTG threads works on one block at a time:
 * thread (r, g) keeps EPT = ceil(bs/NTG) values of row r (columns
 * g*EPT .. g*EPT+EPT-1) in registers (register blocking), and the next
 * block's values are loaded while the current one is multiplied (double
 * buffering).  A thread block holds `param` thread arrays, each taking
 * `rows` consecutive block rows; the NTG partial sums of a row meet in
 * shared memory.
 *
 * K3: several thread blocks per block row: blockIdx.y picks a slice of 32
 * rows of the block (NB = 32), the thread block is 32 x NTG threads, and
 * thread group g walks the columns g*EPT, g*EPT + NTG*EPT, ... of every
 * block of the row (EPT = 4 loads in flight), like a dense GEMV mini-grid. */
#include "common.cuh"

namespace bsrmv_cuda {

/* Registers per thread: ceil(bs/NTG) at a compiled bs, 4 at a runtime one */
template <int BS, int NTG> constexpr int k2_ept() { return BS ? (BS + NTG - 1) / NTG : 4; }
/* Whether the registers hold rows (runtime bs, row-major blocks; below) */
template <int BS, int ORD> constexpr bool k2_trans() { return BS == 0 && ORD == ROW; }

/* A runtime bs keeps the register blocking and the double buffering: a
 * block's columns (rows, below) are cut into equal chunks of at most
 * NTG * EPT, and a step loads one chunk of one block.  The loop over the
 * columns it replaces, a col_idx -> x chain per value, was 1.26-2.19x
 * slower at bs 9, 20 and 100 (H200, session 12), but for column-major bs
 * 20 with 4 groups (1.11x faster; 8 groups, which the rule takes, win).  The
 * registers hold adjacent lanes' columns, so that a register's loads cover
 * NTG whole columns of a column-major block.  Row-major blocks swap the
 * roles (TRANS): thread (c, g) keeps column c and EPT rows, so that
 * adjacent threads read adjacent values of a block's row and each thread
 * loads one x value per block; one pass over the block row per chunk, and
 * the bs partial sums of each row meet in shared memory.  With a thread
 * per row, lanes read values bs apart: 0.31-0.99x cuSPARSE from bs 13 on. */
template <typename T, int ORD, int BS, int NTG>
__global__ void __launch_bounds__(BS ? 256 : 1024)
k_k2(const Args<T> a, int rows_per_array, int64_t arrays)
{
    extern __shared__ unsigned char smem_raw[];
    T *red = reinterpret_cast<T *>(smem_raw);
    constexpr int EPT = k2_ept<BS, NTG>();
    constexpr bool TRANS = k2_trans<BS, ORD>();
    const int bs = BS ? BS : a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int nch = BS ? 1 : (bs + NTG * EPT - 1) / (NTG * EPT);
    const int W = BS ? BS : (bs + nch - 1) / nch; /* columns (TRANS: rows) per chunk */
    const int TA = bs * NTG;
    const int nta = blockDim.x / TA;
    const int t = threadIdx.x;
    const int arr = t / TA, tt = t % TA;
    const int g = tt / bs, l = tt % bs; /* l: the thread's row (TRANS: column) */
    const bool in_arr = arr < nta;
    auto load = [&](int64_t b, int ch, T (&v)[EPT], T (&xv)[EPT]) {
        const int64_t col = ldc(a.col_idx + b);
        T x1 = T(0);
        if constexpr (TRANS)
            x1 = ld(a.x + col * bs + l);
#pragma unroll
        for (int q = 0; q < EPT; ++q) {
            /* the column (TRANS: row) of register q in chunk ch */
            const int k = BS ? g * EPT + q : ch * W + g + NTG * q;
            if (BS ? k < BS : g + NTG * q < W && k < bs) {
                v[q] = ldv(a.val + b * bs2 + (ORD == COL ? k * bs + l : TRANS ? k * bs + l : l * bs + k));
                xv[q] = TRANS ? x1 : ld(a.x + col * bs + k);
            } else {
                v[q] = T(0);
                xv[q] = T(0);
            }
        }
    };

    for (int64_t base = (int64_t)blockIdx.x * nta; base < arrays; base += (int64_t)gridDim.x * nta) {
        const int64_t ai = base + arr;
        for (int k = 0; k < rows_per_array; ++k) {
            const int64_t row = ai * rows_per_array + k;
            bool valid = in_arr && ai < arrays && row < a.mb;
            if (valid && a.long_len > 0)
                valid = !long_row(a, a.row_ptr[row], a.row_ptr[row + 1]);
            T acc = T(0);
            int ct = 0; /* TRANS: a pass per chunk */
            do {
                T accs[EPT]; /* TRANS: a sum per register's row */
                if constexpr (TRANS) {
#pragma unroll
                    for (int q = 0; q < EPT; ++q)
                        accs[q] = T(0);
                }
                if (valid) {
                    /* steps (block b, chunk ch), the chunk changing fastest; TRANS: chunk ct */
                    const int64_t e = a.row_ptr[row + 1];
                    int64_t b = a.row_ptr[row];
                    int ch = ct;
                    T vc[EPT], xc[EPT];
                    if (b < e)
                        load(b, ch, vc, xc);
                    while (b < e) {
                        int64_t bn = b;
                        int cn = BS ? 0 : TRANS ? ch : ch + 1;
                        if (BS || TRANS || cn == nch) {
                            cn = TRANS ? ch : 0;
                            ++bn;
                        }
                        T vn[EPT], xn[EPT];
                        if (bn < e)
                            load(bn, cn, vn, xn);
#pragma unroll
                        for (int q = 0; q < EPT; ++q) {
                            if constexpr (TRANS)
                                accs[q] += vc[q] * xc[q];
                            else
                                acc += vc[q] * xc[q];
                        }
                        if (bn < e) {
#pragma unroll
                            for (int q = 0; q < EPT; ++q) {
                                vc[q] = vn[q];
                                xc[q] = xn[q];
                            }
                        }
                        b = bn;
                        ch = cn;
                    }
                }
                if constexpr (TRANS) {
                    /* red[arr][q][tt]; row j of the chunk: register j / NTG of group j % NTG */
                    T *ra = red + (int64_t)arr * TA * EPT;
#pragma unroll
                    for (int q = 0; q < EPT; ++q)
                        ra[q * TA + tt] = accs[q];
                    __syncthreads();
                    const int r = ct * W + tt;
                    if (valid && tt < W && r < bs) {
                        const T *p = ra + (tt / NTG) * TA + (tt % NTG) * bs;
                        T sum = T(0);
                        for (int c = 0; c < bs; ++c)
                            sum += p[c];
                        store_y(a, row * bs + r, sum);
                    }
                    __syncthreads();
                }
            } while (TRANS && ++ct < nch); /* uniform trip count */
            if constexpr (!TRANS) {
                red[t] = acc;
                __syncthreads();
                if (valid && g == 0) {
                    T sum = acc;
                    for (int q = 1; q < NTG; ++q)
                        sum += red[arr * TA + q * bs + l];
                    store_y(a, row * bs + l, sum);
                }
                __syncthreads();
            }
        }
    }
}

template <typename T, int ORD, int BS, int NTG>
static cudaError_t run_k2(const Args<T> &a, const Launch &l, cudaStream_t st)
{
    const int TA = a.bs * NTG;
    int nta = l.param > 0 ? l.param : 1;
    const int maxt = BS ? 256 : 1024;
    while (nta > 1 && nta * TA > maxt)
        --nta;
    if (TA > maxt)
        return cudaErrorInvalidConfiguration;
    const int threads = nta * TA;
    const int64_t arrays = (a.mb + l.rows - 1) / l.rows;
    /* a partial sum per thread, TRANS: per register */
    const size_t smem = (size_t)threads * sizeof(T) * (k2_trans<BS, ORD>() ? k2_ept<BS, NTG>() : 1);
    k_k2<T, ORD, BS, NTG><<<bsrmv_grid(arrays, nta), threads, smem, st>>>(a, l.rows, arrays);
    return cudaGetLastError();
}

template <typename T>
int launch_k2(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.rows < 1 || a.bs < 2 || a.bs * l.group > 1024 || (a.bs <= 32 && a.bs * l.group > 256))
        return LAUNCH_NOT_BUILT;
    const int bsk = BSRMV_COMPILED_BS(BSRMV_K2_LIST, a.bs);
#define X(BS, NTG) BSRMV_LAUNCH_IF(bsk == BS && l.group == NTG, run_k2, BS, NTG)
    BSRMV_K2_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

template <typename T, int ORD, int NTG>
__global__ void __launch_bounds__(32 * NTG)
k_k3(const Args<T> a)
{
    constexpr int NB = 32, EPT = 4;
    __shared__ T red[NTG][NB];
    const int bs = a.bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int tx = threadIdx.x % NB, ty = threadIdx.x / NB;
    const int r = blockIdx.y * NB + tx;
    const bool rvalid = r < bs;
    for (int64_t row = blockIdx.x; row < a.mb; row += gridDim.x) {
        const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
        if (long_row(a, s, e)) /* uniform: one row per thread block */
            continue;
        T acc = T(0);
        if (rvalid) {
            for (int64_t b = s; b < e; ++b) {
                const T *blkv = a.val + b * bs2;
                const T *xb = a.x + (int64_t)ldc(a.col_idx + b) * bs;
                for (int c0 = ty * EPT; c0 < bs; c0 += NTG * EPT) {
                    T v[EPT], xv[EPT];
#pragma unroll
                    for (int q = 0; q < EPT; ++q) {
                        const int c = c0 + q;
                        v[q] = c < bs ? ldv(blkv + (ORD == COL ? (int64_t)c * bs + r : (int64_t)r * bs + c)) : T(0);
                        xv[q] = c < bs ? ld(xb + c) : T(0);
                    }
#pragma unroll
                    for (int q = 0; q < EPT; ++q)
                        acc += v[q] * xv[q];
                }
            }
        }
        red[ty][tx] = acc;
        __syncthreads();
        if (ty == 0 && rvalid) {
            T sum = acc;
#pragma unroll
            for (int q = 1; q < NTG; ++q)
                sum += red[q][tx];
            store_y(a, row * bs + r, sum);
        }
        __syncthreads();
    }
}

template <typename T, int ORD, int NTG>
static cudaError_t run_k3(const Args<T> &a, const Launch &, cudaStream_t st)
{
    dim3 grid(bsrmv_grid(a.mb, 1), (a.bs + 31) / 32);
    k_k3<T, ORD, NTG><<<grid, 32 * NTG, 0, st>>>(a);
    return cudaGetLastError();
}

template <typename T>
int launch_k3(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (a.bs < 2 || (a.bs + 31) / 32 > 65535)
        return LAUNCH_NOT_BUILT;
#define X(BS, NTG) BSRMV_LAUNCH_IF(l.group == NTG, run_k3, NTG)
    BSRMV_K3_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER(launch_k2)
BSRMV_INSTANTIATE_LAUNCHER(launch_k3)

} // namespace bsrmv_cuda
