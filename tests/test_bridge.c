/* The bridge model of `bsrmv bridge`: element stiffness against closed-form
 * results (cantilever PL^3/3EI, axial PL/EA, a two-bar truss, a taut
 * string), the assembled K (symmetric, SPD, identity rows at supports), CG
 * with block Jacobi against dense LU on small bridges, gravity sagging the
 * deck, and mirror symmetry of symmetric load cases; the moving traffic
 * (--load-cases) solved as several right-hand sides. */
#include "bridge_model.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#define PI 3.14159265358979323846

static double rel_diff(const double *a, const double *b, int64_t n)
{
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) {
        d += (a[i] - b[i]) * (a[i] - b[i]);
        s += b[i] * b[i];
    }
    return sqrt(d / s);
}

static void close_to(const char *what, double got, double want, double tol)
{
    TU_CHECK(fabs(got - want) <= tol * fabs(want), "%s: %.15g, expected %.15g", what, got, want);
}

/* u = K^-1 f by CG + block Jacobi from the library; checks convergence. */
static void solve_cg(const bsrmv_matrix *K, const double *f, double *u, int64_t n, double rtol)
{
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, K));
    bsrmv_solve_options opt = {.rtol = rtol, .max_iter = 100000, .x0_zero = 1};
    bsrmv_solve_report rep;
    TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, K, P, f, u, n, &opt, &rep));
    TU_CHECK(rep.converged && rep.true_rel_residual <= 10 * rtol, "CG residual %g after %d",
             rep.true_rel_residual, rep.iterations);
    bsrmv_precond_destroy(P);
}

/* Assembles m and solves K u = f by dense LU (f: constrained dofs zeroed). */
static double *solve_dense(const struct bridge_model *m, double *f, struct bridge_matrix *km)
{
    int64_t n = bridge_unknowns(m);
    double *u = calloc((size_t)n, sizeof *u);
    TU_CHECK(u != NULL, "out of memory");
    TU_CHECK(bridge_assemble(m, km) == 0, "%s", bridge_last_error());
    bridge_zero_constrained(m, f);
    TU_CHECK(bridge_dense_solve(km->K, f, u) == 0, "%s", bridge_last_error());
    return u;
}

/* A cantilever of `parts` frame elements at angle `angle`, clamped at node
 * 0, with an end load p across the axis and q along it: the tip moves
 * pL^3/3EI across, qL/EA along, and turns pL^2/2EI (exact for Euler-
 * Bernoulli elements under nodal loads). */
static void cantilever(int parts, double angle, int use_cg)
{
    struct bridge_model m;
    TU_CHECK(bridge_model_init(&m, 3, 0, 0) == 0, "%s", bridge_last_error());
    const double L = 12.5, E = 210e9, A = 0.011, I = 3.7e-4, p = 4.0e4, q = -2.5e5;
    m.sec[BRIDGE_CHORD] = (struct bridge_section){E, A, I, 0, 1};
    double c = cos(angle), s = sin(angle);
    for (int i = 0; i <= parts; i++) {
        unsigned fix = i == 0 ? BRIDGE_FIX_U | BRIDGE_FIX_V | BRIDGE_FIX_R : 0;
        TU_CHECK(bridge_add_node(&m, 3 + c * L * i / parts, -1 + s * L * i / parts, fix,
                                 BRIDGE_DECK_TOP) == i,
                 "node %d", i);
        if (i > 0)
            TU_CHECK(bridge_add_member(&m, i - 1, i, BRIDGE_CHORD) == 0, "%s", bridge_last_error());
    }
    TU_CHECK(bridge_model_finish(&m) == 0, "%s", bridge_last_error());
    int64_t n = bridge_unknowns(&m), tip = (int64_t)parts * 3;
    double *f = calloc((size_t)n, sizeof *f);
    f[tip] = -s * p + c * q;
    f[tip + 1] = c * p + s * q;
    struct bridge_matrix km;
    double *u = solve_dense(&m, f, &km);
    if (use_cg) {
        double *v = calloc((size_t)n, sizeof *v);
        solve_cg(km.K, f, v, n, 1e-12);
        TU_CHECK(rel_diff(v, u, n) <= 1e-9, "cantilever CG vs LU %g", rel_diff(v, u, n));
        free(v);
    }
    double across = -s * u[tip] + c * u[tip + 1], along = c * u[tip] + s * u[tip + 1];
    close_to("cantilever tip deflection", across, p * L * L * L / (3 * E * I), 1e-9);
    close_to("cantilever tip rotation", u[tip + 2], p * L * L / (2 * E * I), 1e-9);
    close_to("cantilever axial shortening", along, q * L / (E * A), 1e-9);
    bridge_matrix_free(&km);
    bridge_model_free(&m);
    free(f);
    free(u);
}

