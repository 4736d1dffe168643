/* Distributed matrices, run under mpiexec with any number of ranks: every
 * distributed SpMV and transpose is gathered and checked against the
 * long-double reference of the whole matrix (tu_check_result) on every
 * rank; then inconsistent input at creation (every rank must get the same
 * error, none may hang), a bad SpMV argument on one rank (it and the ranks
 * that need its data fail, the others do not), the Matrix Market helper on
 * shared matrices, and the distributed solvers against the single-process
 * ones; then the same products and solvers with complex values, and in
 * symmetric and Hermitian storage. */
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"
#include "bsrmv_mpi.h"
#include "testutil.h"
#include "testutil_complex.h"

#include <math.h>
#include <string.h>

static int rank, size;
static long checks;

static const char *const type_name[4] = {"float", "double", "complex float",
                                          "complex double"};

/* ---- partitions --------------------------------------------------- */

typedef enum { BALANCED, UNEVEN, ODD_EMPTY, ALL_LAST, NPART } part_kind;
static const char *const part_name[NPART] = {"balanced", "uneven", "odd-ranks-empty",
                                             "all-on-last"};

/* starts[0..size] of n items (rows balanced by blocks when row_ptr is
 * given, else by count). */
static void partition(part_kind k, int64_t n, const int64_t *row_ptr, int64_t *s)
{
    s[0] = 0;
    s[size] = n;
    for (int p = 1; p < size; p++) {
        switch (k) {
        case BALANCED:
            s[p] = n * p / size;
            break;
        case UNEVEN: /* quadratic: rank 0 gets little, the last most */
            s[p] = n * p * p / ((int64_t)size * size);
            break;
        case ODD_EMPTY: { /* the even ranks share everything */
            const int evens = (size + 1) / 2;
            s[p] = n * ((p + 1) / 2) / evens;
            break;
        }
        default:
            s[p] = 0;
        }
    }
    if (k == BALANCED && row_ptr)
        TU_OK(bsrmv_dist_partition(row_ptr, n, size, s));
}

/* An array of size + 1 range starts. */
static int64_t *new_starts(void)
{
    int64_t *s = malloc((size_t)(size + 1) * sizeof *s);
    TU_CHECK(s != NULL, "out of memory");
    return s;
}

static const int64_t *row_ptr_of(const bsrmv_matrix *G)
{
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    TU_OK(bsrmv_matrix_arrays(G, &rp, &ci, &v));
    return rp;
}

/* ---- building a distributed matrix from the whole one --------------- */

static bsrmv_status make_dist(bsrmv_dist_matrix **D, const bsrmv_matrix *G, const int64_t *rs,
                              const int64_t *cs)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(G, &in));
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(G, &rp, &ci, &val));
    const int64_t r0 = rs[rank], r1 = rs[rank + 1], base = rp[r0], n = rp[r1] - base;
    int64_t *lrp = malloc((size_t)(r1 - r0 + 1) * sizeof *lrp);
    int64_t *lci = malloc((size_t)(n + 1) * sizeof *lci);
    TU_CHECK(lrp && lci, "out of memory");
    for (int64_t i = r0; i <= r1; i++)
        lrp[i - r0] = rp[i] - base;
    for (int64_t k = 0; k < n; k++)
        lci[k] = ci[base + k];
    const size_t blk = (size_t)in.bs * in.bs * bsrmv_type_size(in.type);
    bsrmv_status st = bsrmv_dist_matrix_create(D, MPI_COMM_WORLD, in.mb, in.nb, in.bs, r0,
                                               r1 - r0, cs[rank], cs[rank + 1] - cs[rank], n,
                                               lrp, lci, (const char *)val + base * blk,
                                               in.type, in.order);
    free(lrp);
    free(lci);
    return st;
}

/* The whole vector from the ranks' parts (starts in blocks of bs values). */
static void gather(const void *part, void *whole, const int64_t *s, int bs, bsrmv_type t)
{
    const int vs = (int)bsrmv_type_size(t);
    int *cnt = malloc((size_t)size * sizeof *cnt), *dsp = malloc((size_t)size * sizeof *dsp);
    TU_CHECK(cnt && dsp, "out of memory");
    for (int r = 0; r < size; r++) {
        cnt[r] = (int)((s[r + 1] - s[r]) * bs * vs);
        dsp[r] = (int)(s[r] * bs * vs);
    }
    MPI_Allgatherv(part, cnt[rank], MPI_BYTE, whole, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
    free(cnt);
    free(dsp);
}

static const void *at(const void *v, int64_t blocks, int bs, bsrmv_type t)
{
    return (const char *)v + (size_t)(blocks * bs) * bsrmv_type_size(t);
}

/* ---- SpMV and transpose against the reference ----------------------- */

static const double ab[][2] = {{1.0, 0.0}, {-0.75, 1.5}, {0.0, -2.0}, {2.0, 1.0}};
/* For complex matrices: complex scalars of every kind (the first, real,
 * through bsrmv_dist_spmv, the others through _scalars) and OP_C too. */
static const double _Complex cab[][2] = {
    {1.0, 0.0}, {0.5 - 1.25 * I, 0.0}, {-0.75, 1.5 + 0.5 * I}, {2.0 * I, -1.0 * I}};

static void check_spmv(const char *what, const bsrmv_matrix *G, const int64_t *rs,
                       const int64_t *cs, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(G, &in));
    bsrmv_dist_matrix *D;
    TU_OK(make_dist(&D, G, rs, cs));
    const int bs = in.bs;
    const bsrmv_type t = in.type;
    const int cplx = t >= BSRMV_COMPLEX_FLOAT;
    for (int op = 0; op < (cplx ? 3 : 2); op++) {
        /* OP_N: x by columns, y by rows; OP_T and OP_C the other way round */
        const int64_t *xs = op == BSRMV_OP_N ? cs : rs, *ys = op == BSRMV_OP_N ? rs : cs;
        const int64_t nx = (op == BSRMV_OP_N ? in.nb : in.mb) * bs;
        const int64_t ny = (op == BSRMV_OP_N ? in.mb : in.nb) * bs;
        void *x = tu_random_vector(nx > 0 ? nx : 1, t, seed + 1);
        void *y0 = tu_random_vector(ny > 0 ? ny : 1, t, seed + 2);
        void *yw = tu_nan_vector(ny > 0 ? ny : 1, t);
        const int64_t myx = (xs[rank + 1] - xs[rank]) * bs, myy = (ys[rank + 1] - ys[rank]) * bs;
        for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++) {
            tu_scalar sa, sb;
            const tu_ldc alpha = tu_put_scalar(&sa, t, cplx ? cab[c][0] : ab[c][0]);
            const tu_ldc beta = tu_put_scalar(&sb, t, cplx ? cab[c][1] : ab[c][1]);
            /* beta == 0: y starts as NaN and must not leak into the result */
            void *y = tu_nan_vector(myy + 1, t);
            if (beta != 0)
                memcpy(y, at(y0, ys[rank], bs, t), (size_t)myy * bsrmv_type_size(t));
            const void *xr = at(x, xs[rank], bs, t);
            if (cplx && c > 0)
                TU_OK(bsrmv_dist_spmv_scalars((bsrmv_op)op, &sa, D, xr, myx, &sb, y, myy));
            else
                TU_OK(bsrmv_dist_spmv((bsrmv_op)op, (double)creall(alpha), D, xr, myx,
                                      (double)creall(beta), y, myy));
            gather(y, yw, ys, bs, t);
            char msg[200];
            snprintf(msg, sizeof msg, "%s %s %s %s, %d ranks", what, type_name[t],
                     in.order == BSRMV_COL_MAJOR ? "col" : "row",
                     bsrmv_cpu_has_kernel(bs) ? "compiled" : "runtime-bs", size);
            tu_check_complex(msg, G, (bsrmv_op)op, alpha, x, beta, y0, yw);
            checks++;
            free(y);
        }
        free(x);
        free(y0);
        free(yw);
    }
    bsrmv_dist_matrix_destroy(D);
}

