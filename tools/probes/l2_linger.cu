/* Does a load with an L2 evict_last policy (createpolicy.fractional, as
 * common.cuh's loaders use it) keep its lines in L2 after the kernel ends?
 * The SpMV kernels could read the caller's x that way, and lines that
 * outlive the call would crowd the caller's other kernels.
 *
 * Per round: read a buffer B (a third of L2) with hint h, stream a buffer S
 * of 16x L2 with normal loads, then time a normal re-read of B.  If h kept B
 * in L2, the re-read runs at L2 speed; if not, at DRAM speed.  h = normal
 * is the control; "hot" re-reads B without S in between (L2 speed); the
 * last row repeats normal after the evict_last rounds (do marks linger
 * through normal re-reads?).  All of it twice: with the driver's L2
 * set-aside for persisting accesses, then with none.
 *
 * Measured (H100): with a 9 MB set-aside the
 * evict_last re-read ran at 1.12x the normal one, with none at 1.04x --
 * the lines outlive the kernel, so x has no hint.
 *
 * Build and run on the device:
 *   nvcc -O3 -arch=sm_90 -o l2_linger tools/probes/l2_linger.cu && ./l2_linger */
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

enum Hint { NORMAL, LAST, FIRST };

template <int H> __device__ __forceinline__ double load(const double2 *p)
{
    double2 v;
    if constexpr (H == NORMAL) {
        asm volatile("ld.global.cg.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
    } else {
        uint64_t pol;
        if constexpr (H == LAST)
            asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
        else
            asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        asm volatile("ld.global.cg.L2::cache_hint.v2.f64 {%0, %1}, [%2], %3;"
                     : "=d"(v.x), "=d"(v.y)
                     : "l"(p), "l"(pol));
    }
    return v.x + v.y;
}

/* a grid-stride sum, so that no load is dead */
template <int H> __global__ void k_read(const double2 *p, size_t n, double *out)
{
    double s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += load<H>(p + i);
    if (s == 1.2345)
        *out = s;
}

/* n doubles at p (n even, p 16-byte aligned) */
static void read(int h, const double *d, size_t n, double *out, int grid)
{
    const double2 *p = (const double2 *)d;
    n /= 2;
    if (h == LAST)
        k_read<LAST><<<grid, 512>>>(p, n, out);
    else if (h == FIRST)
        k_read<FIRST><<<grid, 512>>>(p, n, out);
    else
        k_read<NORMAL><<<grid, 512>>>(p, n, out);
}

int main()
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    size_t setaside = 0;
    CK(cudaDeviceGetLimit(&setaside, cudaLimitPersistingL2CacheSize));
    printf("%s: L2 %d MB, persisting max %d MB, set-aside now %zu MB\n", prop.name, prop.l2CacheSize >> 20,
           prop.persistingL2CacheMaxSize >> 20, setaside >> 20);
    const size_t nb = prop.l2CacheSize / 3 / sizeof(double),
                 ns = (size_t)prop.l2CacheSize * 16 / sizeof(double);
    double *b, *s, *out;
    CK(cudaMalloc(&b, nb * sizeof(double)));
    CK(cudaMalloc(&s, ns * sizeof(double)));
    CK(cudaMalloc(&out, sizeof(double)));
    CK(cudaMemset(b, 0, nb * sizeof(double)));
    CK(cudaMemset(s, 0, ns * sizeof(double)));
    const int grid = prop.multiProcessorCount * 4;
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    struct Case {
        const char *name;
        int hint;   /* of the first read of B */
        bool flush; /* the stream of S in between */
    };
    const Case cases[] = {{"normal", NORMAL, true},
                          {"hot (no stream)", NORMAL, false},
                          {"evict_last", LAST, true},
                          {"evict_first", FIRST, true},
                          {"normal, after", NORMAL, true}};
    /* the driver's set-aside, then none */
    for (size_t limit : {setaside, (size_t)0}) {
        CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit));
        CK(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize));
        printf("set-aside %zu MB: B %zu MB, stream %zu MB; re-read of B (normal "
               "loads), GB/s, median of 15\n",
               limit >> 20, nb * sizeof(double) >> 20, ns * sizeof(double) >> 20);
        for (const Case &c : cases) {
            std::vector<float> gbs;
            for (int rep = 0; rep < 15; ++rep) {
                read(c.hint, b, nb, out, grid);
                if (c.flush)
                    read(NORMAL, s, ns, out, grid);
                CK(cudaEventRecord(t0));
                read(NORMAL, b, nb, out, grid);
                CK(cudaEventRecord(t1));
                CK(cudaEventSynchronize(t1));
                float ms;
                CK(cudaEventElapsedTime(&ms, t0, t1));
                gbs.push_back((float)(nb * sizeof(double) / (ms * 1e6)));
            }
            std::sort(gbs.begin(), gbs.end());
            printf("  %-18s %7.0f  (min %.0f, max %.0f)\n", c.name, gbs[gbs.size() / 2], gbs.front(),
                   gbs.back());
        }
    }
    CK(cudaGetLastError());
    return 0;
}
