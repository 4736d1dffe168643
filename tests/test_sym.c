/* Symmetric storage: the product of the upper blocks against the long-double
 * reference of the full matrix, built here independently from the scalar
 * entries of both triangles.  Every compiled bs and runtime ones, both
 * block orders and types, alpha/beta in {0, 1, other}, y poisoned with NaN,
 * 1 to 4 threads, empty rows and rows reaching across the whole matrix;
 * bsrmv_spmm of the stored half (several vectors, both layouts); the
 * conversions (to_sym, from_sym, to_coo, COO and Matrix Market round
 * trips of symmetric files), the refusals, and CG on the stored half. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const double coefs[] = {0.0, 1.0, -0.7};

/* splitmix64 mapped to [0, 1). */
static double uniform01(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

typedef struct sym_case {
    int64_t nb;
    int bs;
    double mean_len;   /* blocks right of the diagonal per block row     */
    double empty_frac; /* block rows with nothing stored                  */
    int64_t long_row;  /* this block row couples to every later one (-1: none) */
} sym_case;

/* Upper arrays of a random symmetric matrix (diagonal blocks symmetric)
 * and the COO of every scalar entry of both triangles. */
typedef struct sym_arrays {
    int64_t nnzb;
    int64_t *row_ptr;
    int32_t *col_idx;
    double *val; /* column-major blocks, double */
    bsrmv_coo *full;
} sym_arrays;

static void make_arrays(const sym_case *c, uint64_t seed, sym_arrays *a)
{
    const int bs = c->bs;
    const int64_t nb = c->nb, bs2 = (int64_t)bs * bs;
    uint64_t st = seed;
    a->row_ptr = calloc((size_t)nb + 1, sizeof *a->row_ptr);
    int64_t cap = nb * (int64_t)(c->mean_len * 2 + 2) + (c->long_row >= 0 ? nb : 0) + 1;
    a->col_idx = malloc((size_t)cap * sizeof *a->col_idx);
    TU_CHECK(a->row_ptr && a->col_idx, "out of memory");
    int64_t n = 0;
    for (int64_t i = 0; i < nb; i++) {
        if (i != c->long_row && uniform01(&st) < c->empty_frac) {
            a->row_ptr[i + 1] = n;
            continue;
        }
        if (uniform01(&st) < 0.9)
            a->col_idx[n++] = (int32_t)i;
        for (int64_t j = i + 1; j < nb; j++) {
            double p = i == c->long_row ? 1.0 : c->mean_len / (double)(nb - i);
            /* Mostly near the diagonal, as a band, with some far ones. */
            if (j - i <= 3)
                p = c->mean_len / 4 < 1 ? c->mean_len / 4 : 0.9;
            if (uniform01(&st) < p && n < cap)
                a->col_idx[n++] = (int32_t)j;
        }
        a->row_ptr[i + 1] = n;
    }
    a->nnzb = n;
    a->val = malloc((size_t)(n * bs2 > 0 ? n * bs2 : 1) * sizeof *a->val);
    TU_CHECK(a->val != NULL, "out of memory");
    int64_t diag = 0;
    for (int64_t i = 0; i < nb; i++)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
            diag += a->col_idx[k] == i;
            for (int q = 0; q < bs2; q++)
                a->val[k * bs2 + q] = 2 * uniform01(&st) - 1;
            if (a->col_idx[k] == i)
                for (int r = 0; r < bs; r++)
                    for (int cc = 0; cc < r; cc++)
                        a->val[k * bs2 + cc * bs + r] = a->val[k * bs2 + r * bs + cc];
        }
    TU_OK(bsrmv_coo_create(&a->full, nb * bs, nb * bs, (2 * n - diag) * bs2));
    int64_t e = 0;
    for (int64_t i = 0; i < nb; i++)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
            const int64_t j = a->col_idx[k];
            for (int r = 0; r < bs; r++)
                for (int cc = 0; cc < bs; cc++) {
                    const double v = a->val[k * bs2 + cc * bs + r];
                    a->full->row[e] = i * bs + r;
                    a->full->col[e] = j * bs + cc;
                    a->full->val[e++] = v;
                    if (j != i) {
                        a->full->row[e] = j * bs + cc;
                        a->full->col[e] = i * bs + r;
                        a->full->val[e++] = v;
                    }
                }
        }
    TU_CHECK(e == a->full->nnz, "entry count %lld vs %lld", (long long)e,
             (long long)a->full->nnz);
}

