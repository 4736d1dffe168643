#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *what)
{
    fprintf(stderr, "peers: %s: %s\n", what, bsrmv_last_error());
    exit(1);
}

static void usage_die(const char *msg, const char *arg)
{
    fprintf(stderr,
            "peers: %s%s%s\nusage: PROGRAM SOURCE --bs B [--reps R] [--rounds K] [--seed S]\n"
            "               [--threads LIST] [--only LIST] [--dump DIR]\n"
            "SOURCE: --grid N | --mtx FILE [--promote|--split] | --powerlaw MB,MEAN,MAXLEN,EXPONENT\n"
            "        | --arrow N,DENSE\n",
            msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

/* Up to max comma-separated numbers of v into out; returns how many. */
static int parse_numbers(const char *v, double *out, int max)
{
    int n = 0;
    for (const char *p = v; *p && n < max;) {
        char *end;
        out[n++] = strtod(p, &end);
        if (end == p)
            usage_die("bad number list", v);
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void set_source(struct peer_options *o, enum peer_source s, int *given)
{
    if (*given)
        usage_die("give one matrix source", NULL);
    *given = 1;
    o->source = s;
}

void peer_parse(int argc, char **argv, struct peer_options *o)
{
    *o = (struct peer_options){.reps = 20, .rounds = 2, .seed = 1, .threads = {1}, .n_threads = 1,
                               .blocking = BSRMV_SPLIT};
    int source_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--promote") == 0 || strcmp(a, "--split") == 0) {
            o->blocking = a[2] == 'p' ? BSRMV_PROMOTE : BSRMV_SPLIT;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage_die("missing value", a);
        if (strcmp(a, "--grid") == 0) {
            set_source(o, PEER_GRID, &source_given);
            o->grid = atoll(v);
        } else if (strcmp(a, "--mtx") == 0) {
            set_source(o, PEER_MTX, &source_given);
            o->mtx = v;
        } else if (strcmp(a, "--powerlaw") == 0) {
            set_source(o, PEER_POWERLAW, &source_given);
            if (parse_numbers(v, o->gen, 4) != 4)
                usage_die("--powerlaw needs MB,MEAN,MAXLEN,EXPONENT", v);
        } else if (strcmp(a, "--arrow") == 0) {
            set_source(o, PEER_ARROW, &source_given);
            if (parse_numbers(v, o->gen, 2) != 2)
                usage_die("--arrow needs N,DENSE", v);
        } else if (strcmp(a, "--bs") == 0)
            o->bs = atoi(v);
        else if (strcmp(a, "--reps") == 0)
            o->reps = atoi(v);
        else if (strcmp(a, "--rounds") == 0)
            o->rounds = atoi(v);
        else if (strcmp(a, "--seed") == 0)
            o->seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--only") == 0)
            o->only = v;
        else if (strcmp(a, "--dump") == 0)
            o->dump = v;
        else if (strcmp(a, "--threads") == 0) {
            char *s = strdup(v), *save = NULL;
            o->n_threads = 0;
            for (char *t = strtok_r(s, ",", &save); t && o->n_threads < PEER_MAX_THREADS;
                 t = strtok_r(NULL, ",", &save))
                o->threads[o->n_threads++] = atoi(t);
            free(s);
        } else
            usage_die("unknown argument", a);
        i++;
    }
    if (!source_given || (o->source == PEER_GRID && o->grid < 2) || o->bs < 1 || o->reps < 1 ||
        o->rounds < 1 || o->n_threads < 1)
        usage_die("need a source, --bs >= 1, --reps >= 1, --rounds >= 1 (--grid >= 2)", NULL);
}

int peer_wants(const struct peer_options *o, const char *backend)
{
    if (!o->only)
        return 1;
    size_t n = strlen(backend);
    for (const char *p = o->only; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, backend, n) == 0)
            return 1;
        p += len + (e ? 1 : 0);
    }
    return 0;
}

void *peer_alloc(size_t bytes)
{
    bytes = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, bytes ? bytes : 64);
    if (!p) {
        fprintf(stderr, "peers: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    return p;
}

double peer_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double peer_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double peer_rel_err(const double *y, const double *ref, int64_t n)
{
    long double d2 = 0, r2 = 0;
    for (int64_t i = 0; i < n; i++) {
        long double d = (long double)y[i] - ref[i];
        d2 += d * d;
        r2 += (long double)ref[i] * ref[i];
    }
    return (double)(r2 > 0 ? sqrtl(d2 / r2) : sqrtl(d2));
}

/* y_ref = A*x block by block in long double, from the BSR definition
 * (column-major blocks), like tools/bench_cpu.c. */
static void reference(struct peer_case *c)
{
    const int bs = c->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    long double *acc = malloc((size_t)bs * sizeof *acc);
    for (int64_t ib = 0; ib < c->info.mb; ib++) {
        for (int r = 0; r < bs; r++)
            acc[r] = 0;
        for (int64_t k = c->row_ptr[ib]; k < c->row_ptr[ib + 1]; k++) {
            const double *blk = c->val + k * bs2;
            const double *xb = c->x + (int64_t)c->col_idx[k] * bs;
            for (int col = 0; col < bs; col++)
                for (int r = 0; r < bs; r++)
                    acc[r] += (long double)blk[r + col * bs] * xb[col];
        }
        for (int r = 0; r < bs; r++)
            c->y_ref[ib * bs + r] = (double)acc[r];
    }
    free(acc);
}

/* "bcsstk16" from ".../bcsstk16.mtx.gz", as the CLI names files. */
static void file_stem(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    snprintf(out, size, "%s", base ? base + 1 : path);
    static const char *const exts[] = {".gz", ".mtx"};
    for (int e = 0; e < 2; e++) {
        size_t n = strlen(out), k = strlen(exts[e]);
        if (n > k && strcmp(out + n - k, exts[e]) == 0)
            out[n - k] = '\0';
    }
}

/* The same library calls, seed, type and order as `bsrmv bench SOURCE`. */
static void build_matrix(struct peer_case *c, const struct peer_options *o)
{
    const bsrmv_type t = BSRMV_DOUBLE;
    const bsrmv_order ord = BSRMV_COL_MAJOR;
    bsrmv_status st = BSRMV_ERR_UNSUPPORTED;
    switch (o->source) {
    case PEER_GRID:
        snprintf(c->matrix, sizeof c->matrix, "grid27_%lldx%lldx%lld", (long long)o->grid,
                 (long long)o->grid, (long long)o->grid);
        st = bsrmv_generate_grid(&c->A, o->grid, o->grid, o->grid, c->bs, 27, c->seed, t, ord);
        break;
    case PEER_MTX: {
        char stem[200];
        file_stem(o->mtx, stem, sizeof stem);
        snprintf(c->matrix, sizeof c->matrix, "%s:%s", stem,
                 o->blocking == BSRMV_PROMOTE ? "promote" : "split");
        bsrmv_coo *coo;
        if (bsrmv_mm_read(o->mtx, &coo) != BSRMV_SUCCESS)
            die(o->mtx);
        st = bsrmv_matrix_from_coo(&c->A, coo, c->bs, o->blocking, t, ord);
        if (!st && o->blocking == BSRMV_PROMOTE)
            st = bsrmv_matrix_perturb_promoted(c->A, c->seed);
        bsrmv_coo_destroy(coo);
        break;
    }
    case PEER_POWERLAW:
    case PEER_ARROW:
#ifdef HAVE_GEN_IRREGULAR
        if (o->source == PEER_POWERLAW) {
            snprintf(c->matrix, sizeof c->matrix, "powerlaw%.0f_m%g_max%.0f_a%g", o->gen[0],
                     o->gen[1], o->gen[2], o->gen[3]);
            st = bsrmv_generate_powerlaw(&c->A, (int64_t)o->gen[0], (int64_t)o->gen[0], c->bs,
                                         o->gen[1], o->gen[3], (int64_t)o->gen[2], c->seed, t,
                                         ord);
        } else {
            snprintf(c->matrix, sizeof c->matrix, "arrow%.0f_d%.0f", o->gen[0], o->gen[1]);
            st = bsrmv_generate_arrow(&c->A, (int64_t)o->gen[0], (int64_t)o->gen[1], c->bs,
                                      c->seed, t, ord);
        }
#else
        fprintf(stderr, "peers: this libbsrmv has no power-law/arrow generators\n");
        exit(1);
#endif
        break;
    }
    if (st != BSRMV_SUCCESS)
        die(c->matrix);
}

void peer_case_init(struct peer_case *c, const struct peer_options *o, int want_ref)
{
    memset(c, 0, sizeof *c);
    c->bs = o->bs;
    c->seed = o->seed;
    build_matrix(c, o);
    if (bsrmv_matrix_get_info(c->A, &c->info) != BSRMV_SUCCESS)
        die("bsrmv_matrix_get_info");
    const void *val;
    if (bsrmv_matrix_arrays(c->A, &c->row_ptr, &c->col_idx, &val) != BSRMV_SUCCESS)
        die("bsrmv_matrix_arrays");
    c->val = val;
    c->bytes = bsrmv_matrix_spmv_bytes(c->A);
    c->x = peer_alloc((size_t)c->info.cols * sizeof(double));
    c->y_bsrmv = peer_alloc((size_t)c->info.rows * sizeof(double));
    if (bsrmv_fill_random(c->x, c->info.cols, BSRMV_DOUBLE, c->seed + 1) != BSRMV_SUCCESS)
        die("bsrmv_fill_random");
    if (bsrmv_spmv(BSRMV_OP_N, 1.0, c->A, c->x, c->info.cols, 0.0, c->y_bsrmv,
                   c->info.rows) != BSRMV_SUCCESS)
        die("bsrmv_spmv");
    if (want_ref) {
        c->y_ref = peer_alloc((size_t)c->info.rows * sizeof(double));
        reference(c);
    }
}

void peer_case_free(struct peer_case *c)
{
    bsrmv_matrix_destroy(c->A);
    free(c->x);
    free(c->y_bsrmv);
    free(c->y_ref);
    memset(c, 0, sizeof *c);
}

void peer_emit(const struct peer_case *c, const struct peer_record *r)
{
    double s = r->time_ms * 1e-3;
    double gbps = c->bytes / s * 1e-9;
    double gflops = 2.0 * (double)c->info.nnzb * c->bs * c->bs / s * 1e-9;
    printf("{\"matrix\":\"%s\",\"bs\":%d,\"rows\":%lld,\"cols\":%lld,\"nnzb\":%lld,"
           "\"bytes\":%lld,\"backend\":\"%s\",\"kernel\":\"%s\",\"threads\":%d,"
           "\"time_ms\":%.9g,\"gbps\":%.9g,\"gflops\":%.9g,\"rel_err\":%.9g,"
           "\"type\":\"double\",\"order\":\"col\",\"round\":%d,\"via\":\"%s\",\"ref\":\"%s\"}\n",
           c->matrix, c->bs, (long long)c->info.rows, (long long)c->info.cols,
           (long long)c->info.nnzb, (long long)c->bytes, r->backend, r->kernel, r->threads,
           r->time_ms, gbps, gflops, r->rel_err, r->round, r->via, r->ref);
    fflush(stdout);
}
