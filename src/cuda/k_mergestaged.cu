/* Staged merge path (sm_90 and later): the lane-sequential merge path of
 * k_mergeseq (k_balanced.cu), a warp per unit, but each warp runs through
 * its units with NBUF unit buffers in shared memory, and the copy engine
 * brings a unit's arrays -- its blocks' val and col_idx and its rows'
 * row_ptr, three contiguous ranges -- while the warp computes the units
 * before it (cp.async.bulk, bulk.cuh).
 *
 * Why: k_mergeseq reads a unit's row_ptr, then its col_idx, then val and
 * x, each a memory latency after the other, and only then merges; with
 * short power-law rows at bs 2-4 it reached 59-66% of the read bandwidth
 * on an H100 while a gather of the same bytes without rows reached 80-97%
 * (docs/GPU.md, "Irregular matrices").  Here only x is loaded by the
 * lanes, from addresses already in shared memory, and a unit's bytes are
 * in flight during the NBUF - 1 units before it.
 *
 * Per unit: wait for its buffer, convert its row_ptr to offsets, compute
 * the block products (unit_products, val from shared memory), hand the
 * buffer back to the copy engine with the unit NBUF ahead, then merge
 * (unit_merge).  The partial sums of rows cut by unit boundaries go to
 * the schedule's slots; k_balanced.cu's fix-up adds them. */
#include "bulk.cuh"
#include "merge.cuh"

namespace bsrmv_cuda {

constexpr int MS_MAX_WARPS = 8;

/* Bytes of a warp's share of shared memory: NBUF unit buffers (val,
 * col_idx, row_ptr), then the block products and the row offsets. */
struct MsGeom {
    int vcap, ccap, rcap; /* one unit buffer's parts */
    int pcap;             /* block products          */
    int warp_bytes;       /* all of a warp's share   */
};

/* For units touching at most `rows` block rows and `blocks` blocks; false
 * where a warp's share would not fit `optin` bytes. */
static bool ms_geom(int64_t rows, int64_t blocks, int bs, size_t ts, int nbuf, size_t optin,
                    MsGeom *g)
{
    const int64_t vcap = span_cap(blocks * bs * bs * (int64_t)ts), ccap = span_cap(blocks * 4);
    const int64_t rcap = span_cap((rows + 1) * 8);
    const int64_t pcap = (blocks * bs * (int64_t)ts + 15) & ~(int64_t)15;
    const int64_t total = nbuf * (vcap + ccap + rcap) + pcap + (((rows + 1) * 4 + 15) & ~(int64_t)15);
    /* the static barriers and unit records count against the opt-in limit */
    const int64_t stat = (int64_t)MS_MAX_WARPS * nbuf * (8 + 5 * 8);
    if (blocks < 0 || rows < 0 || total + stat > (int64_t)optin)
        return false;
    *g = MsGeom{(int)vcap, (int)ccap, (int)rcap, (int)pcap, (int)total};
    return true;
}

template <typename T, int ORD, int BS, int NBUF>
__global__ void __launch_bounds__(256) k_mergestaged(const Args<T> a, const Schedule sc, const MsGeom g)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int64_t VB = BS * BS * (int64_t)sizeof(T); /* bytes of a block */
    extern __shared__ __align__(16) unsigned char sm[];
    __shared__ uint64_t bars[MS_MAX_WARPS][NBUF];
    /* the unit in each buffer: unit_row, unit_blk, end_row, end_blk, slot */
    __shared__ int64_t units[MS_MAX_WARPS][NBUF][5];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    unsigned char *const mine = sm + (size_t)wib * g.warp_bytes;
    const size_t bufb = (size_t)g.vcap + g.ccap + g.rcap;
    T *const prod = (T *)(mine + NBUF * bufb);
    int *const rpi = (int *)((unsigned char *)prod + g.pcap);
    uint64_t *const bar = bars[wib];
    int64_t(*const unit)[5] = units[wib];
    const int64_t nnzb = ld(a.row_ptr + a.mb);
    const int64_t vtot = nnzb * VB, ctot = nnzb * 4, rtot = (a.mb + 1) * 8;
    const int64_t nw = (int64_t)gridDim.x * wpb;
    const int64_t first = (int64_t)blockIdx.x * wpb + wib;

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

    int64_t next[5] = {};                 /* lane 0: the unit of the next refill */
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

    int i = 0; /* units of this warp: int, so that % NBUF is cheap */
    for (int64_t u = first; u < sc.nunits; u += nw, ++i) { /* uniform per warp */
        const int b = i % NBUF;
        bar_wait(&bar[b], (uint32_t)(i / NBUF) & 1);
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
        /* only the last units of the arrays have tails */
        const bool tv = span_tail(p, a.val, v, m[3] * VB, lane, 32);
        const bool tc = span_tail(p + g.vcap, a.col_idx, c, m[3] * 4, lane, 32);
        if (span_tail(p + g.vcap + g.ccap, a.row_ptr, r, (r0 + nr + 1) * 8, lane, 32) || tv || tc)
            __syncwarp();
        const T *const vs = (const T *)(p + (j * VB - v.lo));
        const int32_t *const cs = (const int32_t *)(p + g.vcap + (j * 4 - c.lo));
        const int64_t *const rs = (const int64_t *)(p + g.vcap + g.ccap + (r0 * 8 - r.lo));
        /* row_ptr relative to the unit's first block, clamped to [-1, nb]
         * (as k_mergeseq) */
        for (int t = lane; t <= nr; t += 32) {
            const int64_t o = rs[t] - j;
            rpi[t] = (int)(o < 0 ? -1 : o > nb ? nb : o);
        }
        unit_products<T, ORD, BS, true>(a, nb, vs, [&](int k) { return cs[k]; }, prod, lane);
        /* the lanes are done with buffer b: it takes the unit NBUF ahead
         * while this one is merged */
        fence_to_async();
        __syncwarp();
        if (lane == 0 && refill < sc.nunits) {
            issue(b, next);
            refill += nw;
            if (refill < sc.nunits)
                load_unit(refill, next);
        }
        unit_merge<T, BS>(a, (T *)sc.pieces, r0, m[4], nr, na, nb, rpi, prod, lane);
        __syncwarp(); /* prod and rpi are the next unit's */
    }
#else
    __trap(); /* not offered below sm_90 (mergestaged_fits) */
#endif
}

bool mergestaged_fits(const Launch &l, int bs, size_t ts)
{
    MsGeom g;
    /* a unit of param items touches at most param + 1 rows */
    return l.cc >= 90 && (l.rows == 2 || l.rows == 3) && l.threads % 32 == 0 && l.threads >= 32 &&
           l.threads <= 32 * MS_MAX_WARPS && l.param >= 1 &&
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
    const size_t stat = (size_t)MS_MAX_WARPS * l.rows * (8 + 5 * 8);
    while (wpb > 1 && (size_t)wpb * g.warp_bytes + stat > l.smem_optin)
        --wpb;
    const size_t smem = (size_t)wpb * g.warp_bytes;
    auto kern = l.rows == 2 ? k_mergestaged<T, ORD, BS, 2> : k_mergestaged<T, ORD, BS, 3>;
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
