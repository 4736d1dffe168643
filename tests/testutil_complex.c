/* Complex helpers of the tests (testutil_complex.h). */
#include "testutil_complex.h"

#include <math.h>
#include <string.h>

bool tu_is_double(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_DOUBLE || t == BSRMV_DOUBLE;
}

/* Value i of a vector of type t. */
tu_ldc tu_cget(const void *v, bsrmv_type t, int64_t i)
{
    const int p = tu_parts(t);
    long double re = tu_is_double(t) ? ((const double *)v)[i * p] : ((const float *)v)[i * p];
    long double im = p == 1 ? 0.0L
                     : tu_is_double(t) ? ((const double *)v)[i * p + 1]
                                    : ((const float *)v)[i * p + 1];
    return re + im * (tu_ldc)I;
}

tu_ldc tu_put_scalar(tu_scalar *b, bsrmv_type t, double _Complex v)
{
    switch (t) {
    case BSRMV_FLOAT: b->f = (float)creal(v); return b->f;
    case BSRMV_DOUBLE: b->d = creal(v); return b->d;
    case BSRMV_COMPLEX_FLOAT: b->c = (float _Complex)v; return b->c;
    case BSRMV_COMPLEX_DOUBLE: b->z = v; return b->z;
    }
    return 0;
}

const char *tu_op_name(bsrmv_op op)
{
    return op == BSRMV_OP_N ? "A*x" : op == BSRMV_OP_T ? "A^T*x" : "A^H*x";
}

/* |re| + |im| >= |z|: a bound of the modulus without a square root. */
static long double l1(tu_ldc z)
{
    return fabsl(creall(z)) + fabsl(cimagl(z));
}

/* y = alpha*op(A)*x + beta*y0 in long double complex, and per entry a
 * bound of the magnitude |alpha| sum |a||x| + |beta||y0| and the number of
 * terms. */
static void reference(const bsrmv_matrix *A, bsrmv_op op, tu_ldc alpha, const void *x, tu_ldc beta,
                      const void *y0, tu_ldc *ref, long double *mag, int64_t *terms)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int32_t *ci;
    const void *val;
    int64_t *rp = tu_row_ptr64(A, &ci, &val);
    const int64_t bs = in.bs;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    for (int64_t j = 0; j < ny; j++) {
        ref[j] = 0;
        mag[j] = 0;
        terms[j] = 0;
    }
    for (int64_t i = 0; i < in.mb; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
            for (int64_t r = 0; r < bs; r++)
                for (int64_t c = 0; c < bs; c++) {
                    const int64_t at =
                        k * bs * bs + (in.order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                    tu_ldc a = tu_cget(val, in.type, at);
                    if (op == BSRMV_OP_C)
                        a = conjl(a);
                    const int64_t row = i * bs + r, col = (int64_t)ci[k] * bs + c;
                    const int64_t out = op == BSRMV_OP_N ? row : col;
                    const tu_ldc xv = tu_cget(x, in.vector_type, op == BSRMV_OP_N ? col : row);
                    ref[out] += a * xv;
                    mag[out] += l1(a) * l1(xv);
                    terms[out]++;
                }
    for (int64_t j = 0; j < ny; j++) {
        ref[j] *= alpha;
        mag[j] *= l1(alpha);
        if (beta != 0) {
            const tu_ldc yv = tu_cget(y0, in.vector_type, j);
            ref[j] += beta * yv;
            mag[j] += l1(beta) * l1(yv);
        }
    }
    free(rp);
}

/* y against the reference: a complex product and sum per term, so twice
 * the real bound of tu_check_result. */
void tu_check_complex(const char *what, const bsrmv_matrix *A, bsrmv_op op, tu_ldc alpha,
                  const void *x, tu_ldc beta, const void *y0, const void *y)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    tu_ldc *ref = malloc((size_t)(ny + 1) * sizeof *ref);
    long double *mag = malloc((size_t)(ny + 1) * sizeof *mag);
    int64_t *terms = malloc((size_t)(ny + 1) * sizeof *terms);
    TU_CHECK(ref && mag && terms, "out of memory");
    reference(A, op, alpha, x, beta, y0, ref, mag, terms);
    const double eps = tu_is_double(in.vector_type) ? 0x1p-53 : 0x1p-24;
    for (int64_t j = 0; j < ny; j++) {
        const tu_ldc got = tu_cget(y, in.vector_type, j);
        const long double err = cabsl(got - ref[j]);
        long double tol = 4.0L * (long double)(terms[j] + 3) * eps * mag[j];
        if (!tu_is_double(in.vector_type))
            tol += 2 * eps * cabsl(ref[j]) + 1e-37L;
        if (!(err <= tol)) {
            fprintf(stderr,
                    "FAIL %s: %s bs=%d %s %s %s alpha=(%Lg,%Lg) beta=(%Lg,%Lg) mb=%lld "
                    "nb=%lld nnzb=%lld: y[%lld] = (%.17Lg, %.17Lg), reference (%.17Lg, "
                    "%.17Lg) (error %.3Lg > bound %.3Lg)\n",
                    what, tu_op_name(op), in.bs, tu_is_double(in.type) ? "double" : "float",
                    tu_parts(in.type) == 2 ? "complex" : "real",
                    in.order == BSRMV_COL_MAJOR ? "col-major" : "row-major", creall(alpha),
                    cimagl(alpha), creall(beta), cimagl(beta), (long long)in.mb,
                    (long long)in.nb, (long long)in.nnzb, (long long)j, creall(got),
                    cimagl(got), creall(ref[j]), cimagl(ref[j]), err, tol);
            exit(1);
        }
    }
    free(ref);
    free(mag);
    free(terms);
}

