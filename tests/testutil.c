#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unif(uint64_t *s) { return (double)(next(s) >> 11) * 0x1.0p-53; }

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* len distinct sorted values from [0, nb). */
static int64_t pick_columns(int64_t nb, int64_t len, int32_t *out, uint64_t *rng)
{
    if (len > nb)
        len = nb;
    if (len * 4 > nb) { /* dense enough: selection sampling */
        int64_t need = len, k = 0;
        for (int64_t j = 0; j < nb && need > 0; j++)
            if (unif(rng) * (double)(nb - j) < (double)need) {
                out[k++] = (int32_t)j;
                need--;
            }
        return k;
    }
    for (int64_t k = 0; k < len; k++)
        out[k] = (int32_t)(next(rng) % (uint64_t)nb);
    qsort(out, (size_t)len, sizeof *out, cmp_i32);
    int64_t u = 0;
    for (int64_t k = 0; k < len; k++)
        if (u == 0 || out[k] != out[u - 1])
            out[u++] = out[k];
    return u;
}

bsrmv_matrix *tu_random_bsr(const tu_shape *sh, bsrmv_type type, bsrmv_order order,
                            uint64_t seed)
{
    uint64_t rng = seed * 0x2545F4914F6CDD1Dull + 1;
    int64_t cap = 0;
    int64_t *lens = malloc((size_t)(sh->mb + 1) * sizeof *lens);
    TU_CHECK(lens, "out of memory");
    for (int64_t i = 0; i < sh->mb; i++) {
        int64_t len = (int64_t)(unif(&rng) * 2.0 * sh->mean_len + 0.5);
        if (unif(&rng) < sh->empty_frac)
            len = 0;
        if (i == sh->long_row)
            len = sh->long_len;
        if (len > sh->nb)
            len = sh->nb;
        lens[i] = len;
        cap += len;
    }
    int64_t *rp = malloc((size_t)(sh->mb + 1) * sizeof *rp);
    int32_t *ci = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *ci);
    TU_CHECK(rp && ci, "out of memory");
    rp[0] = 0;
    for (int64_t i = 0; i < sh->mb; i++)
        rp[i + 1] = rp[i] + pick_columns(sh->nb, lens[i], ci + rp[i], &rng);
    int64_t nnzb = rp[sh->mb];
    size_t nval = (size_t)(nnzb * sh->bs * sh->bs);
    void *val = tu_random_vector((int64_t)nval, type, next(&rng));
    bsrmv_matrix *A = NULL;
    TU_OK(bsrmv_matrix_create(&A, sh->mb, sh->nb, sh->bs, nnzb, rp, ci, val, type, order));
    free(lens);
    free(rp);
    free(ci);
    free(val);
    return A;
}

bsrmv_matrix *tu_reorder(const bsrmv_matrix *A, bsrmv_order order)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &val));
    size_t vs = bsrmv_type_size(in.type);
    int64_t bs = in.bs;
    char *out = malloc((size_t)(in.nnzb * bs * bs) * vs + 1);
    TU_CHECK(out, "out of memory");
    for (int64_t k = 0; k < in.nnzb; k++)
        for (int64_t r = 0; r < bs; r++)
            for (int64_t c = 0; c < bs; c++) {
                int64_t from = k * bs * bs + (in.order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                int64_t to = k * bs * bs + (order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                memcpy(out + to * vs, (const char *)val + from * vs, vs);
            }
    bsrmv_matrix *B = NULL;
    TU_OK(bsrmv_matrix_create(&B, in.mb, in.nb, in.bs, in.nnzb, rp, ci, out, in.type, order));
    free(out);
    return B;
}

int64_t *tu_row_ptr64(const bsrmv_matrix *A, const int32_t **ci, const void **val)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    int64_t *rp = malloc((size_t)(in.mb + 1) * sizeof *rp);
    TU_CHECK(rp, "out of memory");
    if (in.index == BSRMV_INDEX_32) {
        const int32_t *r32;
        TU_OK(bsrmv_matrix_arrays_i32(A, &r32, ci, val));
        for (int64_t i = 0; i <= in.mb; i++)
            rp[i] = r32[i];
    } else {
        const int64_t *r64;
        TU_OK(bsrmv_matrix_arrays(A, &r64, ci, val));
        memcpy(rp, r64, (size_t)(in.mb + 1) * sizeof *rp);
    }
    return rp;
}

