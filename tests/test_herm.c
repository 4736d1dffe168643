/* Symmetric and Hermitian storage of complex matrices (docs/SYMMETRIC.md):
 * bsrmv_spmv_scalars against a long double complex product with the dense
 * matrix the stored upper blocks stand for, for every block size with a
 * compiled symmetric kernel and runtime ones, both block orders, OP_N, OP_T
 * and OP_C, alpha and beta in {0, 1, a complex value}, y poisoned with NaN
 * where beta == 0, 1 and 2 threads; the conversions (to_herm/to_sym checks,
 * from_sym, to_coo), Matrix Market round trips (complex hermitian and
 * symmetric, real symmetric, complex general), CG on Hermitian storage,
 * and the errors. */
#define _POSIX_C_SOURCE 200809L
#include "testutil_complex.h"

#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

typedef long double _Complex ldc;

static bool dbl(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_DOUBLE || t == BSRMV_DOUBLE;
}

static ldc get(const void *v, bsrmv_type t, int64_t i)
{
    switch (t) {
    case BSRMV_COMPLEX_DOUBLE: return ((const double _Complex *)v)[i];
    case BSRMV_COMPLEX_FLOAT: return ((const float _Complex *)v)[i];
    case BSRMV_DOUBLE: return ((const double *)v)[i];
    case BSRMV_FLOAT: return ((const float *)v)[i];
    }
    return 0;
}

static void put(void *v, bsrmv_type t, int64_t i, ldc x)
{
    switch (t) {
    case BSRMV_COMPLEX_DOUBLE: ((double _Complex *)v)[i] = (double _Complex)x; break;
    case BSRMV_COMPLEX_FLOAT: ((float _Complex *)v)[i] = (float _Complex)x; break;
    case BSRMV_DOUBLE: ((double *)v)[i] = (double)creall(x); break;
    case BSRMV_FLOAT: ((float *)v)[i] = (float)creall(x); break;
    }
}

/* The dense n x n matrix (row-major) that the stored blocks of S stand for
 * (full storage too). */
static ldc *dense_of(const bsrmv_matrix *S)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(S, &in));
    const int32_t *ci;
    const void *val;
    int64_t *rp = tu_row_ptr64(S, &ci, &val);
    const int64_t n = in.rows, bs = in.bs, bs2 = bs * bs;
    ldc *D = calloc((size_t)(n * n), sizeof *D);
    TU_CHECK(D, "out of memory");
    for (int64_t i = 0; i < in.mb; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            const int64_t j = ci[k];
            for (int64_t r = 0; r < bs; r++)
                for (int64_t c = 0; c < bs; c++) {
                    const ldc a = get(val, in.type, k * bs2 +
                                      (in.order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c));
                    D[(i * bs + r) * n + j * bs + c] = a;
                    if (in.symmetric && j != i)
                        D[(j * bs + c) * n + i * bs + r] =
                            in.symmetric == BSRMV_SYM_HERMITIAN ? conjl(a) : a;
                }
        }
    free(rp);
    return D;
}

/* s = op(D) x and mag = |op(D)| |x| in long double. */
static void reference(const ldc *D, int64_t n, bsrmv_type t, bsrmv_op op, const void *x, ldc *s,
                      long double *mag)
{
    for (int64_t i = 0; i < n; i++) {
        s[i] = 0;
        mag[i] = 0;
        for (int64_t j = 0; j < n; j++) {
            ldc a = op == BSRMV_OP_N ? D[i * n + j] : D[j * n + i];
            if (op == BSRMV_OP_C)
                a = conjl(a);
            s[i] += a * get(x, t, j);
            mag[i] += cabsl(a) * cabsl(get(x, t, j));
        }
    }
}

/* alpha s + beta y0 against y, within the rounding bound of the type. */
static void check_product(const char *what, const ldc *s, const long double *smag, int64_t n,
                          bsrmv_type t, ldc alpha, ldc beta, const void *y0, const void *y)
{
    const long double eps = dbl(t) ? 0x1p-52L : 0x1p-23L;
    for (int64_t i = 0; i < n; i++) {
        ldc want = alpha * s[i];
        long double mag = cabsl(alpha) * smag[i];
        if (beta != 0) {
            want += beta * get(y0, t, i);
            mag += cabsl(beta) * cabsl(get(y0, t, i));
        }
        const ldc got = get(y, t, i);
        TU_CHECK(cabsl(got - want) <= 8 * (n + 2) * eps * mag + 1e-300L,
                 "%s: y[%lld] = %Lg%+Lgi, want %Lg%+Lgi (bound %Lg)", what, (long long)i,
                 creall(got), cimagl(got), creall(want), cimagl(want),
                 8 * (n + 2) * eps * mag);
    }
}

