/* CPU SpMV driver: argument checks, alpha/beta special cases, the thread
 * split, and the choice between compile-time-bs and generic kernels.  The
 * kernels themselves are generated from kernel_template.h. */
#include "internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Block sizes with a compile-time kernel (PETSc BAIJ style: the sizes
 * solvers use, then powers and multiples common in multi-component PDEs). */
#define BSRMV_CPU_BLOCK_SIZES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(12) X(16) X(24) X(32)

/* Independent accumulator sets per block size: enough blocks in flight to
 * hide FMA latency, few enough to stay in registers. */
#define UNROLL_FOR(B) ((B) == 1 ? 1 : (B) <= 2 ? 4 : (B) <= 6 ? 2 : 1)

typedef void (*kernel_n)(int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A,
                         const void *x, double alpha, double beta, void *y);
/* out[0..bs) = blocks [k0, k1) of one block row times x (a cut row's share). */
typedef void (*kernel_p)(int bs, int64_t k0, int64_t k1, const bsrmv_matrix *A,
                         const void *x, void *out);
typedef void (*kernel_t)(int bs, bsrmv_cut c0, bsrmv_cut c1, const bsrmv_matrix *A,
                         const void *x, void *yt);
typedef struct kernel_set {
    int bs;
    kernel_n n[2][2]; /* by row_ptr width (RP_WIDTH), then bsrmv_order */
    kernel_p p[2];    /* by bsrmv_order */
    kernel_t t[2][2];
} kernel_set;
/* The first index of kernel_set's n and t: 0 for a 64-bit row_ptr, 1 for
 * a 32-bit one. */
#define RP_WIDTH(A) ((A)->row_ptr ? 0 : 1)
typedef struct vector_ops {
    void (*scale)(int64_t j0, int64_t j1, double beta, void *y);
    void (*reduce)(int64_t j0, int64_t j1, int nbuf, int64_t stride, const void *bufs,
                   double alpha, double beta, void *y);
    void (*fixup)(int n, const int64_t *row, const void *part, int bs, double alpha,
                  double beta, void *y);
} vector_ops;

#define T double
#define SUF d
#include "kernel_template.h"
#undef T
#undef SUF
#define T float
#define SUF s
#include "kernel_template.h"
#undef T
#undef SUF


/* Position of bs in the specialised tables, -1 if it has none. */
static int specialised_index(int bs)
{
    const int n = (int)(sizeof specialised_d / sizeof specialised_d[0]);
    for (int i = 0; i < n; i++)
        if (specialised_d[i].bs == bs)
            return i;
    return -1;
}

int bsrmv_cpu_has_kernel(int bs)
{
    return specialised_index(bs) >= 0;
}

static const kernel_set *pick_kernels(const bsrmv_matrix *A)
{
    int i = A->cpu_kernel == BSRMV_CPU_AUTO ? specialised_index(A->bs) : -1;
    if (i >= 0)
        return A->type == BSRMV_DOUBLE ? &specialised_d[i] : &specialised_s[i];
    return A->type == BSRMV_DOUBLE ? &generic_d : &generic_s;
}

int bsrmv_num_threads(void)
{
    return omp_get_max_threads();
}

static void scale_parallel(const vector_ops *ops, int64_t n, double beta, void *y)
{
#pragma omp parallel num_threads(threads_for(n))
    {
        int p = omp_get_thread_num(), np = omp_get_num_threads();
        ops->scale(n * p / np, n * (p + 1) / np, beta, y);
    }
}

/* Each thread writes its whole rows straight into y.  A row cut by the
 * split (partition.c) is summed in parts: the part at the start of a
 * thread's range goes to slot 2p of `part`, the part at its end to slot
 * 2p+1, and ops->fixup adds them up and applies alpha and beta once the
 * threads are done.  Regular matrices pay two short partial rows per
 * thread and one small allocation per call. */
static bsrmv_status spmv_n(const kernel_set *ks, const vector_ops *ops, const bsrmv_matrix *A,
                           const void *x, double alpha, double beta, void *y)
{
    const int bs = A->bs;
    const int nt = threads_for(A->nnzb * bs * bs + A->mb);
    const kernel_n kn = ks->n[RP_WIDTH(A)][A->order];
    if (nt == 1) {
        kn(bs, 0, A->mb, A, x, alpha, beta, y);
        return BSRMV_SUCCESS;
    }
    const size_t vs = bsrmv_type_size(A->type);
    int64_t *row = bsrmv_malloc(2 * (size_t)nt * (sizeof *row + (size_t)bs * vs));
    if (!row)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d partial rows of bs %d",
                          2 * nt, bs);
    char *part = (char *)(row + 2 * nt);
    int team = 1;
