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
            "peers: %s%s%s\nusage: PROGRAM --grid N --bs B [--reps R] [--rounds K] [--seed S]\n"
            "               [--threads LIST] [--only LIST] [--dump DIR]\n",
            msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

void peer_parse(int argc, char **argv, struct peer_options *o)
{
    *o = (struct peer_options){.reps = 20, .rounds = 2, .seed = 1, .threads = {1}, .n_threads = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage_die("missing value", a);
        if (strcmp(a, "--grid") == 0)
            o->grid = atoll(v);
        else if (strcmp(a, "--bs") == 0)
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
    if (o->grid < 2 || o->bs < 1 || o->reps < 1 || o->rounds < 1 || o->n_threads < 1)
        usage_die("need --grid >= 2, --bs >= 1, --reps >= 1, --rounds >= 1", NULL);
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

void peer_case_init(struct peer_case *c, const struct peer_options *o, int want_ref)
{
    memset(c, 0, sizeof *c);
    c->n = o->grid;
    c->bs = o->bs;
    c->seed = o->seed;
    snprintf(c->matrix, sizeof c->matrix, "grid27_%lldx%lldx%lld", (long long)c->n,
             (long long)c->n, (long long)c->n);
    /* The same call, seed, type and order as `bsrmv bench --grid N`. */
    if (bsrmv_generate_grid(&c->A, c->n, c->n, c->n, c->bs, 27, c->seed, BSRMV_DOUBLE,
                            BSRMV_COL_MAJOR) != BSRMV_SUCCESS)
        die("bsrmv_generate_grid");
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
