/* bsrmv solve: solve A x = b for the user's matrix (a Matrix Market file,
 * b from a file or A times ones), a reservoir-style matrix (BiCGSTAB or
 * GMRES) or an SPD block Laplacian (CG), on the host or the GPU, and
 * compare the time per iteration with the bandwidth bound: the bytes the
 * fused passes move per iteration (report.bytes, counted by the library)
 * over the measured read bandwidth. */
#include "solve.h"

#include "args.h"
#include "bench.h"

#include "bsrmv.h"
#include "cli.h"
#include "json.h"
#include "stream.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void usage(FILE *f)
{
    fputs("usage: bsrmv solve --mtx FILE [--bs B] [--rhs FILE] [--out FILE] [options]\n"
          "       bsrmv solve --reservoir NX[,NY,NZ] [--nc C] [options]\n"
          "       bsrmv solve --grid NX[,NY,NZ] [--bs B] [options]\n"
          "  --mtx FILE    your square matrix (Matrix Market, .gz too), cut into aligned\n"
          "                B x B blocks (default 1; B must divide the size); default\n"
          "                method bicgstab\n"
          "    --rhs FILE  b as a Matrix Market array or coordinate vector (n x 1);\n"
          "                default b = A * ones\n"
          "    --out FILE  write x as a Matrix Market array vector\n"
          "  --reservoir   nonsymmetric reservoir-style matrix, C components per cell\n"
          "                (default 4); default method bicgstab\n"
          "  --grid        SPD block Laplacian (bsrmv_generate_block_laplacian), bs B\n"
          "                (default 3); default method cg\n"
          "options:\n"
          "  --method bicgstab|cg|gmres  --precond jacobi|none (default jacobi)\n"
          "  --rtol R (1e-8)  --max-iter N (1000)  --restart M (GMRES, 30)\n"
          "  --type double|float|mixed|z|c  --order col|row  --seed S (1)\n"
          "                mixed: A in double solved by iterative refinement, the\n"
          "                iterations on its float copy (bsrmv_solve_refined);\n"
          "                z, c: complex double, float (--mtx; the default for a\n"
          "                complex file is z)\n"
          "  --sym         symmetric storage (the diagonal and upper blocks, about half\n"
          "                the bytes): --mtx a symmetric or hermitian file, its one\n"
          "                triangle kept as it is; --grid the Laplacian's upper half\n"
          "  --nrhs K      solve K right-hand sides together (bsrmv_solve_multi): the\n"
          "                first b as above, the others random (seed S+1+j)\n"
          "  --inner-rtol R  mixed: the first correction's relative residual (1e-6)\n"
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
    const char *mtx, *rhs, *out; /* --mtx, --rhs, --out */
    int spd; /* --grid */
    int64_t d[3];
    int bs;
    int method; /* -1: the matrix's default */
    int precond;
    bsrmv_solve_options so;
    bsrmv_type type;
    int type_given; /* --type: else a complex file gives complex double */
    int mixed;      /* --type mixed: type is double */
    bsrmv_order order;
    uint64_t seed;
    int gpu, json, stream;
    int sym; /* --sym: symmetric (or Hermitian) storage */
    int repeat;
    int nrhs; /* --nrhs */
    double stream_gib;
};

static const char *const methods[] = {"cg", "bicgstab", "gmres"};

static void parse(int argc, char **argv, struct opts *o)
{
    static const char *const pre[] = {"none", "jacobi"},
                             *const types[] = {"float", "double", "mixed", "c", "z",
                                               "complex-float", "complex-double"},
                             *const orders[] = {"col", "row"};
    int source = 0, nc = 0, bs = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--sym")) {
            o->sym = 1;
            continue;
        }
        if (!strcmp(a, "--gpu") || !strcmp(a, "--json") || !strcmp(a, "--no-stream")) {
            *(a[2] == 'g' ? &o->gpu : a[2] == 'j' ? &o->json : &o->stream) = a[2] != 'n';
            continue;
        }
        if (i + 1 >= argc)
            args_fail("unknown option or missing value: '%s'", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--reservoir") || !strcmp(a, "--grid") || !strcmp(a, "--mtx")) {
            if (source++)
                args_fail("give one of --mtx, --reservoir and --grid");
            o->spd = a[2] == 'g';
            if (a[2] == 'm')
                o->mtx = v;
            else
                dims(a, v, o->d);
        } else if (!strcmp(a, "--rhs")) {
            o->rhs = v;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
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
            const int t = pick(a, v, types, 7);
            static const bsrmv_type of[7] = {BSRMV_FLOAT,         BSRMV_DOUBLE,
                                             BSRMV_DOUBLE,        BSRMV_COMPLEX_FLOAT,
                                             BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT,
                                             BSRMV_COMPLEX_DOUBLE};
            o->mixed = t == 2;
            o->type = of[t];
            o->type_given = 1;
        } else if (!strcmp(a, "--inner-rtol")) {
            o->so.inner_rtol = args_number(a, v, 1e-300, 0.5);
        } else if (!strcmp(a, "--order")) {
            o->order = (bsrmv_order)pick(a, v, orders, 2);
        } else if (!strcmp(a, "--seed")) {
            o->seed = (uint64_t)args_integer(a, v, 0, 1e15);
        } else if (!strcmp(a, "--stream-gib")) {
            o->stream_gib = args_number(a, v, 1.0 / 1024, 1024);
        } else if (!strcmp(a, "--nrhs")) {
            o->nrhs = (int)args_integer(a, v, 1, 1024);
        } else if (!strcmp(a, "--repeat")) {
            o->repeat = (int)args_integer(a, v, 1, 1000);
        } else {
            args_fail("unknown option '%s'", a);
        }
    }
    if (!source)
        args_fail("give a matrix: --mtx FILE, --reservoir NX[,NY,NZ] or --grid N");
    if ((o->rhs || o->out) && !o->mtx)
        args_fail("--rhs and --out go with --mtx");
    if (o->type >= BSRMV_COMPLEX_FLOAT && !o->mtx)
        args_fail("the generated matrices are real: --type z and c go with --mtx");
    if (o->sym && !o->mtx && !o->spd)
        args_fail("--sym goes with --mtx (a symmetric file) or --grid; the reservoir matrix "
                  "is not symmetric");
    if (o->nrhs > 1 && (o->rhs || o->out || o->mixed))
        args_fail("--nrhs goes without --rhs, --out and --type mixed");
    if (o->mtx ? nc != 0 : o->spd ? nc != 0 : bs != 0)
        args_fail(o->spd || o->mtx ? "--nc goes with --reservoir" : "--bs goes with --grid or --mtx");
    o->bs = o->mtx ? (bs ? bs : 1) : o->spd ? (bs ? bs : 3) : (nc ? nc : 4);
    if (o->method < 0)
        o->method = o->spd ? BSRMV_SOLVER_CG : BSRMV_SOLVER_BICGSTAB;
}

