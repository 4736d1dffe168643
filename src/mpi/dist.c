/* Distributed matrix setup: the checks every rank agrees on, the split into
 * a local and an off-rank part, and the halo plan. */
#include "dist_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bsrmv_status bsrmv_dist_agree(MPI_Comm comm, bsrmv_status st)
{
    int rank, size, first;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = st != BSRMV_SUCCESS ? rank : size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size)
        return BSRMV_SUCCESS;
    struct {
        int status;
        char msg[448];
    } m = {0};
    if (rank == first) {
        m.status = (int)st;
        snprintf(m.msg, sizeof m.msg, "%s", bsrmv_last_error());
    }
    MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm);
    return bsrmv_fail((bsrmv_status)m.status, "rank %d: %s", first, m.msg);
}

bsrmv_status bsrmv_dist_same_k(MPI_Comm comm, int k, const char *who, bsrmv_status st)
{
    int64_t kk[2] = {k, -(int64_t)k}, lo[2];
    MPI_Allreduce(kk, lo, 2, MPI_INT64_T, MPI_MIN, comm);
    if (!st && lo[0] != -lo[1])
        st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: the ranks disagree on k (from %lld to %lld)",
                        who, (long long)lo[0], (long long)-lo[1]);
    return st;
}

#define PIECE ((size_t)1 << 30)

void bsrmv_dist_send_bytes(const void *buf, size_t bytes, int dest, int tag, MPI_Comm comm)
{
    for (size_t off = 0; off < bytes; off += PIECE) {
        size_t n = bytes - off < PIECE ? bytes - off : PIECE;
        MPI_Send((const char *)buf + off, (int)n, MPI_BYTE, dest, tag, comm);
    }
}

void bsrmv_dist_recv_bytes(void *buf, size_t bytes, int src, int tag, MPI_Comm comm)
{
    for (size_t off = 0; off < bytes; off += PIECE) {
        size_t n = bytes - off < PIECE ? bytes - off : PIECE;
        MPI_Recv((char *)buf + off, (int)n, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE);
    }
}

void bsrmv_dist_matrix_destroy(bsrmv_dist_matrix *A)
{
    if (!A)
        return;
    if (A->req_n)
        for (int i = 0; i < 2 * (A->nrecv + A->nsend); i++)
            MPI_Request_free(&A->req_n[i]);
    if (A->req_t)
        for (int i = 0; i < 2 * (A->nrecv + A->nsend); i++)
            MPI_Request_free(&A->req_t[i]);
    if (A->req_s)
        for (int i = 0; i < 2 * (A->nrecv + A->nsend); i++)
            MPI_Request_free(&A->req_s[i]);
    free(A->req_n);
    free(A->req_t);
    free(A->req_s);
    free(A->peer_status);
    free(A->peer_status2);
    bsrmv_big_free(A->ghost_buf2);
    bsrmv_big_free(A->send_buf2);
    bsrmv_matrix_destroy(A->local);
    bsrmv_matrix_destroy(A->offrank);
    free(A->ghost_cols);
    free(A->offrank_rows);
    bsrmv_big_free(A->row_buf);
    free(A->recv_rank);
    free(A->send_rank);
    free(A->recv_start);
    free(A->send_start);
    bsrmv_big_free(A->send_idx);
    bsrmv_big_free(A->ghost_buf);
    bsrmv_big_free(A->send_buf);
    if (A->comm != MPI_COMM_NULL)
        MPI_Comm_free(&A->comm);
    free(A);
}

