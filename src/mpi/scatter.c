/* Distributing a matrix that one rank holds: the row partition, the
 * scatter of each rank's rows, and the Matrix Market reader on top. */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

bsrmv_status bsrmv_dist_partition(const int64_t *row_ptr, int64_t mb, int nparts,
                                  int64_t *starts)
{
    if (!row_ptr || !starts || nparts < 1 || mb < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_partition: bad arguments");
    /* w(i) = row_ptr[i] + i grows strictly: part p starts at the first row
     * whose weight reaches p/nparts of the total */
    const double total = (double)(row_ptr[mb] + mb);
    starts[0] = 0;
    for (int p = 1; p < nparts; p++) {
        const double target = total * p / nparts;
        int64_t lo = starts[p - 1], hi = mb;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if ((double)(row_ptr[mid] + mid) < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        starts[p] = lo;
    }
    starts[nparts] = mb;
    return BSRMV_SUCCESS;
}

/* Root's input: G and the partition. */
static bsrmv_status check_root(const bsrmv_matrix *G, const int64_t *row_starts, int size)
{
    if (!G)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "the matrix to distribute is NULL on the root");
    if (!G->row_ptr)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "bsrmv_dist_matrix_scatter: the matrix has a "
                          "32-bit row_ptr; scatter takes a 64-bit one (bsrmv_matrix_create)");
    if (!row_starts)
        return BSRMV_SUCCESS;
    if (row_starts[0] != 0 || row_starts[size] != G->mb)
        return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                          "row_starts runs from %lld to %lld, the matrix has %lld block rows",
                          (long long)row_starts[0], (long long)row_starts[size],
                          (long long)G->mb);
    for (int r = 0; r < size; r++)
        if (row_starts[r + 1] < row_starts[r])
            return bsrmv_fail(BSRMV_ERR_STRUCTURE, "row_starts decreases at rank %d", r + 1);
    return BSRMV_SUCCESS;
}

/* Rank r's rows of G as global-column BSR arrays (row_ptr rebased). */
static void slice(const bsrmv_matrix *G, int64_t r0, int64_t r1, int64_t *rp, int64_t *ci)
{
    const int64_t base = G->row_ptr[r0];
    for (int64_t i = r0; i <= r1; i++)
        rp[i - r0] = G->row_ptr[i] - base;
    for (int64_t k = base; k < G->row_ptr[r1]; k++)
        ci[k - base] = G->col_idx[k];
}

bsrmv_status bsrmv_dist_matrix_scatter(bsrmv_dist_matrix **A, MPI_Comm comm, int root,
                                       const bsrmv_matrix *G, const int64_t *row_starts)
{
    if (A)
        *A = NULL;
    if (comm == MPI_COMM_NULL)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "MPI_COMM_NULL");
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (root < 0 || root >= size)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "root %d is not a rank of the %d", root, size);

    /* starts of rows and blocks per rank, then the shape */
    int64_t *rs = malloc((size_t)(size + 1) * sizeof *rs);
    int64_t *bstart = malloc((size_t)(size + 1) * sizeof *bstart);
    bsrmv_status st = rs && bstart ? BSRMV_SUCCESS
                                   : bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d ranks", size);
    int64_t shape[6] = {0};
    if (!st && rank == root && !(st = check_root(G, row_starts, size))) {
        if (row_starts)
            memcpy(rs, row_starts, (size_t)(size + 1) * sizeof *rs);
        else
            st = bsrmv_dist_partition(G->row_ptr, G->mb, size, rs);
        for (int r = 0; r <= size && !st; r++)
            bstart[r] = G->row_ptr[rs[r]];
        shape[0] = G->mb;
        shape[1] = G->nb;
        shape[2] = G->bs;
        shape[3] = G->type;
        shape[4] = G->order;
        shape[5] = G->sym ? (G->herm ? BSRMV_SYM_HERMITIAN : BSRMV_SYM_SYMMETRIC) : 0;
    }
    if ((st = bsrmv_dist_agree(comm, st))) {
        free(rs);
        free(bstart);
        return st;
    }
    MPI_Bcast(shape, 6, MPI_INT64_T, root, comm);
    MPI_Bcast(rs, size + 1, MPI_INT64_T, root, comm);
    MPI_Bcast(bstart, size + 1, MPI_INT64_T, root, comm);
    const int64_t mbg = shape[0], nbg = shape[1];
    const int bs = (int)shape[2];
    const bsrmv_type type = (bsrmv_type)shape[3];
    const bsrmv_order order = (bsrmv_order)shape[4];
    const size_t blk = (size_t)bs * (size_t)bs * bsrmv_type_size(type);

    /* my rows; the root also needs room for the largest other slice */
    const int64_t mb = rs[rank + 1] - rs[rank], nnzb = bstart[rank + 1] - bstart[rank];
    int64_t most_mb = 0, most_nnzb = 0;
    for (int r = 0; r < size; r++) {
        if (rs[r + 1] - rs[r] > most_mb)
            most_mb = rs[r + 1] - rs[r];
        if (bstart[r + 1] - bstart[r] > most_nnzb)
            most_nnzb = bstart[r + 1] - bstart[r];
    }
    const int64_t room_mb = rank == root ? most_mb : mb, room_nnzb = rank == root ? most_nnzb : nnzb;
    int64_t *rp = malloc((size_t)(room_mb + 1) * sizeof *rp);
    int64_t *ci = malloc((size_t)(room_nnzb > 0 ? room_nnzb : 1) * sizeof *ci);
    void *val = rank == root ? NULL : bsrmv_big_alloc((size_t)nnzb * blk);
    if (!rp || !ci || (rank != root && !val))
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %lld blocks", (long long)nnzb);
    if (!(st = bsrmv_dist_agree(comm, st))) {
        if (rank == root) {
            for (int r = 0; r < size; r++) {
                if (r == root)
                    continue;
                const int64_t n = bstart[r + 1] - bstart[r];
                slice(G, rs[r], rs[r + 1], rp, ci);
                bsrmv_dist_send_bytes(rp, (size_t)(rs[r + 1] - rs[r] + 1) * sizeof *rp, r,
                                      DIST_TAG_SCATTER, comm);
                bsrmv_dist_send_bytes(ci, (size_t)n * sizeof *ci, r, DIST_TAG_SCATTER, comm);
                bsrmv_dist_send_bytes((const char *)G->val + (size_t)bstart[r] * blk,
                                      (size_t)n * blk, r, DIST_TAG_SCATTER, comm);
            }
            slice(G, rs[rank], rs[rank + 1], rp, ci);
            val = (char *)G->val + (size_t)bstart[rank] * blk;
        } else {
            bsrmv_dist_recv_bytes(rp, (size_t)(mb + 1) * sizeof *rp, root, DIST_TAG_SCATTER, comm);
            bsrmv_dist_recv_bytes(ci, (size_t)nnzb * sizeof *ci, root, DIST_TAG_SCATTER, comm);
            bsrmv_dist_recv_bytes(val, (size_t)nnzb * blk, root, DIST_TAG_SCATTER, comm);
        }
        const int square = mbg == nbg;
        const int64_t c0 = square ? rs[rank] : nbg * rank / size;
        const int64_t c1 = square ? rs[rank + 1] : nbg * (rank + 1) / size;
        st = shape[5] ? bsrmv_dist_matrix_create_sym(A, comm, nbg, bs, rs[rank], mb, nnzb, rp,
                                                     ci, val, type, order,
                                                     (bsrmv_symmetry)shape[5])
                      : bsrmv_dist_matrix_create(A, comm, mbg, nbg, bs, rs[rank], mb, c0,
                                                 c1 - c0, nnzb, rp, ci, val, type, order);
    }
    if (rank != root)
        bsrmv_big_free(val);
    free(rp);
    free(ci);
    free(rs);
    free(bstart);
    return st;
}