/* Two bars from pins at (+-a, 0) to (0, -h) loaded by p down: each carries
 * N = p/(2 sin t) and the joint drops pL/(2 EA sin^2 t). */
static void two_bar_truss(int bs)
{
    struct bridge_model m;
    TU_CHECK(bridge_model_init(&m, bs, 0, 0) == 0, "%s", bridge_last_error());
    const double a = 3, h = 4, E = 200e9, A = 2e-3, p = 1e5, L = 5;
    m.sec[BRIDGE_HANGER] = (struct bridge_section){E, A, 0, 0, 0};
    unsigned pin = BRIDGE_FIX_U | BRIDGE_FIX_V;
    int64_t l = bridge_add_node(&m, -a, 0, pin, BRIDGE_ANCHOR);
    int64_t r = bridge_add_node(&m, a, 0, pin, BRIDGE_ANCHOR);
    int64_t j = bridge_add_node(&m, 0, -h, 0, BRIDGE_CABLE_NODE);
    TU_CHECK(bridge_add_member(&m, l, j, BRIDGE_HANGER) == 0 &&
                 bridge_add_member(&m, j, r, BRIDGE_HANGER) == 0,
             "%s", bridge_last_error());
    TU_CHECK(bridge_model_finish(&m) == 0, "%s", bridge_last_error());
    /* In a frame model the bar-only joint gets its rotation held. */
    TU_CHECK(bs == 2 || (m.cons[j] & BRIDGE_FIX_R), "rotation of a bar joint not held");
    double f[9] = {0};
    f[j * bs + 1] = -p;
    struct bridge_matrix km;
    double *u = solve_dense(&m, f, &km);
    double st = h / L;
    close_to("two-bar truss drop", u[j * bs + 1], -p * L / (2 * E * A * st * st), 1e-12);
    TU_CHECK(fabs(u[j * bs]) <= 1e-12 * fabs(u[j * bs + 1]), "two-bar truss sway %g", u[j * bs]);
    bridge_matrix_free(&km);
    bridge_model_free(&m);
    free(u);
}

/* A horizontal string of two bars pinned at both ends: the bars' axial
 * stiffness holds nothing across, so without tension the middle joint is
 * a mechanism (LU meets a zero pivot); under tension T the string term
 * makes it move p*l/(4T) under a load p across. */
static void taut_string(int bs)
{
    struct bridge_model m;
    TU_CHECK(bridge_model_init(&m, bs, 0, 0) == 0, "%s", bridge_last_error());
    const double l = 40, T = 2.5e6, p = 1.2e4;
    m.sec[BRIDGE_CABLE] = (struct bridge_section){195e9, 0.05, 0, 0, 0};
    unsigned pin = BRIDGE_FIX_U | BRIDGE_FIX_V;
    int64_t a = bridge_add_node(&m, 0, 5, pin, BRIDGE_ANCHOR);
    int64_t j = bridge_add_node(&m, 0.5 * l, 5, 0, BRIDGE_CABLE_NODE);
    int64_t b = bridge_add_node(&m, l, 5, pin, BRIDGE_ANCHOR);
    TU_CHECK(bridge_add_member(&m, a, j, BRIDGE_CABLE) == 0 &&
                 bridge_add_member(&m, j, b, BRIDGE_CABLE) == 0,
             "%s", bridge_last_error());
    TU_CHECK(bridge_model_finish(&m) == 0, "%s", bridge_last_error());
    double f[9] = {0}, u[9];
    f[j * bs + 1] = -p;
    struct bridge_matrix km;
    TU_CHECK(bridge_assemble(&m, &km) == 0, "%s", bridge_last_error());
    TU_CHECK(bridge_dense_solve(km.K, f, u) != 0, "slack string solved");
    bridge_matrix_free(&km);
    m.tension[0] = m.tension[1] = T;
    double *v = solve_dense(&m, f, &km);
    close_to("taut string deflection", v[j * bs + 1], -p * l / (4 * T), 1e-12);
    TU_CHECK(v[j * bs] == 0, "taut string sways %g", v[j * bs]);
    bridge_matrix_free(&km);
    bridge_model_free(&m);
    free(v);
}