static void spmv_cases(void)
{
    int64_t *rs = new_starts(), *cs = new_starts();
    /* every compiled block size and a runtime one, both types and orders */
    static const int bss[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 24, 32};
    for (size_t b = 0; b < sizeof bss / sizeof bss[0]; b++)
        for (int t = 0; t < 2; t++)
            for (int o = 0; o < 2; o++) {
                const tu_shape sh = {.mb = 23, .nb = 23, .bs = bss[b], .mean_len = 4,
                                     .empty_frac = 0.1, .long_row = 5, .long_len = 20};
                bsrmv_matrix *G = tu_random_bsr(&sh, (bsrmv_type)t, (bsrmv_order)o, 100 + b);
                const int64_t *rp = row_ptr_of(G);
                partition(BALANCED, sh.mb, rp, rs);
                memcpy(cs, rs, (size_t)(size + 1) * sizeof *cs);
                check_spmv("square", G, rs, cs, 7 + b);
                bsrmv_matrix_destroy(G);
            }
    /* partitions and shapes, at a compiled and a runtime bs */
    static const tu_shape shapes[] = {
        {.mb = 40, .nb = 40, .mean_len = 6, .empty_frac = 0.2, .long_row = 3, .long_len = 40},
        {.mb = 31, .nb = 57, .mean_len = 5, .empty_frac = 0.0, .long_row = -1},
        {.mb = 64, .nb = 13, .mean_len = 3, .empty_frac = 0.3, .long_row = 0, .long_len = 13},
        {.mb = 2, .nb = 3, .mean_len = 2, .long_row = -1}, /* fewer block rows than ranks */
        {.mb = 1, .nb = 1, .mean_len = 1, .long_row = -1},
        {.mb = 5, .nb = 5, .mean_len = 0, .long_row = -1}, /* no blocks at all */
    };
    static const char *const shape_name[] = {"square-long-row", "wide", "tall", "2x3", "1x1",
                                             "empty"};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int bi = 0; bi < 2; bi++)
            for (int k = 0; k < NPART; k++) {
                tu_shape sh = shapes[s];
                sh.bs = bi ? 10 : 3;
                const bsrmv_type t = (bsrmv_type)((s + k) % 2);
                bsrmv_matrix *G = tu_random_bsr(&sh, t, (bsrmv_order)(k % 2), 200 + s);
                const int64_t *rp = row_ptr_of(G);
                partition((part_kind)k, sh.mb, rp, rs);
                if (sh.mb == sh.nb)
                    memcpy(cs, rs, (size_t)(size + 1) * sizeof *cs);
                else /* columns split another way than rows */
                    partition((part_kind)((k + 1) % NPART), sh.nb, NULL, cs);
                char what[96];
                snprintf(what, sizeof what, "%s %s", shape_name[s], part_name[k]);
                check_spmv(what, G, rs, cs, 300 + s);
                bsrmv_matrix_destroy(G);
            }
    /* a grid: only the slabs' boundary planes have off-rank blocks, so the
     * off-rank part holds just those rows */
    for (int t = 0; t < 2; t++) {
        bsrmv_matrix *Gg;
        TU_OK(bsrmv_generate_grid(&Gg, 4, 4, 24, 2 + t, 27, 3, (bsrmv_type)t,
                                  (bsrmv_order)t));
        partition(BALANCED, 384, row_ptr_of(Gg), rs);
        memcpy(cs, rs, (size_t)(size + 1) * sizeof *cs);
        check_spmv("grid27 4x4x24", Gg, rs, cs, 450 + t);
        bsrmv_dist_matrix *Dg;
        TU_OK(make_dist(&Dg, Gg, rs, cs));
        const bsrmv_matrix *off;
        const int64_t *orows;
        TU_OK(bsrmv_dist_matrix_parts(Dg, NULL, &off, &orows, NULL));
        bsrmv_matrix_info oi;
        TU_OK(bsrmv_matrix_get_info(off, &oi));
        /* rows within NX*NY + NX + 1 = 21 of a cut reach past it */
        const int64_t mine = rs[rank + 1] - rs[rank];
        if (size > 1)
            TU_CHECK(orows != NULL && oi.mb <= 2 * 21 && oi.mb > 0 &&
                         orows[0] < orows[oi.mb - 1] + (oi.mb == 1) && orows[oi.mb - 1] < mine,
                     "rank %d: off-rank part of %lld rows (of %lld), compressed %d", rank,
                     (long long)oi.mb, (long long)mine, orows != NULL);
        else
            TU_CHECK(oi.nnzb == 0, "one rank: no off-rank blocks, got %lld", (long long)oi.nnzb);
        checks++;
        bsrmv_dist_matrix_destroy(Dg);
        bsrmv_matrix_destroy(Gg);
    }
    /* a power-law matrix: long rows reach every rank's columns */
    bsrmv_matrix *G;
    TU_OK(bsrmv_generate_powerlaw(&G, 500, 500, 4, 6, 1.6, 500, 11, BSRMV_DOUBLE,
                                  BSRMV_COL_MAJOR));
    const int64_t *rp = row_ptr_of(G);
    partition(BALANCED, 500, rp, rs);
    memcpy(cs, rs, (size_t)(size + 1) * sizeof *cs);
    check_spmv("power-law", G, rs, cs, 400);
    bsrmv_dist_matrix *D;
    TU_OK(make_dist(&D, G, rs, cs));
    bsrmv_dist_info di;
    TU_OK(bsrmv_dist_matrix_get_info(D, &di));
    if (size > 1 && di.mb > 0)
        TU_CHECK(di.recv_neighbors == size - 1, "a power-law row of 500 blocks touches every "
                 "rank, but rank %d receives from %d", rank, di.recv_neighbors);
    bsrmv_dist_matrix_destroy(D);
    bsrmv_matrix_destroy(G);
    free(rs);
    free(cs);
}

/* ---- complex values ------------------------------------------------- */

