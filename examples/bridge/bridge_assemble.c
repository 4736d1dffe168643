/* Element stiffness in global axes and assembly straight into BSR.
 *
 * The pattern comes from the node-member incidence: block row i holds node
 * i and the far end of every member at i, sorted.  Values are filled row
 * by row (each row sums the blocks of its own members), so rows are
 * independent and the fill runs in parallel without atomics, and no COO
 * triplets are ever stored: millions of unknowns assemble in one pass.
 */
#include "bridge_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Local-axes block k_rc of a member, ends r, c in {0, 1}:
 *   bar:   EA/L on the axial dof, T/L on the transverse one (the string
 *          term of a member under tension T);
 *   frame: the Euler-Bernoulli element with a = EA/L, b = 12EI/L^3,
 *          c = 6EI/L^2, d = 2EI/L:
 *            k_00 = [a 0 0; 0 b c; 0 c 2d]    k_01 = [-a 0 0; 0 -b c; 0 -c d]
 *            k_10 = k_01^T                     k_11 = [a 0 0; 0 b -c; 0 -c 2d]
 * as a 3 x 3 row-major array (a bs 2 model uses its top-left 2 x 2). */
static void local_block(const struct bridge_section *sc, int frame, double len, double tension,
                        int r, int c, double k[3][3])
{
    double same = r == c ? 1 : -1;
    memset(k, 0, 9 * sizeof k[0][0]);
    k[0][0] = same * sc->E * sc->A / len;
    k[1][1] = same * tension / len;
    if (!frame)
        return;
    double b = 12 * sc->E * sc->I / (len * len * len);
    double cc = 6 * sc->E * sc->I / (len * len);
    double d = 2 * sc->E * sc->I / len;
    k[1][1] += same * b;
    k[1][2] = r == 0 ? cc : -cc;
    k[2][1] = c == 0 ? cc : -cc;
    k[2][2] = r == c ? 2 * d : d;
}

void bridge_member_block(const struct bridge_model *m, int64_t k, int row, int col, double *blk)
{
    const struct bridge_section *sc = &m->sec[m->part[k]];
    double c, s, kl[3][3];
    double len = bridge_member_length(m, k, &c, &s);
    local_block(sc, m->bs == 3 && sc->frame, len, m->tension[k], row, col, kl);
    /* Global = R^T k R with local = R global, R = [c s 0; -s c 0; 0 0 1]. */
    double R[3][3] = {{c, s, 0}, {-s, c, 0}, {0, 0, 1}};
    int bs = m->bs;
    for (int i = 0; i < bs; i++)
        for (int j = 0; j < bs; j++) {
            double v = 0;
            for (int p = 0; p < bs; p++)
                for (int q = 0; q < bs; q++)
                    v += R[p][i] * kl[p][q] * R[q][j];
            blk[j * bs + i] = v;
        }
}

void bridge_matrix_free(struct bridge_matrix *km)
{
    bsrmv_matrix_destroy(km->K);
    free(km->row_ptr);
    free(km->col_idx);
    free(km->val);
    memset(km, 0, sizeof *km);
}

/* Members at each node: inc[ptr[i] .. ptr[i+1]). */
struct incidence {
    int64_t *ptr;
    int64_t *mem;
    int64_t max_degree;
};

static int build_incidence(const struct bridge_model *m, struct incidence *inc)
{
    inc->ptr = calloc((size_t)m->n_nodes + 1, sizeof *inc->ptr);
    inc->mem = malloc((size_t)(2 * m->n_members + 1) * sizeof *inc->mem);
    int64_t *fill = malloc(((size_t)m->n_nodes + 1) * sizeof *fill);
    if (!inc->ptr || !inc->mem || !fill) {
        free(fill);
        return bridge_fail("out of memory for the incidence of %lld members",
                           (long long)m->n_members);
    }
    for (int64_t k = 0; k < m->n_members; k++)
        for (int e = 0; e < 2; e++)
            inc->ptr[m->end[e][k] + 1]++;
    inc->max_degree = 0;
    for (int64_t i = 0; i < m->n_nodes; i++) {
        if (inc->ptr[i + 1] > inc->max_degree)
            inc->max_degree = inc->ptr[i + 1];
        inc->ptr[i + 1] += inc->ptr[i];
    }
    memcpy(fill, inc->ptr, ((size_t)m->n_nodes + 1) * sizeof *fill);
    for (int64_t k = 0; k < m->n_members; k++)
        for (int e = 0; e < 2; e++)
            inc->mem[fill[m->end[e][k]]++] = k;
    free(fill);
    return 0;
}

