/* Mixed precision on the GPU: float values with double x and y.  The
 * device product of a mixed matrix against the long-double reference of
 * the float-rounded values within the double bound, for every bs with a
 * by-column kernel and runtime ones, both block orders, alpha/beta in {0,
 * 1, -2.5}, y poisoned with NaN, empty rows, non-square shapes, with the
 * plan's choice and every candidate the handle lists forced (by-block,
 * K1, by-column, wide, vector stream, staged at bs 3 and 6 on sm_90, the
 * lane-sequential merge path at bs 1-8);
 * what is not built refused; the refined GPU solve against the host one.
 * Exit 77 (skipped) when there is no CUDA device. */
#include "testutil.h"

#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

static const double coefs[] = {0.0, 1.0, -2.5};

static bsrmv_matrix *mixed_of(const bsrmv_matrix *A)
{
    bsrmv_matrix *M;
    TU_OK(bsrmv_matrix_convert(&M, A, BSRMV_FLOAT));
    TU_OK(bsrmv_matrix_set_vector_type(M, BSRMV_DOUBLE));
    return M;
}

/* y = alpha A x + beta y0 on the device with the handle's current config,
 * checked on the host. */
static void check_device(const char *what, const bsrmv_matrix *M, bsrmv_gpu_matrix *dM,
                         const double *x, double alpha, double beta, const double *y0)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(M, &in));
    const size_t xb = (size_t)in.cols * sizeof(double), yb = (size_t)in.rows * sizeof(double);
    void *dx, *dy;
    double *y = malloc(yb + 8);
    TU_CHECK(y != NULL, "out of memory");
    TU_OK(bsrmv_gpu_malloc(&dx, xb));
    TU_OK(bsrmv_gpu_malloc(&dy, yb));
    TU_OK(bsrmv_gpu_to_device(dx, x, xb));
    TU_OK(bsrmv_gpu_to_device(dy, y0, yb));
    TU_OK(bsrmv_gpu_spmv(BSRMV_OP_N, alpha, dM, dx, in.cols, beta, dy, in.rows, NULL));
    TU_OK(bsrmv_gpu_to_host(y, dy, yb));
    tu_check_result(what, M, BSRMV_OP_N, alpha, x, beta, y0, y);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    free(y);
}