/* What this rank alone can say about its arguments. */
static bsrmv_status check_own(bsrmv_dist_matrix **A, int64_t mb_global, int64_t nb_global, int bs,
                              int64_t row_begin, int64_t mb, int64_t col_begin, int64_t nb,
                              int64_t nnzb, const int64_t *row_ptr, const int64_t *col_idx,
                              const void *val, bsrmv_type type, bsrmv_order order, int sym)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "the handle pointer is NULL");
    if (bs < 1 || mb_global < 0 || nb_global < 0 || mb < 0 || nb < 0 || nnzb < 0 ||
        row_begin < 0 || col_begin < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "bad sizes: bs %d, global %lld x %lld blocks, rows %lld+%lld, "
                          "columns %lld+%lld, nnzb %lld",
                          bs, (long long)mb_global, (long long)nb_global, (long long)row_begin,
                          (long long)mb, (long long)col_begin, (long long)nb, (long long)nnzb);
    if (bsrmv_type_size(type) == 0 || (order != BSRMV_COL_MAJOR && order != BSRMV_ROW_MAJOR))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown type %d or order %d", (int)type,
                          (int)order);
    if (!row_ptr || (nnzb > 0 && (!col_idx || !val)))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "NULL BSR array");
    if (nb > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "%lld block columns on one rank exceed the 32-bit local indices",
                          (long long)nb);
    if (row_ptr[0] != 0)
        return bsrmv_fail(BSRMV_ERR_STRUCTURE, "row_ptr[0] is %lld, not 0",
                          (long long)row_ptr[0]);
    for (int64_t i = 0; i < mb; i++) {
        const int64_t a = row_ptr[i], b = row_ptr[i + 1];
        if (b < a || b > nnzb)
            return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                              "row_ptr of block row %lld (local %lld) runs from %lld to %lld "
                              "(nnzb %lld)",
                              (long long)(row_begin + i), (long long)i, (long long)a,
                              (long long)b, (long long)nnzb);
        for (int64_t k = a; k < b; k++) {
            const int64_t c = col_idx[k];
            if (c < 0 || c >= nb_global)
                return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                                  "block row %lld: global column %lld out of range [0, %lld)",
                                  (long long)(row_begin + i), (long long)c,
                                  (long long)nb_global);
            if (sym && c < row_begin + i)
                return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                                  "block row %lld: column %lld is below the diagonal; symmetric "
                                  "storage holds the diagonal and upper blocks",
                                  (long long)(row_begin + i), (long long)c);
            if (k > a && c <= col_idx[k - 1])
                return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                                  "block row %lld: columns not strictly increasing (%lld "
                                  "after %lld)",
                                  (long long)(row_begin + i), (long long)c,
                                  (long long)col_idx[k - 1]);
        }
    }
    if (row_ptr[mb] != nnzb)
        return bsrmv_fail(BSRMV_ERR_STRUCTURE, "row_ptr[mb] is %lld, nnzb is %lld",
                          (long long)row_ptr[mb], (long long)nnzb);
    return BSRMV_SUCCESS;
}

/* The ranks' ranges (begin, count pairs in rank order) must tile [0, total). */
static bsrmv_status check_tiling(const int64_t *range, int size, int64_t total, const char *what)
{
    int64_t next = 0;
    for (int r = 0; r < size; r++) {
        if (range[2 * r] != next)
            return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                              "the %s of rank %d start at %lld but rank %d's end at %lld: "
                              "ranges must be contiguous, in rank order, without overlap or "
                              "gap",
                              what, r, (long long)range[2 * r], r - 1, (long long)next);
        next += range[2 * r + 1];
    }
    if (next != total)
        return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                          "the ranks' %s cover [0, %lld), the matrix has %lld", what,
                          (long long)next, (long long)total);
    return BSRMV_SUCCESS;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of c in the sorted array g[n] (present by construction). */
