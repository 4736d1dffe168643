/* Load balancing: the irregular generators (exact arrow structure, power-law
 * longest row, sorted distinct columns, the banded one's window,
 * independence from the thread count, bad arguments), the nonzero split of
 * partition.c (valid, monotone, balanced cuts), and the split SpMV
 * against the long-double reference on matrices whose cuts fall inside rows and exactly at row
 * ends: all rows empty, one row holding every block, mb = 1, rows longer
 * than a thread's share, 1..7 threads, every compiled bs and a generic
 * one, both orders and types, A and A^T, alpha/beta in {0, 1, -2.5}, y
 * poisoned with NaN. */
#include "internal.h" /* bsrmv_partition_cut */
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#define MAX_THREADS 7
static const double coefs[] = {0.0, 1.0, -2.5};

/* ---- generators ---------------------------------------------------- */

typedef struct arrays {
    bsrmv_matrix_info in;
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
} arrays;

static arrays get_arrays(const bsrmv_matrix *A)
{
    arrays a;
    TU_OK(bsrmv_matrix_get_info(A, &a.in));
    TU_OK(bsrmv_matrix_arrays(A, &a.rp, &a.ci, &a.val));
    /* Sorted, distinct, in range: the library's own structure check. */
    TU_OK(bsrmv_check_bsr(a.in.mb, a.in.nb, a.in.bs, a.in.nnzb, a.rp, a.ci, NULL));
    return a;
}

/* Identical arrays, values included. */
static void check_same(const char *what, const bsrmv_matrix *A, const bsrmv_matrix *B)
{
    arrays a = get_arrays(A), b = get_arrays(B);
    TU_CHECK(a.in.mb == b.in.mb && a.in.nnzb == b.in.nnzb, "%s: shapes differ", what);
    size_t vbytes = (size_t)(a.in.nnzb * a.in.bs * a.in.bs) * bsrmv_type_size(a.in.type);
    TU_CHECK(memcmp(a.rp, b.rp, (size_t)(a.in.mb + 1) * sizeof *a.rp) == 0, "%s: row_ptr", what);
    TU_CHECK(memcmp(a.ci, b.ci, (size_t)a.in.nnzb * sizeof *a.ci) == 0, "%s: col_idx", what);
    TU_CHECK(memcmp(a.val, b.val, vbytes) == 0, "%s: values", what);
}

/* Values in [-1, 1), entry (r, c) the same in both block orders. */
static void check_values(const bsrmv_matrix *col, const bsrmv_matrix *row)
{
    arrays a = get_arrays(col), b = get_arrays(row);
    const int64_t bs = a.in.bs, bs2 = bs * bs;
    for (int64_t k = 0; k < a.in.nnzb; k++)
        for (int64_t r = 0; r < bs; r++)
            for (int64_t c = 0; c < bs; c++) {
                double u = tu_get(a.val, a.in.type, k * bs2 + c * bs + r);
                double v = tu_get(b.val, b.in.type, k * bs2 + r * bs + c);
                TU_CHECK(u == v && u >= -1 && u < 1, "block %lld (%lld,%lld): %g vs %g",
                         (long long)k, (long long)r, (long long)c, u, v);
            }
}

