/*
 * bsrmv_mpi: distributed BSR matrices over MPI (library bsrmv_mpi, built
 * when MPI is found; link bsrmv::bsrmv_mpi).  The core header bsrmv.h never
 * includes mpi.h; this one does.
 *
 * Layout (PETSc MPIBAIJ / hypre IJ style)
 *  - The global matrix has mb_global x nb_global blocks of bs x bs.  Rank r
 *    of the communicator owns a contiguous range of block rows, and the
 *    ranges follow rank order: rank 0 the first, rank 1 the next, ...  A rank
 *    may own none.  Column indices are global (64-bit).
 *  - Vectors follow the same partition: rank r holds the entries of y for
 *    its block rows (mb*bs values) and the entries of x for its range of block
 *    columns (nb*bs values).  For a square matrix the column range is usually
 *    the row range; any contiguous ranges in rank order that tile
 *    [0, nb_global) are accepted.  For the transpose the roles swap.
 *  - Setup splits each rank's rows into a local part (the columns it owns,
 *    renumbered from 0) and an off-rank part whose columns are the distinct
 *    off-rank columns it touches ("ghosts"), compacted; both are ordinary
 *    bsrmv matrices, so the OpenMP kernels of bsrmv_spmv do the products.  The
 *    halo plan (neighbours, send lists) is made once.
 *  - Values of every bsrmv_type: real and complex (C11 _Complex; MPI sends
 *    them as MPI_C_FLOAT_COMPLEX / MPI_C_DOUBLE_COMPLEX) on host ranks;
 *    GPU ranks take real types in full storage (else BSRMV_ERR_UNSUPPORTED).
 *  - Symmetric (and Hermitian) storage, as in bsrmv.h, on host ranks: each
 *    rank holds the diagonal and upper blocks of its rows
 *    (bsrmv_dist_matrix_create_sym, or the scatter of a matrix in that
 *    storage), about half the bytes per product.
 *
 * Collectives and errors
 *  - Every function here that takes a bsrmv_dist_matrix or an MPI_Comm is
 *    collective: all ranks of the communicator call it, with the same scalar
 *    arguments (op, alpha, beta, method, options).
 *  - Creation checks each rank's input and the ranks against each other
 *    (same sizes, bs, type and order; row and column ranges that tile the
 *    matrix; columns in range) and agrees on the outcome before any
 *    point-to-point message: on bad input every rank returns the same
 *    status and the same message, which names the first rank that found a
 *    problem ("rank 2: ...").  Nothing hangs on bad input.
 *  - A handle is not thread-safe (it owns the exchange buffers); the MPI
 *    library must be initialised (MPI_THREAD_FUNNELED or more when OpenMP
 *    threads run beside it; only the calling thread makes MPI calls).
 */
#ifndef BSRMV_MPI_H
#define BSRMV_MPI_H

#include <mpi.h>

#include "bsrmv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bsrmv_dist_matrix bsrmv_dist_matrix;

/* Collective.  This rank owns block rows [row_begin, row_begin + mb) and
 * block columns [col_begin, col_begin + nb) of x; its rows come as BSR
 * arrays: row_ptr[mb + 1] (row_ptr[0] == 0), col_idx[nnzb] global block
 * columns in [0, nb_global), strictly increasing within a row, val as for
 * bsrmv_matrix_create.  The arrays are copied (the caller may free them).
 * Errors (the same on every rank): BSRMV_ERR_ARGUMENT (NULL pointers, sizes,
 * or ranks that disagree on mb_global, nb_global, bs, type or order),
 * BSRMV_ERR_STRUCTURE (row or column ranges that overlap, leave a gap or are
 * out of rank order; bad row_ptr; a column out of range or out of order),
 * BSRMV_ERR_OVERFLOW (a rank's part exceeds the 32-bit local indices or an
 * MPI count), BSRMV_ERR_NOMEM. */
bsrmv_status bsrmv_dist_matrix_create(bsrmv_dist_matrix **A, MPI_Comm comm, int64_t mb_global,
                                      int64_t nb_global, int bs, int64_t row_begin, int64_t mb,
                                      int64_t col_begin, int64_t nb, int64_t nnzb,
                                      const int64_t *row_ptr, const int64_t *col_idx,
                                      const void *val, bsrmv_type type, bsrmv_order order);

