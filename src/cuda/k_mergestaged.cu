/* Staged merge path (sm_90 and later): the lane-sequential merge path of
 * k_mergeseq (k_balanced.cu), a warp per unit, but each warp runs through
 * its units with NBUF unit buffers in shared memory, and the copy engine
 * brings a unit's arrays -- its blocks' val and col_idx and its rows'
 * row_ptr, three contiguous ranges -- while the warp computes the units
 * before it (cp.async.bulk, bulk.cuh).  Once a unit's copy is in, the
 * lanes gather its x lines into shared memory by cp.async, a unit ahead
 * of compute, so that computing a unit waits for no memory.
 *
 * Why: k_mergeseq reads a unit's row_ptr, then its col_idx, then val and
 * x, each a memory latency after the other, and only then merges; with
 * short power-law rows at bs 2-4 it reached 59-66% of the read bandwidth
 * on an H100 while a gather of the same bytes without rows reached 80-97%
 * (docs/GPU.md, "Irregular matrices").  Copying the unit ahead but still
 * loading x in the step that computes ran slower than k_mergeseq (H100,
 * power-law double bs 2: 1213-1368 GB/s against 1798-1905, bs 4:
 * 1289-1769 against 1615-2029): a warp then holds two units of shared
 * memory through an x latency, and too few warps fit an SM.
 *
 * Unit i of a warp: wait for unit i+1's copy and start its x gather; wait
 * for unit i's x; compute its block products in place of its x lines
 * (unit_products); hand its buffer back to the copy engine with the unit
 * NBUF ahead; merge (unit_merge).  The partial sums of rows cut by unit
 * boundaries go to the schedule's slots; k_balanced.cu's fix-up adds
 * them. */

#include "bulk.cuh"
#include "merge.cuh"

namespace bsrmv_cuda {

/* Bytes of a warp's share of shared memory: its NBUF barriers and unit
 * records, NBUF unit buffers (val, col_idx, row_ptr), two buffers of x
 * lines (then block products), the row offsets.  Shares are whole per
 * warp, so that thread blocks of a warp or two fill an SM's shared memory
 * without a remainder. */
struct MsGeom {
    int head;             /* barriers and unit records  */
    int vcap, ccap, rcap; /* one unit buffer's parts    */
    int pcap;             /* one x / products buffer    */
    int warp_bytes;       /* all of a warp's share      */
};

/* a barrier and a unit record (unit_row, unit_blk, end_row, end_blk,
 * slot) per buffer */
constexpr int MS_HEAD_PER_BUF = 8 + 5 * 8;

/* For units touching at most `rows` block rows and `blocks` blocks; false
 * where a warp's share would not fit `optin` bytes. */
static bool ms_geom(int64_t rows, int64_t blocks, int bs, size_t ts, int nbuf, size_t optin,
                    MsGeom *g)
{
    const int64_t vcap = span_cap(blocks * bs * bs * (int64_t)ts), ccap = span_cap(blocks * 4);
    const int64_t rcap = span_cap((rows + 1) * 8);
    const int64_t pcap = (blocks * bs * (int64_t)ts + 15) & ~(int64_t)15;
    const int64_t head = (nbuf * MS_HEAD_PER_BUF + 15) & ~15;
    const int64_t total = head + nbuf * (vcap + ccap + rcap) + 2 * pcap + (((rows + 1) * 4 + 15) & ~(int64_t)15);
    if (blocks < 0 || rows < 0 || total > (int64_t)optin)
        return false;
    *g = MsGeom{(int)head, (int)vcap, (int)ccap, (int)rcap, (int)pcap, (int)total};
    return true;
}

template <typename T, int ORD, int BS, int NBUF>
__global__ void __launch_bounds__(256) k_mergestaged(const Args<T> a, const Schedule sc, const MsGeom g)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int64_t VB = BS * BS * (int64_t)sizeof(T); /* bytes of a block */
    extern __shared__ __align__(16) unsigned char sm[];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    unsigned char *const share = sm + (size_t)wib * g.warp_bytes;
    uint64_t *const bar = (uint64_t *)share;
    int64_t(*const unit)[5] = (int64_t(*)[5])(share + NBUF * 8);
    unsigned char *const mine = share + g.head; /* the unit buffers */
    const size_t bufb = (size_t)g.vcap + g.ccap + g.rcap;
    T *const xp0 = (T *)(mine + NBUF * bufb);
    int *const rpi = (int *)((unsigned char *)xp0 + 2 * (size_t)g.pcap);
    const int64_t nnzb = ld(a.row_ptr + a.mb);
    const int64_t vtot = nnzb * VB, ctot = nnzb * 4, rtot = (a.mb + 1) * 8;
    const int64_t nw = (int64_t)gridDim.x * wpb;
    const int64_t first = (int64_t)blockIdx.x * wpb + wib;
    auto xbuf = [&](int i) { return (T *)((unsigned char *)xp0 + (size_t)(i & 1) * g.pcap); };

