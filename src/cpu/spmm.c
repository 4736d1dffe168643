/* CPU SpMM driver (Y = alpha*op(A)*X + beta*Y for k vectors): argument
 * checks, the split of the k vectors into chunks that each stream A once,
 * the thread split (the SpMV one), and the choice of kernel by bs, chunk
 * width and block order.  The kernels: spmm_kernels.h. */
#include "spmm_kernels.h"
#include "template_defs.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Row of the kernel table for A: its bs's, or the generic one. */
static int table_row(const bsrmv_matrix *A)
{
    static const int sizes[] = {
#define SIZE_(B) B,
        SPMM_BLOCK_SIZES(SIZE_)
#undef SIZE_
    };
    const int n = (int)(sizeof sizes / sizeof sizes[0]);
    if (A->cpu_kernel == BSRMV_CPU_AUTO)
        for (int i = 0; i < n; i++)
            if (sizes[i] == A->bs)
                return i;
    return n;
}

#define WIDTH_OF_(B, K) K,
static const int mm_widths[SPMM_NUM_WIDTHS] = {SPMM_WIDTHS(WIDTH_OF_, 0)};
#undef WIDTH_OF_

/* Column of the kernel table (the order of SPMM_WIDTHS) for the next chunk
 * of op N with `left` vectors to go: the widest width that fits. */
static int chunk_column(int left)
{
    int c = 0;
    while (c + 1 < SPMM_NUM_WIDTHS && mm_widths[c + 1] <= left)
        c++;
    return c;
}

/* Entries a k-column multivector of n rows spans: false on overflow. */
static bool span(bsrmv_layout lay, int64_t n, int k, int64_t ld, int64_t *out)
{
    int64_t a, b;
    if (n == 0) {
        *out = 0;
        return true;
    }
    if (lay == BSRMV_LAYOUT_COL)
        return bsrmv_mul64(k - 1, ld, &a) && bsrmv_add64(a, n, out);
    return bsrmv_mul64(n - 1, ld, &b) && bsrmv_add64(b, k, out);
}

/* Sets g to op N's chunk of the vectors from j0 (the widest width that
 * fits k - j0, X and Y at its first column; *col: its column of the kernel
 * table) and returns the chunk as the kernels read it: with several
 * column-major vectors and pk given, X packed row-major into pk. */
static spmm_chunk chunk_n(spmm_chunk *g, const char *X, char *Y, int64_t ldx, bsrmv_layout lay,
                          int j0, int k, char *pk, size_t vs, int *col)
{
    *col = chunk_column(k - j0);
    g->kc = mm_widths[*col];
    const bool rowl = lay == BSRMV_LAYOUT_ROW;
    g->X = X + (size_t)(rowl ? j0 : j0 * ldx) * vs;
    g->Y = Y + (size_t)(rowl ? j0 : j0 * g->ldy) * vs;
    g->ldx = ldx;
    /* One column-major vector is a row-major one with ld 1. */
    g->xlayout = g->kc == 1 ? BSRMV_LAYOUT_ROW : lay;
    if (!rowl && g->kc == 1)
        g->ldx = 1;
    spmm_chunk packed = *g;
    if (pk && g->kc > 1) {
        packed.X = pk;
        packed.ldx = packed.kc;
        packed.xlayout = BSRMV_LAYOUT_ROW;
    }
    return packed;
}

/* The column-major layout with more than one vector: each chunk of X is
 * first copied row-major (nx*kc values, in parallel, next to the kernel),
 * so that the kernels read each block's rows of X as contiguous runs
 * instead of gathering them (the gather cost about half the speed at
 * k = 4..8 on a 27-point grid). */
