/* Staged kernel (sm_90 and later): a thread block copies runs of whole
 * block rows -- their val and col_idx, contiguous in BSR whatever the
 * block order -- into shared memory with bulk asynchronous copies
 * (cp.async.bulk, the copy engine of Hopper's TMA, no tensor map) into
 * 3 or 4 stage buffers, and computes from shared memory.
 *
 * Why: the kernels that read val from global memory ran out of issue
 * slots, not bandwidth, where a block's values do not fit 16-byte loads
 * (float bs 3, 5, 7; ncu): each value costs
 * its own load and address arithmetic.  Here one instruction moves a
 * stage of kilobytes, so the copy costs nothing in issue slots, and the
 * compute reads shared memory with addresses that are a constant offset
 * from a per-block base.
 *
 * A stage is SR = threads / (K*bs) consecutive block rows.  Per stage:
 *  A. once its copy is in, every thread gathers x for the stage's blocks
 *     into shared memory by cp.async, consecutive threads taking
 *     consecutive values of a block's x (one L1 line per block instead of
 *     bs, as a thread per row would load) -- GL stages ahead, so that the
 *     gather's latency hides behind compute (loaded by the threads in
 *     the step that computes: 0.87-0.94x);
 *  B. K lanes per scalar row each sum every K-th block of the row, then
 *     reduce by shuffles.
 * One __syncthreads per stage (two in a stage with the arrays' last bytes):
 * x has GL + 1 buffers, and a stage's buffer is refilled only after the
 * barrier that follows its last reader.
 *
 * The buffers are sized for the longest row (the plan's row statistics),
 * so the launcher refuses matrices whose SR longest rows do not fit. */
#include "bulk.cuh"

#include <type_traits>

namespace bsrmv_cuda {

constexpr int STAGED_MAX_BUF = 4;

/* Byte sizes of one stage's buffers; computed on the host, passed by value. */
struct StagedGeom {
    int K;      /* lanes per scalar row                                */
    int SR;     /* block rows per stage                                */
    int nbuf;   /* stage buffers (3 or 4)                             */
    int vcap;   /* bytes of a val buffer (16-byte multiple)            */
    int ccap;   /* bytes of a col_idx buffer                           */
    int xcap;   /* bytes of an x buffer                                */
};


template <typename T, typename V, int ORD, int BS, int NBUF, int GL>
__global__ void __launch_bounds__(256) k_staged(const Args<T, V> a, const StagedGeom g, int64_t nstages)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int BS2 = BS * BS;
    constexpr int64_t VB = BS2 * (int64_t)sizeof(T); /* bytes of a block */
    extern __shared__ __align__(16) unsigned char sm[];
    __shared__ uint64_t bar[STAGED_MAX_BUF];
    const int tid = threadIdx.x, nt = blockDim.x, K = g.K;
    const int srow = tid / K, k = tid - srow * K;
    const int lrow = srow / BS, r = srow - lrow * BS; /* block row of the stage, row in it */
    const int64_t vtot = a.row_ptr[a.mb] * VB, ctot = a.row_ptr[a.mb] * 4;
    /* the gather runs GL stages ahead of compute, the copies NBUF - 1 - GL
     * stages ahead of the gather */
    static_assert(GL >= 1 && NBUF >= GL + 2, "a buffer for compute, GL gathered, one in flight");
    unsigned char *const cbase = sm + (size_t)NBUF * g.vcap;
    unsigned char *const xbase = cbase + (size_t)NBUF * g.ccap;
    const int64_t stride = gridDim.x;

    /* thread 0 fills buffer b with the stage of blocks [b0, b1) */
    auto issue = [&](int b, int64_t b0, int64_t b1) {
        const Span v = span_of(b0 * VB, b1 * VB, vtot), c = span_of(b0 * 4, b1 * 4, ctot);
        bar_expect(&bar[b], (uint32_t)(v.hi - v.lo + c.hi - c.lo));
        bulk_span<L2h::first>(sm + (size_t)b * g.vcap, a.val, v, &bar[b]);
        bulk_span<L2h::first>(cbase + (size_t)b * g.ccap, a.col_idx, c, &bar[b]);
    };
    auto rows_of = [&](int64_t st, int64_t &r0, int64_t &r1) {
        r0 = st * g.SR;
        r1 = r0 + g.SR < a.mb ? r0 + g.SR : a.mb;
    };
    auto blocks_of = [&](int64_t st, int64_t &b0, int64_t &b1) {
        int64_t r0, r1;
        rows_of(st, r0, r1);
        b0 = a.row_ptr[r0];
        b1 = a.row_ptr[r1];
    };

    if (tid == 0) {
        bars_init(bar, NBUF);
        for (int b = 0; b < NBUF; ++b) {
            const int64_t st = blockIdx.x + b * stride;
            if (st < nstages) {
                int64_t b0, b1;
                blocks_of(st, b0, b1);
                issue(b, b0, b1);
            }
        }
    }
    __syncthreads();

