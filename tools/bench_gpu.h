/* GPU benchmark and tuner (tools/bench_gpu.c, tools/tune.c). */
#ifndef BSRMV_TOOLS_BENCH_GPU_H
#define BSRMV_TOOLS_BENCH_GPU_H

#include "bench.h"

/* What the last bench_gpu_run measured, for summaries and the tuner. */
struct bench_gpu_summary {
    char device[128];
    double read_gbps;            /* read-only kernel over >= 1 GiB        */
    double bound_gbps;           /* the matrix's gather bound (0: none)   */
    double best_cusparse_gbps;   /* 0 if no cuSPARSE path ran             */
    char best_cusparse[64];
    double best_gbps;            /* fastest bsrmv kernel                  */
    char best[96];
    bsrmv_gpu_config best_cfg;
    double auto_gbps;            /* the dispatcher's choice               */
    char auto_kernel[96];
    int ncand;
};

/* Times the dispatcher's pick and, with o->gpu_kernels BENCH_GPU_ALL,
 * every bsrmv kernel that applies to c; with_cusparse also times cuSPARSE
 * (bsrmv column and row direction, SpMV BSR_ALG1, SpMV CSR_ALG1 on the
 * scalar expansion).  Records go to
 * o->emit (table) or to stdout as JSON lines (o->json) with the extra
 * keys "device" and "vs_best_cusparse".  Returns 0, or 1 after printing
 * what failed (also when a result is wrong).  Wall times go to c->ms
 * (gpu_setup, cusparse_host, cusparse, gpu_kernels). */
int bench_gpu_run(const struct bench_options *o, struct bench_case *c, int with_cusparse,
                  struct bench_gpu_summary *sum);

/* `bsrmv tune ...` (tools/tune.c): argv[0] is "tune"; emit prints the
 * records of --bench. */
int bsrmv_tune_main(int argc, char **argv, bench_emit_fn emit);

#endif