/* Dense copy of K (row-major). */
static double *dense_of(const bsrmv_matrix *K, int64_t *n_out)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(K, &in));
    bsrmv_coo *coo;
    TU_OK(bsrmv_matrix_to_coo(K, &coo));
    int64_t n = in.rows;
    double *a = calloc((size_t)(n * n), sizeof *a);
    TU_CHECK(a != NULL, "out of memory");
    for (int64_t k = 0; k < coo->nnz; k++)
        a[coo->row[k] * n + coo->col[k]] += coo->val[k];
    bsrmv_coo_destroy(coo);
    *n_out = n;
    return a;
}

/* K of a model: symmetric (pattern and values), every diagonal block
 * stored, constrained dofs with identity rows and columns, and positive
 * definite (Cholesky succeeds). */
static void check_matrix(const struct bridge_model *m, const struct bridge_matrix *km)
{
    const int64_t *rp;
    const int32_t *ci;
    const void *vv;
    TU_OK(bsrmv_matrix_arrays(km->K, &rp, &ci, &vv));
    for (int64_t i = 0; i < m->n_nodes; i++) {
        int diag = 0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            diag |= ci[k] == i;
            int found = 0;
            for (int64_t t = rp[ci[k]]; t < rp[ci[k] + 1]; t++)
                found |= ci[t] == i;
            TU_CHECK(found, "block (%lld,%d) has no transpose", (long long)i, ci[k]);
        }
        TU_CHECK(diag, "block row %lld has no diagonal block", (long long)i);
    }
    int64_t n;
    double *a = dense_of(km->K, &n), amax = 0;
    for (int64_t k = 0; k < n * n; k++)
        amax = fmax(amax, fabs(a[k]));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < i; j++)
            TU_CHECK(fabs(a[i * n + j] - a[j * n + i]) <= 1e-14 * amax,
                     "K(%lld,%lld) = %g, K^T = %g", (long long)i, (long long)j, a[i * n + j],
                     a[j * n + i]);
    for (int64_t i = 0; i < n; i++)
        if (m->cons[i / m->bs] & (1u << (i % m->bs)))
            for (int64_t j = 0; j < n; j++)
                TU_CHECK(a[i * n + j] == (i == j) && a[j * n + i] == (i == j),
                         "constrained dof %lld: K(%lld,%lld) = %g", (long long)i, (long long)i,
                         (long long)j, a[i * n + j]);
    for (int64_t k = 0; k < n; k++) { /* Cholesky in place, lower triangle */
        double d = a[k * n + k];
        for (int64_t t = 0; t < k; t++)
            d -= a[k * n + t] * a[k * n + t];
        TU_CHECK(d > 0, "K not positive definite at pivot %lld (%g)", (long long)k, d);
        a[k * n + k] = sqrt(d);
        for (int64_t i = k + 1; i < n; i++) {
            double s = a[i * n + k];
            for (int64_t t = 0; t < k; t++)
                s -= a[i * n + t] * a[k * n + t];
            a[i * n + k] = s / a[k * n + k];
        }
    }
    free(a);
}

/* Mirror image of every node (x -> deck length - x); -1 if one has none. */
static int64_t *mirror_nodes(const struct bridge_model *m)
{
    int64_t *mir = malloc((size_t)m->n_nodes * sizeof *mir);
    double len = m->deck_x1 + m->deck_x0;
    for (int64_t i = 0; i < m->n_nodes; i++) {
        mir[i] = -1;
        for (int64_t j = 0; j < m->n_nodes; j++)
            if (fabs(m->x[j] - (len - m->x[i])) < 1e-6 && fabs(m->y[j] - m->y[i]) < 1e-6)
                mir[i] = j;
        TU_CHECK(mir[i] >= 0, "node %lld (%g, %g) has no mirror image", (long long)i, m->x[i],
                 m->y[i]);
    }
    return mir;
}

/* A small bridge under self-weight (+ a traffic load symmetric about the
 * middle): CG matches LU, the deck sags, the answer is mirror-symmetric. */