bsrmv_matrix *tu_narrow(const bsrmv_matrix *A)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int32_t *ci;
    const void *val;
    int64_t *rp = tu_row_ptr64(A, &ci, &val);
    int32_t *r32 = malloc((size_t)(in.mb + 1) * sizeof *r32);
    TU_CHECK(r32, "out of memory");
    for (int64_t i = 0; i <= in.mb; i++) {
        TU_CHECK(rp[i] <= INT32_MAX, "row_ptr[%lld] does not fit int32", (long long)i);
        r32[i] = (int32_t)rp[i];
    }
    bsrmv_matrix *B = NULL;
    TU_OK(bsrmv_matrix_create_i32(&B, in.mb, in.nb, in.bs, in.nnzb, r32, ci, val, in.type,
                                  in.order));
    free(r32);
    free(rp);
    return B;
}

double tu_get(const void *v, bsrmv_type t, int64_t i)
{
    return t == BSRMV_DOUBLE ? ((const double *)v)[i] : ((const float *)v)[i];
}

/* Component i of v (a complex value has two). */
static void set(void *v, bsrmv_type t, int64_t i, double x)
{
    if (t == BSRMV_DOUBLE || t == BSRMV_COMPLEX_DOUBLE)
        ((double *)v)[i] = x;
    else
        ((float *)v)[i] = (float)x;
}

int tu_parts(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_FLOAT || t == BSRMV_COMPLEX_DOUBLE ? 2 : 1;
}

void *tu_random_vector(int64_t n, bsrmv_type t, uint64_t seed)
{
    void *v = malloc((size_t)(n > 0 ? n : 1) * bsrmv_type_size(t));
    TU_CHECK(v, "out of memory");
    uint64_t rng = seed ^ 0xA5A5A5A5ull;
    for (int64_t i = 0; i < n * tu_parts(t); i++) {
        double u = 0.25 + 0.75 * unif(&rng);
        set(v, t, i, unif(&rng) < 0.5 ? -u : u);
    }
    return v;
}

void *tu_nan_vector(int64_t n, bsrmv_type t)
{
    void *v = malloc((size_t)(n > 0 ? n : 1) * bsrmv_type_size(t));
    TU_CHECK(v, "out of memory");
    for (int64_t i = 0; i < n * tu_parts(t); i++)
        set(v, t, i, NAN);
    return v;
}

void *tu_copy_vector(const void *v, int64_t n, bsrmv_type t)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * bsrmv_type_size(t);
    void *c = malloc(bytes);
    TU_CHECK(c, "out of memory");
    memcpy(c, v, (size_t)n * bsrmv_type_size(t));
    return c;
}

/* FNV-1a over n bytes, 8 at a time where they are whole words */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, c + i, 8);
        h = (h ^ w) * 0x100000001B3ull;
    }
    for (; i < n; i++)
        h = (h ^ c[i]) * 0x100000001B3ull;
    return h;
}

/* The last reference's sums for alpha = 1, beta = 0, reused when the same
 * matrix contents, op and x come again: the tests check many alpha/beta
 * pairs, kernels and thread counts against one product, whose long-double
 * triple loop took most of their time (most of all under the sanitizers).
 * The key hashes every array the product reads, so a matrix changed in
 * place, or freed and another built at the same address, is recomputed.
 * One memo for the process; a thread that finds it busy computes alone. */
static struct {
    pthread_mutex_t lock;
    uint64_t key;
    int64_t ny, cap;
    long double *sum, *mag;
    int64_t *terms;
} memo = {PTHREAD_MUTEX_INITIALIZER, 0, -1, 0, NULL, NULL, NULL};

