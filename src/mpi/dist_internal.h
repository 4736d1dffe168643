/* Internal view of a distributed matrix, shared by src/mpi/. */
#ifndef BSRMV_DIST_INTERNAL_H
#define BSRMV_DIST_INTERNAL_H

#include "bsrmv_mpi.h"

/* gpu.cu is C++: the library's internal C functions keep C linkage */
#ifdef __cplusplus
extern "C" {
#endif

#include "internal.h"

struct bsrmv_dist_matrix {
    MPI_Comm comm; /* a duplicate of the caller's: its tags cannot clash */
    int rank, size;
    int64_t mb_global, nb_global;
    int bs;
    bsrmv_type type;
    bsrmv_order order;
    MPI_Datatype mpi_type;
    int64_t row_begin, mb, col_begin, nb;
    bsrmv_matrix *local;   /* mb x nb, columns renumbered from col_begin   */
    /* Off-rank part, columns = ghost numbers.  Where few rows have
     * off-rank blocks (a grid's boundary planes), it holds only those rows
     * (offrank_rows: their local numbers) and its product goes through
     * row_buf, so it does not pass over all of y; else it has all mb rows
     * and offrank_rows is NULL. */
    bsrmv_matrix *offrank;
    int64_t *offrank_rows;
    void *row_buf;         /* offrank->mb*bs values                         */
    int64_t ghosts;
    int64_t *ghost_cols;   /* global block column of each ghost, sorted    */
    /* Halo plan of OP_N.  Ghosts are sorted by global column and the ranks'
     * column ranges follow rank order, so the ghosts one rank owns are one
     * run: they are received straight into ghost_buf, no unpack. */
    int nrecv, nsend;
    int *recv_rank, *send_rank;
    int64_t *recv_start;   /* [nrecv+1] ghost offsets per source            */
    int64_t *send_start;   /* [nsend+1] offsets into send_idx per target    */
    int32_t *send_idx;     /* local block column of each entry sent         */
    void *ghost_buf;       /* ghosts*bs values: x's ghosts, OP_T's partial sums */
    void *send_buf;        /* send_start[nsend]*bs values                   */
    /* Persistent requests.  Each data message has a status message beside
     * it: a rank whose arguments or off-rank product failed still takes
     * part in the exchange and tells the ranks that use its data, so none
     * waits forever and none uses wrong data unknowingly, without a
     * collective in every product.
     * OP_N: nrecv data and nrecv status receives (into ghost_buf and
     * peer_status), then nsend data and nsend status sends.
     * OP_T: nsend data and nsend status receives (into send_buf), then
     * nrecv data and nrecv status sends (from ghost_buf). */
    MPI_Request *req_n, *req_t;
    int my_status;         /* sent with every data message                  */
    int *peer_status;      /* received, one per source                      */
    /* Symmetric storage (sym 1; Hermitian 2): each rank holds the diagonal
     * and upper blocks of its rows, local in symmetric storage, and the
     * off-rank part's blocks lie right of the rank's columns.  A product
     * runs OP_N's exchange (req_n) and, at the same time, the transposed
     * partial sums' (req_s: OP_T's layout on buffers of its own: nsend data
     * and status receives into send_buf2 and peer_status2, then nrecv data
     * and status sends from ghost_buf2). */
    int sym;
    void *ghost_buf2, *send_buf2;
    MPI_Request *req_s;
    int *peer_status2;
    bsrmv_dist_timers tm;
};

/* The message tags on a matrix's communicator: the data of the three
 * exchanges of a product (+ DIST_TAG_STATUS: the status beside them), the
 * scatter's pieces and SpMM's two halos (ghosts in, partial sums back). */
enum {
    DIST_TAG_N = 0x6270,
    DIST_TAG_T = 0x6271,
    DIST_TAG_S = 0x6272,
    DIST_TAG_STATUS = 4,
    DIST_TAG_SCATTER = 0x6278,
    DIST_TAG_SPMM = 0x6279,
    DIST_TAG_SPMM_T = 0x627A
};

/* Collective: every rank learns the status of the lowest rank whose st is
 * not BSRMV_SUCCESS, and its message prefixed by "rank r: " (the same
 * status and message everywhere); BSRMV_SUCCESS when all succeeded. */
bsrmv_status bsrmv_dist_agree(MPI_Comm comm, bsrmv_status st);

/* bsrmv_dist_spmv_scalars after the argument checks, whose outcome st
 * this rank sends with its halo (not BSRMV_SUCCESS: x and y are not
 * touched, the exchange still runs); op must be N, T or (complex) C, alpha
 * and beta values of A's type.  _run: y = A x for the solvers' own
 * vectors. */
bsrmv_status bsrmv_dist_spmv_checked(bsrmv_op op, const void *alpha, bsrmv_dist_matrix *A,
                                     const void *x, const void *beta, void *y, bsrmv_status st);
bsrmv_status bsrmv_dist_spmv_run(bsrmv_dist_matrix *A, const void *x, void *y);

/* Y = A X for k column-major vectors whose spans may interleave (the
 * solvers' pooled vectors), k the same on every rank; collective. */
bsrmv_status bsrmv_dist_spmm_cols(bsrmv_dist_matrix *A, int k, const void *X, int64_t ldx,
                                  void *Y, int64_t ldy);

/* GPU ranks (gpu.cu): y = A x on the device, on `stream`, for the
 * solvers' own vectors (the arguments are valid, dA's device current). */
bsrmv_status bsrmv_dist_gpu_spmv_run(bsrmv_dist_gpu_matrix *dA, const void *d_x, void *d_y,
                                     void *stream);

/* The distributed solvers (solve.c).  _check: the checks that need the
 * other ranks (a square matrix whose column partition is its row
 * partition; a preconditioner on all ranks or none); collective, not
 * agreed.  _run: the method on `inner`, this rank's single-process
 * backend (made by the caller when st is BSRMV_SUCCESS, else st is why
 * not), with the distributed SpMV (the device one where dA is set, on
 * `stream`) and the reductions summed over the ranks; st is agreed on
 * first, and inner_free releases inner in every case.  Collective. */
struct sv_backend;
bsrmv_status bsrmv_dist_sv_check(bsrmv_dist_matrix *A, int has_p);
bsrmv_status bsrmv_dist_sv_run(bsrmv_solver method, bsrmv_dist_matrix *A,
                               bsrmv_dist_gpu_matrix *dA, void *stream, bsrmv_status st,
                               const struct sv_backend *inner,
                               void (*inner_free)(struct sv_backend *), const void *b, void *x,
                               const bsrmv_solve_options *opt, bsrmv_solve_report *report);

/* Symmetric storage (A->sym): A^T = A (symmetric; real values, where op C
 * has become op T, too), A^H = A (Hermitian); the other transpose of a
 * complex matrix is not built.  *op becomes OP_N; returns st, or where it
 * is BSRMV_SUCCESS and *op was that other transpose, BSRMV_ERR_UNSUPPORTED
 * (the message starts with `who`).  Not collective. */
bsrmv_status bsrmv_dist_sym_op(const bsrmv_dist_matrix *A, bsrmv_op *op, const char *who,
                               bsrmv_status st);

/* Collective: st, or where it is BSRMV_SUCCESS, BSRMV_ERR_ARGUMENT when the
 * ranks pass different k (which sizes the messages or batches the
 * products); not agreed on. */
bsrmv_status bsrmv_dist_same_k(MPI_Comm comm, int k, const char *who, bsrmv_status st);

/* Point-to-point transfer of a large byte array in pieces that fit an int
 * count (setup and scatter only). */
void bsrmv_dist_send_bytes(const void *buf, size_t bytes, int dest, int tag, MPI_Comm comm);
void bsrmv_dist_recv_bytes(void *buf, size_t bytes, int src, int tag, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif
