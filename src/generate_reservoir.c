/* Reservoir-style matrices (nonsymmetric, upwinded) and their SPD sibling,
 * the block Laplacian: one builder.  Every value is drawn from the seed by
 * the face or cell it belongs to, so both block orders and any thread count
 * give the same matrix. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>

#define SIGMA 1.0      /* spread of log(permeability)                           */
#define KZ_FACTOR 0.1  /* vertical / horizontal permeability                    */
#define KAPPA 0.2      /* component coupling of a face block (off-diagonal mass) */
#define KAPPA_UP 0.3   /* the same for the upwind derivative term                */
#define KAPPA_ACC 0.1  /* the same for the accumulation block                    */
#define MU_MAX 0.5     /* upwind term at the largest potential difference        */
#define MARGIN 1.1     /* accumulation over the column-dominance bound           */
#define ACC_MIN 0.05   /* accumulation floor, times the cell's transmissibility  */

enum { S_PERM = 1, S_POT, S_FACE, S_UP, S_ACC };

static double draw(uint64_t seed, int salt, uint64_t i)
{
    return bsrmv_hash01(seed + (uint64_t)salt * 0xA0761D6478BD642Full, i);
}

static double normal(uint64_t seed, int salt, uint64_t i)
{
    const double u1 = 1.0 - draw(seed, salt, 2 * i), u2 = draw(seed, salt, 2 * i + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

typedef struct grid {
    int64_t nx, ny, nz;
    int nc;
    uint64_t seed;
    int spd;
} grid;

static double perm(const grid *g, int64_t cell)
{
    return exp(SIGMA * normal(g->seed, S_PERM, (uint64_t)cell));
}

/* (1-kappa) I + kappa W, W >= 0 with unit column sums (or, spd: symmetric
 * with row sums <= 1, so that the result is SPD), drawn for stream `salt`,
 * item `id`; column-major into m. */
static void coupling(const grid *g, int salt, uint64_t id, double kappa, double *m)
{
    const int nc = g->nc;
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < nc; r++) {
            const int a = g->spd && r > c ? c : r, b = g->spd && r > c ? r : c;
            m[r + c * nc] = 0.1 + draw(g->seed, salt, id * (uint64_t)(nc * nc) + a * nc + b);
        }
    double norm = 0;
    for (int c = 0; c < nc; c++) {
        double s = 0;
        for (int r = 0; r < nc; r++)
            s += m[r + c * nc];
        norm = fmax(norm, s);
        if (!g->spd)
            for (int r = 0; r < nc; r++)
                m[r + c * nc] /= s;
    }
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < nc; r++)
            m[r + c * nc] = (r == c) * (1 - kappa) + kappa * m[r + c * nc] / (g->spd ? norm : 1);
}

/* The face between cells a < b along axis d (0 x, 1 y, 2 z). */
typedef struct face {
    double t;  /* transmissibility                     */
    double mu; /* weight of the upwind derivative term */
    int64_t up;
} face;

static face face_of(const grid *g, int64_t a, int64_t b, int d)
{
    face f;
    const double ka = perm(g, a), kb = perm(g, b);
    f.t = 2 * ka * kb / (ka + kb) * (d == 2 ? KZ_FACTOR : 1);
    const double pa = draw(g->seed, S_POT, (uint64_t)a), pb = draw(g->seed, S_POT, (uint64_t)b);
    f.up = pa >= pb ? a : b;
    f.mu = g->spd ? 0 : MU_MAX * fabs(pa - pb);
    return f;
}

static inline void store(void *val, bsrmv_type t, int64_t at, double v)
{
    if (t == BSRMV_DOUBLE)
        ((double *)val)[at] = v;
    else
        ((float *)val)[at] = (float)v;
}

/* Writes block k (column-major m) in the matrix order. */
static void put_block(const grid *g, void *val, bsrmv_type t, bsrmv_order o, int64_t k,
                      const double *m)
{
    const int nc = g->nc;
    const int64_t base = k * nc * nc;
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < nc; r++)
            store(val, t, base + (o == BSRMV_COL_MAJOR ? c * nc + r : r * nc + c),
                  m[r + c * nc]);
}

/* Neighbours of cell i in increasing order (the diagonal included as -1
 * axis); returns how many. */
static int neighbours(const grid *g, int64_t i, int64_t *cell, int *axis)
{
    const int64_t x = i % g->nx, y = (i / g->nx) % g->ny, z = i / (g->nx * g->ny);
    const int64_t step[3] = {1, g->nx, g->nx * g->ny};
    const int inside[3][2] = {{x > 0, x < g->nx - 1}, {y > 0, y < g->ny - 1},
                              {z > 0, z < g->nz - 1}};
    int n = 0;
    for (int d = 2; d >= 0; d--)
        if (inside[d][0]) {
            cell[n] = i - step[d];
            axis[n++] = d;
        }
    cell[n] = i;
    axis[n++] = -1;
    for (int d = 0; d < 3; d++)
        if (inside[d][1]) {
            cell[n] = i + step[d];
            axis[n++] = d;
        }
    return n;
}

/* Block row i: off-diagonal blocks -T (L_f + [j upstream] mu L'_f); the
 * diagonal block sums T (L_f + [i upstream] mu L'_f) plus the accumulation.
 * scratch: 4 nc*nc doubles plus nc. */
