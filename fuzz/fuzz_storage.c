/* The storage and value kinds fuzz_bsr does not reach, each against a
 * dense long-double product of the matrix its arrays stand for:
 *   kind 0: full storage with a 32-bit or 64-bit row_ptr;
 *   kind 1, 2: symmetric / Hermitian storage from upper arrays (a block
 *     below the diagonal refused);
 *   kind 3: a full matrix, often made symmetric or Hermitian here and
 *     sometimes broken by one entry, through bsrmv_matrix_to_sym/_to_herm
 *     (accepted exactly when a plain check of the dense matrix says so),
 *     then back with bsrmv_matrix_from_sym.
 * Every type (complex ones with complex scalars and OP_C), float values
 * with double vectors, and SpMM (k vectors across the 16-vector pass, both
 * layouts, padded leading dimensions left untouched) of every type in
 * either storage. */
#include "fuzz_common.h"
#include "fuzz_values.h"

#include <omp.h>
#include <stdio.h>

#define MAXB 12 /* block rows and columns */
#define MAXNNZB 64

typedef struct arrays {
    int64_t mb, nb, nnzb;
    int64_t rp[MAXB + 1];
    int32_t ci[MAXB * MAXB];
    void *val;
} arrays;

typedef struct ctx {
    int bs, cplx;
    bsrmv_type type;
    bsrmv_order order;
} ctx;

static lc fz_value(fz *f, const ctx *c)
{
    double re = fz_small(f);
    return c->cplx ? re + I * (long double)fz_small(f) : re;
}

/* Entry (r, s) of block k, by the block order. */
static int64_t at(const ctx *c, int64_t k, int r, int s)
{
    int64_t bs = c->bs;
    return k * bs * bs + (c->order == BSRMV_COL_MAJOR ? s * bs + r : r * bs + s);
}

static int valid_bsr(const arrays *a, int upper)
{
    if (a->rp[0] != 0 || a->rp[a->mb] != a->nnzb)
        return 0;
    for (int64_t i = 0; i < a->mb; i++) {
        if (a->rp[i + 1] < a->rp[i] || a->rp[i + 1] > a->nnzb)
            return 0;
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
            if (a->ci[k] < (upper ? i : 0) || a->ci[k] >= a->nb ||
                (k > a->rp[i] && a->ci[k] <= a->ci[k - 1]))
                return 0;
    }
    return 1;
}

/* The dense matrix of valid arrays; sym 1 or 2 adds the mirror of every
 * block above the diagonal (transposed, or conjugate transposed). */
static lc *dense(const ctx *c, const arrays *a, int sym)
{
    const int64_t n = a->nb * c->bs;
    lc *D = calloc((size_t)(a->mb * c->bs * n) + 1, sizeof *D);
    for (int64_t i = 0; i < a->mb; i++)
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
            for (int r = 0; r < c->bs; r++)
                for (int s = 0; s < c->bs; s++) {
                    lc v = getv(c->type, a->val, at(c, k, r, s));
                    int64_t row = i * c->bs + r, col = (int64_t)a->ci[k] * c->bs + s;
                    D[row * n + col] = v;
                    if (sym && a->ci[k] != i)
                        D[col * n + row] = sym == 2 ? conjl(v) : v;
                }
    return D;
}

/* 1 when D equals its transpose (herm: its conjugate transpose) within
 * |d - d'| <= tol * max(|d|, |d'|). */
static int plain_symmetric(const lc *D, int64_t n, int herm, double tol)
{
    for (int64_t r = 0; r < n; r++)
        for (int64_t s = r; s < n; s++) {
            lc a = D[r * n + s], b = herm ? conjl(D[s * n + r]) : D[s * n + r];
            long double m = fmaxl(cabsl(a), cabsl(b));
            if (!(cabsl(a - b) <= tol * m))
                return 0;
        }
    return 1;
}

/* The full arrays of upper arrays u: every stored block and the mirror of
 * every block above the diagonal. */
