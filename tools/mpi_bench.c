/* bsrmv_mpi_bench: the distributed SpMV, timed.
 *
 *   mpiexec -n P bsrmv_mpi_bench (--grid N|NX,NY,NZ | --powerlaw MB,MEAN,MAX | --mtx FILE)
 *                                --bs LIST [options]
 *
 * Rank 0 builds (or reads) the matrix and distributes it balanced by
 * blocks.  Each timed SpMV starts after a barrier and counts as the
 * slowest rank's time; the record gives the median.  Beside it, on the
 * same handle: the exchange alone (bsrmv_dist_halo_exchange) and the two
 * products alone (local + off-rank, no exchange), so the record says how
 * much of the exchange the local product hid:
 *   hidden = 1 - (wait after the local product) / (exchange alone) (CPU),
 *   hidden_overlap = (products + exchange - SpMV) / exchange (CPU, GPU).
 * One JSON line per configuration on rank 0's stdout. */
#include "args.h"
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"
#include "bsrmv_mpi.h"
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* The types by bsrmv_type, as bsrmv bench names them: --type takes the
 * short or the long name, the records carry the long one. */
static const char *const type_short[4] = {"float", "double", "c", "z"};
static const char *const type_names[4] = {"float", "double", "complex-float", "complex-double"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -n P bsrmv_mpi_bench MATRIX --bs LIST [options]\n"
            "  MATRIX: --grid N|NX,NY,NZ [--stencil 7|27] | --powerlaw MB,MEAN,MAX\n"
            "          [--exponent E] | --mtx FILE [--promote]\n"
            "  --bs LIST          block sizes, comma-separated (default 3)\n"
            "  --type double|float|z|c (z, c: complex double, float; CPU ranks),\n"
            "  --order col|row, --op n|t|c\n"
            "  --reps R           timed SpMVs (default 30), after 3 warm-up calls\n"
            "  --gpu              one GPU per rank (device = rank %% GPUs), halo by NCCL\n"
            "  --k K              also bsrmv_dist_spmm of K vectors (column layout, the\n"
            "                     --op, either storage), its time per vector against\n"
            "                     the SpMV's (\"mpi_spmm\"; CPU ranks)\n"
            "  --sym              also the matrix in symmetric storage (its diagonal and\n"
            "                     upper blocks, values as stored), timed after the full\n"
            "                     one (\"storage\" in the records; square, CPU ranks;\n"
            "                     with --solve: cg only)\n"
            "  --solve cg|bicgstab|gmres --reservoir N|NX,NY,NZ: a distributed solve with\n"
            "                     block Jacobi on the reservoir matrix (cg: its SPD\n"
            "                     sibling), bs = components; time per iteration (with\n"
            "                     --gpu: and its efficiency against the bandwidth bound)\n"
            "  --repeat R         solves timed after one warm-up, median (default 3)\n"
            "  --nrhs K           with --solve: also K right-hand sides by\n"
            "                     bsrmv_dist_solve_multi against K solves one by one\n"
            "                     (\"mpi_solve_multi\")\n"
            "  --max-iter N       iteration limit of a solve (default: the library's)\n");
}

typedef struct opts {
    int64_t grid[3];
    int stencil;
    int64_t pl[3];
    double exponent;
    const char *mtx;
    int promote;
    int bs[16], nbs;
    bsrmv_type type;
    bsrmv_order order;
    bsrmv_op op;
    int reps, gpu, sym;
    int k;    /* --k: also bsrmv_dist_spmm of k vectors */
    int nrhs; /* --nrhs: also bsrmv_dist_solve_multi of nrhs columns */
    int64_t reservoir[3];
    int solve; /* 0: SpMV; else 1 + bsrmv_solver */
    int repeat, max_iter;
} opts;

static void parse_list(const char *opt, const char *s, int64_t *v, int n, int64_t lo, int64_t hi)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    int k = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (k < n)
            v[k++] = args_integer(opt, tok, lo, hi);
        else
            args_fail("%s: at most %d values", opt, n);
    if (n == 3 && k == 1 && (!strcmp(opt, "--grid") || !strcmp(opt, "--reservoir")))
        v[1] = v[2] = v[0], k = 3;
    if (k != n)
        args_fail("%s: expected %d values, got '%s'", opt, n, s);
}