static void ref_sums(const bsrmv_matrix_info *in, const int64_t *rp, const int32_t *ci,
                     const void *val, bsrmv_op op, const void *x, int64_t ny, long double *sum,
                     long double *mag, int64_t *terms)
{
    const int64_t bs = in->bs;
    for (int64_t j = 0; j < ny; j++) {
        sum[j] = 0;
        mag[j] = 0;
        terms[j] = 0;
    }
    for (int64_t i = 0; i < in->mb; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
            for (int64_t r = 0; r < bs; r++)
                for (int64_t c = 0; c < bs; c++) {
                    int64_t at = k * bs * bs + (in->order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                    long double a = tu_get(val, in->type, at);
                    int64_t row = i * bs + r, col = (int64_t)ci[k] * bs + c;
                    int64_t out = op == BSRMV_OP_N ? row : col;
                    int64_t inp = op == BSRMV_OP_N ? col : row;
                    long double xv = tu_get(x, in->vector_type, inp);
                    sum[out] += a * xv;
                    mag[out] += fabsl(a * xv);
                    terms[out]++;
                }
}

void tu_ref_spmv(const bsrmv_matrix *A, bsrmv_op op, double alpha, const void *x,
                 double beta, const void *y0, long double *y_ref, long double *mag,
                 int64_t *terms)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int32_t *ci;
    const void *val;
    int64_t *rp = tu_row_ptr64(A, &ci, &val);
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t nnzb = rp[in.mb];
    const int64_t head[] = {in.mb, in.nb, in.bs, in.type, in.vector_type, in.order, op};
    uint64_t key = hash_bytes(0xCBF29CE484222325ull, head, sizeof head);
    key = hash_bytes(key, rp, (size_t)(in.mb + 1) * sizeof *rp);
    key = hash_bytes(key, ci, (size_t)nnzb * sizeof *ci);
    key = hash_bytes(key, val, (size_t)(nnzb * in.bs * in.bs) * bsrmv_type_size(in.type));
    key = hash_bytes(key, x, (size_t)nx * bsrmv_type_size(in.vector_type));
    if (pthread_mutex_trylock(&memo.lock) == 0) {
        if (memo.key != key || memo.ny != ny) {
            if (ny + 1 > memo.cap) {
                free(memo.sum);
                free(memo.mag);
                free(memo.terms);
                memo.cap = ny + 1;
                memo.sum = malloc((size_t)memo.cap * sizeof *memo.sum);
                memo.mag = malloc((size_t)memo.cap * sizeof *memo.mag);
                memo.terms = malloc((size_t)memo.cap * sizeof *memo.terms);
                TU_CHECK(memo.sum && memo.mag && memo.terms, "out of memory");
            }
            ref_sums(&in, rp, ci, val, op, x, ny, memo.sum, memo.mag, memo.terms);
            memo.key = key;
            memo.ny = ny;
        }
        memcpy(y_ref, memo.sum, (size_t)ny * sizeof *y_ref);
        memcpy(mag, memo.mag, (size_t)ny * sizeof *mag);
        memcpy(terms, memo.terms, (size_t)ny * sizeof *terms);
        pthread_mutex_unlock(&memo.lock);
    } else {
        ref_sums(&in, rp, ci, val, op, x, ny, y_ref, mag, terms);
    }
    for (int64_t j = 0; j < ny; j++) {
        y_ref[j] *= (long double)alpha;
        mag[j] *= fabsl((long double)alpha);
        if (beta != 0) {
            long double yv = tu_get(y0, in.vector_type, j);
            y_ref[j] += (long double)beta * yv;
            mag[j] += fabsl((long double)beta * yv);
        }
    }
    free(rp);
}

double tu_rel_residual(const bsrmv_matrix *A, const void *b, const void *x)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    long double *r = malloc((size_t)in.rows * sizeof *r);
    long double *mag = malloc((size_t)in.rows * sizeof *mag);
    int64_t *terms = malloc((size_t)in.rows * sizeof *terms);
    TU_CHECK(r && mag && terms, "out of memory");
    tu_ref_spmv(A, BSRMV_OP_N, -1.0, x, 1.0, b, r, mag, terms);
    long double rr = 0, bb = 0;
    for (int64_t i = 0; i < in.rows; i++) {
        const long double bi = tu_get(b, in.vector_type, i);
        rr += r[i] * r[i];
        bb += bi * bi;
    }
    free(r);
    free(mag);
    free(terms);
    return (double)sqrtl(rr / bb);
}

