/* y = A x on the GPU: upload a host matrix, multiply vectors the program
 * keeps in device memory (the CUDA runtime's C API), copy the result back
 * and compare it with the host's.  Exits 77 (skipped) without a device. */
#include "chain.h"

#include <bsrmv.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const int64_t nodes = 100000;
    const int bs = 4;
    const int64_t n = nodes * bs;
    int devices = 0;
    if (bsrmv_gpu_device_count(&devices) != BSRMV_SUCCESS || devices == 0) {
        printf("spmv_gpu: no CUDA device (%s): skipped\n", bsrmv_last_error());
        return 77;
    }
    bsrmv_matrix *A = NULL;
    bsrmv_gpu_matrix *dA = NULL;
    void *d_x = NULL, *d_y = NULL;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y),
           *ref = malloc((size_t)n * sizeof *ref);
    size_t bytes = (size_t)n * sizeof(double);
    int rc = 1;
    if (!x || !y || !ref)
        goto done;
    for (int64_t i = 0; i < n; i++)
        x[i] = 1.0 / (double)(1 + i % 7);
    if (chain_matrix(&A, nodes, bs) != BSRMV_SUCCESS ||
        bsrmv_spmv(BSRMV_OP_N, 1.0, A, x, n, 0.0, ref, n) != BSRMV_SUCCESS ||
        bsrmv_gpu_matrix_upload(&dA, A, 0, NULL) != BSRMV_SUCCESS) {
        fprintf(stderr, "spmv_gpu: %s\n", bsrmv_last_error());
        goto done;
    }
    if (cudaMalloc(&d_x, bytes) != cudaSuccess || cudaMalloc(&d_y, bytes) != cudaSuccess ||
        cudaMemcpy(d_x, x, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "spmv_gpu: device memory for x and y\n");
        goto done;
    }
    if (bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, dA, d_x, n, 0.0, d_y, n, NULL) != BSRMV_SUCCESS) {
        fprintf(stderr, "spmv_gpu: %s\n", bsrmv_last_error());
        goto done;
    }
    /* the copy on the default stream waits for the SpMV queued there */
    if (cudaMemcpy(y, d_y, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "spmv_gpu: copying y back\n");
        goto done;
    }
    double err = 0;
    for (int64_t i = 0; i < n; i++)
        err = fmax(err, fabs(y[i] - ref[i]));
    bsrmv_gpu_plan_info plan;
    char kernel[96] = "?";
    if (bsrmv_gpu_matrix_get_plan(dA, &plan) == BSRMV_SUCCESS)
        bsrmv_gpu_config_string(&plan.config, kernel, sizeof kernel);
    printf("GPU SpMV (%s): max |y_gpu - y_cpu| = %.2e\n", kernel, err);
    rc = err <= 1e-12 ? 0 : 1;
done:
    cudaFree(d_x);
    cudaFree(d_y);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_matrix_destroy(A);
    free(x);
    free(y);
    free(ref);
    return rc;
}