static void small_bridge(int bs, int64_t segments, double traffic)
{
    struct bridge_params p;
    bridge_default_params(&p, bs);
    p.segments = segments;
    struct bridge_model m;
    TU_CHECK(bridge_generate(&m, &p) == 0, "%s", bridge_last_error());
    int64_t n = bridge_unknowns(&m);
    double *f = calloc((size_t)n, sizeof *f), *v = calloc((size_t)n, sizeof *v);
    bridge_add_gravity(&m, BRIDGE_GRAVITY, f);
    bridge_add_deck_load(&m, m.roadway, m.deck_x0, m.deck_x1, f);
    double mid = 0.5 * (m.deck_x0 + m.deck_x1), quarter = 0.25 * (m.deck_x1 - m.deck_x0);
    bridge_add_deck_load(&m, traffic, mid - quarter, mid + quarter, f);
    struct bridge_matrix km;
    double *u = solve_dense(&m, f, &km);
    check_matrix(&m, &km);
    solve_cg(km.K, f, v, n, 1e-12);
    double d = rel_diff(v, u, n);
    TU_CHECK(d <= 1e-8, "bs %d, %lld segments: CG vs LU relative difference %g", bs,
             (long long)segments, d);

    /* Gravity pulls the deck down: the largest vertical deck displacement
     * and the middle of the bridge go down. */
    double umax = 0, mid_v = 0, mid_dist = INFINITY, peak = 0;
    for (int64_t i = 0; i < m.n_nodes; i++) {
        umax = fmax(umax, fabs(u[i * bs]) + fabs(u[i * bs + 1]));
        if (m.role[i] == BRIDGE_DECK_TOP && fabs(m.x[i] - mid) < mid_dist) {
            mid_dist = fabs(m.x[i] - mid);
            mid_v = u[i * bs + 1];
        }
        if ((m.role[i] == BRIDGE_DECK_TOP || m.role[i] == BRIDGE_DECK_BOTTOM) &&
            fabs(u[i * bs + 1]) > fabs(peak))
            peak = u[i * bs + 1];
    }
    TU_CHECK(peak < 0, "largest deck displacement %g m is upward", peak);
    TU_CHECK(mid_v < -1e-3 * umax, "mid-bridge deck moves %g m", mid_v);

    /* Mirror symmetry: u -> -u, v -> v, rotation -> -rotation. */
    int64_t *mir = mirror_nodes(&m);
    for (int64_t i = 0; i < m.n_nodes; i++)
        for (int d2 = 0; d2 < bs; d2++) {
            double sign = d2 == 1 ? 1 : -1;
            TU_CHECK(fabs(u[i * bs + d2] - sign * u[mir[i] * bs + d2]) <= 1e-9 * umax,
                     "node %lld dof %d: %g, mirror %g", (long long)i, d2, u[i * bs + d2],
                     u[mir[i] * bs + d2]);
        }
    free(mir);
    bridge_matrix_free(&km);
    bridge_model_free(&m);
    free(f);
    free(u);
    free(v);
}

/* Moving traffic: the cases span the deck end to end, each solved with
 * the others by bsrmv_solve_multi matches dense LU, and case j is the
 * mirror image of case cases-1-j. */
static void load_cases(int bs, int64_t segments, int cases)
{
    struct bridge_params p;
    bridge_default_params(&p, bs);
    p.segments = segments;
    struct bridge_model m;
    TU_CHECK(bridge_generate(&m, &p) == 0, "%s", bridge_last_error());
    const int64_t n = bridge_unknowns(&m);
    const double width = 0.25 * (m.deck_x1 - m.deck_x0);
    double ext[2];
    bridge_case_extent(&m, width, 0, cases, ext);
    close_to("first case start", ext[0], m.deck_x0, 1e-12);
    bridge_case_extent(&m, width, cases - 1, cases, ext);
    close_to("last case end", ext[1], m.deck_x1, 1e-12);

    double *F = malloc((size_t)(n * cases) * sizeof *F);
    double *U = malloc((size_t)(n * cases) * sizeof *U);
    TU_CHECK(F && U, "out of memory");
    bridge_load_cases(&m, 3e4, width, cases, F, n);
    struct bridge_matrix km;
    TU_CHECK(bridge_assemble(&m, &km) == 0, "%s", bridge_last_error());
    bsrmv_precond *P;
    TU_OK(bsrmv_precond_block_jacobi(&P, km.K));
    bsrmv_solve_options opt = {.rtol = 1e-12, .max_iter = 100000, .x0_zero = 1};
    bsrmv_solve_report *rep = malloc((size_t)cases * sizeof *rep);
    TU_OK(bsrmv_solve_multi(BSRMV_SOLVER_CG, km.K, P, n, cases, F, n, U, n, &opt, rep));
    double *ud = malloc((size_t)n * sizeof *ud);
    for (int j = 0; j < cases; j++) {
        TU_CHECK(rep[j].converged, "case %d: not converged", j);
        TU_CHECK(bridge_dense_solve(km.K, F + j * n, ud) == 0, "%s", bridge_last_error());
        const double d = rel_diff(U + j * n, ud, n);
        TU_CHECK(d <= 1e-8, "bs %d case %d: CG (with the other cases) vs LU %g", bs, j, d);
    }
    /* Mirror: u -> -u, v -> v, rotation -> -rotation. */
    int64_t *mir = mirror_nodes(&m);
    double umax = 0;
    for (int64_t e = 0; e < n * cases; e++)
        umax = fmax(umax, fabs(U[e]));
    for (int j = 0; j < cases; j++) {
        const double *a = U + j * n, *b = U + (cases - 1 - j) * n;
        for (int64_t i = 0; i < m.n_nodes; i++)
            for (int d2 = 0; d2 < bs; d2++) {
                const double sign = d2 == 1 ? 1 : -1;
                TU_CHECK(fabs(a[i * bs + d2] - sign * b[mir[i] * bs + d2]) <= 1e-8 * umax,
                         "case %d node %lld dof %d: %g, mirror case %g", j, (long long)i, d2,
                         a[i * bs + d2], b[mir[i] * bs + d2]);
            }
    }
    printf("  load cases bs %d, %lld segments: %d cases, iterations", bs, (long long)segments,
           cases);
    for (int j = 0; j < cases; j++)
        printf(" %d", rep[j].iterations);
    printf("\n");
    free(mir);
    free(ud);
    free(rep);
    free(F);
    free(U);
    bsrmv_precond_destroy(P);
    bridge_matrix_free(&km);
    bridge_model_free(&m);
}

