/* The machine's read bandwidth: the ceiling a streaming SpMV can reach. */
#ifndef BSRMV_TOOLS_STREAM_H
#define BSRMV_TOOLS_STREAM_H

#include <stddef.h>

struct stream_result {
    int threads;
    size_t bytes;   /* array size read per pass           */
    double time_ms; /* median pass time                   */
    double gbps;    /* bytes / time_ms, in 1e9 bytes/s    */
};

/* Sums an array of `bytes` bytes of doubles with `threads` OpenMP threads
 * (one warm-up pass, then the median of 10 passes).  Returns 0,
 * or -1 (with a message on stderr) if the array cannot be allocated or the
 * sum comes out wrong. */
int stream_measure(int threads, size_t bytes, struct stream_result *res);

#endif