static void expand(const ctx *c, const arrays *u, int herm, arrays *f)
{
    const int64_t bs2 = (int64_t)c->bs * c->bs;
    f->mb = f->nb = u->nb;
    f->nnzb = 0;
    f->rp[0] = 0;
    for (int64_t i = 0; i < u->nb; i++) {
        for (int64_t j = 0; j < i; j++) /* mirrors: columns below i, ascending */
            for (int64_t k = u->rp[j]; k < u->rp[j + 1]; k++)
                if (u->ci[k] == i) {
                    for (int r = 0; r < c->bs; r++)
                        for (int s = 0; s < c->bs; s++) {
                            lc v = getv(c->type, u->val, at(c, k, s, r));
                            setv(c->type, f->val, at(c, f->nnzb, r, s), herm ? conjl(v) : v);
                        }
                    f->ci[f->nnzb++] = (int32_t)j;
                }
        for (int64_t k = u->rp[i]; k < u->rp[i + 1]; k++) {
            memcpy((char *)f->val + (size_t)(f->nnzb * bs2) * bsrmv_type_size(c->type),
                   (char *)u->val + (size_t)(k * bs2) * bsrmv_type_size(c->type),
                   (size_t)bs2 * bsrmv_type_size(c->type));
            f->ci[f->nnzb++] = u->ci[k];
        }
        f->rp[i + 1] = f->nnzb;
    }
}

/* A call that must succeed; the message goes with the crash report. */
static void must(bsrmv_status s)
{
    if (s != BSRMV_SUCCESS) {
        fprintf(stderr, "status %d: %s\n", (int)s, bsrmv_last_error());
        abort();
    }
}

static void check_fails(bsrmv_status s, const bsrmv_matrix *M)
{
    if (s == BSRMV_SUCCESS || M || !*bsrmv_last_error())
        abort();
}

/* The create and the wrap of the same arrays: both made when they are
 * valid (1), both refused with a message when not (0). */
static int made(int valid, bsrmv_status sc, const bsrmv_matrix *A, bsrmv_status sw,
                const bsrmv_matrix *W)
{
    if (!valid) {
        check_fails(sc, A);
        check_fails(sw, W);
        return 0;
    }
    must(sc);
    must(sw);
    return 1;
}

/* y = alpha*op(M)*x + beta*y, and Y = alpha*op(M)*X + beta*Y for k
 * vectors, against the dense D (m x n) of
 * the matrix M stands for.  In symmetric storage (sym 1) OP_T is OP_N
 * and OP_C conj(D); in Hermitian storage (sym 2) OP_C is OP_N and OP_T
 * conj(D), as documented: with diagonal blocks as stored, which need not
 * be symmetric, these are not D's transposes. */