static int64_t find(const int64_t *g, int64_t n, int64_t c)
{
    int64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (g[mid] <= c)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The local and off-rank parts and the sorted ghost list. */
static bsrmv_status split(bsrmv_dist_matrix *D, int64_t nnzb, const int64_t *row_ptr,
                          const int64_t *col_idx, const void *val)
{
    const int64_t mb = D->mb, c0 = D->col_begin, c1 = D->col_begin + D->nb;
    int64_t nl = 0, no = 0;
    for (int64_t k = 0; k < nnzb; k++) {
        const bool own = col_idx[k] >= c0 && col_idx[k] < c1;
        nl += own;
        no += !own;
    }
    int64_t *g = malloc((size_t)(no > 0 ? no : 1) * sizeof *g);
    if (!g)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %lld ghost columns",
                          (long long)no);
    for (int64_t k = 0, j = 0; k < nnzb; k++)
        if (col_idx[k] < c0 || col_idx[k] >= c1)
            g[j++] = col_idx[k];
    qsort(g, (size_t)no, sizeof *g, cmp_i64);
    int64_t ng = 0;
    for (int64_t k = 0; k < no; k++)
        if (ng == 0 || g[k] != g[ng - 1])
            g[ng++] = g[k];
    D->ghost_cols = g;
    D->ghosts = ng;
    if (ng > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "%lld ghost columns exceed the 32-bit local indices", (long long)ng);

    /* rows with off-rank blocks: compress the part to them when they are
     * few (a gather or scatter of row_buf then costs less than a pass
     * over all of y) */
    int64_t mo = 0;
    for (int64_t i = 0; i < mb; i++) {
        int64_t own = 0;
        for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
            own += col_idx[k] >= c0 && col_idx[k] < c1;
        mo += own < row_ptr[i + 1] - row_ptr[i];
    }
    const bool compress = 2 * mo < mb;
    bsrmv_status st;
    int64_t *rl, *ro;
    int32_t *cl, *co;
    void *vl, *vo;
    if ((st = bsrmv_matrix_shell(&D->local, mb, D->nb, D->bs, nl, D->type, D->order)) ||
        (st = bsrmv_matrix_alloc_arrays(D->local, &rl, &cl, &vl)) ||
        (st = bsrmv_matrix_shell(&D->offrank, compress ? mo : mb, ng, D->bs, no, D->type,
                                 D->order)) ||
        (st = bsrmv_matrix_alloc_arrays(D->offrank, &ro, &co, &vo)))
        return st;
    if (compress) {
        D->offrank_rows = malloc((size_t)(mo + 1) * sizeof *D->offrank_rows);
        D->row_buf = bsrmv_big_alloc((size_t)(mo * D->bs) * bsrmv_type_size(D->type));
        if (!D->offrank_rows || !D->row_buf)
            return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %lld off-rank rows",
                              (long long)mo);
    }
    /* ro_at[i]: where row i's off-rank blocks start in the part */
    int64_t *ro_at = malloc((size_t)(mb + 1) * sizeof *ro_at);
    if (!ro_at)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %lld row offsets", (long long)mb);
    rl[0] = ro[0] = 0;
    for (int64_t i = 0, r = 0, off = 0; i < mb; i++) {
        int64_t own = 0;
        for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
            own += col_idx[k] >= c0 && col_idx[k] < c1;
        const int64_t other = row_ptr[i + 1] - row_ptr[i] - own;
        rl[i + 1] = rl[i] + own;
        ro_at[i] = off;
        off += other;
        if (!compress)
            ro[i + 1] = off;
        else if (other > 0) {
            D->offrank_rows[r] = i;
            ro[++r] = off;
        }
    }
    const size_t blk = (size_t)D->bs * (size_t)D->bs * bsrmv_type_size(D->type);
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t i = 0; i < mb; i++) {
        int64_t jl = rl[i], jo = ro_at[i];
        for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
            const int64_t c = col_idx[k];
            const char *src = (const char *)val + (size_t)k * blk;
            if (c >= c0 && c < c1) {
                cl[jl] = (int32_t)(c - c0);
                memcpy((char *)vl + (size_t)jl++ * blk, src, blk);
            } else {
                co[jo] = (int32_t)find(g, ng, c);
                memcpy((char *)vo + (size_t)jo++ * blk, src, blk);
            }
        }
    }
    free(ro_at);
    /* the diagonal and upper blocks of the rank's own columns (check_own
     * saw no block below the diagonal) */
    D->local->sym = D->sym != 0;
    D->local->herm = D->sym == 2;
    return BSRMV_SUCCESS;
}

/* Receive lists from the ghosts' owners, send lists from the other ranks'
 * requests.  cols: the ranks' column ranges.  Collective; returns a status
 * that still has to be agreed on. */
