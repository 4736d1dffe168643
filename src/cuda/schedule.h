/* Host side of the balanced kernels' work units (schedule.cu). */
#ifndef BSRMV_CUDA_SCHEDULE_H
#define BSRMV_CUDA_SCHEDULE_H

#include <stdint.h>

namespace bsrmv_cuda {

enum ScheduleKind {
    SCHED_LONGROWS = 0,  /* KSPARSE: param-block segments of the rows longer
                            than param blocks, and nothing else            */
    SCHED_MERGE = 1,     /* merge path: param rows + blocks per unit          */
    SCHED_FRAGMENT = 2   /* Yin et al.: param blocks per unit                 */
};

struct HostSchedule {
    int64_t nunits, nslots, nfix;
    int64_t max_rows;   /* most block rows touched by one unit */
    int64_t max_blocks; /* most blocks of one unit            */
    int64_t *unit_row, *unit_blk, *end_row, *end_blk, *slot, *fix; /* as in Schedule */
};

/* false: out of host memory or unknown kind (h is then empty). */
bool schedule_build(int kind, int64_t param, const int64_t *row_ptr, int64_t mb,
                    HostSchedule *h);
void schedule_free(HostSchedule *h);

} // namespace bsrmv_cuda

#endif
