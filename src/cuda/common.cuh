/* Shared by the CUDA kernel families (one .cu file per family) and the
 * C API in matrix.cu.  Not installed. */
#ifndef BSRMV_CUDA_COMMON_CUH
#define BSRMV_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>

#include "complex.cuh"

extern "C" {
#include "internal.h"
}

namespace bsrmv_cuda {

enum { COL = 0, ROW = 1 };
#define BSRMV_FULL_MASK 0xffffffffu

/* Everything a kernel needs for one call: values of type T, x, y and the
 * sums of type V (T, or double for float values: mixed precision, built
 * for the families that say so).  alpha/beta already rounded to V. */
template <typename T, typename V = T> struct Args {
    int64_t mb, nb;
    int bs;
    const int64_t *__restrict__ row_ptr;
    const int32_t *__restrict__ col_idx;
    const T *__restrict__ val;
    const V *__restrict__ x;
    V *__restrict__ y;
    V alpha, beta;
    /* > 0: rows of more blocks belong to the long-row pass of the segmented
     * kernel (k_balanced.cu); the plain kernels neither compute nor store them */
    int64_t long_len;
};

template <typename T, typename V>
__device__ __forceinline__ bool long_row(const Args<T, V> &a, int64_t s, int64_t e)
{
    return a.long_len > 0 && e - s > a.long_len;
}

/* Work units of the balanced kernels (k_balanced.cu), made by the plan
 * (schedule.cu).  Unit u runs from merge-path coordinate (unit_row[u],
 * unit_blk[u]) -- unit_row[u] block rows finished before it, blocks from
 * unit_blk[u] on -- to (end_row[u], end_blk[u]).  A block row cut by unit
 * boundaries leaves partial sums in consecutive `pieces` slots; fix entry
 * k = (row, first slot, last slot) sums them in slot order (deterministic). */
struct Schedule {
    int64_t nunits;
    const int64_t *unit_row; /* [nunits + 1]                          */
    const int64_t *unit_blk; /* [nunits + 1]                          */
    const int64_t *end_row;  /* [nunits]                              */
    const int64_t *end_blk;  /* [nunits]                              */
    const int64_t *slot;     /* [nunits]: the unit's first slot       */
    int64_t nfix;
    const int64_t *fix;      /* [3 * nfix]                            */
    int max_rows;            /* most block rows touched by one unit   */
    int max_blocks;          /* most blocks of one unit               */
    void *pieces;            /* slots * bs values of the vector type  */
};

/* Launch parameters (a decoded bsrmv_gpu_config). */
struct Launch {
    int group;   /* lanes per block row (sub-warp group) or thread groups   */
    int rows;    /* consecutive block rows per group / thread array         */
    int threads; /* threads per thread block                                */
    int param;   /* family-specific: stage depth, thread arrays, ...       */
    int dry;     /* only report whether the instantiation exists            */
    const Schedule *sched; /* balanced kernels: the plan's work units      */
    int merge;             /* balanced kernels: merge-path units           */
    /* the matrix and device, for kernels that size shared memory by them */
    int64_t len_max;   /* longest block row                              */
    int sms, cc;       /* SM count, compute capability (major*10+minor)  */
    size_t smem_optin; /* shared memory a thread block may opt in to     */
};

/* Launch::param of the SYM kernels (k_sym.cu), set from the op and the
 * storage, not from the configuration: conjugate every stored block as it
 * is read (ROW) and the mirrored blocks (MIRROR; Hermitian storage). */
enum { SYM_CONJ_ROW = 1, SYM_CONJ_MIRROR = 2 };

/* Result of a launcher: the instantiation does not exist, or a CUDA code. */
enum LaunchStatus { LAUNCH_OK = 0, LAUNCH_NOT_BUILT = 1, LAUNCH_CUDA_ERROR = 2 };

/* acc += a * b: one FMA for the real types (complex.cuh has the complex
 * one). */
template <typename V> __device__ __forceinline__ void madd(V &acc, const V &a, const V &b)
{
    acc += a * b;
}

/* y[i] = alpha*sum + beta*y[i]; beta == 0 never reads y. */
template <typename T, typename V>
__device__ __forceinline__ void store_y(const Args<T, V> &a, int64_t i, V sum)
{
    V v = a.alpha * sum;
    if (a.beta != V(0))
        v += a.beta * a.y[i];
    a.y[i] = v;
}

__host__ __device__ __forceinline__ constexpr int pow2ceil(int n)
{
    int p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* Lanes of a G-lane group hold partial sums of items i = lane / bs (n items,
 * `active` = n*bs lanes); sum the items with the same lane % bs into lanes
 * 0..bs-1.  Every lane of the warp must call it (full-mask shuffles). */
template <typename T, int G>
__device__ __forceinline__ T group_reduce(T v, int lane, int bs, int n)
{
    const int active = n * bs;
    for (int s = pow2ceil(n) / 2; s >= 1; s >>= 1) {
        T o = __shfl_down_sync(BSRMV_FULL_MASK, v, s * bs, G);
        if (lane + s * bs < active)
            v += o;
    }
    return v;
}

/* Loads of the read-only arrays, all through the non-coherent path:
 *   ld   x and row_ptr;   ldc  col_idx;   ldv<KEEP_L1>  val.
 * A DRAM miss fills 256 bytes of L2 (.L2::256B): a warp reads a block row
 * as short stretches, and the longer DRAM requests lifted nearly every
 * kernel on the H100 (docs/GPU.md, "Loads").  val is read once and is
 * not kept in L1 (leaving L1 to x and col_idx) unless the kernel asks
 * (KEEP_L1): by-column groups narrower than 16 lanes, whose 64-byte reads
 * lost 20% without L1.
 *
 * H, the L2 eviction priority of the load (createpolicy + .L2::cache_hint):
 * a kernel that reads val and col_idx with L2h::first keeps x and the y it
 * writes in L2 while the matrix streams past (DRAM writes of y fell from
 * 5.4 to 1.3 MB per SpMV on the bs 2 grid).  That lifted the staged kernel
 * 0-4%, the wide kernel at bs 2 5-16%, the flat merge path at bs 1 5% and
 * the staged merge path at bs 4 0-4%, and cost by-block, by-column, K1,
 * K2, the vector stream and the wide kernel at bs >= 4 up to 7% (H100),
 * so each kernel chooses.  x keeps the normal priority: evict-last
 * on it changed nothing measurable (0.99-1.01x without it),
 * and its lines outlive the kernel -- up to the L2 set-aside for persisting
 * accesses -- where they would crowd the caller's next kernels
 * (tools/probes/l2_linger.cu). */
enum class L2h { normal, first };
__device__ __forceinline__ uint64_t l2_evict_first()
{
    uint64_t r;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(r));
    return r;
}

/* Groups of cp.async copies (sm_80 and later): close the group of the
 * copies this thread issued since the last one; wait until at most N of
 * its groups are still in flight. */
__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
#define BSRMV_LD1_(name, T, suf, cons, l1)                                     \
    template <L2h H> __device__ __forceinline__ T name(const T *p)             \
    {                                                                          \
        T r;                                                                   \
        if constexpr (H == L2h::normal)                                        \
            asm("ld.global.nc" l1 ".L2::256B." suf " %0, [%1];" : cons(r) : "l"(p)); \
        else                                                                   \
            asm("ld.global.nc" l1 ".L2::cache_hint.L2::256B." suf " %0, [%1], %2;" \
                : cons(r) : "l"(p), "l"(l2_evict_first()));                      \
        return r;                                                              \
    }
#define BSRMV_LDT_(T, suf, cons)                                               \
    BSRMV_LD1_(ld_l1_, T, suf, cons, "")                                       \
    BSRMV_LD1_(ld_nl1_, T, suf, cons, ".L1::no_allocate")
BSRMV_LDT_(double, "f64", "=d")
BSRMV_LDT_(float, "f32", "=f")
BSRMV_LDT_(int32_t, "s32", "=r")
BSRMV_LDT_(int64_t, "s64", "=l")
#undef BSRMV_LDT_
#undef BSRMV_LD1_
/* A complex value: both parts in one vector load. */
#define BSRMV_LD2_(name, R, suf, cons, l1)                                     \
    template <L2h H> __device__ __forceinline__ cplx<R> name(const cplx<R> *p) \
    {                                                                          \
        cplx<R> r;                                                             \
        if constexpr (H == L2h::normal)                                        \
            asm("ld.global.nc" l1 ".L2::256B.v2." suf " {%0, %1}, [%2];"       \
                : cons(r.re), cons(r.im) : "l"(p));                            \
        else                                                                   \
            asm("ld.global.nc" l1 ".L2::cache_hint.L2::256B.v2." suf " {%0, %1}, [%2], %3;" \
                : cons(r.re), cons(r.im) : "l"(p), "l"(l2_evict_first()));     \
        return r;                                                              \
    }
#define BSRMV_LDC_(R, suf, cons)                                               \
    BSRMV_LD2_(ld_l1_, R, suf, cons, "")                                       \
    BSRMV_LD2_(ld_nl1_, R, suf, cons, ".L1::no_allocate")
BSRMV_LDC_(double, "f64", "=d")
BSRMV_LDC_(float, "f32", "=f")
#undef BSRMV_LDC_
#undef BSRMV_LD2_
template <L2h H = L2h::normal, typename T> __device__ __forceinline__ T ld(const T *p)
{
    return ld_l1_<H>(p);
}
template <L2h H = L2h::normal> __device__ __forceinline__ int32_t ldc(const int32_t *p)
{
    return ld_l1_<H>(p);
}
template <bool KEEP_L1 = false, L2h H = L2h::normal, typename T>
__device__ __forceinline__ T ldv(const T *p)
{
    if constexpr (KEEP_L1)
        return ld_l1_<H>(p);
    else
        return ld_nl1_<H>(p);
}

/* N consecutive values at p in 16-byte loads (8 bytes for float N not a
 * multiple of 4, single values for odd N); p must be aligned to the load
 * width (the caller checks).  A warp load of whole sectors instead of a
 * value per lane: column-major bs-2 blocks in k_mergeseq, k_wide.  With pred false
 * nothing is read and v is zero: the loads are predicated, not branched
 * around -- with a branch per step the compiler kept each step's loads and
 * FMAs together and ran the steps one after another (k_wide). */
template <bool KEEP_L1 = false, L2h H = L2h::normal, typename T, int N>
__device__ __forceinline__ void ldv_vec(const T *p, T (&v)[N], bool pred = true)
{
    /* pr, pi: operand numbers of the predicate and the policy */
#define BSRMV_LDV_(l1, pr, ops, ...)                                            \
    asm("{.reg .pred q; setp.ne.b32 q, %" pr ", 0; @q ld.global.nc" l1 ".L2::256B." ops ";}" \
        : __VA_ARGS__)
#define BSRMV_LDVP_(l1, pr, pi, ops, ...)                                      \
    asm("{.reg .pred q; setp.ne.b32 q, %" pr ", 0; @q ld.global.nc" l1                      \
        ".L2::cache_hint.L2::256B." ops ", %" pi ";}" : __VA_ARGS__, "l"(l2_evict_first()))
#define BSRMV_LDV_ALL_(pr, pi, ops, ...)                                       \
    if constexpr (H != L2h::normal && KEEP_L1)                                 \
        BSRMV_LDVP_("", pr, pi, ops, __VA_ARGS__);                             \
    else if constexpr (H != L2h::normal)                                       \
        BSRMV_LDVP_(".L1::no_allocate", pr, pi, ops, __VA_ARGS__);             \
    else if constexpr (KEEP_L1)                                                \
        BSRMV_LDV_("", pr, ops, __VA_ARGS__);                                  \
    else                                                                       \
        BSRMV_LDV_(".L1::no_allocate", pr, ops, __VA_ARGS__);
    const int pr = pred;
#pragma unroll
    for (int i = 0; i < N; ++i)
        v[i] = T(0);
    if constexpr (N == 1 && sizeof(T) == 8) {
        BSRMV_LDV_ALL_("2", "3", "f64 %0, [%1]", "+d"(v[0]) : "l"(p), "r"(pr))
    } else if constexpr (N == 1) {
        BSRMV_LDV_ALL_("2", "3", "f32 %0, [%1]", "+f"(v[0]) : "l"(p), "r"(pr))
    } else if constexpr (N % 2) { /* a value at a time */
#pragma unroll
        for (int i = 0; i < N; ++i) {
            T one[1];
            ldv_vec<KEEP_L1, H>(p + i, one, pred);
            v[i] = one[0];
        }
    } else if constexpr (sizeof(T) == 8) {
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            BSRMV_LDV_ALL_("3", "4", "v2.f64 {%0, %1}, [%2]", "+d"(v[i]), "+d"(v[i + 1])
                           : "l"(p + i), "r"(pr))
        }
    } else if constexpr (N == 2) {
        BSRMV_LDV_ALL_("3", "4", "v2.f32 {%0, %1}, [%2]", "+f"(v[0]), "+f"(v[1]) : "l"(p), "r"(pr))
    } else if constexpr (N % 4) {
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            BSRMV_LDV_ALL_("3", "4", "v2.f32 {%0, %1}, [%2]", "+f"(v[i]), "+f"(v[i + 1])
                           : "l"(p + i), "r"(pr))
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; i += 4) {
            BSRMV_LDV_ALL_("5", "6", "v4.f32 {%0, %1, %2, %3}, [%4]", "+f"(v[i]), "+f"(v[i + 1]),
                           "+f"(v[i + 2]), "+f"(v[i + 3]) : "l"(p + i), "r"(pr))
        }
    }
