/* CUDA errors as bsrmv statuses, the device scope of an API call and the
 * device-pointer check, shared by the C API (matrix.cu) and the solvers
 * (solve.cu).  Not installed. */
#ifndef BSRMV_CUDA_ERRORS_CUH
#define BSRMV_CUDA_ERRORS_CUH

#include <cuda_runtime.h>

extern "C" {
#include "internal.h"
}

/* Records e with `what`; clears a non-sticky error so that it does not
 * surface again at the next launch check. */
static inline bsrmv_status cuda_fail(cudaError_t e, const char *what)
{
    cudaGetLastError();
    bsrmv_status s = BSRMV_ERR_DEVICE;
    if (e == cudaErrorMemoryAllocation)
        s = BSRMV_ERR_DEVICE_NOMEM;
    else if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        s = BSRMV_ERR_NO_DEVICE;
    return bsrmv_fail(s, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#define CU_RET(call, what)                                                     \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess)                                                 \
            return cuda_fail(e_, what);                                        \
    } while (0)

/* Selects a device for the scope and restores the caller's afterwards. */
struct DeviceScope {
    int old = -1;
    bool changed = false;
    cudaError_t enter(int dev)
    {
        cudaError_t e = cudaGetDevice(&old);
        if (e != cudaSuccess)
            return e;
        if (old != dev) {
            e = cudaSetDevice(dev);
            changed = e == cudaSuccess;
        }
        return e;
    }
    ~DeviceScope()
    {
        if (changed)
            cudaSetDevice(old);
    }
};

/* BSRMV_SUCCESS if p is device memory of `dev` or managed memory. */
static inline bsrmv_status check_device_ptr(const void *p, int dev, const char *name)
{
    if (!p)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s is NULL", name);
    cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it */
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s (%p) is not a device pointer: %s", name, p,
                          cudaGetErrorString(e));
    }
    if (at.type == cudaMemoryTypeManaged)
        return BSRMV_SUCCESS;
    if (at.type != cudaMemoryTypeDevice)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "%s (%p) is %s memory; a device pointer is required", name, p,
                          at.type == cudaMemoryTypeHost ? "pinned host" : "host");
    if (at.device != dev)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s is memory of device %d, the matrix is on device %d",
                          name, at.device, dev);
    return BSRMV_SUCCESS;
}

#endif
