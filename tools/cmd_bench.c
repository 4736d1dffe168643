/* `bsrmv bench`: times the SpMV of one matrix source per block size, type,
 * thread count and kernel, and prints a table or JSON lines. */
#include "cli.h"

#include "args.h"
#include "json.h"
#include "stream.h"
#ifdef BSRMV_HAVE_GPU_BENCH
#include "bench_gpu.h"
#endif

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_help(FILE *f)
{
    fputs(
        "usage: bsrmv bench SOURCE [options]\n"
        "Times y = alpha*A*x + beta*y (median of the timed calls) per block size,\n"
        "type, thread count and CPU kernel, checks y against a long-double\n"
        "reference and compares GB/s with the stream read bandwidth.\n"
        "  SOURCE is one of\n"
        "  --mtx FILE          Matrix Market file, blocked by\n"
        "    --split           aligned bs x bs blocks, zeros filled in (default)\n"
        "    --promote         each scalar becomes a dense bs x bs block\n"
        "  --grid N|NX,NY,NZ   3D grid of N^3 (NX*NY*NZ) nodes, a block per neighbour\n"
        "    --stencil 7|27    neighbours per node (default 27)\n"
        "  --powerlaw MB[,MEAN[,MAXLEN[,EXPONENT[,BAND]]]]\n"
        "                      MB x MB blocks, Pareto block-row lengths with tail\n"
        "                      EXPONENT (default 2), mean ~MEAN (default 8), longest\n"
        "                      row exactly MAXLEN (default min(MB, 100000)), random\n"
        "                      columns: anywhere, or within BAND block columns of\n"
        "                      the diagonal (MAXLEN <= BAND <= MB)\n"
        "  --arrow N[,DENSE]   N x N blocks: DENSE (default 1) full block rows and\n"
        "                      block columns plus the diagonal\n"
        "  --example           27-point grids with values >= 10x the last-level\n"
        "                      cache; defaults bs 1,2,3,4,6,8,16, threads 1 and\n"
        "                      all, 20 reps\n"
        "options:\n"
        "  --bs LIST           block sizes (default 1,2,3,4,6,8,16)\n"
        "  --type LIST         double, float, mixed (float values, double vectors),\n"
        "                      z or c (complex double, complex float; default\n"
        "                      double, z for a complex file)\n"
        "  --order col|row     entry order inside a block (default col)\n"
        "  --reps R            timed calls per measurement (default 50)\n"
        "  --threads LIST      OpenMP thread counts (default: OMP max threads)\n"
        "  --kernels LIST      auto (compile-time bs, shown as specialised),\n"
        "                      generic (default auto,generic)\n"
        "  --seed S            seed of the matrix and vectors (default 1)\n"
        "  --alpha A --beta B  (default 1 and 0)\n"
        "  --json              only JSON lines on stdout, one per measurement\n"
        "  --no-stream         skip the read-bandwidth measurement\n"
        "  --stream-gib G      array size of that measurement (default 1)\n"
        "  --gpu               also time the GPU backend: bsrmv GPU kernels and\n"
        "                      cuSPARSE (bsrmv col/row, SpMV BSR_ALG1, CSR_ALG1)\n"
        "    --gpu-kernels K   all: every applicable bsrmv GPU kernel and the\n"
        "                      dispatcher's pick (default); auto: the pick only;\n"
        "                      P1,P2,...: the kernels whose name begins with one\n"
        "                      of them (e.g. merge_path/g1) and the pick\n"
        "    --no-cpu          GPU records only: no CPU timing, no stream; y is\n"
        "                      still checked against the reference\n"
        "    --cold-launch     time each GPU call from an idle GPU, the host's\n"
        "                      launch latency included (default: queued behind a\n"
        "                      stall, the GPU's time alone)\n"
        "    --gpu-traffic T   memory traffic before each timed GPU call, as a\n"
        "                      solver makes between SpMVs: cg (the vectors of one\n"
        "                      CG iteration, 10 x rows values), a size in MB, or\n"
        "                      0: calls back to back (default); two of them\n"
        "                      (e.g. cg,0): every case timed in both modes\n"
        "    --gpu-reps R      timed GPU calls (default max(--reps, 50))\n"
        "    --gpu-tune        the pick is the measured choice\n"
        "                      (bsrmv_gpu_matrix_tune), its cost on stderr\n"
        "    --gpu-tune-max N  the same, timing the table's choice and the next\n"
        "                      N configurations of the plan's order only\n"
        "  --k LIST            also time SpMM (bsrmv_spmm) with each count of\n"
        "                      vectors against as many separate SpMVs (kernel\n"
        "                      spmvxK), timed alternately; time_ms is per call\n"
        "                      of K vectors (CPU, the auto kernels); with --gpu\n"
        "                      also bsrmv_gpu_spmm, K bsrmv_gpu_spmv calls and\n"
        "                      cusparseSpMM (BSR and CSR algorithms, same layout)\n"
        "    --layout LIST     the multivectors' layouts, row and/or col\n"
        "                      (default row)\n"
        "  --sym               symmetric storage (upper blocks) against the full\n"
        "                      storage of the same matrix, timed alternately\n"
        "                      (kernels full and sym; CPU and GPU): a symmetric\n"
        "                      --mtx file as it is, other sources made symmetric\n"
        "                      positive definite (upper blocks mirrored, diagonal\n"
        "                      dominant; z and c: Hermitian positive definite in\n"
        "                      Hermitian storage); with --k the SpMM of both\n"
        "                      storages (CPU: full-spmm-L, sym-spmm-L; GPU also\n"
        "                      sym-spmvxK)\n"
        "  --verbose           wall time per phase on stderr, a line per matrix\n"
        "                      (build, reference, cpu, gpu...; on with --gpu)\n"
        "LISTs are comma-separated, e.g. --bs 1,2,3 --threads 1,2.\n"
        "Exit status: 0 ok, 1 a failure or a wrong result, 2 bad arguments.\n",
        f);
}


