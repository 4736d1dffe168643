/* Irregular block patterns for the load-balancing kernels: power-law row
 * lengths and the arrow.  Every random choice is a pure function of
 * (seed, row) or (seed, entry), so the matrix does not depend on the
 * number of threads that built it, and each row is built independently. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows at least this dense (len * DENSE_ROW >= nb) take selection
 * sampling, O(nb); sparser ones take rejection sampling, O(len) draws. */
#define DENSE_ROW 8
/* Up to this length a sorted insertion beats a hash set and qsort. */
#define SHORT_ROW 32
/* Rows per scheduling chunk: row costs vary by 10^4, so chunks are dynamic. */
#define ROW_CHUNK 1024

/* Independent streams of one seed: row lengths, columns, values. */
typedef struct streams {
    uint64_t len, col, val;
} streams;

static streams split_seed(uint64_t seed)
{
    streams s;
    s.len = bsrmv_splitmix64(&seed);
    s.col = bsrmv_splitmix64(&seed);
    s.val = bsrmv_splitmix64(&seed);
    return s;
}

/* Uniform integer in [0, n) for n <= 2^32 (multiply-shift, bias < 2^-32). */
static inline uint32_t below(uint64_t *rng, int64_t n)
{
    return (uint32_t)(((bsrmv_splitmix64(rng) >> 32) * (uint64_t)n) >> 32);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Knuth's selection sampling (TAOCP 3.4.2 S): one pass over [0, nb),
 * emits len distinct columns already sorted. */
static void select_columns(int64_t nb, int64_t len, uint64_t *rng, int32_t *out)
{
    int64_t need = len;
    for (int64_t j = 0; need > 0; j++)
        if (bsrmv_uniform01(rng) * (double)(nb - j) < (double)need)
            out[len - need--] = (int32_t)j;
}

/* Rejection sampling into a sorted array: short rows only (O(len^2)). */
static void insert_columns(int64_t nb, int64_t len, uint64_t *rng, int32_t *out)
{
    int64_t k = 0;
    while (k < len) {
        int32_t c = (int32_t)below(rng, nb);
        int64_t at = k;
        while (at > 0 && out[at - 1] > c)
            at--;
        if (at > 0 && out[at - 1] == c)
            continue;
        memmove(out + at + 1, out + at, (size_t)(k - at) * sizeof *out);
        out[at] = c;
        k++;
    }
}

/* Rejection sampling with an open-addressing set (cap a power of two
 * >= 2*len, entries col+1, all zero on entry and on return), then a sort. */
static void hash_columns(int64_t nb, int64_t len, uint64_t *rng, int32_t *out,
                         uint32_t *set, size_t cap)
{
    int64_t k = 0;
    while (k < len) {
        uint32_t c = below(rng, nb);
        size_t h = (size_t)((c * 0x9E3779B1u) & (uint32_t)(cap - 1));
        while (set[h] != 0 && set[h] != c + 1)
            h = (h + 1) & (cap - 1);
        if (set[h] == 0) {
            set[h] = c + 1;
            out[k++] = (int32_t)c;
        }
    }
    /* Cleared by value: a search that never stops at an empty slot still
     * finds every entry after earlier ones were removed. */
    for (int64_t q = 0; q < len; q++) {
        size_t h = (size_t)(((uint32_t)out[q] * 0x9E3779B1u) & (uint32_t)(cap - 1));
        while (set[h] != (uint32_t)out[q] + 1)
            h = (h + 1) & (cap - 1);
        set[h] = 0;
    }
    qsort(out, (size_t)len, sizeof *out, cmp_i32);
}

static size_t set_capacity(int64_t longest_hashed)
{
    size_t cap = 64;
    while ((int64_t)cap < 2 * longest_hashed)
        cap *= 2;
    return cap;
}

/* Columns of every row, in parallel; row i draws from its own stream, in
 * the window of `band` columns centred on its diagonal position
 * (i + 1/2)*nb/mb (moved inside [0, nb) at the edges; band = nb: the
 * whole row). */
static bsrmv_status fill_columns(const int64_t *rp, int64_t mb, int64_t nb, int64_t band,
                                 int64_t max_len, uint64_t col_seed, int32_t *ci)
{
    const int64_t longest_hashed = max_len < band / DENSE_ROW + 1 ? max_len : band / DENSE_ROW + 1;
    const size_t cap = set_capacity(longest_hashed);
    int failed = 0;
#pragma omp parallel
    {
        uint32_t *set = NULL;
#pragma omp for schedule(dynamic, ROW_CHUNK)
        for (int64_t i = 0; i < mb; i++) {
            const int64_t len = rp[i + 1] - rp[i];
            uint64_t rng = col_seed ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
            int32_t *out = ci + rp[i];
            if (len * DENSE_ROW >= band) {
                select_columns(band, len, &rng, out);
            } else if (len <= SHORT_ROW) {
                insert_columns(band, len, &rng, out);
            } else {
                if (!set && !(set = bsrmv_calloc(cap, sizeof *set))) {
#pragma omp atomic write
                    failed = 1;
                    continue;
                }
                hash_columns(band, len, &rng, out, set, cap);
            }
            if (band < nb) {
                /* long double: i * nb can pass 2^63 */
                int64_t lo = (int64_t)(((long double)i + 0.5L) * nb / mb) - band / 2;
                lo = lo < 0 ? 0 : lo > nb - band ? nb - band : lo;
                for (int64_t q = 0; q < len; q++)
                    out[q] += (int32_t)lo;
            }
        }
        bsrmv_free(set);
    }
    if (failed)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for a column set of %zu entries",
                          cap);
    return BSRMV_SUCCESS;
}

