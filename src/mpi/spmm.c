/* Distributed SpMM: Y = alpha*A*X + beta*Y for k vectors, the local part
 * read once per 16 vectors (bsrmv_spmm) while the ghosts of all k vectors
 * arrive in one message per neighbour.  The ghosts travel interleaved (the
 * k values of a row together, row layout), whatever the caller's layout:
 * a neighbour's run of ghosts is then one contiguous message.  The
 * off-rank part multiplies them into a row-layout buffer that is added to
 * Y at its rows.  The argument checks and the buffers are agreed on first
 * (one small collective), so the exchange needs no status messages. */
#include "dist_internal.h"

#include <stdlib.h>

/* Entry (i, j) of a k-vector array in `layout` with leading dimension ld. */
static size_t at(bsrmv_layout layout, int64_t ld, int64_t i, int j)
{
    return layout == BSRMV_LAYOUT_COL ? (size_t)(i + (int64_t)j * ld) : (size_t)(i * ld + j);
}

#define DEFINE_SPMM_HALO(T, SUF)                                                          \
    /* buf[(s*bs + r)*k + j] = X(send_idx[s]*bs + r, j) */                               \
    static void pack_##SUF(const bsrmv_dist_matrix *A, int k, const void *Xv, int64_t ldx, \
                           bsrmv_layout layout, void *bufv)                              \
    {                                                                                    \
        const int64_t n = A->send_start[A->nsend];                                       \
        const int bs = A->bs;                                                            \
        const T *X = Xv;                                                                 \
        T *buf = bufv;                                                                   \
        _Pragma("omp parallel for if (n * bs * k > 16384)")                              \
        for (int64_t s = 0; s < n; s++)                                                  \
            for (int r = 0; r < bs; r++)                                                 \
                for (int j = 0; j < k; j++)                                              \
                    buf[(s * bs + r) * k + j] =                                          \
                        X[at(layout, ldx, (int64_t)A->send_idx[s] * bs + r, j)];         \
    }                                                                                    \
    /* Y at the off-rank part's rows += t (row layout, k wide) */                        \
    static void add_rows_##SUF(const bsrmv_dist_matrix *A, int k, const void *tv,       \
                               void *Yv, int64_t ldy, bsrmv_layout layout)               \
    {                                                                                    \
        const int64_t n = A->offrank->mb;                                                \
        const int bs = A->bs;                                                            \
        const T *t = tv;                                                                 \
        T *Y = Yv;                                                                       \
        _Pragma("omp parallel for if (n * bs * k > 16384)")                              \
        for (int64_t i = 0; i < n; i++) {                                                \
            const int64_t row = A->offrank_rows ? A->offrank_rows[i] : i;                \
            for (int r = 0; r < bs; r++)                                                 \
                for (int j = 0; j < k; j++)                                              \
                    Y[at(layout, ldy, row * bs + r, j)] += t[(i * bs + r) * k + j];      \
        }                                                                                \
    }
DEFINE_SPMM_HALO(float, s)
DEFINE_SPMM_HALO(double, d)

/* Y = alpha*A*X + beta*Y after the checks, whose outcome st is agreed on
 * here with the buffers'; interleave: X's and Y's spans may interleave
 * (the solvers' pooled vectors; then alpha 1, beta 0, column layout, and
 * the local part through bsrmv_spmm_cols). */
