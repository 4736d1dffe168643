/* Distributed SpMM: Y = alpha*op(A)*X + beta*Y for k vectors, the local
 * part read once per 16 vectors (bsrmv_spmm) while the halo of all k
 * vectors travels in one message per neighbour.  Halo values travel
 * interleaved (the k values of a row together, row layout), whatever the
 * caller's layout: a neighbour's run is then one contiguous message.
 * OP_N sends X's rows that other ranks use as ghosts and multiplies the
 * off-rank part by the ghosts that arrive; OP_T multiplies the off-rank
 * part's transpose by this rank's X, sends each ghost's partial sums to
 * the rank that owns its column and adds what arrives at its own columns;
 * symmetric storage (the off-rank blocks lie above the diagonal, their
 * mirrors on the owners' rows) runs both, the mirrors conjugated in
 * Hermitian storage.  Every value type; the scalars are values of it.
 * The argument checks and the
 * buffers are agreed on first (one small collective), so the exchanges
 * need no status messages, and the outcome after them (another): partial
 * sums sent by a rank whose product then failed are not used silently. */
#include "dist_internal.h"
#include "dist_scalar.h"

#include <complex.h>
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
    }                                                                                    \
    /* xo = X at the off-rank part's rows (row layout, k wide) */                     \
    static void gather_rows_##SUF(const bsrmv_dist_matrix *A, int k, const void *Xv,    \
                                  int64_t ldx, bsrmv_layout layout, void *xov)           \
    {                                                                                    \
        const int64_t n = A->offrank->mb;                                                \
        const int bs = A->bs;                                                            \
        const T *X = Xv;                                                                 \
        T *xo = xov;                                                                     \
        _Pragma("omp parallel for if (n * bs * k > 16384)")                              \
        for (int64_t i = 0; i < n; i++) {                                                \
            const int64_t row = A->offrank_rows ? A->offrank_rows[i] : i;                \
            for (int r = 0; r < bs; r++)                                                 \
                for (int j = 0; j < k; j++)                                              \
                    xo[(i * bs + r) * k + j] = X[at(layout, ldx, row * bs + r, j)];      \
        }                                                                                \
    }                                                                                    \
    /* Y at the sent columns += the partial sums that came back for them, in            \
     * order: a column sent to several ranks gets several (no parallel loop) */          \
    static void add_sent_##SUF(const bsrmv_dist_matrix *A, int k, const void *rbv,      \
                               void *Yv, int64_t ldy, bsrmv_layout layout)               \
    {                                                                                    \
        const int64_t n = A->send_start[A->nsend];                                       \
        const int bs = A->bs;                                                            \
        const T *rb = rbv;                                                               \
        T *Y = Yv;                                                                       \
        for (int64_t s = 0; s < n; s++)                                                  \
            for (int r = 0; r < bs; r++)                                                 \
                for (int j = 0; j < k; j++)                                              \
                    Y[at(layout, ldy, (int64_t)A->send_idx[s] * bs + r, j)] +=           \
                        rb[(s * bs + r) * k + j];                                        \
    }
DEFINE_SPMM_HALO(float, s)
DEFINE_SPMM_HALO(double, d)
DEFINE_SPMM_HALO(float _Complex, c)
DEFINE_SPMM_HALO(double _Complex, z)

/* The halo's moves for each value type (indexed by bsrmv_type). */
typedef struct spmm_halo {
    void (*pack)(const bsrmv_dist_matrix *, int, const void *, int64_t, bsrmv_layout, void *);
    void (*add_rows)(const bsrmv_dist_matrix *, int, const void *, void *, int64_t, bsrmv_layout);
    void (*gather_rows)(const bsrmv_dist_matrix *, int, const void *, int64_t, bsrmv_layout,
                        void *);
    void (*add_sent)(const bsrmv_dist_matrix *, int, const void *, void *, int64_t, bsrmv_layout);
} spmm_halo;
static const spmm_halo halo_mm[4] = {
    [BSRMV_FLOAT] = {pack_s, add_rows_s, gather_rows_s, add_sent_s},
    [BSRMV_DOUBLE] = {pack_d, add_rows_d, gather_rows_d, add_sent_d},
    [BSRMV_COMPLEX_FLOAT] = {pack_c, add_rows_c, gather_rows_c, add_sent_c},
    [BSRMV_COMPLEX_DOUBLE] = {pack_z, add_rows_z, gather_rows_z, add_sent_z},
};

/* Y = alpha*op(A)*X + beta*Y after the checks (op N, T or C; symmetric
 * storage op N), alpha and beta values of A's type, whose outcome st is
 * agreed on here with the buffers'; interleave: X's and Y's spans may
 * interleave (the solvers' pooled vectors; then op N, alpha 1, beta 0,
 * column layout, and the local part through bsrmv_spmm_cols). */
