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
 * K3: several thread blocks per block row: a thread block takes a slice
 * of rs consecutive rows of one block row (param slices per block row),
 * NTG threads per row of the slice, and walks the row's columns as one
 * stream across its blocks (below). */
#include "units.cuh"

namespace bsrmv_cuda {

/* Registers per thread: ceil(bs/NTG) at a compiled bs, 4 at a runtime one */
template <int BS, int NTG> constexpr int k2_ept() { return BS ? (BS + NTG - 1) / NTG : 4; }
/* Whether the registers hold rows (row-major blocks at a runtime bs or of
 * complex values; below) */
template <typename T, int BS, int ORD> constexpr bool k2_trans()
{
    return ORD == ROW && (BS == 0 || is_cplx<T>::value);
}

/* A runtime bs keeps the register blocking and the double buffering: a
 * block's columns (rows, below) are cut into equal chunks of at most
 * NTG * EPT, and a step loads one chunk of one block.  The loop over the
 * columns it replaces, a col_idx -> x chain per value, was 1.26-2.19x
 * slower at bs 9, 20 and 100 (H200), but for column-major bs
 * 20 with 4 groups (1.11x faster; 8 groups, which the rule takes, win).  The
 * registers hold adjacent lanes' columns, so that a register's loads cover
 * NTG whole columns of a column-major block.  Row-major blocks swap the
 * roles (TRANS): thread (c, g) keeps column c and EPT rows, so that
 * adjacent threads read adjacent values of a block's row and each thread
 * loads one x value per block; one pass over the block row per chunk, and
 * the bs partial sums of each row meet in shared memory.  With a thread
 * per row, lanes read values bs apart: 0.31-0.99x cuSPARSE from bs 13 on.
 * Complex row-major blocks take TRANS at their compiled sizes too (a
 * value is 8-16 bytes, so a row of a block is a line): H200, 27-point
 * grids of ~512 MB, complex double bs 6, 7, 8: 0.1488, 0.1499, 0.1429 ms
 * against 0.1729, 0.1965, 0.1764 with a thread per row. */
template <typename T, int ORD, int BS, int NTG>
struct K2Thread {
    static constexpr int EPT = k2_ept<BS, NTG>();
    static constexpr bool TRANS = k2_trans<T, BS, ORD>();
    int bs, nch, W, g, l;
    int64_t bs2;

    /* tt: the thread's index in its thread array of bs x NTG threads */
    __device__ K2Thread(int bs_, int tt) : bs(BS ? BS : bs_)
    {
        bs2 = (int64_t)bs * bs;
        nch = BS ? 1 : (bs + NTG * EPT - 1) / (NTG * EPT);
        W = BS ? BS : (bs + nch - 1) / nch; /* columns (TRANS: rows) per chunk */
        g = tt / bs;
        l = tt % bs; /* the thread's row (TRANS: column) */
    }

    __device__ void load(const Args<T> &a, int64_t b, int ch, T (&v)[EPT], T (&xv)[EPT]) const
    {
        const int64_t col = ldc(a.col_idx + b);
        T x1 = T(0);
        if constexpr (TRANS)
            x1 = ld(a.x + col * bs + l);
#pragma unroll
        for (int q = 0; q < EPT; ++q) {
            /* the column (TRANS: row) of register q in chunk ch */
            const int k = BS && !TRANS ? g * EPT + q : ch * W + g + NTG * q;
            if (BS && !TRANS ? k < BS : g + NTG * q < W && k < bs) {
                v[q] = ldv(a.val + b * bs2 + (ORD == COL ? k * bs + l : TRANS ? k * bs + l : l * bs + k));
                xv[q] = TRANS ? x1 : ld(a.x + col * bs + k);
            } else {
                v[q] = T(0);
                xv[q] = T(0);
            }
        }
    }

