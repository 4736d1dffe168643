/* bsrmv solve: solve A x = b for a reservoir-style matrix (BiCGSTAB or
 * GMRES) or an SPD block Laplacian (CG) on the host or the GPU, and compare
 * the time per iteration with the bandwidth bound: the bytes the fused
 * passes move per iteration (report.bytes, counted by the library) over
 * the measured read bandwidth. */
#include "solve.h"

#include "args.h"

#include "bsrmv.h"
#include "json.h"
#include "stream.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void usage(FILE *f)
{
    fputs("usage: bsrmv solve --reservoir NX[,NY,NZ] [--nc C] [options]\n"
          "       bsrmv solve --grid NX[,NY,NZ] [--bs B] [options]\n"
          "  --reservoir   nonsymmetric reservoir-style matrix, C components per cell\n"
          "                (default 4); default method bicgstab\n"
          "  --grid        SPD block Laplacian (bsrmv_generate_block_laplacian), bs B\n"
          "                (default 3); default method cg\n"
          "options:\n"
          "  --method bicgstab|cg|gmres  --precond jacobi|none (default jacobi)\n"
          "  --rtol R (1e-8)  --max-iter N (1000)  --restart M (GMRES, 30)\n"
          "  --type double|float  --order col|row  --seed S (1)\n"
          "  --gpu             solve on GPU 0 (after one short warm-up solve)\n"
          "  --repeat R        solve R times, report the median time (default 3)\n"
          "  --no-stream       skip the read-bandwidth measurement\n"
          "  --stream-gib G    its array size (default 1)\n"
          "  --json            one JSON object on stdout\n"
          "Prints iterations, residuals, time per iteration, bytes per iteration and\n"
          "the efficiency (bytes / read bandwidth) / time.  Exit status 0 when the\n"
          "solve converged, 1 otherwise, 2 for bad arguments.\n",
          f);
}

static void dims(const char *opt, const char *s, int64_t d[3])
{
    char buf[96];
    if (strlen(s) >= sizeof buf)
        args_fail("%s: '%s' is too long", opt, s);
    strcpy(buf, s);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == 3)
            args_fail("%s: expected N or NX,NY,NZ, got '%s'", opt, s);
        d[n++] = args_integer(opt, tok, 1, 1 << 20);
    }
    if (n == 1)
        d[1] = d[2] = d[0];
    else if (n != 3)
        args_fail("%s: expected N or NX,NY,NZ, got '%s'", opt, s);
}

static int pick(const char *opt, const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    args_fail("%s: unknown value '%s'", opt, s);
    return 0;
}

struct opts {
    int spd; /* --grid */
    int64_t d[3];
    int bs;
    int method; /* -1: the matrix's default */
    int precond;
    bsrmv_solve_options so;
    bsrmv_type type;
    bsrmv_order order;
    uint64_t seed;
    int gpu, json, stream;
    int repeat;
    double stream_gib;
};

static const char *const methods[] = {"cg", "bicgstab", "gmres"};

