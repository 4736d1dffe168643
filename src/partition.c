/* Split block rows among threads by work, not by row count, so that a few
 * long rows do not leave the other threads idle (Eberhardt & Hoemmen give
 * each thread ~mb/n rows; that unbalances irregular matrices).  Each thread
 * finds its own range by binary search, so no shared table is needed and
 * the split follows the team size OpenMP actually delivered. */
#include "internal.h"

/* Work of rows [0, i): every stored block streams bs*bs values and every
 * row writes bs results; the row term keeps many empty rows from being free. */
static inline int64_t work_before(const int64_t *row_ptr, int64_t i, int64_t bs2, int64_t bs)
{
    return row_ptr[i] * bs2 + i * bs;
}

int64_t bsrmv_partition_boundary(const int64_t *row_ptr, int64_t mb, int bs, int p,
                                 int nparts)
{
    if (p <= 0)
        return 0;
    if (p >= nparts)
        return mb;
    const int64_t bs2 = (int64_t)bs * bs;
    const int64_t total = work_before(row_ptr, mb, bs2, bs);
    const int64_t target = (int64_t)((long double)total * p / nparts);
    int64_t lo = 0, hi = mb;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (work_before(row_ptr, mid, bs2, bs) < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
