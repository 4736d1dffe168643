/* bsrmv: command-line front end.  `info` describes a matrix, `bench` times
 * the SpMV against the machine's read bandwidth. */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) */
#include "args.h"
#include "bench.h"
#include "json.h"
#include "stream.h"
#include "solve.h"
#include "bridge.h" /* bridge_main */
#ifdef BSRMV_HAVE_GPU_BENCH
#include "bench_gpu.h" /* bsrmv_tune_main */
#endif

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FALLBACK_LLC ((double)(32 << 20))
/* --example: matrix values at least this many times the last-level cache,
 * so every SpMV streams the matrix from memory. */
#define EXAMPLE_LLC_FACTOR 10
#define EXAMPLE_REPS 20
#define DEFAULT_REPS 50
#define DEFAULT_SEED 1
#define MAX_BS 1024

static const int default_bs[] = {1, 2, 3, 4, 6, 8, 16};

static void usage(FILE *f)
{
    fputs(
        "usage: bsrmv info FILE.mtx[.gz]\n"
        "       bsrmv info --grid N|NX,NY,NZ --bs LIST [--stencil 7|27]\n"
        "       bsrmv info --powerlaw SPEC|--arrow SPEC --bs LIST\n"
        "       bsrmv bench SOURCE [options]\n"
        "       bsrmv tune [options]   (GPU builds: bsrmv tune --help)\n"
        "       bsrmv solve [options]  (Krylov solvers, time vs bandwidth: bsrmv solve --help)\n"
        "       bsrmv bridge [options] (suspension-bridge analysis: bsrmv bridge --help)\n"
        "       bsrmv help\n"
        "\n"
        "info: dimensions, nnz, symmetry, block-row lengths (as bs=1 BSR) and\n"
        "  the fill ratio nnzb*bs*bs/nnz of an aligned split for bs 1..8; for a\n"
        "  generated matrix: nnzb and block-row lengths per block size.\n"
        "\n"
        "bench: times y = alpha*A*x + beta*y (median of the timed calls) per\n"
        "  block size, type, thread count and CPU kernel, checks y against a\n"
        "  long-double reference and compares GB/s with the stream read bandwidth.\n"
        "  SOURCE is one of\n"
        "  --mtx FILE          Matrix Market file, blocked by\n"
        "    --split           aligned bs x bs blocks, zeros filled in (default)\n"
        "    --promote         each scalar becomes a dense bs x bs block\n"
        "  --grid N|NX,NY,NZ   3D grid of N^3 (NX*NY*NZ) nodes, a block per neighbour\n"
        "    --stencil 7|27    neighbours per node (default 27)\n"
        "  --powerlaw MB[,MEAN[,MAXLEN[,EXPONENT]]]\n"
        "                      MB x MB blocks, Pareto block-row lengths with tail\n"
        "                      EXPONENT (default 2), mean ~MEAN (default 8), longest\n"
        "                      row exactly MAXLEN (default min(MB, 100000)), random\n"
        "                      columns\n"
        "  --arrow N[,DENSE]   N x N blocks: DENSE (default 1) full block rows and\n"
        "                      block columns plus the diagonal\n"
        "  --example           27-point grids with values >= 10x the last-level\n"
        "                      cache; defaults bs 1,2,3,4,6,8,16, threads 1 and\n"
        "                      all, 20 reps\n"
        "options:\n"
        "  --bs LIST           block sizes (default 1,2,3,4,6,8,16)\n"
        "  --type LIST         double, float (default double)\n"
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
        "  --verbose           wall time per phase on stderr, a line per matrix\n"
        "                      (build, reference, cpu, gpu...; on with --gpu)\n"
        "LISTs are comma-separated, e.g. --bs 1,2,3 --threads 1,2.\n"
        "Exit status: 0 ok, 1 a failure or a wrong result, 2 bad arguments.\n",
        f);
}

/* Reports a failed library call: "bsrmv: <what>: <library message>". */
static int lib_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bsrmv: ", stderr);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, ": %s\n", bsrmv_last_error());
    va_end(ap);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Argument parsing                                                    */