static bsrmv_status spmm_n(const mm_set *ks, const mm_vops *ops, const bsrmv_matrix *A,
                           bsrmv_layout lay, spmm_chunk *g, int k)
{
    const int bs = A->bs;
    const int w = k < SPMM_MAX_WIDTH ? k : SPMM_MAX_WIDTH;
    const int nt = threads_for(A->nnzb * bs * bs * w + A->mb);
    const size_t vs = bsrmv_type_size(A->vtype);
    const int64_t nx = A->nb * bs;
    const bool pack = lay == BSRMV_LAYOUT_COL && k > 1;
    /* Per thread: two part slots, and two slots of scratch for the generic
     * kernels, each bs*SPMM_MAX_WIDTH values. */
    const size_t slot = (size_t)bs * SPMM_MAX_WIDTH * vs;
    int64_t *row = malloc(2 * (size_t)nt * sizeof *row + 4 * (size_t)nt * slot);
    size_t pk_bytes = 0;
    if (pack && !bsrmv_bytes(nx * w, vs, &pk_bytes)) {
        free(row);
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "bsrmv_spmm: packed X overflows");
    }
    char *pk = pack ? bsrmv_scratch(pk_bytes) : NULL;
    if (!row || (pack && !pk)) {
        free(row);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_spmm: out of memory for the scratch of "
                          "%d threads (bs %d, %d vectors)", nt, bs, k);
    }
    char *part = (char *)(row + 2 * nt), *scratch = part + 2 * (size_t)nt * slot;
    const char *X = g->X;
    char *Y = g->Y;
    const int64_t ldx = g->ldx;
    for (int j0 = 0; j0 < k; j0 += g->kc) {
        int col;
        const spmm_chunk packed = chunk_n(g, X, Y, ldx, lay, j0, k, pk, vs, &col);
        const bool pk_now = pack && g->kc > 1;
        const mm_kernel_n kern = ks[col].n[A->order];
        int team = 1;
#pragma omp parallel num_threads(nt)
        {
            const int p = omp_get_thread_num(), np = omp_get_num_threads();
            if (p == 0)
                team = np;
            if (pk_now) {
                ops->pack(g, nx * p / np, nx * (p + 1) / np, pk);
#pragma omp barrier
            }
            const bsrmv_cut c0 = bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, bs, p, np);
            const bsrmv_cut c1 = bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, bs, p + 1, np);
            row[2 * p] = row[2 * p + 1] = -1;
            kern(&packed, c0, c1, part + 2 * (size_t)p * slot, row + 2 * p,
                 scratch + 2 * (size_t)p * slot);
        }
        ops->fixup(g, 2 * team, row, part);
    }
    free(row);
    return BSRMV_SUCCESS;
}

/* Each thread scatters its blocks into a private interleaved copy of the
 * chunk of Y; the copies are summed.  Costs threads*ny*min(k, 16) values. */
static bsrmv_status spmm_t(const mm_set *ks, const mm_vops *ops, const bsrmv_matrix *A,
                           bsrmv_layout lay, spmm_chunk *g, int k, int64_t ny)
{
    const int bs = A->bs;
    const int w = k < SPMM_MAX_WIDTH ? k : SPMM_MAX_WIDTH;
    const int nt = threads_for(A->nnzb * bs * bs * w + A->mb);
    const size_t vs = bsrmv_type_size(A->vtype);
    const size_t slot = (size_t)bs * SPMM_MAX_WIDTH * vs;
    int64_t stride, all;
    size_t bytes;
    if (!bsrmv_mul64(ny, w, &stride) || !bsrmv_mul64(stride, nt, &all) ||
        !bsrmv_bytes(all, vs, &bytes) ||
        bytes > SIZE_MAX - (size_t)nt * slot)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "bsrmv_spmm: transpose buffers overflow");
    char *bufs = bsrmv_scratch(bytes + (size_t)nt * slot);
    if (!bufs)
        return bsrmv_fail(BSRMV_ERR_NOMEM,
                          "bsrmv_spmm: out of memory for %d transpose buffers of %lld", nt,
                          (long long)stride);
    char *scratch = bufs + bytes;
    const char *X = g->X;
    char *Y = g->Y;
    for (int j0 = 0; j0 < k; j0 += g->kc) {
        g->kc = k - j0 < SPMM_MAX_WIDTH ? k - j0 : SPMM_MAX_WIDTH;
        const int64_t off = lay == BSRMV_LAYOUT_ROW ? 1 : 0;
        g->X = X + (size_t)(off ? j0 : j0 * g->ldx) * vs;
        g->Y = Y + (size_t)(off ? j0 : j0 * g->ldy) * vs;
        g->xlayout = lay;
        const mm_kernel_t kern = ks[0].t[A->order];
        const int64_t len = ny * g->kc;
#pragma omp parallel num_threads(nt)
        {
            const int p = omp_get_thread_num(), np = omp_get_num_threads();
            char *mine = bufs + (size_t)p * (size_t)len * vs;
            memset(mine, 0, (size_t)len * vs);
            const bsrmv_cut c0 = bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, bs, p, np);
            const bsrmv_cut c1 = bsrmv_partition_cut(A->row_ptr, A->row_ptr32, A->mb, bs, p + 1, np);
            kern(g, c0, c1, mine, scratch + (size_t)p * slot);
#pragma omp barrier
            ops->reduce(g, ny * p / np, ny * (p + 1) / np, np, len, bufs);
        }
    }
    return BSRMV_SUCCESS;
}