#undef BSRMV_LDV_ALL_
#undef BSRMV_LDVP_
#undef BSRMV_LDV_
}

/* N complex values: their 2N parts in the loads of the real ones (a
 * complex float is one 8-byte load, two are one 16-byte load; a complex
 * double one 16-byte load). */
template <bool KEEP_L1 = false, L2h H = L2h::normal, typename R, int N>
__device__ __forceinline__ void ldv_vec(const cplx<R> *p, cplx<R> (&v)[N], bool pred = true)
{
    R parts[2 * N];
    ldv_vec<KEEP_L1, H>(reinterpret_cast<const R *>(p), parts, pred);
#pragma unroll
    for (int i = 0; i < N; ++i)
        v[i] = cplx<R>(parts[2 * i], parts[2 * i + 1]);
}

/* A group of W lanes (W a power of two; its lanes are STRIDE apart, lane
 * index c = 0..W-1 inside the group) each hold N partial sums p[0..N) (N a
 * power of two, N <= W); returns, in lane c, the group's total of
 * p[c % N].  log2(N) halving exchanges (N - 1 shuffles), then log2(W/N)
 * butterfly steps: far fewer shuffles than reducing each p[i] across the
 * group (N log2 W).  Every lane of the warp must call it. */
template <typename T, int N, int W, int STRIDE = 1>
__device__ __forceinline__ T lanes_to_rows(T (&p)[N], int c)
{
    constexpr int LOG2N = N >= 32 ? 5 : N >= 16 ? 4 : N >= 8 ? 3 : N >= 4 ? 2 : N >= 2 ? 1 : 0;
    static_assert((1 << LOG2N) == N && N <= W && W * STRIDE <= 32, "powers of two in a warp");
#pragma unroll
    for (int k = LOG2N - 1; k >= 0; --k) {
        const int s = 1 << k;
        const bool hi = c & s;
#pragma unroll
        for (int i = 0; i < N / 2; ++i) { /* a constant bound: fully unrolled */
            if (i < s) {
                const T keep = hi ? p[i + s] : p[i];
                const T send = hi ? p[i] : p[i + s];
                p[i] = keep + __shfl_xor_sync(BSRMV_FULL_MASK, send, s * STRIDE);
            }
        }
    }
#pragma unroll
    for (int s = N; s < W; s *= 2)
        p[0] += __shfl_xor_sync(BSRMV_FULL_MASK, p[0], s * STRIDE);
    return p[0];
}

