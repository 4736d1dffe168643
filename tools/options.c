/* Options of the matrix sources and of the benchmark, shared by `bsrmv
 * info` and `bsrmv bench`. */
#include "cli.h"

#include "args.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXAMPLE_REPS 20
#define DEFAULT_REPS 50
#define DEFAULT_SEED 1
#define MAX_BS 1024

static const int default_bs[] = {1, 2, 3, 4, 6, 8, 16};

int cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "help") == 0;
}

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
    char items[5][32];
    int n = split_list("--powerlaw", s, items, 5);
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
    o->powerlaw.band = n > 4 ? args_integer("--powerlaw BAND", items[4], max_len, mb) : mb;
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

/* mixed: float values with double vectors. */
static int parse_types(const char *s, bsrmv_type *out, bsrmv_type *vout)
{
    char items[5][32]; /* every type once (bench.h) */
    int n = split_list("--type", s, items, 5);
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i], "double") == 0)
            out[i] = vout[i] = BSRMV_DOUBLE;
        else if (strcmp(items[i], "float") == 0)
            out[i] = vout[i] = BSRMV_FLOAT;
        else if (strcmp(items[i], "mixed") == 0) {
            out[i] = BSRMV_FLOAT;
            vout[i] = BSRMV_DOUBLE;
        } else if (strcmp(items[i], "z") == 0 || strcmp(items[i], "complex-double") == 0)
            out[i] = vout[i] = BSRMV_COMPLEX_DOUBLE;
        else if (strcmp(items[i], "c") == 0 || strcmp(items[i], "complex-float") == 0)
            out[i] = vout[i] = BSRMV_COMPLEX_FLOAT;
        else
            args_fail("--type: expected double, float, mixed, z (complex double) or c (complex "
                      "float), got '%s'",
                      items[i]);
    }
    return n;
}

static int parse_layouts(const char *s, bsrmv_layout *out)
{
    char items[2][32];
    int n = split_list("--layout", s, items, 2);
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i], "row") == 0)
            out[i] = BSRMV_LAYOUT_ROW;
        else if (strcmp(items[i], "col") == 0)
            out[i] = BSRMV_LAYOUT_COL;
        else
            args_fail("--layout: expected row or col, got '%s'", items[i]);
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

static void set_source(struct bench_options *o, enum bench_source s)
{
    if (o->source != BENCH_NONE)
        args_fail("give one matrix source: --mtx, --grid, --powerlaw, --arrow or --example");
    o->source = s;
}

void cli_parse_options(int argc, char **argv, struct bench_options *o, int bench)
{
    int reps_given = 0, threads_given = 0, blocking_given = 0;
    *o = (struct bench_options){
        .blocking = BSRMV_SPLIT,
        .stencil = 27,
        .types = {BSRMV_DOUBLE},
        .vtypes = {BSRMV_DOUBLE},
        .n_types = 1,
        .order = BSRMV_COL_MAJOR,
        .kernels = {BSRMV_CPU_AUTO, BSRMV_CPU_GENERIC},
        .n_kernels = 2,
        .seed = DEFAULT_SEED,
        .alpha = 1,
        .beta = 0,
        .stream = 1,
        .stream_gib = 1,
        .layouts = {BSRMV_LAYOUT_ROW},
        .n_layouts = 1,
    };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (cli_is_help(a)) {
            (bench ? bench_help : info_help)(stdout);
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
        } else if ((v = args_value(argc, argv, &i, "--mtx"))) {
            set_source(o, BENCH_MTX);
            o->mtx = v;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (!bench && a[0] != '-') {
            set_source(o, BENCH_MTX); /* `info FILE`: --mtx FILE */
            o->mtx = a;
        } else if (!bench) {
            args_fail("unknown argument '%s'", a);
        } else if (strcmp(a, "--example") == 0) {
            set_source(o, BENCH_EXAMPLE);
        } else if (strcmp(a, "--split") == 0 || strcmp(a, "--promote") == 0) {
            o->blocking = strcmp(a, "--split") == 0 ? BSRMV_SPLIT : BSRMV_PROMOTE;
            blocking_given = 1;
        } else if ((v = args_value(argc, argv, &i, "--type"))) {
            o->n_types = parse_types(v, o->types, o->vtypes);
            o->types_given = 1;
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
        } else if ((v = args_value(argc, argv, &i, "--gpu-traffic"))) {
            char items[2][32];
            o->n_gpu_traffic = split_list("--gpu-traffic", v, items, 2);
            for (int t = 0; t < o->n_gpu_traffic; t++)
                o->gpu_traffic[t] = strcmp(items[t], "cg") == 0 ? BENCH_TRAFFIC_CG
                                                               : args_number("--gpu-traffic", items[t], 0, 1e6) * 1e6;
        } else if (strcmp(a, "--gpu-tune") == 0) {
            o->gpu_tune = 1;
        } else if ((v = args_value(argc, argv, &i, "--gpu-tune-max"))) {
            o->gpu_tune = 1;
            o->gpu_tune_max = (int)args_integer("--gpu-tune-max", v, 1, 1000000);
        } else if ((v = args_value(argc, argv, &i, "--gpu-reps"))) {
            o->gpu_reps = (int)args_integer("--gpu-reps", v, 5, 1000000);
        } else if ((v = args_value(argc, argv, &i, "--k"))) {
            o->n_k = parse_int_list("--k", v, o->k, BENCH_MAX_LIST, 4096);
        } else if ((v = args_value(argc, argv, &i, "--layout"))) {
            o->n_layouts = parse_layouts(v, o->layouts);
        } else if (strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
        } else if (strcmp(a, "--sym") == 0) {
            o->sym = 1;
        } else {
            args_fail("unknown argument '%s'", a);
        }
    }
    /* generated matrices take bench's block sizes in info too; a file's
     * info lists its own default (cmd_info.c) */
    if (o->n_bs == 0 && (bench || (o->source != BENCH_MTX && o->source != BENCH_NONE))) {
        o->n_bs = (int)(sizeof default_bs / sizeof default_bs[0]);
        memcpy(o->bs, default_bs, sizeof default_bs);
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