static struct {
    int header_done;
    int name_width;
    int wrong; /* measurements whose rel_err is above the tolerance */
} out;

/* sqrt(eps) of the type: far above rounding, far below a wrong kernel. */
static double tolerance(bsrmv_type t)
{
    return t == BSRMV_FLOAT || t == BSRMV_COMPLEX_FLOAT ? sqrt(FLT_EPSILON) : sqrt(DBL_EPSILON);
}

static void print_json_record(const struct bench_record *r)
{
    struct json_line j;
    json_begin(&j, stdout);
    json_str(&j, "matrix", r->matrix);
    json_int(&j, "bs", r->bs);
    json_int(&j, "rows", r->rows);
    json_int(&j, "cols", r->cols);
    json_int(&j, "nnzb", r->nnzb);
    json_int(&j, "bytes", (int64_t)r->bytes);
    json_str(&j, "backend", r->backend);
    json_str(&j, "kernel", r->kernel);
    json_int(&j, "threads", r->threads);
    json_num(&j, "time_ms", r->time_ms);
    json_num(&j, "gbps", r->gbps);
    json_num(&j, "gflops", r->gflops);
    json_num(&j, "rel_err", r->rel_err);
    json_str(&j, "type", bench_type_name(r->type, r->vtype));
    json_str(&j, "order", r->order == BSRMV_COL_MAJOR ? "col" : "row");
    if (r->stream_gbps > 0)
        json_num(&j, "stream_frac", r->gbps / r->stream_gbps);
    if (r->k > 0) {
        json_int(&j, "k", r->k);
        json_num(&j, "vectors_per_s", r->k / (r->time_ms * 1e-3));
        if (r->layout)
            json_str(&j, "layout", r->layout);
    }
    if (r->speedup > 0)
        json_num(&j, r->k > 0 ? "speedup_vs_spmv" : "speedup_vs_full", r->speedup);
    json_end(&j);
}

static void print_table_record(const struct bench_record *r, int wrong)
{
    if (!out.header_done) {
        out.name_width = (int)strlen(r->matrix) > 18 ? (int)strlen(r->matrix) : 18;
        printf("%-*s %3s %-6s %3s %-12s %10s %10s %9s %9s %7s %9s %8s %9s\n", out.name_width,
               "matrix", "bs", "type", "thr", "kernel", "rows", "nnzb", "MB", "time_ms",
               "GB/s", "of-stream", "GFLOP/s", "rel_err");
        out.header_done = 1;
    }
    char frac[16] = "-";
    if (r->stream_gbps > 0)
        snprintf(frac, sizeof frac, "%.2f", r->gbps / r->stream_gbps);
    printf("%-*s %3d %-6s %3d %-12s %10" PRId64 " %10" PRId64 " %9.1f %9.3f %7.2f %9s %8.2f %9.1e%s\n",
           out.name_width, r->matrix, r->bs,
           /* the complex types by their --type letters, to fit the column */
           r->type == BSRMV_COMPLEX_DOUBLE  ? "z"
           : r->type == BSRMV_COMPLEX_FLOAT ? "c"
                                            : bench_type_name(r->type, r->vtype),
           r->threads, r->kernel,
           r->rows, r->nnzb, r->bytes * 1e-6, r->time_ms, r->gbps, frac, r->gflops,
           r->rel_err, wrong ? "  WRONG" : "");
    if (r->speedup > 0 && r->k > 0 && !strncmp(r->kernel, "sym-", 4))
        printf("%*s k = %d: %.4g vectors/s, %.2fx the full storage's SpMM\n", out.name_width,
               "", r->k, r->k / (r->time_ms * 1e-3), r->speedup);
    else if (r->speedup > 0 && r->k > 0)
        printf("%*s k = %d: %.4g vectors/s, %.2fx the vectors/s of %d separate SpMVs\n",
               out.name_width, "", r->k, r->k / (r->time_ms * 1e-3), r->speedup, r->k);
    else if (r->speedup > 0)
        printf("%*s %.2fx the speed of the full storage\n", out.name_width, "", r->speedup);
}

