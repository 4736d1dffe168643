/* Is the benchmark's read-only kernel (k_read in src/cuda/k_misc.cu) the
 * device's read ceiling?  An SpMV once measured above a grid-stride read
 * kernel (double bs 4 on the 27-point grid, 3149 against 3084 GB/s, H100),
 * so that loop was not.  This probe times read-only variants side by side:
 *   stride: k_read's grid-stride loop (SMs x 8 blocks of 256 threads), U
 *           16-byte loads in flight per thread;
 *   chunk:  one warp per contiguous chunk of 32 x U loads, a thread block
 *           per 8 chunks and as many blocks as chunks need (the shape of
 *           the SpMV kernels: a warp walks its block row);
 *   range:  k_read's grid, each thread block streaming one contiguous
 *           range (a persistent kernel's stages taken in runs, not strided:
 *           7.5% slower than the grid-stride loop on an H100; the staged
 *           kernel so changed lost 3.5-5%);
 * each with plain non-coherent loads and with the 256-byte L2 fill
 * (ld.global.nc.L2::256B, what common.cuh's loaders use), on a 2 GiB and
 * a 300 MB buffer.  Every pass is queued behind a stall (as the library
 * times), median of 20 passes, three interleaved rounds; the table gives
 * the median round.
 *
 * Build and run on the device:
 *   nvcc -O3 -arch=sm_90 -o read_probe tools/probes/read_probe.cu && ./read_probe */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#define CK(call)                                                                                             \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                                      \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

template <bool FILL> __device__ __forceinline__ unsigned load(const uint4 *p)
{
    uint4 v;
    if constexpr (FILL)
        asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
    else
        v = __ldg(p);
    return v.x ^ v.y ^ v.z ^ v.w;
}

template <bool FILL, int U> __global__ void k_stride(const uint4 *p, size_t n, unsigned *sink)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        unsigned v[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            v[u] = load<FILL>(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u)
            acc ^= v[u];
    }
    for (; i < n; i += stride)
        acc ^= load<FILL>(p + i);
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

template <bool FILL, int U> __global__ void k_chunk(const uint4 *p, size_t n, unsigned *sink)
{
    const size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t base = warp * 32 * U + (threadIdx.x & 31);
    unsigned v[U], acc = 0;
#pragma unroll
    for (int u = 0; u < U; ++u)
        v[u] = base + u * 32 < n ? load<FILL>(p + base + u * 32) : 0;
#pragma unroll
    for (int u = 0; u < U; ++u)
        acc ^= v[u];
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

template <bool FILL, int U> __global__ void k_range(const uint4 *p, size_t n, unsigned *sink)
{
    const size_t per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per;
    const size_t hi = lo + per < n ? lo + per : n;
    unsigned acc = 0;
    size_t i = lo + threadIdx.x;
    for (; i + (U - 1) * blockDim.x < hi; i += U * blockDim.x) {
        unsigned v[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            v[u] = load<FILL>(p + i + u * blockDim.x);
#pragma unroll
        for (int u = 0; u < U; ++u)
            acc ^= v[u];
    }
    for (; i < hi; i += blockDim.x)
        acc ^= load<FILL>(p + i);
    if (acc == 0x9e3779b9u)
        *sink = acc;
}

__global__ void k_stall(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

struct Variant {
    const char *name;
    void (*kern)(const uint4 *, size_t, unsigned *);
    int chunk; /* 16-byte loads per warp chunk; 0: grid-stride */
};

int main()
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const Variant vs[] = {
        {"stride u4 (k_read)", k_stride<false, 4>, 0}, {"stride u4 256B", k_stride<true, 4>, 0},
        {"stride u8", k_stride<false, 8>, 0},          {"stride u8 256B", k_stride<true, 8>, 0},
        {"chunk u4", k_chunk<false, 4>, 4 * 32},       {"chunk u8", k_chunk<false, 8>, 8 * 32},       {"chunk u8 256B", k_chunk<true, 8>, 8 * 32},
        {"chunk u16 256B", k_chunk<true, 16>, 16 * 32}, {"range u4", k_range<false, 4>, 0},
        {"range u8", k_range<false, 8>, 0},
    };
    const int nv = sizeof vs / sizeof vs[0];
    const size_t sizes[] = {(size_t)2 << 30, (size_t)300 << 20};
    uint4 *buf;
    unsigned *sink;
    CK(cudaMalloc(&buf, sizes[0]));
    CK(cudaMalloc(&sink, sizeof *sink));
    CK(cudaMemset(buf, 0x5a, sizes[0]));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("%s, %d SMs, %.0f MB L2\n", prop.name, sms, prop.l2CacheSize / 1e6);
    std::vector<double> med[2][16];
    for (int round = 0; round < 3; ++round)
        for (int si = 0; si < 2; ++si)
            for (int v = 0; v < nv; ++v) {
                const size_t n = sizes[si] / 16;
                const unsigned grid =
                    vs[v].chunk ? (unsigned)((n + (size_t)vs[v].chunk * 8 - 1) / ((size_t)vs[v].chunk * 8))
                                : (unsigned)sms * 8;
                std::vector<float> t(20);
                vs[v].kern<<<grid, 256>>>(buf, n, sink);
                for (float &m : t) {
                    k_stall<<<1, 1>>>(50000);
                    CK(cudaEventRecord(e0));
                    vs[v].kern<<<grid, 256>>>(buf, n, sink);
                    CK(cudaEventRecord(e1));
                    CK(cudaEventSynchronize(e1));
                    CK(cudaEventElapsedTime(&m, e0, e1));
                }
                CK(cudaGetLastError());
                std::sort(t.begin(), t.end());
                med[si][v].push_back(sizes[si] / (t[10] * 1e6));
            }
    printf("%-22s %10s %10s   (GB/s, median of 20 passes; median, min, max of 3 rounds)\n", "variant", "2 GiB",
           "300 MiB");
    for (int v = 0; v < nv; ++v) {
        printf("%-22s", vs[v].name);
        for (int si = 0; si < 2; ++si) {
            std::vector<double> m = med[si][v];
            std::sort(m.begin(), m.end());
            printf("  %6.0f [%4.0f-%4.0f]", m[1], m[0], m[2]);
        }
        printf("\n");
    }
    return 0;
}
