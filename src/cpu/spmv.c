/* CPU SpMV driver: argument checks, alpha/beta special cases, the thread
 * split, and the choice between compile-time-bs and generic kernels.  The
 * kernels themselves are generated from kernel_template.h, one translation
 * unit per type (spmv_kernels.h). */
#include "spmv_kernels.h"
#include "template_defs.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The largest block, in bytes, whose values the general product prefetches
 * (prefetch_ahead in kernel_template.h).  The prefetch made one core of a
 * 2-core Xeon VM read 1.1-1.4x faster.  On one core of a 2-core AMD EPYC
 * (Zen 4) VM, both loops timed alternately in one process: at bs 4-16 the
 * SpMV ran 1.07-1.30x faster without it (27-point grids of ~350 MB and 9
 * promoted matrices of 22-200 MB, where it had lost to PETSc SeqBAIJ and
 * scipy's BSR), no distance from 1 to 8 KiB nor prefetcht1 or prefetchnta
 * doing better than none; at bs 2 it ran 1.19x faster with it on the
 * 383 MB grid (level at bs 3 and on two threads), 1.05-1.10x slower on
 * matrices of 1-10 MB.  So on AMD CPUs only blocks of up to 72 bytes (bs
 * 3 in double) are prefetched.  BSRMV_CPU_PREFETCH=0 (never) or 1 (up to
 * 2 KiB, as elsewhere) in the environment at load time overrides it. */
int bsrmv_cpu_prefetch_max = 2048;

__attribute__((constructor)) static void prefetch_init(void)
{
    const char *e = getenv("BSRMV_CPU_PREFETCH");
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_is("amd"))
        bsrmv_cpu_prefetch_max = 72;
#endif
    if (e && (*e == '0' || *e == '1'))
        bsrmv_cpu_prefetch_max = *e == '1' ? 2048 : 0;
}

/* Position of bs in the specialised tables, -1 if it has none. */
#define COUNT_(B) +1
static const int nspecialised = 0 BSRMV_CPU_BLOCK_SIZES(COUNT_);
static const int nsym_specialised = 0 BSRMV_CPU_SYM_BLOCK_SIZES(COUNT_);
#undef COUNT_
static int specialised_index(int bs)
{
    for (int i = 0; i < nspecialised; i++)
        if (bsrmv_cpu_kernels_d.specialised[i].bs == bs)
            return i;
    return -1;
}

int bsrmv_cpu_has_kernel(int bs)
{
    return specialised_index(bs) >= 0;
}

static const cpu_kernels *type_kernels(const bsrmv_matrix *A)
{
    switch (A->type) {
    case BSRMV_DOUBLE: return &bsrmv_cpu_kernels_d;
    case BSRMV_FLOAT:
        return A->vtype == BSRMV_DOUBLE ? &bsrmv_cpu_kernels_sd : &bsrmv_cpu_kernels_s;
    case BSRMV_COMPLEX_FLOAT: return &bsrmv_cpu_kernels_c;
    case BSRMV_COMPLEX_DOUBLE: return &bsrmv_cpu_kernels_z;
    }
    return NULL;
}

/* The complex types' symmetric-storage kernels are in tables of their own. */
static const sym_set *pick_sym(const bsrmv_matrix *A)
{
    const cpu_kernels *k = A->type == BSRMV_COMPLEX_DOUBLE  ? &bsrmv_cpu_sym_kernels_z
                           : A->type == BSRMV_COMPLEX_FLOAT ? &bsrmv_cpu_sym_kernels_c
                                                            : type_kernels(A);
    for (int i = 0; A->cpu_kernel == BSRMV_CPU_AUTO && i < nsym_specialised; i++)
        if (k->sym_specialised[i].bs == A->bs)
            return &k->sym_specialised[i];
    return k->sym_generic;
}

static const kernel_set *pick_kernels(const bsrmv_matrix *A)
{
    const int i = A->cpu_kernel == BSRMV_CPU_AUTO ? specialised_index(A->bs) : -1;
    const cpu_kernels *k = type_kernels(A);
    return i >= 0 ? &k->specialised[i] : k->generic;
}

int bsrmv_num_threads(void)
{
    return omp_get_max_threads();
}

