/* Read bandwidth: an OpenMP parallel sum over a large array of doubles. */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include "stream.h"
#include "bench.h" /* bench_now_ms, bench_median */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define STREAM_PASSES 10
#define HUGE_PAGE ((size_t)2 << 20)
/* Doubles per work item.  Touch and sum walk the same items with the same
 * static schedule, so each thread reads the pages it first touched. */
#define CHUNK 4096

/* Small integers, so the sum is exact in any order and can be checked. */
static double value_at(size_t i)
{
    return (double)(i % 7 + 1);
}

/* Eight independent accumulators: the adds of one chain wait for each
 * other, and at -O2 the compiler pairs them into four vector chains, which
 * keeps one core ahead of memory.  Each line is also prefetched 4 KiB
 * ahead, as the library's kernels prefetch their values (kernel_template.h,
 * prefetch_ahead): a bandwidth that only the hardware prefetchers reach
 * understated what one core reads (11.5 GB/s against the kernels' 14 on a
 * 2-core Xeon VM). */
static double sum_chunk(const double *restrict p)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    for (size_t i = 0; i < CHUNK; i += 8) {
        __builtin_prefetch(p + i + 512);
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
        s4 += p[i + 4];
        s5 += p[i + 5];
        s6 += p[i + 6];
        s7 += p[i + 7];
    }
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

/* Huge pages as the library uses for its arrays, so both see the same TLB
 * behaviour. */
static double *alloc_array(size_t bytes)
{
    double *a = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
    if (a)
        (void)madvise(a, bytes, MADV_HUGEPAGE); /* advice only */
#endif
    return a;
}

static void first_touch(double *a, size_t chunks, int threads)
{
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t c = 0; c < chunks; c++)
        for (size_t i = c * CHUNK; i < (c + 1) * CHUNK; i++)
            a[i] = value_at(i);
}

static double parallel_sum(const double *a, size_t chunks, int threads)
{
    double sum = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : sum)
    for (size_t c = 0; c < chunks; c++)
        sum += sum_chunk(a + c * CHUNK);
    return sum;
}

int stream_measure(int threads, size_t bytes, struct stream_result *res)
{
    /* Whole huge pages; 2 MiB is a multiple of the chunk size. */
    if (bytes == 0)
        bytes = 1;
    bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    size_t chunks = bytes / (CHUNK * sizeof(double));

    double *a = alloc_array(bytes);
    if (!a) {
        fprintf(stderr, "bsrmv: stream: cannot allocate %zu bytes: %s\n", bytes,
                strerror(errno));
        return -1;
    }
    first_touch(a, chunks, threads);

    size_t n = chunks * CHUNK;
    /* 1+2+...+7 per full period of value_at, plus the partial period. */
    double expect = (double)(n / 7) * 28 + (double)((n % 7) * (n % 7 + 1) / 2);

    double times[STREAM_PASSES];
    int ok = parallel_sum(a, chunks, threads) == expect;
    for (int p = 0; p < STREAM_PASSES && ok; p++) {
        double t0 = bench_now_ms();
        double s = parallel_sum(a, chunks, threads);
        times[p] = bench_now_ms() - t0;
        ok = s == expect; /* also keeps the sum, so the loop cannot be dropped */
    }
    free(a);
    if (!ok) {
        fprintf(stderr, "bsrmv: stream: wrong sum with %d threads\n", threads);
        return -1;
    }
    res->threads = threads;
    res->bytes = bytes;
    res->time_ms = bench_median(times, STREAM_PASSES);
    res->gbps = bytes / res->time_ms * 1e-6;
    return 0;
}
