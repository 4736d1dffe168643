/* Distributed SpMV: the halo exchange overlapped with the local product.
 *
 * OP_N: pack x's entries the neighbours need, start the persistent
 * receives (into ghost_buf) and sends, multiply the local part, wait for
 * the receives, add the off-rank part's product (through row_buf where
 * the part holds only the rows that have off-rank blocks).
 * OP_T: the off-rank part's partial sums (A_o^T x, one per ghost) go back
 * to the ghosts' owners while the local part multiplies; each owner adds
 * them at the columns it sent in OP_N, neighbour by neighbour in rank order
 * (deterministic).
 *
 * Each data message travels with the sender's status, so a rank whose
 * arguments or off-rank product failed fails the ranks that use its data,
 * and no product needs a collective. */
#include "dist_internal.h"
#include "dist_scalar.h"

#include <string.h>

/* Below this many values, packing is not worth a thread team. */
#define PACK_PARALLEL_MIN 16384

#define DEFINE_HALO_OPS(T, SUF)                                                          \
    static void pack_##SUF(const bsrmv_dist_matrix *A, const void *xv)                   \
    {                                                                                    \
        const int64_t n = A->send_start[A->nsend];                                       \
        const int bs = A->bs;                                                            \
        const T *x = xv;                                                                 \
        T *buf = A->send_buf;                                                            \
        _Pragma("omp parallel for if (n * bs > PACK_PARALLEL_MIN)")                      \
        for (int64_t k = 0; k < n; k++)                                                  \
            memcpy(buf + k * bs, x + (int64_t)A->send_idx[k] * bs, (size_t)bs * sizeof(T)); \
    }                                                                                    \
    /* y at the entries sent += buf (the partial sums they came back with) */          \
    static void unpack_add_##SUF(const bsrmv_dist_matrix *A, const void *bufv, void *yv) \
    {                                                                                    \
        const int64_t n = A->send_start[A->nsend];                                       \
        const int bs = A->bs;                                                            \
        const T *buf = bufv;                                                             \
        for (int64_t k = 0; k < n; k++) {                                                \
            T *yk = (T *)yv + (int64_t)A->send_idx[k] * bs;                              \
            for (int c = 0; c < bs; c++)                                                 \
                yk[c] += buf[k * bs + c];                                                \
        }                                                                                \
    }                                                                                    \
    /* y at the compressed off-rank rows += row_buf */                                   \
    static void rows_add_##SUF(const bsrmv_dist_matrix *A, void *yv)                     \
    {                                                                                    \
        const int64_t n = A->offrank->mb;                                                \
        const int bs = A->bs;                                                            \
        const T *buf = A->row_buf;                                                       \
        T *y = yv;                                                                       \
        _Pragma("omp parallel for if (n * bs > PACK_PARALLEL_MIN)")                      \
        for (int64_t i = 0; i < n; i++)                                                  \
            for (int c = 0; c < bs; c++)                                                 \
                y[A->offrank_rows[i] * bs + c] += buf[i * bs + c];                       \
    }                                                                                    \
    /* row_buf = x at the compressed off-rank rows (OP_T's input) */                     \
    static void rows_gather_##SUF(const bsrmv_dist_matrix *A, const void *xv)            \
    {                                                                                    \
        const int64_t n = A->offrank->mb;                                                \
        const int bs = A->bs;                                                            \
        const T *x = xv;                                                                 \
        T *buf = A->row_buf;                                                             \
        _Pragma("omp parallel for if (n * bs > PACK_PARALLEL_MIN)")                      \
        for (int64_t i = 0; i < n; i++)                                                  \
            memcpy(buf + i * bs, x + A->offrank_rows[i] * bs, (size_t)bs * sizeof(T));    \
    }
DEFINE_HALO_OPS(float, s)
DEFINE_HALO_OPS(double, d)
DEFINE_HALO_OPS(float _Complex, c)
DEFINE_HALO_OPS(double _Complex, z)

/* The halo's operations for each value type (indexed by bsrmv_type). */
typedef struct halo_ops {
    void (*pack)(const bsrmv_dist_matrix *A, const void *x);
    void (*unpack_add)(const bsrmv_dist_matrix *A, const void *buf, void *y);
    void (*rows_add)(const bsrmv_dist_matrix *A, void *y);
    void (*rows_gather)(const bsrmv_dist_matrix *A, const void *x);
} halo_ops;

