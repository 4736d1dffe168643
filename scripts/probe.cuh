/* What the stand-alone probes in scripts/ share: CK, which returns 1 from
 * main on a failed CUDA call, and the library's stall kernel. */
#ifndef BSRMV_PROBE_CUH
#define BSRMV_PROBE_CUH
#include <cstdio>
#include <cuda_runtime.h>

#include "../src/cuda/stall.cuh"

#define CK(call)                                                                                             \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                                      \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

#endif