static bsrmv_status plan(bsrmv_dist_matrix *D, const int64_t *cols)
{
    const int size = D->size;
    int64_t *want = calloc((size_t)size, sizeof *want);  /* ghosts from each rank */
    int64_t *asked = calloc((size_t)size, sizeof *asked); /* entries each rank wants */
    int *scount = malloc((size_t)size * sizeof *scount), *sdisp = malloc((size_t)size * sizeof *sdisp);
    int *rcount = malloc((size_t)size * sizeof *rcount), *rdisp = malloc((size_t)size * sizeof *rdisp);
    bsrmv_status st = BSRMV_SUCCESS;
    if (!want || !asked || !scount || !sdisp || !rcount || !rdisp)
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the halo plan of %d ranks", size);
    for (int64_t k = 0, r = 0; !st && k < D->ghosts; k++) {
        while (D->ghost_cols[k] >= cols[2 * r] + cols[2 * r + 1])
            r++;
        want[r]++;
    }
    if ((st = bsrmv_dist_agree(D->comm, st)))
        goto done;
    MPI_Alltoall(want, 1, MPI_INT64_T, asked, 1, MPI_INT64_T, D->comm);

    int64_t total = 0;
    D->nrecv = D->nsend = 0;
    for (int r = 0; r < size; r++) {
        D->nrecv += want[r] > 0;
        D->nsend += asked[r] > 0;
        total += asked[r];
        if (want[r] * D->bs > INT_MAX || asked[r] * D->bs > INT_MAX)
            st = bsrmv_fail(BSRMV_ERR_OVERFLOW,
                            "%lld block columns between ranks %d and %d exceed an MPI count",
                            (long long)(want[r] > asked[r] ? want[r] : asked[r]), D->rank, r);
    }
    if (!st && (total > INT_MAX || D->ghosts > INT_MAX))
        st = bsrmv_fail(BSRMV_ERR_OVERFLOW, "%lld halo entries exceed an MPI count",
                        (long long)total);
    const size_t vs = bsrmv_type_size(D->type), bsv = (size_t)D->bs * vs;
    int64_t *req = NULL;
    if (!st) {
        D->recv_rank = malloc((size_t)(D->nrecv + 1) * sizeof *D->recv_rank);
        D->send_rank = malloc((size_t)(D->nsend + 1) * sizeof *D->send_rank);
        D->recv_start = malloc((size_t)(D->nrecv + 1) * sizeof *D->recv_start);
        D->send_start = malloc((size_t)(D->nsend + 1) * sizeof *D->send_start);
        D->send_idx = bsrmv_big_alloc((size_t)total * sizeof *D->send_idx);
        D->ghost_buf = bsrmv_big_alloc((size_t)D->ghosts * bsv);
        D->send_buf = bsrmv_big_alloc((size_t)total * bsv);
        D->req_n = malloc((size_t)(2 * (D->nrecv + D->nsend) + 1) * sizeof *D->req_n);
        D->req_t = malloc((size_t)(2 * (D->nrecv + D->nsend) + 1) * sizeof *D->req_t);
        D->peer_status = malloc((size_t)(D->nrecv + D->nsend + 1) * sizeof *D->peer_status);
        req = malloc((size_t)(total + 1) * sizeof *req);
        if (D->sym) {
            D->ghost_buf2 = bsrmv_big_alloc((size_t)D->ghosts * bsv);
            D->send_buf2 = bsrmv_big_alloc((size_t)total * bsv);
            D->req_s = malloc((size_t)(2 * (D->nrecv + D->nsend) + 1) * sizeof *D->req_s);
            D->peer_status2 = malloc((size_t)(D->nsend + 1) * sizeof *D->peer_status2);
        }
        if (!D->recv_rank || !D->send_rank || !D->recv_start || !D->send_start ||
            !D->send_idx || !D->ghost_buf || !D->send_buf || !D->req_n || !D->req_t ||
            !D->peer_status || !req ||
            (D->sym && (!D->ghost_buf2 || !D->send_buf2 || !D->req_s || !D->peer_status2)))
            st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the halo buffers");
    }
    if ((st = bsrmv_dist_agree(D->comm, st))) {
        free(req);
        free(D->req_n);
        free(D->req_t);
        free(D->req_s);
        D->req_n = D->req_t = D->req_s = NULL;
        goto done;
    }
    int64_t soff = 0, roff = 0;
    for (int r = 0, i = 0, j = 0; r < size; r++) {
        scount[r] = (int)want[r];
        sdisp[r] = (int)roff;
        rcount[r] = (int)asked[r];
        rdisp[r] = (int)soff;
        if (want[r] > 0) {
            D->recv_rank[i] = r;
            D->recv_start[i++] = roff;
        }
        if (asked[r] > 0) {
            D->send_rank[j] = r;
            D->send_start[j++] = soff;
        }
        roff += want[r];
        soff += asked[r];
    }
    D->recv_start[D->nrecv] = roff;
    D->send_start[D->nsend] = soff;
    MPI_Alltoallv(D->ghost_cols, scount, sdisp, MPI_INT64_T, req, rcount, rdisp, MPI_INT64_T,
                  D->comm);
    for (int64_t k = 0; k < total; k++)
        D->send_idx[k] = (int32_t)(req[k] - D->col_begin);
    free(req);

    char *gb = D->ghost_buf, *sb = D->send_buf, *g2 = D->ghost_buf2, *s2 = D->send_buf2;
    const int nr = D->nrecv, ns = D->nsend;
    MPI_Request *rn = D->req_n, *rt = D->req_t;
    /* counts in values of the type; the status beside each data message */
    const int ts = DIST_TAG_STATUS;
    for (int i = 0; i < nr; i++) {
        const int64_t a = D->recv_start[i];
        const int cnt = (int)((D->recv_start[i + 1] - a) * D->bs), peer = D->recv_rank[i];
        char *g = gb + (size_t)a * bsv;
        MPI_Recv_init(g, cnt, D->mpi_type, peer, DIST_TAG_N, D->comm, &rn[i]);
        MPI_Recv_init(&D->peer_status[i], 1, MPI_INT, peer, DIST_TAG_N + ts, D->comm, &rn[nr + i]);
        MPI_Send_init(g, cnt, D->mpi_type, peer, DIST_TAG_T, D->comm, &rt[2 * ns + i]);
        MPI_Send_init(&D->my_status, 1, MPI_INT, peer, DIST_TAG_T + ts, D->comm,
                      &rt[2 * ns + nr + i]);
    }
    for (int j = 0; j < ns; j++) {
        const int64_t a = D->send_start[j];
        const int cnt = (int)((D->send_start[j + 1] - a) * D->bs), peer = D->send_rank[j];
        char *s = sb + (size_t)a * bsv;
        MPI_Send_init(s, cnt, D->mpi_type, peer, DIST_TAG_N, D->comm, &rn[2 * nr + j]);
        MPI_Send_init(&D->my_status, 1, MPI_INT, peer, DIST_TAG_N + ts, D->comm,
                      &rn[2 * nr + ns + j]);
        MPI_Recv_init(s, cnt, D->mpi_type, peer, DIST_TAG_T, D->comm, &rt[j]);
        MPI_Recv_init(&D->peer_status[j], 1, MPI_INT, peer, DIST_TAG_T + ts, D->comm, &rt[ns + j]);
    }
    /* symmetric storage: OP_T's layout again, on its own buffers */
    MPI_Request *rs = D->req_s;
    for (int i = 0; D->sym && i < nr; i++) {
        const int64_t a = D->recv_start[i];
        const int cnt = (int)((D->recv_start[i + 1] - a) * D->bs), peer = D->recv_rank[i];
        MPI_Send_init(g2 + (size_t)a * bsv, cnt, D->mpi_type, peer, DIST_TAG_S, D->comm,
                      &rs[2 * ns + i]);
        MPI_Send_init(&D->my_status, 1, MPI_INT, peer, DIST_TAG_S + ts, D->comm,
                      &rs[2 * ns + nr + i]);
    }
    for (int j = 0; D->sym && j < ns; j++) {
        const int64_t a = D->send_start[j];
        const int cnt = (int)((D->send_start[j + 1] - a) * D->bs), peer = D->send_rank[j];
        MPI_Recv_init(s2 + (size_t)a * bsv, cnt, D->mpi_type, peer, DIST_TAG_S, D->comm, &rs[j]);
        MPI_Recv_init(&D->peer_status2[j], 1, MPI_INT, peer, DIST_TAG_S + ts, D->comm,
                      &rs[ns + j]);
    }
done:
    free(want);
    free(asked);
    free(scount);
    free(sdisp);
    free(rcount);
    free(rdisp);
    return st;
}