static opts parse(int argc, char **argv)
{
    opts o = {.stencil = 27, .exponent = 2.0, .type = BSRMV_DOUBLE, .order = BSRMV_COL_MAJOR,
              .op = BSRMV_OP_N, .reps = 30, .bs = {3}, .nbs = 1, .repeat = 3};
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = args_value(argc, argv, &i, "--grid")))
            parse_list("--grid", v, o.grid, 3, 1, 1 << 20);
        else if ((v = args_value(argc, argv, &i, "--stencil")))
            o.stencil = (int)args_integer("--stencil", v, 7, 27);
        else if ((v = args_value(argc, argv, &i, "--powerlaw")))
            parse_list("--powerlaw", v, o.pl, 3, 1, INT32_MAX);
        else if ((v = args_value(argc, argv, &i, "--exponent")))
            o.exponent = args_number("--exponent", v, 1.01, 10);
        else if ((v = args_value(argc, argv, &i, "--mtx")))
            o.mtx = v;
        else if (!strcmp(argv[i], "--promote"))
            o.promote = 1;
        else if ((v = args_value(argc, argv, &i, "--bs"))) {
            int64_t b[16];
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            o.nbs = 0;
            for (char *tok = strtok(buf, ","); tok && o.nbs < 16; tok = strtok(NULL, ","))
                b[o.nbs++] = args_integer("--bs", tok, 1, 1024);
            for (int k = 0; k < o.nbs; k++)
                o.bs[k] = (int)b[k];
        } else if ((v = args_value(argc, argv, &i, "--type"))) {
            int t = 0;
            while (t < 4 && strcmp(v, type_short[t]) && strcmp(v, type_names[t]))
                t++;
            if (t == 4)
                args_fail("--type: expected double, float, z or c, got '%s'", v);
            o.type = (bsrmv_type)t;
        } else if ((v = args_value(argc, argv, &i, "--order"))) {
            if (strcmp(v, "col") && strcmp(v, "row"))
                args_fail("--order: expected col or row, got '%s'", v);
            o.order = !strcmp(v, "row") ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR;
        } else if ((v = args_value(argc, argv, &i, "--op"))) {
            if (strcmp(v, "n") && strcmp(v, "t") && strcmp(v, "c"))
                args_fail("--op: expected n, t or c, got '%s'", v);
            o.op = *v == 'n' ? BSRMV_OP_N : *v == 't' ? BSRMV_OP_T : BSRMV_OP_C;
        }
        else if ((v = args_value(argc, argv, &i, "--reps")))
            o.reps = (int)args_integer("--reps", v, 1, 100000);
        else if ((v = args_value(argc, argv, &i, "--repeat")))
            o.repeat = (int)args_integer("--repeat", v, 1, 1000);
        else if ((v = args_value(argc, argv, &i, "--max-iter")))
            o.max_iter = (int)args_integer("--max-iter", v, 1, 1 << 30);
        else if (!strcmp(argv[i], "--gpu"))
            o.gpu = 1;
        else if (!strcmp(argv[i], "--sym"))
            o.sym = 1;
        else if ((v = args_value(argc, argv, &i, "--k")))
            o.k = (int)args_integer("--k", v, 1, 256);
        else if ((v = args_value(argc, argv, &i, "--nrhs")))
            o.nrhs = (int)args_integer("--nrhs", v, 2, 256);
        else if ((v = args_value(argc, argv, &i, "--reservoir")))
            parse_list("--reservoir", v, o.reservoir, 3, 1, 1 << 20);
        else if ((v = args_value(argc, argv, &i, "--solve"))) {
            if (!strcmp(v, "cg"))
                o.solve = 1 + BSRMV_SOLVER_CG;
            else if (!strcmp(v, "bicgstab"))
                o.solve = 1 + BSRMV_SOLVER_BICGSTAB;
            else if (!strcmp(v, "gmres"))
                o.solve = 1 + BSRMV_SOLVER_GMRES;
            else
                args_fail("--solve: expected cg, bicgstab or gmres, got '%s'", v);
        }
        else if (!strcmp(argv[i], "--help")) {
            if (rank == 0)
                usage(stdout);
            MPI_Finalize();
            exit(0);
        } else
            args_fail("unknown option '%s'", argv[i]);
    }
    if (o.solve && !o.reservoir[0])
        args_fail("--solve needs --reservoir");
    if (o.nrhs && (!o.solve || o.gpu))
        args_fail("--nrhs goes with --solve on CPU ranks");
    if (o.k && (o.gpu || o.solve))
        args_fail("--k: CPU ranks, no --solve");
    if (o.sym && (o.gpu || (o.solve && o.solve != 1 + BSRMV_SOLVER_CG)))
        args_fail("--sym: CPU ranks (no --gpu), and of the solvers CG (the SPD matrix)");
    if (!o.solve && !o.grid[0] && !o.pl[0] && !o.mtx)
        args_fail("give a matrix: --grid, --powerlaw or --mtx");
    return o;
}

