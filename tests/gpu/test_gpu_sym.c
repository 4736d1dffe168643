/* Symmetric storage on the GPU: random symmetric matrices (the upper
 * triangle of a random BSR matrix, mirrored) uploaded in symmetric storage,
 * multiplied by both SYM kernels at several window sizes, against the
 * long-double reference of the same matrix in full storage.  Compiled and
 * runtime block sizes, both orders and types, both ops, alpha/beta in
 * {0, 1, other}, y poisoned with NaN; symmetrised 27-point grids, also with
 * x and y off the vector loads' alignment; the plan's choice (the full
 * storage the handle keeps of matrices this small), the kernels that must
 * be refused, the measured choice, and CG on the device.  Exit 77 without
 * a CUDA device. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const double coefs[] = {0.0, 1.0, -0.7};

/* S: the symmetric matrix whose upper triangle is R's; F: its full storage. */
static void sym_of(const bsrmv_matrix *R, bsrmv_matrix **S, bsrmv_matrix **F)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(R, &in));
    bsrmv_coo *c;
    TU_OK(bsrmv_matrix_to_coo(R, &c));
    int64_t n = 0;
    for (int64_t k = 0; k < c->nnz; k++)
        if (c->row[k] <= c->col[k]) {
            c->row[n] = c->row[k];
            c->col[n] = c->col[k];
            c->val[n++] = c->val[k];
        }
    c->nnz = n;
    TU_OK(bsrmv_matrix_from_coo_sym(S, c, in.bs, BSRMV_SPLIT, in.type, in.order));
    TU_OK(bsrmv_matrix_from_sym(F, *S));
    bsrmv_coo_destroy(c);
}

static void make_sym(const tu_shape *sh, bsrmv_type t, bsrmv_order o, uint64_t seed,
                     bsrmv_matrix **S, bsrmv_matrix **F)
{
    bsrmv_matrix *R = tu_random_bsr(sh, t, o, seed);
    sym_of(R, S, F);
    bsrmv_matrix_destroy(R);
}

/* x and y start `off` values into their allocations (off 1: not on the
 * 16 bytes of the vector loads) */
static void check_config_at(const char *what, bsrmv_gpu_matrix *dS, const bsrmv_matrix *F,
                            const bsrmv_gpu_config *cfg, uint64_t seed, int off)
{
    if (cfg)
        TU_OK(bsrmv_gpu_matrix_set_config(dS, cfg));
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(F, &in));
    const int64_t n = in.rows;
    const size_t bytes = (size_t)(n > 0 ? n : 1) * bsrmv_type_size(in.type);
    const size_t vs = bsrmv_type_size(in.type);
    void *x = tu_random_vector(n, in.type, seed);
    void *bx, *by;
    TU_OK(bsrmv_gpu_malloc(&bx, bytes + (size_t)off * vs));
    TU_OK(bsrmv_gpu_malloc(&by, bytes + (size_t)off * vs));
    void *dx = (char *)bx + (size_t)off * vs, *dy = (char *)by + (size_t)off * vs;
    TU_OK(bsrmv_gpu_to_device(dx, x, bytes));
    for (int op = 0; op < 2; op++)
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++) {
                const double alpha = coefs[ia], beta = coefs[ib];
                void *y0 = beta == 0 ? tu_nan_vector(n, in.type)
                                     : tu_random_vector(n, in.type, seed + 1 + ib);
                void *y = malloc(bytes);
                TU_OK(bsrmv_gpu_to_device(dy, y0, bytes));
                TU_OK(bsrmv_gpu_spmv((bsrmv_op)op, alpha, dS, dx, n, beta, dy, n, NULL));
                TU_OK(bsrmv_gpu_to_host(y, dy, bytes));
                char name[320], c[96];
                bsrmv_gpu_config_string(cfg, c, sizeof c);
                snprintf(name, sizeof name, "%s %s op %d alpha %g beta %g%s", what, c, op, alpha,
                         beta, off ? " (x, y one value on)" : "");
                tu_check_result(name, F, BSRMV_OP_N, alpha, x, beta, y0, y);
                free(y0);
                free(y);
            }
    bsrmv_gpu_free(bx);
    bsrmv_gpu_free(by);
    free(x);
}

static void check_config(const char *what, bsrmv_gpu_matrix *dS, const bsrmv_matrix *F,
                         const bsrmv_gpu_config *cfg, uint64_t seed)
{
    check_config_at(what, dS, F, cfg, seed, 0);
}