    /* The thread's part of blocks [b, e) of one block row: into acc, or
     * (TRANS) chunk ct's sums per register into accs.  Steps (block,
     * chunk), the chunk changing fastest, the next one loaded while the
     * current one is multiplied. */
    __device__ void sum(const Args<T> &a, int64_t b, int64_t e, int ct, T &acc, T (&accs)[EPT]) const
    {
        int ch = ct;
        T vc[EPT], xc[EPT];
        if (b < e)
            load(a, b, ch, vc, xc);
        while (b < e) {
            int64_t bn = b;
            int cn = BS ? 0 : TRANS ? ch : ch + 1;
            if (BS || TRANS || cn == nch) {
                cn = TRANS ? ch : 0;
                ++bn;
            }
            T vn[EPT], xn[EPT];
            if (bn < e)
                load(a, bn, cn, vn, xn);
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

    /* !TRANS: the row's sum over the NTG groups of the thread array that
     * begins at thread `base`, for the threads of group 0.  Every thread
     * of the block calls it (__syncthreads); red holds a value per thread,
     * to be written again only after another barrier. */
    __device__ T group_sum(T *red, int t, int base, T acc) const
    {
        red[t] = acc;
        __syncthreads();
        T sum = acc;
        if (g == 0)
            for (int q = 1; q < NTG; ++q)
                sum += red[base + q * bs + l];
        return sum;
    }
};

template <typename T, int ORD, int BS, int NTG>
__global__ void __launch_bounds__(BS ? 256 : 1024)
k_k2(const Args<T> a, int rows_per_array, int64_t arrays)
{
    extern __shared__ unsigned char smem_raw[];
    T *red = reinterpret_cast<T *>(smem_raw);
    using Th = K2Thread<T, ORD, BS, NTG>;
    constexpr int EPT = Th::EPT;
    constexpr bool TRANS = Th::TRANS;
    const int bs = BS ? BS : a.bs;
    const int TA = bs * NTG;
    const int nta = blockDim.x / TA;
    const int t = threadIdx.x;
    const int arr = t / TA, tt = t % TA;
    const Th th(bs, tt);
    const bool in_arr = arr < nta;

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
#pragma unroll
                for (int q = 0; q < EPT; ++q)
                    accs[q] = T(0);
                if (valid)
                    th.sum(a, a.row_ptr[row], a.row_ptr[row + 1], ct, acc, accs);
                if constexpr (TRANS) {
                    /* red[arr][q][tt]; row j of the chunk: register j / NTG of group j % NTG */
                    T *ra = red + (int64_t)arr * TA * EPT;
#pragma unroll
                    for (int q = 0; q < EPT; ++q)
                        ra[q * TA + tt] = accs[q];
                    __syncthreads();
                    const int r = ct * th.W + tt;
                    if (valid && tt < th.W && r < bs) {
                        const T *p = ra + (tt / NTG) * TA + (tt % NTG) * bs;
                        T sum = T(0);
                        for (int c = 0; c < bs; ++c)
                            sum += p[c];
                        store_y(a, row * bs + r, sum);
                    }
                    __syncthreads();
                }
            } while (TRANS && ++ct < th.nch); /* uniform trip count */
            if constexpr (!TRANS) {
                const T sum = th.group_sum(red, t, arr * TA, acc);
                if (valid && th.g == 0)
                    store_y(a, row * bs + th.l, sum);
                __syncthreads();
            }
        }
    }
}

/* K2 over the fragment units (compiled bs; FRAGMENT with threads 0 and
 * rows 0): a thread array per unit walks the part of each row the unit
 * holds with K2's double-buffered steps; rows that begin and end in the
 * unit go to y, cut rows to the unit's slots for the fix-up
 * (k_balanced.cu).  Plain K2 gives a row to one thread array, which
 * streams it a block at a time: on uneven rows of large blocks the
 * longest rows set the time (lp_ship04l promoted to bs 32, 402 block rows
 * of up to 84 blocks, 688 KB); K3 over the units keeps more loads in
 * flight per thread but reduces every row part through shared memory by
 * column phases.  H100, real matrices promoted to bs 24 and 32: 1.06-1.18x
 * K3 over the same units (rajat01, orani678, sts4098, ca-GrQc,
 * lp_ship04l).  The thread arrays of a block leave a row part together
 * (__syncthreads_or): their units hold different numbers of rows. */