static void die(bsrmv_status st, const char *what)
{
    if (st == BSRMV_SUCCESS)
        return;
    fprintf(stderr, "bsrmv_mpi_bench (rank %d): %s: %s: %s\n", rank, what,
            bsrmv_status_string(st), bsrmv_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The slowest rank's time of fn, per repetition; the median. */
typedef void (*timed_fn)(void *ctx);
static double time_max(timed_fn fn, void *ctx, int reps, double *best)
{
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t)
        die(BSRMV_ERR_NOMEM, "timings");
    for (int r = 0; r < 3; r++)
        fn(ctx);
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        fn(ctx);
        double dt = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[r] = dt;
    }
    const double m = median(t, reps);
    *best = t[0];
    free(t);
    return m;
}

/* bsrmv_dist_spmm's arguments (--k). */
typedef struct spmm_run {
    bsrmv_dist_matrix *D;
    bsrmv_op op;
    int k;
    const void *X;
    void *Y;
    int64_t ldx, ldy;
} spmm_run;

static void do_spmm(void *c)
{
    spmm_run *m = c;
    die(bsrmv_dist_spmm(m->op, 1.0, m->D, m->k, m->X, m->ldx, 0.0, m->Y, m->ldy,
                        BSRMV_LAYOUT_COL),
        "SpMM");
}

typedef struct run {
    bsrmv_dist_matrix *D;
    const bsrmv_matrix *local, *offrank;
    bsrmv_op op;
    void *x, *y, *ghost;
    void *obuf;    /* the off-rank product's rows when the part is compressed */
    void *gsum;    /* symmetric storage: the transposed off-rank product */
    int sym;
    int64_t nx, ny, ng, rows;
    int64_t orows; /* rows (values) of the off-rank part */
    int compressed;
#ifdef BSRMV_HAVE_NCCL
    bsrmv_dist_gpu_matrix *dD;
    bsrmv_gpu_matrix *dl, *doff;
#endif
} run;

static void do_spmv(void *c)
{
    run *r = c;
#ifdef BSRMV_HAVE_NCCL
    if (r->dD) {
        die(bsrmv_dist_gpu_spmv(r->op, 1.0, r->dD, r->x, r->nx, 0.0, r->y, r->ny, NULL),
            "GPU SpMV");
        die(bsrmv_dist_gpu_sync(r->dD), "GPU sync");
        return;
    }
#endif
    die(bsrmv_dist_spmv(r->op, 1.0, r->D, r->x, r->nx, 0.0, r->y, r->ny), "SpMV");
}

static void do_exchange(void *c)
{
    run *r = c;
#ifdef BSRMV_HAVE_NCCL
    if (r->dD) {
        die(bsrmv_dist_gpu_halo_exchange(r->dD, r->x, r->nx, NULL), "GPU exchange");
        die(bsrmv_dist_gpu_sync(r->dD), "GPU sync");
        return;
    }
#endif
    die(bsrmv_dist_halo_exchange(r->D, r->x, r->nx), "exchange");
}

/* The products alone (OP_N), on the bench's own ghost vector. */
static void do_products(void *c)
{
    run *r = c;
    const int64_t rows = r->rows;
#ifdef BSRMV_HAVE_NCCL
    if (r->dD) {
        die(bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, r->dl, r->x, r->nx, 0.0, r->y, rows, NULL), "local");
        if (r->ng > 0)
            die(bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, r->doff, r->ghost, r->ng, r->compressed ? 0.0 : 1.0,
                               r->compressed ? r->obuf : r->y, r->orows, NULL),
                "off-rank");
        die(bsrmv_dist_gpu_sync(r->dD), "GPU sync");
        return;
    }
#endif
    die(bsrmv_spmv(BSRMV_OP_N, 1.0, r->local, r->x, r->nx, 0.0, r->y, rows), "local");
    if (r->ng > 0)
        die(bsrmv_spmv(BSRMV_OP_N, 1.0, r->offrank, r->ghost, r->ng, r->compressed ? 0.0 : 1.0,
                       r->compressed ? r->obuf : r->y, r->orows),
            "off-rank");
    if (r->sym && r->ng > 0) /* the off-rank blocks again, transposed */
        die(bsrmv_spmv(BSRMV_OP_T, 1.0, r->offrank, r->compressed ? r->obuf : r->x, r->orows, 0.0,
                       r->gsum, r->ng),
            "off-rank transposed");
}

/* G's diagonal and upper blocks in symmetric storage (values as they are:
 * the times are what matter), on the root. */