    /* unit m's ranges: its blocks' val and col_idx, row_ptr of its rows
     * (r0 .. the last row it touches, and that row's end) */
    auto spans = [&](const int64_t(&m)[5], Span &v, Span &c, Span &r) {
        const int64_t last = m[2] < a.mb ? m[2] : a.mb - 1;
        v = span_of(m[1] * VB, m[3] * VB, vtot);
        c = span_of(m[1] * 4, m[3] * 4, ctot);
        r = span_of(m[0] * 8, (last + 2) * 8, rtot);
    };
    auto load_unit = [&](int64_t u, int64_t(&m)[5]) {
        m[0] = ld(sc.unit_row + u);
        m[1] = ld(sc.unit_blk + u);
        m[2] = ld(sc.end_row + u);
        m[3] = ld(sc.end_blk + u);
        m[4] = ld(sc.slot + u);
    };
    /* lane 0: buffer b <- unit m */
    auto issue = [&](int b, const int64_t(&m)[5]) {
        Span v, c, r;
        spans(m, v, c, r);
#pragma unroll
        for (int q = 0; q < 5; ++q)
            unit[b][q] = m[q];
        unsigned char *const p = mine + b * bufb;
        bar_expect(&bar[b], (uint32_t)(v.hi - v.lo + c.hi - c.lo + r.hi - r.lo));
        bulk_span(p, a.val, v, &bar[b]);
        bulk_span(p + g.vcap, a.col_idx, c, &bar[b]);
        bulk_span(p + g.vcap + g.ccap, a.row_ptr, r, &bar[b]);
    };
    /* Unit i: once its copy is in buffer i % NBUF, the arrays' last bytes
     * if it has them (the last unit only), then its x lines into
     * xbuf(i), a value per lane and cp.async (no registers held, so they
     * fly while unit i-1 is computed).  Returns whether lanes wrote the
     * buffer (tails). */
    auto arrive = [&](int i) -> bool {
        const int b = i % NBUF;
        bar_wait(&bar[b], (uint32_t)(i / NBUF) & 1);
        int64_t m[5];
#pragma unroll
        for (int q = 0; q < 5; ++q)
            m[q] = unit[b][q];
        Span v, c, r;
        spans(m, v, c, r);
        unsigned char *const p = mine + b * bufb;
        const int64_t last = m[2] < a.mb ? m[2] : a.mb - 1;
        const bool tv = span_tail(p, a.val, v, m[3] * VB, lane, 32);
        const bool tc = span_tail(p + g.vcap, a.col_idx, c, m[3] * 4, lane, 32);
        const bool tails = span_tail(p + g.vcap + g.ccap, a.row_ptr, r, (last + 2) * 8, lane, 32) || tv || tc;
        if (tails)
            __syncwarp();
        const int32_t *const cs = (const int32_t *)(p + g.vcap + (m[1] * 4 - c.lo));
        T *const xs = xbuf(i);
        const int nx = (int)(m[3] - m[1]) * BS;
#pragma unroll 4
        for (int t = lane; t < nx; t += 32) {
            const int k = t / BS;
            const T *src = a.x + (int64_t)cs[k] * BS + (t - k * BS);
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2;"
                         :: "r"(smem_addr(xs + t)), "l"(src), "n"((int)sizeof(T)) : "memory");
        }
        return tails;
    };
    auto commit = [] { asm volatile("cp.async.commit_group;" ::: "memory"); };

    int64_t next[5] = {};               /* lane 0: the unit of the next refill */
    int64_t refill = first + NBUF * nw; /* its index */
    if (lane == 0) {
        bars_init(bar, NBUF);
        for (int b = 0; b < NBUF; ++b)
            if (first + b * nw < sc.nunits) {
                int64_t m[5];
                load_unit(first + b * nw, m);
                issue(b, m);
            }
        if (refill < sc.nunits)
            load_unit(refill, next);
    }
    __syncwarp();
    bool tails = first < sc.nunits && arrive(0);
    commit();

    int i = 0; /* units of this warp: int, so that % NBUF is cheap */
    for (int64_t u = first; u < sc.nunits; u += nw, ++i) { /* uniform per warp */
        /* unit i+1's gather starts (an empty group past the last unit, so
         * that wait_group 1 always means unit i) */
        const bool tails_next = u + nw < sc.nunits && arrive(i + 1);
        commit();
        asm volatile("cp.async.wait_group 1;" ::: "memory");
        __syncwarp(); /* every lane's part of unit i's x is in */
        const int b = i % NBUF;
        int64_t m[5];
#pragma unroll
        for (int q = 0; q < 5; ++q)
            m[q] = unit[b][q];
        Span v, c, r;
        spans(m, v, c, r);
        unsigned char *const p = mine + b * bufb;
        const int64_t r0 = m[0], j = m[1], re = m[2];
        const int nr = (int)((re < a.mb ? re : a.mb - 1) - r0 + 1); /* rows r0..re */
        const int na = (int)(re - r0);                              /* rows ending here */
        const int nb = (int)(m[3] - j);
        const T *const vs = (const T *)(p + (j * VB - v.lo));
        const int64_t *const rs = (const int64_t *)(p + g.vcap + g.ccap + (r0 * 8 - r.lo));
        /* row_ptr relative to the unit's first block, clamped to [-1, nb]
         * (as k_mergeseq) */
        for (int t = lane; t <= nr; t += 32) {
            const int64_t o = rs[t] - j;
            rpi[t] = (int)(o < 0 ? -1 : o > nb ? nb : o);
        }
        T *const xs = xbuf(i);
        unit_products<T, ORD, BS, true>(a, nb, vs, [&](int k) { return xs + k * BS; }, xs, lane);
        /* buffer b is read; threads' writes to it (tails) must be ordered
         * before the copy engine's */
        if (tails)
            fence_to_async();
        __syncwarp();
        if (lane == 0 && refill < sc.nunits) {
            issue(b, next);
            refill += nw;
            if (refill < sc.nunits)
                load_unit(refill, next);
        }
        unit_merge<T, BS>(a, (T *)sc.pieces, r0, m[4], nr, na, nb, rpi, xs, lane);
        __syncwarp(); /* rpi and xbuf(i) are unit i+1's and i+2's */
        tails = tails_next;
    }