/* A lane's position in a gather loop: block blk (its col_idx entry) and
 * column c inside the block, so that it multiplies x[col_idx[blk]*bs + c]. */
struct Tap {
    int64_t blk;
    int c;
};

/* acc[i] += val[off(t) + i] * x[col_idx[t.blk]*bs + t.c], i < N, over t =
 * start, next(start), ... while t.blk < end, in that order (N > 1: one
 * load of N values, off(t) aligned to it).  U steps go in one
 * batch: first every col_idx load of the batch, then val and x, then the
 * FMAs, so that a batch costs two memory latencies (col_idx -> x) whatever
 * U, and steps past `end` are predicated off: a short block row (27
 * blocks) is one or two batches, not a batch and then a remainder loop of
 * dependent chains.  Written as load, multiply, next, ptxas kept two or
 * three chains in flight.  next() moves by
 * addition: dividing a scalar index by bs cost more issue slots than the
 * loads at bs 3, 5, 6, 7.
 * SPLIT < N: the N values may meet two columns of a block (a 16-byte piece
 * of column-major bs-6 floats): t.c is the first of a pair of columns,
 * whose x values are one load (x aligned to it, t.c even), and values
 * i < SPLIT take the pair's x[dlo], the others x[dhi] (lane constants):
 * two x loads a step instead ran 1.07x slower with 32 lanes (float, bs-6
 * grid, H100). */