static void test_products(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 40};
    int cases = 0;
    for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
        const int bs = sizes[b];
        const int64_t mb = bs <= 8 ? 3000 : 300;
        const tu_shape shapes[] = {
            {1, 1, bs, 1, 0, -1, 0},
            {7, 7, bs, 3, 0.2, -1, 0},
            {mb, mb, bs, 8, 0.1, -1, 0},
            {mb, mb, bs, 4, 0.05, 0, mb}, /* the first row couples to every other */
        };
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
            for (int t = 0; t < 2; t++)
                for (int o = 0; o < 2; o++) {
                    const bsrmv_type type = t ? BSRMV_FLOAT : BSRMV_DOUBLE;
                    bsrmv_matrix *S, *F;
                    make_sym(&shapes[k], type, (bsrmv_order)o, 100 + cases, &S, &F);
                    bsrmv_gpu_matrix *dS;
                    TU_OK(bsrmv_gpu_matrix_upload(&dS, S, 0, NULL));
                    /* so small that the plan runs the full storage */
                    bsrmv_gpu_plan_info p;
                    TU_OK(bsrmv_gpu_matrix_get_plan(dS, &p));
                    TU_CHECK(p.config.kernel != BSRMV_GPU_SYM_WINDOW &&
                                 p.config.kernel != BSRMV_GPU_SYM_ATOMIC,
                             "plan chose %s", bsrmv_gpu_kernel_name(p.config.kernel));
                    char what[96];
                    snprintf(what, sizeof what, "mb %lld bs %d %s %s", (long long)shapes[k].mb,
                             bs, t ? "float" : "double", o ? "row" : "col");
                    check_config(what, dS, F, NULL, 7 + cases);
                    const bsrmv_gpu_config cfgs[] = {
                        {BSRMV_GPU_SYM_ATOMIC, 32, 16, 256, 0},
                        {BSRMV_GPU_SYM_WINDOW, 32, 1, 32, 0},
                        {BSRMV_GPU_SYM_WINDOW, 32, 4, 128, 0},
                    };
                    for (size_t q = 0; q < sizeof cfgs / sizeof cfgs[0]; q++)
                        check_config(what, dS, F, &cfgs[q], 9 + cases);
                    /* back to the plan, and the measured choice among both storages */
                    TU_OK(bsrmv_gpu_matrix_set_config(dS, NULL));
                    TU_OK(bsrmv_gpu_matrix_get_plan(dS, &p));
                    TU_CHECK(p.config.kernel != BSRMV_GPU_SYM_WINDOW, "plan chose %s again",
                             bsrmv_gpu_kernel_name(p.config.kernel));
                    if (k == 2) {
                        TU_OK(bsrmv_gpu_matrix_tune(dS, 0, 2, NULL, NULL));
                        check_config(what, dS, F, NULL, 11 + cases);
                    }
                    /* Full-storage kernels cannot run it. */
                    const bsrmv_gpu_config full = {BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0};
                    TU_FAILS(bsrmv_gpu_matrix_set_config(dS, &full), BSRMV_ERR_UNSUPPORTED);
                    bsrmv_gpu_matrix_destroy(dS);
                    /* Nor the SYM kernels the full matrix. */
                    bsrmv_gpu_matrix *dF;
                    TU_OK(bsrmv_gpu_matrix_upload(&dF, F, 0, NULL));
                    TU_FAILS(bsrmv_gpu_matrix_set_config(dF, &cfgs[0]), BSRMV_ERR_UNSUPPORTED);
                    bsrmv_gpu_matrix_destroy(dF);
                    bsrmv_matrix_destroy(S);
                    bsrmv_matrix_destroy(F);
                    cases++;
                }
    }
    printf("products: %d matrices, 4 configurations each\n", cases);
}

/* 27-point grids, symmetrised: every block row holds its diagonal block
 * and up to 13 blocks right of it, as the SPD grids of the benchmarks,
 * where a warp's rows (several per warp at bs 2-4) run out of blocks at
 * different steps; x and y also off the 16 bytes of vector loads. */