template <typename T, int ORD, int BS, int NTG>
__global__ void __launch_bounds__(256)
k_k2units(const Args<T> a, const Schedule sc)
{
    static_assert(BS > 0, "compiled block sizes only");
    allow_fixup_launch();
    extern __shared__ unsigned char smem_raw[];
    T *red = reinterpret_cast<T *>(smem_raw);
    using Th = K2Thread<T, ORD, BS, NTG>;
    constexpr int TA = BS * NTG;
    const int nta = blockDim.x / TA;
    const int t = threadIdx.x;
    const int arr = t / TA, tt = t % TA;
    const Th th(BS, tt);
    T *pieces = (T *)sc.pieces;
    for (int64_t base = (int64_t)blockIdx.x * nta; base < sc.nunits; base += (int64_t)gridDim.x * nta) {
        const int64_t u = base + arr;
        const UnitRows ur = arr < nta && u < sc.nunits ? UnitRows(a, sc, u) : UnitRows();
        int64_t row = ur.row0, sl = ur.slot;
        for (int64_t k = 0; __syncthreads_or(k < ur.steps); ++k, ++row) {
            const bool live = k < ur.steps;
            int64_t lo = 0, hi = 0;
            const bool whole = live && ur.part(a, row, lo, hi);
            T acc = T(0), none[Th::EPT];
            th.sum(a, lo, hi, 0, acc, none);
            const T sum = th.group_sum(red, t, arr * TA, acc); /* the loop's test is the next barrier */
            if (live && th.g == 0) {
                if (whole)
                    store_y(a, row * BS + th.l, sum);
                else
                    pieces[sl * BS + th.l] = sum;
            }
            sl += live && !whole;
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
    const size_t smem = (size_t)threads * sizeof(T) * (k2_trans<T, BS, ORD>() ? k2_ept<BS, NTG>() : 1);
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
    if constexpr (std::is_same<T, cplx<double>>::value) {
        BSRMV_K2_Z_LIST(X)
    } else if constexpr (!is_cplx<T>::value) {
        BSRMV_K2_LIST(X)
    }
#undef X
    return LAUNCH_NOT_BUILT;
}

template <typename T, int ORD, int BS, int NTG>
static cudaError_t run_k2units(const Args<T> &a, const Launch &l, cudaStream_t st)
{
    if constexpr (BS == 0) {
        return cudaErrorInvalidConfiguration; /* not listed: launch_k2units refuses */
    } else {
        constexpr int TA = BS * NTG;
        constexpr int nta = 256 / TA > 0 ? 256 / TA : 1;
        const Schedule &sc = *l.sched;
        k_k2units<T, ORD, BS, NTG><<<bsrmv_grid(sc.nunits, nta), nta * TA, nta * TA * sizeof(T), st>>>(a, sc);
        return fixup(a, l, st);
    }
}

/* K2 thread arrays over the fragment units: column-major blocks of the
 * compiled sizes of K2 (BSRMV_K2_LIST) from bs 9 on, where the candidates
 * (and so the tests) have them; about 256 threads a block.  In row-major
 * blocks a compiled K2 gives each thread a row, so adjacent threads read
 * values bs apart: H100, rajat01, orani678 and sts4098 promoted to bs 24
 * and 32, 0.40-0.68x the best cuSPARSE path, where K3 over the same units
 * reads along the rows. */
template <typename T>
int launch_k2units(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    const int bsk = BSRMV_COMPILED_BS(BSRMV_K2_LIST, a.bs);
    if (order != COL || bsk < 9 || a.bs * l.group > 256 || (!l.dry && !l.sched))
        return LAUNCH_NOT_BUILT;
#define X(BS, NTG) BSRMV_LAUNCH_IF(BS != 0 && bsk == BS && l.group == NTG, run_k2units, BS, NTG)
    BSRMV_K2_LIST(X)
#undef X
    return LAUNCH_NOT_BUILT;
}

/* Rows per K3 thread: column-major blocks 4 (the thread loads a column's
 * col_idx and x once for 4 values), row-major ones 1. */
template <int ORD> constexpr int k3_rows() { return ORD == COL ? 4 : 1; }

/* K3 walks a block row's bs columns per block as one stream of
 * n * bs columns (n blocks), so that no thread idles at the end of a block
 * whatever the bs; U steps of the stream are loaded before their FMAs.
 * Thread (p, rho) of a slice of rs rows keeps R sums, of rows rho + rt*i
 * (i < R, rt = ceil(rs / R)) of the slice, over the stream's columns p,
 * p + NTG, p + 2 NTG, ...
 *  - column-major blocks: rho runs fastest, so that a warp reads whole
 *    stretches of columns; the NTG sums of a row meet in shared memory;
 *  - row-major blocks: p runs fastest, NTG a power of two up to 32, so the
 *    NTG lanes of a row read adjacent values of it and meet by shuffles.
 * Why not 32-row slices x NTG threads walking each block's columns
 * EPT = 4 at a time: lanes idle past the last row or column of a block
 * (half of them at bs 33), a row-major step reads each value bs apart,
 * and only 4 loads are in flight per thread (1.1-2.6x slower).
 * The stream of a part [s, e) of a block row is the same walk, so the
 * plain kernel (a slice of a whole row per thread block) and the unit
 * kernel (a slice of each row a work unit touches) share K3Thread. */
template <typename T, int ORD>
struct K3Thread {
    /* 64 bytes of val in flight per thread, at most 8 steps (double
     * column-major: 2 steps, 58 registers, ran at 1.02-1.30x 4 steps, 104
     * registers, at bs 33-150 on an H100; 0.91-0.96x at bs 150-256) */
    static constexpr int R = k3_rows<ORD>();
    static constexpr int U = 64 / (R * (int)sizeof(T)) > 8 ? 8 : 64 / (R * (int)sizeof(T));
    int bs, rs, ntg, t, rt, p, rho, dk, dc;
    int64_t bs2, dv, wrap;
    bool on;

    __device__ K3Thread(int bs_, int rs_, int ntg_) : bs(bs_), rs(rs_), ntg(ntg_), t(threadIdx.x)
    {
        bs2 = (int64_t)bs * bs;
        rt = (rs + R - 1) / R;                 /* threads per column phase */
        p = ORD == COL ? t / rt : t % ntg;     /* column phase */
        rho = ORD == COL ? t % rt : t / ntg;   /* first row of the slice */
        on = p < ntg && rho < rt;              /* threads round up to warps */
        /* a step moves the stream ntg columns on: dk blocks and dc columns */
        dk = ntg / bs;
        dc = ntg % bs;
        /* val offset of a step inside the row: column-major, the stream is
         * contiguous (ntg columns of bs values); row-major, dk blocks and dc
         * values, and a block minus a line more where the column wraps */
        dv = ORD == COL ? (int64_t)ntg * bs : dk * bs2 + dc;
        wrap = ORD == COL ? 0 : bs2 - bs;
    }

    /* The thread's sums over blocks [s, e) of block row `row`, rows
     * r0 + rt*i (r0: the slice's first row + rho) where mine[i]. */
    __device__ void sum(const Args<T> &a, int64_t s, int64_t e, int r0, bool (&mine)[R],
                        T (&acc)[R]) const
    {
#pragma unroll
        for (int i = 0; i < R; ++i) {
            mine[i] = on && rho + rt * i < rs && r0 + rt * i < bs;
            acc[i] = T(0);
        }
        if (!mine[0])
            return;
        const int32_t *cols = a.col_idx + s;
        const T *v0 = a.val + s * bs2;
        const int64_t n = e - s;
        int64_t k = p / bs, vo; /* block of the row, and the value's offset */
        int c = p % bs;
        vo = ORD == COL ? (int64_t)p * bs + r0 : k * bs2 + (int64_t)r0 * bs + c;
        while (k < n) {
            int64_t kq[U], oq[U];
            int cq[U];
#pragma unroll
            for (int q = 0; q < U; ++q) {
                kq[q] = k;
                cq[q] = c;
                oq[q] = vo;
                k += dk;
                c += dc;
                vo += dv;
                if (c >= bs) {
                    c -= bs;
                    ++k;
                    vo += wrap;
                }
            }
            int32_t col[U];
#pragma unroll
            for (int q = 0; q < U; ++q)
                col[q] = kq[q] < n ? ldc(cols + kq[q]) : 0;
            T v[U][R], xv[U];
#pragma unroll
            for (int q = 0; q < U; ++q) {
                const bool in = kq[q] < n;
#pragma unroll
                for (int i = 0; i < R; ++i) /* rows rt*i further down the column */
                    v[q][i] = in && mine[i] ? ldv(v0 + oq[q] + rt * i) : T(0);
                xv[q] = in ? ld(a.x + (int64_t)col[q] * bs + cq[q]) : T(0);
            }
#pragma unroll
            for (int q = 0; q < U; ++q)
#pragma unroll
                for (int i = 0; i < R; ++i)
                    acc[i] += v[q][i] * xv[q];
        }
    }

    /* The thread block's sums of the slice's rows: out(r, sum) once per row
     * r of the block row.  Every thread of the block must call it (column-
     * major: __syncthreads); red holds blockDim.x * R values. */
    template <typename F>
    __device__ void reduce(T *red, int r0, const bool (&mine)[R], T (&acc)[R], F out) const
    {
        if constexpr (ORD == ROW) {
            for (int o = ntg / 2; o >= 1; o >>= 1)
                acc[0] += __shfl_xor_sync(BSRMV_FULL_MASK, acc[0], o);
            if (mine[0] && p == 0)
                out(r0, acc[0]);
        } else {
#pragma unroll
            for (int i = 0; i < R; ++i)
                red[i * blockDim.x + t] = acc[i];
            __syncthreads();
            if (t < rt) { /* p == 0: the other phases' sums of its rows */
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    T sum = acc[i];
                    for (int g = 1; g < ntg; ++g)
                        sum += red[i * blockDim.x + g * rt + t];
                    if (mine[i])
                        out(r0 + rt * i, sum);
                }
            }
            __syncthreads();
        }
    }
};

template <typename T, int ORD>
__global__ void __launch_bounds__(512)
k_k3(const Args<T> a, int rs, int ns, int ntg)
{
    extern __shared__ unsigned char smem_raw[];
    T *red = reinterpret_cast<T *>(smem_raw);
    const K3Thread<T, ORD> th(a.bs, rs, ntg);
    constexpr int R = K3Thread<T, ORD>::R;
    const int64_t units = a.mb * ns;
    for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
        const int64_t row = u / ns;
        const int r0 = (int)(u - row * ns) * rs + th.rho; /* the thread's first row */
        const int64_t s = a.row_ptr[row], e = a.row_ptr[row + 1];
        if (long_row(a, s, e)) /* uniform: one unit per thread block */
            continue;
        bool mine[R];
        T acc[R];
        th.sum(a, s, e, r0, mine, acc);
        th.reduce(red, r0, mine, acc, [&](int r, T v) { store_y(a, row * a.bs + r, v); });
    }
}