template <typename T, int U, bool KEEP_L1, int N, int SPLIT = N, typename V, typename Next, typename Off>
__device__ __forceinline__ void gather_sums(const Args<T, V> &a, int bs, Tap t, int64_t end, Next next,
                                            Off off, V (&acc)[N], int dlo = 0, int dhi = 0)
{
    while (t.blk < end) {
        int32_t col[U];
        T v[U][N];
        V xv[U], xw[U];
        int n = 0; /* steps of this batch inside the row */
        const Tap t0 = t;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const bool in = t.blk < end;
            n += in;
            col[u] = in ? ldc(a.col_idx + t.blk) : 0;
            next(t);
        }
        t = t0;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if constexpr (N == 1)
                v[u][0] = u < n ? ldv<KEEP_L1>(a.val + off(t)) : T(0);
            else
                ldv_vec<KEEP_L1>(a.val + off(t), v[u], u < n);
            const V *xc = a.x + (int64_t)col[u] * bs + t.c;
            if constexpr (SPLIT == N) {
                xv[u] = xw[u] = u < n ? ld(xc) : V(0);
            } else {
                V pair[2];
                ldv_vec<true>(xc, pair, u < n);
                xv[u] = dlo ? pair[1] : pair[0];
                xw[u] = dhi ? pair[1] : pair[0];
            }
            next(t);
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < N; ++i)
                madd(acc[i], V(v[u][i]), i < SPLIT ? xv[u] : xw[u]);
    }
}