/* v[i] = x, rounded to t (real types: the real part). */
static void cput(void *v, bsrmv_type t, int64_t i, tu_ldc x)
{
    switch (t) {
    case BSRMV_COMPLEX_DOUBLE: ((double _Complex *)v)[i] = (double _Complex)x; break;
    case BSRMV_COMPLEX_FLOAT: ((float _Complex *)v)[i] = (float _Complex)x; break;
    case BSRMV_DOUBLE: ((double *)v)[i] = (double)creall(x); break;
    case BSRMV_FLOAT: ((float *)v)[i] = (float)creall(x); break;
    }
}

bsrmv_matrix *tu_random_sym(const tu_shape *sh, bsrmv_type t, bsrmv_order order, int kind,
                            uint64_t seed, bool all_diag)
{
    bsrmv_matrix *R = tu_random_bsr(sh, t, order, seed);
    const int32_t *ci;
    const void *val;
    int64_t *rp = tu_row_ptr64(R, &ci, &val);
    const int64_t mb = sh->mb, bs = sh->bs, bs2 = bs * bs;
    const size_t vs = bsrmv_type_size(t);
    int64_t *urp = malloc((size_t)(mb + 1) * sizeof *urp);
    int32_t *uci = malloc((size_t)(rp[mb] + mb + 1) * sizeof *uci);
    char *uv = calloc((size_t)((rp[mb] + mb + 1) * bs2), vs);
    TU_CHECK(urp && uci && uv, "out of memory");
    int64_t n = 0;
    urp[0] = 0;
    for (int64_t i = 0; i < mb; i++) {
        int64_t first = rp[i];
        while (first < rp[i + 1] && ci[first] < i)
            first++;
        if (all_diag && (first == rp[i + 1] || ci[first] != i))
            uci[n++] = (int32_t)i;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            if (ci[k] < i)
                continue;
            uci[n] = ci[k];
            memcpy(uv + (size_t)(n * bs2) * vs, (const char *)val + (size_t)(k * bs2) * vs,
                   (size_t)bs2 * vs);
            if (ci[k] == i) {
                void *b = uv + (size_t)(n * bs2) * vs;
                for (int64_t r = 0; r < bs; r++)
                    for (int64_t c = r; c < bs; c++) {
                        const int64_t rc = order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c;
                        const int64_t cr = order == BSRMV_COL_MAJOR ? r * bs + c : c * bs + r;
                        const tu_ldc a = tu_cget(b, t, rc);
                        if (c == r && kind == BSRMV_SYM_HERMITIAN)
                            cput(b, t, rc, creall(a));
                        else
                            cput(b, t, cr, kind == BSRMV_SYM_HERMITIAN ? conjl(a) : a);
                    }
            }
            n++;
        }
        urp[i + 1] = n;
    }
    bsrmv_matrix *S;
    TU_OK(kind == BSRMV_SYM_HERMITIAN
              ? bsrmv_matrix_create_herm(&S, mb, (int)bs, n, urp, uci, uv, t, order)
              : bsrmv_matrix_create_sym(&S, mb, (int)bs, n, urp, uci, uv, t, order));
    free(rp);
    free(urp);
    free(uci);
    free(uv);
    bsrmv_matrix_destroy(R);
    return S;
}

/* uniform in [-1, 1) */
static double uni(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) * 0x1p-52 - 1.0;
}