/* K3 over the balanced kernels' work units (fragments of param blocks, or
 * the segments of long rows): a thread block per (unit, slice), walking
 * the part of each row the unit holds with the K3 stream.  Rows that
 * begin and end in the unit go to y; cut rows leave their sums in the
 * unit's slots for the fix-up (k_balanced.cu), as the row walk does.
 * Large blocks with uneven rows need both: the stream keeps 64 bytes per
 * thread in flight where the warp-wide row walk reads a value per lane,
 * and the units bound the work of a thread block where plain K3 gives a
 * row of a thousand 24 x 24 blocks (4.6 MB) to one. */
template <typename T, int ORD>
__global__ void __launch_bounds__(512)
k_k3units(const Args<T> a, const Schedule sc, int rs, int ns, int ntg)
{
    allow_fixup_launch();
    extern __shared__ unsigned char smem_raw[];
    T *red = reinterpret_cast<T *>(smem_raw);
    const K3Thread<T, ORD> th(a.bs, rs, ntg);
    constexpr int R = K3Thread<T, ORD>::R;
    T *pieces = (T *)sc.pieces;
    const int64_t work = sc.nunits * ns;
    for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
        const int64_t u = w / ns;
        const int r0 = (int)(w - u * ns) * rs + th.rho;
        const UnitRows ur(a, sc, u);
        int64_t sl = ur.slot;
        for (int64_t row = ur.row0; row < ur.row0 + ur.steps; ++row) {
            int64_t lo, hi;
            const bool whole = ur.part(a, row, lo, hi);
            bool mine[R];
            T acc[R];
            th.sum(a, lo, hi, r0, mine, acc);
            th.reduce(red, r0, mine, acc, [&](int r, T v) {
                if (whole)
                    store_y(a, row * a.bs + r, v);
                else
                    pieces[sl * a.bs + r] = v;
            });
            sl += !whole;
        }
    }
}

