/* GPU ranks: one device per rank, the halo through NCCL.  The parts and
 * their row lists are the host handle's (src/mpi/dist.c), uploaded.
 *
 * OP_N on the caller's stream S, with a high-priority stream C for the
 * exchange (its few thread blocks are scheduled ahead of the local
 * kernel's, so the exchange runs beside it instead of after it):
 *   S: record "x ready"           C: wait; pack; grouped ncclRecv/ncclSend;
 *   S: local product                  record "halo"
 *   S: wait "halo"; off-rank product (beta 1)
 * OP_T: S: off-rank partial sums into the ghost buffer, record; C: wait,
 * send them to the owners, receive into the send buffer, record; S: local
 * product, wait, add what came back (one kernel per neighbour, in rank
 * order: entries of one neighbour are distinct columns, so no atomics and
 * the result is deterministic).  Nothing goes through the host. */
#include "dist_internal.h"
#include "solve/solve_internal.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <stdio.h>

struct bsrmv_dist_gpu_matrix {
    bsrmv_dist_matrix *A; /* the host plan (neighbours, counts) */
    int device;
    bsrmv_gpu_matrix *local, *offrank;
    int64_t *offrank_rows; /* device copy of A->offrank_rows (NULL: all rows) */
    void *row_buf;
    int32_t *send_idx;
    void *send_buf, *ghost_buf;
    ncclComm_t nccl;
    cudaStream_t comm_stream;
    cudaEvent_t ready, halo;
};

static bsrmv_status cuda_err(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return BSRMV_SUCCESS;
    return bsrmv_fail(e == cudaErrorMemoryAllocation ? BSRMV_ERR_DEVICE_NOMEM : BSRMV_ERR_DEVICE,
                      "%s: %s", what, cudaGetErrorString(e));
}

static bsrmv_status nccl_err(ncclResult_t e, const char *what)
{
    if (e == ncclSuccess)
        return BSRMV_SUCCESS;
    return bsrmv_fail(BSRMV_ERR_DEVICE, "%s: %s", what, ncclGetErrorString(e));
}

/* bs values per index: buf[i] = v[idx[i]] (add = 0, a gather) or
 * v[idx[i]] += buf[i] (add = 1); the halo's send lists (int32) and the
 * off-rank rows (int64) */
template <typename T, typename I>
__global__ void k_move(int64_t n, int bs, const I *__restrict__ idx, T *__restrict__ buf,
                       T *__restrict__ v, int add)
{
    const int64_t total = n * bs;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = i / bs, j = (int64_t)idx[k] * bs + (i - k * bs);
        if (add)
            v[j] += buf[i];
        else
            buf[i] = v[j];
    }
}

static unsigned grid_for(int64_t values)
{
    const int64_t g = (values + 255) / 256;
    return (unsigned)(g < 1 ? 1 : g > 4096 ? 4096 : g);
}

template <typename I>
static cudaError_t move(bsrmv_type type, int64_t n, int bs, const I *idx, void *buf, void *v,
                        int add, cudaStream_t s)
{
    if (n == 0)
        return cudaSuccess;
    const unsigned grid = grid_for(n * bs);
    if (type == BSRMV_DOUBLE)
        k_move<double, I><<<grid, 256, 0, s>>>(n, bs, idx, (double *)buf, (double *)v, add);
    else
        k_move<float, I><<<grid, 256, 0, s>>>(n, bs, idx, (float *)buf, (float *)v, add);
    return cudaGetLastError();
}

/* x's values the neighbours need, into the send buffer (x is only read) */
static cudaError_t pack(const bsrmv_dist_gpu_matrix *d, const void *x, cudaStream_t s)
{
    const bsrmv_dist_matrix *A = d->A;
    return move(A->type, A->send_start[A->nsend], A->bs, d->send_idx, d->send_buf, (void *)x, 0, s);
}

/* the transpose's partial sums, back in the send buffer, added to y one
 * neighbour after another (two neighbours may name the same row) */
static cudaError_t unpack_add(const bsrmv_dist_gpu_matrix *d, void *y, cudaStream_t s)
{
    const bsrmv_dist_matrix *A = d->A;
    const size_t vs = bsrmv_type_size(A->type);
    cudaError_t e = cudaSuccess;
    for (int j = 0; j < A->nsend && e == cudaSuccess; j++) {
        const int64_t a = A->send_start[j], n = A->send_start[j + 1] - a;
        e = move(A->type, n, A->bs, d->send_idx + a, (char *)d->send_buf + (size_t)(a * A->bs) * vs, y,
                 1, s);
    }
    return e;
}