typedef union scalar_buf {
    float f;
    double d;
    float _Complex c;
    double _Complex z;
} scalar_buf;

static ldc scalar(scalar_buf *b, bsrmv_type t, double _Complex v)
{
    put(b, t, 0, v);
    return get(b, t, 0);
}

/* Every op and alpha/beta case of S against its dense matrix. */
static void check_all_products(const bsrmv_matrix *S, const char *name)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(S, &in));
    const int64_t n = in.rows;
    const bsrmv_type t = in.type;
    ldc *D = dense_of(S);
    const double _Complex cases[3] = {0, 1, 0.75 - 0.5 * I};
    void *x = tu_random_vector(n, t, 17);
    void *y0 = tu_random_vector(n, t, 19);
    void *y = malloc((size_t)n * bsrmv_type_size(t) + 1);
    void *nan = tu_nan_vector(n, t);
    ldc *ref = malloc((size_t)n * sizeof *ref + 1);
    long double *mag = malloc((size_t)n * sizeof *mag + 1);
    TU_CHECK(y && ref && mag, "out of memory");
    for (int op = 0; op < 3; op++) {
        reference(D, n, t, (bsrmv_op)op, x, ref, mag);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                scalar_buf sa, sb;
                const ldc alpha = scalar(&sa, t, cases[a]), beta = scalar(&sb, t, cases[b]);
                memcpy(y, b == 0 ? nan : y0, (size_t)n * bsrmv_type_size(t));
                TU_OK(bsrmv_spmv_scalars((bsrmv_op)op, &sa, S, x, n, &sb, y, n));
                char what[160];
                snprintf(what, sizeof what, "%s op %d alpha %d beta %d threads %d", name, op, a,
                         b, omp_get_max_threads());
                check_product(what, ref, mag, n, t, alpha, beta, y0, y);
            }
    }
    free(ref);
    free(mag);
    free(x);
    free(y0);
    free(y);
    free(nan);
    free(D);
}

/* The full matrix of S (from_sym and to_coo) is the dense one; to_sym or
 * to_herm of it gives S's product back; the other check refuses it where
 * it differs. */
static void check_conversions(const bsrmv_matrix *S, int kind)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(S, &in));
    TU_CHECK(in.symmetric == kind, "info.symmetric %d, want %d", in.symmetric, kind);
    const int64_t n = in.rows;
    ldc *D = dense_of(S);
    bsrmv_matrix *F, *S2;
    TU_OK(bsrmv_matrix_from_sym(&F, S));
    ldc *DF = dense_of(F);
    for (int64_t e = 0; e < n * n; e++)
        TU_CHECK(DF[e] == D[e], "from_sym: entry %lld", (long long)e);
    bsrmv_coo *c;
    TU_OK(bsrmv_matrix_to_coo(S, &c));
    for (int64_t k = 0; k < c->nnz; k++) {
        const ldc v = c->val[k] + (c->imag ? c->imag[k] : 0) * (ldc)I;
        TU_CHECK(v == D[c->row[k] * n + c->col[k]], "to_coo: entry %lld", (long long)k);
    }
    bsrmv_coo_destroy(c);
    TU_OK(kind == BSRMV_SYM_HERMITIAN ? bsrmv_matrix_to_herm(&S2, F, 0)
                                      : bsrmv_matrix_to_sym(&S2, F, 0));
    ldc *D2 = dense_of(S2);
    for (int64_t e = 0; e < n * n; e++)
        TU_CHECK(D2[e] == D[e], "to_%s: entry %lld", kind == 2 ? "herm" : "sym", (long long)e);
    bsrmv_matrix_destroy(S2);
    /* a matrix with a non-real off-diagonal pair is not both */
    int differs = 0;
    for (int64_t i = 0; i < n && !differs; i++)
        for (int64_t j = i + 1; j < n && !differs; j++)
            differs = cimagl(D[i * n + j]) != 0;
    if (differs) {
        TU_FAILS(kind == BSRMV_SYM_HERMITIAN ? bsrmv_matrix_to_sym(&S2, F, 1e-6)
                                             : bsrmv_matrix_to_herm(&S2, F, 1e-6),
                 BSRMV_ERR_ARGUMENT);
        TU_CHECK(S2 == NULL, "handle set on failure");
    }
    bsrmv_matrix_destroy(F);
    free(D);
    free(DF);
    free(D2);
}