/* ------------------------------------------------------------------ */

static uint64_t parse_seed(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-')
        args_fail("--seed: expected a non-negative integer, got '%s'", s);
    return v;
}

/* Splits a comma list into at most max items of at most 31 characters. */
static int split_list(const char *opt, const char *s, char items[][32], int max)
{
    int n = 0;
    for (;;) {
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= 32)
            args_fail("%s: bad list '%s'", opt, s);
        if (n == max)
            args_fail("%s: more than %d items", opt, max);
        memcpy(items[n], s, len);
        items[n++][len] = '\0';
        if (s[len] == '\0')
            return n;
        s += len + 1;
    }
}

static int parse_int_list(const char *opt, const char *s, int *out, int max, int64_t hi)
{
    char items[BENCH_MAX_LIST][32];
    int n = split_list(opt, s, items, max);
    for (int i = 0; i < n; i++)
        out[i] = (int)args_integer(opt, items[i], 1, hi);
    return n;
}

static void parse_grid(const char *s, int64_t grid[3])
{
    char items[3][32];
    int n = split_list("--grid", s, items, 3);
    if (n == 2)
        args_fail("--grid: expected N or NX,NY,NZ, got '%s'", s);
    for (int d = 0; d < 3; d++)
        grid[d] = args_integer("--grid", items[n == 1 ? 0 : d], 1, INT32_MAX);
}

#define POWERLAW_MEAN 8.0
#define POWERLAW_MAX_LEN 100000
#define POWERLAW_EXPONENT 2.0

static void parse_powerlaw(const char *s, struct bench_options *o)
{
    char items[4][32];
    int n = split_list("--powerlaw", s, items, 4);
    int64_t mb = args_integer("--powerlaw", items[0], 1, INT32_MAX);
    int64_t max_len = n > 2 ? args_integer("--powerlaw MAXLEN", items[2], 1, mb)
                            : (mb < POWERLAW_MAX_LEN ? mb : POWERLAW_MAX_LEN);
    double mean = n > 1 ? args_number("--powerlaw MEAN", items[1], -DBL_MAX, DBL_MAX)
                        : fmin(POWERLAW_MEAN, (double)max_len);
    double exponent = n > 3 ? args_number("--powerlaw EXPONENT", items[3], -DBL_MAX, DBL_MAX)
                            : POWERLAW_EXPONENT;
    if (mean < 0 || mean > (double)max_len)
        args_fail("--powerlaw: MEAN must lie in [0, MAXLEN = %" PRId64 "], got '%s'",
                    max_len, items[1]);
    if (exponent <= 1)
        args_fail("--powerlaw: EXPONENT must be > 1, got '%s'", items[3]);
    o->powerlaw.mb = mb;
    o->powerlaw.mean_len = mean;
    o->powerlaw.max_len = max_len;
    o->powerlaw.exponent = exponent;
}

static void parse_arrow(const char *s, struct bench_options *o)
{
    char items[2][32];
    int n = split_list("--arrow", s, items, 2);
    o->arrow_n = args_integer("--arrow", items[0], 1, INT32_MAX);
    o->arrow_dense = n > 1 ? args_integer("--arrow DENSE", items[1], 0, o->arrow_n) : 1;
}

static int parse_stencil(const char *s)
{
    int p = (int)args_integer("--stencil", s, 7, 27);
    if (p != 7 && p != 27)
        args_fail("--stencil: expected 7 or 27, got '%s'", s);
    return p;
}

static int parse_types(const char *s, bsrmv_type *out)
{
    char items[2][32];
    int n = split_list("--type", s, items, 2);
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i], "double") == 0)
            out[i] = BSRMV_DOUBLE;
        else if (strcmp(items[i], "float") == 0)
            out[i] = BSRMV_FLOAT;
        else
            args_fail("--type: expected double or float, got '%s'", items[i]);
    }
    return n;
}