tu_csys tu_csys_make(int64_t mb, int bs, bsrmv_type type, bsrmv_order order, enum tu_ckind k,
                     uint64_t seed)
{
    tu_csys S = {.mb = mb, .n = mb * bs, .bs = bs, .type = type};
    const int64_t n = S.n;
    char *pat = calloc((size_t)(mb * mb), 1);
    tu_ldc *D = calloc((size_t)(n * n), sizeof *D);
    TU_CHECK(pat && D, "out of memory");
    uint64_t s = seed;
    for (int64_t i = 0; i < mb; i++) {
        pat[i * mb + i] = 1;
        if (i + 1 < mb)
            pat[i * mb + i + 1] = pat[(i + 1) * mb + i] = 1;
        const int64_t j = (int64_t)((uni(&s) + 1) * 0.5 * (double)mb) % mb;
        pat[i * mb + j] = pat[j * mb + i] = 1;
    }
    for (int64_t bi = 0; bi < mb; bi++)
        for (int64_t bj = 0; bj < mb; bj++) {
            if (!pat[bi * mb + bj] || (k != TU_NONHERM && bj < bi))
                continue;
            for (int r = 0; r < bs; r++)
                for (int c = 0; c < bs; c++) {
                    const int64_t i = bi * bs + r, j = bj * bs + c;
                    const tu_ldc v = uni(&s) + uni(&s) * (tu_ldc)I;
                    if (k == TU_NONHERM) {
                        D[i * n + j] = v;
                    } else if (i <= j) {
                        D[i * n + j] += v;
                        D[j * n + i] += conjl(v);
                    }
                }
        }
    for (int64_t i = 0; i < n; i++) {
        long double sum = 0;
        for (int64_t j = 0; j < n; j++)
            sum += cabsl(D[i * n + j]);
        const long double shift = sum + 1;
        if (k == TU_NONHERM)
            D[i * n + i] += shift * (1 + 0.5L * (tu_ldc)I);
        else
            D[i * n + i] = creall(D[i * n + i]) + (k == TU_INDEFINITE && i % 2 ? -shift : shift);
    }
    /* the BSR arrays of the pattern, values rounded to the type */
    int64_t nnzb = 0;
    for (int64_t e = 0; e < mb * mb; e++)
        nnzb += pat[e];
    const int64_t bs2 = (int64_t)bs * bs;
    int64_t *rp = malloc((size_t)(mb + 1) * sizeof *rp);
    int32_t *ci = malloc((size_t)nnzb * sizeof *ci);
    const int dbl = type == BSRMV_COMPLEX_DOUBLE;
    void *val = malloc((size_t)(nnzb * bs2) * (dbl ? sizeof(double _Complex) : sizeof(float _Complex)));
    TU_CHECK(rp && ci && val, "out of memory");
    int64_t kb = 0;
    rp[0] = 0;
    for (int64_t bi = 0; bi < mb; bi++) {
        for (int64_t bj = 0; bj < mb; bj++) {
            if (!pat[bi * mb + bj])
                continue;
            ci[kb] = (int32_t)bj;
            for (int r = 0; r < bs; r++)
                for (int c = 0; c < bs; c++) {
                    const int64_t at = kb * bs2 + (order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                    tu_ldc *d = &D[(bi * bs + r) * n + bj * bs + c];
                    if (dbl) {
                        ((double _Complex *)val)[at] = (double _Complex)*d;
                        *d = ((double _Complex *)val)[at];
                    } else {
                        ((float _Complex *)val)[at] = (float _Complex)*d;
                        *d = ((float _Complex *)val)[at];
                    }
                }
            kb++;
        }
        rp[bi + 1] = kb;
    }
    TU_OK(bsrmv_matrix_create(&S.A, mb, mb, bs, nnzb, rp, ci, val, type, order));
    free(pat);
    free(rp);
    free(ci);
    free(val);
    S.dense = D;
    return S;
}

void tu_csys_drop(tu_csys *S)
{
    bsrmv_matrix_destroy(S->A);
    free(S->dense);
}

double tu_csys_residual(const tu_csys *S, const void *b, const void *x)
{
    long double rr = 0, bb = 0;
    for (int64_t i = 0; i < S->n; i++) {
        tu_ldc r = tu_cget(b, S->type, i);
        bb += creall(r * conjl(r));
        for (int64_t j = 0; j < S->n; j++)
            r -= S->dense[i * S->n + j] * tu_cget(x, S->type, j);
        rr += creall(r * conjl(r));
    }
    return (double)sqrtl(rr / bb);
}
