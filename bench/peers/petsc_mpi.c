/* PETSc MPIBAIJ (MPIAIJ for bs = 1) MatMult on the benchmark matrix, run with
 * `mpirun -np P`: P ranks of one thread each stand for P threads.
 *
 * Every rank builds the same matrix through peer_case_init (so no
 * rank ever holds what another built), keeps its contiguous share of the
 * block rows (PETSc's default split: mb/P, the first mb%P ranks one more)
 * and hands them to MatMPIBAIJSetPreallocationCSR (values copied into
 * PETSc's storage).  Each timed call: MPI_Barrier, MatMult (including the
 * ghost-value scatter); the time of a call is the slowest rank's, the
 * report is the median over --reps calls.  rel_err is against bsrmv's y
 * (every rank runs bsrmv_spmv once on the whole matrix). */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <petscmat.h>
#include <stdlib.h>
#include <string.h>

#define PCHK(call)                                                                   \
    do {                                                                             \
        PetscErrorCode e_ = (call);                                                  \
        if (e_) {                                                                    \
            fprintf(stderr, "petsc_mpi: PETSc error %d in %s\n", (int)e_, #call);    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                            \
        }                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    struct peer_options o;
    peer_parse(argc, argv, &o);
    PCHK(PetscInitializeNoArguments());
    int rank, size;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    MPI_Comm_size(PETSC_COMM_WORLD, &size);

    double t0 = peer_now_ms();
    struct peer_case c;
    peer_case_init(&c, &o, 0);
    const int bs = c.bs;
    const int64_t mb = c.info.mb, bs2 = (int64_t)bs * bs;
    if (c.info.rows > (int64_t)PETSC_MAX_INT || c.info.nnzb > (int64_t)PETSC_MAX_INT) {
        fprintf(stderr, "petsc_mpi: matrix too large for 32-bit PetscInt\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int64_t lo = 0, m_loc = mb / size + (rank < mb % size);
    for (int r = 0; r < rank; r++)
        lo += mb / size + (r < mb % size);
    const int64_t k0 = c.row_ptr[lo], nk = c.row_ptr[lo + m_loc] - k0;

    PetscInt *ii, *jj;
    PCHK(PetscMalloc1(m_loc + 1, &ii));
    PCHK(PetscMalloc1(nk, &jj));
    for (int64_t i = 0; i <= m_loc; i++)
        ii[i] = (PetscInt)(c.row_ptr[lo + i] - k0);
    for (int64_t k = 0; k < nk; k++)
        jj[k] = (PetscInt)c.col_idx[k0 + k];

    Mat A;
    PCHK(MatCreate(PETSC_COMM_WORLD, &A));
    PCHK(MatSetSizes(A, (PetscInt)(m_loc * bs), (PetscInt)(m_loc * bs), (PetscInt)c.info.rows,
                     (PetscInt)c.info.cols));
    PCHK(MatSetType(A, bs == 1 ? MATMPIAIJ : MATMPIBAIJ));
    PCHK(MatSetBlockSize(A, bs));
    /* PETSc reads the CSR values row-oriented (its default; it stores
     * them column-major inside): hand it the blocks transposed. */
    PetscScalar *v;
    PCHK(PetscMalloc1(nk * bs2, &v));
    for (int64_t k = 0; k < nk; k++)
        for (int r = 0; r < bs; r++)
            for (int col = 0; col < bs; col++)
                v[k * bs2 + r * bs + col] = c.val[(k0 + k) * bs2 + r + col * bs];
    if (bs == 1)
        PCHK(MatMPIAIJSetPreallocationCSR(A, ii, jj, v));
    else
        PCHK(MatMPIBAIJSetPreallocationCSR(A, bs, ii, jj, v));
    PCHK(PetscFree(v));
    PCHK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PCHK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PCHK(PetscFree(ii));
    PCHK(PetscFree(jj));

    Vec x, y;
    PCHK(MatCreateVecs(A, &x, &y));
    PetscScalar *xv;
    PCHK(VecGetArray(x, &xv));
    memcpy(xv, c.x + lo * bs, (size_t)(m_loc * bs) * sizeof(double));
    PCHK(VecRestoreArray(x, &xv));
    /* The generator's matrix is no longer needed: only PETSc's copy runs. */
    double *y_ref = peer_alloc((size_t)(m_loc * bs) * sizeof(double));
    memcpy(y_ref, c.y_bsrmv + lo * bs, (size_t)(m_loc * bs) * sizeof(double));
    struct peer_case meta = c; /* sizes and name for the JSON line */
    meta.A = NULL;
    bsrmv_matrix_destroy(c.A);
    free(c.x);
    free(c.y_bsrmv);
    if (rank == 0)
        fprintf(stderr, "petsc_mpi: %s bs %d on %d ranks: set up in %.0f ms\n", c.matrix, bs,
                size, peer_now_ms() - t0);

    double *times = peer_alloc((size_t)o.reps * sizeof(double));
    double *tmax = peer_alloc((size_t)o.reps * sizeof(double));
    for (int round = 1; round <= o.rounds; round++) {
        struct peer_record r = {.backend = "petsc-mpibaij",
                                .kernel = bs == 1 ? "mpiaij" : "mpibaij",
                                .via = "mpirun",
                                .ref = "bsrmv",
                                .threads = size,
                                .round = round};
        for (int w = 0; w < PEER_WARMUP; w++) {
            PCHK(MatMult(A, x, y));
            if (w == 0) {
                const PetscScalar *yv;
                PCHK(VecGetArrayRead(y, &yv));
                double loc[2] = {0, 0}, glob[2];
                for (int64_t i = 0; i < m_loc * bs; i++) {
                    double d = yv[i] - y_ref[i];
                    loc[0] += d * d;
                    loc[1] += y_ref[i] * y_ref[i];
                }
                PCHK(VecRestoreArrayRead(y, &yv));
                MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
                r.rel_err = glob[1] > 0 ? sqrt(glob[0] / glob[1]) : sqrt(glob[0]);
            }
        }
        for (int i = 0; i < o.reps; i++) {
            MPI_Barrier(PETSC_COMM_WORLD);
            double s = peer_now_ms();
            PCHK(MatMult(A, x, y));
            times[i] = peer_now_ms() - s;
        }
        MPI_Reduce(times, tmax, o.reps, MPI_DOUBLE, MPI_MAX, 0, PETSC_COMM_WORLD);
        if (rank == 0) {
            r.time_ms = peer_median(tmax, o.reps);
            peer_emit(&meta, &r);
        }
    }
    free(times);
    free(tmax);
    free(y_ref);
    PCHK(VecDestroy(&x));
    PCHK(VecDestroy(&y));
    PCHK(MatDestroy(&A));
    PCHK(PetscFinalize());
    return 0;
}
