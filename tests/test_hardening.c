/* Inputs that once got through: sizes near INT64_MAX, headers whose
 * dimensions dwarf the entries, x and y overlapping, values the matrix
 * type cannot hold. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "testutil.h"

#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <omp.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

static bsrmv_coo *coo_of(int64_t m, int64_t n, int64_t nnz, const int64_t *rows,
                         const int64_t *cols, const double *vals)
{
    bsrmv_coo *c = NULL;
    TU_OK(bsrmv_coo_create(&c, m, n, nnz));
    for (int64_t k = 0; k < nnz; k++) {
        c->row[k] = rows[k];
        c->col[k] = cols[k];
        c->val[k] = vals[k];
    }
    return c;
}

/* A file whose header claims INT64_MAX rows and columns reads (one entry);
 * its conversion is an overflow, not a wrap-around or "out of memory". */
static void test_int64_max_dimensions(void)
{
    char path[] = "/tmp/bsrmv_hardening_XXXXXX";
    int fd = mkstemp(path);
    TU_CHECK(fd >= 0, "mkstemp");
    static const char text[] = "%%MatrixMarket matrix coordinate real general\n"
                               "9223372036854775807 9223372036854775807 1\n1 1 1\n";
    TU_CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "write");
    close(fd);
    bsrmv_coo *c = NULL;
    TU_OK(bsrmv_mm_read(path, &c));
    unlink(path);
    for (int bs = 1; bs <= 8; bs++)
        for (int how = 0; how < 2; how++) {
            bsrmv_matrix *A = (bsrmv_matrix *)&A;
            TU_FAILS(bsrmv_matrix_from_coo(&A, c, bs, (bsrmv_blocking)how, BSRMV_DOUBLE,
                                           BSRMV_COL_MAJOR),
                     BSRMV_ERR_OVERFLOW);
            TU_CHECK(A == NULL, "handle set on failure");
        }
    /* Rows near INT64_MAX, few columns: the block-row count itself is fine
     * but row_ptr cannot be sized. */
    c->n = 4;
    c->col[0] = 3;
    for (int bs = 1; bs <= 3; bs++)
        TU_FAILS(bsrmv_matrix_from_coo(&(bsrmv_matrix *){NULL}, c, bs, BSRMV_SPLIT,
                                       BSRMV_DOUBLE, BSRMV_COL_MAJOR),
                 BSRMV_ERR_OVERFLOW);
    bsrmv_coo_destroy(c);
    printf("INT64_MAX dimensions: ok\n");
}

/* 5 entries in 3 x 2e9 (and 5 x 2e9 promoted): the scratch space follows
 * the entries.  Run under an address-space limit far below the 16 GB a
 * per-column array would take. */