static void complex_spmv_cases(void)
{
    int64_t *rs = new_starts(), *cs = new_starts();
    static const int bss[] = {1, 2, 3, 4, 6, 7, 10};
    for (size_t b = 0; b < sizeof bss / sizeof bss[0]; b++)
        for (int t = BSRMV_COMPLEX_FLOAT; t <= BSRMV_COMPLEX_DOUBLE; t++) {
            const tu_shape sh = {.mb = 23, .nb = 23, .bs = bss[b], .mean_len = 4,
                                 .empty_frac = 0.1, .long_row = 5, .long_len = 20};
            bsrmv_matrix *G = tu_random_bsr(&sh, (bsrmv_type)t, (bsrmv_order)(b % 2), 600 + b);
            partition((part_kind)(b % NPART), sh.mb, row_ptr_of(G), rs);
            memcpy(cs, rs, (size_t)(size + 1) * sizeof *cs);
            check_spmv(part_name[b % NPART], G, rs, cs, 610 + b);
            bsrmv_matrix_destroy(G);
        }
    /* rectangular, the columns split another way than the rows */
    const tu_shape wide = {.mb = 19, .nb = 41, .bs = 3, .mean_len = 5, .long_row = -1};
    for (int t = BSRMV_COMPLEX_FLOAT; t <= BSRMV_COMPLEX_DOUBLE; t++) {
        bsrmv_matrix *G = tu_random_bsr(&wide, (bsrmv_type)t, BSRMV_ROW_MAJOR, 620 + t);
        partition(UNEVEN, wide.mb, row_ptr_of(G), rs);
        partition(BALANCED, wide.nb, NULL, cs);
        check_spmv("wide", G, rs, cs, 630 + t);
        bsrmv_matrix_destroy(G);
    }
    /* a grid, whose off-rank part holds only the boundary rows */
    bsrmv_matrix *Gr, *Gz;
    TU_OK(bsrmv_generate_grid(&Gr, 4, 4, 24, 2, 27, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_convert(&Gz, Gr, BSRMV_COMPLEX_DOUBLE));
    partition(BALANCED, 384, row_ptr_of(Gz), rs);
    memcpy(cs, rs, (size_t)(size + 1) * sizeof *cs);
    check_spmv("grid27 4x4x24", Gz, rs, cs, 640);
    bsrmv_matrix_destroy(Gr);
    bsrmv_matrix_destroy(Gz);
    free(rs);
    free(cs);
}

/* The halo plan of a 1D chain: exactly the neighbours' boundary blocks. */
static void halo_plan_case(void)
{
    const int64_t n = 12 * size, bs = 2;
    int64_t *rs = new_starts();
    partition(BALANCED, n, NULL, rs);
    /* tridiagonal block pattern */
    const int64_t r0 = rs[rank], m = rs[rank + 1] - r0;
    int64_t *rp = malloc((size_t)(m + 1) * sizeof *rp), *ci = malloc((size_t)(3 * m + 1) * sizeof *ci);
    double *val = calloc((size_t)(3 * m + 1) * bs * bs, sizeof *val);
    TU_CHECK(rp && ci && val, "out of memory");
    rp[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t k = rp[i];
        for (int64_t c = r0 + i - 1; c <= r0 + i + 1; c++)
            if (c >= 0 && c < n)
                ci[k++] = c;
        rp[i + 1] = k;
    }
    bsrmv_dist_matrix *D;
    TU_OK(bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, (int)bs, r0, m, r0, m, rp[m], rp,
                                   ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_dist_info di;
    TU_OK(bsrmv_dist_matrix_get_info(D, &di));
    const int edges = (rank > 0) + (rank < size - 1);
    TU_CHECK(di.ghosts == edges && di.recv_neighbors == edges && di.send_neighbors == edges &&
                 di.halo_send_bytes == edges * bs * 8.0 && di.halo_recv_bytes == edges * bs * 8.0,
             "rank %d: %lld ghosts, %d/%d neighbours, %g/%g bytes; wanted %d of each", rank,
             (long long)di.ghosts, di.recv_neighbors, di.send_neighbors, di.halo_send_bytes,
             di.halo_recv_bytes, edges);
    checks++;
    bsrmv_dist_matrix_destroy(D);
    free(rp);
    free(ci);
    free(val);
    free(rs);
}

/* ---- inconsistent input: the same error on every rank ---------------- */

static void expect_everywhere(bsrmv_status got, bsrmv_status want, const char *what,
                              const char *needle)
{
    const char *msg = bsrmv_last_error();
    TU_CHECK(got == want, "%s: rank %d got %s, wanted %s (%s)", what, rank,
             bsrmv_status_string(got), bsrmv_status_string(want), msg);
    TU_CHECK(strncmp(msg, "rank ", 5) == 0 && strstr(msg, needle),
             "%s: rank %d's message does not name the rank or lacks \"%s\": %s", what, rank,
             needle, msg);
    /* the same message everywhere */
    char mine[512] = {0}, first[512] = {0};
    snprintf(mine, sizeof mine, "%s", msg);
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    TU_CHECK(strcmp(first, mine) == 0, "%s: rank %d says \"%s\", rank 0 \"%s\"", what, rank,
             mine, first);
    checks++;
}

static void error_cases(void)
{
    /* block diagonal, 4 block rows per rank, bs 2 */
    const int64_t m = 4, n = 4 * size;
    int64_t rp[5] = {0, 1, 2, 3, 4}, ci[4];
    double val[36] = {0}; /* 4 blocks of bs up to 3 */
    for (int i = 0; i < 4; i++)
        ci[i] = m * rank + i;
    bsrmv_dist_matrix *D = (bsrmv_dist_matrix *)&D; /* must come back NULL */
    const int last = size - 1;
    bsrmv_status st;

    /* a column out of range on the last rank */
    int64_t bad[4] = {ci[0], ci[1], ci[2], rank == last ? n : ci[3]};
    st = bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, 2, m * rank, m, m * rank, m, 4, rp,
                                  bad, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    expect_everywhere(st, BSRMV_ERR_STRUCTURE, "column out of range", "out of range");
    TU_CHECK(D == NULL, "handle not cleared on failure");

    /* rows missing: the global size claims one more block row */
    st = bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n + 1, n, 2, m * rank, m, m * rank, m, 4,
                                  rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    expect_everywhere(st, BSRMV_ERR_STRUCTURE, "missing rows", "cover");

    /* a different bs on the last rank */
    st = bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, rank == last ? 3 : 2, m * rank, m,
                                  m * rank, m, 4, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    if (size > 1)
        expect_everywhere(st, BSRMV_ERR_ARGUMENT, "different bs", "disagree on bs");
    else {
        TU_OK(st);
        bsrmv_dist_matrix_destroy(D);
    }

    /* a different type on rank 0 */
    st = bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, 2, m * rank, m, m * rank, m, 4, rp,
                                  ci, val, rank == 0 ? BSRMV_FLOAT : BSRMV_DOUBLE,
                                  BSRMV_COL_MAJOR);
    if (size > 1)
        expect_everywhere(st, BSRMV_ERR_ARGUMENT, "different type", "disagree on type");
    else {
        TU_OK(st);
        bsrmv_dist_matrix_destroy(D);
    }

    /* decreasing columns on rank 0 only */
    int64_t unsorted[4] = {ci[1], ci[0], ci[2], ci[3]};
    st = bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, 2, m * rank, m, m * rank, m, 4,
                                  (int64_t[5]){0, 2, 2, 3, 4}, rank == 0 ? unsorted : ci, val,
                                  BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    expect_everywhere(st, BSRMV_ERR_STRUCTURE, "unsorted columns", "rank 0: block row 0");

    if (size > 1) {
        /* overlapping rows: rank 1 starts one row early (and so owns one more) */
        const int64_t b = rank == 1 ? m * rank - 1 : m * rank;
        const int64_t rp5[6] = {0, 1, 2, 3, 4, 4};
        st = bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, 2, b, rank == 1 ? m + 1 : m,
                                      m * rank, m, 4, rank == 1 ? rp5 : rp, ci, val,
                                      BSRMV_DOUBLE, BSRMV_COL_MAJOR);
        expect_everywhere(st, BSRMV_ERR_STRUCTURE, "overlapping rows", "block rows of rank 1");
        /* ranges out of rank order: the last two ranks swap their columns */
        int64_t cb = m * rank;
        if (rank == last)
            cb = m * (last - 1);
        else if (rank == last - 1)
            cb = m * last;
        st = bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, 2, m * rank, m, cb, m, 0,
                                      (int64_t[5]){0, 0, 0, 0, 0}, NULL, NULL, BSRMV_DOUBLE,
                                      BSRMV_COL_MAJOR);
        expect_everywhere(st, BSRMV_ERR_STRUCTURE, "columns out of rank order", "block columns");
    }

    /* a wrong vector length on the last rank: it fails, and so does the
     * rank that needs its data (block tridiagonal: rank last - 1), in both
     * directions; the others are unaffected and nothing hangs */
    int64_t trp[5] = {0}, tci[12];
    double tval[48] = {0};
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t c = m * rank + i - 1; c <= m * rank + i + 1; c++)
            if (c >= 0 && c < n)
                tci[k++] = c;
        trp[i + 1] = k;
    }
    TU_OK(bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, 2, m * rank, m, m * rank, m, k,
                                   trp, tci, tval, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    double x[8] = {0}, y[8] = {0};
    for (int op = 0; op < 2; op++) {
        st = bsrmv_dist_spmv((bsrmv_op)op, 1.0, D, x, rank == last ? 7 : 8, 0.0, y, 8);
        const char *msg = bsrmv_last_error();
        if (rank == last)
            TU_CHECK(st == BSRMV_ERR_DIMENSION && strstr(msg, "x has 7"),
                     "op %d: the rank with the bad length got %s (%s)", op,
                     bsrmv_status_string(st), msg);
        else if (rank == last - 1) {
            char want[32];
            snprintf(want, sizeof want, "rank %d,", last);
            TU_CHECK(st == BSRMV_ERR_DIMENSION && strstr(msg, want),
                     "op %d: the rank that needs the bad rank's data got %s (%s)", op,
                     bsrmv_status_string(st), msg);
        } else
            TU_CHECK(st == BSRMV_SUCCESS, "op %d: rank %d does not need the bad rank's data "
                     "but got %s (%s)", op, rank, bsrmv_status_string(st), msg);
        checks++;
    }
    /* a NULL scalar on the last rank: the same outcome as a bad length */
    const double one = 1.0, zero = 0.0;
    for (int op = 0; op < 2; op++) {
        st = bsrmv_dist_spmv_scalars((bsrmv_op)op, &one, D, x, 8, rank == last ? NULL : &zero,
                                     y, 8);
        const char *msg = bsrmv_last_error();
        if (rank == last || rank == last - 1)
            TU_CHECK(st == BSRMV_ERR_ARGUMENT &&
                         strstr(msg, rank == last ? "NULL beta" : "failed"),
                     "op %d: rank %d got %s (%s) for a NULL beta on the last rank", op, rank,
                     bsrmv_status_string(st), msg);
        else
            TU_CHECK(st == BSRMV_SUCCESS, "op %d: rank %d does not need the last rank's data "
                     "but got %s (%s)", op, rank, bsrmv_status_string(st), msg);
        checks++;
    }
    /* the handle still works after a refused call */
    TU_OK(bsrmv_dist_spmv(BSRMV_OP_N, 1.0, D, x, 8, 0.0, y, 8));
    TU_OK(bsrmv_dist_spmv(BSRMV_OP_T, 1.0, D, x, 8, 0.0, y, 8));
    TU_OK(bsrmv_dist_halo_exchange(D, x, 8));
    bsrmv_dist_matrix_destroy(D);

    /* a file that cannot be read: root's error everywhere */
    st = bsrmv_dist_matrix_read_mm(&D, MPI_COMM_WORLD, 0, "/nonexistent/m.mtx", 2, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR, NULL);
    expect_everywhere(st, BSRMV_ERR_IO, "unreadable file", "rank 0: ");
}

/* ---- Matrix Market helper on shared matrices -------------------------- */