    /* row_ptr entries of a stage, loaded an iteration before its gather;
     * a thread without a row gets the empty row [b0, b0) */
    struct Rows {
        int64_t b0, b1, s, e; /* the stage's blocks; this thread's row */
    };
    auto load_rows = [&](int64_t st) {
        Rows q = {0, 0, 0, 0};
        if (st < nstages) {
            int64_t r0, r1;
            rows_of(st, r0, r1);
            q.b0 = a.row_ptr[r0];
            q.b1 = a.row_ptr[r1];
            q.s = q.e = q.b0;
            if (r0 + lrow < r1) {
                q.s = a.row_ptr[r0 + lrow];
                q.e = a.row_ptr[r0 + lrow + 1];
            }
        }
        return q;
    };
    auto xbuf = [&](int i) { return (V *)(xbase + (size_t)(i % (GL + 1)) * g.xcap); };
    /* What compute needs of a gathered stage: this thread's blocks (local
     * to the stage) and where the stage's values start in their buffer. */
    int js[GL + 1] = {}, je[GL + 1] = {}, voff[GL + 1] = {};
    /* Stage i+GL (rows q) once its copy is in buffer b: the last bytes of
     * the arrays if the stage has them, then x of its blocks into xs by
     * asynchronous copies (cp.async: no registers, so they fly while the
     * GL stages before it are computed).  The caller commits one group
     * per step, empty past the last stage, so that wait_group counts
     * stages. */
    auto gather = [&](const Rows &q, int gi) {
        const int b = gi % NBUF;
        bar_wait(&bar[b], (uint32_t)(gi / NBUF) & 1);
        const Span v = span_of(q.b0 * VB, q.b1 * VB, vtot), c = span_of(q.b0 * 4, q.b1 * 4, ctot);
        /* uniform per block; the threads' writes (tails) ordered before
         * the copy engine refills the buffer */
        const bool tv = span_tail(sm + (size_t)b * g.vcap, a.val, v, q.b1 * VB, tid, nt);
        if (span_tail(cbase + (size_t)b * g.ccap, a.col_idx, c, q.b1 * 4, tid, nt) || tv) {
            fence_to_async();
            __syncthreads();
        }
        const int32_t *cs = (const int32_t *)(cbase + (size_t)b * g.ccap + (q.b0 * 4 - c.lo));
        V *xs = xbuf(gi);
        const int nx = (int)(q.b1 - q.b0) * BS;
#pragma unroll 4
        for (int t = tid; t < nx; t += nt) {
            const int j = t / BS;
            const V *src = a.x + (int64_t)cs[j] * BS + (t - j * BS);
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2;"
                         :: "r"(smem_addr(xs + t)), "l"(src), "n"((int)sizeof(V)) : "memory");
        }
        js[GL] = (int)(q.s - q.b0);
        je[GL] = (int)(q.e - q.b0);
        voff[GL] = (int)(q.b0 * VB - v.lo);
    };
    auto shift = [&] {
#pragma unroll
        for (int u = 0; u < GL; ++u) {
            js[u] = js[u + 1];
            je[u] = je[u + 1];
            voff[u] = voff[u + 1];
        }
    };

    int64_t refill = blockIdx.x + NBUF * stride; /* next stage to copy */
    int64_t rb0 = 0, rb1 = 0;                      /* its blocks (thread 0) */
    if (tid == 0 && refill < nstages)
        blocks_of(refill, rb0, rb1);
    /* prologue: gathers of the first GL stages, rows of the next */
#pragma unroll
    for (int u = 0; u < GL; ++u) {
        if (blockIdx.x + u * stride < nstages)
            gather(load_rows(blockIdx.x + u * stride), u);
        cp_async_commit();
        shift();
    }
    Rows ahead = load_rows(blockIdx.x + GL * stride);

    int i = 0; /* stages of this thread block: int, so that % NBUF is cheap */
    for (int64_t st = blockIdx.x; st < nstages; st += stride, ++i) { /* uniform per block */
        const Rows later = load_rows(st + (GL + 1) * stride);
        /* x of stage i is in (GL - 1 later gathers may fly); every thread
         * is past stage i-1 */
        cp_async_wait<GL == 1 ? 0 : 1>();
        __syncthreads();
        if (tid == 0 && i > 0 && refill < nstages) {
            issue((i - 1) % NBUF, rb0, rb1);
            refill += stride;
            if (refill < nstages)
                blocks_of(refill, rb0, rb1);
        }
        if (st + GL * stride < nstages)
            gather(ahead, i + GL);
        cp_async_commit();
        /* K lanes per scalar row of stage i */
        const T *vs = (const T *)(sm + (size_t)(i % NBUF) * g.vcap + voff[0]);
        const V *xs = xbuf(i);
        V acc = V(0);
#pragma unroll 2
        for (int j = js[0] + k; j < je[0]; j += K) {
            const T *vb = vs + j * BS2;
            const V *xb = xs + j * BS;
#pragma unroll
            for (int cc = 0; cc < BS; ++cc)
                madd(acc, V(vb[ORD == COL ? cc * BS + r : r * BS + cc]), xb[cc]);
        }
        for (int o = K / 2; o >= 1; o >>= 1)
            acc += __shfl_xor_sync(BSRMV_FULL_MASK, acc, o);
        if (k == 0 && lrow < g.SR) {
            int64_t r0, r1;
            rows_of(st, r0, r1);
            if (r0 + lrow < r1)
                store_y(a, (r0 + lrow) * BS + r, acc);
        }
        shift();
        ahead = later;
    }