/* Collective.  Symmetric storage (kind BSRMV_SYM_SYMMETRIC; or
 * BSRMV_SYM_HERMITIAN, which for real types is the same): the square
 * matrix of nb_global x nb_global blocks whose block (J, I) is block
 * (I, J) transposed (conjugate transposed).  This rank owns block rows
 * [row_begin, row_begin + mb) and the same block columns of x and y, and
 * passes the diagonal and upper blocks of its rows (global columns >= the
 * global row; the diagonal blocks whole, used as stored).  A product moves
 * about half the bytes of full storage: the local part multiplies in
 * symmetric storage, the off-rank blocks (right of the rank's columns)
 * once with the ghosts of x and once transposed, their partial sums going
 * to the columns' owners; both exchanges run behind the local product.
 * OP_T of symmetric and OP_C of Hermitian storage are OP_N; the other
 * conjugate op of complex values gives BSRMV_ERR_UNSUPPORTED.  The
 * solvers and block Jacobi take such a matrix; GPU ranks do not
 * (BSRMV_ERR_UNSUPPORTED).  Errors as for create, and BSRMV_ERR_STRUCTURE
 * for a block below the diagonal. */
bsrmv_status bsrmv_dist_matrix_create_sym(bsrmv_dist_matrix **A, MPI_Comm comm,
                                          int64_t nb_global, int bs, int64_t row_begin,
                                          int64_t mb, int64_t nnzb, const int64_t *row_ptr,
                                          const int64_t *col_idx, const void *val,
                                          bsrmv_type type, bsrmv_order order,
                                          bsrmv_symmetry kind);

/* Collective.  Distributes G (read on `root` only; ignored elsewhere) by
 * rows: row_starts[0..size] (on root; NULL elsewhere and for the default)
 * gives rank r the block rows [row_starts[r], row_starts[r+1]); NULL splits
 * the rows so that every rank gets about the same number of stored blocks
 * plus rows (bsrmv_dist_partition).  Columns: a square G uses the row
 * partition, a rectangular one splits the block columns evenly.  A G in
 * symmetric storage is distributed in that storage (as
 * bsrmv_dist_matrix_create_sym makes it).  Errors of create, plus those of
 * root's input. */
bsrmv_status bsrmv_dist_matrix_scatter(bsrmv_dist_matrix **A, MPI_Comm comm, int root,
                                       const bsrmv_matrix *G, const int64_t *row_starts);

/* Collective.  Reads a Matrix Market file on `root` (bsrmv_mm_read), builds
 * the BSR matrix there (bsrmv_matrix_from_coo with bs, how, type, order)
 * and distributes it as bsrmv_dist_matrix_scatter does.  A file that
 * cannot be read gives every rank root's status and message. */
bsrmv_status bsrmv_dist_matrix_read_mm(bsrmv_dist_matrix **A, MPI_Comm comm, int root,
                                       const char *path, int bs, bsrmv_blocking how,
                                       bsrmv_type type, bsrmv_order order,
                                       const int64_t *row_starts);
/* The same, but a "symmetric" or "hermitian" file keeps its one triangle:
 * read with bsrmv_mm_read_sym, built in symmetric (Hermitian) storage
 * without expanding it (root holds half the entries) and distributed in
 * that storage; other files as bsrmv_dist_matrix_read_mm reads them
 * (bsrmv_dist_matrix_get_info's `symmetric` says which). */
bsrmv_status bsrmv_dist_matrix_read_mm_sym(bsrmv_dist_matrix **A, MPI_Comm comm, int root,
                                           const char *path, int bs, bsrmv_blocking how,
                                           bsrmv_type type, bsrmv_order order,
                                           const int64_t *row_starts);

/* Row partition of a BSR row_ptr into nparts contiguous ranges balanced by
 * stored blocks plus rows (so empty rows count too): starts[0..nparts],
 * starts[0] = 0, starts[nparts] = mb.  Not collective. */
bsrmv_status bsrmv_dist_partition(const int64_t *row_ptr, int64_t mb, int nparts,
                                  int64_t *starts);

void bsrmv_dist_matrix_destroy(bsrmv_dist_matrix *A); /* collective: frees MPI requests */