static void mm_cases(void)
{
    const char *dir = getenv("BSRMV_MATRICES");
    static const struct {
        const char *file;
        int bs;
    } files[] = {{"bcsstk09.mtx.gz", 3}, {"lp_ship04l.mtx.gz", 2}};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", files[f].file);
        FILE *probe = fopen(path, "rb");
        int have = probe != NULL, all;
        if (probe)
            fclose(probe);
        MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            if (rank == 0)
                printf("note: %s not readable; shared matrix skipped\n", path);
            continue;
        }
        /* the reference: the whole matrix on every rank */
        bsrmv_coo *coo;
        bsrmv_matrix *G;
        TU_OK(bsrmv_mm_read(path, &coo));
        TU_OK(bsrmv_matrix_from_coo(&G, coo, files[f].bs, BSRMV_SPLIT, BSRMV_DOUBLE,
                                    BSRMV_ROW_MAJOR));
        bsrmv_coo_destroy(coo);
        bsrmv_matrix_info in;
        TU_OK(bsrmv_matrix_get_info(G, &in));
        bsrmv_dist_matrix *D;
        TU_OK(bsrmv_dist_matrix_read_mm(&D, MPI_COMM_WORLD, size - 1, path, files[f].bs,
                                        BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_ROW_MAJOR, NULL));
        bsrmv_dist_info di;
        TU_OK(bsrmv_dist_matrix_get_info(D, &di));
        int64_t *rs = new_starts(), *cs = new_starts();
        int64_t mine[2] = {di.row_begin, di.col_begin}, *all2 = malloc((size_t)size * 2 * sizeof *all2);
        MPI_Allgather(mine, 2, MPI_INT64_T, all2, 2, MPI_INT64_T, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++) {
            rs[r] = all2[2 * r];
            cs[r] = all2[2 * r + 1];
        }
        rs[size] = in.mb;
        cs[size] = in.nb;
        free(all2);
        /* the helper's partition is the documented one */
        int64_t *want = malloc((size_t)(size + 1) * sizeof *want);
        const int64_t *rp = row_ptr_of(G);
        TU_OK(bsrmv_dist_partition(rp, in.mb, size, want));
        for (int r = 0; r <= size; r++)
            TU_CHECK(rs[r] == want[r], "%s: rank %d starts at row %lld, the partition says %lld",
                     files[f].file, r, (long long)rs[r], (long long)want[r]);
        free(want);
        bsrmv_dist_matrix_destroy(D);
        char what[64];
        snprintf(what, sizeof what, "%s bs %d", files[f].file, files[f].bs);
        check_spmv(what, G, rs, cs, 500 + f);
        /* the file's one triangle in symmetric storage (a general file: full) */
        TU_OK(bsrmv_dist_matrix_read_mm_sym(&D, MPI_COMM_WORLD, 0, path, files[f].bs,
                                            BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_ROW_MAJOR, NULL));
        TU_OK(bsrmv_dist_matrix_get_info(D, &di));
        const int want_sym = strstr(files[f].file, "bcsstk") ? BSRMV_SYM_SYMMETRIC : 0;
        TU_CHECK(di.symmetric == want_sym, "%s: read_mm_sym made storage %d, wanted %d",
                 files[f].file, di.symmetric, want_sym);
        if (want_sym) {
            int64_t nb_local = di.nnzb_local + di.nnzb_offrank, nb_all = 0;
            MPI_Allreduce(&nb_local, &nb_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            TU_CHECK(2 * nb_all < in.nnzb + in.mb + 1 && nb_all >= in.nnzb / 2,
                     "%s: %lld stored blocks in symmetric storage of %lld", files[f].file,
                     (long long)nb_all, (long long)in.nnzb);
            const int64_t own = di.mb * files[f].bs;
            void *x = tu_random_vector(in.rows, BSRMV_DOUBLE, 520 + f);
            void *y = tu_nan_vector(own + 1, BSRMV_DOUBLE), *yw = tu_nan_vector(in.rows,
                                                                                 BSRMV_DOUBLE);
            int64_t *ps = malloc((size_t)(size + 1) * sizeof *ps), b0 = di.row_begin;
            TU_CHECK(ps != NULL, "out of memory");
            MPI_Allgather(&b0, 1, MPI_INT64_T, ps, 1, MPI_INT64_T, MPI_COMM_WORLD);
            ps[size] = in.mb;
            TU_OK(bsrmv_dist_spmv(BSRMV_OP_N, 1.0, D, at(x, ps[rank], files[f].bs, BSRMV_DOUBLE),
                                  own, 0.0, y, own));
            gather(y, yw, ps, files[f].bs, BSRMV_DOUBLE);
            tu_check_result(what, G, BSRMV_OP_N, 1.0, x, 0.0, NULL, yw);
            checks++;
            free(ps);
            free(x);
            free(y);
            free(yw);
        }
        bsrmv_dist_matrix_destroy(D);
        free(rs);
        free(cs);
        bsrmv_matrix_destroy(G);
    }
}

/* ---- distributed solvers against the single-process ones ------------- */

static void solve_case(bsrmv_solver m, const bsrmv_matrix *G, int precond, const char *name)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(G, &in));
    const bsrmv_type t = in.type;
    const double rtol = t == BSRMV_DOUBLE ? 1e-8 : 1e-5;
    void *b = tu_random_vector(in.rows, t, 77);
    void *x1 = tu_nan_vector(in.rows, t);
    bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .restart = 20, .x0_zero = 1};
    bsrmv_solve_report r1, r2;
    bsrmv_precond *P1 = NULL;
    if (precond)
        TU_OK(bsrmv_precond_block_jacobi(&P1, G));
    TU_OK(bsrmv_solve(m, G, P1, b, x1, in.rows, &o, &r1));

    int64_t *rs = new_starts();
    const int64_t *rp = row_ptr_of(G);
    partition(size == 3 ? ODD_EMPTY : size == 4 ? UNEVEN : BALANCED, in.mb, rp, rs);
    bsrmv_dist_matrix *D;
    TU_OK(make_dist(&D, G, rs, rs));
    bsrmv_precond *P2 = NULL;
    if (precond)
        TU_OK(bsrmv_dist_precond_block_jacobi(&P2, D));
    const int64_t n = (rs[rank + 1] - rs[rank]) * in.bs;
    void *x2 = tu_nan_vector(n + 1, t);
    void *xw = tu_nan_vector(in.rows, t);
    TU_OK(bsrmv_dist_solve(m, D, P2, at(b, rs[rank], in.bs, t), x2, n, &o, &r2));
    gather(x2, xw, rs, in.bs, t);
    double dx = 0, nx = 0;
    for (int64_t i = 0; i < in.rows; i++) {
        const double a = tu_get(x1, t, i), c = tu_get(xw, t, i);
        dx += (a - c) * (a - c);
        nx += a * a;
    }
    const double rel = sqrt(dx / nx);
    if (rank == 0)
        printf("  %-8s %-10s %-6s %s, %d ranks: %d iterations (one process %d), "
               "true residual %.2e, solutions differ by %.2e\n",
               m == BSRMV_SOLVER_CG ? "cg" : m == BSRMV_SOLVER_BICGSTAB ? "bicgstab" : "gmres",
               name, type_name[t], precond ? "jacobi" : "none", size, r2.iterations,
               r1.iterations, r2.true_rel_residual, rel);
    TU_CHECK(r2.converged && r2.true_rel_residual <= rtol, "%s: not converged (%g)", name,
             r2.true_rel_residual);
    /* the sums run in another order: allow a few iterations either way */
    const int slack = 2 + r1.iterations / 20;
    TU_CHECK(abs(r2.iterations - r1.iterations) <= slack,
             "%s: %d iterations distributed, %d in one process", name, r2.iterations,
             r1.iterations);
    /* both solutions are within rtol*cond of the true one */
    TU_CHECK(rel <= (t == BSRMV_DOUBLE ? 1e-5 : 1e-2), "%s: solutions differ by %g", name, rel);
    /* every rank reports the same */
    int it[2] = {r2.iterations, -r2.iterations}, mx[2];
    MPI_Allreduce(it, mx, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    TU_CHECK(mx[0] == -mx[1], "ranks report different iteration counts");
    checks++;
    bsrmv_precond_destroy(P1);
    bsrmv_precond_destroy(P2);
    bsrmv_dist_matrix_destroy(D);
    free(rs);
    free(b);
    free(x1);
    free(x2);
    free(xw);
}

