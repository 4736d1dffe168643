/* Complex values (docs/COMPLEX.md): CPU SpMV of float and double complex
 * matrices against a long double complex reference, for every compiled
 * block size and runtime ones, both block orders, both row_ptr widths, the
 * specialised and the generic kernels, OP_N, OP_T and OP_C, alpha and beta
 * in {0, 1, a complex value}, y poisoned with NaN where beta == 0; the
 * Matrix Market complex field (general, symmetric, skew-symmetric,
 * hermitian) read and written; the conversions and generators; and the
 * entry points that refuse complex matrices. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "testutil_complex.h"

#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static const double _Complex coefs[] = {0.0, 1.0, -1.5 + 0.75 * I};

/* One product through bsrmv_spmv_scalars, checked. */
static void one_case(const char *what, const bsrmv_matrix *A, bsrmv_op op, double _Complex a,
                     double _Complex b, const void *x, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    tu_scalar sa, sb;
    const tu_ldc alpha = tu_put_scalar(&sa, in.vector_type, a), beta = tu_put_scalar(&sb, in.vector_type, b);
    /* beta == 0: y starts as NaN and must not leak into the result. */
    void *y0 = b == 0 ? tu_nan_vector(ny, in.vector_type)
                      : tu_random_vector(ny, in.vector_type, seed);
    void *y = tu_copy_vector(y0, ny, in.vector_type);
    TU_OK(bsrmv_spmv_scalars(op, &sa, A, x, nx, &sb, y, ny));
    tu_check_complex(what, A, op, alpha, x, beta, y0, y);
    free(y0);
    free(y);
}

/* The three ops on A; all nine (alpha, beta) pairs when `full`, else three
 * that cover alpha and beta in {0, 1, other}. */
static void run_cases(const char *what, const bsrmv_matrix *A, uint64_t seed, bool full)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    for (int op = 0; op < 3; op++) {
        const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
        void *x = tu_random_vector(nx, in.vector_type, seed + 1);
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++)
                if (full || (ia + 1) % 3 == ib)
                    one_case(what, A, (bsrmv_op)op, coefs[ia], coefs[ib], x, seed + 2);
        free(x);
    }
}

/* A of the shape in both complex types, both orders, both widths; the
 * generic kernel too when `full`. */
static void run_all(const char *what, const tu_shape *sh, uint64_t seed, bool full)
{
    const bsrmv_type types[] = {BSRMV_COMPLEX_FLOAT, BSRMV_COMPLEX_DOUBLE};
    for (int t = 0; t < 2; t++) {
        bsrmv_matrix *M[4];
        M[0] = tu_random_bsr(sh, types[t], BSRMV_COL_MAJOR, seed);
        M[1] = tu_reorder(M[0], BSRMV_ROW_MAJOR);
        M[2] = tu_narrow(M[0]);
        M[3] = tu_narrow(M[1]);
        for (int k = 0; k < (full ? 2 : 1); k++)
            for (int m = 0; m < 4; m++) {
                TU_OK(bsrmv_matrix_set_cpu_kernel(M[m], (bsrmv_cpu_kernel)k));
                run_cases(what, M[m], seed, full && m < 2);
            }
        for (int m = 0; m < 4; m++)
            bsrmv_matrix_destroy(M[m]);
    }
}

static void test_block_sizes(void)
{
    /* The compiled sizes (bsrmv_cpu_has_kernel) and two runtime ones; the
     * generic kernel also runs every size <= 8 (run_all's `full`). */
    for (int bs = 1; bs <= 32; bs++) {
        const bool compiled = bsrmv_cpu_has_kernel(bs);
        if (!compiled && bs != 9 && bs != 13)
            continue;
        const uint64_t seed = 3000 + (uint64_t)bs;
        tu_shape small = {37, 23, bs, 4.0, 0.2, -1, 0};
        run_all("small non-square", &small, seed, bs <= 9);
        tu_shape one = {1, 40, bs, 10.0, 0.0, -1, 0};
        run_all("one block row", &one, seed + 11, false);
        /* Enough work for the threaded split. */
        const int64_t mb = 20000 / ((int64_t)bs * bs * 6) + 64;
        tu_shape big = {mb, mb + 5, bs, 6.0, 0.05, mb / 2, mb < 300 ? mb : 300};
        run_all("threaded", &big, seed + 13, false);
    }
    tu_shape longrow = {5, 6000, 3, 2.0, 0.0, 2, 5000};
    run_all("block row with 5000 blocks", &longrow, 77, false);
    tu_shape empty = {20, 20, 3, 0.0, 1.0, -1, 0};
    run_all("all rows empty", &empty, 5, true);
}

