/* bsrmv_gpu_tool: the tuner/benchmark of tools/tune.c as its own program,
 * so that scripts/gpu_check.sh runs it whether or not the CLI has the
 * `tune` subcommand; its records print as plain table rows. */
#include "bench_gpu.h"

#include <stdio.h>

static void print_row(const struct bench_options *o, const struct bench_record *r)
{
    (void)o;
    printf("%-18s bs=%-3d %-6s %-4s %-9s %-34s %9.4f ms %8.1f GB/s %7.1f GFLOP/s rel_err %.1e\n",
           r->matrix, r->bs, r->type == BSRMV_FLOAT ? "float" : "double",
           r->order == BSRMV_COL_MAJOR ? "col" : "row", r->backend, r->kernel, r->time_ms, r->gbps,
           r->gflops, r->rel_err);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    return bsrmv_tune_main(argc, argv, print_row);
}
