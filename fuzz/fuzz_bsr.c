/* BSR from arbitrary arrays: bsrmv_check_bsr agrees with a plain check,
 * create/wrap accept exactly what it accepts, and SpMV (auto and generic
 * kernels, both ops, types and orders) matches a naive loop. */
#include "fuzz_common.h"
#include "internal.h"

#include <omp.h>

static int plain_valid(int64_t mb, int64_t nb, int64_t nnzb, const int64_t *rp,
                       const int32_t *ci)
{
    if (rp[0] != 0 || rp[mb] != nnzb)
        return 0;
    for (int64_t i = 0; i < mb; i++) {
        if (rp[i + 1] < rp[i] || rp[i + 1] > nnzb)
            return 0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
            if (ci[k] < 0 || ci[k] >= nb || (k > rp[i] && ci[k] <= ci[k - 1]))
                return 0;
    }
    return 1;
}

static double get(const void *v, bsrmv_type t, int64_t i)
{
    return t == BSRMV_DOUBLE ? ((const double *)v)[i] : ((const float *)v)[i];
}

static void set(void *v, bsrmv_type t, int64_t i, double x)
{
    if (t == BSRMV_DOUBLE)
        ((double *)v)[i] = x;
    else
        ((float *)v)[i] = (float)x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz f = {data, size};
    omp_set_num_threads(1 + (int)(fz_u8(&f) % 3));
    const int64_t mb = fz_u8(&f) % 24, nb = 1 + fz_u8(&f) % 24;
    const int bs = 1 + (int)(fz_u8(&f) % 12);
    const bsrmv_type type = (bsrmv_type)(fz_u8(&f) & 1);
    const bsrmv_order order = (bsrmv_order)(fz_u8(&f) & 1);
    const unsigned mode = fz_u8(&f);
    const int64_t nnzb = fz_u8(&f) % 96;
    int64_t rp[25];
    int32_t ci[96];
    /* Row pointers: mostly a valid cumulative split, sometimes raw bytes. */
    rp[0] = 0;
    for (int64_t i = 0; i < mb; i++)
        rp[i + 1] = (mode & 1) ? (int64_t)(int8_t)fz_u8(&f) : rp[i] + fz_u8(&f) % 8;
    if (!(mode & 1) && mb > 0)
        rp[mb] = nnzb < rp[mb] ? rp[mb] : nnzb;
    const int64_t real_nnzb = mb > 0 && !(mode & 1) ? rp[mb] : nnzb;
    if (real_nnzb > 96)
        return 0;
    for (int64_t k = 0; k < real_nnzb; k++)
        ci[k] = (mode & 2) ? (int32_t)(int8_t)fz_u8(&f) : (int32_t)(fz_u8(&f) % nb);
    if (mode & 4) /* sort each row's columns, dropping nothing */
        for (int64_t i = 0; i < mb && !(mode & 1); i++)
            for (int64_t a = rp[i]; a < rp[i + 1]; a++)
                for (int64_t b = a + 1; b < rp[i + 1]; b++)
                    if (ci[b] < ci[a]) {
                        int32_t t = ci[a];
                        ci[a] = ci[b];
                        ci[b] = t;
                    }

    bsrmv_check_report rep;
    bsrmv_status s = bsrmv_check_bsr(mb, nb, bs, real_nnzb, rp, ci, &rep);
    int valid = plain_valid(mb, nb, real_nnzb, rp, ci);
    if ((s == BSRMV_SUCCESS) != valid || (s && (rep.rule == BSRMV_RULE_OK || !*bsrmv_last_error())))
        abort();
    const size_t vs = bsrmv_type_size(type);
    const int64_t bs2 = (int64_t)bs * bs, nval = real_nnzb * bs2;
    void *val = malloc((size_t)(nval > 0 ? nval : 1) * vs);
    for (int64_t k = 0; k < nval; k++)
        set(val, type, k, fz_small(&f));
    bsrmv_matrix *A = NULL, *W = NULL;
    bsrmv_status sc = bsrmv_matrix_create(&A, mb, nb, bs, real_nnzb, rp, ci, val, type, order);
    bsrmv_status sw = bsrmv_matrix_wrap(&W, mb, nb, bs, real_nnzb, rp, ci, val, type, order);
    if ((sc == BSRMV_SUCCESS) != valid || (sw == BSRMV_SUCCESS) != valid ||
        (!valid && (A || W)))
        abort();
    if (!valid) {
        free(val);
        return 0;
    }
    const double alpha = fz_small(&f), beta = (mode & 8) ? 0.0 : fz_small(&f);
    for (int op = 0; op < 2; op++) {
        const int64_t nx = op ? mb * bs : nb * bs, ny = op ? nb * bs : mb * bs;
        void *x = malloc((size_t)(nx + ny + 1) * vs);
        void *y = malloc((size_t)(ny + 1) * vs), *y0 = malloc((size_t)(ny + 1) * vs);
        for (int64_t i = 0; i < nx; i++)
            set(x, type, i, fz_small(&f));
        for (int64_t i = 0; i < ny; i++)
            set(y0, type, i, (mode & 8) ? NAN : fz_small(&f));
        long double *want = calloc((size_t)ny + 1, sizeof *want);
        long double *mag = calloc((size_t)ny + 1, sizeof *mag);
        for (int64_t i = 0; i < mb; i++)
            for (int64_t k = rp[i]; k < rp[i + 1]; k++)
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c < bs; c++) {
                        double a = get(val, type, k * bs2 + (order == BSRMV_COL_MAJOR
                                                                 ? c * bs + r
                                                                 : r * bs + c));
                        int64_t row = i * bs + r, col = (int64_t)ci[k] * bs + c;
                        int64_t yi = op ? col : row, xi = op ? row : col;
                        want[yi] += (long double)a * get(x, type, xi);
                        mag[yi] += fabsl((long double)a * get(x, type, xi));
                    }
        /* alpha and beta are rounded to the matrix type first. */
        double al = type == BSRMV_FLOAT ? (float)alpha : alpha;
        double be = type == BSRMV_FLOAT ? (float)beta : beta;
        for (int kernel = 0; kernel < 2; kernel++) {
            bsrmv_matrix *M = kernel ? W : A;
            if (bsrmv_matrix_set_cpu_kernel(M, kernel ? BSRMV_CPU_GENERIC : BSRMV_CPU_AUTO))
                abort();
            memcpy(y, y0, (size_t)ny * vs);
            if (bsrmv_spmv((bsrmv_op)op, alpha, M, x, nx, beta, y, ny) != BSRMV_SUCCESS)
                abort();
            for (int64_t i = 0; i < ny; i++) {
                long double w = (long double)al * want[i] +
                                (be != 0 ? (long double)be * get(y0, type, i) : 0);
                long double m = fabsl((long double)al) * mag[i] +
                                (be != 0 ? fabsl((long double)be * get(y0, type, i)) : 0);
                fz_close(get(y, type, i), w, m, bs * (rp[mb] + 1), type == BSRMV_FLOAT);
            }
            /* y on top of x: refused whenever x is read. */
            if (alpha != 0 && nx > 0 && ny > 0 &&
                bsrmv_spmv((bsrmv_op)op, alpha, M, x, nx, beta, x, ny) != BSRMV_ERR_ARGUMENT)
                abort();
        }
        free(x);
        free(y);
        free(y0);
        free(want);
        free(mag);
    }
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(W);
    free(val);
    return 0;
}
