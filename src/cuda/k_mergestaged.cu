/* Staged merge path (sm_90 and later): the lane-sequential merge path of
 * k_mergeseq (k_balanced.cu), a warp per unit, but each warp runs through
 * its units (a persistent grid) and the copy engine brings each unit's
 * col_idx and row_ptr ranges into shared memory NBUF - 1 units ahead
 * (cp.async.bulk, bulk.cuh).  val and x are read from global memory as in
 * k_mergeseq, both in one batch: x's addresses come from col_idx already
 * in shared memory.
 *
 * Why: k_mergeseq reads a unit's bounds, then its row_ptr, then its
 * col_idx, then val and x, four memory latencies one after another per
 * unit (ncu, H100, power-law double bs 4: 70% of its warps' stalls on
 * global loads, 35% of the warp slots occupied, DRAM 62% busy).  Here a
 * unit waits for one.  Copying the unit's val as well, and gathering x
 * into shared memory, ran slower (0.55-0.95x k_mergeseq, H100 power-law
 * bs 2 and 4): a warp then needs buffers for several units' values, so
 * few warps fit an SM (9% of the warp slots) and shared-memory latency
 * in the merge was no longer hidden.
 *
 * Unit i of a warp: wait for its buffer (i % NBUF); convert its row_ptr
 * to offsets; its block products (unit_products); hand the buffer back to
 * the copy engine with the unit NBUF ahead; merge (unit_merge).  The
 * partial sums of rows cut by unit boundaries go to the schedule's slots;
 * k_balanced.cu's fix-up adds them. */
#include "bulk.cuh"
#include "merge.cuh"

namespace bsrmv_cuda {

/* Bytes of a warp's share of shared memory: its NBUF barriers and unit
 * records, NBUF unit buffers (col_idx, row_ptr), the block products and
 * the row offsets.  Shares are whole per warp (a warp per thread block
 * fills an SM's shared memory without a remainder). */
struct MsGeom {
    int head;       /* barriers and unit records */
    int ccap, rcap; /* one unit buffer's parts   */
    int pcap;       /* block products            */
    int warp_bytes; /* all of a warp's share     */
};

/* a barrier and a unit record (unit_row, unit_blk, end_row, end_blk,
 * slot) per buffer */
constexpr int MS_HEAD_PER_BUF = 8 + 5 * 8;

/* For units touching at most `rows` block rows and `blocks` blocks; false
 * where a warp's share would not fit `optin` bytes. */
static bool ms_geom(int64_t rows, int64_t blocks, int bs, size_t ts, int nbuf, size_t optin,
                    MsGeom *g)
{
    const int64_t ccap = span_cap(blocks * 4), rcap = span_cap((rows + 1) * 8);
    const int64_t pcap = up16(blocks * bs * (int64_t)ts), head = up16(nbuf * MS_HEAD_PER_BUF);
    const int64_t total = head + nbuf * (ccap + rcap) + pcap + up16((rows + 1) * 4);
    if (blocks < 0 || rows < 0 || total > (int64_t)optin)
        return false;
    *g = MsGeom{(int)head, (int)ccap, (int)rcap, (int)pcap, (int)total};
    return true;
}

template <typename T, int ORD, int BS, int NBUF>
__global__ void __launch_bounds__(256) k_mergestaged(const Args<T> a, const Schedule sc, const MsGeom g)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    allow_fixup_launch();
    /* L2 priority of val and col_idx (common.cuh): evict-first, so that x
     * stays in L2 while the matrix streams past (H100,
     * power-law bs 4: 1.01-1.04x double, level in float) */
    constexpr L2h MSH = L2h::first;
    extern __shared__ __align__(16) unsigned char sm[];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    unsigned char *const share = sm + (size_t)wib * g.warp_bytes;
    uint64_t *const bar = (uint64_t *)share;
    int64_t(*const unit)[5] = (int64_t(*)[5])(share + NBUF * 8);
    unsigned char *const mine = share + g.head; /* the unit buffers */
    const size_t bufb = (size_t)g.ccap + g.rcap;
    T *const prod = (T *)(mine + NBUF * bufb);
    int *const rpi = (int *)((unsigned char *)prod + g.pcap);
    const int64_t ctot = ld(a.row_ptr + a.mb) * 4, rtot = (a.mb + 1) * 8;
    const int64_t nw = (int64_t)gridDim.x * wpb;
    const int64_t first = (int64_t)blockIdx.x * wpb + wib;

    /* unit m's ranges: its blocks' col_idx, row_ptr of its rows (r0 ..
     * the last row it touches, and that row's end) */
    auto spans = [&](const int64_t(&m)[5], Span &c, Span &r) {
        const int64_t last = m[2] < a.mb ? m[2] : a.mb - 1;
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
        Span c, r;
        spans(m, c, r);
#pragma unroll
        for (int q = 0; q < 5; ++q)
            unit[b][q] = m[q];
        unsigned char *const p = mine + b * bufb;
        bar_expect(&bar[b], (uint32_t)(c.hi - c.lo + r.hi - r.lo));
        bulk_span<MSH>(p, a.col_idx, c, &bar[b]);
        bulk_span(p + g.ccap, a.row_ptr, r, &bar[b]);
    };

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

    int i = 0; /* units of this warp: int, so that % NBUF is cheap */
    for (int64_t u = first; u < sc.nunits; u += nw, ++i) { /* uniform per warp */
        const int b = i % NBUF;
        bar_wait(&bar[b], (uint32_t)(i / NBUF) & 1);
        int64_t m[5];
#pragma unroll
        for (int q = 0; q < 5; ++q)
            m[q] = unit[b][q];
        Span c, r;
        spans(m, c, r);
        unsigned char *const p = mine + b * bufb;
        const int64_t r0 = m[0], j = m[1], re = m[2];
        const int nr = (int)((re < a.mb ? re : a.mb - 1) - r0 + 1); /* rows r0..re */
        const int na = (int)(re - r0);                              /* rows ending here */
        const int nb = (int)(m[3] - j);
        /* the arrays' last bytes (units that reach an array's last 16
         * bytes: trailing empty rows too) */
        const bool tc = span_tail(p, a.col_idx, c, m[3] * 4, lane, 32);
        const bool tails = span_tail(p + g.ccap, a.row_ptr, r, (r0 + nr + 1) * 8, lane, 32) || tc;
        if (tails)
            __syncwarp();
        const int32_t *const cs = (const int32_t *)(p + (j * 4 - c.lo));
        const int64_t *const rs = (const int64_t *)(p + g.ccap + (r0 * 8 - r.lo));
        /* row_ptr relative to the unit's first block, clamped to [-1, nb]
         * (as k_mergeseq) */
        for (int t = lane; t <= nr; t += 32) {
            const int64_t o = rs[t] - j;
            rpi[t] = (int)(o < 0 ? -1 : o > nb ? nb : o);
        }
        unit_products<T, ORD, BS, MSH>(a, nb, a.val + j * BS * BS,
                                       [&](int k) { return a.x + (int64_t)cs[k] * BS; }, prod, lane);
        /* buffer b is read: it takes the unit NBUF ahead while this one is
         * merged (threads' writes to it, the tails, ordered before the copy
         * engine's) */
        if (tails)
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
    return l.cc >= 90 && l.rows >= 2 && l.rows <= 4 && l.param >= 1 &&
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
    const cudaError_t e = blocks_per_sm(kern, wpb * 32, smem, l.smem_optin, &per_sm);
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