static int parse_kernels(const char *s, bsrmv_cpu_kernel *out)
{
    char items[2][32];
    int n = split_list("--kernels", s, items, 2);
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i], "auto") == 0 || strcmp(items[i], "specialised") == 0)
            out[i] = BSRMV_CPU_AUTO;
        else if (strcmp(items[i], "generic") == 0)
            out[i] = BSRMV_CPU_GENERIC;
        else
            args_fail("--kernels: expected auto or generic, got '%s'", items[i]);
    }
    return n;
}

static bsrmv_order parse_order(const char *s)
{
    if (strcmp(s, "col") == 0)
        return BSRMV_COL_MAJOR;
    if (strcmp(s, "row") == 0)
        return BSRMV_ROW_MAJOR;
    args_fail("--order: expected col or row, got '%s'", s);
    return BSRMV_COL_MAJOR;
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "help") == 0;
}

static void set_source(struct bench_options *o, enum bench_source s)
{
    if (o->source != BENCH_NONE)
        args_fail("give one matrix source: --mtx, --grid, --powerlaw, --arrow or --example");
    o->source = s;
}

/* Options of both commands; `bench` says which ones the command accepts. */
static void parse_options(int argc, char **argv, struct bench_options *o, int bench)
{
    int reps_given = 0, threads_given = 0, blocking_given = 0;
    *o = (struct bench_options){
        .blocking = BSRMV_SPLIT,
        .stencil = 27,
        .types = {BSRMV_DOUBLE},
        .n_types = 1,
        .order = BSRMV_COL_MAJOR,
        .kernels = {BSRMV_CPU_AUTO, BSRMV_CPU_GENERIC},
        .n_kernels = 2,
        .seed = DEFAULT_SEED,
        .alpha = 1,
        .beta = 0,
        .stream = 1,
        .stream_gib = 1,
    };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (is_help(a)) {
            usage(stdout);
            exit(0);
        } else if ((v = args_value(argc, argv, &i, "--grid"))) {
            set_source(o, BENCH_GRID);
            parse_grid(v, o->grid);
        } else if ((v = args_value(argc, argv, &i, "--powerlaw"))) {
            set_source(o, BENCH_POWERLAW);
            parse_powerlaw(v, o);
        } else if ((v = args_value(argc, argv, &i, "--arrow"))) {
            set_source(o, BENCH_ARROW);
            parse_arrow(v, o);
        } else if ((v = args_value(argc, argv, &i, "--bs"))) {
            o->n_bs = parse_int_list("--bs", v, o->bs, BENCH_MAX_LIST, MAX_BS);
        } else if ((v = args_value(argc, argv, &i, "--stencil"))) {
            o->stencil = parse_stencil(v);
        } else if (!bench) {
            args_fail("info: unknown argument '%s'", a);
        } else if ((v = args_value(argc, argv, &i, "--mtx"))) {
            set_source(o, BENCH_MTX);
            o->mtx = v;
        } else if (strcmp(a, "--example") == 0) {
            set_source(o, BENCH_EXAMPLE);
        } else if (strcmp(a, "--split") == 0 || strcmp(a, "--promote") == 0) {
            o->blocking = strcmp(a, "--split") == 0 ? BSRMV_SPLIT : BSRMV_PROMOTE;
            blocking_given = 1;
        } else if ((v = args_value(argc, argv, &i, "--type"))) {
            o->n_types = parse_types(v, o->types);
        } else if ((v = args_value(argc, argv, &i, "--order"))) {
            o->order = parse_order(v);
        } else if ((v = args_value(argc, argv, &i, "--reps"))) {
            o->reps = (int)args_integer("--reps", v, 1, 1000000);
            reps_given = 1;
        } else if ((v = args_value(argc, argv, &i, "--threads"))) {
            o->n_threads = parse_int_list("--threads", v, o->threads, BENCH_MAX_LIST, 4096);
            threads_given = 1;
        } else if ((v = args_value(argc, argv, &i, "--kernels"))) {
            o->n_kernels = parse_kernels(v, o->kernels);
        } else if ((v = args_value(argc, argv, &i, "--seed"))) {
            o->seed = parse_seed(v);
        } else if ((v = args_value(argc, argv, &i, "--alpha"))) {
            o->alpha = args_number("--alpha", v, -DBL_MAX, DBL_MAX);
        } else if ((v = args_value(argc, argv, &i, "--beta"))) {
            o->beta = args_number("--beta", v, -DBL_MAX, DBL_MAX);
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--no-stream") == 0) {
            o->stream = 0;
        } else if ((v = args_value(argc, argv, &i, "--stream-gib"))) {
            o->stream_gib = args_number("--stream-gib", v, -DBL_MAX, DBL_MAX);
            if (o->stream_gib <= 0 || o->stream_gib > 1024)
                args_fail("--stream-gib: expected a size in (0, 1024], got '%s'", v);
        } else if (strcmp(a, "--gpu") == 0) {
            o->gpu = 1;
        } else if ((v = args_value(argc, argv, &i, "--gpu-kernels"))) {
            o->gpu_kernels = strcmp(v, "auto") == 0 ? BENCH_GPU_AUTO : BENCH_GPU_ALL;
            o->gpu_kernel_prefixes = strcmp(v, "all") == 0 || strcmp(v, "auto") == 0 ? NULL : v;
        } else if (strcmp(a, "--no-cpu") == 0) {
            o->no_cpu = 1;
        } else if (strcmp(a, "--cold-launch") == 0) {
            o->cold_launch = 1;
        } else if (strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
        } else {
            args_fail("bench: unknown argument '%s'", a);
        }
    }
    if (!bench)
        return;
    if (o->source == BENCH_NONE)
        args_fail("bench needs a matrix: --mtx FILE, --grid N, --powerlaw MB, --arrow N "
                    "or --example");
    if (blocking_given && o->source != BENCH_MTX)
        args_fail("--split and --promote apply to --mtx only");
    if (o->no_cpu && !o->gpu)
        args_fail("--no-cpu needs --gpu (there would be nothing to time)");
    if (o->gpu)
        o->verbose = 1;
    if (o->n_bs == 0) {
        o->n_bs = (int)(sizeof default_bs / sizeof default_bs[0]);
        memcpy(o->bs, default_bs, sizeof default_bs);
    }
    if (!reps_given)
        o->reps = o->source == BENCH_EXAMPLE ? EXAMPLE_REPS : DEFAULT_REPS;
    if (!threads_given) {
        /* The example shows the scaling from one thread to all of them. */
        int max = omp_get_max_threads();
        o->n_threads = 0;
        if (o->source == BENCH_EXAMPLE && max > 1)
            o->threads[o->n_threads++] = 1;
        o->threads[o->n_threads++] = max;
    }
}