static void test_memory_follows_entries(void)
{
#ifdef UNDER_SANITIZER
    printf("memory follows entries: skipped (address-space limits and sanitizers do not mix)\n");
    return;
#else
    struct rlimit old, lim;
    TU_CHECK(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit");
    lim = old;
    lim.rlim_cur = (rlim_t)3 << 30;
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur)
        lim.rlim_cur = old.rlim_max;
    TU_CHECK(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit");
    const int64_t n = 2000000000;
    const int64_t rows[5] = {0, 2, 1, 2, 0}, cols[5] = {n - 1, 0, 123456789, 1, n - 2};
    const double vals[5] = {1, 2, 3, 4, 5};
    bsrmv_coo *c = coo_of(3, n, 5, rows, cols, vals);
    for (int bs = 1; bs <= 3; bs++) {
        bsrmv_matrix *A = NULL;
        TU_OK(bsrmv_matrix_from_coo(&A, c, bs, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        bsrmv_matrix_info in;
        TU_OK(bsrmv_matrix_get_info(A, &in));
        const int64_t *rp;
        const int32_t *ci;
        const void *v;
        TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &v));
        const double *val = v;
        const int64_t bs2 = (int64_t)bs * bs;
        TU_CHECK(in.nb == (n + bs - 1) / bs, "nb %lld", (long long)in.nb);
        /* Every entry lands where it belongs; nothing else is non-zero. */
        double total = 0;
        for (int64_t i = 0; i < in.mb; i++)
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
                TU_CHECK(k == rp[i] || ci[k] > ci[k - 1], "block columns unsorted");
                for (int64_t e = 0; e < bs2; e++)
                    total += val[k * bs2 + e];
            }
        TU_CHECK(total == 15, "values sum to %g", total);
        for (int e = 0; e < 5; e++) {
            int64_t i = rows[e] / bs, bj = cols[e] / bs, k = rp[i];
            while (k < rp[i + 1] && ci[k] != bj)
                k++;
            TU_CHECK(k < rp[i + 1], "entry %d has no block", e);
            TU_CHECK(val[k * bs2 + (rows[e] % bs) * bs + cols[e] % bs] == vals[e],
                     "entry %d value", e);
        }
        bsrmv_matrix_destroy(A);
        int64_t count;
        TU_OK(bsrmv_coo_count_blocks(c, bs, &count));
    }
    bsrmv_matrix *P = NULL;
    c->m = 5;
    TU_OK(bsrmv_matrix_from_coo(&P, c, 2, BSRMV_PROMOTE, BSRMV_FLOAT, BSRMV_COL_MAJOR));
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(P, &in));
    TU_CHECK(in.nnzb == 5 && in.mb == 5 && in.nb == n, "promoted shape");
    bsrmv_matrix_destroy(P);
    bsrmv_coo_destroy(c);
    TU_CHECK(setrlimit(RLIMIT_AS, &old) == 0, "setrlimit back");
    printf("memory follows entries: ok\n");
#endif
}

/* The sorting path (dimensions far beyond the entries) builds the same
 * blocks as the counting path: the same entries in a narrow matrix. */
static void test_both_paths_agree(void)
{
    const int64_t nnz = 3000, wide = ((int64_t)1 << 20) + 4 * nnz;
    uint64_t s = 7;
    for (int bs = 1; bs <= 5; bs++) {
        bsrmv_coo *narrow = NULL, *far = NULL;
        TU_OK(bsrmv_coo_create(&narrow, 300, 500, nnz));
        TU_OK(bsrmv_coo_create(&far, 300, wide, nnz));
        for (int64_t k = 0; k < nnz; k++) {
            narrow->row[k] = far->row[k] = (int64_t)(bsrmv_hash01(s, (uint64_t)k) * 300);
            narrow->col[k] = far->col[k] = (int64_t)(bsrmv_hash01(s + 1, (uint64_t)k) * 500);
            narrow->val[k] = far->val[k] = bsrmv_hash01(s + 2, (uint64_t)k) - 0.5;
        }
        for (int how = 0; how < 2; how++) {
            bsrmv_matrix *A = NULL, *B = NULL;
            TU_OK(bsrmv_matrix_from_coo(&A, narrow, bs, (bsrmv_blocking)how, BSRMV_DOUBLE,
                                        BSRMV_COL_MAJOR));
            TU_OK(bsrmv_matrix_from_coo(&B, far, bs, (bsrmv_blocking)how, BSRMV_DOUBLE,
                                        BSRMV_COL_MAJOR));
            bsrmv_matrix_info a, b;
            TU_OK(bsrmv_matrix_get_info(A, &a));
            TU_OK(bsrmv_matrix_get_info(B, &b));
            TU_CHECK(a.mb == b.mb && a.nnzb == b.nnzb, "bs %d: %lld vs %lld blocks", bs,
                     (long long)a.nnzb, (long long)b.nnzb);
            const int64_t *rpa, *rpb;
            const int32_t *cia, *cib;
            const void *va, *vb;
            TU_OK(bsrmv_matrix_arrays(A, &rpa, &cia, &va));
            TU_OK(bsrmv_matrix_arrays(B, &rpb, &cib, &vb));
            const int64_t bs2 = (int64_t)bs * bs;
            TU_CHECK(!memcmp(rpa, rpb, (size_t)(a.mb + 1) * sizeof *rpa) &&
                         !memcmp(cia, cib, (size_t)a.nnzb * sizeof *cia) &&
                         !memcmp(va, vb, (size_t)(a.nnzb * bs2) * sizeof(double)),
                     "bs %d how %d: the sorted and counted patterns differ", bs, how);
            bsrmv_matrix_destroy(A);
            bsrmv_matrix_destroy(B);
        }
        bsrmv_coo_destroy(narrow);
        bsrmv_coo_destroy(far);
        s += 10;
    }
    printf("sorting and counting paths agree: ok\n");
}