#else
    __trap(); /* not offered below sm_90 (staged_geom) */
#endif
}

/* Geometry of configuration l for block size bs, value sizes tsize (val)
 * and xsize (x); false where it does not fit the device or the parameters
 * are invalid. */
static bool staged_geom(const Launch &l, int bs, size_t tsize, size_t xsize, StagedGeom *g,
                        size_t *smem)
{
    const int K = l.group;
    if (l.cc < 90 || K < 1 || K > 32 || (K & (K - 1)) || l.rows < 1 || l.rows > 2 ||
        l.param < l.rows + 2 || l.param > STAGED_MAX_BUF || l.threads % 32 || l.threads < 64 ||
        l.threads > 256)
        return false;
    const int SR = l.threads / (K * bs);
    if (SR < 1)
        return false;
    const int64_t len = l.len_max > 0 ? l.len_max : 1;
    const int64_t vcap = span_cap((int64_t)SR * len * bs * bs * (int64_t)tsize);
    const int64_t ccap = span_cap((int64_t)SR * len * 4);
    const int64_t xcap = up16((int64_t)SR * len * bs * (int64_t)xsize);
    /* x is gathered `rows` stages ahead: rows + 1 x buffers */
    const int64_t total = l.param * (vcap + ccap) + (l.rows + 1) * xcap;
    /* the opt-in limit counts the static mbarriers too */
    if (total + (int64_t)sizeof(uint64_t) * STAGED_MAX_BUF > (int64_t)l.smem_optin)
        return false;
    *g = StagedGeom{K, SR, l.param, (int)vcap, (int)ccap, (int)xcap};
    *smem = (size_t)total;
    return true;
}

template <typename T, int ORD, int BS, typename V>
static cudaError_t run(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    StagedGeom g;
    size_t smem = 0;
    staged_geom(l, BS, sizeof(T), sizeof(V), &g, &smem); /* checked by the launcher */
    auto kern = g.nbuf == 3 ? k_staged<T, V, ORD, BS, 3, 1>
                : l.rows == 1 ? k_staged<T, V, ORD, BS, 4, 1>
                              : k_staged<T, V, ORD, BS, 4, 2>;
    const int64_t nstages = (a.mb + g.SR - 1) / g.SR;
    /* persistent: as many thread blocks as fit the SMs at once (a second
     * wave would double the time) */
    int per_sm = 1;
    const cudaError_t e = blocks_per_sm(kern, l.threads, smem, l.smem_optin, &per_sm);
    if (e != cudaSuccess)
        return e;
    int64_t grid = (int64_t)per_sm * (l.sms > 0 ? l.sms : 1);
    grid = grid < nstages ? grid : nstages;
    kern<<<(unsigned)(grid > 0 ? grid : 1), l.threads, smem, s>>>(a, g, nstages);
    return cudaGetLastError();
}

/* Float values with double vectors: the block sizes whose float matrices
 * take the staged kernel on grids and that mixed precision is measured at
 * (the others run by-block or by-column). */
#define BSRMV_STAGED_MIXED_LIST(X) X(3, 0) X(6, 0)

template <typename T, typename V>
int launch_staged(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err)
{
    StagedGeom g;
    size_t smem = 0;
    if (a.long_len > 0 || !staged_geom(l, a.bs, sizeof(T), sizeof(V), &g, &smem))
        return LAUNCH_NOT_BUILT;
    /* the bulk copies need 16-byte aligned arrays; wrapped arrays that are
     * not take by-column */
    if (!l.dry && ((((uintptr_t)a.val) | ((uintptr_t)a.col_idx)) & 15)) {
        Launch c = l;
        c.group = 32;
        c.rows = 1;
        c.threads = 128;
        c.param = 0;
        return launch_bycolumn(a, order, c, s, err);
    }
#define X(BS, P_) BSRMV_LAUNCH_IF(a.bs == BS, run, BS)
    if constexpr (std::is_same<T, cplx<double>>::value) {
        BSRMV_STAGED_Z_LIST(X)
    } else if constexpr (std::is_same<T, cplx<float>>::value) {
        BSRMV_STAGED_C_LIST(X)
    } else if constexpr (std::is_same<T, V>::value) {
        BSRMV_STAGED_LIST(X)
    } else {
        BSRMV_STAGED_MIXED_LIST(X)
    }
#undef X
    return LAUNCH_NOT_BUILT;
}

BSRMV_INSTANTIATE_LAUNCHER_MIXED(launch_staged)
BSRMV_INSTANTIATE_LAUNCHER_CPLX(launch_staged)

} // namespace bsrmv_cuda