static const halo_ops halo[4] = {
    [BSRMV_FLOAT] = {pack_s, unpack_add_s, rows_add_s, rows_gather_s},
    [BSRMV_DOUBLE] = {pack_d, unpack_add_d, rows_add_d, rows_gather_d},
    [BSRMV_COMPLEX_FLOAT] = {pack_c, unpack_add_c, rows_add_c, rows_gather_c},
    [BSRMV_COMPLEX_DOUBLE] = {pack_z, unpack_add_z, rows_add_z, rows_gather_z},
};

bsrmv_status bsrmv_dist_sym_op(const bsrmv_dist_matrix *A, bsrmv_op *op, const char *who,
                               bsrmv_status st)
{
    const bsrmv_op same = A->sym == 2 ? BSRMV_OP_C : BSRMV_OP_T;
    if (!st && *op != BSRMV_OP_N && *op != same)
        st = bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                        "%s: %s of a complex matrix in %s storage is not built (OP_N and %s are)",
                        who, *op == BSRMV_OP_T ? "OP_T" : "OP_C",
                        A->sym == 2 ? "Hermitian" : "symmetric",
                        same == BSRMV_OP_T ? "OP_T" : "OP_C");
    *op = BSRMV_OP_N;
    return st;
}

/* y += alpha * (off-rank part) * ghosts */
static bsrmv_status offrank_n(bsrmv_dist_matrix *A, const void *alpha, void *y)
{
    const int64_t gh = A->ghosts * A->bs, n = A->offrank->mb * A->bs;
    const dist_scalar one = dist_scalar_of(A->type, 1), zero = dist_scalar_of(A->type, 0);
    if (!A->offrank_rows)
        return bsrmv_spmv_scalars(BSRMV_OP_N, alpha, A->offrank, A->ghost_buf, gh, &one, y, n);
    bsrmv_status st = bsrmv_spmv_scalars(BSRMV_OP_N, alpha, A->offrank, A->ghost_buf, gh, &zero,
                                         A->row_buf, n);
    if (!st)
        halo[A->type].rows_add(A, y);
    return st;
}

/* sums (one per ghost) = alpha * op(off-rank part) * x, op T or C */
static bsrmv_status offrank_t(bsrmv_op op, bsrmv_dist_matrix *A, const void *alpha,
                              const void *x, void *sums)
{
    const int64_t gh = A->ghosts * A->bs, n = A->offrank->mb * A->bs;
    const dist_scalar zero = dist_scalar_of(A->type, 0);
    if (!A->offrank_rows)
        return bsrmv_spmv_scalars(op, alpha, A->offrank, x, n, &zero, sums, gh);
    halo[A->type].rows_gather(A, x);
    return bsrmv_spmv_scalars(op, alpha, A->offrank, A->row_buf, n, &zero, sums, gh);
}

/* After the receives: the first failed source this rank depends on. */
static bsrmv_status peers_ok(int n, const int *status, const int *rank_of)
{
    for (int i = 0; i < n; i++)
        if (status[i] != BSRMV_SUCCESS)
            return bsrmv_fail((bsrmv_status)status[i],
                              "rank %d, whose data this rank's product needs, failed (%s); "
                              "this rank's result is not valid",
                              rank_of[i], bsrmv_status_string((bsrmv_status)status[i]));
    return BSRMV_SUCCESS;
}

/* Symmetric storage, y = alpha*A*x + beta*y: the off-rank blocks' partial
 * sums for the owners of their columns first, then both exchanges (x's
 * ghosts in, the partial sums out) behind the local product; then the
 * off-rank product with the ghosts, and the sums the other ranks sent
 * for this rank's columns. */
