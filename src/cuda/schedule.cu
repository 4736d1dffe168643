/* Work units of the balanced kernels (k_balanced.cu), built on the host
 * from row_ptr when a balanced configuration is planned, then uploaded.
 *
 * A unit is a stretch of the merge path over (block rows, blocks): it starts
 * at (unit_row, unit_blk) = (rows finished before it, first block) and ends
 * at (end_row, end_blk).  Merge-path and fragment units tile the whole path
 * and differ in where they cut it; long-row units cover only the rows the
 * plain kernel of the segmented scheme skips.  The slot pass
 * then replays what the kernel does at every unit boundary (a head slot for
 * a finished row that began in an earlier unit, a carry slot for the
 * unfinished last row) and records, per cut row, the consecutive slots the
 * fix-up kernel adds. */
#include "schedule.h"

#include <stdlib.h>

namespace bsrmv_cuda {

/* Rows finished at merge-path diagonal d: #r with row_ptr[r+1] + r < d. */
static int64_t rows_before_diagonal(const int64_t *rp, int64_t mb, int64_t d)
{
    int64_t lo = 0, hi = mb;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rp[mid + 1] + mid < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Rows that end at or before block j: #r with row_ptr[r+1] <= j. */
static int64_t rows_ending_by(const int64_t *rp, int64_t mb, int64_t j)
{
    int64_t lo = 0, hi = mb;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rp[mid + 1] <= j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool grow(HostSchedule *h, int64_t n)
{
    h->unit_row = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n + 1));
    h->unit_blk = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n + 1));
    h->end_row = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n + 1));
    h->end_blk = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n + 1));
    h->slot = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    h->fix = (int64_t *)malloc(sizeof(int64_t) * 3 * (size_t)(n > 0 ? n : 1));
    h->nunits = n;
    return h->unit_row && h->unit_blk && h->end_row && h->end_blk && h->slot && h->fix;
}

void schedule_free(HostSchedule *h)
{
    free(h->unit_row);
    free(h->unit_blk);
    free(h->end_row);
    free(h->end_blk);
    free(h->slot);
    free(h->fix);
    *h = HostSchedule{};
}

/* Slots and fix-up entries, replaying the kernel's decisions. */
static void assign_slots(HostSchedule *h, const int64_t *rp, int64_t mb)
{
    int64_t slots = 0, nfix = 0, open_row = -1, open_first = 0, most = 0, most_blk = 0;
    for (int64_t u = 0; u < h->nunits; ++u) {
        const int64_t row = h->unit_row[u], j = h->unit_blk[u];
        const int64_t re = h->end_row[u], je = h->end_blk[u];
        const int64_t rows = (re < mb ? re : mb - 1) - row + 1;
        most = rows > most ? rows : most;
        most_blk = je - j > most_blk ? je - j : most_blk;
        h->slot[u] = slots;
        if (row < re && rp[row] < j) { /* head: row ends here, began earlier */
            int64_t *f = h->fix + 3 * nfix++;
            f[0] = row;
            f[1] = open_row == row ? open_first : slots;
            f[2] = slots;
            ++slots;
            open_row = -1;
        }
        if (re < mb) {
            const int64_t lo = rp[re] > j ? rp[re] : j;
            if (je > lo) { /* carry: some of row re's blocks are here */
                if (open_row != re) {
                    open_row = re;
                    open_first = slots;
                }
                ++slots;
            }
        }
    }
    h->nslots = slots;
    h->nfix = nfix;
    h->max_rows = most;
    h->max_blocks = most_blk;
}

bool schedule_build(int kind, int64_t param, const int64_t *rp, int64_t mb, HostSchedule *h)
{
    *h = HostSchedule{};
    const int64_t nnzb = rp[mb];
    if (param < 1)
        param = 1;
    int64_t n = 0;
    switch (kind) {
    case SCHED_MERGE: {
        const int64_t items = mb + nnzb;
        n = items == 0 ? 0 : (items + param - 1) / param;
        if (!grow(h, n))
            return false;
        for (int64_t u = 0; u < n; ++u) {
            const int64_t d = u * param;
            const int64_t i = rows_before_diagonal(rp, mb, d);
            h->unit_row[u] = i;
            h->unit_blk[u] = d - i;
        }
        break;
    }
    case SCHED_FRAGMENT: {
        n = nnzb == 0 ? (mb > 0) : (nnzb + param - 1) / param;
        if (!grow(h, n))
            return false;
        for (int64_t u = 0; u < n; ++u) {
            const int64_t j = u * param;
            /* the first unit also takes the empty rows before block 0 */
            h->unit_row[u] = u == 0 ? 0 : rows_ending_by(rp, mb, j);
            h->unit_blk[u] = j;
        }
        break;
    }
    case SCHED_LONGROWS: {
        for (int64_t r = 0; r < mb; ++r) {
            const int64_t len = rp[r + 1] - rp[r];
            n += len > param ? (len + param - 1) / param : 0;
        }
        if (!grow(h, n))
            return false;
        int64_t u = 0;
        for (int64_t r = 0; r < mb; ++r) {
            const int64_t len = rp[r + 1] - rp[r];
            const int64_t segs = len > param ? (len + param - 1) / param : 0;
            for (int64_t k = 0; k < segs; ++k, ++u) {
                const bool last = k == segs - 1;
                h->unit_row[u] = r;
                h->unit_blk[u] = rp[r] + k * param;
                h->end_row[u] = last ? r + 1 : r;
                h->end_blk[u] = last ? rp[r + 1] : rp[r] + (k + 1) * param;
            }
        }
        break;
    }
    default:
        return false;
    }
    h->unit_row[n] = mb;
    h->unit_blk[n] = nnzb;
    if (kind != SCHED_LONGROWS)
        for (int64_t u = 0; u < n; ++u) {
            h->end_row[u] = h->unit_row[u + 1];
            h->end_blk[u] = h->unit_blk[u + 1];
        }
    assign_slots(h, rp, mb);
    return true;
}

} // namespace bsrmv_cuda