static void parse(int argc, char **argv, struct opts *o)
{
    static const char *const pre[] = {"none", "jacobi"}, *const types[] = {"float", "double"},
                             *const orders[] = {"col", "row"};
    int source = 0, nc = 0, bs = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--gpu") || !strcmp(a, "--json") || !strcmp(a, "--no-stream")) {
            *(a[2] == 'g' ? &o->gpu : a[2] == 'j' ? &o->json : &o->stream) = a[2] != 'n';
            continue;
        }
        if (i + 1 >= argc)
            args_fail("unknown option or missing value: '%s'", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--reservoir") || !strcmp(a, "--grid")) {
            if (source++)
                args_fail("give one of --reservoir and --grid");
            o->spd = a[2] == 'g';
            dims(a, v, o->d);
        } else if (!strcmp(a, "--nc")) {
            nc = (int)args_integer(a, v, 1, 1024);
        } else if (!strcmp(a, "--bs")) {
            bs = (int)args_integer(a, v, 1, 1024);
        } else if (!strcmp(a, "--method")) {
            o->method = pick(a, v, methods, 3);
        } else if (!strcmp(a, "--precond")) {
            o->precond = pick(a, v, pre, 2);
        } else if (!strcmp(a, "--rtol")) {
            o->so.rtol = args_number(a, v, 1e-300, 1);
        } else if (!strcmp(a, "--max-iter")) {
            o->so.max_iter = (int)args_integer(a, v, 1, 1 << 30);
        } else if (!strcmp(a, "--restart")) {
            o->so.restart = (int)args_integer(a, v, 1, 10000);
        } else if (!strcmp(a, "--type")) {
            o->type = (bsrmv_type)pick(a, v, types, 2);
        } else if (!strcmp(a, "--order")) {
            o->order = (bsrmv_order)pick(a, v, orders, 2);
        } else if (!strcmp(a, "--seed")) {
            o->seed = (uint64_t)args_integer(a, v, 0, 1e15);
        } else if (!strcmp(a, "--stream-gib")) {
            o->stream_gib = args_number(a, v, 1.0 / 1024, 1024);
        } else if (!strcmp(a, "--repeat")) {
            o->repeat = (int)args_integer(a, v, 1, 1000);
        } else {
            args_fail("unknown option '%s'", a);
        }
    }
    if (!source)
        args_fail("give a matrix: --reservoir NX[,NY,NZ] or --grid N");
    if (o->spd ? nc != 0 : bs != 0)
        args_fail(o->spd ? "--nc goes with --reservoir" : "--bs goes with --grid");
    o->bs = o->spd ? (bs ? bs : 3) : (nc ? nc : 4);
    if (o->method < 0)
        o->method = o->spd ? BSRMV_SOLVER_CG : BSRMV_SOLVER_BICGSTAB;
}

static int lib_failed(const char *what)
{
    fprintf(stderr, "bsrmv solve: %s: %s\n", what, bsrmv_last_error());
    return 1;
}

/* ||b - A x|| / ||b|| on the host, a check independent of the solver's
 * own recomputation (and of the GPU). */