static void free_arrays(sym_arrays *a)
{
    free(a->row_ptr);
    free(a->col_idx);
    free(a->val);
    bsrmv_coo_destroy(a->full);
}

/* The values of a in the given type and order. */
static void *values_as(const sym_arrays *a, int bs, bsrmv_type t, bsrmv_order order)
{
    const int64_t bs2 = (int64_t)bs * bs;
    void *v = malloc((size_t)(a->nnzb * bs2 > 0 ? a->nnzb * bs2 : 1) * bsrmv_type_size(t));
    TU_CHECK(v != NULL, "out of memory");
    for (int64_t k = 0; k < a->nnzb; k++)
        for (int r = 0; r < bs; r++)
            for (int c = 0; c < bs; c++) {
                const double x = a->val[k * bs2 + c * bs + r];
                const int64_t at = k * bs2 + (order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                if (t == BSRMV_DOUBLE)
                    ((double *)v)[at] = x;
                else
                    ((float *)v)[at] = (float)x;
            }
    return v;
}

static bool same_arrays(const bsrmv_matrix *A, const bsrmv_matrix *B)
{
    bsrmv_matrix_info ia, ib;
    TU_OK(bsrmv_matrix_get_info(A, &ia));
    TU_OK(bsrmv_matrix_get_info(B, &ib));
    if (ia.mb != ib.mb || ia.nb != ib.nb || ia.nnzb != ib.nnzb || ia.bs != ib.bs ||
        ia.type != ib.type || ia.order != ib.order)
        return false;
    const int64_t *rpa, *rpb;
    const int32_t *cia, *cib;
    const void *va, *vb;
    TU_OK(bsrmv_matrix_arrays(A, &rpa, &cia, &va));
    TU_OK(bsrmv_matrix_arrays(B, &rpb, &cib, &vb));
    return memcmp(rpa, rpb, (size_t)(ia.mb + 1) * sizeof *rpa) == 0 &&
           (ia.nnzb == 0 || (memcmp(cia, cib, (size_t)ia.nnzb * sizeof *cia) == 0 &&
                             memcmp(va, vb, (size_t)(ia.nnzb * ia.bs * ia.bs) *
                                                bsrmv_type_size(ia.type)) == 0));
}

/* S (symmetric storage) against the reference of F (the same matrix, full)
 * for both ops and the alpha/beta pairs, on t0..t1 threads. */
static void check_products(const char *what, const bsrmv_matrix *S, const bsrmv_matrix *F,
                           uint64_t seed, int t0, int t1)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(S, &in));
    const int64_t n = in.rows;
    void *x = tu_random_vector(n, in.type, seed + 1);
    for (int threads = t0; threads <= t1; threads++) {
        omp_set_num_threads(threads);
        for (int op = 0; op < 2; op++)
            for (int ia = 0; ia < 3; ia++)
                for (int ib = 0; ib < 3; ib++) {
                    const double alpha = coefs[ia], beta = coefs[ib];
                    void *y0 = beta == 0 ? tu_nan_vector(n, in.type)
                                         : tu_random_vector(n, in.type, seed + 2 + ib);
                    void *y = tu_copy_vector(y0, n, in.type);
                    TU_OK(bsrmv_spmv((bsrmv_op)op, alpha, S, x, n, beta, y, n));
                    char name[160];
                    snprintf(name, sizeof name, "%s op %d alpha %g beta %g threads %d", what,
                             op, alpha, beta, threads);
                    tu_check_result(name, F, BSRMV_OP_N, alpha, x, beta, y0, y);
                    free(y0);
                    free(y);
                }
    }
    omp_set_num_threads(2);
    free(x);
}