/* The traffic load keeps its resultant whatever the panels it covers. */
static void deck_load_resultant(void)
{
    struct bridge_params p;
    bridge_default_params(&p, 2);
    p.segments = 17;
    struct bridge_model m;
    TU_CHECK(bridge_generate(&m, &p) == 0, "%s", bridge_last_error());
    int64_t n = bridge_unknowns(&m);
    double *f = calloc((size_t)n, sizeof *f), x0 = 0.37 * p.panel, x1 = 9.61 * p.panel;
    bridge_add_deck_load(&m, 3e4, x0, x1, f);
    double total = 0, moment = 0;
    for (int64_t i = 0; i < m.n_nodes; i++) {
        total += f[i * 2 + 1];
        moment += f[i * 2 + 1] * m.x[i];
    }
    close_to("deck load resultant", total, -3e4 * (x1 - x0), 1e-12);
    close_to("deck load moment", moment, -3e4 * (x1 - x0) * 0.5 * (x0 + x1), 1e-12);
    bridge_model_free(&m);
    free(f);
}

static void bad_input(void)
{
    struct bridge_params p;
    bridge_default_params(&p, 2);
    p.segments = 5;
    struct bridge_model m;
    TU_CHECK(bridge_generate(&m, &p) != 0 && bridge_last_error()[0], "5 segments accepted");
    TU_CHECK(bridge_model_init(&m, 4, 0, 0) != 0, "bs 4 accepted");
    TU_CHECK(bridge_model_init(&m, 2, 0, 0) == 0, "%s", bridge_last_error());
    int64_t a = bridge_add_node(&m, 0, 0, 0, BRIDGE_DECK_TOP);
    int64_t b = bridge_add_node(&m, 0, 0, 0, BRIDGE_DECK_TOP);
    TU_CHECK(bridge_add_member(&m, a, a, BRIDGE_CHORD) != 0, "member to itself accepted");
    TU_CHECK(bridge_add_member(&m, a, b, BRIDGE_CHORD) != 0, "zero-length member accepted");
    TU_CHECK(bridge_add_member(&m, a, 7, BRIDGE_CHORD) != 0, "member to node 7 accepted");
    struct bridge_matrix km;
    TU_CHECK(bridge_assemble(&m, &km) != 0, "unfinished model assembled");
    bridge_model_free(&m);
}

int main(void)
{
    cantilever(1, 0, 0);
    cantilever(5, PI / 6, 1);
    cantilever(3, -2.1, 0);
    two_bar_truss(2);
    two_bar_truss(3);
    taut_string(2);
    taut_string(3);
    deck_load_resultant();
    bad_input();
    small_bridge(2, 12, 0);
    small_bridge(2, 21, 4e4);
    small_bridge(3, 12, 0);
    small_bridge(3, 21, 4e4);
    small_bridge(2, 64, 3e4);
    small_bridge(3, 64, 0);
    load_cases(2, 21, 5);
    load_cases(3, 24, 4);
    printf("test_bridge: ok\n");
    return 0;
}