template <typename T, int U, bool KEEP_L1, typename V, typename Next, typename Off>
__device__ __forceinline__ V gather_sum(const Args<T, V> &a, int bs, Tap t, int64_t end, Next next,
                                        Off off)
{
    V acc[1] = {V(0)};
    gather_sums<T, U, KEEP_L1, 1>(a, bs, t, end, next, off, acc);
    return acc[0];
}

/* gather_sum's next() for a group that covers ncol scalar columns of a
 * block row per step (dq = ncol / bs blocks and dr = ncol % bs columns) */
struct ColumnStep {
    int dq, dr, bs;
    __device__ __forceinline__ void operator()(Tap &t) const
    {
        t.blk += dq;
        t.c += dr;
        if (t.c >= bs) {
            t.c -= bs;
            ++t.blk;
        }
    }
};

/* The by-column inner loop (Eberhardt & Hoemmen Alg. 3) over blocks
 * [s, e) of one block row: the lane with row r and column slot cslot of a
 * group covering ncol = G/bs block columns per step returns its partial sum
 * of row r (reduce with group_reduce).  In column-major blocks the active
 * lanes read consecutive values of val.  Two load schedules, U steps deep:
 *  - BATCHED (gather_sum): whole block rows of the plain kernel, where it
 *    lifted the 27-point grid by 3-11% at bs 1 and 4-8 and 77% at bs 32
 *    (row-major bs 6: 1.9x);
 *  - streamed: U steps unrolled, then one step at a time, for the balanced
 *    row walk (k_balanced.cu), whose occupancy is bound by registers (6
 *    thread blocks per SM at bs 8): batched lost 10-27% there at bs 16
 *    and, spilling, 55% at bs 8. */
template <typename T, int ORD, int U, bool KEEP_L1, bool BATCHED, typename V>
__device__ __forceinline__ V column_sum(const Args<T, V> &a, int bs, int r, int cslot, int ncol,
                                        int64_t s, int64_t e)
{
    const int64_t bs2 = (int64_t)bs * bs;
    if constexpr (BATCHED) {
        return gather_sum<T, U, KEEP_L1>(
            a, bs, Tap{s + cslot / bs, cslot % bs}, e, ColumnStep{ncol / bs, ncol % bs, bs},
            [&](const Tap &t) {
                return ORD == COL ? t.blk * bs2 + (int64_t)t.c * bs + r
                                  : t.blk * bs2 + (int64_t)r * bs + t.c;
            });
    } else {
        int64_t j = s * bs + cslot; /* scalar column of the block row */
        const int64_t jend = e * bs;
        auto elem = [&](int64_t jj) -> V {
            const int64_t blk = jj / bs;
            const int c = (int)(jj - blk * bs);
            const int64_t off = ORD == COL ? jj * bs + r : blk * bs2 + (int64_t)r * bs + c;
            const int32_t col = ldc(a.col_idx + blk);
            return V(ldv<KEEP_L1>(a.val + off)) * ld(a.x + (int64_t)col * bs + c);
        };
        V acc = V(0);
        for (; j + (U - 1) * ncol < jend; j += U * ncol) {
            V p[U];
#pragma unroll
            for (int u = 0; u < U; ++u)
                p[u] = elem(j + u * ncol);
#pragma unroll
            for (int u = 0; u < U; ++u)
                acc += p[u];
        }
        for (; j < jend; j += ncol)
            acc += elem(j);
        return acc;
    }
}

} // namespace bsrmv_cuda

/* ---- compiled block sizes (X-macros) -----------------------------------
 * One list per family: each family is instantiated only for the bs where it
 * can win (see docs/GPU.md).  0 = the runtime-bs kernel.
 * X(BS, P): P is the family's compile-time parameter (group lanes G for
 * by-block/by-column, thread groups NTG for K2). */