static void build_row(const grid *g, int64_t i, const int64_t *rp, int32_t *ci, void *val,
                      bsrmv_type t, bsrmv_order o, double *scratch)
{
    const int nc = g->nc;
    const int64_t nc2 = (int64_t)nc * nc;
    double *lam = scratch, *lup = lam + nc2, *diag = lup + nc2, *acc = diag + nc2;
    double *need = acc + nc2;
    int64_t cell[7];
    int axis[7];
    const int n = neighbours(g, i, cell, axis);
    for (int64_t e = 0; e < nc2; e++)
        diag[e] = 0;
    for (int c = 0; c < nc; c++)
        need[c] = 0;
    double tsum = 0;
    int64_t kdiag = -1;
    for (int q = 0; q < n; q++) {
        const int64_t k = rp[i] + q, j = cell[q];
        ci[k] = (int32_t)j;
        if (j == i) {
            kdiag = k;
            continue;
        }
        const int64_t a = i < j ? i : j, b = i < j ? j : i;
        const uint64_t id = 3 * (uint64_t)a + (uint64_t)axis[q];
        const face f = face_of(g, a, b, axis[q]);
        coupling(g, S_FACE, id, KAPPA, lam);
        tsum += f.t;
        if (f.mu > 0)
            coupling(g, S_UP, id, KAPPA_UP, lup);
        const double wj = f.up == j ? f.mu : 0, wi = f.up == i ? f.mu : 0;
        /* column c of the diagonal block must beat twice the off-diagonal
         * mass of its own column (the column-dominance bound) */
        for (int c = 0; c < nc; c++)
            for (int r = 0; r < nc; r++) {
                const int64_t e = r + (int64_t)c * nc;
                const double l = lam[e], u = f.mu > 0 ? lup[e] : 0;
                diag[e] += f.t * (l + wi * u);
                if (r != c)
                    need[c] += 2 * f.t * (l + wi * u);
                lam[e] = -f.t * (l + wj * u);
            }
        put_block(g, val, t, o, k, lam);
    }
    double a_i = ACC_MIN * tsum;
    if (!g->spd)
        for (int c = 0; c < nc; c++)
            a_i = fmax(a_i, MARGIN * need[c] / (1 - 2 * KAPPA_ACC));
    coupling(g, S_ACC, (uint64_t)i, KAPPA_ACC, acc);
    for (int64_t e = 0; e < nc2; e++)
        diag[e] += a_i * acc[e];
    put_block(g, val, t, o, kdiag, diag);
}

static bsrmv_status generate(bsrmv_matrix **A, const grid *g, bsrmv_type type,
                             bsrmv_order order, const char *what)
{
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: NULL handle pointer", what);
    *A = NULL;
    if (bsrmv_type_is_complex(type))
        return bsrmv_refuse_complex(type, what);
    if (g->nx < 1 || g->ny < 1 || g->nz < 1 || g->nc < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: grid %lld x %lld x %lld with %d components",
                          what, (long long)g->nx, (long long)g->ny, (long long)g->nz, g->nc);
    int64_t cells, nnzb;
    if (!bsrmv_mul64(g->nx, g->ny, &cells) || !bsrmv_mul64(cells, g->nz, &cells) ||
        cells > INT32_MAX)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%s: %lld x %lld x %lld cells do not fit 32-bit "
                          "col_idx", what, (long long)g->nx, (long long)g->ny, (long long)g->nz);
    /* diagonal plus two faces per axis, less the boundary ones */
    nnzb = cells * 7 - 2 * (g->ny * g->nz + g->nx * g->nz + g->nx * g->ny);
    bsrmv_status s = bsrmv_matrix_shell(A, cells, cells, g->nc, nnzb, type, order);
    int64_t *rp;
    int32_t *ci;
    void *val;
    if (!s && (s = bsrmv_matrix_alloc_arrays(*A, &rp, &ci, &val))) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
    }
    if (s)
        return s;
    int64_t cell[7];
    int axis[7];
    rp[0] = 0;
    for (int64_t i = 0; i < cells; i++)
        rp[i + 1] = rp[i] + neighbours(g, i, cell, axis);
    const int64_t nc2 = (int64_t)g->nc * g->nc;
    int failed = 0;
#pragma omp parallel
    {
        double *scratch = bsrmv_malloc((size_t)(4 * nc2 + g->nc) * sizeof *scratch);
        if (!scratch) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < cells; i++)
            if (scratch)
                build_row(g, i, rp, ci, val, type, order, scratch);
        bsrmv_free(scratch);
    }
    if (failed) {
        bsrmv_matrix_destroy(*A);
        *A = NULL;
        return bsrmv_fail(BSRMV_ERR_NOMEM, "%s: out of memory for %d components", what, g->nc);
    }
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_generate_reservoir(bsrmv_matrix **A, int64_t nx, int64_t ny, int64_t nz,
                                      int nc, uint64_t seed, bsrmv_type type,
                                      bsrmv_order order)
{
    const grid g = {nx, ny, nz, nc, seed, 0};
    return generate(A, &g, type, order, "bsrmv_generate_reservoir");
}

bsrmv_status bsrmv_generate_block_laplacian(bsrmv_matrix **A, int64_t nx, int64_t ny,
                                            int64_t nz, int bs, uint64_t seed,
                                            bsrmv_type type, bsrmv_order order)
{
    const grid g = {nx, ny, nz, bs, seed, 1};
    return generate(A, &g, type, order, "bsrmv_generate_block_laplacian");
}