#pragma omp parallel num_threads(nt)
    {
        const int p = omp_get_thread_num(), np = omp_get_num_threads();
        if (p == 0)
            team = np;
        const bsrmv_cut c0 = bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, bs, p, np);
        const bsrmv_cut c1 =
            bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, bs, p + 1, np);
        int64_t i = c0.row;
        row[2 * p] = row[2 * p + 1] = -1;
        if (c0.blk > bsrmv_row_start(A, c0.row)) {
            const int64_t end = c1.row == c0.row ? c1.blk : bsrmv_row_start(A, c0.row + 1);
            ks->p[A->order](bs, c0.blk, end, A, x, part + (size_t)(2 * p) * bs * vs);
            row[2 * p] = i++;
        }
        if (i < c1.row)
            kn(bs, i, c1.row, A, x, alpha, beta, y);
        if (c1.row >= i && c1.blk > bsrmv_row_start(A, c1.row)) {
            ks->p[A->order](bs, bsrmv_row_start(A, c1.row), c1.blk, A, x,
                            part + (size_t)(2 * p + 1) * bs * vs);
            row[2 * p + 1] = c1.row;
        }
    }
    ops->fixup(2 * team, row, part, bs, alpha, beta, y);
    bsrmv_free(row);
    return BSRMV_SUCCESS;
}

/* Each thread scatters its part of the blocks (the same split as spmv_n,
 * cut rows included) into a private copy of y; the copies are then summed.
 * Costs threads*ny extra memory. */
static bsrmv_status spmv_t(const kernel_set *ks, const vector_ops *ops, const bsrmv_matrix *A,
                           const void *x, double alpha, double beta, void *y, int64_t ny)
{
    const int64_t work = A->nnzb * A->bs * A->bs + A->mb;
    const int nt = threads_for(work);
    const size_t vs = bsrmv_type_size(A->type);
    size_t bytes;
    if (!bsrmv_bytes(ny * (int64_t)nt, vs, &bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "transpose buffers overflow");
    char *bufs = bsrmv_big_alloc(bytes);
    if (!bufs)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d transpose buffers of %lld",
                          nt, (long long)ny);
#pragma omp parallel num_threads(nt)
    {
        int p = omp_get_thread_num(), np = omp_get_num_threads();
        void *mine = bufs + (size_t)p * (size_t)ny * vs;
        memset(mine, 0, (size_t)ny * vs);
        const bsrmv_cut c0 =
            bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, A->bs, p, np);
        const bsrmv_cut c1 =
            bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, A->bs, p + 1, np);
        ks->t[RP_WIDTH(A)][A->order](A->bs, c0, c1, A, x, mine);
#pragma omp barrier
        ops->reduce(ny * p / np, ny * (p + 1) / np, np, ny, bufs, alpha, beta, y);
    }
    bsrmv_big_free(bufs);
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_spmv(bsrmv_op op, double alpha, const bsrmv_matrix *A, const void *x,
                        int64_t nx, double beta, void *y, int64_t ny)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_spmv: NULL matrix");
    if (op != BSRMV_OP_N && op != BSRMV_OP_T)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_spmv: unknown op %d", (int)op);
    const int64_t rows = A->mb * A->bs, cols = A->nb * A->bs;
    const int64_t want_x = op == BSRMV_OP_N ? cols : rows;
    const int64_t want_y = op == BSRMV_OP_N ? rows : cols;
    if (nx != want_x || ny != want_y)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "bsrmv_spmv: op(A) is %lld x %lld but x has %lld and y %lld entries",
                          (long long)want_y, (long long)want_x, (long long)nx, (long long)ny);
    if ((ny > 0 && !y) || (nx > 0 && !x && alpha != 0))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_spmv: NULL vector");
    if (ny == 0)
        return BSRMV_SUCCESS;
    bsrmv_status st;
    if (alpha != 0 && (st = bsrmv_check_disjoint("bsrmv_spmv", x, nx, y, ny,
                                                 bsrmv_type_size(A->type))))
        return st;
    const vector_ops *ops = A->type == BSRMV_DOUBLE ? &vops_d : &vops_s;
    if (alpha == 0 || A->nnzb == 0) {
        scale_parallel(ops, ny, beta, y);
        return BSRMV_SUCCESS;
    }
    const kernel_set *ks = pick_kernels(A);
    if (op == BSRMV_OP_T)
        return spmv_t(ks, ops, A, x, alpha, beta, y, ny);
    return spmv_n(ks, ops, A, x, alpha, beta, y);
}
