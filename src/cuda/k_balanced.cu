/* Load-balanced kernels for irregular matrices: one kernel, three
 * schedules (schedule.cu builds the work units when the plan is made).
 *
 *  - segmented (KSPARSE balanced, Abdelfattah et al. 5.5): a unit per block
 *    row, rows longer than lambda split into lambda-block segments;
 *  - merge path (Merrill & Garland): units of equal rows + blocks, so that
 *    neither long rows nor runs of empty rows unbalance the grid;
 *  - fragments (Yin et al.): units of equal blocks, a "Bound" row per unit.
 *
 * Segmented and fragment units: a group of G lanes takes one unit at a time
 * and walks the block rows it touches with the by-column inner loop
 * (column_sum), one row after the other.  Merge-path units: a warp streams
 * the unit's values as one contiguous run (the flat-stream scheme of
 * k_flat.cu: lane l reads flat indices l, l+G, ... with G a multiple of bs,
 * so its row inside the block is fixed); a segmented shuffle sum per step
 * adds each block row's values into a per-warp y slice in shared memory.
 * The merge path bounds the rows of a unit, hence the slice.  No dependent
 * row_ptr -> reduce chain per row, which is what short rows cost the row
 * walk, and no atomics.
 * A row that lies wholly inside the unit is finished and stored with
 * alpha/beta.  A row cut
 * by a unit boundary leaves its partial sum in the unit's next `pieces`
 * slot; the fix-up kernel then adds a cut row's slots in slot order and
 * applies alpha/beta once, so results do not depend on the launch order
 * (no floating-point atomics). */
#include "common.cuh"