/* bsrmv_spmm of S against the reference of F column by column, on 3
 * threads (the small shapes run as one part): each k of ks (nk of them)
 * in both layouts with padded leading dimensions, op N and T (A^T = A)
 * and the alpha/beta pairs in turn, Y poisoned where beta == 0. */
static void check_spmm(const char *what, const bsrmv_matrix *S, const bsrmv_matrix *F,
                       const int *ks, int nk, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(S, &in));
    const int64_t n = in.rows;
    const bsrmv_type vt = in.vector_type;
    int c = (int)(seed % 9);
    omp_set_num_threads(3);
    for (int lay = 0; lay < 2; lay++)
        for (int q = 0; q < nk; q++, c++) {
            const int k = ks[q];
            const bsrmv_layout L = (bsrmv_layout)lay;
            const bsrmv_op op = (bsrmv_op)(c % 2);
            const double alpha = coefs[c % 3], beta = coefs[(c / 3) % 3];
            const int64_t ld = (L == BSRMV_LAYOUT_COL ? n : k) + 1 + q % 2;
            const int64_t e = tu_mv_span(L, n, k, ld) + 1;
            void *X = tu_random_vector(e, vt, seed + (uint64_t)q);
            void *Y0 = beta == 0 ? tu_nan_vector(e, vt)
                                 : tu_random_vector(e, vt, seed + 50 + (uint64_t)q);
            void *Y = tu_copy_vector(Y0, e, vt);
            TU_OK(bsrmv_spmm(op, alpha, S, k, X, ld, beta, Y, ld, L));
            for (int j = 0; j < k; j++) {
                void *xj = tu_mv_column(X, vt, L, n, j, ld);
                void *y0j = tu_mv_column(Y0, vt, L, n, j, ld);
                void *yj = tu_mv_column(Y, vt, L, n, j, ld);
                char name[200];
                snprintf(name, sizeof name, "%s spmm op %d k %d %s layout alpha %g beta %g, "
                         "vector %d", what, (int)op, k, lay ? "row" : "col", alpha, beta, j);
                tu_check_result(name, F, BSRMV_OP_N, alpha, xj, beta, y0j, yj);
                free(xj);
                free(y0j);
                free(yj);
            }
            free(X);
            free(Y0);
            free(Y);
        }
    omp_set_num_threads(2);
}