static void test_products(void)
{
    const bsrmv_type types[2] = {BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT};
    /* 1-8: compiled symmetric kernels; 11: runtime bs */
    const int bss[9] = {1, 2, 3, 4, 5, 6, 7, 8, 11};
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 9; b++)
            for (int o = 0; o < 2; o++)
                for (int kind = 1; kind <= 2; kind++) {
                    const int bs = bss[b];
                    tu_shape sh = {b % 3 == 0 ? 1 : 23, 0, bs, 3.0, 0.15, -1, 0};
                    sh.nb = sh.mb;
                    if (b % 3 == 1) {
                        sh.long_row = 2;
                        sh.long_len = sh.mb - 2;
                    } else if (b % 3 == 2) { /* rows past SYM_SHORT_ROW_BLOCKS */
                        sh.mb = sh.nb = 60;
                        sh.mean_len = 40;
                    }
                    bsrmv_matrix *S = tu_random_sym(&sh, types[t], (bsrmv_order)o, kind,
                                                 (uint64_t)(100 * b + 10 * o + kind), false);
                    char name[96];
                    snprintf(name, sizeof name, "%s %s bs %d %s mb %lld",
                             kind == 2 ? "hermitian" : "symmetric",
                             t ? "complex float" : "complex double", bs, o ? "row" : "col",
                             (long long)sh.mb);
                    for (int nt = 1; nt <= 2; nt++) {
                        omp_set_num_threads(nt);
                        check_all_products(S, name);
                    }
                    check_conversions(S, kind);
                    bsrmv_matrix_destroy(S);
                }
    printf("products: 2 types x 9 block sizes x 2 orders x 2 kinds, 27 cases x 2 thread "
           "counts each\n");
}

static char dir[64];

/* S written with bsrmv_mm_write_sym and read back (bsrmv_mm_read_sym,
 * from_coo_sym/_herm): the same matrix. */
static void round_trip(const bsrmv_matrix *S, const char *file)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(S, &in));
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    TU_OK(bsrmv_mm_write_sym(path, S));
    const char *want = in.symmetric == BSRMV_SYM_HERMITIAN ? "complex hermitian"
                       : bsrmv_type_size(in.type) > 8 || in.type == BSRMV_COMPLEX_FLOAT
                           ? "complex symmetric"
                           : "real symmetric";
    if (!strstr(file, ".gz")) {
        FILE *f = fopen(path, "r");
        char banner[128] = "";
        TU_CHECK(f && fgets(banner, sizeof banner, f), "cannot read %s", path);
        fclose(f);
        TU_CHECK(strstr(banner, want), "%s: banner %s, want %s", file, banner, want);
    }
    bsrmv_coo *c;
    int sym;
    TU_OK(bsrmv_mm_read_sym(path, &c, &sym));
    TU_CHECK(sym == in.symmetric, "%s: read back as %d, written as %d", file, sym, in.symmetric);
    bsrmv_matrix *B;
    TU_OK(sym == BSRMV_SYM_HERMITIAN
              ? bsrmv_matrix_from_coo_herm(&B, c, in.bs, BSRMV_SPLIT, in.type, in.order)
              : bsrmv_matrix_from_coo_sym(&B, c, in.bs, BSRMV_SPLIT, in.type, in.order));
    bsrmv_coo_destroy(c);
    ldc *D = dense_of(S), *DB = dense_of(B);
    for (int64_t e = 0; e < in.rows * in.rows; e++)
        TU_CHECK(DB[e] == D[e], "%s: entry (%lld, %lld) differs", file,
                 (long long)(e / in.rows), (long long)(e % in.rows));
    free(D);
    free(DB);
    bsrmv_matrix_destroy(B);
}