#define BSRMV_BYBLOCK_LIST(X)                                                  \
    X(1, 8) X(1, 16) X(1, 32) X(2, 8) X(2, 16) X(2, 32) X(3, 16) X(3, 32)      \
    X(4, 16) X(4, 32) X(5, 32)
#define BSRMV_BYCOLUMN_LIST(X)                                                 \
    X(1, 1) X(1, 4) X(1, 8) X(1, 16) X(1, 32) X(2, 8) X(2, 16) X(2, 32) X(3, 8) X(3, 16)      \
    X(3, 32) X(4, 8) X(4, 16) X(4, 32) X(5, 16) X(5, 32) X(6, 16) X(6, 32)    \
    X(7, 16) X(7, 32) X(8, 16) X(8, 32) X(12, 32) X(16, 32) X(24, 32)         \
    X(32, 32) X(0, 32)
/* Complex values (complex.cuh): by-block / K1 and by-column at bs 1-8 and
 * the runtime-bs by-column kernel, nothing else -- each complex family
 * adds 4 instantiations per entry (2 types x 2 orders) to the CUDA build.
 * A complex block reads twice the bytes of a real one for four times the
 * flops, so these are the real grids' choices at bs 2-8 (by-block, K1 and
 * by-column with whole-warp or 16-lane groups). */
#define BSRMV_BYBLOCK_CPLX_LIST(X) X(2, 16) X(2, 32) X(3, 16) X(3, 32) X(4, 32) X(5, 32)
#define BSRMV_BYCOLUMN_CPLX_LIST(X)                                            \
    X(1, 32) X(2, 16) X(2, 32) X(3, 16) X(3, 32) X(4, 16) X(4, 32) X(5, 32) X(6, 32) \
    X(7, 32) X(8, 32) X(0, 32)
/* ... and, per complex type (Z double, C float), the families that read
 * val in 16-byte pieces (wide, vector stream) or copy it to shared memory
 * (staged), at the sizes where by-block and by-column stay below the read
 * bandwidth on 27-point grids: complex double bs 2, 3, 4, 7, 8, complex
 * float bs 2, 3, 4, 6, 7, 8.  The wide kernel reads a row-major block's
 * rows with consecutive lanes (by-column reads them bs values apart):
 * built at complex double bs 4 and 8 and complex float bs 6 and 7, where
 * it beat by-block, by-column and staged on an H200; at complex double
 * bs 3, 6 and 7 and complex float bs 4, 5 and 8 it lost to them
 * (docs/COMPLEX.md).  The vector
 * stream is built where its unit fits a warp (complex double bs 7 and 8
 * would need 49 and 64 lanes, complex float bs 7 49); at complex float
 * bs 5 and 6 it lost to by-block and by-column (H200). */
#define BSRMV_WIDE_Z_LIST(X) X(2, 8) X(2, 16) X(4, 32) X(8, 32)
#define BSRMV_WIDE_C_LIST(X) X(2, 8) X(2, 16) X(3, 8) X(6, 16) X(7, 16) X(7, 32)
#define BSRMV_VECSTREAM_C_LIST(X) X(3, 0) X(4, 0) X(8, 0)
#define BSRMV_STAGED_Z_LIST(X) X(3, 0) X(7, 0) X(8, 0)
#define BSRMV_STAGED_C_LIST(X) X(3, 0) X(7, 0)
/* K2 for complex double at bs 6-8, whose blocks move the bytes of real
 * blocks of bs 8.5-11 (where K2 wins on real grids): X(BS, NTG). */
#define BSRMV_K2_Z_LIST(X) X(6, 2) X(7, 2) X(8, 2) X(8, 4)
#define BSRMV_ROWTHREAD_LIST(X) X(8, 0) X(12, 0) X(16, 0) X(24, 0) X(32, 0) X(0, 0)
#define BSRMV_K2_LIST(X)                                                       \
    X(5, 2) X(6, 2) X(7, 2) X(8, 2) X(8, 4) X(12, 4) X(16, 4) X(24, 4)         \
    X(24, 8) X(32, 4) X(32, 8) X(0, 4) X(0, 8)
/* Wide (16-byte loads along a block's rows or columns): X(BS, G). */
#define BSRMV_WIDE_LIST(X)                                                     \
    X(2, 8) X(2, 16) X(4, 16) X(4, 32) X(8, 32) X(12, 32) X(16, 32) X(24, 32)   \
    X(32, 32)
