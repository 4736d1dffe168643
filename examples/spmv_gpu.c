/* y = A x on the GPU: upload a host matrix, multiply device vectors, copy
 * the result back and compare it with the host's.  Exits 77 (skipped)
 * without a CUDA device. */
#include "chain.h"

#include <bsrmv.h>
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
        bsrmv_gpu_matrix_upload(&dA, A, 0, NULL) != BSRMV_SUCCESS ||
        bsrmv_gpu_malloc(&d_x, bytes) != BSRMV_SUCCESS ||
        bsrmv_gpu_malloc(&d_y, bytes) != BSRMV_SUCCESS ||
        bsrmv_gpu_to_device(d_x, x, bytes) != BSRMV_SUCCESS ||
        bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, dA, d_x, n, 0.0, d_y, n, NULL) != BSRMV_SUCCESS ||
        bsrmv_gpu_to_host(y, d_y, bytes) != BSRMV_SUCCESS) { /* to_host waits for the SpMV */
        fprintf(stderr, "spmv_gpu: %s\n", bsrmv_last_error());
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
    bsrmv_gpu_free(d_x);
    bsrmv_gpu_free(d_y);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_matrix_destroy(A);
    free(x);
    free(y);
    free(ref);
    return rc;
}