static bsrmv_status spmm_core(bsrmv_dist_matrix *A, bsrmv_op op, const void *alpha, int k,
                              const void *X, int64_t ldx, const void *beta, void *Y, int64_t ldy,
                              bsrmv_layout layout, bsrmv_status st, int interleave)
{
    const size_t vs = bsrmv_type_size(A->type);
    const int64_t nsend = A->send_start[A->nsend], orows = A->offrank->mb * A->bs;
    const int any = !dist_scalar_is_zero(A->type, alpha) && A->ghosts + nsend > 0;
    /* fwd: ghosts of X come in (op N, symmetric storage); back: partial
     * sums of the ghosts go out to their owners (op T or C, symmetric
     * storage: the mirrors, conjugated in Hermitian storage) */
    const int fwd = any && (op == BSRMV_OP_N || A->sym), back = any && (op != BSRMV_OP_N || A->sym);
    const bsrmv_op bop = A->sym ? (A->sym == 2 ? BSRMV_OP_C : BSRMV_OP_T) : op;
    const spmm_halo *h = &halo_mm[A->type];
    const dist_scalar zero = dist_scalar_of(A->type, 0);
    const size_t row = (size_t)A->bs * (size_t)k * vs; /* one ghost's k vectors */
    void *sbuf = NULL, *gbuf = NULL, *t = NULL, *xo = NULL, *tg = NULL, *rb = NULL;
    MPI_Request *req = NULL;
    const int nreq = A->nrecv + A->nsend;
    if (!st && any) {
        sbuf = fwd ? bsrmv_big_alloc((size_t)nsend * row + 1) : NULL;
        gbuf = fwd ? bsrmv_big_alloc((size_t)A->ghosts * row + 1) : NULL;
        t = fwd ? bsrmv_big_alloc((size_t)(orows * k) * vs + 1) : NULL;
        xo = back ? bsrmv_big_alloc((size_t)(orows * k) * vs + 1) : NULL;
        tg = back ? bsrmv_big_alloc((size_t)A->ghosts * row + 1) : NULL;
        rb = back ? bsrmv_big_alloc((size_t)nsend * row + 1) : NULL;
        req = malloc((size_t)(2 * nreq + 1) * sizeof *req);
        if ((fwd && (!sbuf || !gbuf || !t)) || (back && (!xo || !tg || !rb)) || !req)
            st = bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_dist_spmm: out of memory for the halo of "
                                             "%d vectors",
                            k);
    }
    st = bsrmv_dist_agree(A->comm, st);
    const int posted = !st && any;
    /* req: the forward receives, the backward receives, then the sends */
    MPI_Request *rf = req, *rbk = req ? req + A->nrecv : NULL, *snd = req ? req + nreq : NULL;
    int nsnd = 0;
    if (posted) {
        for (int i = 0; fwd && i < A->nrecv; i++) {
            const int64_t a = A->recv_start[i], n = A->recv_start[i + 1] - a;
            MPI_Irecv((char *)gbuf + (size_t)a * row, (int)(n * A->bs * k), A->mpi_type,
                      A->recv_rank[i], DIST_TAG_SPMM, A->comm, &rf[i]);
        }
        for (int j = 0; back && j < A->nsend; j++) {
            const int64_t a = A->send_start[j], n = A->send_start[j + 1] - a;
            MPI_Irecv((char *)rb + (size_t)a * row, (int)(n * A->bs * k), A->mpi_type,
                      A->send_rank[j], DIST_TAG_SPMM_T, A->comm, &rbk[j]);
        }
        if (fwd) {
            h->pack(A, k, X, ldx, layout, sbuf);
            for (int j = 0; j < A->nsend; j++) {
                const int64_t a = A->send_start[j], n = A->send_start[j + 1] - a;
                MPI_Isend((char *)sbuf + (size_t)a * row, (int)(n * A->bs * k), A->mpi_type,
                          A->send_rank[j], DIST_TAG_SPMM, A->comm, &snd[nsnd++]);
            }
        }
        if (back) { /* the ghosts' partial sums, alpha * op(offrank) X */
            h->gather_rows(A, k, X, ldx, layout, xo);
            st = bsrmv_spmm_scalars(bop, alpha, A->offrank, k, xo, k, &zero, tg, k,
                                    BSRMV_LAYOUT_ROW);
            for (int i = 0; i < A->nrecv; i++) {
                const int64_t a = A->recv_start[i], n = A->recv_start[i + 1] - a;
                MPI_Isend((char *)tg + (size_t)a * row, (int)(n * A->bs * k), A->mpi_type,
                          A->recv_rank[i], DIST_TAG_SPMM_T, A->comm, &snd[nsnd++]);
            }
        }
    }
    if (!st) {
        st = interleave ? bsrmv_spmm_cols(A->local, k, X, ldx, Y, ldy)
                        : bsrmv_spmm_scalars(op, alpha, A->local, k, X, ldx, beta, Y, ldy, layout);
    }
    if (posted) {
        if (fwd) {
            MPI_Waitall(A->nrecv, rf, MPI_STATUSES_IGNORE);
            if (!st && A->offrank->nnzb > 0) {
                st = bsrmv_spmm_scalars(BSRMV_OP_N, alpha, A->offrank, k, gbuf, k, &zero, t, k,
                                        BSRMV_LAYOUT_ROW);
                if (!st)
                    h->add_rows(A, k, t, Y, ldy, layout);
            }
        }
        if (back) {
            MPI_Waitall(A->nsend, rbk, MPI_STATUSES_IGNORE);
            if (!st)
                h->add_sent(A, k, rb, Y, ldy, layout);
        }
        MPI_Waitall(nsnd, snd, MPI_STATUSES_IGNORE);
    }
    /* a rank whose product failed once the exchange had begun (out of
     * memory in bsrmv_spmm) may have sent partial sums of nothing to the
     * others: every rank learns it */
    st = bsrmv_dist_agree(A->comm, st);
    bsrmv_big_free(sbuf);
    bsrmv_big_free(gbuf);
    bsrmv_big_free(t);
    bsrmv_big_free(xo);
    bsrmv_big_free(tg);
    bsrmv_big_free(rb);
    free(req);
    return st;
}

