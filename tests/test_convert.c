/* COO/CSR -> BSR: aligned split with zero fill, promotion to dense blocks,
 * both orders and types, against dense copies; and on the real matrices. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* Dense m x n copy (row-major) of any COO, duplicates summed. */
static double *dense_of_coo(const bsrmv_coo *c, int64_t m, int64_t n)
{
    double *d = calloc((size_t)(m * n), sizeof *d);
    TU_CHECK(d, "out of memory");
    for (int64_t k = 0; k < c->nnz; k++)
        d[c->row[k] * n + c->col[k]] += c->val[k];
    return d;
}

static bsrmv_coo *random_coo(int64_t m, int64_t n, int64_t nnz, uint64_t seed)
{
    bsrmv_coo *c = NULL;
    TU_OK(bsrmv_coo_create(&c, m, n, nnz));
    uint64_t s = seed;
    for (int64_t k = 0; k < nnz; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        c->row[k] = (int64_t)((s >> 33) % (uint64_t)m);
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        c->col[k] = (int64_t)((s >> 33) % (uint64_t)n);
        c->val[k] = (double)((s >> 40) % 1000) / 64.0 - 7.0; /* exact in float */
    }
    return c;
}

static void test_split(void)
{
    for (int bs = 1; bs <= 7; bs++)
        for (int t = 0; t < 2; t++)
            for (int o = 0; o < 2; o++) {
                bsrmv_coo *c = random_coo(23, 17, 90, (uint64_t)(bs * 100 + t * 10 + o));
                c->row[3] = c->row[4]; /* force a duplicate */
                c->col[3] = c->col[4];
                bsrmv_matrix *A = NULL;
                TU_OK(bsrmv_matrix_from_coo(&A, c, bs, BSRMV_SPLIT, (bsrmv_type)t,
                                            (bsrmv_order)o));
                bsrmv_matrix_info in;
                TU_OK(bsrmv_matrix_get_info(A, &in));
                TU_CHECK(in.mb == (23 + bs - 1) / bs && in.nb == (17 + bs - 1) / bs,
                         "split shape %lld x %lld", (long long)in.mb, (long long)in.nb);
                int64_t count;
                TU_OK(bsrmv_coo_count_blocks(c, bs, &count));
                TU_CHECK(count == in.nnzb, "count_blocks %lld, split made %lld",
                         (long long)count, (long long)in.nnzb);
                bsrmv_coo *back = NULL;
                TU_OK(bsrmv_matrix_to_coo(A, &back));
                TU_CHECK(back->nnz == in.nnzb * bs * bs, "to_coo entries");
                double *want = dense_of_coo(c, in.rows, in.cols);
                double *got = dense_of_coo(back, in.rows, in.cols);
                TU_CHECK(memcmp(want, got, (size_t)(in.rows * in.cols) * sizeof *want) == 0,
                         "split bs=%d type=%d order=%d differs from the COO", bs, t, o);
                free(want);
                free(got);
                bsrmv_coo_destroy(back);

                /* The same matrix through CSR. */
                int64_t *crp = calloc((size_t)c->m + 1, sizeof *crp);
                int64_t *cci = malloc((size_t)c->nnz * sizeof *cci);
                double *cv = malloc((size_t)c->nnz * sizeof *cv);
                for (int64_t k = 0; k < c->nnz; k++)
                    crp[c->row[k] + 1]++;
                for (int64_t i = 0; i < c->m; i++)
                    crp[i + 1] += crp[i];
                int64_t *fill = calloc((size_t)c->m, sizeof *fill);
                for (int64_t k = 0; k < c->nnz; k++) {
                    int64_t at = crp[c->row[k]] + fill[c->row[k]]++;
                    cci[at] = c->col[k];
                    cv[at] = c->val[k];
                }
                bsrmv_matrix *B = NULL;
                TU_OK(bsrmv_matrix_from_csr(&B, c->m, c->n, crp, cci, cv, bs, BSRMV_SPLIT,
                                            (bsrmv_type)t, (bsrmv_order)o));
                const int64_t *ra, *rb;
                const int32_t *ca, *cb;
                const void *va, *vb;
                TU_OK(bsrmv_matrix_arrays(A, &ra, &ca, &va));
                TU_OK(bsrmv_matrix_arrays(B, &rb, &cb, &vb));
                TU_CHECK(memcmp(ra, rb, (size_t)(in.mb + 1) * sizeof *ra) == 0 &&
                             memcmp(ca, cb, (size_t)in.nnzb * sizeof *ca) == 0,
                         "CSR and COO give different structure");
                bsrmv_matrix_destroy(B);
                crp[5] = crp[6] + 1; /* decreasing row_ptr */
                TU_FAILS(bsrmv_matrix_from_csr(&B, c->m, c->n, crp, cci, cv, bs, BSRMV_SPLIT,
                                               (bsrmv_type)t, (bsrmv_order)o),
                         BSRMV_ERR_STRUCTURE);
                TU_CHECK(B == NULL, "handle set on failure");
                free(crp);
                free(cci);
                free(cv);
                free(fill);
                bsrmv_matrix_destroy(A);
                bsrmv_coo_destroy(c);
            }
}