static void test_grids(void)
{
    const int sizes[] = {2, 3, 4, 6, 8};
    const bsrmv_gpu_config cfgs[] = {
        {BSRMV_GPU_SYM_ATOMIC, 32, 16, 256, 0},
        {BSRMV_GPU_SYM_WINDOW, 32, 1, 32, 0},
        {BSRMV_GPU_SYM_WINDOW, 32, 2, 256, 0},
        {BSRMV_GPU_SYM_WINDOW, 32, 4, 256, 0},
    };
    int cases = 0;
    for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++)
        for (int t = 0; t < 2; t++)
            for (int o = 0; o < 2; o++) {
                const int bs = sizes[b];
                const bsrmv_type type = t ? BSRMV_FLOAT : BSRMV_DOUBLE;
                bsrmv_matrix *R, *S, *F;
                TU_OK(bsrmv_generate_grid(&R, 7, 6, 5, bs, 27, 40 + (uint64_t)cases, type,
                                          (bsrmv_order)o));
                sym_of(R, &S, &F);
                bsrmv_gpu_matrix *dS;
                TU_OK(bsrmv_gpu_matrix_upload(&dS, S, 0, NULL));
                char what[96];
                snprintf(what, sizeof what, "grid 7x6x5 bs %d %s %s", bs, t ? "float" : "double",
                         o ? "row" : "col");
                for (size_t q = 0; q < sizeof cfgs / sizeof cfgs[0]; q++)
                    for (int off = 0; off < 2; off++)
                        check_config_at(what, dS, F, &cfgs[q], 21 + (uint64_t)cases, off);
                bsrmv_gpu_matrix_destroy(dS);
                bsrmv_matrix_destroy(R);
                bsrmv_matrix_destroy(S);
                bsrmv_matrix_destroy(F);
                cases++;
            }
    printf("grids: %d matrices, %d configurations each\n", cases, (int)(sizeof cfgs / sizeof cfgs[0]));
}

/* CG on the device with the stored half: converged, close to the host
 * solution of the full matrix. */
static void test_cg(void)
{
    for (int bs = 1; bs <= 6; bs += 5) {
        bsrmv_matrix *F, *S;
        TU_OK(bsrmv_generate_block_laplacian(&F, 12, 10, 9, bs, 3, BSRMV_DOUBLE,
                                             BSRMV_COL_MAJOR));
        TU_OK(bsrmv_matrix_to_sym(&S, F, 1e-14));
        bsrmv_precond *P;
        TU_OK(bsrmv_precond_block_jacobi(&P, S));
        const int64_t n = 12 * 10 * 9 * bs;
        const size_t bytes = (size_t)n * sizeof(double);
        double *b = tu_random_vector(n, BSRMV_DOUBLE, 4);
        double *xh = calloc((size_t)n, sizeof *xh), *xd = calloc((size_t)n, sizeof *xd);
        bsrmv_solve_options opt = {.rtol = 1e-10, .x0_zero = 1};
        bsrmv_solve_report rh, rd;
        TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, F, P, b, xh, n, &opt, &rh));
        bsrmv_gpu_matrix *dS;
        bsrmv_gpu_precond *dP;
        void *db, *dx;
        TU_OK(bsrmv_gpu_matrix_upload(&dS, S, 0, NULL));
        TU_OK(bsrmv_gpu_precond_upload(&dP, P, 0));
        TU_OK(bsrmv_gpu_malloc(&db, bytes));
        TU_OK(bsrmv_gpu_malloc(&dx, bytes));
        TU_OK(bsrmv_gpu_to_device(db, b, bytes));
        TU_OK(bsrmv_gpu_solve(BSRMV_SOLVER_CG, dS, dP, db, dx, n, &opt, &rd, NULL));
        TU_OK(bsrmv_gpu_to_host(xd, dx, bytes));
        TU_CHECK(rd.converged && rd.true_rel_residual <= 1e-10, "device CG: residual %g",
                 rd.true_rel_residual);
        double d = 0, m = 0;
        for (int64_t i = 0; i < n; i++) {
            d = fmax(d, fabs(xd[i] - xh[i]));
            m = fmax(m, fabs(xh[i]));
        }
        TU_CHECK(d <= 1e-7 * m, "bs %d: device and host solutions differ by %g (max %g)", bs, d,
                 m);
        bsrmv_gpu_free(db);
        bsrmv_gpu_free(dx);
        bsrmv_gpu_precond_destroy(dP);
        bsrmv_gpu_matrix_destroy(dS);
        free(b);
        free(xh);
        free(xd);
        bsrmv_precond_destroy(P);
        bsrmv_matrix_destroy(S);
        bsrmv_matrix_destroy(F);
    }
    printf("cg: ok\n");
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    test_products();
    test_grids();
    test_cg();
    return 0;
}