static bsrmv_status spmm_core(bsrmv_dist_matrix *A, double alpha, int k, const void *X,
                              int64_t ldx, double beta, void *Y, int64_t ldy,
                              bsrmv_layout layout, bsrmv_status st, int interleave)
{
    const size_t vs = bsrmv_type_size(A->type);
    const int exchange = alpha != 0 && A->ghosts + A->send_start[A->nsend] > 0;
    const int64_t nsend = A->send_start[A->nsend], orows = A->offrank->mb * A->bs;
    void *sbuf = NULL, *gbuf = NULL, *t = NULL;
    MPI_Request *req = NULL;
    const int nreq = A->nrecv + A->nsend;
    if (!st && exchange) {
        sbuf = bsrmv_big_alloc((size_t)(nsend * A->bs * k) * vs + 1);
        gbuf = bsrmv_big_alloc((size_t)(A->ghosts * A->bs * k) * vs + 1);
        t = bsrmv_big_alloc((size_t)(orows * k) * vs + 1);
        req = malloc((size_t)(nreq + 1) * sizeof *req);
        if (!sbuf || !gbuf || !t || !req)
            st = bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_dist_spmm: out of memory for the halo of "
                                             "%d vectors",
                            k);
    }
    st = bsrmv_dist_agree(A->comm, st);
    if (!st) {
        if (exchange) {
            const size_t row = (size_t)A->bs * (size_t)k * vs; /* one ghost's k vectors */
            for (int i = 0; i < A->nrecv; i++) {
                const int64_t a = A->recv_start[i], n = A->recv_start[i + 1] - a;
                MPI_Irecv((char *)gbuf + (size_t)a * row, (int)(n * A->bs * k), A->mpi_type,
                          A->recv_rank[i], DIST_TAG_SPMM, A->comm, &req[i]);
            }
            if (A->type == BSRMV_DOUBLE)
                pack_d(A, k, X, ldx, layout, sbuf);
            else
                pack_s(A, k, X, ldx, layout, sbuf);
            for (int j = 0; j < A->nsend; j++) {
                const int64_t a = A->send_start[j], n = A->send_start[j + 1] - a;
                MPI_Isend((char *)sbuf + (size_t)a * row, (int)(n * A->bs * k), A->mpi_type,
                          A->send_rank[j], DIST_TAG_SPMM, A->comm, &req[A->nrecv + j]);
            }
        }
        st = interleave ? bsrmv_spmm_cols(A->local, k, X, ldx, Y, ldy)
                        : bsrmv_spmm(BSRMV_OP_N, alpha, A->local, k, X, ldx, beta, Y, ldy, layout);
        if (exchange) {
            MPI_Waitall(A->nrecv, req, MPI_STATUSES_IGNORE);
            if (!st && A->offrank->nnzb > 0) {
                st = bsrmv_spmm(BSRMV_OP_N, alpha, A->offrank, k, gbuf, k, 0.0, t, k,
                                BSRMV_LAYOUT_ROW);
                if (!st) {
                    if (A->type == BSRMV_DOUBLE)
                        add_rows_d(A, k, t, Y, ldy, layout);
                    else
                        add_rows_s(A, k, t, Y, ldy, layout);
                }
            }
            MPI_Waitall(A->nsend, req + A->nrecv, MPI_STATUSES_IGNORE);
        }
    }
    bsrmv_big_free(sbuf);
    bsrmv_big_free(gbuf);
    bsrmv_big_free(t);
    free(req);
    return st;
}

bsrmv_status bsrmv_dist_spmm(bsrmv_op op, double alpha, bsrmv_dist_matrix *A, int k,
                             const void *X, int64_t ldx, double beta, void *Y, int64_t ldy,
                             bsrmv_layout layout)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmm: NULL matrix");
    const int64_t rows = A->mb * A->bs, cols = A->nb * A->bs;
    if (op == BSRMV_OP_C) /* real values: the conjugate transpose is the transpose */
        op = BSRMV_OP_T;
    bsrmv_status st = op == BSRMV_OP_T
                          ? bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "bsrmv_dist_spmm: OP_N only")
                          : bsrmv_refuse_complex(A->type, "bsrmv_dist_spmm");
    if (!st && A->sym)
        st = bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                        "bsrmv_dist_spmm: full storage only (this matrix is symmetric)");
    int64_t nx = 0, ny = 0;
    if (!st)
        st = bsrmv_spmm_check("bsrmv_dist_spmm", op, rows, cols, A->type, alpha, k, X, ldx, Y,
                              ldy, layout, &nx, &ny);
    st = bsrmv_dist_same_k(A->comm, k, "bsrmv_dist_spmm", st);
    return spmm_core(A, alpha, k, X, ldx, beta, Y, ldy, layout, st, 0);
}

bsrmv_status bsrmv_dist_spmm_cols(bsrmv_dist_matrix *A, int k, const void *X, int64_t ldx,
                                  void *Y, int64_t ldy)
{
    return spmm_core(A, 1.0, k, X, ldx, 0.0, Y, ldy, BSRMV_LAYOUT_COL, BSRMV_SUCCESS, 1);
}
