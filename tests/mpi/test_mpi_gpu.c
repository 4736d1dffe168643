/* GPU ranks (one device per rank, rank % devices): the distributed SpMV
 * and transpose on the device, gathered and checked against the
 * long-double reference of the whole matrix on every rank; the
 * distributed GPU solvers against the single-GPU ones.  Exits 77
 * (skipped) when the host has fewer GPUs than ranks. */
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"
#include "bsrmv_mpi.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* Every rank's part (rows rs[r]..rs[r+1] of bs values) into whole. */
static void gather(const void *part, void *whole, const int64_t *rs, int bs, bsrmv_type t)
{
    const int64_t vs = (int64_t)bsrmv_type_size(t);
    int *cnt = malloc((size_t)size * sizeof *cnt), *dsp = malloc((size_t)size * sizeof *dsp);
    TU_CHECK(cnt && dsp, "out of memory");
    for (int r = 0; r < size; r++) {
        cnt[r] = (int)((rs[r + 1] - rs[r]) * bs * vs);
        dsp[r] = (int)(rs[r] * bs * vs);
    }
    MPI_Allgatherv(part, cnt[rank], MPI_BYTE, whole, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
    free(cnt);
    free(dsp);
}

static void check_gpu(const char *what, const bsrmv_matrix *G, int uneven, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(G, &in));
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(G, &rp, &ci, &val));
    int64_t *rs = malloc((size_t)(size + 1) * sizeof *rs);
    TU_CHECK(rs != NULL, "out of memory");
    if (uneven) { /* 1: the last rank gets most; 2: all, the others none */
        for (int p = 0; p <= size; p++)
            rs[p] = p == size ? in.mb : uneven == 2 ? 0 : in.mb * p / (4 * size);
    } else {
        TU_OK(bsrmv_dist_partition(rp, in.mb, size, rs));
    }
    bsrmv_dist_matrix *D;
    TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, G, rs));
    int ndev = 0;
    TU_OK(bsrmv_gpu_device_count(&ndev));
    bsrmv_dist_gpu_matrix *dD;
    TU_OK(bsrmv_dist_gpu_matrix_upload(&dD, D, rank % ndev));
    const int bs = in.bs;
    const bsrmv_type t = in.type;
    const size_t vs = bsrmv_type_size(t);
    static const double ab[][2] = {{1.0, 0.0}, {-0.5, 2.0}, {0.0, 1.5}};
    for (int op = 0; op < 2; op++) {
        const int64_t nx = (op ? in.mb : in.nb) * bs, ny = (op ? in.nb : in.mb) * bs;
        const int64_t r0 = rs[rank] * bs, r1 = rs[rank + 1] * bs;
        /* square: the columns follow the rows */
        const int64_t myx = r1 - r0, myy = r1 - r0;
        void *x = tu_random_vector(nx, t, seed + 1), *y0 = tu_random_vector(ny, t, seed + 2);
        void *yw = tu_nan_vector(ny, t), *yh = tu_nan_vector(myy + 1, t);
        void *dx, *dy;
        TU_OK(bsrmv_gpu_malloc(&dx, (size_t)(myx + 1) * vs));
        TU_OK(bsrmv_gpu_malloc(&dy, (size_t)(myy + 1) * vs));
        TU_OK(bsrmv_gpu_to_device(dx, (const char *)x + r0 * vs, (size_t)myx * vs));
        for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++) {
            const double alpha = ab[c][0], beta = ab[c][1];
            if (beta == 0) /* NaN in y must not leak into the result */
                TU_OK(bsrmv_gpu_to_device(dy, yh, (size_t)myy * vs));
            else
                TU_OK(bsrmv_gpu_to_device(dy, (const char *)y0 + r0 * vs, (size_t)myy * vs));
            TU_OK(bsrmv_dist_gpu_spmv((bsrmv_op)op, alpha, dD, dx, myx, beta, dy, myy, NULL));
            TU_OK(bsrmv_dist_gpu_sync(dD));
            void *part = malloc((size_t)(myy + 1) * vs);
            TU_CHECK(part != NULL, "out of memory");
            TU_OK(bsrmv_gpu_to_host(part, dy, (size_t)myy * vs));
            gather(part, yw, rs, bs, t);
            free(part);
            char msg[160];
            snprintf(msg, sizeof msg, "GPU %s op %c alpha %g beta %g, %d ranks", what,
                     op ? 'T' : 'N', alpha, beta, size);
            tu_check_result(msg, G, (bsrmv_op)op, alpha, x, beta, y0, yw);
        }
        bsrmv_gpu_free(dx);
        bsrmv_gpu_free(dy);
        free(x);
        free(y0);
        free(yw);
        free(yh);
    }
    bsrmv_dist_gpu_matrix_destroy(dD);
    bsrmv_dist_matrix_destroy(D);
    free(rs);
}

/* ---- distributed GPU solvers against the single-GPU ones ---------------- */

static int solves;

/* got must be want on every rank, with the same message naming a rank */
static void expect_everywhere(bsrmv_status got, bsrmv_status want, const char *what)
{
    const char *msg = bsrmv_last_error();
    TU_CHECK(got == want, "%s: rank %d got %s, wanted %s (%s)", what, rank,
             bsrmv_status_string(got), bsrmv_status_string(want), msg);
    char mine[512] = {0}, first[512] = {0};
    snprintf(mine, sizeof mine, "%s", msg);
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    TU_CHECK(strncmp(mine, "rank ", 5) == 0 && strcmp(first, mine) == 0,
             "%s: rank %d says \"%s\", rank 0 \"%s\"", what, rank, mine, first);
}

/* uneven: all rows on the last rank (the others hold none) */
static void solve_case(bsrmv_solver m, const bsrmv_matrix *G, int precond, int uneven,
                       const char *name)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(G, &in));
    const bsrmv_type t = in.type;
    const int bs = in.bs;
    const size_t vs = bsrmv_type_size(t);
    const double rtol = t == BSRMV_DOUBLE ? 1e-8 : 1e-5;
    int ndev = 0;
    TU_OK(bsrmv_gpu_device_count(&ndev));
    const int dev = rank % ndev;
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .restart = 20, .x0_zero = 1};
    bsrmv_solve_report r1, r2;

    void *b = tu_random_vector(in.rows, t, 77), *x1 = tu_nan_vector(in.rows, t);
    /* the distributed matrix first: its upload makes this rank's device
     * current, where bsrmv_gpu_malloc allocates */
    int64_t *rs = malloc((size_t)(size + 1) * sizeof *rs);
    TU_CHECK(rs != NULL, "out of memory");
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(G, &rp, &ci, &val));
    if (uneven)
        for (int p = 0; p <= size; p++)
            rs[p] = p == size ? in.mb : 0;
    else
        TU_OK(bsrmv_dist_partition(rp, in.mb, size, rs));
    bsrmv_dist_matrix *D;
    TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, G, rs));
    bsrmv_dist_gpu_matrix *dD;
    TU_OK(bsrmv_dist_gpu_matrix_upload(&dD, D, dev));
    /* the single-GPU reference, on this rank's device */
    bsrmv_gpu_matrix *dG;
    TU_OK(bsrmv_gpu_matrix_upload(&dG, G, dev, NULL));
    bsrmv_precond *P1 = NULL;
    bsrmv_gpu_precond *dP1 = NULL;
    if (precond) {
        TU_OK(bsrmv_precond_block_jacobi(&P1, G));
        TU_OK(bsrmv_gpu_precond_upload(&dP1, P1, dev));
    }
    void *db, *dx;
    TU_OK(bsrmv_gpu_malloc(&db, (size_t)in.rows * vs));
    TU_OK(bsrmv_gpu_malloc(&dx, (size_t)in.rows * vs));
    TU_OK(bsrmv_gpu_to_device(db, b, (size_t)in.rows * vs));
    TU_OK(bsrmv_gpu_to_device(dx, x1, (size_t)in.rows * vs)); /* NaN: x0_zero must not read it */
    TU_OK(bsrmv_gpu_solve(m, dG, dP1, db, dx, in.rows, &o, &r1, NULL));
    TU_OK(bsrmv_gpu_to_host(x1, dx, (size_t)in.rows * vs));
    bsrmv_gpu_free(db);
    bsrmv_gpu_free(dx);

    /* distributed */
    bsrmv_gpu_precond *dP2 = NULL;
    if (precond)
        TU_OK(bsrmv_dist_gpu_precond_block_jacobi(&dP2, dD));
    const int64_t n = (rs[rank + 1] - rs[rank]) * bs;
    void *x2 = tu_nan_vector(n + 1, t), *xw = tu_nan_vector(in.rows, t);
    TU_OK(bsrmv_gpu_malloc(&db, (size_t)(n + 1) * vs));
    TU_OK(bsrmv_gpu_malloc(&dx, (size_t)(n + 1) * vs));
    TU_OK(bsrmv_gpu_to_device(db, (const char *)b + (size_t)(rs[rank] * bs) * vs, (size_t)n * vs));
    TU_OK(bsrmv_gpu_to_device(dx, x2, (size_t)n * vs));
    TU_OK(bsrmv_dist_gpu_solve(m, dD, dP2, db, dx, n, &o, &r2, NULL));
    TU_OK(bsrmv_gpu_to_host(x2, dx, (size_t)n * vs));
    gather(x2, xw, rs, bs, t);

    double d2 = 0, n2 = 0;
    for (int64_t i = 0; i < in.rows; i++) {
        const double a = tu_get(x1, t, i), c = tu_get(xw, t, i);
        d2 += (a - c) * (a - c);
        n2 += a * a;
    }
    const double rel = sqrt(d2 / n2);
    if (rank == 0)
        printf("  %-8s %-10s %-6s %-6s %s, %d ranks: %d iterations (one GPU %d), "
               "true residual %.2e, solutions differ by %.2e\n",
               m == BSRMV_SOLVER_CG ? "cg" : m == BSRMV_SOLVER_BICGSTAB ? "bicgstab" : "gmres",
               name, t == BSRMV_DOUBLE ? "double" : "float", precond ? "jacobi" : "none",
               uneven ? "uneven" : "even", size, r2.iterations, r1.iterations,
               r2.true_rel_residual, rel);
    TU_CHECK(r1.converged && r2.converged && r2.true_rel_residual <= rtol,
             "%s: not converged (%g)", name, r2.true_rel_residual);
    /* the sums run in another order: one iteration either way (a few more
     * on long solves, where rounding compounds) */
    const int slack = 1 + r1.iterations / 20;
    TU_CHECK(abs(r2.iterations - r1.iterations) <= slack,
             "%s: %d iterations distributed, %d on one GPU", name, r2.iterations, r1.iterations);
    /* both solutions are within rtol*cond of the true one */
    TU_CHECK(rel <= (t == BSRMV_DOUBLE ? 1e-5 : 1e-2), "%s: solutions differ by %g", name, rel);
    int it[2] = {r2.iterations, -r2.iterations}, mx[2];
    MPI_Allreduce(it, mx, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    TU_CHECK(mx[0] == -mx[1], "ranks report different iteration counts");
    TU_CHECK(r2.bytes > 0 && r2.seconds > 0, "%s: empty report", name);

    /* a wrong length on the last rank, a preconditioner on some ranks only:
     * an error on every rank, no hang */
    bsrmv_status st = bsrmv_dist_gpu_solve(m, dD, dP2, db, dx, rank == size - 1 ? n + 1 : n, &o,
                                           NULL, NULL);
    expect_everywhere(st, BSRMV_ERR_DIMENSION, "wrong length on one rank");
    if (precond && size > 1) {
        st = bsrmv_dist_gpu_solve(m, dD, rank == 0 ? NULL : dP2, db, dx, n, &o, NULL, NULL);
        TU_CHECK(st == BSRMV_ERR_ARGUMENT, "a preconditioner on some ranks: rank %d got %s",
                 rank, bsrmv_status_string(st));
    }
    solves++;
    bsrmv_gpu_free(db);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_precond_destroy(dP1);
    bsrmv_gpu_precond_destroy(dP2);
    bsrmv_precond_destroy(P1);
    bsrmv_gpu_matrix_destroy(dG);
    bsrmv_dist_gpu_matrix_destroy(dD);
    bsrmv_dist_matrix_destroy(D);
    free(rs);
    free(b);
    free(x1);
    free(x2);
    free(xw);
}