static bsrmv_status sym_spmv(const void *alpha, bsrmv_dist_matrix *A, const void *x,
                             const void *beta, void *y, bsrmv_status st)
{
    const int64_t rows = A->mb * A->bs;
    const int nr = A->nrecv, ns = A->nsend;
    const double t0 = MPI_Wtime();
    if (!st && A->ghosts > 0)
        st = offrank_t(A->sym == 2 ? BSRMV_OP_C : BSRMV_OP_T, A, alpha, x, A->ghost_buf2);
    if (!st)
        halo[A->type].pack(A, x);
    const double tp = MPI_Wtime();
    A->my_status = (int)st;
    MPI_Startall(2 * (nr + ns), A->req_n);
    MPI_Startall(2 * (nr + ns), A->req_s);
    const double t1 = MPI_Wtime();
    if (!st)
        st = bsrmv_spmv_scalars(BSRMV_OP_N, alpha, A->local, x, rows, beta, y, rows);
    const double t2 = MPI_Wtime();
    MPI_Waitall(2 * nr, A->req_n, MPI_STATUSES_IGNORE);
    MPI_Waitall(2 * ns, A->req_s, MPI_STATUSES_IGNORE);
    const double t3 = MPI_Wtime();
    if (!st)
        st = peers_ok(nr, A->peer_status, A->recv_rank);
    if (!st)
        st = peers_ok(ns, A->peer_status2, A->send_rank);
    if (!st && A->offrank->nnzb > 0)
        st = offrank_n(A, alpha, y);
    if (!st)
        halo[A->type].unpack_add(A, A->send_buf2, y);
    MPI_Waitall(2 * ns, A->req_n + 2 * nr, MPI_STATUSES_IGNORE);
    MPI_Waitall(2 * nr, A->req_s + 2 * ns, MPI_STATUSES_IGNORE);
    const double t4 = MPI_Wtime();
    A->tm.calls++;
    A->tm.post += t1 - tp;
    A->tm.local += t2 - t1;
    A->tm.wait += t3 - t2;
    A->tm.offrank += (tp - t0) + (t4 - t3);
    A->tm.total += t4 - t0;
    return st;
}

bsrmv_status bsrmv_dist_spmv_run(bsrmv_dist_matrix *A, const void *x, void *y)
{
    const dist_scalar one = dist_scalar_of(A->type, 1), zero = dist_scalar_of(A->type, 0);
    return bsrmv_dist_spmv_checked(BSRMV_OP_N, &one, A, x, &zero, y, BSRMV_SUCCESS);
}

bsrmv_status bsrmv_dist_spmv_checked(bsrmv_op op, const void *alpha, bsrmv_dist_matrix *A,
                                     const void *x, const void *beta, void *y, bsrmv_status st)
{
    const int64_t rows = A->mb * A->bs, cols = A->nb * A->bs, gh = A->ghosts * A->bs;
    const int nr = A->nrecv, ns = A->nsend;
    if (dist_scalar_is_zero(A->type, alpha)) /* the same on every rank: no exchange anywhere */
        return st ? st
                  : op == BSRMV_OP_N
                        ? bsrmv_spmv_scalars(op, alpha, A->local, x, cols, beta, y, rows)
                        : bsrmv_spmv_scalars(op, alpha, A->local, x, rows, beta, y, cols);
    if (A->sym)
        return sym_spmv(alpha, A, x, beta, y, st);
    const double t0 = MPI_Wtime();
    double t1, t2, t3;
    if (op == BSRMV_OP_N) {
        if (!st)
            halo[A->type].pack(A, x);
        A->my_status = (int)st;
        MPI_Startall(2 * (nr + ns), A->req_n);
        t1 = MPI_Wtime();
        if (!st)
            st = bsrmv_spmv_scalars(BSRMV_OP_N, alpha, A->local, x, cols, beta, y, rows);
        t2 = MPI_Wtime();
        MPI_Waitall(2 * nr, A->req_n, MPI_STATUSES_IGNORE);
        t3 = MPI_Wtime();
        if (!st)
            st = peers_ok(nr, A->peer_status, A->recv_rank);
        if (!st && A->offrank->nnzb > 0)
            st = offrank_n(A, alpha, y);
        MPI_Waitall(2 * ns, A->req_n + 2 * nr, MPI_STATUSES_IGNORE);
    } else {
        if (!st && gh > 0)
            st = offrank_t(op, A, alpha, x, A->ghost_buf);
        const double tp = MPI_Wtime();
        A->my_status = (int)st; /* the partial sums sent are valid or not */
        MPI_Startall(2 * (nr + ns), A->req_t);
        t1 = MPI_Wtime();
        if (!st)
            st = bsrmv_spmv_scalars(op, alpha, A->local, x, rows, beta, y, cols);
        t2 = MPI_Wtime();
        MPI_Waitall(2 * ns, A->req_t, MPI_STATUSES_IGNORE);
        t3 = MPI_Wtime();
        if (!st)
            st = peers_ok(ns, A->peer_status, A->send_rank);
        if (!st)
            halo[A->type].unpack_add(A, A->send_buf, y);
        MPI_Waitall(2 * nr, A->req_t + 2 * ns, MPI_STATUSES_IGNORE);
        /* the off-rank product ran before the exchange started */
        A->tm.offrank += tp - t0;
        t1 -= tp - t0;
    }
    const double t4 = MPI_Wtime();
    A->tm.calls++;
    A->tm.post += t1 - t0;
    A->tm.local += t2 - t1;
    A->tm.wait += t3 - t2;
    A->tm.offrank += t4 - t3;
    A->tm.total += t4 - t0;
    return st;
}