/* bsrmv_dist_matrix_create; sym 1 or 2: _create_sym's symmetric or
 * Hermitian storage (the column ranges those of the rows). */
static bsrmv_status create(bsrmv_dist_matrix **A, MPI_Comm comm, int64_t mb_global,
                           int64_t nb_global, int bs, int64_t row_begin, int64_t mb,
                           int64_t col_begin, int64_t nb, int64_t nnzb, const int64_t *row_ptr,
                           const int64_t *col_idx, const void *val, bsrmv_type type,
                           bsrmv_order order, int sym)
{
    if (A)
        *A = NULL;
    if (comm == MPI_COMM_NULL)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "MPI_COMM_NULL");
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    /* Everything the ranks must agree on, compared through min and max. */
    int64_t p[6] = {mb_global, nb_global, bs, (int64_t)type, (int64_t)order, sym}, lo[6], hi[6];
    MPI_Allreduce(p, lo, 6, MPI_INT64_T, MPI_MIN, comm);
    MPI_Allreduce(p, hi, 6, MPI_INT64_T, MPI_MAX, comm);
    int64_t mine[4] = {row_begin, mb, col_begin, nb};
    int64_t *all = malloc((size_t)size * sizeof mine);
    int64_t *rows = malloc((size_t)size * 2 * sizeof *rows);
    int64_t *cols = malloc((size_t)size * 2 * sizeof *cols);
    if (!all || !rows || !cols) {
        /* too little memory for a few words per rank: no agreement possible */
        free(all);
        free(rows);
        free(cols);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d ranks' ranges", size);
    }
    MPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, comm);
    for (int r = 0; r < size; r++) {
        rows[2 * r] = all[4 * r];
        rows[2 * r + 1] = all[4 * r + 1];
        cols[2 * r] = all[4 * r + 2];
        cols[2 * r + 1] = all[4 * r + 3];
    }
    free(all);

    static const char *const names[6] = {"mb_global", "nb_global", "bs", "type", "order",
                                         "the storage (full, symmetric, Hermitian)"};
    bsrmv_status st = BSRMV_SUCCESS;
    for (int i = 0; i < 6 && !st; i++)
        if (lo[i] != hi[i])
            st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "the ranks disagree on %s (from %lld to %lld)",
                            names[i], (long long)lo[i], (long long)hi[i]);
    if (!st)
        st = check_own(A, mb_global, nb_global, bs, row_begin, mb, col_begin, nb, nnzb,
                       row_ptr, col_idx, val, type, order, sym);
    if (!st)
        st = check_tiling(rows, size, mb_global, "block rows");
    if (!st)
        st = check_tiling(cols, size, nb_global, "block columns");
    free(rows);
    if ((st = bsrmv_dist_agree(comm, st))) {
        free(cols);
        return st;
    }

    bsrmv_dist_matrix *D = calloc(1, sizeof *D);
    if (D) {
        D->comm = MPI_COMM_NULL;
        D->rank = rank;
        D->size = size;
        D->mb_global = mb_global;
        D->nb_global = nb_global;
        D->bs = bs;
        D->type = type;
        D->order = order;
        D->sym = sym;
        D->mpi_type = type == BSRMV_DOUBLE           ? MPI_DOUBLE
                      : type == BSRMV_FLOAT          ? MPI_FLOAT
                      : type == BSRMV_COMPLEX_DOUBLE ? MPI_C_DOUBLE_COMPLEX
                                                     : MPI_C_FLOAT_COMPLEX;
        D->row_begin = row_begin;
        D->mb = mb;
        D->col_begin = col_begin;
        D->nb = nb;
        st = split(D, nnzb, row_ptr, col_idx, val);
    } else {
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the handle");
    }
    if (D)
        MPI_Comm_dup(comm, &D->comm);
    else {
        MPI_Comm dup;
        MPI_Comm_dup(comm, &dup);
        MPI_Comm_free(&dup);
    }
    if (!(st = bsrmv_dist_agree(comm, st)))
        st = plan(D, cols);
    free(cols);
    if (st) {
        bsrmv_dist_matrix_destroy(D);
        return st;
    }
    *A = D;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_dist_matrix_create(bsrmv_dist_matrix **A, MPI_Comm comm, int64_t mb_global,
                                      int64_t nb_global, int bs, int64_t row_begin, int64_t mb,
                                      int64_t col_begin, int64_t nb, int64_t nnzb,
                                      const int64_t *row_ptr, const int64_t *col_idx,
                                      const void *val, bsrmv_type type, bsrmv_order order)
{
    return create(A, comm, mb_global, nb_global, bs, row_begin, mb, col_begin, nb, nnzb, row_ptr,
                  col_idx, val, type, order, 0);
}