/* What GPU ranks do not take (complex values, symmetric storage) is refused
 * with BSRMV_ERR_UNSUPPORTED on every rank, before any device work, and
 * leaves no handle. */
static void refusal_cases(int *cases)
{
    bsrmv_matrix *G, *Gz, *S; /* symmetric, so that to_sym takes it */
    TU_OK(bsrmv_generate_block_laplacian(&G, 8, 8, 8, 2, 5, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_convert(&Gz, G, BSRMV_COMPLEX_DOUBLE));
    TU_OK(bsrmv_matrix_to_sym(&S, G, 0));
    const bsrmv_matrix *which[] = {Gz, S};
    int ndev = 0;
    TU_OK(bsrmv_gpu_device_count(&ndev));
    static char unset;
    for (int w = 0; w < 2; w++) {
        bsrmv_dist_matrix *D;
        TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, which[w], NULL));
        bsrmv_dist_gpu_matrix *dD = (bsrmv_dist_gpu_matrix *)(void *)&unset;
        const bsrmv_status st = bsrmv_dist_gpu_matrix_upload(&dD, D, rank % ndev);
        TU_CHECK(st == BSRMV_ERR_UNSUPPORTED && dD == NULL, "%s: upload gave %d (%s)",
                 w ? "symmetric storage" : "complex", (int)st, bsrmv_last_error());
        bsrmv_dist_matrix_destroy(D);
        (*cases)++;
    }
    bsrmv_matrix_destroy(S);
    bsrmv_matrix_destroy(Gz);
    bsrmv_matrix_destroy(G);
}

