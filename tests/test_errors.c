/* docs/ERRORS.md against the library: every row of its tables names a case
 * here (by id); the case is run and must return the row's status with a
 * message matching the row's pattern (<...> matches any text).  Every case
 * must have a row, and every row a case (rows named gpu-* are checked by
 * tests/gpu/test_gpu_faults.c, rows named nomem-* only in builds with
 * fault injection).  `test_errors --print` lists what each case returns. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "testutil.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];
static char path[512];

#define BANNER "%%MatrixMarket matrix coordinate real general\n"
#define INT_BANNER "%%MatrixMarket matrix coordinate integer general\n"
#define SYM_BANNER "%%MatrixMarket matrix coordinate real symmetric\n"

/* Writes text (len bytes) to dir/name, gzipped for names ending in .gz;
 * sets `path`. */
static const char *file_of(const char *name, const char *text, size_t len)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n = strlen(name);
    if (n > 3 && !strcmp(name + n - 3, ".gz")) {
        gzFile g = gzopen(path, "wb");
        TU_CHECK(g && gzwrite(g, text, (unsigned)len) == (int)len && gzclose(g) == Z_OK, "gz");
    } else {
        FILE *f = fopen(path, "wb");
        TU_CHECK(f && fwrite(text, 1, len, f) == len && fclose(f) == 0, "write");
    }
    return path;
}

static bsrmv_status read_text(const char *name, const char *text)
{
    bsrmv_coo *c = NULL;
    bsrmv_status s = bsrmv_mm_read(file_of(name, text, strlen(text)), &c);
    bsrmv_coo_destroy(c);
    return s;
}

static bsrmv_status read_bytes(const char *name, const unsigned char *b, size_t n)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    TU_CHECK(f && fwrite(b, 1, n, f) == n && fclose(f) == 0, "write");
    bsrmv_coo *c = NULL;
    bsrmv_status s = bsrmv_mm_read(path, &c);
    bsrmv_coo_destroy(c);
    return s;
}

