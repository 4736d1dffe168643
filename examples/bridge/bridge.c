/* `bsrmv bridge`: matrix structural analysis of a suspension bridge.
 * Builds the model (bridge_geometry.c), assembles K in BSR
 * (bridge_assemble.c), solves K u = f by CG with block Jacobi on the CPU
 * or the GPU, reports size, solve, SpMV bandwidth and the largest deck
 * deflection, optionally checks against a dense LU solve, and draws the
 * deformed structure (bridge_draw.c, bridge_png.c).  With --load-cases,
 * the traffic moves along the deck: all placements are solved together
 * (several right-hand sides) and one by one, and both are timed. */
#include "args.h"
#include "bridge.h"
#include "bridge_draw.h"
#include "bridge_model.h"

#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RTOL 1e-10
#define DEFAULT_MAX_ITER 200000
#define SPMV_REPS 20
#define STR_(x) #x
#define STR(x) STR_(x)
#define PICTURE_WIDTH 1600
/* --check-dense: largest relative difference accepted. */
#define DENSE_TOL 1e-8

struct options {
    struct bridge_params geo;
    double traffic;  /* N/m, downward, per cable plane         */
    double range[2]; /* traffic extent, fractions of the deck  */
    int range_given;
    double rtol;
    int max_iter;
    int threads; /* 0: OpenMP default                      */
    int gpu;
    int check_dense;
    const char *svg, *png;
    const char *mtx; /* --write-mtx: K to Matrix Market, no solve */
    double scale; /* 0: automatic                           */
    int load_cases; /* 0: one load                            */
};

static void usage(FILE *f)
{
    fputs("usage: bsrmv bridge [options]\n"
          "Static analysis of a suspension bridge (one cable plane, self-weight plus an\n"
          "optional traffic load) by CG with block Jacobi on the BSR stiffness matrix.\n"
          "  --model truss|frame    pin-jointed bars, bs 2 (default); or frame deck and\n"
          "                         towers (u, v, rotation per node), bs 3\n"
          "  --segments N           deck panels, >= 6 (default 130: the Golden Gate's\n"
          "                         1280 m main span); the bridge grows with N\n"
          "  --panel M              panel length in m (default 15.24)\n"
          "  --roadway Q            roadway dead load in kN/m of deck, part of the\n"
          "                         self-weight (default 90)\n"
          "  --traffic Q            traffic load in kN/m on the deck (default 0)\n"
          "  --traffic-range A,B    where it acts, as fractions of the deck length\n"
          "                         (default: the main span)\n"
          "  --load-cases N         N placements of the traffic (--traffic > 0) on a\n"
          "                         stretch as long as --traffic-range's (default: a\n"
          "                         quarter of the deck), moved in equal steps from the\n"
          "                         left end of the deck to the right one; all solved\n"
          "                         together (CG per case, one SpMM per iteration) and\n"
          "                         one by one, both timed; the picture shows the case\n"
          "                         of the largest deflection\n"
          "  --rtol R               CG stops at ||f - K u|| <= R ||f|| (default 1e-10)\n"
          "  --max-iter N           CG iteration limit (default 200000)\n"
          "  --threads T            OpenMP threads (default: OMP_NUM_THREADS)\n"
          "  --gpu                  solve on the GPU (CUDA builds)\n"
          "  --check-dense          also solve by dense LU (<= 3000 unknowns) and compare\n"
          "  --write-mtx FILE       write the stiffness matrix K (Matrix Market, .gz\n"
          "                         compressed) and stop: no solve (for benchmarks)\n"
          "  --svg FILE, --png FILE the deformed structure over the undeformed one\n"
          "  --scale F              displacement magnification in the picture (default:\n"
          "                         automatic)\n"
          "Exit status: 0 ok (a solve that hit --max-iter prints a warning), 1 a failure\n"
          "or a failed --check-dense, 2 bad arguments.\n",
          f);
}

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.rtol = DEFAULT_RTOL, .max_iter = DEFAULT_MAX_ITER};
    bridge_default_params(&o->geo, 2);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if ((v = args_value(argc, argv, &i, "--model"))) {
            if (strcmp(v, "truss") && strcmp(v, "frame"))
                args_fail("--model: expected truss or frame, got '%s'", v);
            o->geo.bs = strcmp(v, "frame") ? 2 : 3;
        } else if ((v = args_value(argc, argv, &i, "--segments"))) {
            o->geo.segments = args_integer(a, v, 6, INT32_MAX / 4);
        } else if ((v = args_value(argc, argv, &i, "--panel"))) {
            o->geo.panel = args_number(a, v, 0.01, 1e4);
        } else if ((v = args_value(argc, argv, &i, "--traffic-range"))) {
            char *comma = strchr(v, ',');
            if (!comma)
                args_fail("--traffic-range: expected A,B, got '%s'", v);
            char first[64];
            snprintf(first, sizeof first, "%.*s", (int)(comma - v), v);
            o->range[0] = args_number(a, first, 0, 1);
            o->range[1] = args_number(a, comma + 1, 0, 1);
            if (!(o->range[1] > o->range[0]))
                args_fail("--traffic-range: need A < B, got '%s'", v);
            o->range_given = 1;
        } else if ((v = args_value(argc, argv, &i, "--roadway"))) {
            o->geo.roadway = 1e3 * args_number(a, v, 0, 1e6);
        } else if ((v = args_value(argc, argv, &i, "--traffic"))) {
            o->traffic = 1e3 * args_number(a, v, 0, 1e6);
        } else if ((v = args_value(argc, argv, &i, "--rtol"))) {
            o->rtol = args_number(a, v, 1e-16, 1);
        } else if ((v = args_value(argc, argv, &i, "--max-iter"))) {
            o->max_iter = (int)args_integer(a, v, 1, INT32_MAX);
        } else if ((v = args_value(argc, argv, &i, "--threads"))) {
            o->threads = (int)args_integer(a, v, 1, 4096);
        } else if ((v = args_value(argc, argv, &i, "--svg"))) {
            o->svg = v;
        } else if ((v = args_value(argc, argv, &i, "--png"))) {
            o->png = v;
        } else if ((v = args_value(argc, argv, &i, "--scale"))) {
            o->scale = args_number(a, v, 1e-12, 1e12);
        } else if (!strcmp(a, "--gpu")) {
            o->gpu = 1;
        } else if ((v = args_value(argc, argv, &i, "--load-cases"))) {
            o->load_cases = (int)args_integer(a, v, 1, 4096);
        } else if ((v = args_value(argc, argv, &i, "--write-mtx"))) {
            o->mtx = v;
        } else if (!strcmp(a, "--check-dense")) {
            o->check_dense = 1;
        } else {
            args_fail("unknown argument '%s'", a);
        }
    }
    if (o->load_cases && !(o->traffic > 0))
        args_fail("--load-cases moves the traffic load: give --traffic Q > 0");
    if (o->load_cases && o->check_dense)
        args_fail("--check-dense checks one load; not with --load-cases");
}