static bsrmv_matrix *upper_of(const bsrmv_matrix *G)
{
    if (rank != 0)
        return NULL;
    bsrmv_matrix_info in;
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    die(bsrmv_matrix_get_info(G, &in), "info");
    die(bsrmv_matrix_arrays(G, &rp, &ci, &val), "arrays");
    const size_t blk = (size_t)in.bs * (size_t)in.bs * bsrmv_type_size(in.type);
    int64_t *urp = malloc((size_t)(in.mb + 1) * sizeof *urp);
    int32_t *uci = malloc((size_t)(in.nnzb + 1) * sizeof *uci);
    char *uval = malloc((size_t)in.nnzb * blk + 1);
    if (!urp || !uci || !uval)
        die(BSRMV_ERR_NOMEM, "the symmetric storage");
    int64_t n = 0;
    urp[0] = 0;
    for (int64_t i = 0; i < in.mb; i++) {
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
            if (ci[k] >= i) {
                uci[n] = ci[k];
                memcpy(uval + (size_t)n++ * blk, (const char *)val + (size_t)k * blk, blk);
            }
        urp[i + 1] = n;
    }
    if (in.mb != in.nb) {
        fprintf(stderr, "bsrmv_mpi_bench: --sym needs a square matrix, not %lld x %lld blocks\n",
                (long long)in.mb, (long long)in.nb);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bsrmv_matrix *S = NULL;
    die(bsrmv_matrix_create_sym(&S, in.nb, in.bs, n, urp, uci, uval, in.type, in.order),
        "the symmetric storage");
    free(urp);
    free(uci);
    free(uval);
    return S;
}

static bsrmv_matrix *build(const opts *o, int bs, char *name, size_t len)
{
    bsrmv_matrix *G = NULL;
    bsrmv_status st = BSRMV_SUCCESS;
    if (o->grid[0]) {
        snprintf(name, len, "grid%d_%lldx%lldx%lld", o->stencil, (long long)o->grid[0],
                 (long long)o->grid[1], (long long)o->grid[2]);
        if (rank == 0)
            st = bsrmv_generate_grid(&G, o->grid[0], o->grid[1], o->grid[2], bs, o->stencil, 1,
                                     o->type, o->order);
    } else if (o->pl[0]) {
        snprintf(name, len, "powerlaw_%lld_%lld_%lld", (long long)o->pl[0], (long long)o->pl[1],
                 (long long)o->pl[2]);
        if (rank == 0)
            st = bsrmv_generate_powerlaw(&G, o->pl[0], o->pl[0], bs, (double)o->pl[1],
                                         o->exponent, o->pl[2], 1, o->type, o->order);
    } else {
        const char *base = strrchr(o->mtx, '/');
        snprintf(name, len, "%s", base ? base + 1 : o->mtx);
        /* Read on rank 0, promoted blocks made non-constant as the CPU
         * benchmark's are, then scattered like the generated matrices. */
        if (rank == 0) {
            bsrmv_coo *coo = NULL;
            st = bsrmv_mm_read(o->mtx, &coo);
            if (!st)
                st = bsrmv_matrix_from_coo(&G, coo, bs, o->promote ? BSRMV_PROMOTE : BSRMV_SPLIT,
                                           o->type, o->order);
            if (!st && o->promote)
                st = bsrmv_matrix_perturb_promoted(G, 1);
            bsrmv_coo_destroy(coo);
        }
    }
    if (rank == 0)
        die(st, "building the matrix");
    return G;
}

/* Distributed solves from x = 0 with a random b (one warm-up, then
 * o->repeat timed, the median); one JSON line.  With --gpu, each rank's
 * device read bandwidth is measured too: the bound of an iteration is the
 * bytes all ranks move over the sum of their bandwidths (the partition is
 * balanced by blocks, so the ranks move about the same), and the
 * efficiency is that bound over the measured time. */
/* The solve's matrix, as the records name it. */
static const char *name_of(const opts *o, bsrmv_solver m)
{
    static char name[96];
    snprintf(name, sizeof name, "%s_%lldx%lldx%lld", m == BSRMV_SOLVER_CG ? "laplacian"
                                                                         : "reservoir",
             (long long)o->reservoir[0], (long long)o->reservoir[1],
             (long long)o->reservoir[2]);
    return name;
}

/* --nrhs: the columns of a random B by bsrmv_dist_solve_multi and one by
 * one with bsrmv_dist_solve, each timed after a warm-up (median of
 * o->repeat); one JSON line. */
static void solve_multi(const opts *o, bsrmv_solver m, bsrmv_dist_matrix *D,
                        const bsrmv_precond *P, int64_t n, const bsrmv_solve_options *so,
                        const char *name, int bs, int sym)
{
    const int k = o->nrhs;
    const size_t vs = bsrmv_type_size(o->type), col = (size_t)n * vs;
    char *B = malloc((size_t)k * col + 1), *X = malloc((size_t)k * col + 1);
    bsrmv_solve_report *rep = malloc((size_t)k * sizeof *rep);
    double *tm = malloc((size_t)o->repeat * sizeof *tm);
    double *t1 = malloc((size_t)o->repeat * sizeof *t1);
    if (!B || !X || !rep || !tm || !t1)
        die(BSRMV_ERR_NOMEM, "the right-hand sides");
    for (int j = 0; j < k; j++)
        die(bsrmv_fill_random(B + (size_t)j * col, n, o->type, 100 + 7 * (uint64_t)j +
                              (uint64_t)rank * 1000),
            "B");
    int most = 0;
    for (int r = -1; r < o->repeat; r++) {
        double t0 = MPI_Wtime();
        bsrmv_status st = bsrmv_dist_solve_multi(m, D, P, n, k, B, n > 0 ? n : 1, X,
                                                 n > 0 ? n : 1, so, rep);
        if (st != BSRMV_ERR_NOT_CONVERGED)
            die(st, "solving several right-hand sides");
        double dt = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int j = 0; j < k; j++)
            most = rep[j].iterations > most ? rep[j].iterations : most;
        t0 = MPI_Wtime();
        for (int j = 0; j < k; j++) {
            st = bsrmv_dist_solve(m, D, P, B + (size_t)j * col, X + (size_t)j * col, n, so,
                                  &rep[j]);
            if (st != BSRMV_ERR_NOT_CONVERGED)
                die(st, "solving one right-hand side");
        }
        double d1 = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &d1, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0) {
            tm[r] = dt;
            t1[r] = d1;
        }
    }
    const double sm = median(tm, o->repeat), s1 = median(t1, o->repeat);
    if (rank == 0) {
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "mpi_solve_multi");
        json_str(&j, "matrix", name);
        json_str(&j, "method", m == BSRMV_SOLVER_CG         ? "cg"
                               : m == BSRMV_SOLVER_BICGSTAB ? "bicgstab"
                                                            : "gmres");
        json_str(&j, "storage", sym ? "sym" : "full");
        json_int(&j, "ranks", size);
        json_int(&j, "threads", bsrmv_num_threads());
        json_int(&j, "bs", bs);
        json_str(&j, "type", type_names[o->type]);
        json_int(&j, "nrhs", k);
        json_int(&j, "most_iterations", most);
        json_int(&j, "repeat", o->repeat);
        json_num(&j, "seconds_multi", sm);
        json_num(&j, "seconds_one_by_one", s1);
        json_num(&j, "speedup", s1 / sm);
        json_end(&j);
        fflush(stdout);
    }
    free(B);
    free(X);
    free(rep);
    free(tm);
    free(t1);
}