static void scale_parallel(const vector_ops *ops, int64_t n, scalar beta, void *y)
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
                           const void *x, scalar alpha, scalar beta, void *y)
{
    const int bs = A->bs;
    const int nt = threads_for(A->nnzb * bs * bs + A->mb);
    const bool short_rows = A->nnzb < SHORT_ROW_BLOCKS * A->mb;
    const kernel_n kn = (short_rows ? ks->n1 : ks->n)[RP_WIDTH(A)][A->order];
    if (nt == 1) {
        kn(bs, 0, A->mb, A, x, alpha, beta, y);
        return BSRMV_SUCCESS;
    }
    const size_t vs = bsrmv_type_size(A->vtype);
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
                           bsrmv_op op, const void *x, scalar alpha, scalar beta, void *y,
                           int64_t ny)
{
    const int64_t work = A->nnzb * A->bs * A->bs + A->mb;
    const int nt = threads_for(work);
    const size_t vs = bsrmv_type_size(A->vtype);
    size_t bytes;
    if (!bsrmv_bytes(ny * (int64_t)nt, vs, &bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "transpose buffers overflow");
    char *bufs = bsrmv_scratch(bytes);
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
        (op == BSRMV_OP_C ? ks->c : ks->t)[RP_WIDTH(A)][A->order](A->bs, c0, c1, A, x, mine);
#pragma omp barrier
        ops->reduce(ny * p / np, ny * (p + 1) / np, np, ny, bufs, alpha, beta, y);
    }
    return BSRMV_SUCCESS;
}

/* Symmetric storage.  The block rows are cut into nt parts (the cuts of
 * partition.c moved to row starts).  A part's mirrored blocks write y at
 * rows after its own, never before (only upper blocks are stored): those
 * within its rows go straight to y, the others to a buffer of its own that
 * spans from its last row to the furthest column its rows reach (a band's
 * width for banded matrices).  After one barrier each part adds, in part
 * order, the buffers that reach into its rows: no atomics, and the result
 * does not depend on timing.  The buffers are reserved for the worst case
 * (up to nt times y, address space only) before the parallel region, so
 * that it needs no other synchronisation: only the touched part of each
 * becomes memory, kept for the calling thread's next call (src/scratch.c). */
static bsrmv_status spmv_sym(const sym_set *ks, const vector_ops *ops, const bsrmv_matrix *A,
                             int cj, const void *x, scalar alpha, scalar beta, void *y)
{
    const int64_t *rp = A->row_ptr; /* symmetric storage: always 64-bit */
    const int bs = A->bs;
    const size_t vs = bsrmv_type_size(A->vtype);
    const int nt = threads_for(2 * A->nnzb * bs * bs + A->mb);
    const kernel_s ksym = (A->nnzb < SYM_SHORT_ROW_BLOCKS * A->mb ? ks->s1 : ks->s)[A->order];
    if (nt == 1) {
        ops->scale(0, A->mb * bs, beta, y);
        ksym(bs, 0, A->mb, A, x, alpha, y, NULL, cj);
        return BSRMV_SUCCESS;
    }
    /* Per part: first row, buffer start (in block rows), buffer length. */
    int64_t *tab = bsrmv_malloc(3 * ((size_t)nt + 1) * sizeof *tab);
    if (!tab)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the split of %d threads", nt);
    int64_t *first = tab, *off = tab + nt + 1, *len = tab + 2 * (nt + 1);
    for (int p = 0; p < nt; p++)
        first[p] = bsrmv_partition_cut(rp, NULL, A->mb, bs, p, nt).row;
    first[nt] = A->mb;
    int64_t total = 0;
    for (int p = 0; p < nt; p++) {
        off[p] = total;
        total += A->mb - first[p + 1];
    }
    size_t bytes;
    char *buf = NULL;
    if (total > 0 && (!bsrmv_bytes(total * bs, vs, &bytes) || !(buf = bsrmv_scratch(bytes)))) {
        bsrmv_free(tab);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the symmetric product's buffers "
                                           "(%d threads, %lld block rows)",
                          nt, (long long)A->mb);
    }