/* Symmetric storage: one pass over the stored blocks per chunk, the
 * mirrored products of each part's rows in a buffer of its own that
 * covers its rows and those below them that its blocks reach; after one
 * barrier each part adds, in part order, the earlier parts' buffers that
 * reach into its rows (the SpMV's scheme, src/cpu/spmv.c: no atomics, the
 * result does not depend on timing).  The buffers take
 * sum over parts of (reach - first row)*bs*min(k, 16) values. */
static bsrmv_status spmm_sym(const mm_set *ks, const mm_vops *ops, const bsrmv_matrix *A,
                             bsrmv_layout lay, spmm_chunk *g, int k)
{
    const int bs = A->bs;
    const int w = k < SPMM_MAX_WIDTH ? k : SPMM_MAX_WIDTH;
    const int nt = threads_for(2 * A->nnzb * bs * bs * w + A->mb);
    const size_t vs = bsrmv_type_size(A->vtype);
    const int64_t nx = A->nb * bs, *rp = A->row_ptr;
    const bool pack = lay == BSRMV_LAYOUT_COL && k > 1;
    /* Per part: first block row, reach (one past the last block row its
     * blocks touch), buffer offset in block rows. */
    int64_t *tab = malloc(3 * ((size_t)nt + 1) * sizeof *tab);
    if (!tab)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_spmm: out of memory for the split of %d "
                          "threads", nt);
    int64_t *first = tab, *reach = tab + nt + 1, *off = tab + 2 * (nt + 1);
    for (int p = 0; p < nt; p++)
        first[p] = bsrmv_partition_cut(rp, NULL, A->mb, bs, p, nt).row;
    first[nt] = A->mb;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
    for (int p = 0; p < nt; p++) {
        int64_t r = first[p + 1];
        for (int64_t i = first[p]; i < first[p + 1]; i++)
            if (rp[i + 1] > rp[i] && A->col_idx[rp[i + 1] - 1] >= r)
                r = A->col_idx[rp[i + 1] - 1] + 1;
        reach[p] = r;
    }
    int64_t rows = 0;
    for (int p = 0; p < nt; p++) {
        off[p] = rows;
        rows += reach[p] - first[p];
    }
    /* the scratch: the buffers, packed X (column-major vectors), and three
     * slots of bs*SPMM_MAX_WIDTH values per thread for the generic kernels */
    const size_t slot = (size_t)bs * SPMM_MAX_WIDTH * vs;
    int64_t bufn, pkn;
    size_t buf_bytes = 0, pk_bytes = 0;
    char *mem = NULL;
    if (bsrmv_mul64(rows * bs, w, &bufn) && bsrmv_bytes(bufn, vs, &buf_bytes) &&
        bsrmv_mul64(nx, pack ? w : 0, &pkn) && bsrmv_bytes(pkn, vs, &pk_bytes) &&
        buf_bytes < SIZE_MAX / 2 && pk_bytes < SIZE_MAX / 4)
        mem = bsrmv_scratch(buf_bytes + pk_bytes + 3 * (size_t)nt * slot + 128);
    if (!mem) {
        free(tab);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_spmm: out of memory for the symmetric "
                          "product's buffers (%d threads, %lld block rows, %d vectors)",
                          nt, (long long)A->mb, w);
    }
    char *bufs = mem, *pk = bufs + (buf_bytes + 63) / 64 * 64;
    char *scratch = pk + (pk_bytes + 63) / 64 * 64;
    const char *X = g->X;
    char *Y = g->Y;
    const int64_t ldx = g->ldx;
    for (int j0 = 0; j0 < k; j0 += g->kc) {
        int col;
        const spmm_chunk packed = chunk_n(g, X, Y, ldx, lay, j0, k, pack ? pk : NULL, vs, &col);
        const bool pk_now = pack && g->kc > 1;
        const mm_kernel_s kern = ks[col].s[A->order];
        const int64_t bk = (int64_t)bs * g->kc;
#pragma omp parallel num_threads(nt)
        {
            const int tid = omp_get_thread_num(), np = omp_get_num_threads();
            if (pk_now) {
                ops->pack(g, nx * tid / np, nx * (tid + 1) / np, pk);
#pragma omp barrier
            }
            for (int p = tid; p < nt; p += np) {
                char *mine = bufs + (size_t)(off[p] * bk) * vs;
                memset(mine, 0, (size_t)((reach[p] - first[p]) * bk) * vs);
                kern(&packed, first[p], first[p + 1], mine, scratch + 3 * (size_t)tid * slot);
            }
#pragma omp barrier
            for (int p = tid; p < nt; p += np)
                for (int q = 0; q < p; q++) {
                    const int64_t lo = first[p], hi = reach[q] < first[p + 1] ? reach[q]
                                                                               : first[p + 1];
                    if (lo < hi)
                        ops->add(g, lo * bs, hi * bs,
                                 bufs + (size_t)((off[q] + lo - first[q]) * bk) * vs);
                }
        }
    }
    free(tab);
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_spmm_check(const char *who, bsrmv_op op, int64_t rows, int64_t cols,
                              bsrmv_type type, bool alpha_zero, int k, const void *X, int64_t ldx,
                              const void *Y, int64_t ldy, bsrmv_layout layout, int64_t *nx_out,
                              int64_t *ny_out)
{
    if (op != BSRMV_OP_N && op != BSRMV_OP_T && op != BSRMV_OP_C)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: unknown op %d", who, (int)op);
    if (layout != BSRMV_LAYOUT_COL && layout != BSRMV_LAYOUT_ROW)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: unknown layout %d", who, (int)layout);
    if (k < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: k = %d vectors, need k >= 1", who, k);
    const int64_t nx = op == BSRMV_OP_N ? cols : rows;
    const int64_t ny = op == BSRMV_OP_N ? rows : cols;
    const bool col = layout == BSRMV_LAYOUT_COL;
    const int64_t min_ldx = col ? (nx > 1 ? nx : 1) : k;
    const int64_t min_ldy = col ? (ny > 1 ? ny : 1) : k;
    if (ldx < min_ldx || ldy < min_ldy)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "%s: leading dimensions ldx = %lld, ldy = %lld; the %s layout "
                          "with %lld x %d X and %lld x %d Y needs ldx >= %lld, ldy >= %lld",
                          who, (long long)ldx, (long long)ldy, col ? "column-major" : "row-major",
                          (long long)nx, k, (long long)ny, k, (long long)min_ldx,
                          (long long)min_ldy);
    const size_t vs = bsrmv_type_size(type);
    int64_t ex, ey;
    size_t bx, by;
    if (!span(layout, nx, k, ldx, &ex) || !span(layout, ny, k, ldy, &ey) ||
        !bsrmv_bytes(ex, vs, &bx) || !bsrmv_bytes(ey, vs, &by) ||
        bx > UINTPTR_MAX - (uintptr_t)X || by > UINTPTR_MAX - (uintptr_t)Y)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "%s: X or Y (leading dimensions %lld, %lld, k = %d) "
                          "exceeds the address space",
                          who, (long long)ldx, (long long)ldy, k);
    const bool reads_x = !alpha_zero && nx > 0;
    if ((ny > 0 && !Y) || (reads_x && !X))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: NULL %s", who, !Y ? "Y" : "X");
    /* The kernels read X while they write Y; an overlap would make the
     * result depend on the thread split. */
    if (reads_x && ny > 0 && (uintptr_t)X < (uintptr_t)Y + by && (uintptr_t)Y < (uintptr_t)X + bx)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "%s: X and Y overlap in memory (X spans %zu bytes at %p, "
                          "Y %zu bytes at %p)",
                          who, bx, X, by, Y);
    *nx_out = nx;
    *ny_out = ny;
    return BSRMV_SUCCESS;
}