/* ------------------------------------------------------------------ */
/* Matrices                                                            */
/* ------------------------------------------------------------------ */

/* Stored blocks of a grid: along each axis a node couples to itself and
 * its two neighbours, except at the two ends. */
static double grid_blocks(const int64_t g[3], int stencil)
{
    double nx = (double)g[0], ny = (double)g[1], nz = (double)g[2];
    if (stencil == 27)
        return (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2);
    return nx * ny * nz + 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1));
}

/* Size of cpu0's L3 from sysfs ("32768K"), 0 if there is none. */
static double sysfs_l3_bytes(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    if (!f)
        return 0;
    double size = 0;
    char unit = 0;
    int n = fscanf(f, "%lf%c", &size, &unit);
    fclose(f);
    if (n < 1)
        return 0;
    return size * (unit == 'K' ? 1024 : unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : 1);
}

/* Distinct L3 instances (sockets or core complexes): together they cache
 * what the threads touch, so the example must outgrow all of them. */
static int sysfs_l3_instances(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    int ids[256], n = 0;
    for (long cpu = 0; cpu < ncpu && n < 256; cpu++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/cache/index3/id", cpu);
        FILE *f = fopen(path, "r");
        int id;
        if (!f)
            continue;
        int ok = fscanf(f, "%d", &id) == 1;
        fclose(f);
        int seen = 0;
        for (int k = 0; k < n && ok; k++)
            seen |= ids[k] == id;
        if (ok && !seen)
            ids[n++] = id;
    }
    return n > 0 ? n : 1;
}