static int32_t far_end(const struct bridge_model *m, int64_t k, int64_t i)
{
    return m->end[0][k] == i ? m->end[1][k] : m->end[0][k];
}

/* Sorted distinct block columns of row i into cols; returns the count. */
static int64_t row_pattern(const struct bridge_model *m, const struct incidence *inc, int64_t i,
                           int32_t *cols)
{
    int64_t n = 0;
    cols[n++] = (int32_t)i;
    for (int64_t p = inc->ptr[i]; p < inc->ptr[i + 1]; p++) {
        int32_t j = far_end(m, inc->mem[p], i);
        int64_t q = n;
        while (q > 0 && cols[q - 1] > j) /* insertion: rows are short */
            q--;
        if (q > 0 && cols[q - 1] == j)
            continue;
        memmove(cols + q + 1, cols + q, (size_t)(n - q) * sizeof *cols);
        cols[q] = j;
        n++;
    }
    return n;
}

static int64_t find_col(const int32_t *cols, int64_t n, int32_t j)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (cols[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Row i: sums the member blocks, then puts the identity in the rows and
 * columns of constrained dofs. */
static void fill_row(const struct bridge_model *m, const struct incidence *inc,
                     const struct bridge_matrix *km, int64_t i)
{
    int bs = m->bs, bs2 = bs * bs;
    int64_t start = km->row_ptr[i], len = km->row_ptr[i + 1] - start;
    const int32_t *cols = km->col_idx + start;
    double *v = km->val + start * bs2, blk[9];
    memset(v, 0, (size_t)(len * bs2) * sizeof *v);
    int64_t diag = find_col(cols, len, (int32_t)i);
    for (int64_t p = inc->ptr[i]; p < inc->ptr[i + 1]; p++) {
        int64_t k = inc->mem[p];
        int r = m->end[0][k] == i ? 0 : 1;
        int64_t off = find_col(cols, len, far_end(m, k, i));
        bridge_member_block(m, k, r, r, blk);
        for (int e = 0; e < bs2; e++)
            v[diag * bs2 + e] += blk[e];
        bridge_member_block(m, k, r, 1 - r, blk);
        for (int e = 0; e < bs2; e++)
            v[off * bs2 + e] += blk[e];
    }
    for (int64_t q = 0; q < len; q++) {
        unsigned row_fix = m->cons[i], col_fix = m->cons[cols[q]];
        for (int c = 0; c < bs; c++)
            for (int r = 0; r < bs; r++)
                if (((row_fix >> r) | (col_fix >> c)) & 1u)
                    v[q * bs2 + c * bs + r] = (q == diag && r == c) ? 1 : 0;
    }
}

int bridge_assemble(const struct bridge_model *m, struct bridge_matrix *out)
{
    memset(out, 0, sizeof *out);
    if (!m->cons)
        return bridge_fail("model not finished (bridge_model_finish)");
    struct incidence inc = {0};
    struct bridge_matrix km = {0};
    int rc = -1;
    if (build_incidence(m, &inc))
        goto done;
    int64_t n = m->n_nodes, width = inc.max_degree + 1;
    int bs2 = m->bs * m->bs;
    km.row_ptr = malloc(((size_t)n + 1) * sizeof *km.row_ptr);
    int32_t *scratch = malloc((size_t)width * sizeof *scratch);
    if (!km.row_ptr || !scratch) {
        free(scratch);
        bridge_fail("out of memory for %lld block rows", (long long)n);
        goto done;
    }
    km.row_ptr[0] = 0;
    for (int64_t i = 0; i < n; i++)
        km.row_ptr[i + 1] = km.row_ptr[i] + row_pattern(m, &inc, i, scratch);
    free(scratch);
    int64_t nnzb = km.row_ptr[n];
    km.col_idx = malloc((size_t)nnzb * sizeof *km.col_idx);
    km.val = malloc((size_t)nnzb * bs2 * sizeof *km.val);
    if (!km.col_idx || !km.val) {
        bridge_fail("out of memory for %lld blocks", (long long)nnzb);
        goto done;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        row_pattern(m, &inc, i, km.col_idx + km.row_ptr[i]);
        fill_row(m, &inc, &km, i);
    }
    if (bsrmv_matrix_wrap(&km.K, n, n, m->bs, nnzb, km.row_ptr, km.col_idx, km.val, BSRMV_DOUBLE,
                          BSRMV_COL_MAJOR) != BSRMV_SUCCESS) {
        bridge_fail("wrapping the stiffness matrix: %s", bsrmv_last_error());
        goto done;
    }
    *out = km;
    rc = 0;
done:
    free(inc.ptr);
    free(inc.mem);
    if (rc)
        bridge_matrix_free(&km);
    return rc;
}