static void check_products(fz *f, const ctx *c, const bsrmv_matrix *M, const lc *D, int64_t m,
                           int64_t n, int sym, int64_t terms)
{
    bsrmv_matrix_info info;
    if (bsrmv_matrix_get_info(M, &info))
        abort();
    ctx vc = *c; /* the vectors' type: double for float values with double vectors */
    vc.type = info.vector_type;
    const int vfloat = vc.type == BSRMV_FLOAT || vc.type == BSRMV_COMPLEX_FLOAT;
    const size_t vs = bsrmv_type_size(vc.type);
    const unsigned mode = fz_u8(f);
    const int real_scalars = !c->cplx || (mode & 2); /* bsrmv_spmv, else _scalars */
    lc alpha = fz_value(f, c), beta = (mode & 1) ? 0 : fz_value(f, c);
    if (real_scalars) {
        alpha = creall(alpha);
        beta = creall(beta);
    }
    if (mode & 4)
        alpha = 0;
    if (vfloat) { /* the scalars are rounded to the vectors' type first */
        alpha = (float)creall(alpha) + I * (long double)(float)cimagl(alpha);
        beta = (float)creall(beta) + I * (long double)(float)cimagl(beta);
    }
    const int k = 1 + (int)(fz_u8(f) % 20);
    const bsrmv_layout lay = (bsrmv_layout)(mode >> 3 & 1);
    for (int op = 0; op < 3; op++) {
        const int64_t nx = op ? m : n, ny = op ? n : m;
        lc *X = calloc((size_t)(nx * k) + 1, sizeof *X);
        lc *Y0 = calloc((size_t)(ny * k) + 1, sizeof *Y0);
        lc *W = calloc((size_t)(ny * k) + 1, sizeof *W);
        long double *mag = calloc((size_t)(ny * k) + 1, sizeof *mag);
        for (int64_t i = 0; i < nx * k; i++)
            X[i] = fz_value(f, c);
        for (int64_t i = 0; i < ny * k; i++)
            Y0[i] = (mode & 1) ? NAN : fz_value(f, c);
        for (int j = 0; j < k; j++)
            for (int64_t i = 0; i < ny; i++) {
                lc w = 0;
                long double a_x = 0;
                for (int64_t l = 0; l < nx; l++) {
                    lc a;
                    if (sym)
                        a = (sym == 1 ? op == 2 : op == 1) ? conjl(D[i * n + l]) : D[i * n + l];
                    else
                        a = op == 0 ? D[i * n + l] : op == 1 ? D[l * n + i] : conjl(D[l * n + i]);
                    w += a * X[j * nx + l];
                    a_x += cabsl(a * X[j * nx + l]);
                }
                lc y0 = Y0[j * ny + i];
                W[j * ny + i] = alpha * w + (beta != 0 ? beta * y0 : 0);
                mag[j * ny + i] = cabsl(alpha) * a_x + (beta != 0 ? cabsl(beta * y0) : 0);
            }
        /* SpMV on the first vector. */
        void *x = malloc((size_t)nx * vs + 1), *y = malloc((size_t)ny * vs + 1);
        for (int64_t i = 0; i < nx; i++)
            setv(vc.type, x, i, X[i]);
        for (int64_t i = 0; i < ny; i++)
            setv(vc.type, y, i, Y0[i]);
        bsrmv_status s;
        double sa[2] = {(double)creall(alpha), (double)cimagl(alpha)};
        double sb[2] = {(double)creall(beta), (double)cimagl(beta)};
        float fa[2] = {(float)sa[0], (float)sa[1]}, fb[2] = {(float)sb[0], (float)sb[1]};
        void *pa = vfloat ? (void *)fa : (void *)sa, *pb = vfloat ? (void *)fb : (void *)sb;
        if (real_scalars)
            s = bsrmv_spmv((bsrmv_op)op, sa[0], M, x, nx, sb[0], y, ny);
        else
            s = bsrmv_spmv_scalars((bsrmv_op)op, pa, M, x, nx, pb, y, ny);
        must(s);
        for (int64_t i = 0; i < ny; i++) {
            lc got = getv(vc.type, y, i);
            fz_close((double)creall(got), creall(W[i]), mag[i], terms, vfloat);
            fz_close((double)cimagl(got), cimagl(W[i]), mag[i], terms, vfloat);
        }
        free(x);
        free(y);
        /* SpMM on all k, with padded leading dimensions that must stay as
         * they are. */
        {
            const int64_t pad = fz_u8(f) % 3;
            const int64_t ldx = (lay == BSRMV_LAYOUT_COL ? (nx ? nx : 1) : k) + pad;
            const int64_t ldy = (lay == BSRMV_LAYOUT_COL ? (ny ? ny : 1) : k) + pad;
            const int64_t lenx = lay == BSRMV_LAYOUT_COL ? ldx * k : nx * ldx;
            const int64_t leny = lay == BSRMV_LAYOUT_COL ? ldy * k : ny * ldy;
            void *X2 = malloc((size_t)lenx * vs + 1), *Y2 = malloc((size_t)leny * vs + 1);
            for (int64_t i = 0; i < lenx; i++)
                setv(vc.type, X2, i, NAN); /* padding: never read */
            for (int64_t i = 0; i < leny; i++)
                setv(vc.type, Y2, i, 3.25); /* padding: never written */
            for (int j = 0; j < k; j++) {
                for (int64_t i = 0; i < nx; i++)
                    setv(vc.type, X2, lay == BSRMV_LAYOUT_COL ? i + j * ldx : i * ldx + j,
                         X[j * nx + i]);
                for (int64_t i = 0; i < ny; i++)
                    setv(vc.type, Y2, lay == BSRMV_LAYOUT_COL ? i + j * ldy : i * ldy + j,
                         Y0[j * ny + i]);
            }
            must(real_scalars ? bsrmv_spmm((bsrmv_op)op, sa[0], M, k, X2, ldx, sb[0], Y2, ldy, lay)
                              : bsrmv_spmm_scalars((bsrmv_op)op, pa, M, k, X2, ldx, pb, Y2, ldy,
                                                   lay));
            for (int64_t i = 0; i < leny; i++) {
                int64_t row = lay == BSRMV_LAYOUT_COL ? i % ldy : i / ldy;
                int64_t col = lay == BSRMV_LAYOUT_COL ? i / ldy : i % ldy;
                const lc got = getv(vc.type, Y2, i);
                if (row >= ny || col >= k) {
                    if (creall(got) != 3.25 || cimagl(got) != 0)
                        abort();
                } else {
                    const lc want = W[col * ny + row];
                    fz_close((double)creall(got), creall(want), mag[col * ny + row], terms, vfloat);
                    fz_close((double)cimagl(got), cimagl(want), mag[col * ny + row], terms, vfloat);
                }
            }
            free(X2);
            free(Y2);
        }
        free(X);
        free(Y0);
        free(W);
        free(mag);
    }
}