static int failed(const char *what, const char *msg)
{
    fprintf(stderr, "bsrmv bridge: %s: %s\n", what, msg);
    return 1;
}

/* ---- solving --------------------------------------------------------------- */

struct solve_result {
    bsrmv_solve_report rep;
    int converged;
    double spmv_s;        /* SpMV time on the solving device       */
    const char *spmv_how; /* how spmv_s was taken                  */
};

static double median(double *t, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            double s = t[j];
            t[j] = t[j - 1];
            t[j - 1] = s;
        }
    return t[n / 2];
}

/* Runs the CG status through: success and "not converged" give results. */
static int solve_status(bsrmv_status st, struct solve_result *r)
{
    if (st == BSRMV_SUCCESS || st == BSRMV_ERR_NOT_CONVERGED) {
        r->converged = st == BSRMV_SUCCESS;
        return 0;
    }
    return failed("CG", bsrmv_last_error());
}

static int solve_cpu(const bsrmv_matrix *K, const bsrmv_precond *P, const double *f, double *u,
                     int64_t n, const bsrmv_solve_options *opt, struct solve_result *r)
{
    if (solve_status(bsrmv_solve(BSRMV_SOLVER_CG, K, P, f, u, n, opt, &r->rep), r))
        return 1;
    double *y = malloc((size_t)n * sizeof *y), t[SPMV_REPS];
    if (!y)
        return failed("SpMV timing", "out of memory");
    for (int k = 0; k < SPMV_REPS; k++) {
        double t0 = omp_get_wtime();
        bsrmv_status st = bsrmv_spmv(BSRMV_OP_N, 1, K, u, n, 0, y, n);
        t[k] = omp_get_wtime() - t0;
        if (st != BSRMV_SUCCESS) {
            free(y);
            return failed("SpMV", bsrmv_last_error());
        }
    }
    free(y);
    r->spmv_s = median(t, SPMV_REPS);
    r->spmv_how = "median of " STR(SPMV_REPS) " calls";
    return 0;
}