static void solver_cases(void)
{
    bsrmv_matrix *L, *R;
    for (int t = 0; t < 2; t++) {
        TU_OK(bsrmv_generate_block_laplacian(&L, 6, 5, 4, 3, 5, (bsrmv_type)t, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_generate_reservoir(&R, 6, 5, 4, 3, 5, (bsrmv_type)t, BSRMV_ROW_MAJOR));
        solve_case(BSRMV_SOLVER_CG, L, 1, "laplacian");
        solve_case(BSRMV_SOLVER_CG, L, 0, "laplacian");
        solve_case(BSRMV_SOLVER_BICGSTAB, R, 1, "reservoir");
        solve_case(BSRMV_SOLVER_GMRES, R, 1, "reservoir");
        solve_case(BSRMV_SOLVER_GMRES, L, 0, "laplacian");
        bsrmv_matrix_destroy(L);
        bsrmv_matrix_destroy(R);
    }
    /* a singular diagonal block on one rank: every rank hears of it */
    const int64_t n = 2 * size;
    int64_t rp[3] = {0, 1, 2}, ci[2] = {2 * rank, 2 * rank + 1};
    double val[8] = {1, 0, 0, 1, 1, 0, 0, 1};
    if (rank == size - 1)
        val[4] = val[7] = 0; /* the second block row's diagonal block is zero */
    bsrmv_dist_matrix *D;
    TU_OK(bsrmv_dist_matrix_create(&D, MPI_COMM_WORLD, n, n, 2, 2 * rank, 2, 2 * rank, 2, 2, rp,
                                   ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_precond *P = NULL;
    expect_everywhere(bsrmv_dist_precond_block_jacobi(&P, D), BSRMV_ERR_SINGULAR,
                      "singular block", "block row");
    TU_CHECK(P == NULL, "preconditioner not cleared on failure");
    bsrmv_dist_matrix_destroy(D);
}

/* ---- several vectors ------------------------------------------------ */

/* Y = alpha*op(A)*X + beta*Y for k vectors in `layout`, leading
 * dimensions padded by one, each column against the reference of its SpMV
 * with F (G itself, or G's full matrix where G is in symmetric storage and
 * scattered by rs). */
static void check_spmm(const char *what, const bsrmv_matrix *G, const bsrmv_matrix *F,
                       const int64_t *rs, const int64_t *cs, bsrmv_op op, int k,
                       bsrmv_layout layout, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(G, &in));
    bsrmv_dist_matrix *D;
    if (in.symmetric)
        TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, G, rs));
    else
        TU_OK(make_dist(&D, G, rs, cs));
    const int bs = in.bs;
    const bsrmv_type t = in.type;
    const size_t vs = bsrmv_type_size(t);
    const int tr = op != BSRMV_OP_N, cplx = t >= BSRMV_COMPLEX_FLOAT;
    /* X on the rank's columns and Y on its rows (op N), the other way for op T and C */
    const int64_t *xs_at = tr ? rs : cs, *ys_at = tr ? cs : rs;
    const int64_t nxg = tr ? in.rows : in.cols, nyg = tr ? in.cols : in.rows;
    const int64_t myx = (xs_at[rank + 1] - xs_at[rank]) * bs;
    const int64_t myy = (ys_at[rank + 1] - ys_at[rank]) * bs;
    const int col = layout == BSRMV_LAYOUT_COL;
    const int64_t ldx = (col ? myx : k) + 1, ldy = (col ? myy : k) + 1;
    const int64_t lenx = col ? ldx * k : myx * ldx, leny = col ? ldy * k : myy * ldy;
    void *X = tu_nan_vector(lenx + 1, t), *Y = tu_nan_vector(leny + 1, t);
    void **xs = malloc((size_t)k * sizeof *xs), **y0 = malloc((size_t)k * sizeof *y0);
    void *yw = tu_nan_vector(nyg + 1, t), *part = tu_nan_vector(myy + 1, t);
    TU_CHECK(xs && y0, "out of memory");
    /* complex types: complex scalars through bsrmv_dist_spmm_scalars */
    tu_scalar sa, sb;
    const tu_ldc alpha = tu_put_scalar(&sa, t, cplx ? -0.75 + 0.5 * I : -0.75);
    const tu_ldc beta = tu_put_scalar(&sb, t, seed % 2 ? 0.0 : cplx ? 1.5 - 0.25 * I : 1.5);
    for (int j = 0; j < k; j++) {
        xs[j] = tu_random_vector(nxg + 1, t, seed + 10 * (uint64_t)j);
        y0[j] = tu_random_vector(nyg + 1, t, seed + 10 * (uint64_t)j + 5);
        for (int64_t i = 0; i < myx; i++)
            memcpy((char *)X + (col ? i + j * ldx : i * ldx + j) * vs,
                   at(xs[j], xs_at[rank] * bs + i, 1, t), vs);
        for (int64_t i = 0; i < myy && beta != 0; i++)
            memcpy((char *)Y + (col ? i + j * ldy : i * ldy + j) * vs,
                   at(y0[j], ys_at[rank] * bs + i, 1, t), vs);
    }
    if (cplx)
        TU_OK(bsrmv_dist_spmm_scalars(op, &sa, D, k, X, ldx, &sb, Y, ldy, layout));
    else
        TU_OK(bsrmv_dist_spmm(op, (double)creall(alpha), D, k, X, ldx, (double)creall(beta), Y,
                              ldy, layout));
    for (int j = 0; j < k; j++) {
        for (int64_t i = 0; i < myy; i++)
            memcpy((char *)part + i * vs, (char *)Y + (col ? i + j * ldy : i * ldy + j) * vs, vs);
        gather(part, yw, ys_at, bs, t);
        char msg[200];
        snprintf(msg, sizeof msg, "%s %sspmm op %c %s k %d column %d %s, %d ranks", what,
                 in.symmetric == BSRMV_SYM_HERMITIAN ? "Hermitian " : in.symmetric ? "symmetric " : "",
                 "NTC"[op], col ? "col" : "row", k, j, type_name[t], size);
        tu_check_complex(msg, F, op, alpha, xs[j], beta, y0[j], yw);
        free(xs[j]);
        free(y0[j]);
        checks++;
    }
    /* the padding of Y is not written */
    for (int64_t i = 0; i < leny; i++) {
        const int64_t r = col ? i % ldy : i / ldy, c = col ? i / ldy : i % ldy;
        if (r >= myy || c >= k)
            TU_CHECK(isnan(creall(tu_cget(Y, t, i))), "%s: the padding of Y at %lld was written",
                     what, (long long)i);
    }
    free(xs);
    free(y0);
    free(X);
    free(Y);
    free(yw);
    free(part);
    bsrmv_dist_matrix_destroy(D);
}