/* bsrmv_spmv's double scalars on a complex matrix, and
 * bsrmv_spmv_scalars on real ones: the same products. */
static void test_scalar_entries(void)
{
    tu_shape sh = {30, 25, 3, 4.0, 0.1, -1, 0};
    const bsrmv_type types[] = {BSRMV_FLOAT, BSRMV_DOUBLE, BSRMV_COMPLEX_FLOAT,
                                BSRMV_COMPLEX_DOUBLE};
    for (int t = 0; t < 4; t++) {
        bsrmv_matrix *A = tu_random_bsr(&sh, types[t], BSRMV_COL_MAJOR, 40 + (uint64_t)t);
        for (int op = 0; op < 3; op++) {
            const int64_t nx = op == BSRMV_OP_N ? 75 : 90, ny = op == BSRMV_OP_N ? 90 : 75;
            void *x = tu_random_vector(nx, types[t], 50);
            void *y0 = tu_random_vector(ny, types[t], 51);
            void *y = tu_copy_vector(y0, ny, types[t]);
            TU_OK(bsrmv_spmv((bsrmv_op)op, -2.5, A, x, nx, 0.5, y, ny));
            tu_check_complex("double scalars", A, (bsrmv_op)op, -2.5, x, 0.5, y0, y);
            if (tu_parts(types[t]) == 1)
                one_case("real scalars by pointer", A, (bsrmv_op)op, 3.0, -1.0, x, 52);
            free(x);
            free(y0);
            free(y);
        }
        bsrmv_matrix_destroy(A);
    }
    /* alpha == 0 reads neither A nor x; beta == 0 does not read y. */
    int64_t rp[2] = {0, 1};
    int32_t ci[1] = {0};
    double val[2] = {NAN, NAN};
    bsrmv_matrix *A;
    TU_OK(bsrmv_matrix_wrap(&A, 1, 1, 1, 1, rp, ci, val, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR));
    double _Complex y[1] = {2 + 3 * I}, zero = 0, b = I;
    TU_OK(bsrmv_spmv_scalars(BSRMV_OP_C, &zero, A, NULL, 1, &b, y, 1));
    TU_CHECK(y[0] == -3 + 2 * I, "y = (%g, %g)", creal(y[0]), cimag(y[0]));
    y[0] = NAN;
    TU_OK(bsrmv_spmv_scalars(BSRMV_OP_N, &zero, A, NULL, 1, &zero, y, 1));
    TU_CHECK(y[0] == 0, "y = (%g, %g)", creal(y[0]), cimag(y[0]));
    TU_FAILS(bsrmv_spmv_scalars(BSRMV_OP_N, NULL, A, NULL, 1, &zero, y, 1), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_spmv_scalars((bsrmv_op)3, &b, A, y, 1, &zero, y + 0, 1), BSRMV_ERR_ARGUMENT);
    bsrmv_matrix_destroy(A);
}

static char dir[64];

static const char *file_with(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    TU_CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    return path;
}

/* Entry (i, j) of coo (summed over duplicates) as a complex value. */
static double _Complex coo_at(const bsrmv_coo *c, int64_t i, int64_t j)
{
    double _Complex s = 0;
    for (int64_t k = 0; k < c->nnz; k++)
        if (c->row[k] == i && c->col[k] == j)
            s += c->val[k] + (c->imag ? c->imag[k] : 0) * I;
    return s;
}