void bench_print_record(const struct bench_options *o, const struct bench_record *r)
{
    /* NaN is wrong too, but for the gather bound ("bound"), which has no y */
    int wrong = strcmp(r->backend, "bound") != 0 && !(r->rel_err <= tolerance(r->vtype));
    out.wrong += wrong;
    if (o->json)
        print_json_record(r);
    else
        print_table_record(r, wrong);
    fflush(stdout); /* long runs: show each result as it comes */
}

static void print_stream(const struct bench_options *o, const struct stream_result *s)
{
    if (o->json) {
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "backend", "stream");
        json_int(&j, "threads", s->threads);
        json_num(&j, "gbps", s->gbps);
        json_int(&j, "bytes", (int64_t)s->bytes);
        json_num(&j, "time_ms", s->time_ms);
        json_end(&j);
    } else {
        printf("stream read, %3d thread%s: %8.2f GB/s  (%.2f GiB array, median pass %.1f ms)\n",
               s->threads, s->threads == 1 ? " " : "s", s->gbps,
               (double)s->bytes / (1 << 30), s->time_ms);
    }
    fflush(stdout);
}

static int gpu_bench_available(void)
{
#ifdef BSRMV_HAVE_GPU_BENCH
    return bench_gpu_available();
#else
    return 0;
#endif
}

/* Part q of value `at` of val (parts of doubles or of floats). */
static double part_at(const void *val, int dbl, int64_t at)
{
    return dbl ? ((const double *)val)[at] : ((const float *)val)[at];
}

/* Symmetric positive definite from any square A (complex values: Hermitian
 * positive definite, in Hermitian storage): its diagonal and upper blocks,
 * the diagonal blocks made symmetric ((D + D^T)/2; complex (D + D^H)/2)
 * and their diagonal entries 1 + the sum of |entries| of the row (both
 * triangles), imaginary part 0. */