static void solve(const opts *o, int bs, int sym)
{
    const bsrmv_solver m = (bsrmv_solver)(o->solve - 1);
    bsrmv_matrix *G = NULL;
    if (rank == 0)
        die(m == BSRMV_SOLVER_CG
                ? bsrmv_generate_block_laplacian(&G, o->reservoir[0], o->reservoir[1],
                                                 o->reservoir[2], bs, 1, o->type, o->order)
                : bsrmv_generate_reservoir(&G, o->reservoir[0], o->reservoir[1],
                                           o->reservoir[2], bs, 1, o->type, o->order),
            "building the matrix");
    if (rank == 0 && sym) { /* the SPD sibling in symmetric storage */
        bsrmv_matrix *S;
        die(bsrmv_matrix_to_sym(&S, G, 1e-6), "the symmetric storage");
        bsrmv_matrix_destroy(G);
        G = S;
    }
    bsrmv_dist_matrix *D;
    die(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, G, NULL), "distributing");
    bsrmv_matrix_destroy(G);
    bsrmv_dist_info in;
    die(bsrmv_dist_matrix_get_info(D, &in), "info");
    const int64_t n = in.mb * bs;
    const size_t vs = bsrmv_type_size(o->type);
    void *b = malloc((size_t)(n + 1) * vs), *x = malloc((size_t)(n + 1) * vs);
    if (!b || !x)
        die(BSRMV_ERR_NOMEM, "vectors");
    die(bsrmv_fill_random(b, n, o->type, 11 + (uint64_t)rank), "b");
    bsrmv_precond *P = NULL;
    bsrmv_dist_gpu_matrix *dD = NULL;
    bsrmv_gpu_precond *dP = NULL;
    void *db = NULL, *dx = NULL;
    double gbps = 0;
    char device[128] = "cpu";
    if (o->gpu) {
        int ndev = 0;
        die(bsrmv_gpu_device_count(&ndev), "GPU count");
        const int dev = ndev > 0 ? rank % ndev : 0;
        die(bsrmv_dist_gpu_matrix_upload(&dD, D, dev), "GPU upload");
        die(bsrmv_gpu_device_name(dev, device, sizeof device), "GPU name");
        die(bsrmv_dist_gpu_precond_block_jacobi(&dP, dD), "block Jacobi");
        die(bsrmv_gpu_malloc(&db, (size_t)(n + 1) * vs), "GPU b");
        die(bsrmv_gpu_malloc(&dx, (size_t)(n + 1) * vs), "GPU x");
        die(bsrmv_gpu_to_device(db, b, (size_t)n * vs), "GPU b");
        /* the device is current (the upload made it so); 1 GiB read */
        die(bsrmv_gpu_read_bandwidth((size_t)1 << 30, 30, &gbps), "GPU read bandwidth");
        MPI_Allreduce(MPI_IN_PLACE, &gbps, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else {
        die(bsrmv_dist_precond_block_jacobi(&P, D), "block Jacobi");
    }
    const int dbl = o->type == BSRMV_DOUBLE || o->type == BSRMV_COMPLEX_DOUBLE;
    bsrmv_solve_options so = {.rtol = dbl ? 1e-8 : 1e-5, .x0_zero = 1,
                              .max_iter = o->max_iter};
    bsrmv_solve_report rep;
    double *secs = malloc((size_t)o->repeat * sizeof *secs);
    if (!secs)
        die(BSRMV_ERR_NOMEM, "timings");
    for (int r = -1; r < o->repeat; r++) {
        /* not converging is a result to report, not a failure of the bench */
        const bsrmv_status st = o->gpu
                                    ? bsrmv_dist_gpu_solve(m, dD, dP, db, dx, n, &so, &rep, NULL)
                                    : bsrmv_dist_solve(m, D, P, b, x, n, &so, &rep);
        if (st != BSRMV_ERR_NOT_CONVERGED)
            die(st, "solving");
        if (r >= 0)
            secs[r] = rep.seconds;
    }
    const double seconds = median(secs, o->repeat);
    free(secs);
    if (rank == 0) {
        static const char *const names[] = {"cg", "bicgstab", "gmres"};
        const char *name = name_of(o, m);
        const int it = rep.iterations > 0 ? rep.iterations : 1;
        const double ms_iter = seconds / it * 1e3, bytes_iter = rep.bytes / it;
        const double bound_ms = gbps > 0 ? bytes_iter / gbps * 1e-6 : NAN;
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "mpi_solve");
        json_str(&j, "matrix", name);
        json_str(&j, "method", names[m]);
        json_str(&j, "backend", o->gpu ? "gpu" : "cpu");
        json_str(&j, "storage", sym ? "sym" : "full");
        json_str(&j, "device", device);
        json_int(&j, "ranks", size);
        json_int(&j, "threads", o->gpu ? 0 : bsrmv_num_threads());
        json_int(&j, "bs", bs);
        json_str(&j, "type", type_names[o->type]);
        json_int(&j, "mb", in.mb_global);
        json_int(&j, "iterations", rep.iterations);
        json_int(&j, "converged", rep.converged);
        json_num(&j, "true_rel_residual", rep.true_rel_residual);
        json_int(&j, "repeat", o->repeat);
        json_num(&j, "seconds", seconds);
        json_num(&j, "ms_per_iteration", ms_iter);
        json_num(&j, "bytes_per_iteration", bytes_iter);
        json_num(&j, "gbps", bytes_iter / ms_iter * 1e-6);
        json_num(&j, "read_gbps", o->gpu ? gbps : NAN);
        json_num(&j, "bound_ms_per_iteration", bound_ms);
        json_num(&j, "efficiency", o->gpu ? bound_ms / ms_iter : NAN);
        json_end(&j);
        fflush(stdout);
    }
    if (o->nrhs)
        solve_multi(o, m, D, P, n, &so, name_of(o, m), bs, sym);
    bsrmv_gpu_free(db);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_precond_destroy(dP);
    bsrmv_dist_gpu_matrix_destroy(dD);
    free(b);
    free(x);
    bsrmv_precond_destroy(P);
    bsrmv_dist_matrix_destroy(D);
}