typedef struct bsrmv_dist_info {
    int rank, size;
    int64_t mb_global, nb_global;
    int bs;
    bsrmv_type type;
    bsrmv_order order;
    int64_t row_begin, mb;        /* this rank's block rows (y for OP_N)       */
    int64_t col_begin, nb;        /* this rank's block columns (x for OP_N)    */
    int64_t nnzb_local;           /* blocks in owned columns                   */
    int64_t nnzb_offrank;         /* blocks in other ranks' columns            */
    int64_t ghosts;               /* distinct off-rank block columns touched   */
    int recv_neighbors;           /* ranks this one receives x entries from    */
    int send_neighbors;           /* ranks this one sends x entries to         */
    int64_t send_blocks;          /* block-column entries of x sent per SpMV   */
    double halo_send_bytes;       /* bytes this rank sends per SpMV (OP_N;     */
    double halo_recv_bytes;       /* the transpose swaps send and receive;
                                   * symmetric storage: both directions)     */
    int symmetric;                /* a bsrmv_symmetry: the storage; the block
                                   * counts are of the stored blocks         */
} bsrmv_dist_info;

bsrmv_status bsrmv_dist_matrix_get_info(const bsrmv_dist_matrix *A, bsrmv_dist_info *info);

/* The parts (owned by A; valid until it is destroyed), for uploading them
 * elsewhere or timing them alone: local (mb x nb, columns from col_begin);
 * offrank (columns = ghost numbers; ghost_cols[ghosts] their global block
 * columns, increasing); its rows are this rank's mb rows, or, where fewer
 * than half of them have off-rank blocks, only those rows, whose local
 * numbers offrank_rows lists (else *offrank_rows = NULL).  Any output may
 * be NULL. */
bsrmv_status bsrmv_dist_matrix_parts(const bsrmv_dist_matrix *A, const bsrmv_matrix **local,
                                     const bsrmv_matrix **offrank, const int64_t **offrank_rows,
                                     const int64_t **ghost_cols);

/* Collective.  y = alpha*op(A)*x + beta*y with this rank's parts of x and y
 * (nx, ny: their lengths, checked against the layout).  OP_N: the halo
 * exchange of x (persistent MPI requests) runs while the local part
 * multiplies, then the off-rank part adds its product.  OP_T: the off-rank
 * part's partial sums go back to the owners of those columns and are added
 * there, while the local part multiplies.  beta == 0 does not read y;
 * alpha == 0 exchanges nothing.  No collective: a rank whose arguments
 * are wrong (or whose OP_T partial sums could not be made) still takes
 * part in the exchange, returns its error, and sends its status with its
 * halo, so every rank that needs its data fails too (BSRMV_ERR_... of that
 * rank, the message naming it); ranks that do not need it are unaffected.
 * x and y in A's type; OP_C is A^H (for a real A, OP_T); alpha and beta
 * real here, complex through bsrmv_dist_spmv_scalars.
 * Errors: BSRMV_ERR_DIMENSION, BSRMV_ERR_ARGUMENT, BSRMV_ERR_NOMEM. */
bsrmv_status bsrmv_dist_spmv(bsrmv_op op, double alpha, bsrmv_dist_matrix *A, const void *x,
                             int64_t nx, double beta, void *y, int64_t ny);
/* The same with alpha and beta pointing to values of A's type (float,
 * double, float _Complex or double _Complex), as bsrmv_spmv_scalars takes
 * them; NULL: BSRMV_ERR_ARGUMENT on that rank, as for a bad vector. */
bsrmv_status bsrmv_dist_spmv_scalars(bsrmv_op op, const void *alpha, bsrmv_dist_matrix *A,
                                     const void *x, int64_t nx, const void *beta, void *y,
                                     int64_t ny);

/* Collective.  Y = alpha*op(A)*X + beta*Y for k vectors with this rank's
 * part of X and Y (op N: X on its columns, Y on its rows; op T the other
 * way), in bsrmv_spmm's layouts and leading dimensions: the local part is
 * read once per 16 vectors while the halo of all k vectors travels in one
 * message per neighbour (op N: the ghosts of X in; op T: the ghosts'
 * partial sums out to the ranks that own them; symmetric storage: both,
 * and op T is op N).  k and op must be the same on every rank.  The
 * argument checks are agreed on by every rank before the exchange and the
 * outcome after it (two small collectives per call), so a bad argument on
 * one rank fails all with its message.  Every value type: complex ones
 * take OP_C (A^H); in complex symmetric storage OP_T and in Hermitian
 * storage OP_C are OP_N, and the other transpose is BSRMV_ERR_UNSUPPORTED,
 * as for bsrmv_dist_spmv.  Errors as for bsrmv_spmm. */