static void test_files(void)
{
    tu_shape sh = {9, 9, 3, 2.5, 0.1, -1, 0};
    bsrmv_matrix *H = tu_random_sym(&sh, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR,
                                 BSRMV_SYM_HERMITIAN, 5, false);
    round_trip(H, "h.mtx");
    bsrmv_matrix *Hf = tu_random_sym(&sh, BSRMV_COMPLEX_FLOAT, BSRMV_ROW_MAJOR,
                                  BSRMV_SYM_HERMITIAN, 6, false);
    round_trip(Hf, "hf.mtx.gz");
    bsrmv_matrix *C = tu_random_sym(&sh, BSRMV_COMPLEX_DOUBLE, BSRMV_ROW_MAJOR,
                                 BSRMV_SYM_SYMMETRIC, 7, false);
    round_trip(C, "c.mtx");
    bsrmv_matrix *R =
        tu_random_sym(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, BSRMV_SYM_SYMMETRIC, 8, false);
    round_trip(R, "r.mtx");
    /* complex general: the full matrix through to_coo and bsrmv_mm_write */
    bsrmv_matrix *F, *G;
    TU_OK(bsrmv_matrix_from_sym(&F, H));
    bsrmv_coo *c, *back;
    TU_OK(bsrmv_matrix_to_coo(F, &c));
    char path[128];
    snprintf(path, sizeof path, "%s/g.mtx", dir);
    TU_OK(bsrmv_mm_write(path, c));
    TU_OK(bsrmv_mm_read(path, &back));
    TU_OK(bsrmv_matrix_from_coo(&G, back, 3, BSRMV_SPLIT, BSRMV_COMPLEX_DOUBLE,
                                BSRMV_COL_MAJOR));
    ldc *DF = dense_of(F), *DG = dense_of(G);
    for (int64_t e = 0; e < 27 * 27; e++)
        TU_CHECK(DF[e] == DG[e], "complex general round trip: entry %lld", (long long)e);
    free(DF);
    free(DG);
    bsrmv_coo_destroy(c);
    bsrmv_coo_destroy(back);
    bsrmv_matrix_destroy(F);
    bsrmv_matrix_destroy(G);
    /* errors: a full matrix; a Hermitian diagonal that is not real */
    TU_FAILS(bsrmv_mm_write_sym(path, F = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 1)),
             BSRMV_ERR_ARGUMENT);
    bsrmv_matrix_destroy(F);
    const int64_t rp[2] = {0, 1};
    const int32_t ci[1] = {0};
    const double _Complex v[1] = {2 + 1 * I};
    bsrmv_matrix *Z;
    TU_OK(bsrmv_matrix_create_herm(&Z, 1, 1, 1, rp, ci, v, BSRMV_COMPLEX_DOUBLE,
                                   BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_mm_write_sym(path, Z), BSRMV_ERR_ARGUMENT);
    bsrmv_matrix_destroy(Z);
    bsrmv_matrix_destroy(H);
    bsrmv_matrix_destroy(Hf);
    bsrmv_matrix_destroy(C);
    bsrmv_matrix_destroy(R);
    printf("files: hermitian (double, float .gz), complex symmetric, real symmetric, complex "
           "general\n");
}

/* CG on an HPD matrix in Hermitian storage; a block below the diagonal
 * and the blockings Hermitian storage does not take are refused. */