/* sysfs first: in virtual machines glibc's sysconf, which reads CPUID, can
 * be off by a large factor (320 MiB for a 32 MiB L3 on the dev machine). */
static double llc_bytes(void)
{
    double l3 = sysfs_l3_bytes();
    if (l3 > 0)
        return l3 * sysfs_l3_instances();
#ifdef _SC_LEVEL3_CACHE_SIZE
    long s = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (s > 0)
        return (double)s;
#endif
    return FALLBACK_LLC;
}

/* Smallest cubic grid whose values take at least EXAMPLE_LLC_FACTOR x llc. */
static int64_t example_grid_n(int bs, bsrmv_type t, int stencil, double llc)
{
    double block_bytes = (double)bs * bs * (double)bsrmv_type_size(t);
    int64_t n = 1;
    for (;;) {
        int64_t g[3] = {n, n, n};
        if (grid_blocks(g, stencil) * block_bytes >= EXAMPLE_LLC_FACTOR * llc)
            return n;
        n++;
    }
}

/* "bcsstk16" from ".../bcsstk16.mtx.gz". */
static void file_stem(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, size, "%s", base);
    static const char *const exts[] = {".gz", ".mtx"};
    for (int e = 0; e < 2; e++) {
        size_t n = strlen(out), k = strlen(exts[e]);
        if (n > k && strcmp(out + n - k, exts[e]) == 0)
            out[n - k] = '\0';
    }
}

static int generate_grid(bsrmv_matrix **A, const int64_t g[3], int stencil, int bs,
                         bsrmv_type t, const struct bench_options *o, char *name,
                         size_t size)
{
    snprintf(name, size, "grid%d_%" PRId64 "x%" PRId64 "x%" PRId64, stencil, g[0], g[1], g[2]);
    if (bsrmv_generate_grid(A, g[0], g[1], g[2], bs, stencil, o->seed, t, o->order) !=
        BSRMV_SUCCESS)
        return lib_failed("generating %s with bs %d", name, bs);
    return 0;
}

/* The generated matrix of o's source (--grid, --powerlaw, --arrow) for one
 * bs and type, and its report name. */
static int generate_matrix(const struct bench_options *o, int bs, bsrmv_type t,
                           bsrmv_matrix **A, char *name, size_t size)
{
    bsrmv_status s;
    if (o->source == BENCH_POWERLAW) {
        snprintf(name, size, "powerlaw%" PRId64 "_m%g_max%" PRId64 "_a%g", o->powerlaw.mb,
                 o->powerlaw.mean_len, o->powerlaw.max_len, o->powerlaw.exponent);
        s = bsrmv_generate_powerlaw(A, o->powerlaw.mb, o->powerlaw.mb, bs, o->powerlaw.mean_len,
                                    o->powerlaw.exponent, o->powerlaw.max_len, o->seed, t,
                                    o->order);
    } else if (o->source == BENCH_ARROW) {
        snprintf(name, size, "arrow%" PRId64 "_d%" PRId64, o->arrow_n, o->arrow_dense);
        s = bsrmv_generate_arrow(A, o->arrow_n, o->arrow_dense, bs, o->seed, t, o->order);
    } else {
        return generate_grid(A, o->grid, o->stencil, bs, t, o, name, size);
    }
    if (s != BSRMV_SUCCESS)
        return lib_failed("generating %s with bs %d", name, bs);
    return 0;
}