/* Float values may get double vectors; other pairs are refused. */
static void vector_type(fz *f, const ctx *c, bsrmv_matrix *M)
{
    const bsrmv_type want = (bsrmv_type)(fz_u8(f) % 5);
    if (want > BSRMV_COMPLEX_DOUBLE || want == c->type)
        return;
    bsrmv_status s = bsrmv_matrix_set_vector_type(M, want);
    int ok = c->type == BSRMV_FLOAT && want == BSRMV_DOUBLE;
    if (ok ? s != BSRMV_SUCCESS : s != BSRMV_ERR_UNSUPPORTED)
        abort();
}

/* The stored arrays of M (64-bit row_ptr), for the dense reference. */
static void arrays_of(const bsrmv_matrix *M, arrays *a)
{
    bsrmv_matrix_info info;
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    if (bsrmv_matrix_get_info(M, &info) || bsrmv_matrix_arrays(M, &rp, &ci, &val) ||
        info.mb > MAXB || info.nnzb > MAXB * MAXB)
        abort();
    a->mb = info.mb;
    a->nb = info.nb;
    a->nnzb = info.nnzb;
    memcpy(a->rp, rp, (size_t)(a->mb + 1) * sizeof *rp);
    memcpy(a->ci, ci, (size_t)a->nnzb * sizeof *ci);
    a->val = (void *)val;
}

/* A matrix in symmetric storage: its products (SpMV; SpMM of real
 * values), its full form's, and the refusal of a second to_sym. */
