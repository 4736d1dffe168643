/*
 * bsrmv_bench.h: the instruments of the benchmark and the tuner.
 *
 * NO ABI OR API PROMISE: these calls measure the library and the device;
 * they may change or go in any release, minor ones included.  Programs that
 * only multiply and solve need bsrmv.h alone.  Declared in every build;
 * without CUDA the GPU calls return BSRMV_ERR_NO_DEVICE.
 */
#ifndef BSRMV_BENCH_H
#define BSRMV_BENCH_H

#include "bsrmv.h"

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default) /* exported, as in bsrmv.h */
#endif

/* Every built kernel/parameter set that applies to dA (for benchmarks and
 * the tuner): up to max entries into cfgs, the total in *n.  The plan's
 * order first (its table's choice, then the configurations it would try
 * next), then the others. */
bsrmv_status bsrmv_gpu_candidates(const bsrmv_gpu_matrix *dA, bsrmv_gpu_config *cfgs,
                                  int max, int *n);

/* Device memory helpers (cudaMalloc/cudaFree/cudaMemcpy with bsrmv errors:
 * BSRMV_ERR_DEVICE_NOMEM when the allocation does not fit). */
bsrmv_status bsrmv_gpu_malloc(void **p, size_t bytes);
void bsrmv_gpu_free(void *p);
bsrmv_status bsrmv_gpu_to_device(void *d_dst, const void *src, size_t bytes);
bsrmv_status bsrmv_gpu_to_host(void *dst, const void *d_src, size_t bytes);

/* Keeps `stream` (NULL: the legacy default stream) busy on the current
 * device for `us` microseconds, 0 < us <= 1e6: a one-thread kernel that
 * waits on the GPU's clock.  For benchmarks: queued before a timed
 * region's first event, it gives the host time to queue the whole region
 * before the GPU reaches it, so that the region's time leaves out the
 * host's launch latency, as in a solver's loop, where calls queue back to
 * back (nvbench's blocking kernel, with a clock instead of a host flag). */
bsrmv_status bsrmv_gpu_stall(double us, void *stream);

/* Read bandwidth of the current device: a read-only kernel over `bytes`
 * (>= 1 GiB recommended), median of `reps` passes after a warm-up, each
 * queued behind a stall (bsrmv_gpu_stall), in 1e9 bytes/s. */
bsrmv_status bsrmv_gpu_read_bandwidth(size_t bytes, int reps, double *gbps);

/* Gather bound of dA: *ms = the median time of `reps` passes (after a
 * warm-up, each behind a stall) of a kernel that does only the memory work
 * every SpMV of dA does -- read val and col_idx once and load x (d_x, cols
 * values on dA's device) at the columns of every block -- without row_ptr,
 * sums per row or y; the fastest of four variants (a lane per block row or per value, two
 * unroll depths each).  The benchmark reports it as GB/s of the SpMV's
 * bytes next to the kernels: what is left between a kernel and it is the
 * cost of the rows.  A measured reference, not a proof: a tuned SpMV kernel
 * can beat it where x is local (27-point grids, docs/GPU.md).  *ms = 0 when
 * dA has no blocks; a mixed-precision dA: BSRMV_ERR_UNSUPPORTED. */
bsrmv_status bsrmv_gpu_gather_bound(const bsrmv_gpu_matrix *dA, const void *d_x, int reps,
                                    double *ms);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* BSRMV_BENCH_H */