static int make_spd(const bsrmv_matrix *A, bsrmv_matrix **S)
{
    bsrmv_matrix_info in;
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    if (bsrmv_matrix_get_info(A, &in) || bsrmv_matrix_arrays(A, &rp, &ci, &val))
        return cli_lib_failed("reading the matrix");
    if (in.mb != in.nb) {
        fprintf(stderr, "bsrmv: --sym needs a square matrix\n");
        return 1;
    }
    const int p = bench_parts(in.type);
    const int dbl = in.type == BSRMV_DOUBLE || in.type == BSRMV_COMPLEX_DOUBLE;
    const int bs = in.bs;
    const int64_t bs2 = (int64_t)bs * bs, mb = in.mb;
    const int64_t nval = in.nnzb > 0 ? in.nnzb * bs2 * p : 1;
    int64_t *urp = malloc((size_t)(mb + 1) * sizeof *urp);
    int32_t *uci = malloc((size_t)(in.nnzb > 0 ? in.nnzb : 1) * sizeof *uci);
    double *uval = malloc((size_t)nval * sizeof *uval);
    double *rowsum = calloc((size_t)(in.rows > 0 ? in.rows : 1), sizeof *rowsum);
    void *tval = NULL;
    int rc = 1;
    if (!urp || !uci || !uval || !rowsum) {
        fprintf(stderr, "bsrmv: out of memory for the symmetric matrix\n");
        goto done;
    }
    /* Entry (r, c) of a block at r*rs + c*cs. */
    const int64_t rs = in.order == BSRMV_COL_MAJOR ? 1 : bs, cs = in.order == BSRMV_COL_MAJOR ? bs : 1;
    int64_t n = 0;
    urp[0] = 0;
    for (int64_t i = 0; i < mb; i++) {
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            if (ci[k] < i)
                continue;
            for (int r = 0; r < bs; r++)
                for (int c = 0; c < bs; c++) {
                    const int64_t at = (k * bs2 + r * rs + c * cs) * p;
                    const int64_t mirror = (k * bs2 + c * rs + r * cs) * p;
                    double v[2] = {0.0, 0.0};
                    for (int q = 0; q < p; q++) {
                        v[q] = part_at(val, dbl, at + q);
                        if (ci[k] == i) /* the mirror's conjugate */
                            v[q] = 0.5 * (v[q] + (q ? -1.0 : 1.0) * part_at(val, dbl, mirror + q));
                        uval[(n * bs2 + r * rs + c * cs) * p + q] = v[q];
                    }
                    const double m = hypot(v[0], v[1]);
                    if (ci[k] != i || r != c)
                        rowsum[i * bs + r] += m;
                    if (ci[k] != i)
                        rowsum[(int64_t)ci[k] * bs + c] += m;
                }
            uci[n++] = ci[k];
        }
        urp[i + 1] = n;
    }
    for (int64_t i = 0; i < mb; i++)
        if (urp[i + 1] > urp[i] && uci[urp[i]] == i)
            for (int r = 0; r < bs; r++) {
                double *d = uval + (urp[i] * bs2 + r * rs + r * cs) * p;
                d[0] = 1.0 + rowsum[i * bs + r];
                if (p == 2)
                    d[1] = 0.0;
            }
    if (!dbl) {
        if (!(tval = malloc((size_t)(n * bs2 * p > 0 ? n * bs2 * p : 1) * sizeof(float)))) {
            fprintf(stderr, "bsrmv: out of memory for the symmetric matrix\n");
            goto done;
        }
        for (int64_t q = 0; q < n * bs2 * p; q++)
            ((float *)tval)[q] = (float)uval[q];
    }
    const void *sv = tval ? tval : (void *)uval;
    if (p == 2 ? bsrmv_matrix_create_herm(S, mb, bs, n, urp, uci, sv, in.type, in.order)
               : bsrmv_matrix_create_sym(S, mb, bs, n, urp, uci, sv, in.type, in.order))
        rc = cli_lib_failed("making the symmetric matrix");
    else
        rc = 0;
done:
    free(urp);
    free(uci);
    free(uval);
    free(rowsum);
    free(tval);
    return rc;
}

/* --sym: S in symmetric storage and A its full storage. */
static int build_sym(const struct bench_options *o, const bsrmv_coo *coo, double llc, int bs,
                     bsrmv_type t, bsrmv_matrix **A, bsrmv_matrix **S, char *name, size_t size)
{
    bsrmv_matrix *G = NULL;
    *A = *S = NULL;
    if (o->coo_triangle) {
        const char *base = strrchr(o->mtx, '/');
        char stem[200];
        snprintf(stem, sizeof stem, "%s", base ? base + 1 : o->mtx);
        static const char *const ext[] = {".gz", ".mtx"};
        for (int e = 0; e < 2; e++) {
            size_t n = strlen(stem), k = strlen(ext[e]);
            if (n > k && strcmp(stem + n - k, ext[e]) == 0)
                stem[n - k] = 0;
        }
        snprintf(name, size, "%s:%s:sym", stem, o->blocking == BSRMV_SPLIT ? "split" : "promote");
        if ((o->coo_triangle == BSRMV_SYM_HERMITIAN
                 ? bsrmv_matrix_from_coo_herm(S, coo, bs, o->blocking, t, o->order)
                 : bsrmv_matrix_from_coo_sym(S, coo, bs, o->blocking, t, o->order)) ||
            (o->blocking == BSRMV_PROMOTE && bsrmv_matrix_perturb_promoted(*S, o->seed))) {
            bsrmv_matrix_destroy(*S);
            *S = NULL;
            return cli_lib_failed("building %s with bs %d", name, bs);
        }
    } else {
        if (cli_build_matrix(o, coo, llc, bs, t, &G, name, size) != 0)
            return 1;
        int rc = make_spd(G, S);
        bsrmv_matrix_destroy(G);
        if (rc)
            return 1;
        size_t len = strlen(name);
        snprintf(name + len, size - len, bench_parts(t) == 2 ? ":hpd" : ":spd");
    }
    if (bsrmv_matrix_from_sym(A, *S)) {
        bsrmv_matrix_destroy(*S);
        *S = NULL;
        return cli_lib_failed("expanding the symmetric matrix");
    }
    return 0;
}