static void check_sym(fz *f, const ctx *c, bsrmv_matrix *S, int herm, int64_t terms)
{
    bsrmv_matrix_info info;
    if (bsrmv_matrix_get_info(S, &info) || info.symmetric != (herm && c->cplx ? 2 : 1))
        abort();
    arrays a;
    arrays_of(S, &a);
    const int64_t n = a.nb * c->bs;
    lc *D = dense(c, &a, herm && c->cplx ? 2 : 1);
    bsrmv_matrix *B = NULL;
    if (bsrmv_matrix_to_sym(&B, S, 0) != BSRMV_ERR_UNSUPPORTED || B)
        abort();
    bsrmv_matrix *F = NULL;
    must(bsrmv_matrix_from_sym(&F, S));
    vector_type(f, c, S);
    check_products(f, c, S, D, n, n, herm && c->cplx ? 2 : 1, terms);
    check_products(f, c, F, D, n, n, 0, terms);
    bsrmv_matrix_destroy(F);
    free(D);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 16};
    fz f = {data, size};
    omp_set_num_threads(1 + (int)(fz_u8(&f) % 3));
    const unsigned kind = fz_u8(&f) % 4;
    ctx c;
    c.bs = sizes[fz_u8(&f) % 12];
    c.type = (bsrmv_type)(fz_u8(&f) % 4);
    c.cplx = c.type >= BSRMV_COMPLEX_FLOAT;
    c.order = (bsrmv_order)(fz_u8(&f) & 1);
    const unsigned mode = fz_u8(&f);
    const int herm = kind == 2 || (kind == 3 && (mode & 2));
    const int mirror = kind == 3 && (mode & 16);
    const int upper = kind == 1 || kind == 2 || mirror;
    const int64_t bs2 = (int64_t)c.bs * c.bs;
    const size_t ts = bsrmv_type_size(c.type);

    /* The arrays: raw bytes (mode bit 0, full and upper kinds), else a
     * column mask per block row; upper kinds keep the columns from the
     * diagonal on unless mode bit 1 (lower blocks, to be refused). */
    arrays a = {0};
    a.nb = 1 + fz_u8(&f) % MAXB;
    a.mb = kind == 0 || (kind == 3 && !mirror && (mode & 32)) ? fz_u8(&f) % (MAXB + 1) : a.nb;
    if ((mode & 1) && kind != 3) {
        a.nnzb = fz_u8(&f) % (MAXNNZB + 1);
        for (int64_t i = 0; i < a.mb; i++)
            a.rp[i + 1] = (int64_t)(int8_t)fz_u8(&f);
        for (int64_t k = 0; k < a.nnzb; k++)
            a.ci[k] = (int32_t)(int8_t)fz_u8(&f);
    } else {
        for (int64_t i = 0; i < a.mb; i++) {
            unsigned mask = (fz_u8(&f) | fz_u8(&f) << 8) & ((1u << a.nb) - 1);
            if (upper && !(kind != 3 && (mode & 2)))
                mask &= ~((1u << i) - 1);
            for (int32_t j = 0; j < a.nb; j++)
                if ((mask >> j & 1) && a.nnzb < MAXNNZB)
                    a.ci[a.nnzb++] = j;
            a.rp[i + 1] = a.nnzb;
        }
    }
    const int64_t nval = a.nnzb * bs2;
    a.val = malloc((size_t)(2 * nval) * ts + 1); /* room for the mirrors of kind 3 */
    for (int64_t k = 0; k < nval; k++)
        setv(c.type, a.val, k, fz_value(&f, &c));
    const int valid = valid_bsr(&a, upper);
    bsrmv_matrix *A = NULL, *W = NULL;

    if (kind == 0) { /* full storage, 32- or 64-bit row_ptr */
        int32_t rp32[MAXB + 1];
        for (int64_t i = 0; i <= a.mb; i++)
            rp32[i] = (int32_t)a.rp[i];
        bsrmv_status sc, sw;
        if (mode & 4) {
            sc = bsrmv_matrix_create_i32(&A, a.mb, a.nb, c.bs, a.nnzb, rp32, a.ci, a.val, c.type,
                                         c.order);
            sw = bsrmv_matrix_wrap_i32(&W, a.mb, a.nb, c.bs, a.nnzb, rp32, a.ci, a.val, c.type,
                                       c.order);
        } else {
            sc = bsrmv_matrix_create(&A, a.mb, a.nb, c.bs, a.nnzb, a.rp, a.ci, a.val, c.type,
                                     c.order);
            sw = bsrmv_matrix_wrap(&W, a.mb, a.nb, c.bs, a.nnzb, a.rp, a.ci, a.val, c.type,
                                   c.order);
        }
        if (made(valid, sc, A, sw, W)) {
            lc *D = dense(&c, &a, 0);
            vector_type(&f, &c, W);
            check_products(&f, &c, A, D, a.mb * c.bs, a.nb * c.bs, 0,
                           c.bs * (a.nnzb + 1));
            check_products(&f, &c, W, D, a.mb * c.bs, a.nb * c.bs, 0,
                           c.bs * (a.nnzb + 1));
            free(D);
        }
    } else if (kind != 3) { /* symmetric or Hermitian storage from upper arrays */
        bsrmv_status sc, sw;
        if (herm) {
            sc = bsrmv_matrix_create_herm(&A, a.nb, c.bs, a.nnzb, a.rp, a.ci, a.val, c.type,
                                          c.order);
            sw = bsrmv_matrix_wrap_herm(&W, a.nb, c.bs, a.nnzb, a.rp, a.ci, a.val, c.type, c.order);
        } else {
            sc = bsrmv_matrix_create_sym(&A, a.nb, c.bs, a.nnzb, a.rp, a.ci, a.val, c.type,
                                         c.order);
            sw = bsrmv_matrix_wrap_sym(&W, a.nb, c.bs, a.nnzb, a.rp, a.ci, a.val, c.type, c.order);
        }
        if (made(valid, sc, A, sw, W)) {
            check_sym(&f, &c, A, herm, c.bs * (2 * a.nnzb + 1));
            check_sym(&f, &c, W, herm, c.bs * (2 * a.nnzb + 1));
        }
    } else { /* a full matrix through bsrmv_matrix_to_sym / _to_herm */
        const int hc = herm && c.cplx;
        arrays full = a;
        if (mirror) {
            if (mode & 64) /* symmetric (Hermitian) diagonal blocks */
                for (int64_t i = 0; i < a.nb; i++)
                    for (int64_t k = a.rp[i]; k < a.rp[i + 1]; k++)
                        if (a.ci[k] == i)
                            for (int r = 0; r < c.bs; r++)
                                for (int s = r; s < c.bs; s++) {
                                    lc v = getv(c.type, a.val, at(&c, k, r, s));
                                    if (r == s && hc)
                                        v = creall(v);
                                    setv(c.type, a.val, at(&c, k, r, s), v);
                                    setv(c.type, a.val, at(&c, k, s, r), hc ? conjl(v) : v);
                                }
            full.val = malloc((size_t)(2 * nval) * ts + 1);
            expand(&c, &a, hc, &full);
            if ((mode & 128) && full.nnzb > 0) { /* one entry off */
                int64_t e = (int64_t)(fz_u8(&f) << 8 | fz_u8(&f)) % (full.nnzb * bs2);
                lc v = getv(c.type, full.val, e);
                setv(c.type, full.val, e, v + ((mode & 4) && c.cplx ? I / 16.0L : 1 / 16.0L));
            }
        }
        must(bsrmv_matrix_create(&A, full.mb, full.nb, c.bs, full.nnzb, full.rp, full.ci,
                                 full.val, c.type, c.order));
        const double tol = !c.cplx && (mode & 8) ? (fz_u8(&f) % 8) / 8.0 : 0;
        bsrmv_matrix *S = NULL;
        bsrmv_status s = herm ? bsrmv_matrix_to_herm(&S, A, tol) : bsrmv_matrix_to_sym(&S, A, tol);
        if (full.mb != full.nb) {
            if (s != BSRMV_ERR_DIMENSION || S)
                abort();
        } else {
            lc *D = dense(&c, &full, 0);
            const int64_t n = full.nb * c.bs;
            int want = plain_symmetric(D, n, hc, tol);
            if (!want) {
                check_fails(s, S);
            } else {
                must(s);
                if (tol == 0) { /* then S stands for A exactly */
                    arrays u;
                    arrays_of(S, &u);
                    lc *DS = dense(&c, &u, hc ? 2 : 1);
                    for (int64_t i = 0; i < n * n; i++)
                        if (DS[i] != D[i])
                            abort();
                    free(DS);
                }
                check_sym(&f, &c, S, herm, c.bs * (2 * full.nnzb + 1));
                bsrmv_matrix_destroy(S);
            }
            bsrmv_matrix *F = NULL;
            if (bsrmv_matrix_from_sym(&F, A) != BSRMV_ERR_ARGUMENT || F)
                abort();
            free(D);
        }
        if (full.val != a.val)
            free(full.val);
    }
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(W);
    free(a.val);
    return 0;
}