static void spmm_cases(void)
{
    int64_t *rs = new_starts(), *cs = new_starts();
    static const int ks[] = {1, 3, 17};
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 4; t++) {
            const tu_shape sh = {.mb = 31, .nb = s == 1 ? 45 : 31, .bs = s == 2 ? 10 : 3,
                                 .mean_len = 4, .empty_frac = 0.1, .long_row = 6,
                                 .long_len = 25};
            bsrmv_matrix *G = tu_random_bsr(&sh, (bsrmv_type)t, (bsrmv_order)s % 2, 900 + s);
            const part_kind k = (part_kind)((s + t) % NPART);
            partition(k, sh.mb, row_ptr_of(G), rs);
            if (sh.mb == sh.nb)
                memcpy(cs, rs, (size_t)(size + 1) * sizeof *cs);
            else
                partition(BALANCED, sh.nb, NULL, cs);
            for (int l = 0; l < 2; l++)
                for (int op = 0; op < (t >= BSRMV_COMPLEX_FLOAT ? 3 : 2); op++)
                    check_spmm(part_name[k], G, G, rs, cs, (bsrmv_op)op, ks[(s + l + op) % 3],
                               (bsrmv_layout)l, 910 + 2 * s + t + (uint64_t)op);
            bsrmv_matrix_destroy(G);
        }
    /* symmetric storage: the off-rank blocks' mirrors go back to their
     * owners (conjugated in Hermitian storage: complex double); its other
     * op is op T, Hermitian storage's op C */
    for (int t = 0; t < 4; t++) {
        const tu_shape sh = {.mb = 37, .nb = 37, .bs = t % 2 ? 3 : 2, .mean_len = 4,
                             .empty_frac = 0.1, .long_row = 5, .long_len = 25};
        const int herm = t == BSRMV_COMPLEX_DOUBLE;
        bsrmv_matrix *S = tu_random_sym(&sh, (bsrmv_type)t, (bsrmv_order)(t % 2),
                                        herm ? BSRMV_SYM_HERMITIAN : BSRMV_SYM_SYMMETRIC,
                                        940 + (uint64_t)t, herm);
        bsrmv_matrix *F;
        TU_OK(bsrmv_matrix_from_sym(&F, S));
        /* balanced or uneven: every rank has rows, and off-rank blocks */
        const part_kind k = (part_kind)(t % 2);
        partition(k, sh.mb, row_ptr_of(S), rs);
        for (int l = 0; l < 2; l++)
            check_spmm(part_name[k], S, F, rs, rs, l ? (herm ? BSRMV_OP_C : BSRMV_OP_T) : BSRMV_OP_N,
                       ks[(t + l) % 3], (bsrmv_layout)l, 950 + 2 * (uint64_t)t + (uint64_t)l);
        if (t == BSRMV_COMPLEX_FLOAT) { /* complex symmetric: A^H is not built */
            bsrmv_dist_matrix *D;
            TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, S, rs));
            const int64_t my = (rs[rank + 1] - rs[rank]) * sh.bs;
            float _Complex *X = calloc((size_t)(2 * my + 2), sizeof *X), *Y = X + my + 1;
            expect_everywhere(bsrmv_dist_spmm(BSRMV_OP_C, 1.0, D, 1, X, my + 1, 0.0, Y, my + 1,
                                              BSRMV_LAYOUT_COL),
                              BSRMV_ERR_UNSUPPORTED, "spmm op C of complex symmetric",
                              "not built");
            free(X);
            bsrmv_dist_matrix_destroy(D);
        }
        bsrmv_matrix_destroy(F);
        bsrmv_matrix_destroy(S);
    }
    bsrmv_matrix *L, *LS;
    TU_OK(bsrmv_generate_block_laplacian(&L, 4, 4, 24, 3, 5, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    TU_OK(bsrmv_matrix_to_sym(&LS, L, 0));
    partition(BALANCED, 384, row_ptr_of(LS), rs);
    check_spmm("laplacian 4x4x24", LS, L, rs, rs, BSRMV_OP_N, 5, BSRMV_LAYOUT_ROW, 960);
    bsrmv_matrix_destroy(LS);
    bsrmv_matrix_destroy(L);
    /* refusals: on every rank, none hangs */
    const tu_shape sh = {.mb = 8, .nb = 8, .bs = 2, .mean_len = 2, .long_row = -1};
    bsrmv_matrix *G = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 930);
    partition(BALANCED, sh.mb, row_ptr_of(G), rs);
    bsrmv_dist_matrix *D;
    TU_OK(make_dist(&D, G, rs, rs));
    const int64_t my = (rs[rank + 1] - rs[rank]) * 2;
    double X[64] = {0}, Y[64] = {0};
    if (size > 1)
        expect_everywhere(bsrmv_dist_spmm(BSRMV_OP_N, 1.0, D, rank == 0 ? 2 : 3, X, my + 1, 0.0,
                                          Y, my + 1, BSRMV_LAYOUT_COL),
                          BSRMV_ERR_ARGUMENT, "spmm k", "disagree on k");
    expect_everywhere(bsrmv_dist_spmm(BSRMV_OP_N, 1.0, D, 2, X, rank == size - 1 ? 0 : my + 1,
                                      0.0, Y, my + 1, BSRMV_LAYOUT_COL),
                      BSRMV_ERR_ARGUMENT, "spmm ld", "bsrmv_dist_spmm");
    if (size > 1)
        expect_everywhere(bsrmv_dist_spmm(rank == 0 ? BSRMV_OP_T : BSRMV_OP_N, 1.0, D, 2, X,
                                          my + 1, 0.0, Y, my + 1, BSRMV_LAYOUT_COL),
                          BSRMV_ERR_ARGUMENT, "spmm op", "disagree on op");
    checks++;
    bsrmv_dist_matrix_destroy(D);
    bsrmv_matrix_destroy(G);
    free(rs);
    free(cs);
}

/* ---- test systems ---------------------------------------------------- */

/* A system to solve: complex ones from tu_csys_make (of `kind`), real
 * ones generated (the SPD Laplacian for spd, else the reservoir matrix). */
typedef struct test_system {
    bsrmv_matrix *A;
    tu_csys Z; /* complex: Z.A is A */
} test_system;

static test_system system_make(bsrmv_type t, int spd, enum tu_ckind kind, bsrmv_order order,
                               uint64_t seed)
{
    test_system S = {0};
    if (t >= BSRMV_COMPLEX_FLOAT) {
        S.Z = tu_csys_make(30, 3, t, order, kind, seed);
        S.A = S.Z.A;
    } else if (spd) {
        TU_OK(bsrmv_generate_block_laplacian(&S.A, 6, 5, 4, 3, 5, t, order));
    } else {
        TU_OK(bsrmv_generate_reservoir(&S.A, 6, 5, 4, 3, 5, t, order));
    }
    return S;
}

static void system_drop(test_system *S)
{
    if (S->Z.A)
        tu_csys_drop(&S->Z);
    else
        bsrmv_matrix_destroy(S->A);
}

/* ||x - y|| / ||x|| (||x - y|| for x = 0) of two whole vectors. */
static double rel_diff(const void *x, const void *y, int64_t n, bsrmv_type t)
{
    long double dx = 0, nx = 0;
    for (int64_t i = 0; i < n; i++) {
        const tu_ldc a = tu_cget(x, t, i), d = a - tu_cget(y, t, i);
        dx += cabsl(d) * cabsl(d);
        nx += cabsl(a) * cabsl(a);
    }
    return (double)(nx > 0 ? sqrtl(dx / nx) : sqrtl(dx));
}

/* ---- symmetric storage ---------------------------------------------- */

/* S (symmetric or Hermitian storage) scattered by the row starts rs; its
 * products (OP_N and the op that equals it) against the full matrix's. */
static void check_spmv_sym(const char *what, const bsrmv_matrix *S, const int64_t *rs,
                           uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(S, &in));
    bsrmv_matrix *F;
    TU_OK(bsrmv_matrix_from_sym(&F, S));
    bsrmv_dist_matrix *D;
    TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, S, rs));
    bsrmv_dist_info di;
    TU_OK(bsrmv_dist_matrix_get_info(D, &di));
    TU_CHECK(di.symmetric == in.symmetric, "%s: distributed storage %d, the matrix's %d", what,
             di.symmetric, in.symmetric);
    const int bs = in.bs;
    const bsrmv_type t = in.type;
    const int cplx = t >= BSRMV_COMPLEX_FLOAT, herm = in.symmetric == BSRMV_SYM_HERMITIAN;
    const int64_t n = in.rows, mine = (rs[rank + 1] - rs[rank]) * bs;
    void *x = tu_random_vector(n > 0 ? n : 1, t, seed + 1);
    void *y0 = tu_random_vector(n > 0 ? n : 1, t, seed + 2);
    void *yw = tu_nan_vector(n > 0 ? n : 1, t);
    const bsrmv_op same = herm ? BSRMV_OP_C : BSRMV_OP_T;
    for (size_t c = 0; c < sizeof cab / sizeof cab[0]; c++) {
        tu_scalar sa, sb;
        const double _Complex a = cplx ? cab[c][0] : creal(cab[c][0]);
        const double _Complex b = cplx ? cab[c][1] : creal(cab[c][1]);
        const tu_ldc alpha = tu_put_scalar(&sa, t, a), beta = tu_put_scalar(&sb, t, b);
        void *y = tu_nan_vector(mine + 1, t);
        if (beta != 0)
            memcpy(y, at(y0, rs[rank], bs, t), (size_t)mine * bsrmv_type_size(t));
        const bsrmv_op op = c % 2 ? same : BSRMV_OP_N;
        TU_OK(bsrmv_dist_spmv_scalars(op, &sa, D, at(x, rs[rank], bs, t), mine, &sb, y, mine));
        gather(y, yw, rs, bs, t);
        char msg[200];
        snprintf(msg, sizeof msg, "%s %s %s, %d ranks", what, herm ? "hermitian" : "symmetric",
                 in.order == BSRMV_COL_MAJOR ? "col" : "row", size);
        tu_check_complex(msg, F, BSRMV_OP_N, alpha, x, beta, y0, yw);
        checks++;
        free(y);
    }
    if (cplx) { /* the other conjugate op: refused on every rank, nothing hangs */
        const bsrmv_op other = herm ? BSRMV_OP_T : BSRMV_OP_C;
        tu_scalar one;
        tu_put_scalar(&one, t, 1);
        void *y = tu_nan_vector(mine + 1, t);
        TU_CHECK(bsrmv_dist_spmv_scalars(other, &one, D, at(x, rs[rank], bs, t), mine, &one, y,
                                         mine) == BSRMV_ERR_UNSUPPORTED,
                 "%s: the unbuilt op was not refused", what);
        free(y);
        checks++;
    }
    bsrmv_dist_matrix_destroy(D);
    bsrmv_matrix_destroy(F);
    free(x);
    free(y0);
    free(yw);
}