/* Vector stream (16-byte pieces of a block row's run of val): X(BS, 0);
 * built where a unit of the piece pattern fits a warp (k_vecstream.cu). */
#define BSRMV_VECSTREAM_LIST(X) X(2, 0) X(3, 0) X(4, 0) X(5, 0) X(6, 0) X(8, 0)
/* Staged (bulk copies of whole block rows into shared memory, sm_90): X(BS, 0). */
#define BSRMV_STAGED_LIST(X) X(2, 0) X(3, 0) X(4, 0) X(5, 0) X(6, 0) X(7, 0) X(8, 0) X(12, 0)
/* Flat stream (by_column mode, col-major): X(BS, U), U = unrolled steps. */
#define BSRMV_FLAT_LIST(X)                                                     \
    X(2, 4) X(3, 4) X(4, 4) X(5, 4) X(6, 4) X(7, 4) X(8, 4)
/* Balanced row walk (segmented and fragment schedules): X(BS, G). */
#define BSRMV_BALANCED_LIST(X)                                                 \
    X(1, 1) X(1, 8) X(1, 32) X(2, 8) X(2, 32) X(4, 16) X(4, 32) X(16, 32)      \
    X(24, 32) X(32, 32) X(0, 32)
/* The same units streamed by a warp (group 32, 6 <= bs < 16): X(BS, 0). */
#define BSRMV_FRAGSTREAM_LIST(X) X(6, 0) X(8, 0) X(12, 0) X(0, 0)
/* Merge-path units, flat stream (group 32): X(BS, 0). */
#define BSRMV_MERGEFLAT_LIST(X)                                                \
    X(1, 0) X(2, 0) X(3, 0) X(4, 0) X(5, 0) X(6, 0) X(8, 0) X(16, 0) X(0, 0)
/* Merge-path units, lane-sequential (group 1): X(BS, 0); bs in registers,
 * so compile-time sizes only. */
#define BSRMV_MERGESEQ_LIST(X)                                                 \
    X(1, 0) X(2, 0) X(3, 0) X(4, 0) X(5, 0) X(6, 0) X(7, 0) X(8, 0)
/* The same, units copied into shared memory ahead (sm_90, rows > 1):
 * X(BS, 0), the sizes whose blocks are read a line per lane. */
#define BSRMV_MERGESTAGED_LIST(X) X(2, 0) X(4, 0)
/* Lane-block (a lane per block, k_laneblock.cu): X(BS, G), G >= the
 * power of two at or above bs (a lane per partial sum in the reduction). */
#define BSRMV_LANEBLOCK_LIST(X)                                                \
    X(2, 4) X(2, 8) X(2, 16) X(3, 4) X(3, 8) X(3, 16) X(4, 4) X(4, 8) X(4, 16) \
    X(5, 8) X(5, 16) X(6, 8) X(6, 16) X(7, 8) X(7, 16) X(8, 8) X(8, 16)
/* The benchmark's gather bound (k_misc.cu): X(BS, 0), the sizes of the
 * irregular benchmark and a runtime-bs kernel. */
#define BSRMV_GATHER_LIST(X) X(1, 0) X(2, 0) X(3, 0) X(4, 0) X(8, 0) X(16, 0) X(0, 0)

/* Launchers, one per family file.  Return a LaunchStatus; on
 * LAUNCH_CUDA_ERROR *err holds the code. */
#define BSRMV_DECL_LAUNCHER(name)                                              \
    template <typename T>                                                      \
    int name(const bsrmv_cuda::Args<T> &a, int order,                          \
             const bsrmv_cuda::Launch &l, cudaStream_t s, cudaError_t *err);
