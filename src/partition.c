/* Split a BSR matrix among threads by work, where a part may begin and end
 * inside a block row, so that one row holding most of the blocks is shared
 * too (Merrill & Garland's merge path, with the blocks and the row ends of
 * the matrix as the two merged lists).  Splitting whole rows by work, as
 * before, left such a row to one thread; Eberhardt & Hoemmen's ~mb/n rows
 * per thread unbalances every irregular matrix.  Each thread finds its own
 * cuts by binary search, so no shared table is needed and the split
 * follows the team size OpenMP actually delivered. */
#include "internal.h"

/* Work up to the start of block row i: every stored block streams bs*bs
 * values and every row writes bs results; the row term keeps many empty
 * rows from being free. */
static inline int64_t work_before(const int64_t *rp64, const int32_t *rp32, int64_t i,
                                  int64_t bs2, int64_t bs)
{
    return bsrmv_rp_at(rp64, rp32, i) * bs2 + i * bs;
}

bsrmv_cut bsrmv_partition_cut(const int64_t *rp64, const int32_t *rp32, int64_t mb, int bs,
                              int p, int nparts)
{
#define RP(i) bsrmv_rp_at(rp64, rp32, i)
    if (p <= 0)
        return (bsrmv_cut){0, 0};
    if (p >= nparts)
        return (bsrmv_cut){mb, RP(mb)};
    const int64_t bs2 = (int64_t)bs * bs;
    const int64_t total = work_before(rp64, rp32, mb, bs2, bs);
    const int64_t target = (int64_t)((long double)total * p / nparts);
    /* Last row starting at or before the target. */
    int64_t lo = 0, hi = mb;
    while (lo < hi) {
        int64_t mid = hi - (hi - lo) / 2;
        if (work_before(rp64, rp32, mid, bs2, bs) <= target)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == mb)
        return (bsrmv_cut){mb, RP(mb)};
    const int64_t blk = RP(lo) + (target - work_before(rp64, rp32, lo, bs2, bs)) / bs2;
    /* A target in the row's end step leaves the whole row to the part
     * before, so a cut row always has blocks on both sides. */
    if (blk >= RP(lo + 1))
        return (bsrmv_cut){lo + 1, RP(lo + 1)};
    return (bsrmv_cut){lo, blk};
#undef RP
}