static void sym_cases(void)
{
    int64_t *rs = new_starts();
    static const int bss[] = {1, 2, 3, 5, 8};
    for (size_t b = 0; b < sizeof bss / sizeof bss[0]; b++)
        for (int t = 0; t < 4; t++)
            for (int kind = BSRMV_SYM_SYMMETRIC; kind <= BSRMV_SYM_HERMITIAN; kind++) {
                if (kind == BSRMV_SYM_HERMITIAN && t < BSRMV_COMPLEX_FLOAT)
                    continue;
                const tu_shape sh = {.mb = 29, .nb = 29, .bs = bss[b], .mean_len = 5,
                                     .empty_frac = 0.1, .long_row = 4, .long_len = 25};
                bsrmv_matrix *S = tu_random_sym(&sh, (bsrmv_type)t, (bsrmv_order)(b % 2), kind,
                                                800 + b, false);
                const part_kind k = (part_kind)((b + t) % NPART);
                partition(k, sh.mb, row_ptr_of(S), rs);
                check_spmv_sym(part_name[k], S, rs, 810 + b);
                bsrmv_matrix_destroy(S);
            }
    /* a grid's SPD matrix: few rows have off-rank blocks */
    bsrmv_matrix *G, *S;
    TU_OK(bsrmv_generate_block_laplacian(&G, 4, 4, 24, 3, 5, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
    TU_OK(bsrmv_matrix_to_sym(&S, G, 1e-12));
    partition(BALANCED, 384, row_ptr_of(S), rs);
    check_spmv_sym("laplacian 4x4x24", S, rs, 820);
    bsrmv_matrix_destroy(G);
    bsrmv_matrix_destroy(S);

    /* a block below the diagonal on the last rank: refused everywhere */
    const int64_t m = 2, n = 2 * size;
    int64_t rp[3] = {0, 1, 2}, ci[2] = {2 * rank, 2 * rank + 1};
    if (rank == size - 1 && size > 1)
        ci[0] = 2 * rank - 1;
    double val[8] = {1, 0, 0, 1, 1, 0, 0, 1};
    bsrmv_dist_matrix *D = NULL;
    bsrmv_status st = bsrmv_dist_matrix_create_sym(&D, MPI_COMM_WORLD, n, 2, 2 * rank, m, 2, rp,
                                                   ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR,
                                                   BSRMV_SYM_SYMMETRIC);
    if (size > 1)
        expect_everywhere(st, BSRMV_ERR_STRUCTURE, "a block below the diagonal",
                          "below the diagonal");
    else {
        TU_OK(st);
        bsrmv_dist_matrix_destroy(D);
    }

    /* CG in symmetric storage against the single-process CG on the full matrix */
    static const struct {
        bsrmv_type t;
        int precond;
    } solves[] = {
        {BSRMV_DOUBLE, 1}, {BSRMV_DOUBLE, 0}, {BSRMV_FLOAT, 1}, {BSRMV_COMPLEX_DOUBLE, 1}};
    for (size_t c = 0; c < sizeof solves / sizeof solves[0]; c++) {
        const bsrmv_type t = solves[c].t;
        test_system sys = system_make(t, 1, TU_HPD, BSRMV_ROW_MAJOR, 830);
        bsrmv_matrix *A = sys.A, *H = NULL;
        TU_OK(t >= BSRMV_COMPLEX_FLOAT ? bsrmv_matrix_to_herm(&H, A, 1e-12)
                                       : bsrmv_matrix_to_sym(&H, A, 1e-6));
        bsrmv_matrix_info in;
        TU_OK(bsrmv_matrix_get_info(A, &in));
        const double rtol = t == BSRMV_FLOAT ? 1e-5 : 1e-8;
        void *b = tu_random_vector(in.rows, t, 840 + c);
        void *x1 = tu_nan_vector(in.rows, t);
        bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .x0_zero = 1};
        bsrmv_solve_report r1, r2;
        bsrmv_precond *P1 = NULL, *P2 = NULL;
        if (solves[c].precond)
            TU_OK(bsrmv_precond_block_jacobi(&P1, A));
        TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, A, P1, b, x1, in.rows, &o, &r1));
        partition(size == 3 ? ODD_EMPTY : BALANCED, in.mb, row_ptr_of(H), rs);
        TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, H, rs));
        if (solves[c].precond)
            TU_OK(bsrmv_dist_precond_block_jacobi(&P2, D));
        const int64_t mine = (rs[rank + 1] - rs[rank]) * in.bs;
        void *x2 = tu_nan_vector(mine + 1, t), *xw = tu_nan_vector(in.rows, t);
        TU_OK(bsrmv_dist_solve(BSRMV_SOLVER_CG, D, P2, at(b, rs[rank], in.bs, t), x2, mine, &o,
                               &r2));
        gather(x2, xw, rs, in.bs, t);
        const double rel = rel_diff(x1, xw, in.rows, t);
        if (rank == 0)
            printf("  cg       %-10s %-14s %s, %d ranks: %d iterations (one process, full "
                   "storage, %d), true residual %.2e, solutions differ by %.2e\n",
                   t >= BSRMV_COMPLEX_FLOAT ? "hermitian" : "symmetric",
                   t == BSRMV_FLOAT    ? "float"
                   : t == BSRMV_DOUBLE ? "double"
                                       : "complex double",
                   solves[c].precond ? "jacobi" : "none", size, r2.iterations, r1.iterations,
                   r2.true_rel_residual, rel);
        TU_CHECK(r2.converged && r2.true_rel_residual <= rtol, "symmetric CG %zu: %g", c,
                 r2.true_rel_residual);
        TU_CHECK(abs(r2.iterations - r1.iterations) <= 2 + r1.iterations / 20,
                 "symmetric CG %zu: %d iterations distributed, %d in one process", c,
                 r2.iterations, r1.iterations);
        TU_CHECK(rel <= (t == BSRMV_FLOAT ? 1e-2 : 1e-5),
                 "symmetric CG %zu: solutions differ by %g", c, rel);
        checks++;
        bsrmv_precond_destroy(P1);
        bsrmv_precond_destroy(P2);
        bsrmv_dist_matrix_destroy(D);
        bsrmv_matrix_destroy(H);
        system_drop(&sys);
        free(b);
        free(x1);
        free(x2);
        free(xw);
    }
    free(rs);
}

/* Several right-hand sides: bsrmv_dist_solve_multi against bsrmv_solve of
 * each column in one process. */