namespace bsrmv_cuda {
/* by-block, by-column, wide, vector stream and staged: built for the
 * mixed pair too (Args<float, double>) */
template <typename T, typename V>
int launch_byblock(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s,
                   cudaError_t *err);
template <typename T, typename V>
int launch_bycolumn(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s,
                    cudaError_t *err);
BSRMV_DECL_LAUNCHER(launch_flat)
template <typename T, typename V>
int launch_wide(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s, cudaError_t *err);
template <typename T, typename V>
int launch_vecstream(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s,
                     cudaError_t *err);
template <typename T, typename V>
int launch_staged(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s,
                  cudaError_t *err);
BSRMV_DECL_LAUNCHER(launch_rowthread)
BSRMV_DECL_LAUNCHER(launch_laneblock)
BSRMV_DECL_LAUNCHER(launch_k2)
BSRMV_DECL_LAUNCHER(launch_k3)
BSRMV_DECL_LAUNCHER(launch_k3units)
BSRMV_DECL_LAUNCHER(launch_k2units)
BSRMV_DECL_LAUNCHER(launch_transpose)
template <typename T, typename V>
int launch_balanced(const Args<T, V> &a, int order, const Launch &l, cudaStream_t s,
                    cudaError_t *err);
BSRMV_DECL_LAUNCHER(launch_sym_atomic)
BSRMV_DECL_LAUNCHER(launch_sym_window)
template <typename T> cudaError_t launch_scale(T *y, int64_t n, T beta, cudaStream_t s);
cudaError_t read_bandwidth_pass(const void *buf, size_t bytes, unsigned long long *sink,
                                cudaStream_t s);
cudaError_t stall_pass(double us, cudaStream_t s);
template <typename T>
cudaError_t gather_pass(const T *val, const int32_t *col, const T *x, int64_t nnzb, int bs,
                        int order, int variant, int sms, T *sink, cudaStream_t s);
} // namespace bsrmv_cuda

namespace bsrmv_cuda {
/* The end of every launcher once its X-macro list matched: a dry run only
 * reports that the instantiation exists, else `go` launches and its CUDA
 * code becomes the LaunchStatus. */
template <typename F>
static inline int launch_matched(const Launch &l, cudaError_t *err, F go)
{
    if (l.dry)
        return LAUNCH_OK;
    *err = go();
    return *err == cudaSuccess ? LAUNCH_OK : LAUNCH_CUDA_ERROR;
}
} // namespace bsrmv_cuda

/* An entry of a launcher's X-macro list: when `match` holds, launch
 * run<T, ORD, ...> for the matrix's block order (uses the launcher's
 * a, order, l, s and err). */
#define BSRMV_LAUNCH_IF(match, run, ...)                                       \
    if (match)                                                                 \
        return launch_matched(l, err, [&] {                                    \
            return order == COL ? run<T, COL, __VA_ARGS__>(a, l, s)            \
                                : run<T, ROW, __VA_ARGS__>(a, l, s);           \
        });

/* bs_ if the family's X-macro LIST has a compile-time kernel for it, else 0
 * (its runtime-bs kernel): the lists stay the only record of what is built. */
#define BSRMV_HAS_BS_(BS, P) hit = hit || (BS != 0 && bs == BS);
#define BSRMV_COMPILED_BS(LIST, bs_)                                           \
    ([](int bs) {                                                              \
        bool hit = false;                                                      \
        LIST(BSRMV_HAS_BS_)                                                    \
        return hit ? bs : 0;                                                   \
    }(bs_))

/* Grid size helper: number of thread blocks for `units` work units of
 * `per_block` units each, capped to what a 1-D grid allows. */
static inline unsigned bsrmv_grid(int64_t units, int64_t per_block)
{
    int64_t g = (units + per_block - 1) / per_block;
    if (g < 1)
        g = 1;
    if (g > 2147483647)
        g = 2147483647;
    return (unsigned)g;
}

/* Instantiate a launcher for float and double; _MIXED adds float values
 * with double vectors (the families launch_cfg runs for that pair). */
#define BSRMV_INSTANTIATE_LAUNCHER(name)                                       \
    template int name<float>(const bsrmv_cuda::Args<float> &, int,            \
                             const bsrmv_cuda::Launch &, cudaStream_t,         \
                             cudaError_t *);                                   \
    template int name<double>(const bsrmv_cuda::Args<double> &, int,          \
                              const bsrmv_cuda::Launch &, cudaStream_t,        \
                              cudaError_t *);

/* ... and for the complex types (the families launch_cfg runs for them). */
#define BSRMV_INSTANTIATE_LAUNCHER_CPLX(name)                                  \
    template int name<bsrmv_cuda::cplx<float>>(                               \
        const bsrmv_cuda::Args<bsrmv_cuda::cplx<float>> &, int, const bsrmv_cuda::Launch &, \
        cudaStream_t, cudaError_t *);                                          \
    template int name<bsrmv_cuda::cplx<double>>(                              \
        const bsrmv_cuda::Args<bsrmv_cuda::cplx<double>> &, int, const bsrmv_cuda::Launch &, \
        cudaStream_t, cudaError_t *);

#define BSRMV_INSTANTIATE_LAUNCHER_MIXED(name)                                 \
    BSRMV_INSTANTIATE_LAUNCHER(name)                                           \
    template int name<float>(const bsrmv_cuda::Args<float, double> &, int,    \
                             const bsrmv_cuda::Launch &, cudaStream_t,         \
                             cudaError_t *);

#endif
