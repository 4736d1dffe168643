/* bsrmv tune: brute-force timing of every GPU kernel/parameter set on a
 * 27-point grid matrix per (type, order, bs), writing the fastest as the
 * tune table that the dispatcher reads (BSRMV_TUNE_FILE or
 * bsrmv_gpu_load_tune_file).  With --bench it also times cuSPARSE and the
 * read bandwidth (the numbers of docs/GPU.md), and prints a summary table. */
#include "bench_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tune_help(FILE *f)
{
    fputs("usage: bsrmv tune [--bs LIST] [--type double,float] [--order col|row|both]\n"
          "                  [--mb MB] [--stencil 7|27] [--reps R] [--out FILE]\n"
          "                  [--bench] [--json]\n"
          "  times every GPU kernel on a grid matrix of about MB megabytes (default\n"
          "  300) per block size and writes the fastest per (type, order, bs) to FILE\n"
          "  (default bsrmv_tune.txt); --bench adds cuSPARSE and the read bandwidth.\n"
          "  Use the table with BSRMV_TUNE_FILE=FILE (docs/GPU.md, \"How to tune\").\n",
          f);
}

/* A bad argument: what is wrong and the one-line usage, exit status 2. */
static int tune_bad(const char *what, const char *arg)
{
    fprintf(stderr, "bsrmv tune: %s '%s'\n"
                    "usage: bsrmv tune [--bs LIST] [--type T] [--order O] [--mb MB] [--out FILE] "
                    "[--bench] [--json]\n"
                    "Run 'bsrmv tune --help' for the options.\n",
            what, arg);
    return 2;
}

static int parse_list(const char *s, int *v, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || x < 1 || x > 4096)
            return -1;
        v[n++] = (int)x;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