/* K3 geometry: ns slices of rs rows per block row, ntg column phases;
 * false where it does not fit. */
template <int ORD> static bool k3_geometry(int bs, int ns, int ntg, int *rs, int *threads)
{
    if (bs < 2 || ns > bs || ntg < 1 || (ORD == ROW && (ntg > 32 || (ntg & (ntg - 1)))))
        return false;
    *rs = (bs + ns - 1) / ns;
    const int rt = (*rs + k3_rows<ORD>() - 1) / k3_rows<ORD>();
    *threads = (rt * ntg + 31) / 32 * 32;
    return *threads <= 512;
}

/* Plain: param slices per block row (0: one).  Units (l.sched, or a dry
 * launch of a balanced configuration): rows slices, param blocks per unit. */
template <typename T, int ORD>
static int run_k3(const Args<T> &a, const Launch &l, bool units, cudaStream_t st, cudaError_t *err)
{
    int rs, threads;
    const int ns = units ? (l.rows > 0 ? l.rows : 1) : l.param > 0 ? l.param : 1;
    if (!k3_geometry<ORD>(a.bs, ns, l.group, &rs, &threads))
        return LAUNCH_NOT_BUILT;
    if (units && !l.dry && !l.sched)
        return LAUNCH_NOT_BUILT;
    const size_t smem = ORD == COL ? (size_t)threads * k3_rows<ORD>() * sizeof(T) : 0;
    return launch_matched(l, err, [&] {
        if (!units) {
            k_k3<T, ORD><<<bsrmv_grid(a.mb * ns, 1), threads, smem, st>>>(a, rs, ns, l.group);
            return cudaGetLastError();
        }
        const Schedule &sc = *l.sched;
        k_k3units<T, ORD><<<bsrmv_grid(sc.nunits * ns, 1), threads, smem, st>>>(a, sc, rs, ns, l.group);
        return fixup(a, l, st);
    });
}

template <typename T>
int launch_k3(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    return order == COL ? run_k3<T, COL>(a, l, false, s, err) : run_k3<T, ROW>(a, l, false, s, err);
}

template <typename T>
int launch_k3units(const Args<T> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    return order == COL ? run_k3<T, COL>(a, l, true, s, err) : run_k3<T, ROW>(a, l, true, s, err);
}

BSRMV_INSTANTIATE_LAUNCHER(launch_k2)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_k2)
BSRMV_INSTANTIATE_LAUNCHER(launch_k3)
BSRMV_INSTANTIATE_LAUNCHER(launch_k3units)
BSRMV_INSTANTIATE_LAUNCHER(launch_k2units)

} // namespace bsrmv_cuda