/* spmm: bsrmv_spmm too (check_spmm) */
static void run_case(const sym_case *c, uint64_t seed, bool spmm)
{
    sym_arrays a;
    make_arrays(c, seed, &a);
    for (int t = 0; t < 2; t++)
        for (int o = 0; o < 2; o++) {
            const bsrmv_type type = t ? BSRMV_FLOAT : BSRMV_DOUBLE;
            const bsrmv_order order = o ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR;
            void *v = values_as(&a, c->bs, type, order);
            bsrmv_matrix *S, *W, *F, *E, *S2;
            TU_OK(bsrmv_matrix_create_sym(&S, c->nb, c->bs, a.nnzb, a.row_ptr, a.col_idx, v,
                                          type, order));
            TU_OK(bsrmv_matrix_wrap_sym(&W, c->nb, c->bs, a.nnzb, a.row_ptr, a.col_idx, v,
                                        type, order));
            TU_OK(bsrmv_matrix_from_coo(&F, a.full, c->bs, BSRMV_SPLIT, type, order));
            bsrmv_matrix_info in;
            TU_OK(bsrmv_matrix_get_info(S, &in));
            TU_CHECK(in.symmetric == 1 && in.nnzb == a.nnzb, "info of the symmetric matrix");
            TU_OK(bsrmv_matrix_get_info(F, &in));
            TU_CHECK(in.symmetric == 0, "info of the full matrix");
            char what[96];
            snprintf(what, sizeof what, "nb %lld bs %d %s %s", (long long)c->nb, c->bs,
                     t ? "float" : "double", o ? "row" : "col");
            check_products(what, S, F, seed, 1, 4);
            /* The generic kernel, and the wrapped arrays, compute the same. */
            TU_OK(bsrmv_matrix_set_cpu_kernel(W, BSRMV_CPU_GENERIC));
            check_products(what, W, F, seed + 7, 3, 3);
            /* Conversions: full -> sym gives the stored arrays back; sym ->
             * full gives the matrix built from the scalar entries. */
            TU_OK(bsrmv_matrix_from_sym(&E, S));
            TU_CHECK(same_arrays(E, F), "%s: from_sym differs from the full matrix", what);
            TU_OK(bsrmv_matrix_to_sym(&S2, F, 0.0));
            TU_CHECK(same_arrays(S2, S), "%s: to_sym differs from the stored arrays", what);
            /* to_coo expands both triangles: it rebuilds the full matrix. */
            bsrmv_coo *coo;
            TU_OK(bsrmv_matrix_to_coo(S, &coo));
            bsrmv_matrix *G;
            TU_OK(bsrmv_matrix_from_coo(&G, coo, c->bs, BSRMV_SPLIT, type, order));
            TU_CHECK(same_arrays(G, F), "%s: to_coo of the symmetric matrix", what);
            bsrmv_coo_destroy(coo);
            /* several vectors (k: 2 + 1, 8 + 4 + 2 + 1, 16 + 1): the
             * compiled kernels, the generic one, float values with double
             * vectors */
            static const int ks[] = {3, 15, 17};
            if (spmm)
                check_spmm(what, S, F, ks, 3, seed + 11);
            if (spmm && c->nb > 2)
                check_spmm(what, W, F, ks, 1, seed + 13);
            if (spmm && t && c->nb > 2) {
                TU_OK(bsrmv_matrix_set_vector_type(S, BSRMV_DOUBLE));
                TU_OK(bsrmv_matrix_set_vector_type(F, BSRMV_DOUBLE));
                check_spmm(what, S, F, ks, 1, seed + 17);
            }
            bsrmv_matrix_destroy(G);
            bsrmv_matrix_destroy(S2);
            bsrmv_matrix_destroy(E);
            bsrmv_matrix_destroy(F);
            bsrmv_matrix_destroy(W);
            bsrmv_matrix_destroy(S);
            free(v);
        }
    free_arrays(&a);
}

static void test_products(void)
{
    const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 24, 32, 10};
    int n = 0;
    for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
        const int bs = sizes[b];
        /* Enough work for several threads at small bs, a few rows at large. */
        const int64_t nb = bs <= 4 ? 500 : bs <= 12 ? 100 : 30;
        const sym_case cases[] = {
            {0, bs, 0, 0, -1},
            {1, bs, 0, 0, -1},
            {2, bs, 2, 0, -1},
            {nb, bs, 4, 0.1, -1},
            {nb, bs, 2, 0.3, nb / 3},   /* a row reaching every later one */
            {nb, bs, 6, 0, 0},          /* the first row couples to all   */
            {nb, bs, 20, 0, -1},        /* rows past SYM_SHORT_ROW_BLOCKS  */
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++, n++)
            run_case(&cases[k], 1000 + 31 * (uint64_t)n, k != 2 && k != 6);
    }
    TU_CHECK(bsrmv_cpu_has_kernel(10) == 0, "bs 10 should be a runtime block size here");
    printf("products: %d shapes x 2 types x 2 orders, each on 1-4 threads and generic on 3\n", n);
}