static void run_shape(const char *what, const tu_shape *sh, bsrmv_order order, uint64_t seed)
{
    bsrmv_matrix *A = tu_random_bsr(sh, BSRMV_DOUBLE, order, seed);
    bsrmv_matrix *M = mixed_of(A);
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(M, &in));
    bsrmv_gpu_matrix *dM;
    TU_OK(bsrmv_gpu_matrix_upload(&dM, M, 0, NULL));
    bsrmv_gpu_plan_info p;
    TU_OK(bsrmv_gpu_matrix_get_plan(dM, &p));
    TU_CHECK(p.type == BSRMV_FLOAT && p.vector_type == BSRMV_DOUBLE, "plan types");
    const bsrmv_gpu_kernel pk = p.config.kernel;
    TU_CHECK(pk == BSRMV_GPU_BY_COLUMN || pk == BSRMV_GPU_BY_BLOCK || pk == BSRMV_GPU_K1_SMALL ||
                 pk == BSRMV_GPU_WIDE || pk == BSRMV_GPU_VEC_STREAM || pk == BSRMV_GPU_STAGED ||
                 pk == BSRMV_GPU_MERGE_PATH,
             "plan chose %d", (int)pk);
    double *x = tu_random_vector(in.cols, BSRMV_DOUBLE, seed + 1);
    for (int64_t j = 0; j < in.cols; j++) /* bits below float precision */
        x[j] *= 1.0 + 0x1p-30 * (double)(j % 7);
    /* the plan's choice (slot 0), then every candidate */
    enum { MAXCFG = 96 };
    bsrmv_gpu_config cfgs[MAXCFG + 1] = {{BSRMV_GPU_AUTO, 0, 0, 0, 0}};
    int nc = 0;
    TU_OK(bsrmv_gpu_candidates(dM, cfgs + 1, MAXCFG, &nc));
    TU_CHECK(nc >= 2 && nc <= MAXCFG, "bs %d: %d candidates", in.bs, nc);
    int staged = 0, wide = 0, vs = 0, merge = 0;
    for (int g = 0; g <= nc; g++) {
        if (g > 0)
            TU_OK(bsrmv_gpu_matrix_set_config(dM, &cfgs[g]));
        staged += cfgs[g].kernel == BSRMV_GPU_STAGED;
        wide += cfgs[g].kernel == BSRMV_GPU_WIDE;
        vs += cfgs[g].kernel == BSRMV_GPU_VEC_STREAM;
        merge += cfgs[g].kernel == BSRMV_GPU_MERGE_PATH;
        /* every alpha/beta pair for the plan's choice, two for the others */
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++) {
                if (g > 0 && !(ia == 2 && ib == 0) && !(ia == 1 && ib == 2))
                    continue;
                double *y0 = coefs[ib] == 0 ? tu_nan_vector(in.rows, BSRMV_DOUBLE)
                                            : tu_random_vector(in.rows, BSRMV_DOUBLE, seed + 2);
                check_device(what, M, dM, x, coefs[ia], coefs[ib], y0);
                free(y0);
            }
    }
    const int bs = in.bs;
    const int wwide = bs == 2 || bs == 4 || bs == 8 || bs == 12 || bs == 16 || bs == 24 || bs == 32;
    TU_CHECK(wwide ? wide >= 2 : wide == 0, "%s bs %d: %d wide candidates", what, bs, wide);
    const int wvs = (bs >= 2 && bs <= 6) || bs == 8;
    TU_CHECK(wvs ? vs >= 1 : vs == 0, "%s bs %d: %d vector-stream candidates", what, bs, vs);
    /* the lane-sequential merge path (group 1), compile-time bs only */
    TU_CHECK(bs <= 8 ? merge >= 1 : merge == 0, "%s bs %d: %d merge-path candidates", what, bs, merge);
    /* staged buffers hold the longest row's blocks: not the long row */
    int dev = 0, major = 0;
    TU_CHECK(cudaGetDevice(&dev) == cudaSuccess &&
                 cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess,
             "compute capability");
    const int want = major >= 9 && (in.bs == 3 || in.bs == 6) && sh->long_row < 0;
    TU_CHECK(want ? staged >= 2 : in.bs == 3 || in.bs == 6 || staged == 0,
             "%s bs %d: %d staged configurations built", what, in.bs, staged);
    /* not built for the pair: another family, op T */
    const bsrmv_gpu_config k3 = {BSRMV_GPU_K3_LARGE, 0, 0, 0, 0};
    TU_FAILS(bsrmv_gpu_matrix_set_config(dM, &k3), BSRMV_ERR_UNSUPPORTED);
    void *dx, *dy;
    TU_OK(bsrmv_gpu_malloc(&dx, (size_t)in.rows * 8));
    TU_OK(bsrmv_gpu_malloc(&dy, (size_t)in.cols * 8));
    TU_FAILS(bsrmv_gpu_spmv(BSRMV_OP_T, 1.0, dM, dx, in.rows, 0.0, dy, in.cols, NULL),
             BSRMV_ERR_UNSUPPORTED);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    free(x);
    bsrmv_gpu_matrix_destroy(dM);
    bsrmv_matrix_destroy(M);
    bsrmv_matrix_destroy(A);
}

static void test_spmv(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 10, 13};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const int bs = sizes[q];
        for (int o = 0; o < 2; o++) {
            const uint64_t seed = 900 + (uint64_t)bs * 2 + (uint64_t)o;
            tu_shape small = {37, 23, bs, 4.0, 0.2, -1, 0};
            run_shape("small non-square", &small, (bsrmv_order)o, seed);
            tu_shape one = {1, 40, bs, 10.0, 0.0, -1, 0};
            run_shape("one block row", &one, (bsrmv_order)o, seed + 5);
            const int64_t mb = 200000 / ((int64_t)bs * bs * 8) + 64;
            tu_shape big = {mb, mb, bs, 8.0, 0.05, mb / 2, mb};
            run_shape("large, one long row", &big, (bsrmv_order)o, seed + 7);
        }
    }
    /* above bs 32 nothing is built for the pair */
    tu_shape s48 = {5, 5, 48, 2.0, 0.0, -1, 0};
    bsrmv_matrix *A = tu_random_bsr(&s48, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 3);
    bsrmv_matrix *M = mixed_of(A);
    bsrmv_gpu_matrix *dM;
    TU_FAILS(bsrmv_gpu_matrix_upload(&dM, M, 0, NULL), BSRMV_ERR_UNSUPPORTED);
    bsrmv_matrix_destroy(M);
    bsrmv_matrix_destroy(A);
}