/* bsrmv_dist_matrix_read_mm; keep_sym: a symmetric or hermitian file in
 * that storage (bsrmv_mm_read_sym, then bsrmv_matrix_from_coo_sym/_herm). */
static bsrmv_status read_mm(bsrmv_dist_matrix **A, MPI_Comm comm, int root, const char *path,
                            int bs, bsrmv_blocking how, bsrmv_type type, bsrmv_order order,
                            const int64_t *row_starts, int keep_sym)
{
    if (A)
        *A = NULL;
    if (comm == MPI_COMM_NULL)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "MPI_COMM_NULL");
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (root < 0 || root >= size)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "root %d is not a rank of the %d", root, size);
    bsrmv_matrix *G = NULL;
    bsrmv_status st = BSRMV_SUCCESS;
    if (rank == root) {
        bsrmv_coo *coo = NULL;
        int kind = 0;
        if (!path)
            st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "NULL path");
        else if (!(st = keep_sym ? bsrmv_mm_read_sym(path, &coo, &kind)
                                 : bsrmv_mm_read(path, &coo)))
            st = kind == BSRMV_SYM_HERMITIAN
                     ? bsrmv_matrix_from_coo_herm(&G, coo, bs, how, type, order)
                 : kind == BSRMV_SYM_SYMMETRIC
                     ? bsrmv_matrix_from_coo_sym(&G, coo, bs, how, type, order)
                     : bsrmv_matrix_from_coo(&G, coo, bs, how, type, order);
        bsrmv_coo_destroy(coo);
    }
    if (!(st = bsrmv_dist_agree(comm, st)))
        st = bsrmv_dist_matrix_scatter(A, comm, root, G, row_starts);
    bsrmv_matrix_destroy(G);
    return st;
}

bsrmv_status bsrmv_dist_matrix_read_mm(bsrmv_dist_matrix **A, MPI_Comm comm, int root,
                                       const char *path, int bs, bsrmv_blocking how,
                                       bsrmv_type type, bsrmv_order order,
                                       const int64_t *row_starts)
{
    return read_mm(A, comm, root, path, bs, how, type, order, row_starts, 0);
}

bsrmv_status bsrmv_dist_matrix_read_mm_sym(bsrmv_dist_matrix **A, MPI_Comm comm, int root,
                                           const char *path, int bs, bsrmv_blocking how,
                                           bsrmv_type type, bsrmv_order order,
                                           const int64_t *row_starts)
{
    return read_mm(A, comm, root, path, bs, how, type, order, row_starts, 1);
}