/* Entry (r, c) of block k is drawn at k*bs*bs + r*bs + c whatever the
 * order, so both orders of one seed hold the same matrix. */
static void fill_values(void *val, int64_t nnzb, int bs, uint64_t val_seed, bsrmv_type type,
                        bsrmv_order order)
{
    const int64_t bs2 = (int64_t)bs * bs;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nnzb; k++)
        for (int r = 0; r < bs; r++)
            for (int c = 0; c < bs; c++) {
                const uint64_t pos = (uint64_t)(k * bs2 + r * bs + c);
                const double v = 2.0 * bsrmv_hash01(val_seed, pos) - 1.0;
                /* a complex value's imaginary part: a second stream */
                const double vi =
                    bsrmv_type_is_complex(type) ? 2.0 * bsrmv_hash01(~val_seed, pos) - 1.0 : 0.0;
                int64_t at = k * bs2 + (order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c);
                bsrmv_value_set(val, type, at, v, vi);
            }
}

/* The shell and arrays of an mb x nb matrix with nnzb blocks. */
static bsrmv_status make_matrix(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs, int64_t nnzb,
                                bsrmv_type type, bsrmv_order order, int64_t **rp, int32_t **ci,
                                void **val)
{
    bsrmv_status s = bsrmv_matrix_shell(A, mb, nb, bs, nnzb, type, order);
    if (!s && (s = bsrmv_matrix_alloc_arrays(*A, rp, ci, val))) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
    }
    return s;
}

/* ---- power law ---------------------------------------------------- */

/* E[min(X, m)] for X Pareto with scale xm <= m and tail exponent a > 1. */
static double clipped_mean(double xm, double a, double m)
{
    return (xm * a - pow(xm, a) * pow(m, 1.0 - a)) / (a - 1.0);
}

/* Scale whose clipped mean is `mean`: clipped_mean rises from 0 at xm = 0
 * to m at xm = m, so bisection on [0, m] finds it. */
static double pareto_scale(double mean, double a, double m)
{
    double lo = 0, hi = m;
    for (int it = 0; it < 200 && lo < hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (clipped_mean(mid, a, m) < mean)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Length of row i: X = xm * U^(-1/a), rounded, clipped to max_len. */
static inline int64_t pareto_length(uint64_t len_seed, int64_t i, double xm, double a,
                                    int64_t max_len)
{
    double u = 1.0 - bsrmv_hash01(len_seed, (uint64_t)i); /* (0, 1] */
    double x = xm * pow(u, -1.0 / a);
    return x >= (double)max_len ? max_len : (int64_t)(x + 0.5);
}

bsrmv_status bsrmv_generate_powerlaw(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                     double mean_len, double exponent, int64_t max_len,
                                     uint64_t seed, bsrmv_type type, bsrmv_order order)
{
    return bsrmv_generate_powerlaw_banded(A, mb, nb, bs, mean_len, exponent, max_len, nb, seed,
                                          type, order);
}

bsrmv_status bsrmv_generate_powerlaw_banded(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                            double mean_len, double exponent, int64_t max_len,
                                            int64_t band, uint64_t seed, bsrmv_type type,
                                            bsrmv_order order)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_generate_powerlaw: NULL handle pointer");
    *A = NULL;
    if (mb < 1 || nb < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "power law: %lld x %lld blocks, need >= 1 x 1",
                          (long long)mb, (long long)nb);
    if (nb > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "power law: %lld block columns do not fit "
                          "32-bit col_idx", (long long)nb);
    if (max_len < 1 || max_len > nb)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "power law: max_len %lld outside [1, nb = %lld]",
                          (long long)max_len, (long long)nb);
    if (band < max_len || band > nb)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "power law: band %lld outside [max_len = %lld, "
                          "nb = %lld]", (long long)band, (long long)max_len, (long long)nb);
    if (!(mean_len >= 0 && mean_len <= (double)max_len))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "power law: mean_len %g outside [0, max_len = "
                          "%lld]", mean_len, (long long)max_len);
    if (!(exponent > 1 && isfinite(exponent)))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "power law: exponent %g must be > 1 (finite "
                          "mean)", exponent);
    const streams st = split_seed(seed);
    /* The lengthened longest row (below) adds up to max_len/mb to the mean. */
    const double draw_mean = fmax(0.0, mean_len - (double)max_len / (double)mb);
    const double xm = pareto_scale(draw_mean, exponent, (double)max_len);
    /* Lengths go to a scratch row_ptr first: the block count sizes the
     * matrix, and an absurd mb fails here at once rather than after a pass. */
    int64_t rows1;
    size_t rp_bytes;
    if (!bsrmv_add64(mb, 1, &rows1) || !bsrmv_bytes(rows1, sizeof(int64_t), &rp_bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "power law: %lld block rows overflow row_ptr",
                          (long long)mb);
    int64_t *lens = bsrmv_big_alloc(rp_bytes);
    if (!lens)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "power law: out of memory for %lld row lengths",
                          (long long)mb);
    /* The longest drawn row (the first on ties, whatever the team) is
     * lengthened to max_len, so the extreme case is always present. */
    int64_t longest = 0, longest_len = -1;