/* The matrix of one (bs, type) and its report name. */
static int build_matrix(const struct bench_options *o, const bsrmv_coo *coo, double llc,
                        int bs, bsrmv_type t, bsrmv_matrix **A, char *name, size_t size)
{
    if (o->source == BENCH_MTX) {
        char stem[200];
        file_stem(o->mtx, stem, sizeof stem);
        snprintf(name, size, "%s:%s", stem, o->blocking == BSRMV_SPLIT ? "split" : "promote");
        if (bsrmv_matrix_from_coo(A, coo, bs, o->blocking, o->seed, t, o->order) !=
            BSRMV_SUCCESS)
            return lib_failed("building %s with bs %d", name, bs);
        return 0;
    }
    if (o->source == BENCH_EXAMPLE) {
        int64_t n = example_grid_n(bs, t, o->stencil, llc);
        int64_t g[3] = {n, n, n};
        return generate_grid(A, g, o->stencil, bs, t, o, name, size);
    }
    return generate_matrix(o, bs, t, A, name, size);
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

static struct {
    int header_done;
    int name_width;
    int wrong; /* measurements whose rel_err is above the tolerance */
} out;

static const char *type_name(bsrmv_type t)
{
    return t == BSRMV_FLOAT ? "float" : "double";
}

/* sqrt(eps) of the type: far above rounding, far below a wrong kernel. */
static double tolerance(bsrmv_type t)
{
    return t == BSRMV_FLOAT ? sqrt(FLT_EPSILON) : sqrt(DBL_EPSILON);
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
    json_str(&j, "type", type_name(r->type));
    json_str(&j, "order", r->order == BSRMV_COL_MAJOR ? "col" : "row");
    if (r->stream_gbps > 0)
        json_num(&j, "stream_frac", r->gbps / r->stream_gbps);
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
           out.name_width, r->matrix, r->bs, type_name(r->type), r->threads, r->kernel,
           r->rows, r->nnzb, r->bytes * 1e-6, r->time_ms, r->gbps, frac, r->gflops,
           r->rel_err, wrong ? "  WRONG" : "");
}

void bench_emit(const struct bench_options *o, const struct bench_record *r)
{
    /* NaN is wrong too, but for the gather bound ("bound"), which has no y */
    int wrong = strcmp(r->backend, "bound") != 0 && !(r->rel_err <= tolerance(r->type));
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

/* ------------------------------------------------------------------ */
/* bench                                                               */
/* ------------------------------------------------------------------ */

static int gpu_bench_available(void)
{
#ifdef BSRMV_HAVE_GPU_BENCH
    return bench_gpu_available();
#else
    return 0;
#endif
}

static int bench_matrix(const struct bench_options *o, const bsrmv_coo *coo, double llc,
                        int bs, bsrmv_type t, const double *stream_gbps)
{
    char name[256];
    bsrmv_matrix *A;
    double t0 = bench_now_ms();
    if (build_matrix(o, coo, llc, bs, t, &A, name, sizeof name) != 0)
        return 1;
    double build_ms = bench_now_ms() - t0;
    struct bench_case c;
    int rc = bench_case_init(&c, A, name, o);
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
    return rc;
}

static int bench_command(int argc, char **argv)
{
    struct bench_options o;
    parse_options(argc, argv, &o, 1);
    if (o.gpu && !gpu_bench_available()) {
#ifdef BSRMV_HAVE_GPU_BENCH
        fprintf(stderr, "bsrmv: no GPU for the benchmark: %s\n", bsrmv_last_error());
#else
        fprintf(stderr, "bsrmv: built without the GPU benchmark\n");
#endif
        return ARGS_EXIT_USAGE;
    }

    /* Read first: a bad file should fail before the slow stream passes. */
    bsrmv_coo *coo = NULL;
    double t0 = bench_now_ms();
    if (o.source == BENCH_MTX && bsrmv_mm_read(o.mtx, &coo, 1) != BSRMV_SUCCESS)
        return lib_failed("reading %s", o.mtx);
    if (o.source == BENCH_MTX && o.verbose)
        fprintf(stderr, "bsrmv: phases: read %s in %.0f ms\n", o.mtx, bench_now_ms() - t0);

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
        llc = llc_bytes();
        if (!o.json)
            printf("last-level cache %.0f MiB: example matrices hold >= %.0f MiB of values\n",
                   llc / (1 << 20), EXAMPLE_LLC_FACTOR * llc / (1 << 20));
    }
    int rc = 0;
    for (int b = 0; b < o.n_bs && rc == 0; b++)
        for (int t = 0; t < o.n_types && rc == 0; t++)
            rc = bench_matrix(&o, coo, llc, o.bs[b], o.types[t], stream_gbps);
    bsrmv_coo_destroy(coo);
    if (rc == 0 && out.wrong > 0) {
        fprintf(stderr, "bsrmv: %d measurement%s with rel_err above tolerance\n", out.wrong,
                out.wrong == 1 ? "" : "s");
        rc = 1;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* info                                                                */
/* ------------------------------------------------------------------ */

struct entry {
    int64_t col;
    double val;
};

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->col != y->col)
        return (x->col > y->col) - (x->col < y->col);
    return (x->val > y->val) - (x->val < y->val);
}

