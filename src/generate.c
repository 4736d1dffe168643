/* Reproducible test and benchmark matrices. */
#include "internal.h"

#include <stdlib.h>

bsrmv_status bsrmv_fill_random(void *v, int64_t n, bsrmv_type t, uint64_t seed)
{
    if (n < 0 || (n > 0 && !v) || bsrmv_type_size(t) == 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_fill_random: bad argument");
    /* Complex values: both parts drawn, one position each. */
    const int64_t parts = n * bsrmv_type_parts(t);
#pragma omp parallel for schedule(static) if (parts > 100000)
    for (int64_t i = 0; i < parts; i++)
        bsrmv_part_set(v, t, i, 2.0 * bsrmv_hash01(seed, (uint64_t)i) - 1.0);
    return BSRMV_SUCCESS;
}

/* The stream of the imaginary parts of generated complex matrices. */
#define IMAG_SEED 0x5DEECE66Dull

static int neighbours(int64_t ix, int64_t iy, int64_t iz, int64_t nx, int64_t ny, int64_t nz,
                      int points, int64_t *cols)
{
    int n = 0;
    /* (dz, dy, dx) in lexicographic order gives increasing node numbers. */
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (points == 7 && abs(dx) + abs(dy) + abs(dz) > 1)
                    continue;
                int64_t x = ix + dx, y = iy + dy, z = iz + dz;
                if (x < 0 || y < 0 || z < 0 || x >= nx || y >= ny || z >= nz)
                    continue;
                if (cols)
                    cols[n] = x + nx * (y + ny * z);
                n++;
            }
    return n;
}


bsrmv_status bsrmv_generate_grid(bsrmv_matrix **A, int64_t nx, int64_t ny, int64_t nz,
                                 int bs, int points, uint64_t seed, bsrmv_type type,
                                 bsrmv_order order)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_generate_grid: NULL handle pointer");
    *A = NULL;
    if (nx < 1 || ny < 1 || nz < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "grid %lld x %lld x %lld has no nodes",
                          (long long)nx, (long long)ny, (long long)nz);
    if (points != 7 && points != 27)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "stencil must have 7 or 27 points, not %d",
                          points);
    int64_t nodes, nnzb_max;
    if (!bsrmv_mul64(nx, ny, &nodes) || !bsrmv_mul64(nodes, nz, &nodes) ||
        !bsrmv_mul64(nodes, points, &nnzb_max))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "grid %lld x %lld x %lld is too large",
                          (long long)nx, (long long)ny, (long long)nz);

    if (nodes > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%lld nodes do not fit 32-bit col_idx",
                          (long long)nodes);
    /* Exact block count: per axis, interior nodes see 3 (or 1+2) neighbours. */
    int64_t *counts = bsrmv_malloc((size_t)nodes * sizeof *counts);
    if (!counts)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for a grid of %lld nodes",
                          (long long)nodes);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nodes; i++)
        counts[i] = neighbours(i % nx, (i / nx) % ny, i / (nx * ny), nx, ny, nz, points, NULL);
    int64_t nnzb = 0;
    for (int64_t i = 0; i < nodes; i++)
        nnzb += counts[i];

    bsrmv_status s = bsrmv_matrix_shell(A, nodes, nodes, bs, nnzb, type, order);
    int64_t *rp;
    int32_t *ci;
    void *val;
    if (!s && (s = bsrmv_matrix_alloc_arrays(*A, &rp, &ci, &val))) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
    }
    if (s) {
        bsrmv_free(counts);
        return s;
    }
    rp[0] = 0;
    for (int64_t i = 0; i < nodes; i++)
        rp[i + 1] = rp[i] + counts[i];
    bsrmv_free(counts);

    /* Complex: off-diagonal a + i*a*f with |f| <= 1/2, so |entry| <= 1.12|a|,
     * and the diagonal 1 + 1.125 sum |a| + i/2 keeps the dominance. */
    const bool cplx = bsrmv_type_is_complex(type);
    const double dom = cplx ? 1.125 : 1.0, diag_im = 0.5;
    const int64_t bs2 = (int64_t)bs * bs;
    int failed = 0;
#pragma omp parallel
    {
        double *rowsum = bsrmv_malloc((size_t)bs * sizeof *rowsum);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nodes; i++) {
            if (!rowsum) {
#pragma omp atomic write
                failed = 1;
                continue;
            }
            int64_t cols[27];
            int n = neighbours(i % nx, (i / nx) % ny, i / (nx * ny), nx, ny, nz, points, cols);
            for (int r = 0; r < bs; r++)
                rowsum[r] = 0;
            int64_t diag = -1;
            for (int q = 0; q < n; q++) {
                int64_t k = rp[i] + q;
                ci[k] = (int32_t)cols[q];
                if (cols[q] == i)
                    diag = k;
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c < bs; c++) {
                        /* Drawn by (block, r, c) so both orders hold one matrix. */
                        const uint64_t at = (uint64_t)(k * bs2 + r * bs + c);
                        double v = -bsrmv_hash01(seed, at);
                        double f = cplx ? bsrmv_hash01(seed ^ IMAG_SEED, at) - 0.5 : 0.0;
                        rowsum[r] += v;
                        bsrmv_value_set(val, type,
                                        k * bs2 +
                                            (order == BSRMV_COL_MAJOR ? c * bs + r : r * bs + c),
                                        v, v * f);
                    }
            }
            for (int r = 0; r < bs; r++) {
                double self = -bsrmv_hash01(seed, (uint64_t)(diag * bs2 + r * bs + r));
                bsrmv_value_set(val, type, diag * bs2 + (int64_t)r * bs + r,
                                1.0 - dom * (rowsum[r] - self), diag_im);
            }
        }
        bsrmv_free(rowsum);
    }
    if (failed) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for row sums of bs %d", bs);
    }
    return BSRMV_SUCCESS;
}