/* A gzip file of a valid matrix: its bytes in buf, the length returned. */
static size_t gz_matrix(unsigned char *buf, size_t cap)
{
    char text[1 << 16];
    size_t len = (size_t)snprintf(text, sizeof text, "%s400 400 3000\n", BANNER);
    for (int k = 0; k < 3000; k++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%d %d %d.5\n", k % 400 + 1,
                                (k * 7) % 400 + 1, k);
    file_of("gz_src.mtx.gz", text, len);
    FILE *f = fopen(path, "rb");
    TU_CHECK(f, "open");
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static const int64_t rp_ok[3] = {0, 1, 2};
static const int32_t ci_ok[2] = {0, 1};
static const double val_ok[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static bsrmv_status create(int64_t mb, int64_t nb, int bs, int64_t nnzb, const int64_t *rp,
                           const int32_t *ci)
{
    bsrmv_matrix *A = NULL;
    bsrmv_status s = bsrmv_matrix_create(&A, mb, nb, bs, nnzb, rp, ci, val_ok, BSRMV_DOUBLE,
                                         BSRMV_COL_MAJOR);
    bsrmv_matrix_destroy(A);
    return s;
}

static bsrmv_matrix *small(void)
{
    bsrmv_matrix *A = NULL;
    TU_OK(bsrmv_matrix_create(&A, 2, 2, 2, 2, rp_ok, ci_ok, val_ok, BSRMV_DOUBLE,
                              BSRMV_COL_MAJOR));
    return A;
}

static bsrmv_status spmv(bsrmv_op op, int64_t nx, int64_t ny, int null_x, int shift)
{
    bsrmv_matrix *A = small();
    double v[16] = {0};
    bsrmv_status s = bsrmv_spmv(op, 1.0, A, null_x ? NULL : v, nx, 0.0, v + shift, ny);
    bsrmv_matrix_destroy(A);
    return s;
}

static bsrmv_status from_coo(int64_t m, int64_t n, int64_t r, int64_t c, double v, int bs,
                             bsrmv_blocking how, bsrmv_type t)
{
    bsrmv_coo *coo = NULL;
    TU_OK(bsrmv_coo_create(&coo, m, n, 2));
    coo->row[0] = coo->row[1] = r;
    coo->col[0] = coo->col[1] = c;
    coo->val[0] = v;
    coo->val[1] = v;
    bsrmv_matrix *A = NULL;
    bsrmv_status s = bsrmv_matrix_from_coo(&A, coo, bs, how, t, BSRMV_COL_MAJOR);
    bsrmv_matrix_destroy(A);
    bsrmv_coo_destroy(coo);
    return s;
}

static bsrmv_status write_value(int64_t r, double v)
{
    bsrmv_coo *coo = NULL;
    TU_OK(bsrmv_coo_create(&coo, 2, 2, 1));
    coo->row[0] = r;
    coo->col[0] = 0;
    coo->val[0] = v;
    snprintf(path, sizeof path, "%s/out.mtx", dir);
    bsrmv_status s = bsrmv_mm_write(path, coo);
    bsrmv_coo_destroy(coo);
    return s;
}

static bsrmv_status solve(int singular, int max_iter);

/* b == x for the solver, r == z for the preconditioner. */
static bsrmv_status solve_in_place(int precond)
{
    bsrmv_matrix *A = NULL;
    TU_OK(bsrmv_generate_block_laplacian(&A, 4, 4, 1, 2, 1, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    double v[32];
    for (int i = 0; i < 32; i++)
        v[i] = 1 + i % 3;
    bsrmv_status s;
    if (precond) {
        bsrmv_precond *P = NULL;
        TU_OK(bsrmv_precond_block_jacobi(&P, A));
        s = bsrmv_precond_apply(P, v, v, 32);
        bsrmv_precond_destroy(P);
    } else {
        bsrmv_solve_report rep;
        s = bsrmv_solve(BSRMV_SOLVER_GMRES, A, NULL, v, v, 32, NULL, &rep);
    }
    bsrmv_matrix_destroy(A);
    return s;
}

static bsrmv_status solve(int singular, int max_iter)
{
    bsrmv_matrix *A = NULL;
    bsrmv_status s = bsrmv_generate_block_laplacian(&A, 4, 4, 1, 2, 1, BSRMV_DOUBLE,
                                                    BSRMV_COL_MAJOR);
    TU_CHECK(!s, "generate");
    if (singular) {
        const int64_t *rp;
        const int32_t *ci;
        const void *v;
        TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &v));
        memset((void *)v, 0, 4 * sizeof(double) * (size_t)(rp[1] - rp[0]));
        bsrmv_precond *P = NULL;
        s = bsrmv_precond_block_jacobi(&P, A);
        bsrmv_precond_destroy(P);
    } else {
        double b[32], x[32] = {0};
        for (int i = 0; i < 32; i++)
            b[i] = 1 + i % 3;
        /* max_iter < 0: a start x with a NaN (read: no x0_zero) */
        x[5] = NAN;
        bsrmv_solve_options opt = {.max_iter = max_iter < 0 ? 10 : max_iter, .x0_zero = max_iter >= 0};
        bsrmv_solve_report rep;
        s = bsrmv_solve(BSRMV_SOLVER_CG, A, NULL, b, x, max_iter ? 32 : 30, &opt, &rep);
    }
    bsrmv_matrix_destroy(A);
    return s;
}

static bsrmv_status run(const char *id)
{
    static unsigned char gz[1 << 17];
    int64_t rp[3] = {0, 1, 2};
    int32_t ci[2] = {0, 1};
    bsrmv_coo *coo = NULL;
#define IS(name) (!strcmp(id, name))
    /* ---- arguments and sizes */
    if (IS("arg-null-handle"))
        return bsrmv_matrix_create(NULL, 2, 2, 2, 2, rp_ok, ci_ok, val_ok, BSRMV_DOUBLE,
                                   BSRMV_COL_MAJOR);
    if (IS("arg-block-size"))
        return create(2, 2, 0, 2, rp_ok, ci_ok);
    if (IS("arg-negative"))
        return create(-1, 2, 2, 2, rp_ok, ci_ok);
    if (IS("arg-null-array"))
        return create(2, 2, 2, 2, NULL, ci_ok);
    if (IS("arg-type"))
        return bsrmv_matrix_create(&(bsrmv_matrix *){NULL}, 2, 2, 2, 2, rp_ok, ci_ok, val_ok,
                                   (bsrmv_type)7, BSRMV_COL_MAJOR);
    if (IS("arg-order"))
        return bsrmv_matrix_create(&(bsrmv_matrix *){NULL}, 2, 2, 2, 2, rp_ok, ci_ok, val_ok,
                                   BSRMV_DOUBLE, (bsrmv_order)5);
    if (IS("size-overflow"))
        return create(INT64_MAX / 2, 1, 4, 0, rp_ok, ci_ok);
    if (IS("size-col32"))
        return create(1, (int64_t)1 << 31, 1, 0, rp_ok, ci_ok);
    /* ---- BSR structure: the first broken rule */
    if (IS("bsr-row-ptr-start"))
        return rp[0] = 1, create(2, 2, 2, 2, rp, ci);
    if (IS("bsr-row-ptr-order"))
        return rp[1] = 3, create(2, 2, 2, 2, rp, ci);
    if (IS("bsr-row-ptr-end"))
        return create(2, 2, 2, 3, rp, ci);
    if (IS("bsr-col-range"))
        return ci[1] = 2, create(2, 2, 2, 2, rp, ci);
    if (IS("bsr-col-order"))
        return rp[1] = 0, ci[0] = 1, ci[1] = 0, create(2, 2, 2, 2, rp, ci);
    if (IS("bsr-col-duplicate"))
        return rp[1] = 0, ci[0] = ci[1] = 1, create(2, 2, 2, 2, rp, ci);
    if (IS("bsr-i32-row-ptr-order"))
        return bsrmv_matrix_wrap_i32(&(bsrmv_matrix *){NULL}, 2, 2, 2, 2, (int32_t[3]){0, 2, 1},
                                     ci_ok, val_ok, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    if (IS("arrays-width")) {
        bsrmv_matrix *A = NULL;
        TU_OK(bsrmv_matrix_wrap_i32(&A, 2, 2, 2, 2, (int32_t[3]){0, 1, 2}, ci_ok, val_ok,
                                    BSRMV_DOUBLE, BSRMV_COL_MAJOR));
        const int64_t *r;
        const int32_t *c;
        const void *v;
        bsrmv_status s = bsrmv_matrix_arrays(A, &r, &c, &v);
        bsrmv_matrix_destroy(A);
        return s;
    }
    /* ---- SpMV */
    if (IS("spmv-null-matrix"))
        return bsrmv_spmv(BSRMV_OP_N, 1, NULL, val_ok, 4, 0, (double[4]){0}, 4);
    if (IS("spmv-op"))
        return spmv((bsrmv_op)7, 4, 4, 0, 8);
    if (IS("spmv-dimension"))
        return spmv(BSRMV_OP_N, 3, 4, 0, 8);
    if (IS("spmv-null-vector"))
        return spmv(BSRMV_OP_N, 4, 4, 1, 8);
    if (IS("spmv-overlap"))
        return spmv(BSRMV_OP_T, 4, 4, 0, 2);
    if (IS("spmv-scalars-null"))
        return bsrmv_spmv_scalars(BSRMV_OP_N, &(double){1}, NULL, val_ok, 4, NULL,
                                  (double[4]){0}, 4);
    /* ---- complex values */
    if (IS("complex-refused")) {
        bsrmv_matrix *Z = NULL;
        TU_OK(bsrmv_matrix_wrap(&Z, 2, 2, 1, 2, rp_ok, ci_ok, val_ok, BSRMV_COMPLEX_DOUBLE,
                                BSRMV_COL_MAJOR));
        double b[4] = {1, 0, 1, 0}, x[4];
        bsrmv_status s = bsrmv_solve_refined(BSRMV_SOLVER_CG, Z, Z, NULL, b, x, 2, NULL, NULL);
        bsrmv_matrix_destroy(Z);
        return s;
    }
    if (IS("conv-imaginary")) {
        bsrmv_coo *c;
        TU_OK(bsrmv_coo_create_complex(&c, 2, 2, 1));
        c->row[0] = 1;
        c->col[0] = 0;
        c->val[0] = 1;
        c->imag[0] = 0.5;
        bsrmv_matrix *A = NULL;
        bsrmv_status s =
            bsrmv_matrix_from_coo(&A, c, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
        bsrmv_coo_destroy(c);
        bsrmv_matrix_destroy(A);
        return s;
    }
    /* ---- symmetric storage */
    if (IS("sym-lower-block")) {
        bsrmv_matrix *S = NULL;
        ci[1] = 0;
        return bsrmv_matrix_create_sym(&S, 2, 2, 2, rp, ci, val_ok, BSRMV_DOUBLE,
                                       BSRMV_COL_MAJOR);
    }
    if (IS("sym-not-symmetric") || IS("sym-not-square")) {
        bsrmv_matrix *A, *S = NULL;
        ci[0] = 1;
        bsrmv_status s = bsrmv_matrix_create(&A, IS("sym-not-square") ? 1 : 2, 2, 2,
                                             IS("sym-not-square") ? 1 : 2, rp, ci, val_ok,
                                             BSRMV_DOUBLE, BSRMV_COL_MAJOR);
        if (s == BSRMV_SUCCESS)
            s = bsrmv_matrix_to_sym(&S, A, 0.0);
        bsrmv_matrix_destroy(A);
        return s;
    }
    if (IS("sym-coo-triangles")) {
        bsrmv_matrix *S = NULL;
        bsrmv_status s = bsrmv_coo_create(&coo, 3, 3, 2);
        if (s)
            return s;
        coo->row[0] = 0, coo->col[0] = 1, coo->val[0] = 1;
        coo->row[1] = 2, coo->col[1] = 0, coo->val[1] = 1;
        s = bsrmv_matrix_from_coo_sym(&S, coo, 1, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
        bsrmv_coo_destroy(coo);
        coo = NULL;
        return s;
    }
    /* ---- Matrix Market files */
    if (IS("mm-open"))
        return snprintf(path, sizeof path, "%s/missing.mtx", dir),
               bsrmv_mm_read(path, &coo);
    if (IS("mm-directory"))
        return snprintf(path, sizeof path, "%s", dir), bsrmv_mm_read(path, &coo);
    if (IS("mm-empty"))
        return read_text("empty.mtx", "");
    if (IS("mm-banner"))
        return read_text("nobanner.mtx", "3 3 1\n1 1 1\n");
    if (IS("mm-banner-form"))
        return read_text("shortbanner.mtx", "%%MatrixMarket matrix coordinate real\n3 3 1\n");
    if (IS("mm-object"))
        return read_text("vector.mtx", "%%MatrixMarket vector coordinate real general\n");
    if (IS("mm-array"))
        return read_text("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n");
    if (IS("mm-format"))
        return read_text("fmt.mtx", "%%MatrixMarket matrix sparse real general\n");
    if (IS("mm-hermitian-diagonal"))
        return read_text("hdiag.mtx", "%%MatrixMarket matrix coordinate complex hermitian\n"
                                      "2 2 1\n1 1 1 0.5\n");
    if (IS("mm-field"))
        return read_text("field.mtx", "%%MatrixMarket matrix coordinate float general\n");
    if (IS("mm-hermitian"))
        return read_text("herm.mtx", "%%MatrixMarket matrix coordinate real hermitian\n");
    if (IS("mm-symmetry"))
        return read_text("diag.mtx", "%%MatrixMarket matrix coordinate real diagonal\n");
    if (IS("mm-pattern-skew"))
        return read_text("ps.mtx", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n");
    if (IS("mm-size-missing"))
        return read_text("nosize.mtx", BANNER "% only a comment\n");
    if (IS("mm-size-line"))
        return read_text("size.mtx", BANNER "3 three 1\n");
    if (IS("mm-size-negative"))
        return read_text("neg.mtx", BANNER "-3 3 1\n");
    if (IS("mm-size-square"))
        return read_text("nonsq.mtx", SYM_BANNER "3 4 1\n");
    if (IS("mm-nul")) {
        static const char nul[] = BANNER "3 3 1\n1 1\0 1\n";
        return read_bytes("nul.mtx", (const unsigned char *)nul, sizeof nul - 1);
    }
    if (IS("mm-long-line")) {
        size_t n = (size_t)5 << 20;
        char *t = malloc(n + 1);
        TU_CHECK(t, "out of memory");
        memset(t, 'x', n);
        memcpy(t, BANNER "%", sizeof BANNER);
        t[n] = 0;
        bsrmv_status s = read_text("long.mtx", t);
        free(t);
        return s;
    }
    if (IS("mm-fields-more"))
        return read_text("more.mtx", BANNER "3 3 1\n1 1 1 7\n");
    if (IS("mm-fields-fewer"))
        return read_text("fewer.mtx", BANNER "3 3 1\n1 1\n");
    if (IS("mm-index-integer"))
        return read_text("idx.mtx", BANNER "3 3 1\n1.0 1 1\n");
    if (IS("mm-index-range"))
        return read_text("range.mtx", BANNER "3 4 1\n1 5 1\n");
    if (IS("mm-value-text"))
        return read_text("text.mtx", BANNER "3 3 1\n1 1 abc\n");
    if (IS("mm-value-nan"))
        return read_text("nan.mtx", BANNER "3 3 1\n1 1 nan\n");
    if (IS("mm-value-inf"))
        return read_text("inf.mtx", BANNER "3 3 1\n1 1 -inf\n");
    if (IS("mm-value-hex"))
        return read_text("hex.mtx", BANNER "3 3 1\n1 1 0x1.8p1\n");
    if (IS("mm-value-range"))
        return read_text("big.mtx", BANNER "3 3 1\n1 1 1e400\n");
    if (IS("mm-integer-value"))
        return read_text("int.mtx", INT_BANNER "3 3 1\n1 1 1.5\n");
    if (IS("mm-integer-2p53"))
        return read_text("int53.mtx", INT_BANNER "3 3 1\n1 1 9007199254740993\n");
    if (IS("mm-skew-diagonal"))
        return read_text("skew.mtx",
                         "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n");
    if (IS("mm-both-triangles"))
        return read_text("both.mtx", SYM_BANNER "3 3 2\n2 1 1\n1 3 2\n");
    if (IS("mm-entries-fewer"))
        return read_text("fewer_e.mtx", BANNER "3 3 3\n1 1 1\n2 2 2\n");
    if (IS("mm-entries-more"))
        return read_text("more_e.mtx", BANNER "3 3 1\n1 1 1\n2 2 2\n");
    if (IS("mm-gz-truncated")) {
        size_t n = gz_matrix(gz, sizeof gz);
        return read_bytes("cut.mtx.gz", gz, n / 2);
    }
    if (IS("mm-gz-damaged")) {
        size_t n = gz_matrix(gz, sizeof gz);
        memset(gz + n / 2, 0xff, 32);
        return read_bytes("damaged.mtx.gz", gz, n);
    }
    if (IS("mm-gz-trailing")) {
        size_t n = gz_matrix(gz, sizeof gz);
        memcpy(gz + n, "junk", 4);
        return read_bytes("trailing.mtx.gz", gz, n + 4);
    }
    if (IS("mm-write-nonfinite"))
        return write_value(0, INFINITY);
    if (IS("mm-write-range"))
        return write_value(2, 1.0);
    /* ---- COO and conversion */
    if (IS("coo-negative"))
        return bsrmv_coo_create(&coo, -1, 2, 0);
    if (IS("coo-size"))
        return bsrmv_coo_create(&coo, 1, 1, INT64_MAX);
    if (IS("conv-entry-range"))
        return from_coo(2, 2, 5, 0, 1.0, 1, BSRMV_SPLIT, BSRMV_DOUBLE);
    if (IS("conv-blocking"))
        return from_coo(2, 2, 0, 0, 1.0, 1, (bsrmv_blocking)9, BSRMV_DOUBLE);
    if (IS("conv-columns"))
        return from_coo(INT64_MAX, INT64_MAX, 0, 0, 1.0, 3, BSRMV_SPLIT, BSRMV_DOUBLE);
    if (IS("conv-rows"))
        return from_coo(INT64_MAX, 4, 0, 0, 1.0, 1, BSRMV_SPLIT, BSRMV_DOUBLE);
    if (IS("conv-promote-size"))
        return from_coo(INT64_MAX / 8, 4, 0, 0, 1.0, 64, BSRMV_PROMOTE, BSRMV_DOUBLE);
    if (IS("conv-float-range"))
        return from_coo(2, 2, 0, 0, 1e39, 1, BSRMV_SPLIT, BSRMV_FLOAT);
    if (IS("conv-sum-overflow"))
        return from_coo(2, 2, 1, 1, 2e38, 2, BSRMV_SPLIT, BSRMV_FLOAT);
    if (IS("perturb-range") || IS("perturb-wrapped")) {
        bsrmv_matrix *A = NULL;
        if (IS("perturb-range")) {
            TU_OK(bsrmv_coo_create(&coo, 1, 1, 1));
            coo->row[0] = coo->col[0] = 0;
            coo->val[0] = FLT_MAX;
            TU_OK(bsrmv_matrix_from_coo(&A, coo, 4, BSRMV_PROMOTE, BSRMV_FLOAT,
                                        BSRMV_COL_MAJOR));
            bsrmv_coo_destroy(coo);
        } else {
            TU_OK(bsrmv_matrix_wrap(&A, 2, 2, 2, 2, rp_ok, ci_ok, val_ok, BSRMV_DOUBLE,
                                    BSRMV_COL_MAJOR));
        }
        bsrmv_status s = bsrmv_matrix_perturb_promoted(A, 1);
        bsrmv_matrix_destroy(A);
        return s;
    }
    if (IS("csr-row-ptr-start"))
        return rp[0] = 1, bsrmv_matrix_from_csr(&(bsrmv_matrix *){NULL}, 2, 2, rp,
                                                (int64_t[2]){0, 1}, val_ok, 1, BSRMV_SPLIT,
                                                BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    if (IS("csr-row-ptr-order"))
        return rp[1] = 3, bsrmv_matrix_from_csr(&(bsrmv_matrix *){NULL}, 2, 2, rp,
                                                (int64_t[2]){0, 1}, val_ok, 1, BSRMV_SPLIT,
                                                BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    /* ---- solvers */
    if (IS("precond-singular"))
        return solve(1, 0);
    if (IS("solve-overlap"))
        return solve_in_place(0);
    if (IS("precond-overlap"))
        return solve_in_place(1);
    if (IS("solve-dimension"))
        return solve(0, 0);
    if (IS("solve-not-converged"))
        return solve(0, 2);
    if (IS("solve-nonfinite-start"))
        return solve(0, -1);
    /* ---- memory (fault-injection builds) */
#ifdef BSRMV_FAULT_INJECTION
    if (IS("nomem-convert")) {
        TU_OK(bsrmv_coo_create(&coo, 4, 4, 1));
        coo->row[0] = coo->col[0] = 1;
        coo->val[0] = 1;
        bsrmv_matrix *A = NULL;
        bsrmv_fault_fail_at(1);
        bsrmv_status s = bsrmv_matrix_from_coo(&A, coo, 2, BSRMV_SPLIT, BSRMV_DOUBLE,
                                               BSRMV_COL_MAJOR);
        bsrmv_fault_fail_at(0);
        bsrmv_coo_destroy(coo);
        return s;
    }
    if (IS("nomem-read")) {
        file_of("ok.mtx", BANNER "2 2 1\n1 1 1\n", sizeof BANNER + 11);
        bsrmv_fault_fail_at(1);
        bsrmv_status s = bsrmv_mm_read(path, &coo);
        bsrmv_fault_fail_at(0);
        return s;
    }
#endif
    /* ---- no CUDA in this build */
    if (IS("gpu-no-device")) {
        int n;
        return bsrmv_gpu_device_count(&n);
    }
#undef IS
    return (bsrmv_status)-1;
}

/* Every case of run(), which must each have a row. */
static const char *const case_ids[] = {
    "arg-null-handle",
    "arg-block-size",
    "arg-negative",
    "arg-null-array",
    "arg-type",
    "arg-order",
    "size-overflow",
    "size-col32",
    "bsr-row-ptr-start",
    "bsr-row-ptr-order",
    "bsr-row-ptr-end",
    "bsr-col-range",
    "bsr-col-order",
    "bsr-col-duplicate",
    "bsr-i32-row-ptr-order",
    "arrays-width",
    "spmv-null-matrix",
    "spmv-op",
    "spmv-dimension",
    "spmv-null-vector",
    "spmv-overlap",
    "spmv-scalars-null",
    "complex-refused",
    "conv-imaginary",
    "sym-lower-block",
    "sym-not-symmetric",
    "sym-not-square",
    "sym-coo-triangles",
    "mm-open",
    "mm-directory",
    "mm-empty",
    "mm-banner",
    "mm-banner-form",
    "mm-object",
    "mm-array",
    "mm-format",
    "mm-hermitian-diagonal",
    "mm-field",
    "mm-hermitian",
    "mm-symmetry",
    "mm-pattern-skew",
    "mm-size-missing",
    "mm-size-line",
    "mm-size-negative",
    "mm-size-square",
    "mm-nul",
    "mm-long-line",
    "mm-fields-more",
    "mm-fields-fewer",
    "mm-index-integer",
    "mm-index-range",
    "mm-value-text",
    "mm-value-nan",
    "mm-value-inf",
    "mm-value-hex",
    "mm-value-range",
    "mm-integer-value",
    "mm-integer-2p53",
    "mm-skew-diagonal",
    "mm-both-triangles",
    "mm-entries-fewer",
    "mm-entries-more",
    "mm-gz-truncated",
    "mm-gz-damaged",
    "mm-gz-trailing",
    "mm-write-nonfinite",
    "mm-write-range",
    "coo-negative",
    "coo-size",
    "conv-entry-range",
    "conv-blocking",
    "conv-columns",
    "conv-rows",
    "conv-promote-size",
    "conv-float-range",
    "conv-sum-overflow",
    "perturb-range",
    "perturb-wrapped",
    "csr-row-ptr-start",
    "csr-row-ptr-order",
    "precond-singular",
    "solve-overlap",
    "precond-overlap",
    "solve-dimension",
    "solve-not-converged",
    "solve-nonfinite-start",
    "nomem-convert",
    "nomem-read",
    "gpu-no-device",
};

/* '*' in the pattern (what <...> became) matches any text. */
static bool glob(const char *p, const char *s)
{
    if (!*p)
        return !*s;
    if (*p == '*')
        return glob(p + 1, s) || (*s && glob(p, s + 1));
    return *s == *p && glob(p + 1, s + 1);
}

typedef struct row {
    char id[64], status[64], pattern[512];
} row;

/* The rows of docs/ERRORS.md's tables: | `id` | input | `STATUS` | `pattern` | */
static int read_rows(const char *doc, row *rows, int max)
{
    FILE *f = fopen(doc, "r");
    TU_CHECK(f, "cannot open %s", doc);
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "| `", 3) != 0)
            continue;
        char *cell[8];
        int k = 0;
        for (char *p = line + 1; k < 8;) {
            char *bar = strstr(p, " |");
            if (!bar)
                break;
            *bar = 0;
            cell[k++] = p;
            p = bar + 2;
        }
        TU_CHECK(k >= 4 && n < max, "malformed row in %s: %s", doc, line);
        row *r = &rows[n++];
        /* Strip blanks and the backticks of code spans. */
        for (int c = 0; c < 4; c++) {
            if (c == 1)
                continue;
            char *s = cell[c];
            while (*s == ' ')
                s++;
            if (*s == '`')
                s++;
            size_t len = strlen(s);
            while (len && (s[len - 1] == ' ' || s[len - 1] == '`'))
                len--;
            s[len] = 0;
            cell[c] = s;
        }
        snprintf(r->id, sizeof r->id, "%s", cell[0]);
        snprintf(r->status, sizeof r->status, "%s", cell[2]);
        /* <...> placeholders become '*'. */
        char *o = r->pattern;
        for (const char *s = cell[3]; *s && o < r->pattern + sizeof r->pattern - 1; s++) {
            if (*s == '<') {
                const char *e = strchr(s, '>');
                if (e) {
                    *o++ = '*';
                    s = e;
                    continue;
                }
            }
            *o++ = *s;
        }
        *o = 0;
    }
    fclose(f);
    return n;
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "/tmp/bsrmv_errors_XXXXXX");
    TU_CHECK(mkdtemp(dir), "mkdtemp");
    const char *doc = getenv("BSRMV_ERRORS_DOC");
    if (argc > 2 && !strcmp(argv[1], "--print")) {
        for (int a = 2; a < argc; a++) {
            bsrmv_status s = run(argv[a]);
            printf("%s | %s | %s\n", argv[a], bsrmv_status_string(s), bsrmv_last_error());
        }
        remove_dir();
        return 0;
    }
    TU_CHECK(doc, "BSRMV_ERRORS_DOC is not set");
    static row rows[256];
    int n = read_rows(doc, rows, 256);
    int checked = 0, elsewhere = 0;
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        bsrmv_status s = run(r->id);
        bool nomem_row = !strncmp(r->id, "nomem-", 6);
#ifndef BSRMV_FAULT_INJECTION
        if (nomem_row) {
            elsewhere++;
            continue;
        }
#endif
        if ((int)s == -1 && !strncmp(r->id, "gpu-", 4)) {
            elsewhere++;
            continue;
        }
        TU_CHECK((int)s != -1, "%s: a row of %s without a case here", r->id, doc);
        (void)nomem_row;
        if (!strcmp(r->id, "gpu-no-device") && !strstr(bsrmv_last_error(), "without CUDA")) {
            elsewhere++; /* a CUDA build: the device tests see the device */
            continue;
        }
        TU_CHECK(!strcmp(bsrmv_status_string(s), r->status), "%s: returns %s, %s says %s",
                 r->id, bsrmv_status_string(s), doc, r->status);
        TU_CHECK(glob(r->pattern, bsrmv_last_error()), "%s: message\n  '%s'\ndoes not match\n  '%s'",
                 r->id, bsrmv_last_error(), r->pattern);
        checked++;
    }
    for (size_t c = 0; c < sizeof case_ids / sizeof case_ids[0]; c++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= !strcmp(rows[i].id, case_ids[c]);
        TU_CHECK(found, "case %s has no row in %s", case_ids[c], doc);
    }
    TU_CHECK(checked >= 60, "only %d rows checked", checked);
    printf("test_errors: %d rows of %s checked, %d left to other tests\n", checked, doc,
           elsewhere);
    remove_dir();
    return 0;
}
