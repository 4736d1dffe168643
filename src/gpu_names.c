/* Names of the GPU kernel families and the config string "name/gG/rR/tT/pP",
 * shared by the CUDA build (also to parse the plan tables, src/plan/) and the
 * build without CUDA, so that both print the same names. */
#include "internal.h"

#include <stdio.h>

static const char *const names[] = {"auto",       "by_block",   "by_column", "row_per_thread",
                                    "k1_small",   "k2_medium",  "k3_large",  "transpose",
                                    "segmented",  "merge_path", "fragment",  "wide",
                                    "vec_stream", "staged",    "sym_atomic", "sym_window",
                                    "lane_block"};

const char *bsrmv_gpu_kernel_name(bsrmv_gpu_kernel k)
{
    if ((int)k < 0 || (int)k >= (int)(sizeof names / sizeof *names))
        return "unknown";
    return names[k];
}

void bsrmv_gpu_config_string(const bsrmv_gpu_config *c, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    if (!c)
        snprintf(buf, len, "auto");
    else
        snprintf(buf, len, "%s/g%d/r%d/t%d/p%d", bsrmv_gpu_kernel_name(c->kernel), c->group, c->rows,
                 c->threads, c->param);
}