/* a and b hold the same matrix entry by entry. */
static void same_coo(const char *what, const bsrmv_coo *a, const bsrmv_coo *b)
{
    TU_CHECK(a->m == b->m && a->n == b->n, "%s: shapes differ", what);
    for (int64_t k = 0; k < a->nnz; k++) {
        const double _Complex u = coo_at(a, a->row[k], a->col[k]);
        const double _Complex v = coo_at(b, a->row[k], a->col[k]);
        TU_CHECK(u == v, "%s: entry (%lld, %lld): (%.17g, %.17g) vs (%.17g, %.17g)", what,
                 (long long)a->row[k], (long long)a->col[k], creal(u), cimag(u), creal(v),
                 cimag(v));
    }
    for (int64_t k = 0; k < b->nnz; k++)
        TU_CHECK(coo_at(a, b->row[k], b->col[k]) == coo_at(b, b->row[k], b->col[k]),
                 "%s: entry (%lld, %lld) differs", what, (long long)b->row[k],
                 (long long)b->col[k]);
}

/* Read, write, read again: the same entries. */
static bsrmv_coo *round_trip(const char *what, const char *path)
{
    bsrmv_coo *a = NULL, *b = NULL;
    TU_OK(bsrmv_mm_read(path, &a));
    char out[128];
    snprintf(out, sizeof out, "%s/out.mtx.gz", dir);
    TU_OK(bsrmv_mm_write(out, a));
    TU_OK(bsrmv_mm_read(out, &b));
    TU_CHECK(b->imag && b->nnz == a->nnz, "%s: written back with %lld entries, imag %s", what,
             (long long)b->nnz, b->imag ? "set" : "NULL");
    same_coo(what, a, b);
    bsrmv_coo_destroy(b);
    return a;
}