/* The same on device 0: K, P, f and u travel once; the SpMV is timed over
 * SPMV_REPS back-to-back launches ended by a (synchronous) copy. */
static int solve_gpu(const bsrmv_matrix *K, const bsrmv_precond *P, const double *f, double *u,
                     int64_t n, const bsrmv_solve_options *opt, struct solve_result *r)
{
    bsrmv_gpu_matrix *dK = NULL;
    bsrmv_gpu_precond *dP = NULL;
    void *df = NULL, *du = NULL;
    size_t bytes = (size_t)n * sizeof(double);
    int rc = 1;
    const char *what = "GPU upload";
    if (bsrmv_gpu_matrix_upload(&dK, K, 0, NULL) || bsrmv_gpu_precond_upload(&dP, P, 0) ||
        bsrmv_gpu_malloc(&df, bytes) || bsrmv_gpu_malloc(&du, bytes) ||
        bsrmv_gpu_to_device(df, f, bytes))
        goto done;
    if (solve_status(bsrmv_gpu_solve(BSRMV_SOLVER_CG, dK, dP, df, du, n, opt, &r->rep, NULL), r))
        goto out;
    what = "GPU SpMV timing";
    double t0 = omp_get_wtime(), probe;
    for (int k = 0; k < SPMV_REPS; k++)
        if (bsrmv_gpu_spmv(BSRMV_OP_N, 1, dK, du, n, 0, df, n, NULL))
            goto done;
    if (bsrmv_gpu_to_host(&probe, df, sizeof probe))
        goto done;
    r->spmv_s = (omp_get_wtime() - t0) / SPMV_REPS;
    r->spmv_how = "mean of " STR(SPMV_REPS) " back-to-back launches";
    what = "GPU download";
    if (bsrmv_gpu_to_host(u, du, bytes))
        goto done;
    rc = 0;
    goto out;
done:
    failed(what, bsrmv_last_error());
out:
    bsrmv_gpu_free(df);
    bsrmv_gpu_free(du);
    bsrmv_gpu_precond_destroy(dP);
    bsrmv_gpu_matrix_destroy(dK);
    return rc;
}

/* ---- reporting --------------------------------------------------------------- */

/* The deck node with the largest vertical displacement. */
static int64_t max_deflection(const struct bridge_model *m, const double *u)
{
    int64_t best = -1;
    for (int64_t i = 0; i < m->n_nodes; i++)
        if ((m->role[i] == BRIDGE_DECK_TOP || m->role[i] == BRIDGE_DECK_BOTTOM) &&
            (best < 0 || fabs(u[i * m->bs + 1]) > fabs(u[best * m->bs + 1])))
            best = i;
    return best;
}

/* "main span, 50% of it" etc. */
static void where(const struct bridge_model *m, int64_t i, char *buf, size_t len)
{
    double x = m->x[i];
    const char *chord = m->role[i] == BRIDGE_DECK_TOP ? "top" : "bottom";
    if (x < m->main_x0 || x > m->main_x1)
        snprintf(buf, len, "%s side span, %s chord", x < m->main_x0 ? "left" : "right", chord);
    else
        snprintf(buf, len, "main span at %.0f%% of it, %s chord",
                 100 * (x - m->main_x0) / (m->main_x1 - m->main_x0), chord);
}