/* x and y sharing memory: an argument error (the kernels read x while y is
 * written); touching but separate arrays are fine. */
static void test_overlap(void)
{
    for (int t = 0; t < 2; t++) {
        const bsrmv_type type = (bsrmv_type)t;
        const size_t vs = bsrmv_type_size(type);
        tu_shape sh = {512, 512, 3, 4.0, 0.1, -1, 0};
        bsrmv_matrix *A = tu_random_bsr(&sh, type, BSRMV_COL_MAJOR, 5);
        const int64_t n = 512 * 3;
        char *buf = tu_random_vector(3 * n, type, 11);
        for (int op = 0; op < 2; op++) {
            const int64_t shifts[] = {0, 1, n - 1, -(n - 1), -1};
            for (size_t i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
                char *x = buf + (size_t)n * vs, *y = x + shifts[i] * (int64_t)vs;
                TU_FAILS(bsrmv_spmv((bsrmv_op)op, 1.5, A, x, n, 0.5, y, n), BSRMV_ERR_ARGUMENT);
                TU_CHECK(strstr(bsrmv_last_error(), "overlap"), "message: %s",
                         bsrmv_last_error());
            }
            /* Adjacent on either side: separate arrays, a correct result. */
            char *x = buf + (size_t)n * vs;
            for (int side = -1; side <= 1; side += 2) {
                char *y = x + side * n * (int64_t)vs;
                void *y0 = tu_copy_vector(y, n, type);
                TU_OK(bsrmv_spmv((bsrmv_op)op, 1.5, A, x, n, 0.5, y, n));
                tu_check_result("adjacent x and y", A, (bsrmv_op)op, 1.5, x, 0.5, y0, y);
                free(y0);
            }
            /* alpha == 0 does not read x. */
            TU_OK(bsrmv_spmv((bsrmv_op)op, 0.0, A, x, n, 0.5, x, n));
        }
        free(buf);
        bsrmv_matrix_destroy(A);
    }
    TU_CHECK(bsrmv_ranges_overlap((void *)16, 8, (void *)23, 1), "last byte");
    TU_CHECK(!bsrmv_ranges_overlap((void *)16, 8, (void *)24, 1), "one past");
    TU_CHECK(!bsrmv_ranges_overlap((void *)16, 0, (void *)16, 8), "empty range");
    TU_CHECK(bsrmv_ranges_overlap((void *)(UINTPTR_MAX - 7), 8, (void *)(UINTPTR_MAX - 1), 1),
             "top of the address space");
    printf("overlapping x and y: ok\n");
}