/* The refined solve on the device reaches the host's residual with about
 * the same iterations (the same method code on both). */
static void test_refined(void)
{
    for (int spd = 0; spd < 2; spd++) {
        bsrmv_matrix *A;
        if (spd)
            TU_OK(bsrmv_generate_block_laplacian(&A, 12, 10, 9, 3, 3, BSRMV_DOUBLE,
                                                 BSRMV_COL_MAJOR));
        else
            TU_OK(bsrmv_generate_reservoir(&A, 12, 10, 9, 3, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        bsrmv_matrix *M = mixed_of(A);
        bsrmv_precond *P;
        TU_OK(bsrmv_precond_block_jacobi(&P, M));
        const int64_t n = 12 * 10 * 9 * 3;
        const bsrmv_solver m = spd ? BSRMV_SOLVER_CG : BSRMV_SOLVER_BICGSTAB;
        double *b = tu_random_vector(n, BSRMV_DOUBLE, 4), *xc = tu_nan_vector(n, BSRMV_DOUBLE);
        double *xg = tu_nan_vector(n, BSRMV_DOUBLE);
        bsrmv_solve_options o = {.rtol = 1e-10, .x0_zero = 1, .max_iter = 3000};
        bsrmv_solve_report rc, rg;
        TU_OK(bsrmv_solve_refined(m, A, M, P, b, xc, n, &o, &rc));
        bsrmv_gpu_matrix *dA, *dM;
        bsrmv_gpu_precond *dP;
        void *db, *dx;
        TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
        TU_OK(bsrmv_gpu_matrix_upload(&dM, M, 0, NULL));
        TU_OK(bsrmv_gpu_precond_upload(&dP, P, 0));
        TU_OK(bsrmv_gpu_malloc(&db, (size_t)n * 8));
        TU_OK(bsrmv_gpu_malloc(&dx, (size_t)n * 8));
        TU_OK(bsrmv_gpu_to_device(db, b, (size_t)n * 8));
        TU_OK(bsrmv_gpu_solve_refined(m, dA, dM, dP, db, dx, n, &o, &rg, NULL));
        TU_OK(bsrmv_gpu_to_host(xg, dx, (size_t)n * 8));
        /* the residual of x against the double A, on the host */
        double *r = tu_copy_vector(b, n, BSRMV_DOUBLE);
        TU_OK(bsrmv_spmv(BSRMV_OP_N, -1.0, A, xg, n, 1.0, r, n));
        double rr = 0, bb = 0;
        for (int64_t i = 0; i < n; i++) {
            rr += r[i] * r[i];
            bb += b[i] * b[i];
        }
        printf("refined %s on the GPU: %d iterations, %d corrections, residual %.2e (host: %d, "
               "%d, %.2e)\n",
               spd ? "SPD" : "reservoir", rg.iterations, rg.refinements, sqrt(rr / bb),
               rc.iterations, rc.refinements, rc.true_rel_residual);
        TU_CHECK(rg.converged && sqrt(rr / bb) <= 1e-10, "GPU refined residual %g",
                 sqrt(rr / bb));
        TU_CHECK(abs(rg.iterations - rc.iterations) <= 2 + rc.iterations / 10,
                 "iterations %d vs %d", rg.iterations, rc.iterations);
        /* the pair checks: dA must be double */
        TU_FAILS(bsrmv_gpu_solve_refined(m, dM, dM, dP, db, dx, n, &o, &rg, NULL),
                 BSRMV_ERR_ARGUMENT);
        free(r);
        free(b);
        free(xc);
        free(xg);
        bsrmv_gpu_free(db);
        bsrmv_gpu_free(dx);
        bsrmv_gpu_precond_destroy(dP);
        bsrmv_gpu_matrix_destroy(dM);
        bsrmv_gpu_matrix_destroy(dA);
        bsrmv_precond_destroy(P);
        bsrmv_matrix_destroy(M);
        bsrmv_matrix_destroy(A);
    }
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    test_spmv();
    test_refined();
    printf("test_gpu_mixed: ok\n");
    return 0;
}