static void test_arrow(void)
{
    const int64_t shapes[][2] = {{1, 0}, {1, 1}, {7, 0}, {7, 2}, {7, 7}, {50, 3}, {300, 1}};
    for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++) {
        const int64_t n = shapes[q][0], dense = shapes[q][1];
        bsrmv_matrix *A, *B;
        TU_OK(bsrmv_generate_arrow(&A, n, dense, 2, 5, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_generate_arrow(&B, n, dense, 2, 5, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        arrays a = get_arrays(A);
        TU_CHECK(a.in.mb == n && a.in.nb == n, "arrow %lld: %lld x %lld", (long long)n,
                 (long long)a.in.mb, (long long)a.in.nb);
        for (int64_t i = 0; i < n; i++) {
            /* Row i holds column j iff j < dense, i < dense, or j == i. */
            int64_t want = 0, k = a.rp[i];
            for (int64_t j = 0; j < n; j++)
                if (j < dense || i < dense || j == i) {
                    TU_CHECK(k < a.rp[i + 1] && a.ci[k] == j,
                             "arrow %lld,%lld: row %lld lacks column %lld", (long long)n,
                             (long long)dense, (long long)i, (long long)j);
                    k++;
                    want++;
                }
            TU_CHECK(a.rp[i + 1] - a.rp[i] == want, "arrow row %lld: %lld blocks, wanted %lld",
                     (long long)i, (long long)(a.rp[i + 1] - a.rp[i]), (long long)want);
        }
        check_values(A, B);
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(B);
    }
}

typedef struct pl_case {
    int64_t mb, nb;
    double mean, exponent;
    int64_t max_len;
} pl_case;

/* Short rows (sorted insertion), long sparse rows (hash set), rows of at
 * least nb/8 (selection), a row of every column, a tiny mean. */
static const pl_case pl_cases[] = {
    {4000, 200000, 8.0, 2.0, 20000},
    {3000, 3000, 6.0, 1.5, 3000},
    {2000, 500, 20.0, 2.5, 400},
    {1, 10, 3.0, 2.0, 10},
    {500, 100, 0.5, 3.0, 7},
};

static void test_powerlaw(void)
{
    for (size_t q = 0; q < sizeof pl_cases / sizeof pl_cases[0]; q++) {
        const pl_case *c = &pl_cases[q];
        bsrmv_matrix *A, *B;
        TU_OK(bsrmv_generate_powerlaw(&A, c->mb, c->nb, 1, c->mean, c->exponent, c->max_len,
                                      9, BSRMV_FLOAT, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_generate_powerlaw(&B, c->mb, c->nb, 1, c->mean, c->exponent, c->max_len,
                                      10, BSRMV_FLOAT, BSRMV_COL_MAJOR));
        arrays a = get_arrays(A), b = get_arrays(B);
        TU_CHECK(a.in.mb == c->mb && a.in.nb == c->nb, "case %zu: shape", q);
        TU_CHECK(a.in.row_len_max == c->max_len, "case %zu: longest row %lld, wanted %lld", q,
                 (long long)a.in.row_len_max, (long long)c->max_len);
        /* The mean is matched in expectation; a few thousand rows land
         * within 15% of it, the tail made heavy by the exponent. */
        if (c->mb >= 1000)
            TU_CHECK(fabs(a.in.row_len_mean - c->mean) < 0.15 * c->mean,
                     "case %zu: mean row length %g, wanted about %g", q, a.in.row_len_mean,
                     c->mean);
        /* The longest row draws its columns from all of [0, nb). */
        int64_t longest = 0;
        while (a.rp[longest + 1] - a.rp[longest] != c->max_len)
            longest++;
        TU_CHECK(a.ci[a.rp[longest + 1] - 1] >= c->nb / 2, "case %zu: columns not spread", q);
        TU_CHECK(c->mb == 1 || memcmp(a.rp, b.rp, (size_t)(c->mb + 1) * sizeof *a.rp) != 0,
                 "case %zu: another seed gave the same row lengths", q);
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(B);
    }
    /* Heavy tail: rows of 10x the mean exist, far more than a geometric
     * law of that mean would give. */
    bsrmv_matrix *A;
    TU_OK(bsrmv_generate_powerlaw(&A, 20000, 20000, 1, 8.0, 2.0, 10000, 3, BSRMV_DOUBLE,
                                  BSRMV_COL_MAJOR));
    arrays a = get_arrays(A);
    int64_t long_rows = 0;
    for (int64_t i = 0; i < a.in.mb; i++)
        long_rows += a.rp[i + 1] - a.rp[i] >= 80;
    TU_CHECK(long_rows >= 20, "%lld rows of >= 80 blocks in 20000", (long long)long_rows);
    bsrmv_matrix_destroy(A);
    /* Both orders hold one matrix. */
    bsrmv_matrix *C, *R;
    TU_OK(bsrmv_generate_powerlaw(&C, 300, 400, 3, 5.0, 2.0, 300, 4, BSRMV_DOUBLE,
                                  BSRMV_COL_MAJOR));
    TU_OK(bsrmv_generate_powerlaw(&R, 300, 400, 3, 5.0, 2.0, 300, 4, BSRMV_DOUBLE,
                                  BSRMV_ROW_MAJOR));
    check_values(C, R);
    bsrmv_matrix_destroy(C);
    bsrmv_matrix_destroy(R);
}

/* The same seed on one and on two threads: the same matrix. */
static void test_thread_independence(void)
{
    for (size_t q = 0; q < sizeof pl_cases / sizeof pl_cases[0]; q++) {
        const pl_case *c = &pl_cases[q];
        bsrmv_matrix *M[2];
        for (int t = 0; t < 2; t++) {
            omp_set_num_threads(t + 1);
            TU_OK(bsrmv_generate_powerlaw(&M[t], c->mb, c->nb, 2, c->mean, c->exponent,
                                          c->max_len, 77, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        }
        check_same("power law on 1 and 2 threads", M[0], M[1]);
        bsrmv_matrix_destroy(M[0]);
        bsrmv_matrix_destroy(M[1]);
    }
    bsrmv_matrix *M[2];
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t + 1);
        TU_OK(bsrmv_generate_arrow(&M[t], 2000, 3, 2, 78, BSRMV_FLOAT, BSRMV_COL_MAJOR));
    }
    check_same("arrow on 1 and 2 threads", M[0], M[1]);
    bsrmv_matrix_destroy(M[0]);
    bsrmv_matrix_destroy(M[1]);
}

/* `call` names the handle pointer A; the handle starts non-NULL and must
 * be NULL after the failure. */
#define GEN_FAILS(call, want)                                                    \
    do {                                                                         \
        bsrmv_matrix *g_ = (bsrmv_matrix *)&g_;                                  \
        bsrmv_matrix **A = &g_;                                                  \
        TU_FAILS(call, want);                                                    \
        TU_CHECK(g_ == NULL, "handle not cleared after a failure");              \
    } while (0)

/* Banded: the row lengths of the same seed, every column inside the row's
 * window (centred on (i + 1/2)*nb/mb, moved inside at the edges, so a
 * window as wide as the matrix's columns is the plain power law), rectangular and
 * square, windows of max_len, a few rows' worth and nb. */
static void test_powerlaw_banded(void)
{
    static const struct { int64_t mb, nb, max_len, band; double mean; } cases[] = {
        {5000, 5000, 8, 16, 2.5}, {3000, 7000, 20, 20, 4.0}, {4000, 1500, 30, 600, 6.0},
        {1, 10, 3, 3, 2.0}, {2000, 2000, 2000, 2000, 5.0},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        const int64_t mb = cases[q].mb, nb = cases[q].nb, band = cases[q].band;
        bsrmv_matrix *A, *P;
        TU_OK(bsrmv_generate_powerlaw_banded(&A, mb, nb, 2, cases[q].mean, 2.0, cases[q].max_len,
                                             band, 5, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        TU_OK(bsrmv_generate_powerlaw(&P, mb, nb, 2, cases[q].mean, 2.0, cases[q].max_len, 5,
                                      BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        arrays a = get_arrays(A), p = get_arrays(P);
        TU_CHECK(memcmp(a.rp, p.rp, (size_t)(mb + 1) * sizeof *a.rp) == 0,
                 "case %zu: row lengths differ from the plain power law's", q);
        int64_t bad = 0, reach = 0;
        for (int64_t i = 0; i < mb; i++) {
            int64_t lo = (int64_t)(((long double)i + 0.5L) * nb / mb) - band / 2;
            lo = lo < 0 ? 0 : lo > nb - band ? nb - band : lo;
            for (int64_t k = a.rp[i]; k < a.rp[i + 1]; k++) {
                bad += a.ci[k] < lo || a.ci[k] >= lo + band;
                const int64_t d = a.ci[k] - (int64_t)(((long double)i + 0.5L) * nb / mb);
                reach = d > reach ? d : -d > reach ? -d : reach;
            }
        }
        TU_CHECK(bad == 0, "case %zu: %lld columns outside the band", q, (long long)bad);
        TU_CHECK(reach <= band, "case %zu: a column %lld from the centre, band %lld", q,
                 (long long)reach, (long long)band);
        if (band == nb)
            check_same("power law banded as wide as the matrix", A, P);
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(P);
    }
    const bsrmv_type D = BSRMV_DOUBLE;
    const bsrmv_order C = BSRMV_COL_MAJOR;
    GEN_FAILS(bsrmv_generate_powerlaw_banded(A, 10, 10, 1, 2, 2, 5, 4, 1, D, C),
              BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw_banded(A, 10, 10, 1, 2, 2, 5, 11, 1, D, C),
              BSRMV_ERR_ARGUMENT);
}

static void test_bad_arguments(void)
{
    const bsrmv_type D = BSRMV_DOUBLE;
    const bsrmv_order C = BSRMV_COL_MAJOR;
    TU_FAILS(bsrmv_generate_powerlaw(NULL, 10, 10, 1, 2, 2, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 0, 10, 1, 2, 2, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 0, 1, 2, 2, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, 2, 2, 0, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, 2, 2, 11, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, -1, 2, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, 6, 2, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, NAN, 2, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, 2, 1, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, 2, INFINITY, 5, 1, D, C),
              BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 0, 2, 2, 5, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, 2, 2, 5, 1, (bsrmv_type)9, C),
              BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, 10, 1, 2, 2, 5, 1, D, (bsrmv_order)9),
              BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_powerlaw(A, 10, (int64_t)INT32_MAX + 1, 1, 2, 2, 5, 1, D, C),
              BSRMV_ERR_OVERFLOW);
    GEN_FAILS(bsrmv_generate_powerlaw(A, INT64_MAX, 10, 1, 2, 2, 5, 1, D, C),
              BSRMV_ERR_OVERFLOW);
    /* Row lengths that need 2^62 bytes fail at once, not after a pass. */
    GEN_FAILS(bsrmv_generate_powerlaw(A, INT64_MAX / 16, 10, 1, 2, 2, 5, 1, D, C),
              BSRMV_ERR_NOMEM);

    TU_FAILS(bsrmv_generate_arrow(NULL, 10, 1, 1, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_arrow(A, 0, 0, 1, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_arrow(A, 10, -1, 1, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_arrow(A, 10, 11, 1, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_arrow(A, 10, 1, 0, 1, D, C), BSRMV_ERR_ARGUMENT);
    GEN_FAILS(bsrmv_generate_arrow(A, (int64_t)INT32_MAX + 1, 1, 1, 1, D, C),
              BSRMV_ERR_OVERFLOW);
    /* n^2 blocks of 4x4 values: the value count overflows int64. */
    GEN_FAILS(bsrmv_generate_arrow(A, INT32_MAX, INT32_MAX, 4, 1, D, C), BSRMV_ERR_OVERFLOW);
}

/* ---- the split ----------------------------------------------------- */

/* Cuts of every part count up to nmax: valid points, monotone, ends at
 * {0,0} and {mb,nnzb}, and each part's work within one block and one row
 * end of the even share.  Returns how many inner cuts fell inside a row. */
static int64_t check_partition(const bsrmv_matrix *A, int nmax)
{
    arrays a = get_arrays(A);
    const int64_t bs = a.in.bs, bs2 = bs * bs;
    const long double total = (long double)a.in.nnzb * bs2 + (long double)a.in.mb * bs;
    int64_t inside = 0;
    for (int np = 1; np <= nmax; np++) {
        bsrmv_cut prev = bsrmv_partition_cut(a.rp, NULL, a.in.mb, a.in.bs, 0, np);
        TU_CHECK(prev.row == 0 && prev.blk == 0, "cut 0 of %d", np);
        for (int p = 1; p <= np; p++) {
            bsrmv_cut c = bsrmv_partition_cut(a.rp, NULL, a.in.mb, a.in.bs, p, np);
            TU_CHECK(c.row >= 0 && c.row <= a.in.mb && c.blk >= a.rp[c.row] &&
                         (c.blk == a.rp[c.row] || c.blk < a.rp[c.row + 1]),
                     "cut %d of %d: row %lld block %lld is not a point of the matrix", p, np,
                     (long long)c.row, (long long)c.blk);
            TU_CHECK(c.row > prev.row || (c.row == prev.row && c.blk >= prev.blk),
                     "cut %d of %d goes backwards", p, np);
            /* Work of the part: its blocks plus the ends of rows it closes. */
            long double work = (long double)(c.blk - prev.blk) * bs2 +
                               (long double)(c.row - prev.row) * bs;
            TU_CHECK(work <= total / np + bs2 + bs, "part %d of %d: work %Lg, share %Lg", p - 1,
                     np, work, total / np);
            if (p < np && c.blk > a.rp[c.row])
                inside++;
            prev = c;
        }
        TU_CHECK(prev.row == a.in.mb && prev.blk == a.in.nnzb, "last cut of %d", np);
    }
    return inside;
}

/* One op and (alpha, beta) on A with `threads` threads, checked. */
static void run_one(const char *what, const bsrmv_matrix *A, bsrmv_op op, double alpha,
                    double beta, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    void *x = tu_random_vector(nx, in.type, seed);
    /* beta == 0: y starts as NaN and must not leak into the result. */
    void *y0 = beta == 0 ? tu_nan_vector(ny, in.type) : tu_random_vector(ny, in.type, seed + 1);
    void *y = tu_copy_vector(y0, ny, in.type);
    TU_OK(bsrmv_spmv(op, alpha, A, x, nx, beta, y, ny));
    tu_check_result(what, A, op, alpha, x, beta, y0, y);
    free(x);
    free(y0);
    free(y);
}

/* Every thread count and op on A and its other order; each thread count
 * takes three (alpha, beta) pairs that cover {0, 1, -2.5} for both, and
 * three consecutive counts take all nine pairs. */
static void run_split(const char *what, bsrmv_matrix *A, uint64_t seed)
{
    bsrmv_matrix *B = tu_reorder(A, BSRMV_ROW_MAJOR);
    for (int nt = 1; nt <= MAX_THREADS; nt++) {
        omp_set_num_threads(nt);
        for (int op = 0; op < 2; op++)
            for (int ia = 0; ia < 3; ia++) {
                const int ib = (ia + nt) % 3;
                run_one(what, A, (bsrmv_op)op, coefs[ia], coefs[ib], seed);
                run_one(what, B, (bsrmv_op)op, coefs[ia], coefs[ib], seed);
            }
    }
    bsrmv_matrix_destroy(B);
}

/* Copies the arrays into a matrix of type t (col-major). */
static bsrmv_matrix *make(int64_t mb, int64_t nb, int bs, const int64_t *rp, const int32_t *ci,
                          bsrmv_type t, uint64_t seed)
{
    int64_t nval = rp[mb] * bs * bs;
    void *val = tu_random_vector(nval, t, seed);
    bsrmv_matrix *A;
    TU_OK(bsrmv_matrix_create(&A, mb, nb, bs, rp[mb], rp, ci, val, t, BSRMV_COL_MAJOR));
    free(val);
    return A;
}

/* Blocks for about this many values: above the library's threshold for
 * going parallel (2^13 multiply-adds), small enough for 1..7 threads,
 * every bs and the long-double reference. */
#define VALUES 12000

/* mb rows; row `full` (or every row when full < 0) holds `len` blocks at
 * columns 0..len-1, the others none. */
static bsrmv_matrix *rows_of(int64_t mb, int64_t full, int64_t len, int bs, bsrmv_type t,
                             uint64_t seed)
{
    int64_t *rp = malloc((size_t)(mb + 1) * sizeof *rp);
    int64_t total = full < 0 ? mb * len : len;
    int32_t *ci = malloc((size_t)(total > 0 ? total : 1) * sizeof *ci);
    TU_CHECK(rp && ci, "out of memory");
    rp[0] = 0;
    for (int64_t i = 0; i < mb; i++) {
        int64_t n = full < 0 || i == full ? len : 0;
        for (int64_t j = 0; j < n; j++)
            ci[rp[i] + j] = (int32_t)j;
        rp[i + 1] = rp[i] + n;
    }
    bsrmv_matrix *A = make(mb, len > 0 ? len : 1, bs, rp, ci, t, seed);
    free(rp);
    free(ci);
    return A;
}

static void test_split(int bs, bsrmv_type t)
{
    const int64_t nblk = VALUES / (bs * bs) + 8;
    const uint64_t seed = 100 * (uint64_t)bs + (uint64_t)t;
    char what[96];

    /* Every row empty (the kernels are skipped, alpha/beta still apply). */
    bsrmv_matrix *A = rows_of(40, 0, 0, bs, t, seed);
    run_split("all rows empty", A, seed);
    bsrmv_matrix_destroy(A);

    /* One row holding every block among empty rows: every inner cut falls
     * inside it, so up to six threads share one row. */
    A = rows_of(50, 17, nblk, bs, t, seed);
    TU_CHECK(check_partition(A, MAX_THREADS) == MAX_THREADS * (MAX_THREADS - 1) / 2,
             "bs %d: cuts of the one full row should all fall inside it", bs);
    run_split("one row holds every block", A, seed);
    bsrmv_matrix_destroy(A);

    /* mb = 1. */
    A = rows_of(1, 0, nblk, bs, t, seed);
    run_split("mb = 1", A, seed);
    bsrmv_matrix_destroy(A);

    /* Equal rows, as many as 1..7 threads divide (1..6 for large blocks,
     * where 420 rows would be 30x the values): the even shares end exactly
     * at row ends, so no row is cut. */
    const int64_t eq_rows = bs <= 8 ? 420 : 60;
    A = rows_of(eq_rows, -1, nblk / eq_rows + 1, bs, t, seed);
    TU_CHECK(check_partition(A, eq_rows == 420 ? 7 : 6) == 0, "bs %d: equal rows were cut", bs);
    run_split("exact row-end cuts", A, seed);
    bsrmv_matrix_destroy(A);

    /* Power law whose longest row is longer than a thread's share, with
     * cuts at all kinds of places. */
    const int64_t mb = nblk / 2 + 2;
    TU_OK(bsrmv_generate_powerlaw(&A, mb, mb, bs, 2.0, 2.0, mb, seed, t, BSRMV_COL_MAJOR));
    TU_CHECK(check_partition(A, MAX_THREADS) > 0, "bs %d: no cut inside a row", bs);
    snprintf(what, sizeof what, "power law, longest row %lld of %lld blocks", (long long)mb,
             (long long)(nblk));
    run_split(what, A, seed);
    bsrmv_matrix_destroy(A);

    /* Arrow: one full row and column plus the diagonal. */
    TU_OK(bsrmv_generate_arrow(&A, nblk / 3 + 2, 1, bs, seed, t, BSRMV_COL_MAJOR));
    check_partition(A, MAX_THREADS);
    run_split("arrow", A, seed);
    bsrmv_matrix_destroy(A);
}

/* Random shapes of tu_random_bsr, every part count up to 9. */
static void test_partition_random(void)
{
    for (int q = 0; q < 40; q++) {
        tu_shape sh = {1 + q * 13, 50, 1 + q % 5, 3.0, (q % 4) * 0.3, q % 3 ? q : -1, 40};
        bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 500 + q);
        check_partition(A, 9);
        bsrmv_matrix_destroy(A);
    }
}

int main(void)
{
    test_bad_arguments();
    test_arrow();
    test_powerlaw();
    test_powerlaw_banded();
    test_thread_independence();
    test_partition_random();
    /* Every compiled bs, then the first one without a kernel (generic). */
    int generic_done = 0;
    for (int bs = 1; bs <= 33; bs++) {
        if (!bsrmv_cpu_has_kernel(bs)) {
            if (generic_done++)
                continue;
        }
        for (int t = 0; t < 2; t++)
            test_split(bs, (bsrmv_type)t);
    }
    printf("test_balance: all cases passed\n");
    return 0;
}