/* y[rows[i]] += buf[i] (add = 1) or buf[i] = y[rows[i]] (add = 0) */
static cudaError_t rows_op(const bsrmv_dist_gpu_matrix *d, const void *v, int add,
                           cudaStream_t s)
{
    const bsrmv_dist_matrix *A = d->A;
    return move(A->type, A->offrank->mb, A->bs, d->offrank_rows, d->row_buf, (void *)v, add, s);
}

/* y += alpha * (off-rank part) * ghosts, on s */
static bsrmv_status offrank_n(const bsrmv_dist_gpu_matrix *d, double alpha, void *y,
                              cudaStream_t s)
{
    const bsrmv_dist_matrix *A = d->A;
    const int64_t gh = A->ghosts * A->bs, n = A->offrank->mb * A->bs;
    if (!d->offrank_rows)
        return bsrmv_gpu_spmv(BSRMV_OP_N, alpha, d->offrank, d->ghost_buf, gh, 1.0, y, n, s);
    bsrmv_status st =
        bsrmv_gpu_spmv(BSRMV_OP_N, alpha, d->offrank, d->ghost_buf, gh, 0.0, d->row_buf, n, s);
    if (st)
        return st;
    return cuda_err(rows_op(d, y, 1, s), "adding the off-rank rows");
}

/* ghosts = alpha * (off-rank part)^T * x, on s */
static bsrmv_status offrank_t(const bsrmv_dist_gpu_matrix *d, double alpha, const void *x,
                              cudaStream_t s)
{
    const bsrmv_dist_matrix *A = d->A;
    const int64_t gh = A->ghosts * A->bs, n = A->offrank->mb * A->bs;
    if (!d->offrank_rows)
        return bsrmv_gpu_spmv(BSRMV_OP_T, alpha, d->offrank, x, n, 0.0, d->ghost_buf, gh, s);
    bsrmv_status st = cuda_err(rows_op(d, x, 0, s), "gathering the off-rank rows");
    if (st)
        return st;
    return bsrmv_gpu_spmv(BSRMV_OP_T, alpha, d->offrank, d->row_buf, n, 0.0, d->ghost_buf, gh, s);
}

/* Grouped point-to-point on the exchange stream.  OP_N: ghosts in from
 * their owners, packed entries out; OP_T: the reverse. */
static bsrmv_status exchange(const bsrmv_dist_gpu_matrix *d, bsrmv_op op)
{
    const bsrmv_dist_matrix *A = d->A;
    const size_t bsv = (size_t)A->bs * bsrmv_type_size(A->type);
    const ncclDataType_t t = A->type == BSRMV_DOUBLE ? ncclDouble : ncclFloat;
    char *gb = (char *)d->ghost_buf, *sb = (char *)d->send_buf;
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; r == ncclSuccess && i < A->nrecv; i++) {
        const int64_t a = A->recv_start[i], n = A->recv_start[i + 1] - a;
        r = op == BSRMV_OP_N
                ? ncclRecv(gb + (size_t)a * bsv, (size_t)(n * A->bs), t, A->recv_rank[i], d->nccl,
                           d->comm_stream)
                : ncclSend(gb + (size_t)a * bsv, (size_t)(n * A->bs), t, A->recv_rank[i], d->nccl,
                           d->comm_stream);
    }
    for (int j = 0; r == ncclSuccess && j < A->nsend; j++) {
        const int64_t a = A->send_start[j], n = A->send_start[j + 1] - a;
        r = op == BSRMV_OP_N
                ? ncclSend(sb + (size_t)a * bsv, (size_t)(n * A->bs), t, A->send_rank[j], d->nccl,
                           d->comm_stream)
                : ncclRecv(sb + (size_t)a * bsv, (size_t)(n * A->bs), t, A->send_rank[j], d->nccl,
                           d->comm_stream);
    }
    const ncclResult_t r2 = ncclGroupEnd();
    return nccl_err(r != ncclSuccess ? r : r2, "the NCCL halo exchange");
}

extern "C" void bsrmv_dist_gpu_matrix_destroy(bsrmv_dist_gpu_matrix *d)
{
    if (!d)
        return;
    int prev;
    cudaGetDevice(&prev);
    cudaSetDevice(d->device);
    if (d->nccl)
        ncclCommDestroy(d->nccl);
    bsrmv_gpu_matrix_destroy(d->local);
    bsrmv_gpu_matrix_destroy(d->offrank);
    cudaFree(d->offrank_rows);
    cudaFree(d->row_buf);
    cudaFree(d->send_idx);
    cudaFree(d->send_buf);
    cudaFree(d->ghost_buf);
    if (d->comm_stream)
        cudaStreamDestroy(d->comm_stream);
    if (d->ready)
        cudaEventDestroy(d->ready);
    if (d->halo)
        cudaEventDestroy(d->halo);
    free(d);
    cudaSetDevice(prev);
}