static void test_refusals(void)
{
    /* A block below the diagonal. */
    const int64_t rp[3] = {0, 1, 2};
    const int32_t lower[2] = {0, 0};
    const double v[8] = {1, 2, 2, 1, 3, 0, 0, 3};
    bsrmv_matrix *S = NULL;
    TU_FAILS(bsrmv_matrix_create_sym(&S, 2, 2, 2, rp, lower, v, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_STRUCTURE);
    TU_CHECK(S == NULL, "handle set on failure");
    const int32_t upper[2] = {1, 1};
    TU_OK(bsrmv_matrix_create_sym(&S, 2, 2, 2, rp, upper, v, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_matrix *T = NULL;
    TU_FAILS(bsrmv_matrix_to_sym(&T, S, 0.0), BSRMV_ERR_UNSUPPORTED);
    TU_FAILS(bsrmv_matrix_from_sym(&T, T), BSRMV_ERR_ARGUMENT);
    /* Full matrices that are not symmetric, or not square. */
    bsrmv_matrix *A;
    const int32_t ci[2] = {1, 1};
    TU_OK(bsrmv_matrix_create(&A, 2, 2, 2, 2, rp, ci, v, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_from_sym(&T, A), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_to_sym(&T, A, 0.0), BSRMV_ERR_ARGUMENT); /* (0,1) has no mirror */
    TU_FAILS(bsrmv_matrix_to_sym(&T, A, -1.0), BSRMV_ERR_ARGUMENT);
    bsrmv_matrix_destroy(A);
    const int64_t rp2[3] = {0, 1, 2};
    const int32_t ci2[2] = {1, 0};
    const double w[8] = {1, 2, 3, 4, 1, 3, 2.0000001, 4};
    TU_OK(bsrmv_matrix_create(&A, 2, 2, 2, 2, rp2, ci2, w, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_to_sym(&T, A, 0.0), BSRMV_ERR_ARGUMENT);
    TU_OK(bsrmv_matrix_to_sym(&T, A, 1e-6));
    bsrmv_matrix_destroy(T);
    bsrmv_matrix_destroy(A);
    /* tol 0 is exact equality: an infinity against an equal one passes, a
     * NaN (equal to nothing) does not */
    double wi[8] = {INFINITY, 2, 3, 4, INFINITY, 3, 2, 4};
    TU_OK(bsrmv_matrix_create(&A, 2, 2, 2, 2, rp2, ci2, wi, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_matrix_to_sym(&T, A, 0.0));
    bsrmv_matrix_destroy(T);
    bsrmv_matrix_destroy(A);
    wi[0] = wi[4] = NAN;
    TU_OK(bsrmv_matrix_create(&A, 2, 2, 2, 2, rp2, ci2, wi, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_to_sym(&T, A, 0.0), BSRMV_ERR_ARGUMENT);
    bsrmv_matrix_destroy(A);
    TU_OK(bsrmv_matrix_create(&A, 1, 2, 2, 1, rp, ci, v, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_to_sym(&T, A, 0.0), BSRMV_ERR_DIMENSION);
    bsrmv_matrix_destroy(A);
    /* COO with entries in both strict triangles, or not square. */
    bsrmv_coo *coo;
    TU_OK(bsrmv_coo_create(&coo, 3, 3, 2));
    coo->row[0] = 0, coo->col[0] = 1, coo->val[0] = 1;
    coo->row[1] = 2, coo->col[1] = 1, coo->val[1] = 1;
    TU_FAILS(bsrmv_matrix_from_coo_sym(&T, coo, 2, BSRMV_SPLIT, BSRMV_DOUBLE,
                                       BSRMV_COL_MAJOR),
             BSRMV_ERR_STRUCTURE);
    coo->n = 4;
    TU_FAILS(bsrmv_matrix_from_coo_sym(&T, coo, 2, BSRMV_SPLIT, BSRMV_DOUBLE,
                                       BSRMV_COL_MAJOR),
             BSRMV_ERR_DIMENSION);
    bsrmv_coo_destroy(coo);
    bsrmv_matrix_destroy(S);
    printf("refusals: ok\n");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    TU_CHECK(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* A symmetric file read without expansion builds the same matrix as the
 * expanded read, at every blocking; the stored triangle may be either. */
static void test_matrix_market(void)
{
    char path[] = "/tmp/bsrmv_test_sym_XXXXXX";
    int fd = mkstemp(path);
    TU_CHECK(fd >= 0, "mkstemp");
    close(fd);
    const char *files[] = {
        "%%MatrixMarket matrix coordinate real symmetric\n7 7 12\n"
        "1 1 4\n2 1 -1\n3 1 0.5\n2 2 5\n4 2 -2\n3 3 6\n7 3 1.25\n4 4 3\n5 4 -1\n"
        "6 5 2\n6 6 7\n7 7 8\n",
        "%%MatrixMarket matrix coordinate real symmetric\n7 7 10\n"
        "1 1 4\n1 2 -1\n1 3 0.5\n2 2 5\n2 4 -2\n3 7 1.25\n4 5 -1\n5 6 2\n6 6 7\n7 7 8\n",
        "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 6\n1 1\n2 1\n3 2\n5 1\n4 4\n"
        "5 5\n",
        "%%MatrixMarket matrix coordinate integer symmetric\n4 4 3\n2 1 3\n4 3 -2\n4 1 9\n",
    };
    int checked = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        write_file(path, files[f]);
        bsrmv_coo *tri, *all;
        int symmetric = -1;
        TU_OK(bsrmv_mm_read_sym(path, &tri, &symmetric));
        TU_OK(bsrmv_mm_read(path, &all));
        TU_CHECK(symmetric == 1, "file %zu not reported symmetric", f);
        for (int64_t k = 0; k < tri->nnz; k++)
            TU_CHECK(tri->row[k] <= tri->col[k], "file %zu: entry %lld below the diagonal", f,
                     (long long)k);
        for (int bs = 1; bs <= 4; bs++)
            for (int how = 0; how < 2; how++)
                for (int o = 0; o < 2; o++) {
                    bsrmv_matrix *S, *F, *E, *S2;
                    TU_OK(bsrmv_matrix_from_coo_sym(&S, tri, bs, (bsrmv_blocking)how,
                                                    BSRMV_DOUBLE, (bsrmv_order)o));
                    /* the benchmarks' perturbation keeps diagonal blocks symmetric */
                    if (how == BSRMV_PROMOTE)
                        TU_OK(bsrmv_matrix_perturb_promoted(S, 5));
                    E = NULL;
                    TU_OK(bsrmv_matrix_from_sym(&E, S));
                    if (how == BSRMV_SPLIT) {
                        TU_OK(bsrmv_matrix_from_coo(&F, all, bs, BSRMV_SPLIT, BSRMV_DOUBLE,
                                                    (bsrmv_order)o));
                        TU_CHECK(same_arrays(E, F), "file %zu bs %d: split differs", f, bs);
                        TU_OK(bsrmv_matrix_to_sym(&S2, F, 0.0));
                        TU_CHECK(same_arrays(S2, S), "file %zu bs %d: to_sym differs", f, bs);
                        bsrmv_matrix_destroy(S2);
                        bsrmv_matrix_destroy(F);
                    } else {
                        /* Promoted: symmetric blocks, the scalar pattern. */
                        TU_OK(bsrmv_matrix_to_sym(&S2, E, 0.0));
                        TU_CHECK(same_arrays(S2, S), "file %zu bs %d: promoted not symmetric",
                                 f, bs);
                        bsrmv_matrix_destroy(S2);
                    }
                    char what[64];
                    snprintf(what, sizeof what, "file %zu bs %d %s", f, bs,
                             how ? "promote" : "split");
                    check_products(what, S, E, 77, 1, 2);
                    bsrmv_matrix_destroy(E);
                    bsrmv_matrix_destroy(S);
                    checked++;
                }
        /* Written back (both triangles, general) and read: the same entries. */
        bsrmv_matrix *S, *F, *G;
        TU_OK(bsrmv_matrix_from_coo_sym(&S, tri, 2, BSRMV_SPLIT, BSRMV_DOUBLE,
                                        BSRMV_COL_MAJOR));
        bsrmv_coo *out, *back;
        TU_OK(bsrmv_matrix_to_coo(S, &out));
        TU_OK(bsrmv_mm_write(path, out));
        TU_OK(bsrmv_mm_read_sym(path, &back, &symmetric));
        TU_CHECK(symmetric == 0, "a general file reported symmetric");
        TU_OK(bsrmv_matrix_from_coo(&G, back, 2, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_matrix_from_coo(&F, all, 2, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        TU_CHECK(same_arrays(G, F), "file %zu: write/read round trip differs", f);
        bsrmv_matrix_destroy(G);
        bsrmv_matrix_destroy(F);
        bsrmv_matrix_destroy(S);
        bsrmv_coo_destroy(out);
        bsrmv_coo_destroy(back);
        bsrmv_coo_destroy(tri);
        bsrmv_coo_destroy(all);
    }
    /* Skew-symmetric files are not symmetric: expanded as by bsrmv_mm_read. */
    write_file(path, "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n3 2 -4\n");
    bsrmv_coo *c;
    int symmetric = -1;
    TU_OK(bsrmv_mm_read_sym(path, &c, &symmetric));
    TU_CHECK(symmetric == 0 && c->nnz == 4, "skew-symmetric read: %d, %lld entries", symmetric,
             (long long)c->nnz);
    bsrmv_coo_destroy(c);
    /* A symmetric file with both triangles is refused as by bsrmv_mm_read. */
    write_file(path, "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 2 1\n");
    TU_FAILS(bsrmv_mm_read_sym(path, &c, &symmetric), BSRMV_ERR_FORMAT);
    TU_FAILS(bsrmv_mm_read_sym(path, NULL, &symmetric), BSRMV_ERR_ARGUMENT);
    remove(path);
    printf("matrix market: %d symmetric builds\n", checked);
}

/* CG on the stored half converges to the solution of the full matrix. */
static void test_cg(void)
{
    for (int bs = 1; bs <= 6; bs += 5)
        for (int o = 0; o < 2; o++) {
            bsrmv_matrix *F, *S;
            TU_OK(bsrmv_generate_block_laplacian(&F, 9, 8, 7, bs, 3, BSRMV_DOUBLE,
                                                 (bsrmv_order)o));
            TU_OK(bsrmv_matrix_to_sym(&S, F, 1e-14));
            bsrmv_precond *P;
            TU_OK(bsrmv_precond_block_jacobi(&P, S));
            const int64_t n = 9 * 8 * 7 * bs;
            double *b = tu_random_vector(n, BSRMV_DOUBLE, 4);
            double *xs = calloc((size_t)n, sizeof *xs), *xf = calloc((size_t)n, sizeof *xf);
            bsrmv_solve_options opt = {.rtol = 1e-10, .x0_zero = 1};
            bsrmv_solve_report rs, rf;
            TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, S, P, b, xs, n, &opt, &rs));
            TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, F, P, b, xf, n, &opt, &rf));
            TU_CHECK(rs.converged && rs.true_rel_residual <= 1e-10, "CG on the symmetric matrix");
            double d = 0, m = 0;
            for (int64_t i = 0; i < n; i++) {
                d = fmax(d, fabs(xs[i] - xf[i]));
                m = fmax(m, fabs(xf[i]));
            }
            TU_CHECK(d <= 1e-7 * m, "bs %d: solutions differ by %g (max %g)", bs, d, m);
            TU_CHECK(abs(rs.iterations - rf.iterations) <= 2, "iterations %d vs %d",
                     rs.iterations, rf.iterations);
            free(b);
            free(xs);
            free(xf);
            bsrmv_precond_destroy(P);
            bsrmv_matrix_destroy(S);
            bsrmv_matrix_destroy(F);
        }
    printf("cg: ok\n");
}

int main(void)
{
    test_refusals();
    test_matrix_market();
    test_cg();
    test_products();
    return 0;
}