static void test_promote(void)
{
    const int sizes[] = {1, 2, 3, 4, 6, 8, 12};
    for (size_t q = 0; q < sizeof sizes / sizeof *sizes; q++) {
        int bs = sizes[q];
        bsrmv_coo *c = random_coo(15, 11, 40, 7 + q);
        bsrmv_matrix *A = NULL, *B = NULL, *S = NULL;
        TU_OK(bsrmv_matrix_from_coo(&A, c, bs, BSRMV_PROMOTE, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_matrix_from_coo(&B, c, bs, BSRMV_PROMOTE, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        TU_OK(bsrmv_matrix_from_coo(&S, c, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        bsrmv_matrix_info ia, is;
        TU_OK(bsrmv_matrix_get_info(A, &ia));
        TU_OK(bsrmv_matrix_get_info(S, &is));
        TU_CHECK(ia.mb == 15 && ia.nb == 11 && ia.nnzb == is.nnzb && ia.bs == bs,
                 "promoted pattern differs from the scalar one");
        bsrmv_coo *ca = NULL, *cb = NULL;
        TU_OK(bsrmv_matrix_to_coo(A, &ca));
        TU_OK(bsrmv_matrix_to_coo(B, &cb));
        double *da = dense_of_coo(ca, ia.rows, ia.cols), *db = dense_of_coo(cb, ia.rows, ia.cols);
        double *ds = dense_of_coo(c, 15, 11);
        /* Core promotion: every block is its scalar times ones. */
        for (int64_t i = 0; i < ia.rows; i++)
            for (int64_t j = 0; j < ia.cols; j++) {
                double a = da[i * ia.cols + j], s = ds[(i / bs) * 11 + j / bs];
                TU_CHECK(a == s && db[i * ia.cols + j] == s,
                         "promoted entry (%lld,%lld) is %g and %g, its scalar %g", (long long)i,
                         (long long)j, a, db[i * ia.cols + j], s);
            }
        free(da);
        free(db);
        bsrmv_coo_destroy(ca);
        bsrmv_coo_destroy(cb);
        /* The benchmark helper: within 25% of the scalar, the same matrix in
         * both orders, reproducible from the seed, not constant in a block. */
        TU_OK(bsrmv_matrix_perturb_promoted(A, 99));
        TU_OK(bsrmv_matrix_perturb_promoted(B, 99));
        TU_OK(bsrmv_matrix_to_coo(A, &ca));
        TU_OK(bsrmv_matrix_to_coo(B, &cb));
        da = dense_of_coo(ca, ia.rows, ia.cols);
        db = dense_of_coo(cb, ia.rows, ia.cols);
        int64_t differ = 0, stored = 0;
        for (int64_t i = 0; i < ia.rows; i++)
            for (int64_t j = 0; j < ia.cols; j++) {
                double a = da[i * ia.cols + j], s = ds[(i / bs) * 11 + j / bs];
                TU_CHECK(a == db[i * ia.cols + j], "orders differ at (%lld,%lld)",
                         (long long)i, (long long)j);
                TU_CHECK(fabs(a - s) <= 0.25 * fabs(s) + 1e-300,
                         "perturbed entry %g too far from its scalar %g", a, s);
                differ += a != s;
                stored += s != 0;
            }
        TU_CHECK(differ > stored / 2, "perturbation changed %lld of %lld entries",
                 (long long)differ, (long long)stored);
        bsrmv_matrix *A2 = NULL;
        TU_OK(bsrmv_matrix_from_coo(&A2, c, bs, BSRMV_PROMOTE, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        TU_OK(bsrmv_matrix_perturb_promoted(A2, 99));
        const void *v1, *v2;
        const int64_t *rp;
        const int32_t *ci;
        TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &v1));
        TU_OK(bsrmv_matrix_arrays(A2, &rp, &ci, &v2));
        TU_CHECK(memcmp(v1, v2, (size_t)(ia.nnzb * bs * bs) * sizeof(double)) == 0,
                 "the same seed gave another matrix");
        bsrmv_matrix_destroy(A2);
        free(da);
        free(db);
        free(ds);
        bsrmv_coo_destroy(ca);
        bsrmv_coo_destroy(cb);
        bsrmv_matrix_destroy(A);
        bsrmv_matrix_destroy(B);
        bsrmv_matrix_destroy(S);
        bsrmv_coo_destroy(c);
    }
}

static void test_bad_input(void)
{
    bsrmv_coo *c = random_coo(5, 5, 6, 1);
    bsrmv_matrix *A = NULL;
    c->col[2] = 5;
    TU_FAILS(bsrmv_matrix_from_coo(&A, c, 2, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_STRUCTURE);
    c->col[2] = -1;
    TU_FAILS(bsrmv_matrix_from_coo(&A, c, 2, BSRMV_PROMOTE, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_STRUCTURE);
    c->col[2] = 0;
    TU_FAILS(bsrmv_matrix_from_coo(&A, c, 0, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_from_coo(&A, c, 2, (bsrmv_blocking)3, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_from_coo(&A, NULL, 2, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_matrix_perturb_promoted(NULL, 1), BSRMV_ERR_ARGUMENT);
    /* The perturbation writes values: not into the caller's wrapped arrays. */
    int64_t wrp[2] = {0, 1};
    int32_t wci[1] = {0};
    double wval[4] = {1, 1, 1, 1};
    TU_OK(bsrmv_matrix_wrap(&A, 1, 1, 2, 1, wrp, wci, wval, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_perturb_promoted(A, 1), BSRMV_ERR_UNSUPPORTED);
    TU_CHECK(wval[0] == 1 && wval[3] == 1, "wrapped values changed");
    bsrmv_matrix_destroy(A);
    A = NULL;
    TU_CHECK(A == NULL, "handle set on failure");
    bsrmv_coo_destroy(c);
}

/* Real matrices: split at bs 3, promoted at bs 4, SpMV against the
 * reference.  Returns 77 (ctest: skipped) when none of them is there. */
static int test_real_matrices(void)
{
    const char *dir = getenv("BSRMV_MATRICES");
    const char *names[] = {"bcsstk13", "nasa2910", "s1rmq4m1"};
    int found = 0;
    for (size_t q = 0; q < sizeof names / sizeof *names; q++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.mtx.gz", dir ? dir : ".", names[q]);
        bsrmv_coo *c = NULL;
        if (bsrmv_mm_read(path, &c) != BSRMV_SUCCESS) {
            printf("test_convert: %s not readable (%s)\n", path, bsrmv_last_error());
            continue;
        }
        found++;
        const int bss[2] = {3, 4};
        for (int h = 0; h < 2; h++) {
            bsrmv_matrix *A = NULL;
            TU_OK(bsrmv_matrix_from_coo(&A, c, bss[h], (bsrmv_blocking)h, BSRMV_DOUBLE,
                                        BSRMV_COL_MAJOR));
            bsrmv_matrix_info in;
            TU_OK(bsrmv_matrix_get_info(A, &in));
            void *x = tu_random_vector(in.cols, BSRMV_DOUBLE, 4);
            void *y = tu_nan_vector(in.rows, BSRMV_DOUBLE);
            TU_OK(bsrmv_spmv(BSRMV_OP_N, -2.5, A, x, in.cols, 0.0, y, in.rows));
            tu_check_result(names[q], A, BSRMV_OP_N, -2.5, x, 0.0, NULL, y);
            free(x);
            free(y);
            bsrmv_matrix_destroy(A);
        }
        bsrmv_coo_destroy(c);
    }
    return found ? 0 : 77;
}

/* `test_convert real`: the matrices of $BSRMV_MATRICES only (skipped
 * without them); `test_convert`: everything else. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "real") == 0) {
        const int rc = test_real_matrices();
        printf("test_convert real: %s\n", rc == 77 ? "no matrices, skipped" : "all passed");
        return rc;
    }
    test_split();
    test_promote();
    test_bad_input();
    printf("test_convert: all passed\n");
    return 0;
}
