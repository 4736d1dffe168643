/* The benchmark's stall kernel (bsrmv_gpu_stall), in a header of its own
 * so that the stand-alone probes in scripts/ time the way the library
 * does.  One thread waits on the GPU's nanosecond clock: a timed region
 * queued behind it is complete on the stream before the GPU reaches it. */
#ifndef BSRMV_CUDA_STALL_CUH
#define BSRMV_CUDA_STALL_CUH

namespace bsrmv_cuda {

__global__ void k_stall(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

} // namespace bsrmv_cuda

#endif