extern "C" bsrmv_status bsrmv_dist_gpu_matrix_upload(bsrmv_dist_gpu_matrix **dA,
                                                     bsrmv_dist_matrix *A, int device)
{
    if (dA)
        *dA = NULL;
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_matrix_upload: NULL matrix");
    bsrmv_status st = BSRMV_SUCCESS;
    bsrmv_dist_gpu_matrix *d = NULL;
    if (!dA)
        st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_matrix_upload: NULL handle");
    /* every rank has the same type and storage: all refuse, after agreeing below */
    if (!st)
        st = bsrmv_refuse_complex(A->type, "bsrmv_dist_gpu_matrix_upload (GPU ranks)");
    if (!st && A->sym)
        st = bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "bsrmv_dist_gpu_matrix_upload: GPU ranks take "
                        "full storage; this matrix is in symmetric storage (host ranks only)");
    if (!st && !(d = (bsrmv_dist_gpu_matrix *)calloc(1, sizeof *d)))
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the handle");
    const size_t bsv = (size_t)A->bs * bsrmv_type_size(A->type);
    const int64_t nsend = A->send_start[A->nsend];
    if (!st) {
        d->A = A;
        d->device = device;
        int lo, hi;
        st = cuda_err(cudaSetDevice(device), "cudaSetDevice");
        if (!st)
            st = cuda_err(cudaDeviceGetStreamPriorityRange(&lo, &hi), "stream priorities");
        if (!st)
            st = cuda_err(cudaStreamCreateWithPriority(&d->comm_stream, cudaStreamNonBlocking, hi),
                          "creating the exchange stream");
        if (!st)
            st = cuda_err(cudaEventCreateWithFlags(&d->ready, cudaEventDisableTiming), "events");
        if (!st)
            st = cuda_err(cudaEventCreateWithFlags(&d->halo, cudaEventDisableTiming), "events");
        if (!st)
            st = bsrmv_gpu_matrix_upload(&d->local, A->local, device, NULL);
        if (!st && A->offrank->nnzb > 0) /* none: no ghosts, never multiplied */
            st = bsrmv_gpu_matrix_upload(&d->offrank, A->offrank, device, NULL);
        if (!st)
            st = cuda_err(cudaMalloc(&d->send_idx, (size_t)(nsend + 1) * sizeof(int32_t)),
                          "allocating the send list");
        if (!st)
            st = cuda_err(cudaMalloc(&d->send_buf, (size_t)(nsend + 1) * bsv),
                          "allocating the send buffer");
        if (!st)
            st = cuda_err(cudaMalloc(&d->ghost_buf, (size_t)(A->ghosts + 1) * bsv),
                          "allocating the ghost buffer");
        if (!st && nsend > 0)
            st = cuda_err(cudaMemcpy(d->send_idx, A->send_idx, (size_t)nsend * sizeof(int32_t),
                                     cudaMemcpyHostToDevice),
                          "copying the send list");
        if (!st && A->offrank_rows) {
            const int64_t mo = A->offrank->mb;
            st = cuda_err(cudaMalloc(&d->offrank_rows, (size_t)(mo + 1) * sizeof(int64_t)),
                          "allocating the off-rank rows");
            if (!st)
                st = cuda_err(cudaMalloc(&d->row_buf, (size_t)(mo + 1) * bsv),
                              "allocating the off-rank row buffer");
            if (!st && mo > 0)
                st = cuda_err(cudaMemcpy(d->offrank_rows, A->offrank_rows,
                                         (size_t)mo * sizeof(int64_t), cudaMemcpyHostToDevice),
                              "copying the off-rank rows");
        }
    }
    /* the NCCL communicator, bootstrapped through MPI; only once every
     * rank is ready, or a failed rank would leave the others in init */
    ncclUniqueId id;
    if (!(st = bsrmv_dist_agree(A->comm, st))) {
        if (A->rank == 0)
            st = nccl_err(ncclGetUniqueId(&id), "ncclGetUniqueId");
        if (!(st = bsrmv_dist_agree(A->comm, st))) {
            MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, A->comm);
            st = nccl_err(ncclCommInitRank(&d->nccl, A->size, id, A->rank), "ncclCommInitRank");
            st = bsrmv_dist_agree(A->comm, st);
        }
    }
    if (st) {
        bsrmv_dist_gpu_matrix_destroy(d);
        return st;
    }
    *dA = d;
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_dist_gpu_matrix_parts(const bsrmv_dist_gpu_matrix *dA,
                                                    bsrmv_gpu_matrix **local,
                                                    bsrmv_gpu_matrix **offrank,
                                                    const int64_t **d_offrank_rows)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_matrix_parts: NULL matrix");
    if (local)
        *local = dA->local;
    if (offrank)
        *offrank = dA->offrank;
    if (d_offrank_rows)
        *d_offrank_rows = dA->offrank_rows;
    return BSRMV_SUCCESS;
}