/* The kernels and vector operations of A's (value, vector) type pair. */
static void type_tables(const bsrmv_matrix *A, const mm_set **ks, const mm_vops **ops)
{
    const int row = table_row(A);
    switch (A->type) {
    case BSRMV_COMPLEX_DOUBLE: *ks = mm_table_z[row], *ops = &mm_vops_z; break;
    case BSRMV_COMPLEX_FLOAT: *ks = mm_table_c[row], *ops = &mm_vops_c; break;
    case BSRMV_DOUBLE: *ks = mm_table_d[row], *ops = &mm_vops_d; break;
    default:
        if (A->vtype == BSRMV_DOUBLE)
            *ks = mm_table_sd[row], *ops = &mm_vops_sd;
        else
            *ks = mm_table_s[row], *ops = &mm_vops_s;
    }
}

/* After the checks: ny rows of Y.  The real types come with op N or T. */
static bsrmv_status spmm_run(bsrmv_op op, double _Complex alpha, const bsrmv_matrix *A, int k,
                             const void *X, int64_t ldx, double _Complex beta, void *Y,
                             int64_t ldy, bsrmv_layout layout, int64_t ny)
{
    const bool col = layout == BSRMV_LAYOUT_COL;
    const size_t vs = bsrmv_type_size(A->vtype);
    if (ny == 0)
        return BSRMV_SUCCESS;
    const mm_set *ks;
    const mm_vops *ops;
    type_tables(A, &ks, &ops);
    spmm_chunk g = {.A = A, .X = X, .Y = Y, .ldx = ldx, .ldy = ldy, .layout = layout,
                    .xlayout = layout, .alpha = alpha, .beta = beta};
    if (alpha == 0 || A->nnzb == 0) {
        const int nt = threads_for(ny * k);
        for (int j0 = 0; j0 < k; j0 += g.kc) {
            g.kc = k - j0 < SPMM_MAX_WIDTH ? k - j0 : SPMM_MAX_WIDTH;
            g.Y = (char *)Y + (size_t)(col ? j0 * ldy : j0) * vs;
#pragma omp parallel num_threads(nt)
            {
                const int p = omp_get_thread_num(), np = omp_get_num_threads();
                ops->scale(&g, ny * p / np, ny * (p + 1) / np);
            }
        }
        return BSRMV_SUCCESS;
    }
    /* Symmetric storage: A^T = A and A^H = conj(A); Hermitian: A^H = A
     * (the mirrored use conjugated) and A^T = conj(A) (the SpMV's bits,
     * src/cpu/spmv.c).  Full storage: op C is the transpose of the
     * conjugated values. */
    if (A->sym) {
        const bool conj_all = A->herm ? op == BSRMV_OP_T : op == BSRMV_OP_C;
        g.cj = conj_all ? (A->herm ? 1 : 3) : (A->herm ? 2 : 0);
        return spmm_sym(ks, ops, A, layout, &g, k);
    }
    if (op != BSRMV_OP_N) {
        g.cj = op == BSRMV_OP_C;
        return spmm_t(ks, ops, A, layout, &g, k, ny);
    }
    return spmm_n(ks, ops, A, layout, &g, k);
}