static void solve_multi_cases(void)
{
    int64_t *rs = new_starts();
    static const struct {
        bsrmv_solver m;
        bsrmv_type t;
        int k, precond, sym;
    } cases[] = {{BSRMV_SOLVER_CG, BSRMV_DOUBLE, 5, 1, 0},
                 {BSRMV_SOLVER_BICGSTAB, BSRMV_DOUBLE, 3, 1, 0},
                 {BSRMV_SOLVER_GMRES, BSRMV_FLOAT, 4, 0, 0},
                 {BSRMV_SOLVER_CG, BSRMV_DOUBLE, 3, 1, 1},
                 {BSRMV_SOLVER_BICGSTAB, BSRMV_COMPLEX_DOUBLE, 3, 1, 0},
                 {BSRMV_SOLVER_GMRES, BSRMV_COMPLEX_FLOAT, 4, 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bsrmv_type t = cases[c].t;
        test_system sys = system_make(t, cases[c].m == BSRMV_SOLVER_CG, TU_NONHERM,
                                      (bsrmv_order)(c % 2), 950 + c);
        bsrmv_matrix *A = sys.A, *S = NULL;
        if (cases[c].sym)
            TU_OK(bsrmv_matrix_to_sym(&S, A, 1e-6));
        bsrmv_matrix_info in;
        TU_OK(bsrmv_matrix_get_info(A, &in));
        const int k = cases[c].k;
        const double rtol = t == BSRMV_FLOAT || t == BSRMV_COMPLEX_FLOAT ? 1e-5 : 1e-8;
        const size_t vs = bsrmv_type_size(t);
        bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .restart = 20, .x0_zero = 1};
        partition(size == 4 ? UNEVEN : BALANCED, in.mb, row_ptr_of(A), rs);
        bsrmv_dist_matrix *D;
        TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, S ? S : A, rs));
        bsrmv_precond *P1 = NULL, *P2 = NULL;
        if (cases[c].precond) {
            TU_OK(bsrmv_precond_block_jacobi(&P1, A));
            TU_OK(bsrmv_dist_precond_block_jacobi(&P2, D));
        }
        const int64_t n = (rs[rank + 1] - rs[rank]) * in.bs, ld = n + 2;
        char *B = malloc((size_t)(ld * k) * vs + 1), *X = malloc((size_t)(ld * k) * vs + 1);
        void *bw[5], *x1[5];
        bsrmv_solve_report r1[5], r2[5];
        TU_CHECK(B && X, "out of memory");
        for (int j = 0; j < k; j++) {
            /* column 1 is zero: it converges at once with x = 0 */
            bw[j] = j == 1 ? calloc((size_t)in.rows + 1, vs)
                           : tu_random_vector(in.rows, t, 960 + 10 * c + (size_t)j);
            x1[j] = tu_nan_vector(in.rows, t);
            TU_OK(bsrmv_solve(cases[c].m, A, P1, bw[j], x1[j], in.rows, &o, &r1[j]));
            memcpy(B + (size_t)(j * ld) * vs, at(bw[j], rs[rank], in.bs, t), (size_t)n * vs);
        }
        TU_OK(bsrmv_dist_solve_multi(cases[c].m, D, P2, n, k, B, ld, X, ld, &o, r2));
        void *xw = tu_nan_vector(in.rows, t);
        for (int j = 0; j < k; j++) {
            gather(X + (size_t)(j * ld) * vs, xw, rs, in.bs, t);
            const double rel = rel_diff(x1[j], xw, in.rows, t);
            TU_CHECK(r2[j].converged && r2[j].true_rel_residual <= rtol,
                     "multi case %zu column %d: not converged (%g)", c, j,
                     r2[j].true_rel_residual);
            TU_CHECK(abs(r2[j].iterations - r1[j].iterations) <= 2 + r1[j].iterations / 20,
                     "multi case %zu column %d: %d iterations, %d in one process", c, j,
                     r2[j].iterations, r1[j].iterations);
            TU_CHECK(rel <= (t == BSRMV_FLOAT || t == BSRMV_COMPLEX_FLOAT ? 1e-2 : 1e-5),
                     "multi case %zu column %d: solutions differ by %g", c, j, rel);
            if (rank == 0 && j == 0)
                printf("  multi    %-8s %-14s k %d%s, %d ranks: column 0 %d iterations (one "
                       "process %d), solutions differ by %.2e\n",
                       cases[c].m == BSRMV_SOLVER_CG         ? "cg"
                       : cases[c].m == BSRMV_SOLVER_BICGSTAB ? "bicgstab"
                                                             : "gmres",
                       type_name[t], k, cases[c].sym ? " symmetric" : "", size,
                       r2[j].iterations, r1[j].iterations, rel);
            free(bw[j]);
            free(x1[j]);
            checks++;
        }
        free(xw);
        free(B);
        free(X);
        bsrmv_precond_destroy(P1);
        bsrmv_precond_destroy(P2);
        bsrmv_dist_matrix_destroy(D);
        bsrmv_matrix_destroy(S);
        system_drop(&sys);
    }
    /* ranks without rows (all rows on the last): they take part in every
     * product and reduction with vectors of no length */
    if (size > 1) {
        bsrmv_matrix *A;
        TU_OK(bsrmv_generate_block_laplacian(&A, 4, 4, 4, 2, 5, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        partition(ALL_LAST, 64, row_ptr_of(A), rs);
        bsrmv_dist_matrix *D;
        TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, A, rs));
        const int k = 3;
        const int64_t N = 128, n = (rs[rank + 1] - rs[rank]) * 2, ld = n + 1;
        bsrmv_solve_options o = {.rtol = 1e-9, .max_iter = 500, .x0_zero = 1};
        double *B = calloc((size_t)(ld * k), sizeof *B), *X = calloc((size_t)(ld * k), sizeof *X);
        TU_CHECK(B && X, "out of memory");
        bsrmv_solve_report r2[3];
        double *bw[3], *x1[3];
        for (int j = 0; j < k; j++) {
            bw[j] = tu_random_vector(N, BSRMV_DOUBLE, 990 + (uint64_t)j);
            x1[j] = tu_nan_vector(N, BSRMV_DOUBLE);
            TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, A, NULL, bw[j], x1[j], N, &o, NULL));
            memcpy(B + j * ld, bw[j] + rs[rank] * 2, (size_t)n * sizeof *B);
        }
        TU_OK(bsrmv_dist_solve_multi(BSRMV_SOLVER_CG, D, NULL, n, k, B, ld, X, ld, &o, r2));
        double *xw = tu_nan_vector(N, BSRMV_DOUBLE);
        for (int j = 0; j < k; j++) {
            gather(X + j * ld, xw, rs, 2, BSRMV_DOUBLE);
            const double rel = rel_diff(x1[j], xw, N, BSRMV_DOUBLE);
            TU_CHECK(r2[j].converged && rel <= 1e-6,
                     "multi with empty ranks, column %d: converged %d, solutions differ by %g",
                     j, r2[j].converged, rel);
            free(bw[j]);
            free(x1[j]);
            checks++;
        }
        free(xw);
        free(B);
        free(X);
        bsrmv_dist_matrix_destroy(D);
        bsrmv_matrix_destroy(A);
    }
    free(rs);
}

/* Complex systems: CG on Hermitian positive definite ones, BiCGSTAB and
 * GMRES on non-Hermitian ones, distributed against one process. */
static void complex_solver_cases(void)
{
    static const struct {
        bsrmv_solver m;
        enum tu_ckind kind;
        int precond;
    } cases[] = {{BSRMV_SOLVER_CG, TU_HPD, 1},
                 {BSRMV_SOLVER_CG, TU_HPD, 0},
                 {BSRMV_SOLVER_BICGSTAB, TU_NONHERM, 1},
                 {BSRMV_SOLVER_GMRES, TU_NONHERM, 1},
                 {BSRMV_SOLVER_GMRES, TU_HPD, 0}};
    int64_t *rs = new_starts();
    for (int t = BSRMV_COMPLEX_FLOAT; t <= BSRMV_COMPLEX_DOUBLE; t++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            tu_csys S = tu_csys_make(30, 3, (bsrmv_type)t, (bsrmv_order)(c % 2), cases[c].kind,
                                     700 + c);
            const double rtol = t == BSRMV_COMPLEX_DOUBLE ? 1e-8 : 1e-5;
            void *b = tu_random_vector(S.n, (bsrmv_type)t, 710 + c);
            void *x1 = tu_nan_vector(S.n, (bsrmv_type)t);
            bsrmv_solve_options o = {.rtol = rtol, .max_iter = 2000, .restart = 20, .x0_zero = 1};
            bsrmv_solve_report r1, r2;
            bsrmv_precond *P1 = NULL, *P2 = NULL;
            if (cases[c].precond)
                TU_OK(bsrmv_precond_block_jacobi(&P1, S.A));
            TU_OK(bsrmv_solve(cases[c].m, S.A, P1, b, x1, S.n, &o, &r1));
            partition(size == 3 ? ODD_EMPTY : size == 4 ? UNEVEN : BALANCED, S.mb,
                      row_ptr_of(S.A), rs);
            bsrmv_dist_matrix *D;
            TU_OK(make_dist(&D, S.A, rs, rs));
            if (cases[c].precond)
                TU_OK(bsrmv_dist_precond_block_jacobi(&P2, D));
            const int64_t n = (rs[rank + 1] - rs[rank]) * S.bs;
            void *x2 = tu_nan_vector(n + 1, (bsrmv_type)t);
            void *xw = tu_nan_vector(S.n, (bsrmv_type)t);
            TU_OK(bsrmv_dist_solve(cases[c].m, D, P2, at(b, rs[rank], S.bs, (bsrmv_type)t), x2, n,
                                   &o, &r2));
            gather(x2, xw, rs, S.bs, (bsrmv_type)t);
            const double res = tu_csys_residual(&S, b, xw);
            if (rank == 0)
                printf("  %-8s complex %-6s %s, %d ranks: %d iterations (one process %d), "
                       "residual %.2e\n",
                       cases[c].m == BSRMV_SOLVER_CG         ? "cg"
                       : cases[c].m == BSRMV_SOLVER_BICGSTAB ? "bicgstab"
                                                             : "gmres",
                       t == BSRMV_COMPLEX_DOUBLE ? "double" : "float",
                       cases[c].precond ? "jacobi" : "none", size, r2.iterations, r1.iterations,
                       res);
            TU_CHECK(r2.converged && res <= 2 * rtol, "complex case %zu: residual %g", c, res);
            const int slack = 2 + r1.iterations / 20;
            TU_CHECK(abs(r2.iterations - r1.iterations) <= slack,
                     "complex case %zu: %d iterations distributed, %d in one process", c,
                     r2.iterations, r1.iterations);
            checks++;
            bsrmv_precond_destroy(P1);
            bsrmv_precond_destroy(P2);
            bsrmv_dist_matrix_destroy(D);
            tu_csys_drop(&S);
            free(b);
            free(x1);
            free(x2);
            free(xw);
        }
    free(rs);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    spmv_cases();
    complex_spmv_cases();
    spmm_cases();
    halo_plan_case();
    error_cases();
    mm_cases();
    solver_cases();
    solve_multi_cases();
    complex_solver_cases();
    sym_cases();
    long total = 0;
    MPI_Reduce(&checks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_mpi: %d ranks, %ld checks passed (summed over ranks)\n", size, total);
    MPI_Finalize();
    return 0;
}