static void test_matrix_market(void)
{
    /* general: entries as written, duplicates kept (the builders sum them) */
    bsrmv_coo *g = round_trip(
        "general", file_with("g.mtx", "%%MatrixMarket matrix coordinate complex general\n"
                                      "% a comment\n3 4 4\n1 1 1.5 -2\n3 4 0 1e-300\n"
                                      "2 3 -0.1 0.30000000000000004\n1 1 1 1\n"));
    TU_CHECK(g->m == 3 && g->n == 4 && g->nnz == 4, "general: %lld entries", (long long)g->nnz);
    TU_CHECK(coo_at(g, 0, 0) == 2.5 - 1 * I, "general: (1,1)");
    TU_CHECK(coo_at(g, 2, 3) == 1e-300 * I, "general: (3,4)");
    TU_CHECK(coo_at(g, 1, 2) == -0.1 + 0.30000000000000004 * I, "general: (2,3)");
    bsrmv_coo_destroy(g);
    /* hermitian: the mirror is the conjugate, the diagonal real */
    bsrmv_coo *h = round_trip(
        "hermitian", file_with("h.mtx", "%%MatrixMarket matrix coordinate complex hermitian\n"
                                        "3 3 4\n1 1 4 0\n2 1 1 2\n3 2 -3 0.5\n3 3 7 -0\n"));
    TU_CHECK(h->nnz == 6, "hermitian: %lld entries, want 6", (long long)h->nnz);
    TU_CHECK(coo_at(h, 1, 0) == 1 + 2 * I && coo_at(h, 0, 1) == 1 - 2 * I, "hermitian: (2,1)");
    TU_CHECK(coo_at(h, 2, 1) == -3 + 0.5 * I && coo_at(h, 1, 2) == -3 - 0.5 * I,
             "hermitian: (3,2)");
    /* A Hermitian matrix is its own conjugate transpose: A^H x == A x. */
    for (int bs = 1; bs <= 2; bs++) {
        bsrmv_matrix *A;
        TU_OK(bsrmv_matrix_from_coo(&A, h, bs, BSRMV_SPLIT, BSRMV_COMPLEX_DOUBLE,
                                    BSRMV_ROW_MAJOR));
        bsrmv_matrix_info in;
        TU_OK(bsrmv_matrix_get_info(A, &in));
        double _Complex x[4] = {1 + I, -2, 0.5 * I, 3}, y1[4], y2[4];
        TU_OK(bsrmv_spmv(BSRMV_OP_N, 1, A, x, in.cols, 0, y1, in.rows));
        TU_OK(bsrmv_spmv(BSRMV_OP_C, 1, A, x, in.rows, 0, y2, in.cols));
        for (int64_t i = 0; i < in.rows; i++)
            TU_CHECK(y1[i] == y2[i], "hermitian bs %d: A x and A^H x differ at %lld", bs,
                     (long long)i);
        bsrmv_matrix_destroy(A);
    }
    bsrmv_coo_destroy(h);
    /* symmetric: the mirror is the same value; skew-symmetric: its negative */
    bsrmv_coo *s = round_trip(
        "symmetric", file_with("s.mtx", "%%MatrixMarket matrix coordinate complex symmetric\n"
                                        "2 2 2\n1 1 1 1\n2 1 0.5 -0.25\n"));
    TU_CHECK(s->nnz == 3 && coo_at(s, 0, 1) == 0.5 - 0.25 * I, "symmetric: mirror");
    bsrmv_coo_destroy(s);
    bsrmv_coo *k = round_trip(
        "skew", file_with("k.mtx", "%%MatrixMarket matrix coordinate complex skew-symmetric\n"
                                   "2 2 1\n2 1 0.5 -0.25\n"));
    TU_CHECK(k->nnz == 2 && coo_at(k, 0, 1) == -0.5 + 0.25 * I, "skew: mirror");
    bsrmv_coo_destroy(k);
    /* bsrmv_mm_read_sym keeps the triangle of complex symmetric and
     * hermitian files, as the upper one (hermitian: conjugated) */
    int sym = -1;
    bsrmv_coo *e = NULL;
    TU_OK(bsrmv_mm_read_sym(file_with("s2.mtx", "%%MatrixMarket matrix coordinate complex "
                                                "symmetric\n2 2 1\n2 1 0.5 -0.25\n"),
                            &e, &sym));
    TU_CHECK(sym == BSRMV_SYM_SYMMETRIC && e->nnz == 1 && e->imag && e->row[0] == 0 &&
                 e->col[0] == 1 && e->val[0] == 0.5 && e->imag[0] == -0.25,
             "read_sym of a complex symmetric file: sym %d", sym);
    bsrmv_coo_destroy(e);
    TU_OK(bsrmv_mm_read_sym(file_with("h2.mtx", "%%MatrixMarket matrix coordinate complex "
                                                "hermitian\n2 2 2\n1 1 3 0\n2 1 0.5 -0.25\n"),
                            &e, &sym));
    TU_CHECK(sym == BSRMV_SYM_HERMITIAN && e->nnz == 2 && e->row[1] == 0 && e->col[1] == 1 &&
                 e->val[1] == 0.5 && e->imag[1] == 0.25,
             "read_sym of a hermitian file: sym %d", sym);
    bsrmv_coo_destroy(e);
    /* A complex matrix through COO and the file and back: the same values. */
    bsrmv_matrix *A;
    TU_OK(bsrmv_generate_grid(&A, 3, 2, 2, 3, 27, 5, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_coo *c = NULL, *r = NULL;
    TU_OK(bsrmv_matrix_to_coo(A, &c));
    TU_CHECK(c->imag, "to_coo of a complex matrix has no imag");
    char out[128];
    snprintf(out, sizeof out, "%s/grid.mtx", dir);
    TU_OK(bsrmv_mm_write(out, c));
    TU_OK(bsrmv_mm_read(out, &r));
    bsrmv_matrix *B;
    TU_OK(bsrmv_matrix_from_coo(&B, r, 3, BSRMV_SPLIT, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR));
    const void *va, *vb;
    const int64_t *rp;
    const int32_t *ci;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &va));
    TU_OK(bsrmv_matrix_arrays(B, &rp, &ci, &vb));
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    TU_CHECK(!memcmp(va, vb, (size_t)(in.nnzb * 9) * 16), "grid: values differ after the file");
    bsrmv_coo_destroy(c);
    bsrmv_coo_destroy(r);
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(B);
    /* a non-finite imaginary part is not written */
    bsrmv_coo *bad;
    TU_OK(bsrmv_coo_create_complex(&bad, 1, 1, 1));
    bad->row[0] = bad->col[0] = 0;
    bad->val[0] = 1;
    bad->imag[0] = INFINITY;
    TU_FAILS(bsrmv_mm_write(out, bad), BSRMV_ERR_ARGUMENT);
    bsrmv_coo_destroy(bad);
}