bsrmv_status bsrmv_dist_spmm_scalars(bsrmv_op op, const void *alpha, bsrmv_dist_matrix *A,
                                     int k, const void *X, int64_t ldx, const void *beta,
                                     void *Y, int64_t ldy, bsrmv_layout layout)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmm: NULL matrix");
    const int64_t rows = A->mb * A->bs, cols = A->nb * A->bs;
    if (op == BSRMV_OP_C && !bsrmv_type_is_complex(A->type)) /* real: A^H = A^T */
        op = BSRMV_OP_T;
    /* a rank with bad arguments still takes part in the agreements (a
     * missing alpha as a non-zero one, an unknown op as op N) */
    const dist_scalar one = dist_scalar_of(A->type, 1);
    bsrmv_status st = !alpha || !beta ? bsrmv_fail(BSRMV_ERR_ARGUMENT,
                                                   "bsrmv_dist_spmm: NULL %s", !alpha ? "alpha" : "beta")
                                      : BSRMV_SUCCESS;
    if (!alpha)
        alpha = &one;
    if (!beta)
        beta = &one;
    int64_t nx = 0, ny = 0;
    if (!st)
        st = bsrmv_spmm_check("bsrmv_dist_spmm", op, rows, cols, A->type,
                              dist_scalar_is_zero(A->type, alpha), k, X, ldx, Y, ldy, layout, &nx,
                              &ny);
    if (A->sym)
        st = bsrmv_dist_sym_op(A, &op, "bsrmv_dist_spmm", st);
    if (op != BSRMV_OP_T && op != BSRMV_OP_C)
        op = BSRMV_OP_N;
    st = bsrmv_dist_same_k(A->comm, k, "bsrmv_dist_spmm", st);
    /* the ranks' exchanges follow op: they must agree on it */
    int ops[2] = {(int)op, -(int)op}, lo[2];
    MPI_Allreduce(ops, lo, 2, MPI_INT, MPI_MIN, A->comm);
    if (!st && lo[0] != -lo[1])
        st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmm: the ranks disagree on op");
    return spmm_core(A, op, alpha, k, X, ldx, beta, Y, ldy, layout, st, 0);
}

bsrmv_status bsrmv_dist_spmm(bsrmv_op op, double alpha, bsrmv_dist_matrix *A, int k,
                             const void *X, int64_t ldx, double beta, void *Y, int64_t ldy,
                             bsrmv_layout layout)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmm: NULL matrix");
    const dist_scalar a = dist_scalar_of(A->type, alpha), b = dist_scalar_of(A->type, beta);
    return bsrmv_dist_spmm_scalars(op, &a, A, k, X, ldx, &b, Y, ldy, layout);
}

bsrmv_status bsrmv_dist_spmm_cols(bsrmv_dist_matrix *A, int k, const void *X, int64_t ldx,
                                  void *Y, int64_t ldy)
{
    const dist_scalar one = dist_scalar_of(A->type, 1), zero = dist_scalar_of(A->type, 0);
    return spmm_core(A, BSRMV_OP_N, &one, k, X, ldx, &zero, Y, ldy, BSRMV_LAYOUT_COL,
                     BSRMV_SUCCESS, 1);
}