namespace bsrmv_cuda {

template <typename T, int ORD, int BS, int G>
__global__ void __launch_bounds__(256)
k_balanced(const Args<T> a, const Schedule sc)
{
    const int bs = BS ? BS : a.bs;
    const int lane = threadIdx.x & (G - 1);
    const int ncol = G / bs;
    const int active = ncol * bs;
    const int r = lane % bs;
    const int cslot = lane / bs;
    const int64_t gpw = 32 / G;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const int64_t gin = (threadIdx.x & 31) / G;
    T *pieces = (T *)sc.pieces;

    for (int64_t w = warp; w * gpw < sc.nunits; w += nwarps) {
        const int64_t u = w * gpw + gin;
        const bool valid = u < sc.nunits;
        /* every lane of the warp runs the same number of row steps, so the
         * full-mask shuffles of group_reduce stay legal */
        int64_t row = 0, j = 0, re = 0, je = 0, sl = 0, steps = 0;
        if (valid) {
            row = sc.unit_row[u];
            j = sc.unit_blk[u];
            re = sc.end_row[u]; /* rows before re end in this unit */
            je = sc.end_blk[u];
            sl = sc.slot[u];
            /* row re only if some of its blocks fall in this unit */
            const int64_t tail = re < a.mb ? a.row_ptr[re] : 0;
            steps = re - row + (re < a.mb && je > (tail > j ? tail : j));
        }
        int64_t most = steps;
        for (int o = 16; o >= 1; o >>= 1)
            most = max(most, __shfl_xor_sync(BSRMV_FULL_MASK, most, o));
        for (int64_t k = 0; k < most; ++k, ++row) {
            const bool live = k < steps;
            const bool ends = row < re;
            int64_t s = 0, lo = 0, hi = 0;
            if (live) {
                s = a.row_ptr[row];
                lo = s > j ? s : j;
                hi = ends ? a.row_ptr[row + 1] : je;
            }
            T acc = T(0);
            if (live && lane < active && lo < hi)
                acc = column_sum<T, ORD, 4>(a, bs, r, cslot, ncol, lo, hi);
            acc = group_reduce<T, G>(acc, lane, bs, ncol);
            if (!live)
                continue;
            if (ends && s >= j) {
                if (lane < bs)
                    store_y(a, row * bs + lane, acc);
            } else { /* cut: the head of a row begun earlier, or a carry */
                if (lane < bs)
                    pieces[sl * bs + lane] = acc;
                ++sl;
            }
        }
    }
}

template <typename T, int ORD, int BS>
__global__ void __launch_bounds__(256)
k_mergeflat(const Args<T> a, const Schedule sc)
{
    const int bs = BS ? BS : a.bs;
    const int bs2 = bs * bs;
    const int G = 32 - 32 % bs; /* lanes streaming; a multiple of bs */
    const int DK = G / bs2, DP = G % bs2;
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;
    const int cap = sc.max_rows; /* rows of the largest unit */
    extern __shared__ int64_t smem[];
    int64_t *rp = smem + (int64_t)wib * (cap + 1);
    T *ys = (T *)(smem + (int64_t)(blockDim.x >> 5) * (cap + 1)) + (int64_t)wib * cap * bs;
    const int r = lane % bs;
    const int64_t warp = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    T *pieces = (T *)sc.pieces;

    for (int64_t u = warp; u < sc.nunits; u += nwarps) {
        const int64_t r0 = sc.unit_row[u], j = sc.unit_blk[u];
        const int64_t re = sc.end_row[u], je = sc.end_blk[u];
        const int nr = (int)((re < a.mb ? re : a.mb - 1) - r0 + 1); /* rows r0..re */
        for (int i = lane; i <= nr; i += 32)
            rp[i] = a.row_ptr[r0 + i];
        for (int i = lane; i < nr * bs; i += 32)
            ys[i] = T(0);
        __syncwarp();
        /* U steps of G values: loads of all U first, then per step a
         * segmented sum over the lanes of the same row r inside the block
         * (stride bs; their block rows are non-decreasing), and the last
         * lane of each block-row segment adds it to the y slice.  Each
         * (row, r) has one such lane per step, so no atomics are needed. */
        constexpr int U = 4;
        const int64_t nval = (je - j) * bs2;
        int64_t k = j + lane / bs2;
        int p = lane % bs2, cur = 0;
        int64_t nxt = nr > 1 ? rp[1] : INT64_MAX;
        for (int64_t t0 = 0; t0 < nval; t0 += (int64_t)U * G) {
            int64_t kk[U];
            T v[U];
#pragma unroll
            for (int q = 0; q < U; ++q) {
                kk[q] = k;
                v[q] = T(0);
                if (lane < G && t0 + q * G + lane < nval) {
                    const int c = p / bs;
                    const int off = ORD == COL ? p : r * bs + c;
                    v[q] = ld(a.val + k * bs2 + off) * ld(a.x + (int64_t)ld(a.col_idx + k) * bs + c);
                } else {
                    kk[q] = -1; /* no value */
                }
                k += DK;
                p += DP;
                if (p >= bs2) {
                    p -= bs2;
                    ++k;
                }
            }
#pragma unroll
            for (int q = 0; q < U; ++q) {
                const bool has = kk[q] >= 0;
                if (has)
                    while (kk[q] >= nxt) { /* next block row (skips empty rows) */
                        ++cur;
                        nxt = cur + 1 < nr ? rp[cur + 1] : INT64_MAX;
                    }
                const int key = has ? cur : -1 - lane; /* lanes without a value match nobody */
                T sum = v[q];
                for (int d = bs; d < G; d <<= 1) {
                    const T o = __shfl_up_sync(BSRMV_FULL_MASK, sum, d);
                    const int ok = __shfl_up_sync(BSRMV_FULL_MASK, key, d);
                    if (lane >= d && ok == key)
                        sum += o;
                }
                const int next = __shfl_down_sync(BSRMV_FULL_MASK, key, bs);
                if (has && (lane + bs >= G || next != key))
                    ys[cur * bs + r] += sum;
                __syncwarp();
            }
        }
        __syncwarp();
        /* finished rows that began here: y; a head (first row, begun in an
         * earlier unit) and a carry (row re, unfinished): their slots */
        const bool head = r0 < re && rp[0] < j;
        const bool carry = re < a.mb && je > (rp[nr - 1] > j ? rp[nr - 1] : j);
        for (int i = lane; i < nr * bs; i += 32) {
            const int row = i / bs;
            const int64_t grow = r0 + row;
            if (grow < re && !(row == 0 && head))
                store_y(a, grow * bs + i % bs, ys[i]);
            else if (row == 0 && head)
                pieces[sc.slot[u] * bs + i % bs] = ys[i];
            else if (carry)
                pieces[(sc.slot[u] + head) * bs + i % bs] = ys[i];
        }
        __syncwarp(); /* rp/ys are reused by the next unit */
    }
}

/* One thread block per cut row: thread t sums component t % bs over the
 * slots t / bs, t / bs + per, ... (per = threads / bs), then the partial
 * sums are added in a fixed tree order. */
template <typename T>
__global__ void __launch_bounds__(128)
k_fixup(const Args<T> a, const Schedule sc)
{
    __shared__ T part[128];
    const int bs = a.bs;
    const int64_t *f = sc.fix + 3 * (int64_t)blockIdx.x;
    const int64_t row = f[0], first = f[1], last = f[2];
    const T *pieces = (const T *)sc.pieces;
    for (int c0 = 0; c0 < bs; c0 += 128) {
        const int nc = bs - c0 < 128 ? bs - c0 : 128;
        const int per = 128 / nc;
        const int c = threadIdx.x % nc, q = threadIdx.x / nc;
        T v = T(0);
        if (q < per)
            for (int64_t k = first + q; k <= last; k += per)
                v += pieces[k * bs + c0 + c];
        part[threadIdx.x] = v;
        __syncthreads();
        if (threadIdx.x < nc) {
            T sum = T(0);
            for (int i = 0; i < per; ++i)
                sum += part[i * nc + threadIdx.x];
            store_y(a, row * bs + c0 + threadIdx.x, sum);
        }
        __syncthreads();
    }
}

/* The cut rows' partial sums, after the main kernel on the same stream. */
template <typename T>
static cudaError_t fixup(const Args<T> &a, const Schedule &sc, cudaStream_t s)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || sc.nfix == 0)
        return e;
    for (int64_t done = 0; done < sc.nfix;) { /* grids of at most 2^31-1 blocks */
        const int64_t n = sc.nfix - done < 2147483647 ? sc.nfix - done : 2147483647;
        Schedule part = sc;
        part.fix = sc.fix + 3 * done;
        k_fixup<T><<<(unsigned)n, 128, 0, s>>>(a, part);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
        done += n;
    }
    return cudaSuccess;
}