bsrmv_status bsrmv_dist_matrix_create_sym(bsrmv_dist_matrix **A, MPI_Comm comm,
                                          int64_t nb_global, int bs, int64_t row_begin,
                                          int64_t mb, int64_t nnzb, const int64_t *row_ptr,
                                          const int64_t *col_idx, const void *val,
                                          bsrmv_type type, bsrmv_order order,
                                          bsrmv_symmetry kind)
{
    if (kind != BSRMV_SYM_SYMMETRIC && kind != BSRMV_SYM_HERMITIAN) {
        if (A)
            *A = NULL;
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "bsrmv_dist_matrix_create_sym: kind %d is neither symmetric (1) nor "
                          "Hermitian (2)",
                          (int)kind);
    }
    /* of real values the Hermitian storage is the symmetric one */
    const int sym = kind == BSRMV_SYM_HERMITIAN && bsrmv_type_is_complex(type) ? 2 : 1;
    return create(A, comm, nb_global, nb_global, bs, row_begin, mb, row_begin, mb, nnzb, row_ptr,
                  col_idx, val, type, order, sym);
}

bsrmv_status bsrmv_dist_matrix_get_info(const bsrmv_dist_matrix *A, bsrmv_dist_info *info)
{
    if (!A || !info)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_matrix_get_info: NULL argument");
    const double bsv = (double)A->bs * (double)bsrmv_type_size(A->type);
    *info = (bsrmv_dist_info){
        .rank = A->rank,
        .size = A->size,
        .mb_global = A->mb_global,
        .nb_global = A->nb_global,
        .bs = A->bs,
        .type = A->type,
        .order = A->order,
        .row_begin = A->row_begin,
        .mb = A->mb,
        .col_begin = A->col_begin,
        .nb = A->nb,
        .nnzb_local = A->local->nnzb,
        .nnzb_offrank = A->offrank->nnzb,
        .ghosts = A->ghosts,
        .recv_neighbors = A->nrecv,
        .send_neighbors = A->nsend,
        .send_blocks = A->send_start[A->nsend],
        /* symmetric storage runs both exchanges in every product */
        .halo_send_bytes = (double)(A->send_start[A->nsend] + (A->sym ? A->ghosts : 0)) * bsv,
        .halo_recv_bytes = (double)(A->ghosts + (A->sym ? A->send_start[A->nsend] : 0)) * bsv,
        .symmetric = A->sym == 2 ? BSRMV_SYM_HERMITIAN : A->sym ? BSRMV_SYM_SYMMETRIC : 0,
    };
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_dist_matrix_parts(const bsrmv_dist_matrix *A, const bsrmv_matrix **local,
                                     const bsrmv_matrix **offrank, const int64_t **offrank_rows,
                                     const int64_t **ghost_cols)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_matrix_parts: NULL matrix");
    if (local)
        *local = A->local;
    if (offrank)
        *offrank = A->offrank;
    if (offrank_rows)
        *offrank_rows = A->offrank_rows;
    if (ghost_cols)
        *ghost_cols = A->ghost_cols;
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_dist_matrix_timers(bsrmv_dist_matrix *A, bsrmv_dist_timers *t, int reset)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_matrix_timers: NULL matrix");
    if (t)
        *t = A->tm;
    if (reset)
        memset(&A->tm, 0, sizeof A->tm);
    return BSRMV_SUCCESS;
}