#else
    __trap(); /* not offered below sm_90 (mergestaged_fits) */
#endif
}

bool mergestaged_fits(const Launch &l, int bs, size_t ts)
{
    MsGeom g;
    /* a unit of param items touches at most param + 1 rows */
    return l.cc >= 90 && l.rows >= 2 && l.rows <= 4 && l.threads % 32 == 0 && l.threads >= 32 &&
           l.threads <= 256 && l.param >= 1 &&
           ms_geom((int64_t)l.param + 1, l.param, bs, ts, l.rows, l.smem_optin, &g);
}

template <typename T, int ORD, int BS>
cudaError_t run_mergestaged(const Args<T> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    MsGeom g;
    if (!ms_geom(sc.max_rows, sc.max_blocks, BS, sizeof(T), l.rows, l.smem_optin, &g))
        return cudaErrorInvalidConfiguration; /* the launcher checked the bound */
    /* fewer warps per thread block where their shares do not fit */
    int wpb = l.threads / 32;
    while (wpb > 1 && (size_t)wpb * g.warp_bytes > l.smem_optin)
        --wpb;
    const size_t smem = (size_t)wpb * g.warp_bytes;
    auto kern = l.rows == 2   ? k_mergestaged<T, ORD, BS, 2>
                : l.rows == 3 ? k_mergestaged<T, ORD, BS, 3>
                              : k_mergestaged<T, ORD, BS, 4>;
    /* persistent: the warps that fit the SMs at once, each through every
     * nw-th unit */
    int per_sm = 1;
    const cudaError_t e = blocks_per_sm(kern, wpb * 32, smem, &per_sm);
    if (e != cudaSuccess)
        return e;
    int64_t grid = (int64_t)per_sm * (l.sms > 0 ? l.sms : 1);
    const int64_t need = (sc.nunits + wpb - 1) / wpb;
    grid = grid < need ? grid : need;
    kern<<<(unsigned)(grid > 0 ? grid : 1), wpb * 32, smem, s>>>(a, sc, g);
    return cudaGetLastError();
}

#define X(BS, P_)                                                              \
    template cudaError_t run_mergestaged<float, COL, BS>(const Args<float> &, const Launch &, cudaStream_t); \
    template cudaError_t run_mergestaged<float, ROW, BS>(const Args<float> &, const Launch &, cudaStream_t); \
    template cudaError_t run_mergestaged<double, COL, BS>(const Args<double> &, const Launch &, cudaStream_t); \
    template cudaError_t run_mergestaged<double, ROW, BS>(const Args<double> &, const Launch &, cudaStream_t);
BSRMV_MERGESTAGED_LIST(X)
#undef X

} // namespace bsrmv_cuda