static double norm2(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

/* Dense LU solve of the same system; 0 when it agrees with u. */
static int check_dense(const bsrmv_matrix *K, const double *f, const double *u, int64_t n)
{
    double *ud = malloc((size_t)n * sizeof *ud);
    if (!ud)
        return failed("dense check", "out of memory");
    double t0 = omp_get_wtime();
    if (bridge_dense_solve(K, f, ud)) {
        free(ud);
        return failed("dense check", bridge_last_error());
    }
    double t = omp_get_wtime() - t0, ref = norm2(ud, n);
    for (int64_t i = 0; i < n; i++)
        ud[i] -= u[i];
    double rel = norm2(ud, n) / ref;
    free(ud);
    int ok = rel <= DENSE_TOL;
    printf("dense check   LU with partial pivoting, %.2f s: ||u_cg - u_lu|| / ||u_lu|| = "
           "%.2e  %s (tolerance %.0e)\n",
           t, rel, ok ? "OK" : "FAILED", DENSE_TOL);
    return !ok;
}

static int draw(const struct options *o, const struct bridge_model *m, const double *u,
                int64_t mark, const double load[2])
{
    char t0[256], t1[256], t2[256], w[96];
    double scale = o->scale > 0 ? o->scale : bridge_auto_scale(m, u);
    where(m, mark, w, sizeof w);
    snprintf(t0, sizeof t0,
             "bsrmv bridge: %s model, %" PRId64 " segments of %g m, %" PRId64 " nodes, %" PRId64
             " members",
             m->bs == 3 ? "frame" : "truss", o->geo.segments, o->geo.panel, m->n_nodes,
             m->n_members);
    if (o->traffic > 0)
        snprintf(t1, sizeof t1,
                 "self-weight + traffic %g kN/m on x = %.0f..%.0f m; "
                 "displacements x %g",
                 o->traffic / 1e3, load[0], load[1], scale);
    else
        snprintf(t1, sizeof t1, "self-weight; displacements x %g", scale);
    snprintf(t2, sizeof t2, "max deflection %.1f mm at x = %.1f m (%s)", 1e3 * u[mark * m->bs + 1],
             m->x[mark], w);
    struct bridge_picture pic = {m, u, scale, load[0], load[1], mark, {t0, t1, t2}};
    if (o->svg && bridge_write_svg(&pic, PICTURE_WIDTH, o->svg))
        return failed("SVG", bridge_last_error());
    if (o->png && bridge_write_png(&pic, PICTURE_WIDTH, o->png))
        return failed("PNG", bridge_last_error());
    if (o->svg || o->png)
        printf("picture       %s%s%s, displacements x %g\n", o->svg ? o->svg : "",
               o->svg && o->png ? " and " : "", o->png ? o->png : "", scale);
    return 0;
}

static void report(const struct options *o, const bsrmv_matrix *K, const struct solve_result *r,
                   double precond_s)
{
    char dev[32] = "GPU";
    int threads = bsrmv_num_threads(), it = r->rep.iterations;
    if (!o->gpu)
        snprintf(dev, sizeof dev, "CPU, %d thread%s", threads, threads == 1 ? "" : "s");
    double bytes = bsrmv_matrix_spmv_bytes(K);
    printf("solve         CG + block Jacobi (%s): %s after %d iterations\n", dev,
           r->converged ? "converged" : "NOT converged", it);
    printf("              residual %.2e (recurrence), %.2e (recomputed), rtol %.0e\n",
           r->rep.rel_residual, r->rep.true_rel_residual, o->rtol);
    printf("              %.3f s, %.3f ms per iteration; block Jacobi setup %.3f s\n",
           r->rep.seconds, it > 0 ? 1e3 * r->rep.seconds / it : 0.0, precond_s);
    printf("SpMV          %.3f ms, %.1f GB/s (%.1f MB moved per product, %s)\n", 1e3 * r->spmv_s,
           bytes / r->spmv_s * 1e-9, bytes * 1e-6, r->spmv_how);
}

/* f = self-weight + traffic, zero at the supports; load[] gets the traffic
 * extent in m (empty without traffic).  Prints the totals. */
static void set_loads(const struct options *o, const struct bridge_model *m, double *f,
                      double load[2])
{
    load[0] = m->main_x0;
    load[1] = m->main_x1;
    if (o->range_given)
        for (int k = 0; k < 2; k++)
            load[k] = m->deck_x0 + o->range[k] * (m->deck_x1 - m->deck_x0);
    bridge_add_gravity(m, BRIDGE_GRAVITY, f);
    bridge_add_deck_load(m, m->roadway, m->deck_x0, m->deck_x1, f);
    double weight = 0;
    for (int64_t i = 0; i < m->n_nodes; i++)
        weight -= f[i * m->bs + 1];
    printf("loads         self-weight %.1f MN (members and a %g kN/m roadway)", weight * 1e-6,
           m->roadway / 1e3);
    if (o->traffic > 0) {
        bridge_add_deck_load(m, o->traffic, load[0], load[1], f);
        printf(", traffic %g kN/m on x = %.1f..%.1f m (%.1f MN)", o->traffic / 1e3, load[0],
               load[1], o->traffic * (load[1] - load[0]) * 1e-6);
    } else {
        load[0] = load[1] = 0;
    }
    printf("\n");
    bridge_zero_constrained(m, f);
}

/* K as a scalar Matrix Market file (explicit zeros inside blocks included,
 * so an aligned split at the model's bs gives back the same blocks). */
static int write_matrix(const bsrmv_matrix *K, const char *path)
{
    bsrmv_coo *coo = NULL;
    double t0 = omp_get_wtime();
    if (bsrmv_matrix_to_coo(K, &coo) != BSRMV_SUCCESS || bsrmv_mm_write(path, coo) != BSRMV_SUCCESS) {
        bsrmv_coo_destroy(coo);
        return failed("writing the matrix", bsrmv_last_error());
    }
    printf("matrix        %s: %" PRId64 " x %" PRId64 ", %" PRId64 " entries, %.2f s\n", path, coo->m,
           coo->n, coo->nnz, omp_get_wtime() - t0);
    bsrmv_coo_destroy(coo);
    return 0;
}

/* ---- load cases ---------------------------------------------------------------- */

/* The k columns of F solved together into U (reports rep) and one by one
 * into U1 (rep1); secs[] the wall time of each way. */
static int cases_cpu(const bsrmv_matrix *K, const bsrmv_precond *P, const double *F, double *U,
                     double *U1, int64_t n, int k, const bsrmv_solve_options *opt,
                     bsrmv_solve_report *rep, bsrmv_solve_report *rep1, double secs[2])
{
    struct solve_result r;
    double t0 = omp_get_wtime();
    if (solve_status(bsrmv_solve_multi(BSRMV_SOLVER_CG, K, P, n, k, F, n, U, n, opt, rep), &r))
        return 1;
    secs[0] = omp_get_wtime() - t0;
    t0 = omp_get_wtime();
    for (int j = 0; j < k; j++)
        if (solve_status(bsrmv_solve(BSRMV_SOLVER_CG, K, P, F + (size_t)j * (size_t)n,
                                     U1 + (size_t)j * (size_t)n, n, opt, &rep1[j]),
                         &r))
            return 1;
    secs[1] = omp_get_wtime() - t0;
    return 0;
}

/* The same on device 0 (K, P, F uploaded first, the solutions downloaded
 * after each way, outside the timed spans). */
static int cases_gpu(const bsrmv_matrix *K, const bsrmv_precond *P, const double *F, double *U,
                     double *U1, int64_t n, int k, const bsrmv_solve_options *opt,
                     bsrmv_solve_report *rep, bsrmv_solve_report *rep1, double secs[2])
{
    bsrmv_gpu_matrix *dK = NULL;
    bsrmv_gpu_precond *dP = NULL;
    double *dF = NULL, *dU = NULL;
    const size_t bytes = (size_t)n * (size_t)k * sizeof(double);
    struct solve_result r;
    int rc = 1;
    const char *what = "GPU upload";
    if (bsrmv_gpu_matrix_upload(&dK, K, 0, NULL) || bsrmv_gpu_precond_upload(&dP, P, 0) ||
        bsrmv_gpu_malloc((void **)&dF, bytes) || bsrmv_gpu_malloc((void **)&dU, bytes) ||
        bsrmv_gpu_to_device(dF, F, bytes))
        goto done;
    double t0 = omp_get_wtime();
    if (solve_status(bsrmv_gpu_solve_multi(BSRMV_SOLVER_CG, dK, dP, n, k, dF, n, dU, n, opt, rep,
                                           NULL),
                     &r))
        goto out;
    secs[0] = omp_get_wtime() - t0;
    what = "GPU download";
    if (bsrmv_gpu_to_host(U, dU, bytes))
        goto done;
    t0 = omp_get_wtime();
    for (int j = 0; j < k; j++)
        if (solve_status(bsrmv_gpu_solve(BSRMV_SOLVER_CG, dK, dP, dF + (size_t)j * (size_t)n,
                                         dU + (size_t)j * (size_t)n, n, opt, &rep1[j], NULL),
                         &r))
            goto out;
    secs[1] = omp_get_wtime() - t0;
    if (bsrmv_gpu_to_host(U1, dU, bytes))
        goto done;
    rc = 0;
    goto out;
done:
    failed(what, bsrmv_last_error());
out:
    bsrmv_gpu_free(dF);
    bsrmv_gpu_free(dU);
    bsrmv_gpu_precond_destroy(dP);
    bsrmv_gpu_matrix_destroy(dK);
    return rc;
}

/* --load-cases: the table of cases, the two timings, the agreement of the
 * two ways, and the picture of the case that deflects most. */
static int run_cases(const struct options *o, const struct bridge_model *m, const bsrmv_matrix *K,
                     const bsrmv_precond *P, int64_t n, double precond_s)
{
    const int k = o->load_cases, bs = m->bs;
    const double deck = m->deck_x1 - m->deck_x0;
    const double width = o->range_given ? (o->range[1] - o->range[0]) * deck : 0.25 * deck;
    const size_t nk = (size_t)n * (size_t)k;
    double *F = malloc(nk * sizeof *F), *U = malloc(nk * sizeof *U), *U1 = malloc(nk * sizeof *U1);
    bsrmv_solve_report *rep = malloc(2 * (size_t)k * sizeof *rep);
    int rc = 1;
    if (!F || !U || !U1 || !rep) {
        failed("load cases", "out of memory");
        goto done;
    }
    bridge_load_cases(m, o->traffic, width, k, F, n);
    double first[2], last[2];
    bridge_case_extent(m, width, 0, k, first);
    bridge_case_extent(m, width, k - 1, k, last);
    printf("loads         self-weight (members and a %g kN/m roadway) + traffic %g kN/m on\n"
           "              %.1f m of deck, %d placement%s: x = %.1f..%.1f m to %.1f..%.1f m\n",
           m->roadway / 1e3, o->traffic / 1e3, width, k, k == 1 ? "" : "s", first[0], first[1],
           last[0], last[1]);
    bsrmv_solve_options opt = {.rtol = o->rtol, .max_iter = o->max_iter, .x0_zero = 1};
    double secs[2];
    bsrmv_solve_report *rep1 = rep + k;
    if ((o->gpu ? cases_gpu : cases_cpu)(K, P, F, U, U1, n, k, &opt, rep, rep1, secs))
        goto done;

    printf("case  traffic on x (m)          iterations (alone)  max deflection\n");
    int worst = -1, all = 1;
    int64_t worst_mark = 0;
    double agree = 0;
    for (int j = 0; j < k; j++) {
        const double *u = U + (size_t)j * (size_t)n, *u1 = U1 + (size_t)j * (size_t)n;
        double ext[2], d = 0, s = 0;
        bridge_case_extent(m, width, j, k, ext);
        const int64_t mk = max_deflection(m, u);
        char w[96];
        where(m, mk, w, sizeof w);
        printf("%4d  %9.1f .. %-9.1f %10d (%6d)    ", j + 1, ext[0], ext[1], rep[j].iterations,
               rep1[j].iterations);
        /* as for one load: a stopped CG's iterate is no displacement field */
        if (rep[j].converged)
            printf("%8.1f mm at x = %.1f m (%s)\n", 1e3 * u[mk * bs + 1], m->x[mk], w);
        else
            printf("not reported: CG did not converge\n");
        all &= rep[j].converged && rep1[j].converged;
        if (worst < 0 || fabs(u[mk * bs + 1]) > fabs(U[(size_t)worst * n + worst_mark * bs + 1])) {
            worst = j;
            worst_mark = mk;
        }
        for (int64_t i = 0; i < n; i++) {
            d += (u[i] - u1[i]) * (u[i] - u1[i]);
            s += u1[i] * u1[i];
        }
        agree = fmax(agree, sqrt(d / s));
    }
    char dev[32] = "GPU";
    const int threads = bsrmv_num_threads();
    if (!o->gpu)
        snprintf(dev, sizeof dev, "CPU, %d thread%s", threads, threads == 1 ? "" : "s");
    printf("solve         CG + block Jacobi per case (%s), rtol %.0e; block Jacobi setup "
           "%.3f s\n",
           dev, o->rtol, precond_s);
    printf("together      %.3f s: %d right-hand sides, one SpMM per iteration\n", secs[0], k);
    printf("one by one    %.3f s: %d solves, one SpMV per iteration each; together is %.2fx "
           "as fast\n",
           secs[1], k, secs[1] / secs[0]);
    printf("agreement     max ||u_together - u_alone|| / ||u_alone|| = %.1e\n", agree);
    if (!all) {
        fprintf(stderr, "bsrmv bridge: warning: a load case stopped before rtol %.0e\n", o->rtol);
        rc = 0;
        goto done;
    }
    double ext[2];
    bridge_case_extent(m, width, worst, k, ext);
    rc = draw(o, m, U + (size_t)worst * (size_t)n, worst_mark, ext);
done:
    free(F);
    free(U);
    free(U1);
    free(rep);
    return rc;
}

/* ---- the command -------------------------------------------------------------- */

int bridge_main(int argc, char **argv)
{
    struct options o;
    args_init("bsrmv bridge", "bsrmv bridge [--model truss|frame] [--segments N] [options]");
    parse(argc, argv, &o);
    if (o.threads)
        omp_set_num_threads(o.threads);

    struct bridge_model m;
    struct bridge_matrix km = {0};
    bsrmv_precond *P = NULL;
    double *f = NULL, *u = NULL;
    int rc = 1;
    double t0 = omp_get_wtime();
    if (bridge_generate(&m, &o.geo))
        return failed("model", bridge_last_error());
    double t_model = omp_get_wtime() - t0;
    t0 = omp_get_wtime();
    if (bridge_assemble(&m, &km)) {
        failed("assembly", bridge_last_error());
        goto done;
    }
    double t_asm = omp_get_wtime() - t0;
    int64_t n = bridge_unknowns(&m);
    bsrmv_matrix_info in;
    bsrmv_matrix_get_info(km.K, &in);
    printf("model         %s, %" PRId64 " segments of %g m: main span %.1f m, deck %.1f m\n",
           m.bs == 3 ? "frame (u, v, rotation per node)" : "truss (u, v per node)", o.geo.segments,
           o.geo.panel, m.main_x1 - m.main_x0, m.deck_x1 - m.deck_x0);
    printf("size          %" PRId64 " nodes, %" PRId64 " members, %" PRId64
           " unknowns, bs %d, nnzb %" PRId64 " (%.1f MB of values)\n",
           m.n_nodes, m.n_members, n, in.bs, in.nnzb, in.nnzb * in.bs * in.bs * 8e-6);
    printf("build         geometry %.3f s, assembly into BSR %.3f s\n", t_model, t_asm);
    if (o.mtx) {
        rc = write_matrix(km.K, o.mtx);
        goto done;
    }

    t0 = omp_get_wtime();
    if (bsrmv_precond_block_jacobi(&P, km.K)) {
        failed("block Jacobi", bsrmv_last_error());
        goto done;
    }
    double t_prec = omp_get_wtime() - t0;
    if (o.load_cases) {
        rc = run_cases(&o, &m, km.K, P, n, t_prec);
        goto done;
    }

    f = calloc((size_t)n, sizeof *f);
    u = calloc((size_t)n, sizeof *u);
    if (!f || !u) {
        failed("loads", "out of memory");
        goto done;
    }
    double load[2];
    set_loads(&o, &m, f, load);
    bsrmv_solve_options opt = {.rtol = o.rtol, .max_iter = o.max_iter, .x0_zero = 1};
    struct solve_result r = {0};
    if ((o.gpu ? solve_gpu : solve_cpu)(km.K, P, f, u, n, &opt, &r))
        goto done;
    report(&o, km.K, &r, t_prec);
    if (!r.converged) {
        /* the last iterate of a stopped CG is not a displacement field:
         * neither its deflection nor its picture would mean anything */
        fprintf(stderr, "bsrmv bridge: warning: CG stopped before rtol %.0e: %s\n", o.rtol,
                bsrmv_last_error());
        printf("deflection    not reported: CG did not converge (the run is a timing only)\n");
        rc = o.check_dense ? check_dense(km.K, f, u, n) : 0;
        goto done;
    }

    int64_t mark = max_deflection(&m, u);
    char w[96];
    where(&m, mark, w, sizeof w);
    printf("deflection    max %.1f mm at x = %.1f m (%s)\n", 1e3 * u[mark * m.bs + 1], m.x[mark],
           w);
    rc = 0;
    if (o.check_dense)
        rc = check_dense(km.K, f, u, n);
    if (draw(&o, &m, u, mark, load))
        rc = 1;
done:
    free(f);
    free(u);
    bsrmv_precond_destroy(P);
    bridge_matrix_free(&km);
    bridge_model_free(&m);
    return rc;
}