static void test_conversions(void)
{
    /* from COO: duplicates summed, split and promoted, both orders */
    bsrmv_coo *c;
    TU_OK(bsrmv_coo_create_complex(&c, 3, 3, 4));
    const int64_t rows[4] = {0, 2, 0, 1}, cols[4] = {0, 1, 0, 2};
    const double re[4] = {1, 2, 3, 4}, im[4] = {-1, 0.5, 2, 0};
    for (int k = 0; k < 4; k++) {
        c->row[k] = rows[k];
        c->col[k] = cols[k];
        c->val[k] = re[k];
        c->imag[k] = im[k];
    }
    for (int o = 0; o < 2; o++) {
        bsrmv_matrix *A;
        TU_OK(bsrmv_matrix_from_coo(&A, c, 2, BSRMV_SPLIT, BSRMV_COMPLEX_FLOAT, (bsrmv_order)o));
        bsrmv_coo *back;
        TU_OK(bsrmv_matrix_to_coo(A, &back));
        TU_CHECK(coo_at(back, 0, 0) == 4 + 1 * I && coo_at(back, 2, 1) == 2 + 0.5 * I &&
                     coo_at(back, 1, 2) == 4 && coo_at(back, 1, 1) == 0,
                 "split, order %d", o);
        bsrmv_coo_destroy(back);
        bsrmv_matrix_destroy(A);
        TU_OK(bsrmv_matrix_from_coo(&A, c, 2, BSRMV_PROMOTE, BSRMV_COMPLEX_DOUBLE,
                                    (bsrmv_order)o));
        TU_OK(bsrmv_matrix_to_coo(A, &back));
        TU_CHECK(back->m == 6 && coo_at(back, 1, 0) == 4 + 1 * I &&
                     coo_at(back, 5, 3) == 2 + 0.5 * I,
                 "promote, order %d", o);
        TU_OK(bsrmv_matrix_perturb_promoted(A, 3));
        bsrmv_coo_destroy(back);
        bsrmv_matrix_destroy(A);
    }
    /* a real type refuses a non-zero imaginary part, takes zero ones */
    bsrmv_matrix *R = NULL;
    TU_FAILS(bsrmv_matrix_from_coo(&R, c, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_UNSUPPORTED);
    for (int k = 0; k < 4; k++)
        c->imag[k] = 0;
    TU_OK(bsrmv_matrix_from_coo(&R, c, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    /* real -> complex and complex precisions convert; complex -> real not */
    bsrmv_matrix *Z, *C, *X;
    TU_OK(bsrmv_matrix_convert(&Z, R, BSRMV_COMPLEX_DOUBLE));
    TU_OK(bsrmv_matrix_convert(&C, Z, BSRMV_COMPLEX_FLOAT));
    TU_FAILS(bsrmv_matrix_convert(&X, C, BSRMV_FLOAT), BSRMV_ERR_UNSUPPORTED);
    bsrmv_coo *zc;
    TU_OK(bsrmv_matrix_to_coo(C, &zc));
    TU_CHECK(coo_at(zc, 0, 0) == 4 && coo_at(zc, 2, 1) == 2, "converted values");
    bsrmv_coo_destroy(zc);
    bsrmv_matrix_destroy(R);
    bsrmv_matrix_destroy(Z);
    bsrmv_matrix_destroy(C);
    bsrmv_coo_destroy(c);
}

static void test_generators(void)
{
    /* The complex grid: both orders one matrix, checked products, real
     * parts of the off-diagonal entries those of the real grid. */
    bsrmv_matrix *G[2], *Rg;
    for (int o = 0; o < 2; o++) {
        TU_OK(bsrmv_generate_grid(&G[o], 4, 3, 3, 3, 27, 9, BSRMV_COMPLEX_FLOAT, (bsrmv_order)o));
        run_cases("complex grid", G[o], 90, false);
    }
    TU_OK(bsrmv_generate_grid(&Rg, 4, 3, 3, 3, 27, 9, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_coo *a, *b, *r;
    TU_OK(bsrmv_matrix_to_coo(G[0], &a));
    TU_OK(bsrmv_matrix_to_coo(G[1], &b));
    TU_OK(bsrmv_matrix_to_coo(Rg, &r));
    TU_CHECK(a->nnz == b->nnz && a->nnz == r->nnz, "grid sizes");
    int64_t imag_nonzero = 0;
    for (int64_t k = 0; k < a->nnz; k++) {
        const int64_t i = a->row[k], j = a->col[k];
        TU_CHECK(coo_at(a, i, j) == coo_at(b, i, j), "grid orders differ at (%lld, %lld)",
                 (long long)i, (long long)j);
        if (i != j)
            TU_CHECK(a->val[k] == (float)coo_at(r, i, j), "grid real part at (%lld, %lld)",
                     (long long)i, (long long)j);
        imag_nonzero += a->imag[k] != 0;
    }
    TU_CHECK(imag_nonzero > a->nnz / 2, "grid: %lld imaginary parts", (long long)imag_nonzero);
    bsrmv_coo_destroy(a);
    bsrmv_coo_destroy(b);
    bsrmv_coo_destroy(r);
    bsrmv_matrix_destroy(G[0]);
    bsrmv_matrix_destroy(G[1]);
    bsrmv_matrix_destroy(Rg);
    /* power law and arrow */
    bsrmv_matrix *P;
    TU_OK(bsrmv_generate_powerlaw(&P, 300, 300, 2, 4, 2.0, 100, 4, BSRMV_COMPLEX_DOUBLE,
                                  BSRMV_ROW_MAJOR));
    run_cases("complex power law", P, 91, false);
    bsrmv_matrix_destroy(P);
    TU_OK(bsrmv_generate_arrow(&P, 200, 2, 3, 4, BSRMV_COMPLEX_FLOAT, BSRMV_COL_MAJOR));
    run_cases("complex arrow", P, 92, false);
    bsrmv_matrix_destroy(P);
    /* fill_random: both parts drawn */
    double _Complex v[64];
    TU_OK(bsrmv_fill_random(v, 64, BSRMV_COMPLEX_DOUBLE, 7));
    int distinct = 0;
    for (int i = 0; i < 64; i++)
        distinct += creal(v[i]) != cimag(v[i]) && fabs(creal(v[i])) <= 1 && fabs(cimag(v[i])) <= 1;
    TU_CHECK(distinct == 64, "fill_random: %d of 64", distinct);
}

/* The entry points built for real values refuse complex matrices. */
static void test_refusals(void)
{
    tu_shape sh = {6, 6, 2, 2.0, 0.0, 0, 6};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR, 8);
    TU_FAILS(bsrmv_matrix_set_vector_type(A, BSRMV_DOUBLE), BSRMV_ERR_UNSUPPORTED);
    TU_OK(bsrmv_matrix_set_vector_type(A, BSRMV_COMPLEX_DOUBLE));
    bsrmv_matrix *R = NULL;
    TU_FAILS(bsrmv_generate_reservoir(&R, 2, 2, 2, 2, 1, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_UNSUPPORTED);
    TU_FAILS(bsrmv_generate_block_laplacian(&R, 2, 2, 2, 2, 1, BSRMV_COMPLEX_FLOAT,
                                            BSRMV_COL_MAJOR),
             BSRMV_ERR_UNSUPPORTED);
    bsrmv_coo *c = NULL;
    TU_OK(bsrmv_coo_create_complex(&c, 2, 2, 1));
    c->row[0] = 0;
    c->col[0] = 1;
    c->val[0] = 1;
    c->imag[0] = 1;
    bsrmv_matrix *S = NULL;
    TU_FAILS(bsrmv_matrix_from_coo_sym(&S, c, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_UNSUPPORTED);
    bsrmv_coo_destroy(c);
    TU_CHECK(bsrmv_type_size(BSRMV_COMPLEX_FLOAT) == 8 &&
                 bsrmv_type_size(BSRMV_COMPLEX_DOUBLE) == 16,
             "type sizes");
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/bsrmv_complex_XXXXXX");
    TU_CHECK(mkdtemp(dir), "mkdtemp");
    test_refusals();
    test_conversions();
    test_matrix_market();
    test_scalar_entries();
    test_generators();
    test_block_sizes();
    const char *files[] = {"g.mtx", "h.mtx", "s.mtx", "k.mtx", "s2.mtx", "out.mtx.gz", "grid.mtx"};
    char path[128];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    printf("test_complex: all cases passed\n");
    return 0;
}