int bsrmv_tune_main(int argc, char **argv, bench_emit_fn emit)
{
    int bs[BENCH_MAX_LIST] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32};
    int nbs = 12;
    bsrmv_type types[2] = {BSRMV_DOUBLE};
    int ntypes = 1;
    bsrmv_order orders[2] = {BSRMV_COL_MAJOR};
    int norders = 1;
    double mbytes = 300;
    const char *out = "bsrmv_tune.txt";
    struct bench_options o;
    memset(&o, 0, sizeof o);
    o.source = BENCH_GRID;
    o.stencil = 27;
    o.reps = 50;
    o.seed = 1;
    o.alpha = 1;
    o.beta = 0;
    o.gpu = 1;
    o.emit = emit;
    int bench = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            tune_help(stdout);
            return 0;
        } else if (!strcmp(a, "--bs") && v) {
            nbs = parse_list(v, bs, BENCH_MAX_LIST);
            i++;
            if (nbs < 1)
                return tune_bad("--bs: expected a list of block sizes, got", v);
        } else if (!strcmp(a, "--type") && v) {
            ntypes = 0;
            if (strstr(v, "double"))
                types[ntypes++] = BSRMV_DOUBLE;
            if (strstr(v, "float"))
                types[ntypes++] = BSRMV_FLOAT;
            i++;
        } else if (!strcmp(a, "--order") && v) {
            norders = 0;
            if (!strcmp(v, "col") || !strcmp(v, "both"))
                orders[norders++] = BSRMV_COL_MAJOR;
            if (!strcmp(v, "row") || !strcmp(v, "both"))
                orders[norders++] = BSRMV_ROW_MAJOR;
            i++;
        } else if (!strcmp(a, "--mb") && v) {
            mbytes = atof(v);
            i++;
        } else if (!strcmp(a, "--stencil") && v) {
            o.stencil = atoi(v);
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            o.reps = atoi(v);
            i++;
        } else if (!strcmp(a, "--out") && v) {
            out = v;
            i++;
        } else if (!strcmp(a, "--bench")) {
            bench = 1;
        } else if (!strcmp(a, "--json")) {
            o.json = 1;
        } else {
            return tune_bad("unknown argument or missing value", a);
        }
    }
    if (ntypes < 1 || norders < 1 || mbytes <= 0 || (o.stencil != 7 && o.stencil != 27))
        return tune_bad("bad value in", "--type, --order, --mb or --stencil");
    if (!bench_gpu_available()) {
        fprintf(stderr, "bsrmv: %s\n", bsrmv_last_error());
        return 1;
    }
    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "bsrmv: cannot write %s\n", out);
        return 1;
    }
    int n = ntypes * norders * nbs, k = 0, rc = 0;
    struct bench_gpu_summary *sums = calloc((size_t)n, sizeof *sums);
    int *sbs = calloc((size_t)n, sizeof *sbs);
    bsrmv_type *stype = calloc((size_t)n, sizeof *stype);
    bsrmv_order *sorder = calloc((size_t)n, sizeof *sorder);
    if (!sums || !sbs || !stype || !sorder) {
        fclose(f);
        return 1;
    }
    for (int ti = 0; ti < ntypes; ti++)
        for (int oi = 0; oi < norders; oi++)
            for (int bi = 0; bi < nbs; bi++) {
                const size_t ts = bsrmv_type_size(types[ti]);
                const double per_node = (double)o.stencil * ((double)bs[bi] * bs[bi] * ts + 4);
                int64_t g = (int64_t)ceil(cbrt(mbytes * 1e6 / per_node));
                if (g < 4)
                    g = 4;
                bsrmv_matrix *A;
                if (bsrmv_generate_grid(&A, g, g, g, bs[bi], o.stencil, o.seed, types[ti], orders[oi]) !=
                    BSRMV_SUCCESS) {
                    fprintf(stderr, "bsrmv: grid %lld^3 bs %d: %s\n", (long long)g, bs[bi], bsrmv_last_error());
                    rc = 1;
                    continue;
                }
                char name[64];
                snprintf(name, sizeof name, "grid%d_%lld^3", o.stencil, (long long)g);
                struct bench_case c;
                if (bench_case_init(&c, A, name, &o) != 0) {
                    bsrmv_matrix_destroy(A);
                    rc = 1;
                    continue;
                }
                struct bench_gpu_summary *s = &sums[k];
                if (bench_gpu_run(&o, &c, bench, s) != 0)
                    rc = 1;
                sbs[k] = bs[bi];
                stype[k] = types[ti];
                sorder[k] = orders[oi];
                if (s->best_gbps > 0) {
                    const bsrmv_gpu_config *b = &s->best_cfg;
                    fprintf(f, "%s %s %d %s %d %d %d %d  # %.0f GB/s on %s, %.0f MB\n",
                            types[ti] == BSRMV_DOUBLE ? "double" : "float",
                            orders[oi] == BSRMV_COL_MAJOR ? "col" : "row", bs[bi],
                            bsrmv_gpu_kernel_name(b->kernel), b->group, b->rows, b->threads, b->param,
                            s->best_gbps, s->device, c.bytes / 1e6);
                    fflush(f);
                }
                k++;
                bench_case_free(&c);
                bsrmv_matrix_destroy(A);
            }
    fclose(f);
    /* summary (to stderr when stdout carries JSON) */
    FILE *so = o.json ? stderr : stdout;
    fprintf(so, "\nGPU %s, read-only kernel %.0f GB/s; tune table written to %s\n",
            k ? sums[0].device : "?", k ? sums[0].read_gbps : 0.0, out);
    fprintf(so, "%-6s %-3s %3s %8s %-18s %8s %5s %6s %-30s %8s %6s %-30s %7s\n", "type", "ord", "bs",
            "cuSP", "best cuSPARSE", "bsrmv", "%read", "bound", "best bsrmv kernel", "auto", "%best",
            "auto kernel", "x cuSP");
    for (int i = 0; i < k; i++) {
        const struct bench_gpu_summary *s = &sums[i];
        double sp = s->best_cusparse_gbps > 0 ? s->auto_gbps / s->best_cusparse_gbps : 0;
        fprintf(so, "%-6s %-3s %3d %8.0f %-18s %8.0f %5.1f %6.0f %-30s %8.0f %6.1f %-30s %7.2f\n",
                stype[i] == BSRMV_DOUBLE ? "double" : "float", sorder[i] == BSRMV_COL_MAJOR ? "col" : "row",
                sbs[i], s->best_cusparse_gbps, s->best_cusparse, s->best_gbps,
                s->read_gbps > 0 ? 100 * s->best_gbps / s->read_gbps : 0, s->bound_gbps, s->best, s->auto_gbps,
                s->best_gbps > 0 ? 100 * s->auto_gbps / s->best_gbps : 0, s->auto_kernel, sp);
    }
    /* one mean per type and order: the cases a user's matrices fall in */
    for (int ti = 0; ti < ntypes; ti++)
        for (int oi = 0; oi < norders; oi++) {
            double lg = 0;
            int ng = 0;
            for (int i = 0; i < k; i++) {
                const struct bench_gpu_summary *s = &sums[i];
                if (stype[i] != types[ti] || sorder[i] != orders[oi] || sbs[i] < 2 || s->best_cusparse_gbps <= 0 ||
                    s->auto_gbps <= 0)
                    continue;
                lg += log(s->auto_gbps / s->best_cusparse_gbps);
                ng++;
            }
            if (ng)
                fprintf(so, "geometric mean of auto / best cuSPARSE over bs >= 2 (%s %s): %.3f (%d sizes)\n",
                        types[ti] == BSRMV_DOUBLE ? "double" : "float",
                        orders[oi] == BSRMV_COL_MAJOR ? "col" : "row", exp(lg / ng), ng);
        }
    free(sums);
    free(sbs);
    free(stype);
    free(sorder);
    return rc;
}