static void solver_cases(void)
{
    bsrmv_matrix *L, *R;
    for (int t = 0; t < 2; t++) {
        TU_OK(bsrmv_generate_block_laplacian(&L, 8, 6, 5, 3, 5, (bsrmv_type)t, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_generate_reservoir(&R, 8, 6, 5, 3, 5, (bsrmv_type)t, BSRMV_ROW_MAJOR));
        solve_case(BSRMV_SOLVER_CG, L, 1, 0, "laplacian");
        solve_case(BSRMV_SOLVER_CG, L, 0, 1, "laplacian");
        solve_case(BSRMV_SOLVER_BICGSTAB, R, 1, 0, "reservoir");
        solve_case(BSRMV_SOLVER_BICGSTAB, R, 1, 1, "reservoir");
        solve_case(BSRMV_SOLVER_GMRES, R, 1, 0, "reservoir");
        solve_case(BSRMV_SOLVER_GMRES, L, 0, 1, "laplacian");
        bsrmv_matrix_destroy(L);
        bsrmv_matrix_destroy(R);
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ndev = 0, have, all;
    /* NCCL takes one rank per device: the ranks (all on this host) need as
     * many GPUs */
    have = bsrmv_gpu_device_count(&ndev) == BSRMV_SUCCESS && ndev >= size;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0)
            printf("skipped: %d ranks need a GPU each, this host has %d (%s)\n", size, ndev,
                   ndev > 0 ? "NCCL takes one rank per device" : bsrmv_last_error());
        MPI_Finalize();
        return 77;
    }
    int cases = 0;
    static const int bss[] = {1, 2, 3, 4, 5, 6, 8, 9, 16};
    for (size_t b = 0; b < sizeof bss / sizeof bss[0]; b++)
        for (int t = 0; t < 2; t++)
            for (int o = 0; o < 2; o++) {
                const tu_shape sh = {.mb = 300, .nb = 300, .bs = bss[b], .mean_len = 6,
                                     .empty_frac = 0.1, .long_row = 7, .long_len = 250};
                bsrmv_matrix *G = tu_random_bsr(&sh, (bsrmv_type)t, (bsrmv_order)o, 10 + b);
                char what[64];
                snprintf(what, sizeof what, "bs %d %s %s", bss[b], t ? "double" : "float",
                         o ? "row" : "col");
                check_gpu(what, G, (int)(b + t + o) % 2, 20 + b);
                bsrmv_matrix_destroy(G);
                cases++;
            }
    bsrmv_matrix *G;
    TU_OK(bsrmv_generate_powerlaw(&G, 4000, 4000, 4, 8, 1.7, 4000, 3, BSRMV_DOUBLE,
                                  BSRMV_COL_MAJOR));
    check_gpu("power-law bs 4", G, 0, 99);
    bsrmv_matrix_destroy(G);
    TU_OK(bsrmv_generate_grid(&G, 20, 20, 20, 3, 27, 4, BSRMV_FLOAT, BSRMV_ROW_MAJOR));
    check_gpu("grid27 bs 3", G, 0, 98);
    check_gpu("grid27 bs 3, all rows on the last rank", G, 2, 97);
    bsrmv_matrix_destroy(G);
    solver_cases();
    int refused = 0;
    refusal_cases(&refused);
    if (rank == 0)
        printf("test_mpi_gpu: %d ranks, %d matrices, each op N and T x 3 alpha/beta; %d "
               "distributed GPU solves against one GPU; %d refusals: passed\n",
               size, cases + 3, solves, refused);
    MPI_Finalize();
    return 0;
}