void tu_check_result(const char *what, const bsrmv_matrix *A, bsrmv_op op, double alpha,
                     const void *x, double beta, const void *y0, const void *y)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    long double *ref = malloc((size_t)(ny + 1) * sizeof *ref);
    long double *mag = malloc((size_t)(ny + 1) * sizeof *mag);
    int64_t *terms = malloc((size_t)(ny + 1) * sizeof *terms);
    TU_CHECK(ref && mag && terms, "out of memory");
    tu_ref_spmv(A, op, alpha, x, beta, y0, ref, mag, terms);
    /* Componentwise bound for a dot product of n terms plus the alpha/beta
     * update: |err| <= gamma_{n+3} * magnitude (Higham), with a margin of 2. */
    const double eps = in.vector_type == BSRMV_DOUBLE ? 0x1p-53 : 0x1p-24;
    for (int64_t j = 0; j < ny; j++) {
        long double got = tu_get(y, in.vector_type, j);
        long double err = fabsl(got - ref[j]);
        long double tol = 2.0L * (long double)(terms[j] + 3) * eps * mag[j];
        if (in.vector_type == BSRMV_FLOAT) /* the result itself is rounded to float */
            tol += eps * fabsl(ref[j]) + 1e-38L;
        if (!(err <= tol)) {
            fprintf(stderr,
                    "FAIL %s: %s bs=%d %s%s %s alpha=%g beta=%g mb=%lld nb=%lld nnzb=%lld: "
                    "y[%lld] = %.17Lg, reference %.17Lg (error %.3Lg > bound %.3Lg)\n",
                    what, op == BSRMV_OP_N ? "A*x" : "A^T*x", in.bs,
                    in.type == BSRMV_DOUBLE ? "double" : "float",
                    in.vector_type != in.type ? "/double vectors" : "",
                    in.order == BSRMV_COL_MAJOR ? "col-major" : "row-major", alpha, beta,
                    (long long)in.mb, (long long)in.nb, (long long)in.nnzb, (long long)j, got,
                    ref[j], err, tol);
            exit(1);
        }
    }
    free(ref);
    free(mag);
    free(terms);
}

int tu_no_gpu(void)
{
    int ndev = 0;
    char name[256];
    if (bsrmv_gpu_device_count(&ndev) == BSRMV_SUCCESS && ndev >= 1) {
        TU_OK(bsrmv_gpu_device_name(0, name, sizeof name));
        printf("device: %s\n", name);
        return 0;
    }
    printf("no CUDA device (%s): GPU tests skipped\n", bsrmv_last_error());
    return 1;
}

int tu_gpu_quick(void)
{
    const char *q = getenv("BSRMV_GPU_TEST_QUICK");
    return q && *q && *q != '0' ? (*q == '2' ? 2 : 1) : 0;
}

int64_t tu_mv_at(bsrmv_layout lay, int64_t i, int j, int64_t ld)
{
    return lay == BSRMV_LAYOUT_ROW ? i * ld + j : i + (int64_t)j * ld;
}

int64_t tu_mv_span(bsrmv_layout lay, int64_t n, int k, int64_t ld)
{
    if (n == 0)
        return 0;
    return lay == BSRMV_LAYOUT_ROW ? (n - 1) * ld + k : (int64_t)(k - 1) * ld + n;
}

void tu_check_mv_padding(const char *what, const void *Y, const void *Y0, bsrmv_type t,
                         bsrmv_layout lay, int64_t n, int k, int64_t ld)
{
    const size_t vs = bsrmv_type_size(t);
    const int64_t ey = tu_mv_span(lay, n, k, ld);
    bool *inside = calloc((size_t)ey + 1, sizeof *inside);
    TU_CHECK(inside, "out of memory");
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < k; j++)
            inside[tu_mv_at(lay, i, j, ld)] = true;
    for (int64_t e = 0; e <= ey; e++)
        TU_CHECK(inside[e] || !memcmp((const char *)Y + e * vs, (const char *)Y0 + e * vs, vs),
                 "%s: k=%d: padding entry %lld of Y written", what, k, (long long)e);
    free(inside);
}

void *tu_mv_column(const void *M, bsrmv_type t, bsrmv_layout lay, int64_t n, int j, int64_t ld)
{
    const size_t vs = bsrmv_type_size(t);
    char *v = malloc((size_t)(n + 1) * vs);
    TU_CHECK(v, "out of memory");
    for (int64_t i = 0; i < n; i++)
        memcpy(v + i * vs, (const char *)M + tu_mv_at(lay, i, j, ld) * vs, vs);
    return v;
}

void *tu_to_device(const void *h, size_t bytes)
{
    void *d = NULL;
    TU_OK(bsrmv_gpu_malloc(&d, bytes));
    TU_OK(bsrmv_gpu_to_device(d, h, bytes));
    return d;
}