static bsrmv_status check_vec(const void *p, const char *what)
{
    cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess || at.type == cudaMemoryTypeHost ||
        at.type == cudaMemoryTypeUnregistered) {
        cudaGetLastError();
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s is not device memory", what);
    }
    return BSRMV_SUCCESS;
}

/* bsrmv_dist_gpu_spmv after its checks, on dA's device */
static bsrmv_status spmv_go(bsrmv_op op, double alpha, bsrmv_dist_gpu_matrix *dA, const void *d_x,
                            int64_t nx, double beta, void *d_y, int64_t ny, cudaStream_t s)
{
    const bsrmv_dist_matrix *A = dA->A;
    const int64_t gh = A->ghosts * A->bs;
    bsrmv_status st;
    if (alpha == 0)
        return bsrmv_gpu_spmv(op, 0.0, dA->local, d_x, nx, beta, d_y, ny, s);
    cudaError_t e;
    if (op == BSRMV_OP_N) {
        if ((e = cudaEventRecord(dA->ready, s)) != cudaSuccess ||
            (e = cudaStreamWaitEvent(dA->comm_stream, dA->ready, 0)) != cudaSuccess ||
            (e = pack(dA, d_x, dA->comm_stream)) != cudaSuccess)
            return cuda_err(e, "starting the halo");
        if ((st = exchange(dA, op)))
            return st;
        if ((e = cudaEventRecord(dA->halo, dA->comm_stream)) != cudaSuccess)
            return cuda_err(e, "recording the halo");
        if ((st = bsrmv_gpu_spmv(op, alpha, dA->local, d_x, nx, beta, d_y, ny, s)))
            return st;
        if ((e = cudaStreamWaitEvent(s, dA->halo, 0)) != cudaSuccess)
            return cuda_err(e, "waiting for the halo");
        if (gh > 0)
            st = offrank_n(dA, alpha, d_y, s);
        return st;
    }
    if (gh > 0 && (st = offrank_t(dA, alpha, d_x, s)))
        return st;
    if ((e = cudaEventRecord(dA->ready, s)) != cudaSuccess ||
        (e = cudaStreamWaitEvent(dA->comm_stream, dA->ready, 0)) != cudaSuccess)
        return cuda_err(e, "starting the reverse halo");
    if ((st = exchange(dA, op)))
        return st;
    if ((e = cudaEventRecord(dA->halo, dA->comm_stream)) != cudaSuccess)
        return cuda_err(e, "recording the halo");
    if ((st = bsrmv_gpu_spmv(op, alpha, dA->local, d_x, nx, beta, d_y, ny, s)))
        return st;
    if ((e = cudaStreamWaitEvent(s, dA->halo, 0)) != cudaSuccess ||
        (e = unpack_add(dA, d_y, s)) != cudaSuccess)
        return cuda_err(e, "adding the reverse halo");
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_dist_gpu_spmv(bsrmv_op op, double alpha, bsrmv_dist_gpu_matrix *dA,
                                            const void *d_x, int64_t nx, double beta, void *d_y,
                                            int64_t ny, void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_spmv: NULL matrix");
    /* distributed matrices are real: the conjugate transpose is the transpose */
    if (op == BSRMV_OP_C)
        op = BSRMV_OP_T;
    const bsrmv_dist_matrix *A = dA->A;
    const int64_t rows = A->mb * A->bs, cols = A->nb * A->bs;
    bsrmv_status st = BSRMV_SUCCESS;
    if (op != BSRMV_OP_N && op != BSRMV_OP_T)
        st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_spmv: unknown op %d", (int)op);
    else if (nx != (op == BSRMV_OP_N ? cols : rows) || ny != (op == BSRMV_OP_N ? rows : cols))
        st = bsrmv_fail(BSRMV_ERR_DIMENSION,
                        "bsrmv_dist_gpu_spmv: x has %lld and y %lld entries, this rank's part "
                        "of op(A) is %lld x %lld",
                        (long long)nx, (long long)ny,
                        (long long)(op == BSRMV_OP_N ? rows : cols),
                        (long long)(op == BSRMV_OP_N ? cols : rows));
    else if (nx > 0 && alpha != 0)
        st = check_vec(d_x, "x");
    if (!st && ny > 0)
        st = check_vec(d_y, "y");
    if ((st = bsrmv_dist_agree(A->comm, st)))
        return st;
    if ((st = cuda_err(cudaSetDevice(dA->device), "cudaSetDevice")))
        return st;
    return spmv_go(op, alpha, dA, d_x, nx, beta, d_y, ny, (cudaStream_t)stream);
}

extern "C" bsrmv_status bsrmv_dist_gpu_spmv_run(bsrmv_dist_gpu_matrix *dA, const void *d_x,
                                                void *d_y, void *stream)
{
    const int64_t n = dA->A->mb * dA->A->bs;
    return spmv_go(BSRMV_OP_N, 1.0, dA, d_x, n, 0.0, d_y, n, (cudaStream_t)stream);
}

extern "C" bsrmv_status bsrmv_dist_gpu_halo_exchange(bsrmv_dist_gpu_matrix *dA, const void *d_x,
                                                     int64_t nx, void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_halo_exchange: NULL matrix");
    const bsrmv_dist_matrix *A = dA->A;
    bsrmv_status st = BSRMV_SUCCESS;
    if (nx != A->nb * A->bs)
        st = bsrmv_fail(BSRMV_ERR_DIMENSION,
                        "bsrmv_dist_gpu_halo_exchange: x has %lld entries, this rank owns %lld",
                        (long long)nx, (long long)(A->nb * A->bs));
    else if (nx > 0)
        st = check_vec(d_x, "x");
    if ((st = bsrmv_dist_agree(A->comm, st)))
        return st;
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e;
    if ((e = cudaSetDevice(dA->device)) != cudaSuccess ||
        (e = cudaEventRecord(dA->ready, s)) != cudaSuccess ||
        (e = cudaStreamWaitEvent(dA->comm_stream, dA->ready, 0)) != cudaSuccess ||
        (e = pack(dA, d_x, dA->comm_stream)) != cudaSuccess)
        return cuda_err(e, "starting the halo");
    if ((st = exchange(dA, BSRMV_OP_N)))
        return st;
    if ((e = cudaEventRecord(dA->halo, dA->comm_stream)) != cudaSuccess ||
        (e = cudaStreamWaitEvent(s, dA->halo, 0)) != cudaSuccess)
        return cuda_err(e, "finishing the halo");
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_dist_gpu_sync(bsrmv_dist_gpu_matrix *dA)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_sync: NULL matrix");
    cudaError_t e;
    if ((e = cudaSetDevice(dA->device)) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess)
        return cuda_err(e, "waiting for the device");
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_dist_gpu_precond_block_jacobi(bsrmv_gpu_precond **dP,
                                                            const bsrmv_dist_gpu_matrix *dA)
{
    if (dP)
        *dP = NULL;
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "bsrmv_dist_gpu_precond_block_jacobi: NULL matrix");
    bsrmv_precond *P = NULL;
    bsrmv_status st = bsrmv_dist_precond_block_jacobi(&P, dA->A);
    if (!st && !dP)
        st = bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_precond_block_jacobi: NULL handle");
    if (!st)
        st = bsrmv_gpu_precond_upload(dP, P, dA->device);
    bsrmv_precond_destroy(P);
    if ((st = bsrmv_dist_agree(dA->A->comm, st)) && dP) {
        bsrmv_gpu_precond_destroy(*dP);
        *dP = NULL;
    }
    return st;
}

extern "C" bsrmv_status bsrmv_dist_gpu_solve(bsrmv_solver method, bsrmv_dist_gpu_matrix *dA,
                                             const bsrmv_gpu_precond *dP, const void *d_b,
                                             void *d_x, int64_t n, const bsrmv_solve_options *opt,
                                             bsrmv_solve_report *report, void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_dist_gpu_solve: NULL matrix");
    bsrmv_status st = bsrmv_dist_sv_check(dA->A, dP != NULL);
    if (!st)
        st = cuda_err(cudaSetDevice(dA->device), "cudaSetDevice");
    sv_backend dev = {};
    if (!st)
        st = bsrmv_sv_gpu_init(&dev, method, dA->local, dP, d_b, d_x, n, opt, stream);
    return bsrmv_dist_sv_run(method, dA->A, dA, stream, st, &dev, bsrmv_sv_gpu_free, d_b, d_x,
                             opt, report);
}