static int bench_matrix(const struct bench_options *o, const bsrmv_coo *coo, double llc,
                        int bs, bsrmv_type t, bsrmv_type vt, const double *stream_gbps)
{
    char name[256];
    bsrmv_matrix *A, *S = NULL;
    /* --sym holds the matrix twice (full and half) */
    if (cli_memory_check("bsrmv bench", "this matrix with its vectors",
                         cli_source_bytes(o, coo, llc, bs, t) * (o->sym ? 2 : 1)))
        return 1;
    double t0 = bench_now_ms();
    if (o->sym ? build_sym(o, coo, llc, bs, t, &A, &S, name, sizeof name) != 0
               : cli_build_matrix(o, coo, llc, bs, t, &A, name, sizeof name) != 0)
        return 1;
    if (bsrmv_matrix_set_vector_type(A, vt) != BSRMV_SUCCESS) {
        bsrmv_matrix_destroy(A);
        return cli_lib_failed("setting the vector type");
    }
    double build_ms = bench_now_ms() - t0;
    struct bench_case c;
    int rc = bench_case_init(&c, A, name, o);
    c.S = S;
    c.ms.build = build_ms;
    if (rc == 0 && !o->no_cpu) {
        c.stream_gbps = stream_gbps;
        rc = bench_cpu(o, &c);
    }
#ifdef BSRMV_HAVE_GPU_BENCH
    if (rc == 0 && o->gpu)
        rc = bench_gpu(o, &c);
#endif
    if (o->verbose)
        bench_phases_print(&c);
    bench_case_free(&c);
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(S);
    return rc;
}

int bench_command(int argc, char **argv)
{
    args_init("bsrmv bench", "bsrmv bench --mtx FILE | --grid N | --powerlaw MB | --arrow N | "
                             "--example [options]");
    struct bench_options o;
    cli_parse_options(argc, argv, &o, 1);
    o.emit = bench_print_record;
    if (o.gpu && !gpu_bench_available()) {
#ifdef BSRMV_HAVE_GPU_BENCH
        fprintf(stderr, "bsrmv: no GPU for the benchmark: %s\n", bsrmv_last_error());
#else
        fprintf(stderr, "bsrmv: built without the GPU benchmark\n");
#endif
        return 1; /* the machine, not the arguments (as solve --gpu) */
    }

    /* Read first: a bad file should fail before the slow stream passes. */
    bsrmv_coo *coo = NULL;
    double t0 = bench_now_ms();
    if (o.source == BENCH_MTX && o.sym) {
        if (bsrmv_mm_read_sym(o.mtx, &coo, &o.coo_triangle) != BSRMV_SUCCESS)
            return cli_lib_failed("reading %s", o.mtx);
    } else if (o.source == BENCH_MTX &&
               bsrmv_mm_read_opts(o.mtx, &coo, &(bsrmv_mm_options){.progress = 1}) != BSRMV_SUCCESS)
        return cli_lib_failed("reading %s", o.mtx);
    if (o.source == BENCH_MTX && o.verbose)
        fprintf(stderr, "bsrmv: phases: read %s in %.0f ms\n", o.mtx, bench_now_ms() - t0);
    if (coo && coo->imag && !o.types_given) { /* a complex file: complex double */
        o.n_types = 1;
        o.types[0] = o.vtypes[0] = BSRMV_COMPLEX_DOUBLE;
    }

    /* The stream bandwidths belong to the CPU records. */
    double stream_gbps[BENCH_MAX_LIST] = {0};
    for (int i = 0; i < o.n_threads && o.stream && !o.no_cpu; i++) {
        struct stream_result s;
        if (stream_measure(o.threads[i], (size_t)(o.stream_gib * (1 << 30)), &s) != 0) {
            bsrmv_coo_destroy(coo);
            return 1;
        }
        stream_gbps[i] = s.gbps;
        print_stream(&o, &s);
    }

    double llc = 0;
    if (o.source == BENCH_EXAMPLE) {
        llc = cli_llc_bytes();
        if (!o.json)
            printf("last-level cache %.0f MiB: example matrices hold >= %.0f MiB of values\n",
                   llc / (1 << 20), EXAMPLE_LLC_FACTOR * llc / (1 << 20));
    }
    int rc = 0;
    for (int b = 0; b < o.n_bs && rc == 0; b++)
        for (int t = 0; t < o.n_types && rc == 0; t++)
            rc = bench_matrix(&o, coo, llc, o.bs[b], o.types[t], o.vtypes[t], stream_gbps);
    bsrmv_coo_destroy(coo);
    if (rc == 0 && out.wrong > 0) {
        fprintf(stderr, "bsrmv: %d measurement%s with rel_err above tolerance\n", out.wrong,
                out.wrong == 1 ? "" : "s");
        rc = 1;
    }
    return rc;
}
