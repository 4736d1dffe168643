/* The GPU-rank functions of a build without CUDA and NCCL. */
#include "dist_internal.h"

static bsrmv_status none(void)
{
    return bsrmv_fail(BSRMV_ERR_NO_DEVICE,
                      "bsrmv_mpi was built without CUDA and NCCL: no GPU ranks");
}

bsrmv_status bsrmv_dist_gpu_matrix_upload(bsrmv_dist_gpu_matrix **dA, bsrmv_dist_matrix *A,
                                          int device)
{
    if (dA)
        *dA = NULL;
    return none();
}

void bsrmv_dist_gpu_matrix_destroy(bsrmv_dist_gpu_matrix *dA)
{
}

bsrmv_status bsrmv_dist_gpu_matrix_parts(const bsrmv_dist_gpu_matrix *dA,
                                         bsrmv_gpu_matrix **local, bsrmv_gpu_matrix **offrank,
                                         const int64_t **d_offrank_rows)
{
    return none();
}

bsrmv_status bsrmv_dist_gpu_spmv(bsrmv_op op, double alpha, bsrmv_dist_gpu_matrix *dA,
                                 const void *d_x, int64_t nx, double beta, void *d_y, int64_t ny,
                                 void *stream)
{
    return none();
}

bsrmv_status bsrmv_dist_gpu_halo_exchange(bsrmv_dist_gpu_matrix *dA, const void *d_x, int64_t nx,
                                          void *stream)
{
    return none();
}

bsrmv_status bsrmv_dist_gpu_sync(bsrmv_dist_gpu_matrix *dA)
{
    return none();
}

bsrmv_status bsrmv_dist_gpu_spmv_run(bsrmv_dist_gpu_matrix *dA, const void *d_x, void *d_y,
                                     void *stream)
{
    return none();
}

bsrmv_status bsrmv_dist_gpu_precond_block_jacobi(bsrmv_gpu_precond **dP,
                                                 const bsrmv_dist_gpu_matrix *dA)
{
    if (dP)
        *dP = NULL;
    return none();
}

bsrmv_status bsrmv_dist_gpu_solve(bsrmv_solver method, bsrmv_dist_gpu_matrix *dA,
                                  const bsrmv_gpu_precond *dP, const void *d_b, void *d_x,
                                  int64_t n, const bsrmv_solve_options *opt,
                                  bsrmv_solve_report *report, void *stream)
{
    return none();
}
