/* The GPU API in a build without CUDA: every call says so. */
#include "internal.h"

#define NO_CUDA() bsrmv_fail(BSRMV_ERR_NO_DEVICE, "bsrmv was built without CUDA")

bsrmv_status bsrmv_gpu_device_count(int *count)
{
    if (count)
        *count = 0;
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_device_name(int device, char *name, size_t len)
{
    if (name && len)
        name[0] = 0;
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_matrix_upload(bsrmv_gpu_matrix **dA, const bsrmv_matrix *A, int device,
                                     void *stream)
{
    if (dA)
        *dA = NULL;
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_matrix_wrap(bsrmv_gpu_matrix **dA, int64_t mb, int64_t nb, int bs,
                                   int64_t nnzb, const int64_t *d_row_ptr,
                                   const int32_t *d_col_idx, const void *d_val,
                                   bsrmv_type type, bsrmv_order order, int device)
{
    if (dA)
        *dA = NULL;
    return NO_CUDA();
}

void bsrmv_gpu_matrix_destroy(bsrmv_gpu_matrix *dA)
{
}

bsrmv_status bsrmv_gpu_spmv(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA,
                            const void *d_x, int64_t nx, double beta, void *d_y,
                            int64_t ny, void *stream)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_spmv_scalars(bsrmv_op op, const void *alpha, const bsrmv_gpu_matrix *dA,
                                    const void *d_x, int64_t nx, const void *beta, void *d_y,
                                    int64_t ny, void *stream)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_spmm(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA, int k,
                            const void *d_X, int64_t ldx, double beta, void *d_Y, int64_t ldy,
                            bsrmv_layout layout, void *stream)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_spmm_scalars(bsrmv_op op, const void *alpha, const bsrmv_gpu_matrix *dA,
                                    int k, const void *d_X, int64_t ldx, const void *beta,
                                    void *d_Y, int64_t ldy, bsrmv_layout layout, void *stream)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_matrix_set_config(bsrmv_gpu_matrix *dA, const bsrmv_gpu_config *cfg)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_candidates(const bsrmv_gpu_matrix *dA, bsrmv_gpu_config *cfgs,
                                  int max, int *n)
{
    if (n)
        *n = 0;
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_matrix_get_plan(const bsrmv_gpu_matrix *dA, bsrmv_gpu_plan_info *info)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_load_tune_file(const char *path)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_matrix_tune(bsrmv_gpu_matrix *dA, int max_candidates, int reps, void *stream,
                                   double *ms)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_malloc(void **p, size_t bytes)
{
    if (p)
        *p = NULL;
    return NO_CUDA();
}

void bsrmv_gpu_free(void *p)
{
}

bsrmv_status bsrmv_gpu_to_device(void *d_dst, const void *src, size_t bytes)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_to_host(void *dst, const void *d_src, size_t bytes)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_stall(double us, void *stream)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_read_bandwidth(size_t bytes, int reps, double *gbps)
{
    if (gbps)
        *gbps = 0;
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_gather_bound(const bsrmv_gpu_matrix *dA, const void *d_x, int reps,
                                    double *ms)
{
    if (ms)
        *ms = 0;
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_precond_upload(bsrmv_gpu_precond **dP, const bsrmv_precond *P, int device)
{
    if (dP)
        *dP = NULL;
    return NO_CUDA();
}

void bsrmv_gpu_precond_destroy(bsrmv_gpu_precond *dP)
{
}

bsrmv_status bsrmv_gpu_solve(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                             const bsrmv_gpu_precond *dP, const void *d_b, void *d_x,
                             int64_t n, const bsrmv_solve_options *opt,
                             bsrmv_solve_report *report, void *stream)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_solve_multi(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                                   const bsrmv_gpu_precond *dP, int64_t n, int k, const void *d_B,
                                   int64_t ldb, void *d_X, int64_t ldx,
                                   const bsrmv_solve_options *opt, bsrmv_solve_report *reports,
                                   void *stream)
{
    return NO_CUDA();
}

bsrmv_status bsrmv_gpu_solve_refined(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                                     const bsrmv_gpu_matrix *dAf, const bsrmv_gpu_precond *dP,
                                     const void *d_b, void *d_x, int64_t n,
                                     const bsrmv_solve_options *opt, bsrmv_solve_report *report,
                                     void *stream)
{
    return NO_CUDA();
}
