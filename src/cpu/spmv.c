/* CPU SpMV driver: argument checks, alpha/beta special cases, the thread
 * split, and the choice between compile-time-bs and generic kernels.  The
 * kernels themselves are generated from kernel_template.h. */
#include "internal.h"

#include <omp.h>
#include <string.h>

/* Block sizes with a compile-time kernel (PETSc BAIJ style: the sizes
 * solvers use, then powers and multiples common in multi-component PDEs). */
#define BSRMV_CPU_BLOCK_SIZES(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(12) X(16) X(24) X(32)

/* Independent accumulator sets per block size: enough blocks in flight to
 * hide FMA latency, few enough to stay in registers. */
#define UNROLL_FOR(B) ((B) == 1 ? 1 : (B) <= 2 ? 4 : (B) <= 6 ? 2 : 1)

typedef void (*kernel_n)(int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A,
                         const void *x, double alpha, double beta, void *y);
typedef void (*kernel_t)(int bs, int64_t r0, int64_t r1, const bsrmv_matrix *A,
                         const void *x, void *yt);
typedef struct kernel_set {
    int bs;
    kernel_n n[2]; /* by bsrmv_order */
    kernel_t t[2];
} kernel_set;
typedef struct vector_ops {
    void (*scale)(int64_t j0, int64_t j1, double beta, void *y);
    void (*reduce)(int64_t j0, int64_t j1, int nbuf, int64_t stride, const void *bufs,
                   double alpha, double beta, void *y);
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

/* Below this many multiply-adds a parallel region costs more than it saves. */
#define PARALLEL_MIN_WORK ((int64_t)1 << 13)

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

static int threads_for(int64_t work)
{
    return work < PARALLEL_MIN_WORK ? 1 : omp_get_max_threads();
}

static void scale_parallel(const vector_ops *ops, int64_t n, double beta, void *y)
{
#pragma omp parallel num_threads(threads_for(n))
    {
        int p = omp_get_thread_num(), np = omp_get_num_threads();
        ops->scale(n * p / np, n * (p + 1) / np, beta, y);
    }
}

static void spmv_n(const kernel_set *ks, const bsrmv_matrix *A, const void *x, double alpha,
                   double beta, void *y)
{
    const int64_t work = A->nnzb * A->bs * A->bs + A->mb;
#pragma omp parallel num_threads(threads_for(work))
    {
        int p = omp_get_thread_num(), np = omp_get_num_threads();
        int64_t r0 = bsrmv_partition_boundary(A->row_ptr, A->mb, A->bs, p, np);
        int64_t r1 = bsrmv_partition_boundary(A->row_ptr, A->mb, A->bs, p + 1, np);
        ks->n[A->order](A->bs, r0, r1, A, x, alpha, beta, y);
    }
}

/* Each thread scatters its rows' contribution into a private copy of y;
 * the copies are then summed.  Costs threads*ny extra memory. */
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
        int64_t r0 = bsrmv_partition_boundary(A->row_ptr, A->mb, A->bs, p, np);
        int64_t r1 = bsrmv_partition_boundary(A->row_ptr, A->mb, A->bs, p + 1, np);
        ks->t[A->order](A->bs, r0, r1, A, x, mine);
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
    const vector_ops *ops = A->type == BSRMV_DOUBLE ? &vops_d : &vops_s;
    if (alpha == 0 || A->nnzb == 0) {
        scale_parallel(ops, ny, beta, y);
        return BSRMV_SUCCESS;
    }
    const kernel_set *ks = pick_kernels(A);
    if (op == BSRMV_OP_T)
        return spmv_t(ks, ops, A, x, alpha, beta, y, ny);
    spmv_n(ks, A, x, alpha, beta, y);
    return BSRMV_SUCCESS;
}