#pragma omp parallel
    {
        int64_t my_row = 0, my_len = -1;
#pragma omp for schedule(static) nowait
        for (int64_t i = 0; i < mb; i++) {
            lens[i + 1] = pareto_length(st.len, i, xm, exponent, max_len);
            if (lens[i + 1] > my_len) {
                my_len = lens[i + 1];
                my_row = i;
            }
        }
#pragma omp critical(bsrmv_powerlaw_longest)
        if (my_len > longest_len || (my_len == longest_len && my_row < longest)) {
            longest_len = my_len;
            longest = my_row;
        }
    }
    lens[longest + 1] = max_len;
    lens[0] = 0;
    for (int64_t i = 0; i < mb; i++)
        if (!bsrmv_add64(lens[i], lens[i + 1], &lens[i + 1])) {
            bsrmv_big_free(lens);
            return bsrmv_fail(BSRMV_ERR_OVERFLOW, "power law: block count of %lld rows "
                              "overflows int64", (long long)mb);
        }

    int64_t *rp;
    int32_t *ci;
    void *val;
    bsrmv_status s = make_matrix(A, mb, nb, bs, lens[mb], type, order, &rp, &ci, &val);
    if (!s)
        memcpy(rp, lens, rp_bytes);
    bsrmv_big_free(lens);
    if (s)
        return s;
    if ((s = fill_columns(rp, mb, nb, band, max_len, st.col, ci))) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return s;
    }
    fill_values(val, rp[mb], bs, st.val, type, order);
    return BSRMV_SUCCESS;
}

/* ---- arrow --------------------------------------------------------- */

bsrmv_status bsrmv_generate_arrow(bsrmv_matrix **A, int64_t n, int64_t dense, int bs,
                                  uint64_t seed, bsrmv_type type, bsrmv_order order)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_generate_arrow: NULL handle pointer");
    *A = NULL;
    if (n < 1 || dense < 0 || dense > n)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "arrow: need n >= 1 and 0 <= dense <= n, got n "
                          "%lld, dense %lld", (long long)n, (long long)dense);
    if (n > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "arrow: %lld block columns do not fit 32-bit "
                          "col_idx", (long long)n);
    /* Rows [0, dense) hold n blocks, rows [dense, n) hold dense + 1. */
    int64_t head, tail, nnzb;
    if (!bsrmv_mul64(dense, n, &head) || !bsrmv_mul64(n - dense, dense + 1, &tail) ||
        !bsrmv_add64(head, tail, &nnzb))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "arrow: %lld dense rows of %lld blocks overflow "
                          "int64", (long long)dense, (long long)n);
    int64_t *rp;
    int32_t *ci;
    void *val;
    bsrmv_status s = make_matrix(A, n, n, bs, nnzb, type, order, &rp, &ci, &val);
    if (s)
        return s;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i <= n; i++)
        rp[i] = i <= dense ? i * n : head + (i - dense) * (dense + 1);
    /* By block, not by row: row 0 alone may hold most of the blocks. */
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nnzb; k++) {
        if (k < head) {
            ci[k] = (int32_t)(k % n);
        } else {
            int64_t row = dense + (k - head) / (dense + 1), j = (k - head) % (dense + 1);
            ci[k] = (int32_t)(j < dense ? j : row);
        }
    }
    fill_values(val, nnzb, bs, split_seed(seed).val, type, order);
    return BSRMV_SUCCESS;
}
