/* Device side of the balanced kernels' work units (schedule.cu builds
 * them): where a unit's last row is cut, and the fix-up pass that adds the
 * partial sums of cut rows.  Shared by the balanced kernels (k_balanced.cu,
 * k_mergestaged.cu) and K3 over units (k_ksparse.cu). */
#ifndef BSRMV_CUDA_UNITS_CUH
#define BSRMV_CUDA_UNITS_CUH

#include "common.cuh"

namespace bsrmv_cuda {

/* Whether a unit ending at (re, je) carries row re into the next unit:
 * re is a row (re < rows) and some of its blocks, from its first block
 * `tail`, lie in the unit, which begins at block j.  Any origin will do
 * as long as all four are counted from it. */
__device__ __forceinline__ bool carries(int64_t re, int64_t rows, int64_t tail, int64_t j,
                                        int64_t je)
{
    return re < rows && je > (tail > j ? tail : j);
}

/* The rows a unit walks, one after the other: steps rows from row0, the
 * rows before re ending in the unit, and row re too where the unit
 * carries it.  A unit's cut rows take its slots from slot on, in order. */
struct UnitRows {
    int64_t row0 = 0, j = 0, re = 0, je = 0, slot = 0, steps = 0;

    __device__ UnitRows() {}
    template <typename T, typename V>
    __device__ UnitRows(const Args<T, V> &a, const Schedule &sc, int64_t u)
        : row0(sc.unit_row[u]), j(sc.unit_blk[u]), re(sc.end_row[u]), je(sc.end_blk[u]), slot(sc.slot[u])
    {
        const int64_t tail = re < a.mb ? a.row_ptr[re] : 0;
        steps = re - row0 + carries(re, a.mb, tail, j, je);
    }

    /* Row row's blocks in the unit, [lo, hi); whether the row begins and
     * ends in the unit (its sum goes to y) rather than being cut (its sum
     * goes to the next slot). */
    template <typename T, typename V>
    __device__ bool part(const Args<T, V> &a, int64_t row, int64_t &lo, int64_t &hi) const
    {
        const int64_t s = a.row_ptr[row];
        lo = s > j ? s : j;
        hi = row < re ? a.row_ptr[row + 1] : je;
        return row < re && s >= j;
    }
};

/* The fix-up is launched as a programmatic dependent of the balanced
 * kernel (sm_90): the kernel lets it launch as soon as all its thread
 * blocks run, and the fix-up waits for the kernel's completion and memory
 * on the GPU, not behind a second launch.  On matrices of one or a few
 * waves of units the launch gap is a large part of a call: H100, eight
 * irregular matrices promoted to bs 3-12 (lp_ship04l to orani678), the
 * same balanced configurations: 1.06x (0.86-1.17x, 112 cases), e.g.
 * ca-GrQc at bs 3 with the table's 64 items 9.5 us against 10.8.
 * Finishing the cut rows in the kernel itself (the unit that completes a
 * row's pieces, counted with an atomic, adds them up) lost 5-40%: the
 * atomics' release and acquire stalled every unit. */
__device__ __forceinline__ void allow_fixup_launch()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

/* A warp per cut row: lane l sums the row's slots first + l, first + l + 32,
 * ..., then a fixed shuffle tree adds the lanes (deterministic). */
template <typename T, typename V>
__global__ void __launch_bounds__(256)
k_fixup(const Args<T, V> a, const Schedule sc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory"); /* the balanced kernel, done */
#endif
    const int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= sc.nfix)
        return;
    const int64_t *f = sc.fix + 3 * w;
    const int64_t row = f[0], first = f[1], last = f[2];
    const V *pieces = (const V *)sc.pieces;
    for (int c = 0; c < a.bs; ++c) {
        V v = V(0);
        for (int64_t k = first + lane; k <= last; k += 32)
            v += pieces[k * a.bs + c];
        for (int o = 16; o >= 1; o >>= 1)
            v += __shfl_xor_sync(BSRMV_FULL_MASK, v, o);
        if (lane == 0)
            store_y(a, row * a.bs + c, v);
    }
}

/* The cut rows' partial sums, after the main kernel on the same stream
 * (its programmatic dependent). */
template <typename T, typename V>
static cudaError_t fixup(const Args<T, V> &a, const Launch &l, cudaStream_t s)
{
    const Schedule &sc = *l.sched;
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || sc.nfix == 0)
        return e;
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = bsrmv_grid(sc.nfix, 8);
    cfg.blockDim = 256;
    cfg.stream = s;
    cfg.attrs = &at;
    cfg.numAttrs = l.cc >= 90; /* a plain launch before sm_90 */
    return cudaLaunchKernelEx(&cfg, k_fixup<T, V>, a, sc);
}

} // namespace bsrmv_cuda

#endif