static int is_double(bsrmv_type t)
{
    return t == BSRMV_DOUBLE || t == BSRMV_COMPLEX_DOUBLE;
}

/* Real component k of a vector of type t (value k / bench_parts(t)). */
static double part_get(const void *v, bsrmv_type t, int64_t k)
{
    return is_double(t) ? ((const double *)v)[k] : (double)((const float *)v)[k];
}

static void part_set(void *v, bsrmv_type t, int64_t k, double x)
{
    if (is_double(t))
        ((double *)v)[k] = x;
    else
        ((float *)v)[k] = (float)x;
}

/* Value i = re + i*im (im dropped for a real type). */
static void set_value(void *v, int64_t i, bsrmv_type t, double re, double im)
{
    part_set(v, t, i * bench_parts(t), re);
    if (bench_parts(t) == 2)
        part_set(v, t, 2 * i + 1, im);
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
    for (int64_t k = 0; k < n * bench_parts(t); k++) {
        const double rk = part_get(r, t, k), bk = part_get(b, t, k);
        rr += rk * rk;
        bb += bk * bk;
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

/* One report for the k columns of a solve_multi: the most iterations and
 * the largest residuals, converged when all are, the joint time, the
 * traffic of all. */
static void summarise(const bsrmv_solve_report *reps, int k, bsrmv_solve_report *rep)
{
    *rep = reps[0];
    rep->bytes = 0;
    for (int j = 0; j < k; j++) {
        rep->iterations = reps[j].iterations > rep->iterations ? reps[j].iterations : rep->iterations;
        rep->converged = rep->converged && reps[j].converged;
        rep->rel_residual = fmax(rep->rel_residual, reps[j].rel_residual);
        rep->true_rel_residual = fmax(rep->true_rel_residual, reps[j].true_rel_residual);
        rep->bytes += reps[j].bytes;
    }
}

struct host_run {
    const struct opts *o;
    const bsrmv_matrix *A, *Af; /* Af: the mixed copy (--type mixed) */
    const bsrmv_precond *P;
    const void *b;
    void *x;
    int64_t n;
    bsrmv_solve_report *rep, *reps; /* reps: o->nrhs of them */
};

static bsrmv_status host_once(void *ctx)
{
    struct host_run *h = ctx;
    if (h->o->nrhs > 1) {
        bsrmv_status st = bsrmv_solve_multi((bsrmv_solver)h->o->method, h->A, h->P, h->n,
                                            h->o->nrhs, h->b, h->n, h->x, h->n, &h->o->so, h->reps);
        summarise(h->reps, h->o->nrhs, h->rep);
        return st;
    }
    if (h->Af)
        return bsrmv_solve_refined((bsrmv_solver)h->o->method, h->A, h->Af, h->P, h->b, h->x,
                                   h->n, &h->o->so, h->rep);
    return bsrmv_solve((bsrmv_solver)h->o->method, h->A, h->P, h->b, h->x, h->n, &h->o->so,
                       h->rep);
}

struct gpu_run {
    const struct opts *o;
    bsrmv_gpu_matrix *dA, *dAf;
    bsrmv_gpu_precond *dP;
    void *db, *dx;
    int64_t n;
    bsrmv_solve_report *rep, *reps;
};

static bsrmv_status gpu_once(void *ctx)
{
    struct gpu_run *g = ctx;
    if (g->o->nrhs > 1) {
        bsrmv_status st = bsrmv_gpu_solve_multi((bsrmv_solver)g->o->method, g->dA, g->dP, g->n,
                                                g->o->nrhs, g->db, g->n, g->dx, g->n, &g->o->so,
                                                g->reps, NULL);
        summarise(g->reps, g->o->nrhs, g->rep);
        return st;
    }
    if (g->dAf)
        return bsrmv_gpu_solve_refined((bsrmv_solver)g->o->method, g->dA, g->dAf, g->dP, g->db,
                                       g->dx, g->n, &g->o->so, g->rep, NULL);
    return bsrmv_gpu_solve((bsrmv_solver)g->o->method, g->dA, g->dP, g->db, g->dx, g->n,
                           &g->o->so, g->rep, NULL);
}

/* The GPU solves: upload, one short warm-up solve (module loading, first
 * launches), then the measured ones; x comes back to the host. */
static bsrmv_status gpu_solve(const struct opts *o, const bsrmv_matrix *A,
                              const bsrmv_matrix *Af, const bsrmv_precond *P, const void *b,
                              void *x, int64_t n, bsrmv_solve_report *rep,
                              bsrmv_solve_report *reps)
{
    bsrmv_gpu_matrix *dA = NULL, *dAf = NULL;
    bsrmv_gpu_precond *dP = NULL;
    void *db = NULL, *dx = NULL;
    const size_t bytes = (size_t)n * (size_t)o->nrhs * bsrmv_type_size(o->type);
    bsrmv_status st;
    if ((st = bsrmv_gpu_matrix_upload(&dA, A, 0, NULL)) ||
        (Af && (st = bsrmv_gpu_matrix_upload(&dAf, Af, 0, NULL))) ||
        (P && (st = bsrmv_gpu_precond_upload(&dP, P, 0))) ||
        (st = bsrmv_gpu_malloc(&db, bytes)) || (st = bsrmv_gpu_malloc(&dx, bytes)) ||
        (st = bsrmv_gpu_to_device(db, b, bytes)))
        goto done;
    bsrmv_solve_options warm = o->so;
    warm.max_iter = 2;
    struct gpu_run g = {o, dA, dAf, dP, db, dx, n, rep, reps};
    st = dAf ? bsrmv_gpu_solve_refined((bsrmv_solver)o->method, dA, dAf, dP, db, dx, n, &warm,
                                       rep, NULL)
             : bsrmv_gpu_solve((bsrmv_solver)o->method, dA, dP, db, dx, n, &warm, rep, NULL);
    if (st && st != BSRMV_ERR_NOT_CONVERGED)
        goto done;
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
    bsrmv_gpu_matrix_destroy(dAf);
    bsrmv_gpu_matrix_destroy(dA);
    return st;
}

/* The user's square matrix from o->mtx, cut into aligned bs x bs blocks
 * (--sym: the file's triangle in symmetric or Hermitian storage); a
 * complex file without --type makes o->type complex double. */
static int read_matrix(struct opts *o, bsrmv_matrix **A)
{
    bsrmv_coo *coo;
    int kind = 0;
    if (o->sym ? bsrmv_mm_read_sym(o->mtx, &coo, &kind)
               : bsrmv_mm_read_opts(o->mtx, &coo, &(bsrmv_mm_options){.progress = !o->json}))
        return cli_lib_failed("solve: reading %s", o->mtx);
    if (o->sym && !kind) {
        fprintf(stderr, "bsrmv solve: --sym: %s is not a symmetric or hermitian file (symmetric "
                        "storage keeps the triangle such a file stores)\n",
                o->mtx);
        bsrmv_coo_destroy(coo);
        return 1;
    }
    if (coo->imag && !o->type_given)
        o->type = BSRMV_COMPLEX_DOUBLE;
    int rc = 1;
    if (coo->imag && o->mixed)
        fprintf(stderr, "bsrmv solve: %s is complex; --type mixed is for real matrices\n",
                o->mtx);
    else if (coo->m != coo->n)
        fprintf(stderr, "bsrmv solve: %s is %" PRId64 " x %" PRId64 ", not square\n", o->mtx,
                coo->m, coo->n);
    else if (coo->m % o->bs != 0) {
        fprintf(stderr, "bsrmv solve: --bs %d does not divide the size %" PRId64 " of %s\n",
                o->bs, coo->m, o->mtx);
        rc = ARGS_EXIT_USAGE; /* a --bs that this matrix cannot take */
    }
    else if (cli_memory_check("bsrmv solve", "the matrix, its conversion and the solver's vectors",
                              cli_bsr_bytes((double)(coo->m / o->bs), (double)(coo->m / o->bs),
                                            (double)coo->nnz, o->bs, o->type) +
                                  (double)coo->nnz * 24 +
                                  12.0 * (double)coo->m * (double)bsrmv_type_size(o->type)))
        ;
    else if (kind == BSRMV_SYM_HERMITIAN
                 ? bsrmv_matrix_from_coo_herm(A, coo, o->bs, BSRMV_SPLIT, o->type, o->order)
             : kind ? bsrmv_matrix_from_coo_sym(A, coo, o->bs, BSRMV_SPLIT, o->type, o->order)
                    : bsrmv_matrix_from_coo(A, coo, o->bs, BSRMV_SPLIT, o->type, o->order))
        cli_lib_failed("solve: blocking %s with bs %d", o->mtx, o->bs);
    else
        rc = 0;
    bsrmv_coo_destroy(coo);
    return rc;
}

/* The next line of f that is neither a comment nor blank, into buf. */
static int next_line(gzFile f, char *buf, int len)
{
    while (gzgets(f, buf, len)) {
        const char *p = buf;
        while (isspace((unsigned char)*p))
            p++;
        if (*p && *p != '%')
            return 1;
    }
    return 0;
}

/* b (n values of type t) from a Matrix Market vector: dense "array" n x 1,
 * or "coordinate" n x 1 (missing entries are zero); real or, for a complex
 * t, complex. */
static int read_rhs(const char *path, int64_t n, bsrmv_type t, void *b)
{
    gzFile f = gzopen(path, "rb");
    char line[512];
    if (!f || !gzgets(f, line, sizeof line)) {
        fprintf(stderr, "bsrmv solve: cannot read %s\n", path);
        if (f)
            gzclose(f);
        return 1;
    }
    if (strncmp(line, "%%MatrixMarket", 14) != 0) {
        fprintf(stderr, "bsrmv solve: %s: not a Matrix Market file\n", path);
        gzclose(f);
        return 1;
    }
    const int cplx = strstr(line, " complex") != NULL;
    if (cplx && bench_parts(t) == 1) {
        fprintf(stderr, "bsrmv solve: %s is complex, the matrix real (--type z or c solves "
                "in complex)\n", path);
        gzclose(f);
        return 1;
    }
    if (!strstr(line, " array")) {
        gzclose(f);
        bsrmv_coo *coo;
        if (bsrmv_mm_read(path, &coo))
            return cli_lib_failed("solve: reading %s", path);
        int rc = coo->m != n || coo->n != 1;
        if (rc)
            fprintf(stderr, "bsrmv solve: %s is %" PRId64 " x %" PRId64 ", expected %" PRId64
                    " x 1\n", path, coo->m, coo->n, n);
        for (int64_t i = 0; i < n && !rc; i++)
            set_value(b, i, t, 0, 0);
        for (int64_t k = 0; k < coo->nnz && !rc; k++) { /* duplicates add up */
            const int64_t e = coo->row[k] * bench_parts(t);
            part_set(b, t, e, part_get(b, t, e) + coo->val[k]);
            if (coo->imag)
                part_set(b, t, e + 1, part_get(b, t, e + 1) + coo->imag[k]);
        }
        bsrmv_coo_destroy(coo);
        return rc;
    }
    long long rows = 0, cols = 0;
    int rc = 1;
    if (!next_line(f, line, sizeof line) || sscanf(line, "%lld %lld", &rows, &cols) != 2 ||
        rows != n || cols != 1) {
        fprintf(stderr, "bsrmv solve: %s: expected the size line %" PRId64 " 1\n", path, n);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        char *end, *end2;
        double re = 0, im = 0;
        if (!next_line(f, line, sizeof line) || (re = strtod(line, &end), end == line) ||
            (cplx && (im = strtod(end, &end2), end2 == end))) {
            fprintf(stderr, "bsrmv solve: %s: value %" PRId64 " of %" PRId64
                    " missing or not a number%s\n", path, i + 1, n,
                    cplx ? " (a complex array has two per line)" : "");
            goto done;
        }
        set_value(b, i, t, re, im);
    }
    rc = 0;
done:
    gzclose(f);
    return rc;
}

/* x as a Matrix Market array vector (gzip-compressed if path ends in .gz). */
static int write_x(const char *path, const void *x, int64_t n, bsrmv_type t)
{
    const size_t len = strlen(path);
    gzFile f = gzopen(path, len > 3 && strcmp(path + len - 3, ".gz") == 0 ? "wb" : "wT");
    if (!f) {
        fprintf(stderr, "bsrmv solve: cannot write %s\n", path);
        return 1;
    }
    int ok = gzprintf(f, "%%%%MatrixMarket matrix array %s general\n%" PRId64 " 1\n",
                      bench_parts(t) == 2 ? "complex" : "real", n) > 0;
    for (int64_t i = 0; i < n && ok; i++)
        ok = (bench_parts(t) == 2 ? gzprintf(f, "%.17g %.17g\n", part_get(x, t, 2 * i),
                                       part_get(x, t, 2 * i + 1))
                            : gzprintf(f, "%.17g\n", part_get(x, t, i))) > 0;
    if (gzclose(f) != Z_OK || !ok) {
        fprintf(stderr, "bsrmv solve: writing %s failed\n", path);
        return 1;
    }
    return 0;
}

/* b = A * ones: the solution is known (all ones) when no --rhs is given. */
static bsrmv_status rhs_of_ones(const bsrmv_matrix *A, void *b, int64_t n, bsrmv_type t)
{
    void *ones = malloc((size_t)n * bsrmv_type_size(t));
    if (!ones)
        return BSRMV_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++)
        set_value(ones, i, t, 1, 0);
    bsrmv_status st = bsrmv_spmv(BSRMV_OP_N, 1.0, A, ones, n, 0.0, b, n);
    free(ones);
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
                     .stream = 1, .stream_gib = 1, .repeat = 3, .nrhs = 1};
    args_init("bsrmv solve", "bsrmv solve --mtx FILE | --reservoir N | --grid N [options]");
    parse(argc, argv, &o);
    o.so.x0_zero = 1;
    int ndev = 0;
    if (o.gpu && (bsrmv_gpu_device_count(&ndev) || ndev < 1))
        return lib_failed("--gpu");
    bsrmv_matrix *A = NULL, *Af = NULL;
    bsrmv_precond *P = NULL;
    bsrmv_status st = BSRMV_SUCCESS;
    if (o.mtx) {
        const int rc = read_matrix(&o, &A);
        if (rc)
            return rc;
    } else if ((st = o.spd ? bsrmv_generate_block_laplacian(&A, o.d[0], o.d[1], o.d[2], o.bs,
                                                            o.seed, o.type, o.order)
                           : bsrmv_generate_reservoir(&A, o.d[0], o.d[1], o.d[2], o.bs, o.seed,
                                                      o.type, o.order))) {
        return lib_failed("generating the matrix");
    }
    if (o.sym && !o.mtx) { /* the Laplacian is symmetric: its upper half */
        bsrmv_matrix *S;
        st = bsrmv_matrix_to_sym(&S, A, 0);
        bsrmv_matrix_destroy(A);
        if (st)
            return lib_failed("the symmetric storage");
        A = S;
    }
    bsrmv_matrix_info in;
    bsrmv_matrix_get_info(A, &in);
    const int64_t n = in.rows;
    const size_t ts = bsrmv_type_size(o.type);
    void *b = malloc((size_t)n * (size_t)o.nrhs * ts);
    void *x = calloc((size_t)n * (size_t)o.nrhs, ts);
    bsrmv_solve_report *reps = calloc((size_t)o.nrhs, sizeof *reps);
    int rc = 1;
    if (!b || !x || !reps) {
        fprintf(stderr, "bsrmv solve: out of memory for the vectors\n");
        goto done;
    }
    if (o.rhs) {
        if (read_rhs(o.rhs, n, o.type, b))
            goto done;
    } else if ((st = o.mtx ? rhs_of_ones(A, b, n, o.type)
                           : bsrmv_fill_random(b, n, o.type, o.seed + 1))) {
        lib_failed("making b");
        goto done;
    }
    for (int j = 1; j < o.nrhs; j++)
        if ((st = bsrmv_fill_random((char *)b + (size_t)j * (size_t)n * ts, n, o.type,
                                    o.seed + 1 + (uint64_t)j))) {
            lib_failed("making b");
            goto done;
        }
    if (o.mixed && ((st = bsrmv_matrix_convert(&Af, A, BSRMV_FLOAT)) ||
                    (st = bsrmv_matrix_set_vector_type(Af, BSRMV_DOUBLE)))) {
        lib_failed("making the float copy");
        goto done;
    }
    if (o.precond && (st = bsrmv_precond_block_jacobi(&P, Af ? Af : A))) {
        lib_failed("building the block-Jacobi preconditioner");
        goto done;
    }
    char device[128];
    const double gbps = o.stream ? bandwidth(&o, device, sizeof device) : 0;
    if (!o.stream)
        snprintf(device, sizeof device, "%s", o.gpu ? "gpu 0" : "cpu");
    bsrmv_solve_report rep = {0};
    struct host_run h = {&o, A, Af, P, b, x, n, &rep, reps};
    st = o.gpu ? gpu_solve(&o, A, Af, P, b, x, n, &rep, reps) : repeated(&o, host_once, &h, &rep);
    if (st && st != BSRMV_ERR_NOT_CONVERGED) {
        lib_failed("solving");
        goto done;
    }
    const char *why = st ? bsrmv_last_error() : "";
    double host_rel = 0;
    for (int j = 0; j < o.nrhs; j++)
        host_rel = fmax(host_rel, host_residual(A, (const char *)b + (size_t)j * (size_t)n * ts,
                                                (const char *)x + (size_t)j * (size_t)n * ts, n,
                                                o.type));
    const int it = rep.iterations > 0 ? rep.iterations : 1;
    const double ms_iter = 1e3 * rep.seconds / it, bytes_iter = rep.bytes / it;
    const double bound_ms = gbps > 0 ? bytes_iter / gbps * 1e-6 : 0;
    const double eff = bound_ms > 0 && ms_iter > 0 ? bound_ms / ms_iter : 0;
    const char *tname = o.mixed ? "mixed" : bench_type_name(o.type, o.type);
    const char *mname = o.mtx ? o.mtx : o.spd ? "block_laplacian" : "reservoir";
    if (o.json) {
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "matrix", mname);
        if (!o.mtx) {
            json_int(&j, "nx", o.d[0]);
            json_int(&j, "ny", o.d[1]);
            json_int(&j, "nz", o.d[2]);
        }
        json_int(&j, "bs", o.bs);
        json_str(&j, "type", tname);
        json_str(&j, "order", o.order == BSRMV_COL_MAJOR ? "col" : "row");
        json_str(&j, "storage", in.symmetric == BSRMV_SYM_HERMITIAN ? "hermitian"
                                : in.symmetric                    ? "symmetric"
                                                                  : "full");
        json_int(&j, "rows", n);
        json_int(&j, "nnzb", in.nnzb);
        json_str(&j, "method", methods[o.method]);
        json_str(&j, "precond", P ? "jacobi" : "none");
        json_str(&j, "backend", o.gpu ? "gpu" : "cpu");
        json_str(&j, "device", device);
        json_int(&j, "threads", o.gpu ? 0 : bsrmv_num_threads());
        json_int(&j, "nrhs", o.nrhs);
        json_int(&j, "iterations", rep.iterations);
        if (o.mixed)
            json_int(&j, "refinements", rep.refinements);
        json_int(&j, "converged", rep.converged);
        json_num(&j, "rel_residual", rep.rel_residual);
        json_num(&j, "true_rel_residual", rep.true_rel_residual);
        json_num(&j, "host_rel_residual", host_rel);
        json_int(&j, "repeat", o.repeat);
        json_num(&j, "seconds", rep.seconds);
        json_num(&j, "ms_per_iter", ms_iter);
        json_num(&j, "bytes_per_iter", bytes_iter);
        /* not measured (--no-stream): null, not a zero bandwidth */
        json_num(&j, "read_gbps", gbps > 0 ? gbps : NAN);
        json_num(&j, "bound_ms_per_iter", gbps > 0 ? bound_ms : NAN);
        json_num(&j, "efficiency", gbps > 0 ? eff : NAN);
        json_str(&j, "message", why);
        json_end(&j);
    } else {
        char shape[96] = "";
        if (!o.mtx)
            snprintf(shape, sizeof shape, " %lld x %lld x %lld", (long long)o.d[0],
                     (long long)o.d[1], (long long)o.d[2]);
        printf("matrix     %s%s, bs %d, %s %s%s: %lld unknowns, %lld blocks, %.3g GB per "
               "SpMV\n",
               mname, shape, o.bs, tname, o.order == BSRMV_COL_MAJOR ? "col" : "row",
               in.symmetric == BSRMV_SYM_HERMITIAN ? ", hermitian storage"
               : in.symmetric                      ? ", symmetric storage"
                                                   : "",
               (long long)n, (long long)in.nnzb, bsrmv_matrix_spmv_bytes(A) * 1e-9);
        if (o.mtx)
            printf("rhs        %s\n", o.rhs ? o.rhs : "A * ones (no --rhs): x should be all ones");
        printf("solver     %s, %s, on %s\n", methods[o.method],
               P ? "block Jacobi" : "no preconditioner", device);
        if (o.nrhs > 1) {
            int lo = reps[0].iterations, done_cols = 0;
            for (int j = 0; j < o.nrhs; j++) {
                lo = reps[j].iterations < lo ? reps[j].iterations : lo;
                done_cols += reps[j].converged != 0;
            }
            printf("columns    %d right-hand sides solved together: %d converged, %d-%d "
                   "iterations (the lines below: the worst column, the joint time)\n",
                   o.nrhs, done_cols, lo, rep.iterations);
        }
        if (o.mixed)
            printf("refinement %d corrections on the float copy\n", rep.refinements);
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
    if (o.out && write_x(o.out, x, n, o.type))
        rc = 1;
done:
    free(b);
    free(x);
    free(reps);
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(Af);
    bsrmv_matrix_destroy(A);
    return rc;
}