/* The arguments of this rank (op already N, T or, complex, C). */
static bsrmv_status check_args(bsrmv_op op, const bsrmv_dist_matrix *A, const void *x,
                               int64_t nx, const void *alpha, const void *beta, void *y,
                               int64_t ny)
{
    if (op != BSRMV_OP_N && op != BSRMV_OP_T && op != BSRMV_OP_C)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmv: unknown op %d", (int)op);
    if (!alpha || !beta)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmv_scalars: NULL %s",
                          alpha ? "beta" : "alpha");
    const int64_t rows = A->mb * A->bs, cols = A->nb * A->bs;
    const int64_t want_x = op == BSRMV_OP_N ? cols : rows, want_y = op == BSRMV_OP_N ? rows : cols;
    if (nx != want_x || ny != want_y)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "bsrmv_dist_spmv: this rank's part of op(A) is %lld x %lld but x has "
                          "%lld and y %lld entries",
                          (long long)want_y, (long long)want_x, (long long)nx, (long long)ny);
    if ((ny > 0 && !y) || (nx > 0 && !x && !dist_scalar_is_zero(A->type, alpha)))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmv: NULL vector");
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_dist_spmv_scalars(bsrmv_op op, const void *alpha, bsrmv_dist_matrix *A,
                                     const void *x, int64_t nx, const void *beta, void *y,
                                     int64_t ny)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmv: NULL matrix");
    /* of a real matrix the conjugate transpose is the transpose */
    if (op == BSRMV_OP_C && !bsrmv_type_is_complex(A->type))
        op = BSRMV_OP_T;
    /* a rank with bad arguments still takes part in the exchange (an
     * unknown op runs as OP_N's exchange, a missing alpha as a non-zero
     * one) and its status travels with it */
    bsrmv_status st = check_args(op, A, x, nx, alpha, beta, y, ny);
    if (A->sym)
        st = bsrmv_dist_sym_op(A, &op, "bsrmv_dist_spmv", st);
    const dist_scalar one = dist_scalar_of(A->type, 1);
    return bsrmv_dist_spmv_checked(op == BSRMV_OP_T || op == BSRMV_OP_C ? op : BSRMV_OP_N,
                                   alpha ? alpha : &one, A, x, beta ? beta : &one, y, st);
}

bsrmv_status bsrmv_dist_spmv(bsrmv_op op, double alpha, bsrmv_dist_matrix *A, const void *x,
                             int64_t nx, double beta, void *y, int64_t ny)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_spmv: NULL matrix");
    const dist_scalar a = dist_scalar_of(A->type, alpha), b = dist_scalar_of(A->type, beta);
    return bsrmv_dist_spmv_scalars(op, &a, A, x, nx, &b, y, ny);
}

bsrmv_status bsrmv_dist_halo_exchange(bsrmv_dist_matrix *A, const void *x, int64_t nx)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_halo_exchange: NULL matrix");
    bsrmv_status st = BSRMV_SUCCESS;
    if (nx != A->nb * A->bs || (nx > 0 && !x))
        st = bsrmv_fail(BSRMV_ERR_DIMENSION,
                        "bsrmv_dist_halo_exchange: x has %lld entries, this rank owns %lld",
                        (long long)nx, (long long)(A->nb * A->bs));
    if (!st)
        halo[A->type].pack(A, x);
    A->my_status = (int)st;
    const int n = 2 * (A->nrecv + A->nsend);
    MPI_Startall(n, A->req_n);
    MPI_Waitall(n, A->req_n, MPI_STATUSES_IGNORE);
    return st ? st : peers_ok(A->nrecv, A->peer_status, A->recv_rank);
}