bsrmv_status bsrmv_dist_spmm(bsrmv_op op, double alpha, bsrmv_dist_matrix *A, int k,
                             const void *X, int64_t ldx, double beta, void *Y, int64_t ldy,
                             bsrmv_layout layout);

/* bsrmv_dist_spmm with alpha and beta given as pointers to one value each
 * of A's type, as bsrmv_dist_spmv_scalars takes them (complex scalars);
 * NULL: BSRMV_ERR_ARGUMENT on that rank, agreed on by all. */
bsrmv_status bsrmv_dist_spmm_scalars(bsrmv_op op, const void *alpha, bsrmv_dist_matrix *A,
                                     int k, const void *X, int64_t ldx, const void *beta,
                                     void *Y, int64_t ldy, bsrmv_layout layout);

/* Time spent inside bsrmv_dist_spmv by this rank, summed over calls since
 * the handle was made or reset.  post: pack the send buffer and start the
 * exchange; local: the local product; wait: waiting for the exchange after
 * the local product (the exchange time that was not hidden); offrank: the
 * off-rank product (OP_T: before the exchange) and the unpack. */
typedef struct bsrmv_dist_timers {
    int64_t calls;
    double post, local, wait, offrank, total;
} bsrmv_dist_timers;
bsrmv_status bsrmv_dist_matrix_timers(bsrmv_dist_matrix *A, bsrmv_dist_timers *t, int reset);

/* Collective.  Only the forward halo exchange of x (pack, send, receive,
 * wait), nothing multiplied: for benchmarks, the exchange time alone.
 * Errors as for bsrmv_dist_spmv. */
bsrmv_status bsrmv_dist_halo_exchange(bsrmv_dist_matrix *A, const void *x, int64_t nx);

/* ------------------------------------------------------------------ */
/* Distributed solvers: the single-process methods (bsrmv_solve) with  */
/* the distributed SpMV and every dot product summed over the ranks    */
/* (MPI_Allreduce).  A must be square with the same row and column     */
/* partition.                                                          */
/* ------------------------------------------------------------------ */

/* Collective.  Block Jacobi on each rank's diagonal blocks: an ordinary
 * host preconditioner for this rank's rows (bsrmv_precond_apply works on
 * it).  A missing or singular diagonal block on any rank gives every rank
 * BSRMV_ERR_SINGULAR naming the rank and its block row. */
bsrmv_status bsrmv_dist_precond_block_jacobi(bsrmv_precond **P, const bsrmv_dist_matrix *A);

/* Collective.  Solves A x = b; b and x are this rank's parts (n = mb*bs).
 * P (from bsrmv_dist_precond_block_jacobi) may be NULL on all ranks.
 * Every rank makes the same decisions (the reductions are the same
 * everywhere) and gets the same report; report->bytes sums the ranks'
 * traffic.  Complex A: as bsrmv_solve (dots x^H y, CG for Hermitian
 * positive definite A).  Errors as for bsrmv_solve. */
bsrmv_status bsrmv_dist_solve(bsrmv_solver method, bsrmv_dist_matrix *A, const bsrmv_precond *P,
                              const void *b, void *x, int64_t n, const bsrmv_solve_options *opt,
                              bsrmv_solve_report *report);

/* Collective.  bsrmv_solve_multi across ranks: the k columns of B
 * (this rank's n = mb*bs rows, leading dimension ldb) into X, each column
 * its own recurrence; the products of the unfinished columns are batched
 * into bsrmv_dist_spmm (every type, either storage; column by column on
 * GPU ranks).  k must be the same on every rank; a
 * rank without rows takes part with n = 0 (ldb, ldx >= 1).  Every rank
 * gets the same k reports (reports may be NULL).  Errors as for bsrmv_solve_multi and
 * bsrmv_dist_solve. */
bsrmv_status bsrmv_dist_solve_multi(bsrmv_solver method, bsrmv_dist_matrix *A,
                                    const bsrmv_precond *P, int64_t n, int k, const void *B,
                                    int64_t ldb, void *X, int64_t ldx,
                                    const bsrmv_solve_options *opt, bsrmv_solve_report *reports);