/* Row-compressed copy of coo (or of its transpose), each row sorted. */
static int sorted_rows(const bsrmv_coo *coo, int transpose, int64_t **ptr_out,
                       struct entry **ent_out)
{
    const int64_t *rows = transpose ? coo->col : coo->row;
    const int64_t *cols = transpose ? coo->row : coo->col;
    int64_t n = coo->m, nnz = coo->nnz;
    int64_t *ptr = calloc((size_t)n + 1, sizeof *ptr);
    int64_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    struct entry *ent = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *ent);
    if (!ptr || !fill || !ent) {
        free(ptr);
        free(fill);
        free(ent);
        return 1;
    }
    for (int64_t k = 0; k < nnz; k++)
        ptr[rows[k] + 1]++;
    for (int64_t i = 0; i < n; i++)
        ptr[i + 1] += ptr[i];
    memcpy(fill, ptr, ((size_t)n + 1) * sizeof *fill);
    for (int64_t k = 0; k < nnz; k++)
        ent[fill[rows[k]]++] = (struct entry){cols[k], coo->val[k]};
    for (int64_t i = 0; i < n; i++)
        qsort(ent + ptr[i], (size_t)(ptr[i + 1] - ptr[i]), sizeof *ent, cmp_entry);
    free(fill);
    *ptr_out = ptr;
    *ent_out = ent;
    return 0;
}

/* Symmetry of the entries as read (the reader expands symmetric files, so
 * this is what the stored matrix is, whatever the file header said). */
static const char *symmetry(const bsrmv_coo *coo)
{
    if (coo->m != coo->n)
        return "unsymmetric (not square)";
    int64_t *p, *pt;
    struct entry *e, *et;
    if (sorted_rows(coo, 0, &p, &e) != 0)
        return "unknown (out of memory)";
    if (sorted_rows(coo, 1, &pt, &et) != 0) {
        free(p);
        free(e);
        return "unknown (out of memory)";
    }
    int pattern = memcmp(p, pt, ((size_t)coo->m + 1) * sizeof *p) == 0;
    int sym = pattern, skew = pattern;
    for (int64_t k = 0; k < coo->nnz && pattern; k++) {
        pattern = e[k].col == et[k].col;
        sym &= e[k].val == et[k].val;
        skew &= e[k].val == -et[k].val;
    }
    free(p);
    free(e);
    free(pt);
    free(et);
    if (!pattern)
        return "unsymmetric";
    return sym ? "symmetric" : skew ? "skew-symmetric" : "structurally symmetric";
}

