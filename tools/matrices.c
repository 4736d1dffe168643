/* The matrices of `bsrmv info` and `bsrmv bench`: generated or built from
 * a Matrix Market file, sized against the caches and the machine's memory. */
#define _GNU_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE) */
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define FALLBACK_LLC ((double)(32 << 20))

int cli_lib_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bsrmv: ", stderr);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, ": %s\n", bsrmv_last_error());
    va_end(ap);
    return 1;
}

/* Stored blocks of a grid: along each axis a node couples to itself and
 * its two neighbours, except at the two ends. */
double cli_grid_blocks(const int64_t g[3], int stencil)
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
double cli_llc_bytes(void)
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
        if (cli_grid_blocks(g, stencil) * block_bytes >= EXAMPLE_LLC_FACTOR * llc)
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
        return cli_lib_failed("generating %s with bs %d", name, bs);
    return 0;
}

/* The generated matrix of o's source (--grid, --powerlaw, --arrow) for one
 * bs and type, and its report name. */
int cli_generate_matrix(const struct bench_options *o, int bs, bsrmv_type t,
                           bsrmv_matrix **A, char *name, size_t size)
{
    bsrmv_status s;
    if (o->source == BENCH_POWERLAW) {
        int at = snprintf(name, size, "powerlaw%" PRId64 "_m%g_max%" PRId64 "_a%g",
                          o->powerlaw.mb, o->powerlaw.mean_len, o->powerlaw.max_len,
                          o->powerlaw.exponent);
        if (o->powerlaw.band < o->powerlaw.mb && at >= 0 && (size_t)at < size)
            snprintf(name + at, size - (size_t)at, "_band%" PRId64, o->powerlaw.band);
        s = bsrmv_generate_powerlaw_banded(A, o->powerlaw.mb, o->powerlaw.mb, bs,
                                           o->powerlaw.mean_len, o->powerlaw.exponent,
                                           o->powerlaw.max_len, o->powerlaw.band, o->seed, t,
                                           o->order);
    } else if (o->source == BENCH_ARROW) {
        snprintf(name, size, "arrow%" PRId64 "_d%" PRId64, o->arrow_n, o->arrow_dense);
        s = bsrmv_generate_arrow(A, o->arrow_n, o->arrow_dense, bs, o->seed, t, o->order);
    } else {
        return generate_grid(A, o->grid, o->stencil, bs, t, o, name, size);
    }
    if (s != BSRMV_SUCCESS)
        return cli_lib_failed("generating %s with bs %d", name, bs);
    return 0;
}

/* The matrix of one (bs, type) and its report name. */
int cli_build_matrix(const struct bench_options *o, const bsrmv_coo *coo, double llc,
                        int bs, bsrmv_type t, bsrmv_matrix **A, char *name, size_t size)
{
    if (o->source == BENCH_MTX) {
        char stem[200];
        file_stem(o->mtx, stem, sizeof stem);
        snprintf(name, size, "%s:%s", stem, o->blocking == BSRMV_SPLIT ? "split" : "promote");
        /* Promoted blocks are made non-constant (the KSPARSE method). */
        if (bsrmv_matrix_from_coo(A, coo, bs, o->blocking, t, o->order) != BSRMV_SUCCESS ||
            (o->blocking == BSRMV_PROMOTE &&
             bsrmv_matrix_perturb_promoted(*A, o->seed) != BSRMV_SUCCESS))
            return cli_lib_failed("building %s with bs %d", name, bs);
        return 0;
    }
    if (o->source == BENCH_EXAMPLE) {
        int64_t n = example_grid_n(bs, t, o->stencil, llc);
        int64_t g[3] = {n, n, n};
        return generate_grid(A, g, o->stencil, bs, t, o, name, size);
    }
    return cli_generate_matrix(o, bs, t, A, name, size);
}

double cli_bsr_bytes(double mb, double nb, double nnzb, int bs, bsrmv_type t)
{
    const double ts = (double)bsrmv_type_size(t);
    /* row_ptr, col_idx and values; x, y and the checks' copies of y (one
     * of them in double) */
    return (mb + 1) * 8 + nnzb * (4 + (double)bs * bs * ts) + nb * bs * ts +
           mb * bs * (2 * ts + 8);
}

double cli_source_bytes(const struct bench_options *o, const bsrmv_coo *coo, double llc, int bs,
                        bsrmv_type t)
{
    switch (o->source) {
    case BENCH_MTX: {
        const int split = o->blocking == BSRMV_SPLIT;
        const double mb = split ? ceil((double)coo->m / bs) : (double)coo->m;
        const double nb = split ? ceil((double)coo->n / bs) : (double)coo->n;
        /* at most one block per entry; the conversion sorts a copy of them */
        return cli_bsr_bytes(mb, nb, (double)coo->nnz, bs, t) + (double)coo->nnz * 24;
    }
    case BENCH_GRID:
    case BENCH_EXAMPLE: {
        int64_t g[3] = {o->grid[0], o->grid[1], o->grid[2]};
        if (o->source == BENCH_EXAMPLE)
            g[0] = g[1] = g[2] = example_grid_n(bs, t, o->stencil, llc);
        const double nodes = (double)g[0] * (double)g[1] * (double)g[2];
        return cli_bsr_bytes(nodes, nodes, cli_grid_blocks(g, o->stencil), bs, t);
    }
    case BENCH_POWERLAW: {
        const double mb = (double)o->powerlaw.mb;
        return cli_bsr_bytes(mb, mb, mb * fmax(o->powerlaw.mean_len, 1) * 2, bs, t);
    }
    case BENCH_ARROW: {
        const double n = (double)o->arrow_n, d = (double)o->arrow_dense;
        return cli_bsr_bytes(n, n, n + 2 * d * n, bs, t);
    }
    case BENCH_NONE:
        break;
    }
    return 0;
}

/* Physical memory, or the address-space limit (ulimit -v) when lower;
 * *limited says which. */
static double memory_budget(int *limited)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double have = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    struct rlimit rl;
    *limited = 0;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (have == 0 || (double)rl.rlim_cur < have)) {
        have = (double)rl.rlim_cur;
        *limited = 1;
    }
    return have;
}

int cli_memory_check(const char *cmd, const char *what, double bytes)
{
    int limited;
    const double have = memory_budget(&limited);
    /* leave room for the program itself and the threads' stacks */
    if (have <= 0 || bytes <= 0.9 * have)
        return 0;
    fprintf(stderr, "%s: %s needs %.3g GB of memory; %s %.3g GB\n", cmd, what, bytes * 1e-9,
            limited ? "this process is limited to (ulimit -v)" : "this machine has",
            have * 1e-9);
    return 1;
}