/* ------------------------------------------------------------------ */
/* GPU ranks: one device per rank, the halo between devices through    */
/* NCCL (grouped ncclSend/ncclRecv), the communicator bootstrapped     */
/* through the matrix's MPI communicator.  Declared in every build;    */
/* without CUDA and NCCL the functions return BSRMV_ERR_NO_DEVICE.     */
/* ------------------------------------------------------------------ */

typedef struct bsrmv_dist_gpu_matrix bsrmv_dist_gpu_matrix;

/* Collective.  Uploads this rank's local and off-rank parts and the send
 * list to `device` and makes the NCCL communicator (one per handle).  A
 * must outlive the handle (its halo plan is used).  Errors, agreed on by
 * every rank: the device ones of bsrmv_gpu_matrix_upload, BSRMV_ERR_DEVICE
 * for an NCCL failure, BSRMV_ERR_UNSUPPORTED for a complex A or one in
 * symmetric storage. */
bsrmv_status bsrmv_dist_gpu_matrix_upload(bsrmv_dist_gpu_matrix **dA, bsrmv_dist_matrix *A,
                                          int device);
void bsrmv_dist_gpu_matrix_destroy(bsrmv_dist_gpu_matrix *dA);

/* The device parts (owned by dA; as bsrmv_dist_matrix_parts describes
 * them, offrank_rows in device memory; offrank NULL when the rank has no
 * off-rank blocks), for benchmarks that time them alone.  Any output may
 * be NULL. */
bsrmv_status bsrmv_dist_gpu_matrix_parts(const bsrmv_dist_gpu_matrix *dA,
                                         bsrmv_gpu_matrix **local, bsrmv_gpu_matrix **offrank,
                                         const int64_t **d_offrank_rows);

/* Collective.  bsrmv_dist_spmv with x and y in device memory of dA's
 * device, enqueued on `stream` (a cudaStream_t; NULL = the legacy default
 * stream), asynchronous: the exchange runs on the handle's own
 * high-priority stream, the local product on `stream`, the off-rank
 * product after both.  No host copies.  Sets the calling thread's device. */
bsrmv_status bsrmv_dist_gpu_spmv(bsrmv_op op, double alpha, bsrmv_dist_gpu_matrix *dA,
                                 const void *d_x, int64_t nx, double beta, void *d_y, int64_t ny,
                                 void *stream);

/* Collective.  The forward exchange alone, ordered after `stream`'s work
 * and before its later work (benchmarks). */
bsrmv_status bsrmv_dist_gpu_halo_exchange(bsrmv_dist_gpu_matrix *dA, const void *d_x, int64_t nx,
                                          void *stream);

/* Waits until all work on dA's device is done. */
bsrmv_status bsrmv_dist_gpu_sync(bsrmv_dist_gpu_matrix *dA);

/* Collective.  bsrmv_dist_precond_block_jacobi, uploaded to dA's device
 * (free it with bsrmv_gpu_precond_destroy).  Errors as for that function
 * and bsrmv_gpu_precond_upload, agreed on by every rank. */
bsrmv_status bsrmv_dist_gpu_precond_block_jacobi(bsrmv_gpu_precond **dP,
                                                 const bsrmv_dist_gpu_matrix *dA);

/* Collective.  bsrmv_dist_solve on GPU ranks: the methods of
 * bsrmv_gpu_solve (the same fused device kernels, the same decisions) with
 * d_b and d_x this rank's parts in device memory of dA's device (n =
 * mb*bs), the SpMV through bsrmv_dist_gpu_spmv, dP (from
 * bsrmv_dist_gpu_precond_block_jacobi) NULL on all ranks or none.  The
 * vector work is enqueued on `stream` (a cudaStream_t; NULL = the legacy
 * default stream); each reduction's few sums come to the host (one copy
 * and one stream sync, as on one GPU) and are summed over the ranks with
 * MPI_Allreduce, so the call returns with the work done.  Every rank gets
 * the same report; report->bytes sums the ranks' traffic, seconds is the
 * slowest rank's.  Sets the calling thread's device.  Errors as for
 * bsrmv_gpu_solve and bsrmv_dist_solve; the argument errors are agreed on
 * by every rank. */
bsrmv_status bsrmv_dist_gpu_solve(bsrmv_solver method, bsrmv_dist_gpu_matrix *dA,
                                  const bsrmv_gpu_precond *dP, const void *d_b, void *d_x,
                                  int64_t n, const bsrmv_solve_options *opt,
                                  bsrmv_solve_report *report, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* BSRMV_MPI_H */