/* Values the matrix type cannot hold are refused, not turned into inf. */
static void test_value_range(void)
{
    const int64_t r[3] = {0, 0, 1}, c[3] = {0, 0, 1};
    bsrmv_matrix *A = NULL;
    double big[3] = {1e39, 1, 2};
    bsrmv_coo *coo = coo_of(2, 2, 3, r, c, big);
    TU_FAILS(bsrmv_matrix_from_coo(&A, coo, 1, BSRMV_SPLIT, BSRMV_FLOAT, BSRMV_COL_MAJOR),
             BSRMV_ERR_OVERFLOW);
    TU_CHECK(A == NULL && strstr(bsrmv_last_error(), "float range"), "%s", bsrmv_last_error());
    TU_OK(bsrmv_matrix_from_coo(&A, coo, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_matrix_destroy(A);
    bsrmv_coo_destroy(coo);
    /* Two finite duplicates whose sum overflows float, then double. */
    double dup[3] = {3e38, 3e38, 1};
    coo = coo_of(2, 2, 3, r, c, dup);
    TU_FAILS(bsrmv_matrix_from_coo(&A, coo, 2, BSRMV_SPLIT, BSRMV_FLOAT, BSRMV_ROW_MAJOR),
             BSRMV_ERR_OVERFLOW);
    TU_CHECK(A == NULL, "handle set on failure");
    coo->val[0] = coo->val[1] = DBL_MAX;
    TU_FAILS(bsrmv_matrix_from_coo(&A, coo, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_ROW_MAJOR),
             BSRMV_ERR_OVERFLOW);
    /* Promotion keeps FLT_MAX; the benchmark perturbation multiplies by up
     * to 1.25, which may not fit: refused, nothing changed. */
    coo->val[0] = FLT_MAX;
    coo->val[1] = 0;
    TU_OK(bsrmv_matrix_from_coo(&A, coo, 4, BSRMV_PROMOTE, BSRMV_FLOAT, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_perturb_promoted(A, 1), BSRMV_ERR_OVERFLOW);
    const int64_t *prp;
    const int32_t *pci;
    const void *pv;
    TU_OK(bsrmv_matrix_arrays(A, &prp, &pci, &pv));
    for (int e = 0; e < 16; e++)
        TU_CHECK(((const float *)pv)[e] == FLT_MAX, "a refused perturbation changed a value");
    bsrmv_matrix_destroy(A);
    A = NULL;
    /* NaN and infinities given on purpose pass through... */
    coo->val[0] = NAN;
    coo->val[2] = INFINITY;
    TU_OK(bsrmv_matrix_from_coo(&A, coo, 1, BSRMV_SPLIT, BSRMV_FLOAT, BSRMV_COL_MAJOR));
    bsrmv_matrix_destroy(A);
    A = NULL;
    /* ... but not an overflowing sum elsewhere in the matrix: the NaN of
     * one entry does not excuse the others (split, in both orders and bs
     * 1 and 2, and promoted) */
    coo->val[0] = coo->val[1] = 3e38;
    coo->val[2] = NAN;
    for (int bs = 1; bs <= 2; bs++)
        for (int o = 0; o < 2; o++) {
            TU_FAILS(bsrmv_matrix_from_coo(&A, coo, bs, BSRMV_SPLIT, BSRMV_FLOAT, (bsrmv_order)o),
                     BSRMV_ERR_OVERFLOW);
            TU_CHECK(A == NULL && strstr(bsrmv_last_error(), "block 0"), "%s", bsrmv_last_error());
        }
    TU_FAILS(bsrmv_matrix_from_coo(&A, coo, 3, BSRMV_PROMOTE, BSRMV_FLOAT, BSRMV_COL_MAJOR),
             BSRMV_ERR_OVERFLOW);
    coo->val[0] = coo->val[1] = DBL_MAX;
    TU_FAILS(bsrmv_matrix_from_coo(&A, coo, 2, BSRMV_PROMOTE, BSRMV_DOUBLE, BSRMV_ROW_MAJOR),
             BSRMV_ERR_OVERFLOW);
    /* an overflowing sum with an infinity in the same value passes (inf) */
    coo->val[1] = INFINITY;
    TU_OK(bsrmv_matrix_from_coo(&A, coo, 2, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_matrix_destroy(A);
    bsrmv_coo_destroy(coo);
    printf("value range: ok\n");
}

/* The passes over a promoted matrix's values run on threads when it is
 * large: the same values on 1 and 3 threads, and a refusal names the
 * first bad block, whichever thread reaches it first. */
static void test_threaded_promotion(void)
{
    enum { N = 96, BS = 32 }; /* 96 blocks of 1024 values: above the threads' threshold */
    bsrmv_coo *c = NULL;
    TU_OK(bsrmv_coo_create(&c, N, N, 2 * N));
    for (int64_t k = 0; k < N; k++) {
        c->row[k] = c->col[k] = k;
        c->val[k] = 1.0 + (double)k;
        c->row[N + k] = k;
        c->col[N + k] = (k * 7 + 3) % N;
        c->val[N + k] = -0.5 * (double)k;
    }
    const int threads = omp_get_max_threads();
    void *v[2] = {NULL, NULL};
    size_t bytes = 0;
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(t == 0 ? 1 : 3);
        bsrmv_matrix *A = NULL;
        TU_OK(bsrmv_matrix_from_coo(&A, c, BS, BSRMV_PROMOTE, BSRMV_DOUBLE, BSRMV_ROW_MAJOR));
        TU_OK(bsrmv_matrix_perturb_promoted(A, 7));
        bsrmv_matrix_info in;
        const int64_t *rp;
        const int32_t *ci;
        const void *val;
        TU_OK(bsrmv_matrix_get_info(A, &in));
        TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &val));
        bytes = (size_t)in.nnzb * BS * BS * sizeof(double);
        v[t] = malloc(bytes);
        memcpy(v[t], val, bytes);
        bsrmv_matrix_destroy(A);
    }
    TU_CHECK(memcmp(v[0], v[1], bytes) == 0, "1 and 3 threads promoted to different values");
    free(v[0]);
    free(v[1]);
    /* duplicates that overflow float in two blocks, then values that the
     * perturbation would take past FLT_MAX in two blocks: the first named,
     * block row 40's one block, block 80 (two in each row above it) */
    omp_set_num_threads(3);
    c->val[N + 40] = c->val[40] = c->val[N + 90] = c->val[90] = 3e38;
    c->col[N + 40] = 40;
    c->col[N + 90] = 90;
    bsrmv_matrix *A = NULL;
    TU_FAILS(bsrmv_matrix_from_coo(&A, c, BS, BSRMV_PROMOTE, BSRMV_FLOAT, BSRMV_COL_MAJOR),
             BSRMV_ERR_OVERFLOW);
    TU_CHECK(A == NULL && strstr(bsrmv_last_error(), "value 0 of block 80 "), "%s", bsrmv_last_error());
    c->val[N + 40] = c->val[N + 90] = 0;
    c->val[40] = c->val[90] = FLT_MAX;
    TU_OK(bsrmv_matrix_from_coo(&A, c, BS, BSRMV_PROMOTE, BSRMV_FLOAT, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_perturb_promoted(A, 7), BSRMV_ERR_OVERFLOW);
    TU_CHECK(strstr(bsrmv_last_error(), "(block 80)") != NULL, "%s", bsrmv_last_error());
    bsrmv_matrix_destroy(A);
    omp_set_num_threads(threads);
    bsrmv_coo_destroy(c);
    printf("threaded promotion: ok\n");
}

/* Arguments name the cases to run (all without). */
int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {{"int64_max", test_int64_max_dimensions},
                 {"memory", test_memory_follows_entries},
                 {"paths", test_both_paths_agree},
                 {"overlap", test_overlap},
                 {"values", test_value_range},
                 {"threads", test_threaded_promotion}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool want = argc < 2;
        for (int a = 1; a < argc; a++)
            want = want || strcmp(argv[a], cases[i].name) == 0;
        if (want)
            cases[i].run();
    }
    printf("test_hardening: all passed\n");
    return 0;
}