#pragma omp parallel num_threads(nt)
    {
        const int tid = omp_get_thread_num(), np = omp_get_num_threads();
        for (int p = tid; p < nt; p += np) {
            const int64_t r0 = first[p], r1 = first[p + 1];
            int64_t reach = r1;
            for (int64_t i = r0; i < r1; i++)
                if (rp[i + 1] > rp[i] && A->col_idx[rp[i + 1] - 1] >= reach)
                    reach = A->col_idx[rp[i + 1] - 1] + 1;
            len[p] = reach - r1;
            char *mine = len[p] > 0 ? buf + (size_t)(off[p] * bs) * vs : NULL;
            if (mine)
                memset(mine, 0, (size_t)(len[p] * bs) * vs);
            ops->scale(r0 * bs, r1 * bs, beta, y);
            ksym(bs, r0, r1, A, x, alpha, y, mine, cj);
        }
#pragma omp barrier
        for (int p = tid; p < nt; p += np)
            for (int q = 0; q < p; q++) {
                const int64_t end = first[q + 1];
                const int64_t lo = end > first[p] ? end : first[p];
                const int64_t hi = end + len[q] < first[p + 1] ? end + len[q] : first[p + 1];
                if (lo < hi)
                    ops->add((hi - lo) * bs, buf + (size_t)((off[q] + lo - end) * bs) * vs,
                             (char *)y + (size_t)(lo * bs) * vs);
            }
    }
    bsrmv_free(tab);
    return BSRMV_SUCCESS;
}

static const vector_ops *pick_vops(bsrmv_type vtype)
{
    switch (vtype) {
    case BSRMV_FLOAT: return bsrmv_cpu_kernels_s.vops;
    case BSRMV_DOUBLE: return bsrmv_cpu_kernels_d.vops;
    case BSRMV_COMPLEX_FLOAT: return bsrmv_cpu_kernels_c.vops;
    case BSRMV_COMPLEX_DOUBLE: return bsrmv_cpu_kernels_z.vops;
    }
    return NULL;
}

static bsrmv_status spmv(const char *who, bsrmv_op op, scalar alpha, const bsrmv_matrix *A,
                         const void *x, int64_t nx, scalar beta, void *y, int64_t ny)
{
    if (op != BSRMV_OP_N && op != BSRMV_OP_T && op != BSRMV_OP_C)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: unknown op %d", who, (int)op);
    const int64_t rows = A->mb * A->bs, cols = A->nb * A->bs;
    const int64_t want_x = op == BSRMV_OP_N ? cols : rows;
    const int64_t want_y = op == BSRMV_OP_N ? rows : cols;
    if (nx != want_x || ny != want_y)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "%s: op(A) is %lld x %lld but x has %lld and y %lld entries", who,
                          (long long)want_y, (long long)want_x, (long long)nx, (long long)ny);
    if ((ny > 0 && !y) || (nx > 0 && !x && alpha != 0))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: NULL vector", who);
    if (ny == 0)
        return BSRMV_SUCCESS;
    bsrmv_status st;
    if (alpha != 0 &&
        (st = bsrmv_check_disjoint(who, x, nx, y, ny, bsrmv_type_size(A->vtype))))
        return st;
    const vector_ops *ops = pick_vops(A->vtype);
    if (alpha == 0 || A->nnzb == 0) {
        scale_parallel(ops, ny, beta, y);
        return BSRMV_SUCCESS;
    }
    /* Symmetric storage: A^T = A, and A^H = conj(A) (the values conjugated
     * in both uses); Hermitian: A^H = A, with the mirrored use conjugated,
     * and A^T = conj(A) (the direct use conjugated).  rows_sym takes the
     * two as bits 0 (direct) and 1 (mirrored) of cj. */
    if (A->sym) {
        const bool conj_all = A->herm ? op == BSRMV_OP_T : op == BSRMV_OP_C;
        const int cj = conj_all ? (A->herm ? 1 : 3) : (A->herm ? 2 : 0);
        return spmv_sym(pick_sym(A), ops, A, cj, x, alpha, beta, y);
    }
    const kernel_set *ks = pick_kernels(A);
    if (op != BSRMV_OP_N)
        return spmv_t(ks, ops, A, op, x, alpha, beta, y, ny);
    return spmv_n(ks, ops, A, x, alpha, beta, y);
}

bsrmv_status bsrmv_spmv(bsrmv_op op, double alpha, const bsrmv_matrix *A, const void *x,
                        int64_t nx, double beta, void *y, int64_t ny)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_spmv: NULL matrix");
    return spmv("bsrmv_spmv", op, alpha, A, x, nx, beta, y, ny);
}

bsrmv_status bsrmv_spmv_scalars(bsrmv_op op, const void *alpha, const bsrmv_matrix *A,
                                const void *x, int64_t nx, const void *beta, void *y,
                                int64_t ny)
{
    if (!A || !alpha || !beta)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_spmv_scalars: NULL matrix or scalar");
    return spmv("bsrmv_spmv_scalars", op, load_scalar(A->vtype, alpha), A, x, nx,
                load_scalar(A->vtype, beta), y, ny);
}