static int info_file(const char *path)
{
    bsrmv_coo *coo;
    if (bsrmv_mm_read(path, &coo, 1) != BSRMV_SUCCESS)
        return lib_failed("reading %s", path);
    printf("file        %s\n", path);
    printf("size        %" PRId64 " x %" PRId64 "\n", coo->m, coo->n);
    printf("nnz         %" PRId64 "\n", coo->nnz);
    printf("symmetry    %s\n", symmetry(coo));

    bsrmv_matrix *A;
    bsrmv_matrix_info in;
    if (bsrmv_matrix_from_coo(&A, coo, 1, BSRMV_SPLIT, 0, BSRMV_DOUBLE, BSRMV_COL_MAJOR) !=
        BSRMV_SUCCESS) {
        bsrmv_coo_destroy(coo);
        return lib_failed("converting %s to BSR", path);
    }
    bsrmv_status st = bsrmv_matrix_get_info(A, &in);
    bsrmv_matrix_destroy(A);
    if (st != BSRMV_SUCCESS) {
        bsrmv_coo_destroy(coo);
        return lib_failed("reading the info of %s", path);
    }
    printf("row length  min %" PRId64 ", mean %.2f, max %" PRId64 " (as bs=1 BSR, %" PRId64
           " empty rows)\n",
           in.row_len_min, in.row_len_mean, in.row_len_max, in.empty_rows);

    printf("aligned split:\n  bs %12s %8s\n", "nnzb", "fill");
    for (int bs = 1; bs <= 8; bs++) {
        int64_t nnzb;
        if (bsrmv_coo_count_blocks(coo, bs, &nnzb) != BSRMV_SUCCESS) {
            bsrmv_coo_destroy(coo);
            return lib_failed("counting the %dx%d blocks of %s", bs, bs, path);
        }
        if (coo->nnz > 0)
            printf("  %2d %12" PRId64 " %8.3f\n", bs, nnzb, (double)nnzb * bs * bs / coo->nnz);
        else
            printf("  %2d %12" PRId64 " %8s\n", bs, nnzb, "-");
    }
    bsrmv_coo_destroy(coo);
    return 0;
}

static int info_generated(const struct bench_options *o)
{
    if (o->n_bs == 0)
        args_fail("info --grid/--powerlaw/--arrow needs --bs");
    printf("%-32s %4s %12s %12s %14s %8s %8s %8s %10s\n", "matrix", "bs", "rows", "nnzb",
           "nnz", "len min", "mean", "max", "val MB");
    for (int b = 0; b < o->n_bs; b++) {
        char name[96];
        bsrmv_matrix *A;
        bsrmv_matrix_info in;
        if (generate_matrix(o, o->bs[b], BSRMV_DOUBLE, &A, name, sizeof name) != 0)
            return 1;
        bsrmv_status st = bsrmv_matrix_get_info(A, &in);
        bsrmv_matrix_destroy(A);
        if (st != BSRMV_SUCCESS)
            return lib_failed("reading the info of %s", name);
        double nnz = (double)in.nnzb * in.bs * in.bs;
        printf("%-32s %4d %12" PRId64 " %12" PRId64 " %14.0f %8" PRId64 " %8.2f %8" PRId64
               " %10.1f\n",
               name, in.bs, in.rows, in.nnzb, nnz, in.row_len_min, in.row_len_mean,
               in.row_len_max, nnz * sizeof(double) * 1e-6);
    }
    return 0;
}

static int info_command(int argc, char **argv)
{
    if (argc == 1 && !is_help(argv[0]) && argv[0][0] != '-')
        return info_file(argv[0]);
    struct bench_options o;
    parse_options(argc, argv, &o, 0);
    if (o.source != BENCH_GRID && o.source != BENCH_POWERLAW && o.source != BENCH_ARROW)
        args_fail("info needs FILE.mtx[.gz], or --grid N, --powerlaw MB or --arrow N with "
                    "--bs B");
    return info_generated(&o);
}

int main(int argc, char **argv)
{
    args_init("bsrmv", usage);
    if (argc < 2) {
        usage(stderr);
        return ARGS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (is_help(cmd)) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("bsrmv %s\n", bsrmv_version());
        return 0;
    }
    if (strcmp(cmd, "info") == 0)
        return info_command(argc - 2, argv + 2);
    if (strcmp(cmd, "bench") == 0)
        return bench_command(argc - 2, argv + 2);
    if (strcmp(cmd, "solve") == 0)
        return solve_command(argc - 2, argv + 2);
    if (strcmp(cmd, "bridge") == 0)
        return bridge_main(argc - 2, argv + 2);
#ifdef BSRMV_HAVE_GPU_BENCH
    if (strcmp(cmd, "tune") == 0)
        return bsrmv_tune_main(argc - 1, argv + 1);
#endif
    args_fail("unknown command '%s'", cmd);
    return ARGS_EXIT_USAGE;
}