template <typename T, int ORD, int BS, int G>
static cudaError_t run_walk(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    k_balanced<T, ORD, BS, G><<<bsrmv_grid(sc.nunits * G, l.threads), l.threads, 0, s>>>(a, sc);
    return fixup(a, sc, s);
}

template <typename T, int ORD, int BS>
static cudaError_t run_flat(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    /* the y slices of a unit's rows must fit: fewer warps per thread block
     * when units span many rows (the merge path bounds them by the unit size) */
    const size_t per_warp = (size_t)(sc.max_rows + 1) * sizeof(int64_t) +
                            (size_t)sc.max_rows * a.bs * sizeof(T);
    int wpb = l.threads / 32;
    while (wpb > 1 && (size_t)wpb * per_warp > 160 * 1024)
        --wpb;
    const size_t shm = (size_t)wpb * per_warp;
    if (shm > 200 * 1024)
        return cudaErrorInvalidConfiguration;
    if (shm > 48 * 1024 &&
        cudaFuncSetAttribute(k_mergeflat<T, ORD, BS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)shm) != cudaSuccess)
        return cudaGetLastError();
    k_mergeflat<T, ORD, BS><<<bsrmv_grid(sc.nunits, wpb), wpb * 32, shm, s>>>(a, sc);
    return fixup(a, sc, s);
}

/* Segmented and fragment units: the row walk, group = G lanes per unit.
 * Merge-path units: the flat stream, a warp per unit (group 32).  The
 * schedule must have been built (l.sched). */
template <typename T>
int launch_balanced(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    if (l.threads % 32 || l.threads > 256 || l.threads < 32 || a.bs > 32)
        return LAUNCH_NOT_BUILT;
    if (!l.dry && !l.sched)
        return LAUNCH_NOT_BUILT;
    if (l.flat) {
        if (l.group != 32)
            return LAUNCH_NOT_BUILT;
        const int bsk = BSRMV_COMPILED_BS(BSRMV_MERGEFLAT_LIST, a.bs);
#define X(BS, P)                                                               \
    if (bsk == BS)                                                             \
        return launch_matched(l, err, [&] {                                   \
            return order == COL ? run_flat<T, COL, BS>(a, l, s) : run_flat<T, ROW, BS>(a, l, s); });
        BSRMV_MERGEFLAT_LIST(X)
#undef X
        return LAUNCH_NOT_BUILT;
    }
    const int bsk = BSRMV_COMPILED_BS(BSRMV_BALANCED_LIST, a.bs);
#define X(BS, G)                                                               \
    if (bsk == BS && l.group == G)                                             \
        return launch_matched(l, err, [&] {                                   \
            return order == COL ? run_walk<T, COL, BS, G>(a, l, s) : run_walk<T, ROW, BS, G>(a, l, s); });
    BSRMV_BALANCED_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER(launch_balanced)

} // namespace bsrmv_cuda
