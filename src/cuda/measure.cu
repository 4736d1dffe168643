/* The measured choice: every configuration that applies, timed on the
 * matrix itself, the fastest kept (bsrmv_gpu_matrix_tune). */
#include "handle.cuh"

#include <stdlib.h>

using namespace bsrmv_cuda;

extern "C" bsrmv_status bsrmv_gpu_matrix_tune(bsrmv_gpu_matrix *dA, int max_candidates, int reps, void *stream,
                                              double *ms)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is NULL");
    if (max_candidates < 0 || reps < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "max_candidates and reps must be >= 0");
    if (ms)
        *ms = 0;
    reps = reps ? reps : 10;
    DeviceScope ds;
    cudaError_t e = ds.enter(dA->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    cudaStream_t s = (cudaStream_t)stream;
    const int n = build_candidates(dA, nullptr, 0);
    const int want = max_candidates && max_candidates < n ? max_candidates : n;
    bsrmv_gpu_config *cfgs = (bsrmv_gpu_config *)malloc(sizeof *cfgs * (size_t)(n + 1));
    if (!cfgs)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory");
    /* the table's choice first: the one to beat */
    bsrmv_status st = plan_choose(dA);
    cfgs[0] = dA->cfg;
    build_candidates(dA, cfgs + 1, n);
    const size_t ts = bsrmv_type_size(dA->vtype);
    const int64_t nx = dA->nb * dA->bs, ny = dA->mb * dA->bs;
    void *x = nullptr, *y = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr, w0 = nullptr;
    if (!st && ((e = cudaMalloc(&x, (size_t)nx * ts + 16)) != cudaSuccess ||
                (e = cudaMalloc(&y, (size_t)ny * ts + 16)) != cudaSuccess ||
                (e = cudaMemsetAsync(x, 0, (size_t)nx * ts, s)) != cudaSuccess ||
                (e = cudaEventCreate(&e0)) != cudaSuccess || (e = cudaEventCreate(&e1)) != cudaSuccess ||
                (e = cudaEventCreate(&w0)) != cudaSuccess || (e = cudaEventRecord(w0, s)) != cudaSuccess))
        st = cuda_fail(e, "the measured choice's vectors and events");
    int best = 0;
    float best_ms = 0;
    for (int i = 0; i <= want && !st; ++i) {
        if (i > 0 && !dA->use_full && cfgs[i].kernel == cfgs[0].kernel && cfgs[i].group == cfgs[0].group &&
            cfgs[i].rows == cfgs[0].rows && cfgs[i].threads == cfgs[0].threads && cfgs[i].param == cfgs[0].param)
            continue;
        /* the table's choice is the plan itself (it may run another
         * storage of the matrix: handle.cuh, full) */
        if ((st = i == 0 ? plan_choose(dA) : plan_set(dA, cfgs[i])))
            break;
        float t = 0;
        /* one call warms the caches and loads the kernel */
        for (int r = -1; r < reps && !st; ++r) {
            if (r == 0 && (e = cudaEventRecord(e0, s)) != cudaSuccess)
                st = cuda_fail(e, "cudaEventRecord");
            if (!st)
                st = bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, dA, x, nx, 0.0, y, ny, s);
        }
        if (!st && ((e = cudaEventRecord(e1, s)) != cudaSuccess || (e = cudaEventSynchronize(e1)) != cudaSuccess ||
                    (e = cudaEventElapsedTime(&t, e0, e1)) != cudaSuccess))
            st = cuda_fail(e, "timing a candidate");
        /* another configuration must be 1% faster than the table's, so
         * that noise does not move the choice */
        if (!st && (i == 0 || t < 0.99f * best_ms)) {
            best = i;
            best_ms = t;
        }
    }
    float total = 0;
    if (!st && (e = cudaEventRecord(e1, s)) == cudaSuccess && (e = cudaEventSynchronize(e1)) == cudaSuccess)
        cudaEventElapsedTime(&total, w0, e1);
    const bsrmv_status set = best == 0 ? plan_choose(dA) : plan_set(dA, cfgs[best]);
    st = st ? st : set;
    if (!st) {
        dA->from_tune = 2;
        if (ms)
            *ms = total;
    }
    cudaFree(x);
    cudaFree(y);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (w0)
        cudaEventDestroy(w0);
    free(cfgs);
    cudaGetLastError();
    return st;
}
