/* Device helpers of the benchmark (bsrmv_bench.h's instruments): a stall
 * to queue timed calls behind, the device's read bandwidth, and a matrix's
 * gather bound.  Not used by the library's own calls. */
#include "handle.cuh"

#include <stdio.h>
#include <stdlib.h>

using namespace bsrmv_cuda;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median time (ms) of `reps` runs of pass(), each between two events on
 * the default stream, after a warm-up run; t: room for reps times.  Each
 * run is queued behind a stall, so that its time is the GPU's alone
 * (bsrmv_gpu_stall): pass() is one launch, queued in a few microseconds. */
template <typename F>
static cudaError_t median_ms(F pass, int reps, double *t, double *ms)
{
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    cudaError_t e = cudaEventCreate(&e0);
    if (e == cudaSuccess)
        e = cudaEventCreate(&e1);
    if (e == cudaSuccess && (e = pass()) == cudaSuccess)
        e = cudaDeviceSynchronize();
    for (int i = 0; i < reps && e == cudaSuccess; ++i) {
        float m = 0;
        if ((e = stall_pass(50, 0)) == cudaSuccess && (e = cudaEventRecord(e0, 0)) == cudaSuccess &&
            (e = pass()) == cudaSuccess &&
            (e = cudaEventRecord(e1, 0)) == cudaSuccess && (e = cudaEventSynchronize(e1)) == cudaSuccess)
            e = cudaEventElapsedTime(&m, e0, e1);
        t[i] = m;
    }
    if (e == cudaSuccess) {
        qsort(t, reps, sizeof *t, cmp_double);
        *ms = t[reps / 2];
    }
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return e;
}

extern "C" bsrmv_status bsrmv_gpu_stall(double us, void *stream)
{
    if (!(us > 0 && us <= 1e6))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "stall of %g us: must be in (0, 1e6]", us);
    cudaGetLastError();
    CU_RET(stall_pass(us, (cudaStream_t)stream), "stall kernel");
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_read_bandwidth(size_t bytes, int reps, double *gbps)
{
    if (!gbps || reps < 1 || bytes < 16)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bad arguments");
    *gbps = 0;
    bytes &= ~(size_t)15;
    void *buf = nullptr;
    unsigned long long *sink = nullptr;
    double *t = (double *)malloc(sizeof(double) * reps), ms = 0;
    if (!t)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory");
    bsrmv_status st = BSRMV_SUCCESS;
    cudaError_t e;
    if ((e = cudaMalloc(&buf, bytes)) != cudaSuccess)
        st = cuda_fail(e, "cudaMalloc (read bandwidth buffer)");
    else if ((e = cudaMalloc((void **)&sink, sizeof *sink)) != cudaSuccess ||
             (e = cudaMemset(buf, 0x5a, bytes)) != cudaSuccess)
        st = cuda_fail(e, "read bandwidth buffer");
    else if ((e = median_ms([&] { return read_bandwidth_pass(buf, bytes, sink, 0); }, reps, t, &ms)) !=
             cudaSuccess)
        st = cuda_fail(e, "read kernel");
    else
        *gbps = (double)bytes / (ms * 1e6);
    cudaFree(buf);
    cudaFree(sink);
    free(t);
    return st;
}

extern "C" bsrmv_status bsrmv_gpu_gather_bound(const bsrmv_gpu_matrix *dA, const void *d_x, int reps,
                                               double *ms)
{
    if (!dA || !ms || reps < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "gather bound: %s",
                          !dA ? "dA is NULL" : !ms ? "ms is NULL" : "reps < 1");
    *ms = 0;
    if (dA->vtype != dA->type)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "gather bound: not built for float values with double vectors");
    if (bsrmv_type_is_complex(dA->type))
        return bsrmv_refuse_complex(dA->type, "the gather bound");
    if (dA->nnzb == 0)
        return BSRMV_SUCCESS;
    DeviceScope ds;
    cudaError_t e = ds.enter(dA->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    bsrmv_status st = check_device_ptr(d_x, dA->device, "x");
    if (st)
        return st;
    cudaGetLastError();
    double *t = (double *)malloc(sizeof(double) * reps);
    if (!t)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory");
    void *sink = nullptr;
    const int order = dA->order == BSRMV_COL_MAJOR ? COL : ROW;
    if ((e = cudaMalloc(&sink, sizeof(double))) != cudaSuccess)
        st = cuda_fail(e, "cudaMalloc");
    /* the fastest of the kernel's lane mappings and unroll depths */
    for (int v = 0; v < 4 && !st; ++v) {
        double m = 0;
        e = median_ms(
            [&] {
                return dA->type == BSRMV_DOUBLE
                           ? gather_pass<double>((const double *)dA->val, dA->col_idx, (const double *)d_x,
                                                 dA->nnzb, dA->bs, order, v, dA->sms, (double *)sink, 0)
                           : gather_pass<float>((const float *)dA->val, dA->col_idx, (const float *)d_x,
                                                dA->nnzb, dA->bs, order, v, dA->sms, (float *)sink, 0);
            },
            reps, t, &m);
        if (e != cudaSuccess)
            st = cuda_fail(e, "gather bound kernel");
        else if (v == 0 || m < *ms)
            *ms = m;
    }
    if (st)
        *ms = 0;
    cudaFree(sink);
    free(t);
    return st;
}