static void test_solve_and_errors(void)
{
    tu_shape sh = {30, 30, 4, 3.0, 0.0, -1, 0};
    bsrmv_matrix *S = tu_random_sym(&sh, BSRMV_COMPLEX_DOUBLE, BSRMV_ROW_MAJOR,
                                 BSRMV_SYM_HERMITIAN, 9, true);
    /* diagonal dominance with a real positive diagonal: HPD */
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(S, &rp, &ci, &val));
    for (int64_t i = 0; i < sh.mb; i++)
        TU_CHECK(rp[i + 1] > rp[i] && ci[rp[i]] == i, "block row %lld has no diagonal block",
                 (long long)i);
    const int64_t n = sh.mb * sh.bs;
    ldc *D = dense_of(S);
    for (int64_t i = 0; i < n; i++) {
        long double sum = 0;
        for (int64_t j = 0; j < n; j++)
            sum += cabsl(D[i * n + j]);
        const int64_t bi = i / sh.bs, r = i % sh.bs;
        ((double _Complex *)val)[rp[bi] * 16 + r * 4 + r] = (double)sum + 1;
        D[i * n + i] = (double)sum + 1;
    }
    void *b = tu_random_vector(n, BSRMV_COMPLEX_DOUBLE, 3);
    double _Complex *x = tu_nan_vector(n, BSRMV_COMPLEX_DOUBLE);
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, S));
    bsrmv_solve_options o = {.rtol = 1e-10, .x0_zero = 1};
    bsrmv_solve_report rep;
    TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, S, P, b, x, n, &o, &rep));
    long double rr = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        ldc r = get(b, BSRMV_COMPLEX_DOUBLE, i);
        bb += cabsl(r) * cabsl(r);
        for (int64_t j = 0; j < n; j++)
            r -= D[i * n + j] * x[j];
        rr += cabsl(r) * cabsl(r);
    }
    const double rel = (double)sqrtl(rr / bb);
    printf("cg on hermitian storage: %d iterations, residual %.2e\n", rep.iterations, rel);
    TU_CHECK(rep.converged && rel <= 2e-10, "residual %g", rel);
    free(b);
    free(x);
    free(D);
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(S);

    const int64_t rp2[3] = {0, 1, 2};
    const int32_t ci2[2] = {1, 0};
    double _Complex v2[2] = {1, 1};
    bsrmv_matrix *T = NULL;
    TU_FAILS(bsrmv_matrix_create_herm(&T, 2, 1, 2, rp2, ci2, v2, BSRMV_COMPLEX_DOUBLE,
                                      BSRMV_COL_MAJOR),
             BSRMV_ERR_STRUCTURE);
    TU_CHECK(T == NULL, "handle set on failure");
    bsrmv_coo *c;
    TU_OK(bsrmv_coo_create_complex(&c, 2, 2, 1));
    c->row[0] = 1;
    c->col[0] = 0;
    c->val[0] = 1;
    c->imag[0] = 2;
    TU_FAILS(bsrmv_matrix_from_coo_herm(&T, c, 2, BSRMV_PROMOTE, BSRMV_COMPLEX_DOUBLE,
                                        BSRMV_COL_MAJOR),
             BSRMV_ERR_UNSUPPORTED);
    /* the lower entry (1, 0) = 1+2i stands for (0, 1) = 1-2i; the split
     * diagonal block holds both */
    TU_OK(bsrmv_matrix_from_coo_herm(&T, c, 2, BSRMV_SPLIT, BSRMV_COMPLEX_DOUBLE,
                                     BSRMV_COL_MAJOR));
    ldc *DT = dense_of(T);
    TU_CHECK(DT[1] == 1 - 2 * I && DT[2] == 1 + 2 * I, "from_coo_herm: %Lg%+Lgi, %Lg%+Lgi",
             creall(DT[1]), cimagl(DT[1]), creall(DT[2]), cimagl(DT[2]));
    free(DT);
    bsrmv_matrix_destroy(T);
    bsrmv_coo_destroy(c);
    /* a diagonal entry with an imaginary part: named as such */
    const int64_t rp1[2] = {0, 1};
    const int32_t ci1[1] = {0};
    const double _Complex d1[1] = {1 + 1e-20 * I};
    bsrmv_matrix *D1;
    TU_OK(bsrmv_matrix_create(&D1, 1, 1, 1, 1, rp1, ci1, d1, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR));
    TU_FAILS(bsrmv_matrix_to_herm(&T, D1, 0), BSRMV_ERR_ARGUMENT);
    TU_CHECK(strstr(bsrmv_last_error(), "diagonal entry (0, 0)") &&
                 strstr(bsrmv_last_error(), "imaginary part not 0"),
             "%s", bsrmv_last_error());
    TU_OK(bsrmv_matrix_to_sym(&T, D1, 0));
    bsrmv_matrix_destroy(T);
    bsrmv_matrix_destroy(D1);
    printf("errors: checked\n");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/bsrmv_herm_XXXXXX");
    TU_CHECK(mkdtemp(dir), "mkdtemp");
    test_products();
    test_files();
    test_solve_and_errors();
    const char *files[] = {"h.mtx", "hf.mtx.gz", "c.mtx", "r.mtx", "g.mtx"};
    for (int i = 0; i < 5; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    printf("test_herm: all passed\n");
    return 0;
}