/* The distributed SpMV of G (on the root; sym: in symmetric storage),
 * then the exchange and the products alone; one JSON line. */
static void spmv_bench(const opts *o, int bs, const bsrmv_matrix *G, const char *name, int sym)
{
    const size_t vs = bsrmv_type_size(o->type);
    run r = {.op = o->op, .sym = sym};
    die(bsrmv_dist_matrix_scatter(&r.D, MPI_COMM_WORLD, 0, G, NULL), "distributing");
    bsrmv_dist_info in;
    die(bsrmv_dist_matrix_get_info(r.D, &in), "info");
    const int64_t *orow;
    die(bsrmv_dist_matrix_parts(r.D, &r.local, &r.offrank, &orow, NULL), "parts");
    bsrmv_matrix_info oin;
    die(bsrmv_matrix_get_info(r.offrank, &oin), "info");
    r.orows = oin.rows;
    r.compressed = orow != NULL;
    const int64_t rows = in.mb * bs, cols = in.nb * bs;
    r.nx = o->op == BSRMV_OP_N ? cols : rows;
    r.ny = o->op == BSRMV_OP_N ? rows : cols;
    r.ng = in.ghosts * bs;
    r.rows = rows;
    void *hx = malloc((size_t)(r.nx + 1) * vs), *hg = malloc((size_t)(r.ng + 1) * vs);
    r.gsum = malloc((size_t)(r.ng + 1) * vs);
    if (!r.gsum)
        die(BSRMV_ERR_NOMEM, "vectors");
    void *hy = malloc((size_t)(r.ny + rows + 1) * vs), *ho = malloc((size_t)(r.orows + 1) * vs);
    r.y = hy;
    r.obuf = ho;
    if (!hx || !hg || !hy || !ho)
        die(BSRMV_ERR_NOMEM, "vectors");
    die(bsrmv_fill_random(hx, r.nx, o->type, 3 + (uint64_t)rank), "x");
    die(bsrmv_fill_random(hg, r.ng, o->type, 5), "ghosts");
    r.x = hx;
    r.ghost = hg;
    char device[128] = "cpu";
#ifdef BSRMV_HAVE_NCCL
    void *dx = NULL, *dy = NULL, *dg = NULL, *dob = NULL;
    if (o->gpu) {
        int ndev = 0;
        die(bsrmv_gpu_device_count(&ndev), "GPU count");
        const int dev = rank % ndev;
        die(bsrmv_gpu_device_name(dev, device, sizeof device), "GPU name");
        die(bsrmv_dist_gpu_matrix_upload(&r.dD, r.D, dev), "GPU upload");
        die(bsrmv_dist_gpu_matrix_parts(r.dD, &r.dl, &r.doff, NULL), "GPU parts");
        die(bsrmv_gpu_malloc(&dob, (size_t)(r.orows + 1) * vs), "GPU off-rank rows");
        r.obuf = dob;
        die(bsrmv_gpu_malloc(&dx, (size_t)(r.nx + 1) * vs), "GPU x");
        die(bsrmv_gpu_malloc(&dy, (size_t)(r.ny + rows + 1) * vs), "GPU y");
        die(bsrmv_gpu_malloc(&dg, (size_t)(r.ng + 1) * vs), "GPU ghosts");
        die(bsrmv_gpu_to_device(dx, hx, (size_t)r.nx * vs), "GPU x");
        die(bsrmv_gpu_to_device(dg, hg, (size_t)r.ng * vs), "GPU ghosts");
        r.x = dx;
        r.y = dy;
        r.ghost = dg;
    }
#else
    if (o->gpu) {
        if (rank == 0)
            fprintf(stderr, "bsrmv_mpi_bench: built without CUDA and NCCL: no --gpu\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#endif
    double best, best_x, best_p;
    bsrmv_dist_timers tm;
    die(bsrmv_dist_matrix_timers(r.D, NULL, 1), "timers");
    const double t = time_max(do_spmv, &r, o->reps, &best);
    die(bsrmv_dist_matrix_timers(r.D, &tm, 0), "timers");
    /* the forward exchange and the products alone: OP_N only */
    const double tx = o->op == BSRMV_OP_N ? time_max(do_exchange, &r, o->reps, &best_x) : NAN;
    const double tp = o->op == BSRMV_OP_N ? time_max(do_products, &r, o->reps, &best_p) : NAN;
    /* the exposed wait per call, the slowest rank's (host timers: CPU
     * ranks only; GPU calls return before the device is done) */
    double wait = tm.calls > 0 ? tm.wait / (double)tm.calls : NAN;
    MPI_Allreduce(MPI_IN_PLACE, &wait, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    double sums[4] = {in.halo_send_bytes,
                      bsrmv_matrix_spmv_bytes(r.local) + bsrmv_matrix_spmv_bytes(r.offrank) -
                          (double)rows * vs,
                      (double)(in.nnzb_local + in.nnzb_offrank), (double)in.ghosts};
    double mx[2] = {in.halo_send_bytes, (double)in.recv_neighbors};
    MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "mpi_spmv");
        json_str(&j, "matrix", name);
        json_str(&j, "device", device);
        json_int(&j, "ranks", size);
        json_int(&j, "threads", bsrmv_num_threads());
        json_int(&j, "bs", bs);
        json_str(&j, "type", type_names[o->type]);
        json_str(&j, "order", o->order == BSRMV_COL_MAJOR ? "col" : "row");
        json_str(&j, "op", o->op == BSRMV_OP_N ? "n" : o->op == BSRMV_OP_T ? "t" : "c");
        json_str(&j, "storage", sym ? "sym" : "full");
        json_int(&j, "mb", in.mb_global);
        json_int(&j, "nnzb", (int64_t)sums[2]);
        json_int(&j, "ghosts", (int64_t)sums[3]);
        json_num(&j, "halo_bytes", sums[0]);
        json_num(&j, "halo_bytes_max_rank", mx[0]);
        json_int(&j, "max_neighbors", (int64_t)mx[1]);
        json_int(&j, "reps", o->reps);
        json_num(&j, "ms", t * 1e3);
        json_num(&j, "ms_best", best * 1e3);
        json_num(&j, "gbps", sums[1] / t * 1e-9);
        /* a complex multiply-add is 8 real flops */
        const double flops = o->type >= BSRMV_COMPLEX_FLOAT ? 8.0 : 2.0;
        json_num(&j, "gflops", flops * sums[2] * bs * bs / t * 1e-9);
        json_num(&j, "products_ms", tp * 1e3);
        json_num(&j, "exchange_ms", tx * 1e3);
        json_num(&j, "exposed_wait_ms", wait * 1e3);
        /* hidden: from the exposed wait (CPU); hidden_overlap: from
         * the times alone, (products + exchange - spmv) / exchange */
        json_num(&j, "hidden", tx > 0 && !isnan(wait) ? 1.0 - fmin(wait / tx, 1.0) : NAN);
        json_num(&j, "hidden_overlap",
                 tx > 0 ? fmax(0.0, fmin(1.0, (tp + tx - t) / tx)) : NAN);
        json_num(&j, "ratio_to_products", t / tp);
        json_end(&j);
        fflush(stdout);
    }
    if (o->k) {
        spmm_run m = {.D = r.D, .op = o->op, .k = o->k, .ldx = r.nx > 0 ? r.nx : 1,
                      .ldy = r.ny > 0 ? r.ny : 1};
        void *X = malloc((size_t)(m.ldx * o->k) * vs), *Yk = malloc((size_t)(m.ldy * o->k) * vs);
        if (!X || !Yk)
            die(BSRMV_ERR_NOMEM, "the SpMM's vectors");
        die(bsrmv_fill_random(X, m.ldx * o->k, o->type, 7 + (uint64_t)rank), "X");
        m.X = X;
        m.Y = Yk;
        double best_k;
        const double tk = time_max(do_spmm, &m, o->reps, &best_k);
        if (rank == 0) {
            struct json_line j;
            json_begin(&j, stdout);
            json_str(&j, "bench", "mpi_spmm");
            json_str(&j, "matrix", name);
            json_int(&j, "ranks", size);
            json_int(&j, "threads", bsrmv_num_threads());
            json_int(&j, "bs", bs);
            json_str(&j, "type", type_names[o->type]);
            json_int(&j, "k", o->k);
            json_str(&j, "op", o->op == BSRMV_OP_N ? "n" : o->op == BSRMV_OP_T ? "t" : "c");
            json_str(&j, "storage", sym ? "sym" : "full");
            json_num(&j, "ms", tk * 1e3);
            json_num(&j, "ms_per_vector", tk * 1e3 / o->k);
            json_num(&j, "spmv_ms", t * 1e3);
            json_num(&j, "speedup_per_vector", t * o->k / tk);
            json_end(&j);
            fflush(stdout);
        }
        free(X);
        free(Yk);
    }
#ifdef BSRMV_HAVE_NCCL
    if (r.dD) {
        bsrmv_gpu_free(dx);
        bsrmv_gpu_free(dy);
        bsrmv_gpu_free(dg);
        bsrmv_gpu_free(dob);
        bsrmv_dist_gpu_matrix_destroy(r.dD);
    }
#endif
    free(hx);
    free(hg);
    free(r.gsum);
    free(hy);
    free(ho);
    bsrmv_dist_matrix_destroy(r.D);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    args_init("bsrmv_mpi_bench", "mpiexec -n P bsrmv_mpi_bench MATRIX --bs LIST [options]");
    const opts o = parse(argc, argv);

    for (int b = 0; o.solve && b < o.nbs; b++) {
        solve(&o, o.bs[b], 0);
        if (o.sym)
            solve(&o, o.bs[b], 1);
    }
    for (int b = 0; !o.solve && b < o.nbs; b++) {
        char name[160];
        bsrmv_matrix *G = build(&o, o.bs[b], name, sizeof name);
        spmv_bench(&o, o.bs[b], G, name, 0);
        if (o.sym) {
            bsrmv_matrix *S = upper_of(G);
            spmv_bench(&o, o.bs[b], S, name, 1);
            bsrmv_matrix_destroy(S);
        }
        bsrmv_matrix_destroy(G);
    }
    MPI_Finalize();
    return 0;
}