static double host_residual(const bsrmv_matrix *A, const void *b, const void *x, int64_t n,
                            bsrmv_type t)
{
    const size_t ts = bsrmv_type_size(t);
    void *r = malloc((size_t)n * ts);
    if (!r)
        return NAN;
    memcpy(r, b, (size_t)n * ts);
    double rr = 0, bb = 0;
    if (bsrmv_spmv(BSRMV_OP_N, -1.0, A, x, n, 1.0, r, n) != BSRMV_SUCCESS)
        rr = NAN;
    for (int64_t i = 0; i < n; i++) {
        const double ri = t == BSRMV_DOUBLE ? ((double *)r)[i] : ((float *)r)[i];
        const double bi = t == BSRMV_DOUBLE ? ((const double *)b)[i] : ((const float *)b)[i];
        rr += ri * ri;
        bb += bi * bi;
    }
    free(r);
    return sqrt(rr / bb);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* o->repeat solves from x = 0 (solve(ctx) runs one); rep keeps the last
 * one's numbers with the median time: a machine shared with other jobs
 * disturbs single runs. */
static bsrmv_status repeated(const struct opts *o, bsrmv_status (*solve)(void *ctx), void *ctx,
                             bsrmv_solve_report *rep)
{
    double secs[1000];
    bsrmv_status st = BSRMV_SUCCESS;
    for (int i = 0; i < o->repeat; i++) {
        st = solve(ctx);
        if (st && st != BSRMV_ERR_NOT_CONVERGED)
            return st;
        secs[i] = rep->seconds;
    }
    qsort(secs, (size_t)o->repeat, sizeof *secs, cmp_double);
    rep->seconds = secs[o->repeat / 2];
    return st;
}

struct host_run {
    const struct opts *o;
    const bsrmv_matrix *A;
    const bsrmv_precond *P;
    const void *b;
    void *x;
    int64_t n;
    bsrmv_solve_report *rep;
};

static bsrmv_status host_once(void *ctx)
{
    struct host_run *h = ctx;
    return bsrmv_solve((bsrmv_solver)h->o->method, h->A, h->P, h->b, h->x, h->n, &h->o->so,
                       h->rep);
}

struct gpu_run {
    const struct opts *o;
    bsrmv_gpu_matrix *dA;
    bsrmv_gpu_precond *dP;
    void *db, *dx;
    int64_t n;
    bsrmv_solve_report *rep;
};

static bsrmv_status gpu_once(void *ctx)
{
    struct gpu_run *g = ctx;
    return bsrmv_gpu_solve((bsrmv_solver)g->o->method, g->dA, g->dP, g->db, g->dx, g->n,
                           &g->o->so, g->rep, NULL);
}

/* The GPU solves: upload, one short warm-up solve (module loading, first
 * launches), then the measured ones; x comes back to the host. */
static bsrmv_status gpu_solve(const struct opts *o, const bsrmv_matrix *A,
                              const bsrmv_precond *P, const void *b, void *x, int64_t n,
                              bsrmv_solve_report *rep)
{
    bsrmv_gpu_matrix *dA = NULL;
    bsrmv_gpu_precond *dP = NULL;
    void *db = NULL, *dx = NULL;
    const size_t bytes = (size_t)n * bsrmv_type_size(o->type);
    bsrmv_status st;
    if ((st = bsrmv_gpu_matrix_upload(&dA, A, 0, NULL)) ||
        (P && (st = bsrmv_gpu_precond_upload(&dP, P, 0))) ||
        (st = bsrmv_gpu_malloc(&db, bytes)) || (st = bsrmv_gpu_malloc(&dx, bytes)) ||
        (st = bsrmv_gpu_to_device(db, b, bytes)))
        goto done;
    bsrmv_solve_options warm = o->so;
    warm.max_iter = 2;
    st = bsrmv_gpu_solve((bsrmv_solver)o->method, dA, dP, db, dx, n, &warm, rep, NULL);
    if (st && st != BSRMV_ERR_NOT_CONVERGED)
        goto done;
    struct gpu_run g = {o, dA, dP, db, dx, n, rep};
    st = repeated(o, gpu_once, &g, rep);
    if (!st || st == BSRMV_ERR_NOT_CONVERGED) {
        bsrmv_status s2 = bsrmv_gpu_to_host(x, dx, bytes);
        if (s2)
            st = s2;
    }
done:
    bsrmv_gpu_free(db);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_precond_destroy(dP);
    bsrmv_gpu_matrix_destroy(dA);
    return st;
}

static double bandwidth(const struct opts *o, char *device, size_t len)
{
    const size_t bytes = (size_t)(o->stream_gib * (double)(1 << 30));
    double gbps = 0;
    snprintf(device, len, "cpu, %d threads", bsrmv_num_threads());
    if (o->gpu) {
        if (bsrmv_gpu_device_name(0, device, len) ||
            bsrmv_gpu_read_bandwidth(bytes, 30, &gbps)) {
            lib_failed("GPU read bandwidth");
            return 0;
        }
        return gbps;
    }
    struct stream_result sr;
    return stream_measure(bsrmv_num_threads(), bytes, &sr) == 0 ? sr.gbps : 0;
}

int solve_command(int argc, char **argv)
{
    struct opts o = {.method = -1, .precond = 1, .type = BSRMV_DOUBLE, .seed = 1,
                     .stream = 1, .stream_gib = 1, .repeat = 3};
    args_init("bsrmv solve", usage);
    parse(argc, argv, &o);
    o.so.x0_zero = 1;
    int ndev = 0;
    if (o.gpu && (bsrmv_gpu_device_count(&ndev) || ndev < 1))
        return lib_failed("--gpu");
    bsrmv_matrix *A = NULL;
    bsrmv_precond *P = NULL;
    bsrmv_status st =
        o.spd ? bsrmv_generate_block_laplacian(&A, o.d[0], o.d[1], o.d[2], o.bs, o.seed, o.type,
                                               o.order)
              : bsrmv_generate_reservoir(&A, o.d[0], o.d[1], o.d[2], o.bs, o.seed, o.type,
                                         o.order);
    if (st)
        return lib_failed("generating the matrix");
    bsrmv_matrix_info in;
    bsrmv_matrix_get_info(A, &in);
    const int64_t n = in.rows;
    void *b = malloc((size_t)n * bsrmv_type_size(o.type));
    void *x = calloc((size_t)n, bsrmv_type_size(o.type));
    int rc = 1;
    if (!b || !x) {
        fprintf(stderr, "bsrmv solve: out of memory for the vectors\n");
        goto done;
    }
    if ((st = bsrmv_fill_random(b, n, o.type, o.seed + 1))) {
        lib_failed("filling b");
        goto done;
    }
    if (o.precond && (st = bsrmv_precond_block_jacobi(&P, A))) {
        lib_failed("building the block-Jacobi preconditioner");
        goto done;
    }
    char device[128];
    const double gbps = o.stream ? bandwidth(&o, device, sizeof device) : 0;
    if (!o.stream)
        snprintf(device, sizeof device, "%s", o.gpu ? "gpu 0" : "cpu");
    bsrmv_solve_report rep = {0};
    struct host_run h = {&o, A, P, b, x, n, &rep};
    st = o.gpu ? gpu_solve(&o, A, P, b, x, n, &rep) : repeated(&o, host_once, &h, &rep);
    if (st && st != BSRMV_ERR_NOT_CONVERGED) {
        lib_failed("solving");
        goto done;
    }
    const char *why = st ? bsrmv_last_error() : "";
    const double host_rel = host_residual(A, b, x, n, o.type);
    const int it = rep.iterations > 0 ? rep.iterations : 1;
    const double ms_iter = 1e3 * rep.seconds / it, bytes_iter = rep.bytes / it;
    const double bound_ms = gbps > 0 ? bytes_iter / gbps * 1e-6 : 0;
    const double eff = bound_ms > 0 && ms_iter > 0 ? bound_ms / ms_iter : 0;
    const char *tname = o.type == BSRMV_DOUBLE ? "double" : "float";
    const char *mname = o.spd ? "block_laplacian" : "reservoir";
    if (o.json) {
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "matrix", mname);
        json_int(&j, "nx", o.d[0]);
        json_int(&j, "ny", o.d[1]);
        json_int(&j, "nz", o.d[2]);
        json_int(&j, "bs", o.bs);
        json_str(&j, "type", tname);
        json_str(&j, "order", o.order == BSRMV_COL_MAJOR ? "col" : "row");
        json_int(&j, "rows", n);
        json_int(&j, "nnzb", in.nnzb);
        json_str(&j, "method", methods[o.method]);
        json_str(&j, "precond", P ? "jacobi" : "none");
        json_str(&j, "backend", o.gpu ? "gpu" : "cpu");
        json_str(&j, "device", device);
        json_int(&j, "threads", o.gpu ? 0 : bsrmv_num_threads());
        json_int(&j, "iterations", rep.iterations);
        json_int(&j, "converged", rep.converged);
        json_num(&j, "rel_residual", rep.rel_residual);
        json_num(&j, "true_rel_residual", rep.true_rel_residual);
        json_num(&j, "host_rel_residual", host_rel);
        json_int(&j, "repeat", o.repeat);
        json_num(&j, "seconds", rep.seconds);
        json_num(&j, "ms_per_iter", ms_iter);
        json_num(&j, "bytes_per_iter", bytes_iter);
        json_num(&j, "read_gbps", gbps);
        json_num(&j, "bound_ms_per_iter", bound_ms);
        json_num(&j, "efficiency", eff);
        json_str(&j, "message", why);
        json_end(&j);
    } else {
        printf("matrix     %s %lld x %lld x %lld, bs %d, %s %s: %lld unknowns, %lld blocks, "
               "%.3g GB per SpMV\n",
               mname, (long long)o.d[0], (long long)o.d[1], (long long)o.d[2], o.bs, tname,
               o.order == BSRMV_COL_MAJOR ? "col" : "row", (long long)n, (long long)in.nnzb,
               bsrmv_matrix_spmv_bytes(A) * 1e-9);
        printf("solver     %s, %s, on %s\n", methods[o.method],
               P ? "block Jacobi" : "no preconditioner", device);
        printf("result     %s after %d iterations: relative residual %.3g (recurrence), %.3g "
               "(recomputed), %.3g (host check)%s%s\n",
               rep.converged ? "converged" : "NOT converged", rep.iterations, rep.rel_residual,
               rep.true_rel_residual, host_rel, *why ? "\n           " : "", why);
        printf("time       %.4g s (median of %d solves), %.4g ms per iteration\n", rep.seconds,
               o.repeat, ms_iter);
        printf("traffic    %.4g GB per iteration (the library's count of the fused passes)\n",
               bytes_iter * 1e-9);
        if (gbps > 0)
            printf("bound      %.4g ms per iteration at %.4g GB/s read bandwidth: efficiency "
                   "%.2f\n",
                   bound_ms, gbps, eff);
    }
    rc = rep.converged ? 0 : 1;
done:
    free(b);
    free(x);
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(A);
    return rc;
}