static bsrmv_status spmm(const char *who, bsrmv_op op, double _Complex alpha, const bsrmv_matrix *A,
                         int k, const void *X, int64_t ldx, double _Complex beta, void *Y,
                         int64_t ldy, bsrmv_layout layout)
{
    /* Real values: the conjugate transpose is the transpose. */
    if (op == BSRMV_OP_C && !bsrmv_type_is_complex(A->type))
        op = BSRMV_OP_T;
    int64_t nx, ny = 0;
    const bsrmv_status st = bsrmv_spmm_check(who, op, A->mb * A->bs, A->nb * A->bs, A->vtype,
                                             alpha == 0, k, X, ldx, Y, ldy, layout, &nx, &ny);
    if (st)
        return st;
    return spmm_run(op, alpha, A, k, X, ldx, beta, Y, ldy, layout, ny);
}

bsrmv_status bsrmv_spmm(bsrmv_op op, double alpha, const bsrmv_matrix *A, int k,
                        const void *X, int64_t ldx, double beta, void *Y, int64_t ldy,
                        bsrmv_layout layout)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_spmm: NULL matrix");
    return spmm("bsrmv_spmm", op, alpha, A, k, X, ldx, beta, Y, ldy, layout);
}

bsrmv_status bsrmv_spmm_scalars(bsrmv_op op, const void *alpha, const bsrmv_matrix *A, int k,
                                const void *X, int64_t ldx, const void *beta, void *Y,
                                int64_t ldy, bsrmv_layout layout)
{
    if (!A || !alpha || !beta)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_spmm_scalars: NULL matrix or scalar");
    return spmm("bsrmv_spmm_scalars", op, load_scalar(A->vtype, alpha), A, k, X, ldx,
                load_scalar(A->vtype, beta), Y, ldy, layout);
}

bsrmv_status bsrmv_spmm_cols(const bsrmv_matrix *A, int k, const void *X, int64_t ldx, void *Y,
                             int64_t ldy)
{
    return spmm_run(BSRMV_OP_N, 1.0, A, k, X, ldx, 0.0, Y, ldy, BSRMV_LAYOUT_COL, A->mb * A->bs);
}
