/* The CPU side of the benchmark: test vectors, a long-double reference SpMV,
 * the timing of bsrmv_spmv per thread count and kernel, and of bsrmv_spmm
 * against as many separate SpMVs. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "bench.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP_CALLS 3

static int lib_failed(const char *what)
{
    fprintf(stderr, "bsrmv: %s: %s\n", what, bsrmv_last_error());
    return 1;
}

/* Vectors get the same 64-byte alignment whatever their length, so timings
 * do not depend on where malloc happened to put them. */
static void *alloc_values(int64_t n, bsrmv_type t)
{
    size_t bytes = ((size_t)(n > 0 ? n : 1) * bsrmv_type_size(t) + 63) / 64 * 64;
    void *p = aligned_alloc(64, bytes);
    if (!p)
        fprintf(stderr, "bsrmv: cannot allocate %zu bytes for a vector\n", bytes);
    return p;
}

int bench_parts(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_FLOAT || t == BSRMV_COMPLEX_DOUBLE ? 2 : 1;
}

static int is_float(bsrmv_type t)
{
    return t == BSRMV_FLOAT || t == BSRMV_COMPLEX_FLOAT;
}

const char *bench_type_name(bsrmv_type t, bsrmv_type vt)
{
    if (t != vt)
        return "mixed";
    switch (t) {
    case BSRMV_FLOAT: return "float";
    case BSRMV_DOUBLE: return "double";
    case BSRMV_COMPLEX_FLOAT: return "complex-float";
    case BSRMV_COMPLEX_DOUBLE: return "complex-double";
    }
    return "unknown";
}

/* Real component i of v (a complex value is two). */
static long double value(const void *v, bsrmv_type t, int64_t i)
{
    return is_float(t) ? ((const float *)v)[i] : ((const double *)v)[i];
}

/* alpha and beta as the library sees them: rounded to the matrix type. */
static double as_type(double a, bsrmv_type t)
{
    return is_float(t) ? (double)(float)a : a;
}

/* y_ref = alpha*A*x + beta*y0, block by block in long double (complex:
 * y_ref holds (re, im) pairs).  Written
 * from the BSR definition alone, so it checks the library rather than
 * repeating it.  Block rows are independent: OpenMP over them, dynamic
 * because block-row lengths vary (power-law, arrow). */
static int reference_spmv(struct bench_case *c)
{
    const int64_t *row_ptr;
    const int32_t *col_idx;
    const void *val;
    if (bsrmv_matrix_arrays(c->A, &row_ptr, &col_idx, &val) != BSRMV_SUCCESS)
        return lib_failed("reading the matrix arrays");

    const bsrmv_matrix_info *in = &c->info;
    const int bs = in->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    /* Offset of block entry (r, col) is r*rstride + col*cstride. */
    const int64_t rstride = in->order == BSRMV_COL_MAJOR ? 1 : bs;
    const int64_t cstride = in->order == BSRMV_COL_MAJOR ? bs : 1;
    const long double alpha = as_type(c->alpha, in->vector_type);
    const long double beta = as_type(c->beta, in->vector_type);
    const int p = bench_parts(in->type);
    int failed = 0;

#pragma omp parallel reduction(| : failed)
    {
        long double *acc = malloc((size_t)(p * bs) * sizeof *acc);
        failed = acc == NULL;
#pragma omp for schedule(dynamic, 64)
        for (int64_t ib = 0; ib < in->mb; ib++) {
            if (!acc)
                continue;
            for (int r = 0; r < p * bs; r++)
                acc[r] = 0;
            for (int64_t k = row_ptr[ib]; k < row_ptr[ib + 1]; k++) {
                const int64_t xoff = (int64_t)col_idx[k] * bs;
                for (int col = 0; col < bs; col++) {
                    const long double xv = value(c->x, in->vector_type, p * (xoff + col));
                    for (int r = 0; r < bs; r++) {
                        const int64_t at = p * (k * bs2 + r * rstride + col * cstride);
                        const long double a = value(val, in->type, at);
                        if (p == 1) {
                            acc[r] += a * xv;
                        } else {
                            const long double ai = value(val, in->type, at + 1);
                            const long double xi =
                                value(c->x, in->vector_type, p * (xoff + col) + 1);
                            acc[2 * r] += a * xv - ai * xi;
                            acc[2 * r + 1] += a * xi + ai * xv;
                        }
                    }
                }
            }
            for (int r = 0; r < p * bs; r++) {
                int64_t i = ib * bs * p + r;
                /* beta == 0 means y is not read, as in bsrmv_spmv. */
                long double y = alpha * acc[r];
                if (beta != 0)
                    y += beta * value(c->y0, in->vector_type, i);
                c->y_ref[i] = (double)y;
            }
        }
        free(acc);
    }
    if (failed) {
        fprintf(stderr, "bsrmv: cannot allocate the reference accumulators\n");
        return 1;
    }
    return 0;
}

int bench_case_init(struct bench_case *c, bsrmv_matrix *A, const char *matrix,
                    const struct bench_options *o)
{
    const double t0 = bench_now_ms();
    *c = (struct bench_case){.matrix = matrix, .A = A, .alpha = o->alpha, .beta = o->beta};
    if (bsrmv_matrix_get_info(A, &c->info) != BSRMV_SUCCESS)
        return lib_failed("reading the matrix info");
    c->bytes = bsrmv_matrix_spmv_bytes(A);
    const bsrmv_type t = c->info.vector_type;
    c->x = alloc_values(c->info.cols, t);
    c->y0 = alloc_values(c->info.rows, t);
    c->y_ref = malloc((size_t)(c->info.rows > 0 ? c->info.rows * bench_parts(t) : 1) *
                      sizeof(double));
    if (!c->x || !c->y0 || !c->y_ref) {
        bench_case_free(c);
        fprintf(stderr, "bsrmv: cannot allocate the vectors of %s\n", matrix);
        return 1;
    }
    if (bsrmv_fill_random(c->x, c->info.cols, t, o->seed + 1) != BSRMV_SUCCESS ||
        bsrmv_fill_random(c->y0, c->info.rows, t, o->seed + 2) != BSRMV_SUCCESS) {
        bench_case_free(c);
        return lib_failed("filling the vectors");
    }
    if (reference_spmv(c) != 0) {
        bench_case_free(c);
        return 1;
    }
    c->ms.reference = bench_now_ms() - t0;
    return 0;
}

void bench_case_free(struct bench_case *c)
{
    free(c->x);
    free(c->y0);
    free(c->y_ref);
    c->x = c->y0 = NULL;
    c->y_ref = NULL;
}

void bench_record_init(struct bench_record *r, const struct bench_case *c,
                       const char *backend, const char *kernel, int threads)
{
    *r = (struct bench_record){
        .matrix = c->matrix,
        .bs = c->info.bs,
        .type = c->info.type,
        .vtype = c->info.vector_type,
        .order = c->info.order,
        .rows = c->info.rows,
        .cols = c->info.cols,
        .nnzb = c->info.nnzb,
        .bytes = c->bytes,
        .backend = backend,
        .kernel = kernel,
        .threads = threads,
        .rel_err = NAN,
    };
}

void bench_record_set_time(struct bench_record *r, double time_ms)
{
    double s = time_ms * 1e-3;
    r->time_ms = time_ms;
    r->gbps = r->bytes / s * 1e-9;
    /* a complex multiply-add is 8 real operations, a real one 2 */
    const double flops = bench_parts(r->type) == 2 ? 8.0 : 2.0;
    r->gflops = flops * (double)r->nnzb * r->bs * r->bs * (r->k > 0 ? r->k : 1) / s * 1e-9;
}

double bench_rel_err(const struct bench_case *c, const void *y)
{
    long double diff = 0, ref = 0;
    /* the 2-norm of a complex vector is that of its components */
    for (int64_t i = 0; i < c->info.rows * bench_parts(c->info.vector_type); i++) {
        long double d = value(y, c->info.vector_type, i) - c->y_ref[i];
        diff += d * d;
        ref += (long double)c->y_ref[i] * c->y_ref[i];
    }
    return (double)(ref > 0 ? sqrtl(diff / ref) : sqrtl(diff));
}

void bench_phases_print(const struct bench_case *c)
{
    const struct bench_phases *p = &c->ms;
    double total = p->build + p->reference + p->cpu + p->gpu_setup + p->cusparse_host + p->cusparse +
                   p->gpu_kernels;
    fprintf(stderr,
            "bsrmv: phases %s bs %d %s: build %.0f ms, reference %.0f ms, cpu %.0f ms, "
            "gpu setup %.0f ms, cusparse host %.0f ms, cusparse %.0f ms, gpu kernels %.0f ms, "
            "total %.0f ms\n",
            c->matrix, c->info.bs, bench_type_name(c->info.type, c->info.vector_type), p->build,
            p->reference, p->cpu, p->gpu_setup, p->cusparse_host, p->cusparse, p->gpu_kernels, total);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* "specialised" only where the library has a compile-time kernel for bs;
 * elsewhere AUTO falls back to the generic one. */
static const char *kernel_name(bsrmv_cpu_kernel k, int bs)
{
    if (k == BSRMV_CPU_GENERIC)
        return "generic";
    return bsrmv_cpu_has_kernel(bs) ? "specialised" : "auto-generic";
}

static int spmv(const struct bench_case *c, void *y)
{
    if (bsrmv_spmv(BSRMV_OP_N, c->alpha, c->A, c->x, c->info.cols, c->beta, y,
                   c->info.rows) != BSRMV_SUCCESS)
        return lib_failed("bsrmv_spmv");
    return 0;
}

/* One thread count (o->threads[ti]) and kernel.  The first warm-up call
 * starts from y0 and is the one checked against y_ref; the timed calls then
 * run on whatever y holds. */
static int measure(const struct bench_options *o, struct bench_case *c, int ti,
                   bsrmv_cpu_kernel k, void *y, double *times)
{
    if (bsrmv_matrix_set_cpu_kernel(c->A, k) != BSRMV_SUCCESS)
        return lib_failed("choosing the CPU kernel");
    struct bench_record r;
    bench_record_init(&r, c, "cpu", kernel_name(k, c->info.bs), o->threads[ti]);
    r.stream_gbps = c->stream_gbps ? c->stream_gbps[ti] : 0;

    memcpy(y, c->y0, (size_t)c->info.rows * bsrmv_type_size(c->info.vector_type));
    for (int w = 0; w < WARMUP_CALLS; w++) {
        if (spmv(c, y) != 0)
            return 1;
        if (w == 0)
            r.rel_err = bench_rel_err(c, y);
    }
    for (int i = 0; i < o->reps; i++) {
        double t0 = bench_now_ms();
        if (spmv(c, y) != 0)
            return 1;
        times[i] = bench_now_ms() - t0;
    }
    bench_record_set_time(&r, bench_median(times, o->reps));
    o->emit(o, &r);
    return 0;
}

double bench_spmm_rel_err(const struct bench_case *c, const void *Y, int k, int col)
{
    const int64_t n = c->info.rows;
    const bsrmv_type t = c->info.vector_type;
    const int parts = bench_parts(t);
    double worst = 0;
    for (int j = 0; j < k; j++) {
        long double diff = 0, ref = 0;
        for (int64_t i = 0; i < n; i++)
            for (int q = 0; q < parts; q++) {
                long double want = (long double)c->y_ref[i * parts + q] * (j + 1);
                long double d = value(Y, t, (col ? i + j * n : i * k + j) * parts + q) - want;
                diff += d * d;
                ref += want * want;
            }
        double e = (double)(ref > 0 ? sqrtl(diff / ref) : sqrtl(diff));
        worst = e > worst || isnan(e) ? e : worst;
    }
    return worst;
}

void bench_fill_scaled(void *M, const void *v, int64_t n, int k, int col, bsrmv_type t)
{
    const int parts = bench_parts(t);
    for (int j = 0; j < k; j++)
        for (int64_t i = 0; i < n; i++)
            for (int q = 0; q < parts; q++) {
                const int64_t e = (col ? i + j * n : i * k + j) * parts + q;
                const long double x = value(v, t, i * parts + q) * (j + 1);
                if (is_float(t))
                    ((float *)M)[e] = (float)x;
                else
                    ((double *)M)[e] = (double)x;
            }
}

/* k bsrmv_spmv calls on the columns of column-major X and Y. */
static int spmv_columns(const struct bench_case *c, int k, const void *X, void *Y)
{
    const int64_t nx = c->info.cols, ny = c->info.rows;
    const size_t vs = bsrmv_type_size(c->info.vector_type);
    for (int j = 0; j < k; j++)
        if (bsrmv_spmv(BSRMV_OP_N, c->alpha, c->A, (const char *)X + (size_t)(j * nx) * vs, nx,
                       c->beta, (char *)Y + (size_t)(j * ny) * vs, ny) != BSRMV_SUCCESS)
            return 1;
    return 0;
}

/* k vectors: bsrmv_spmm in `layout` against k bsrmv_spmv calls on
 * column-major copies, timed alternately (each rep one of each) so that a
 * shared machine's load falls on both.  Two records: "spmvxK", then
 * "spmm-row"/"spmm-col" with its speedup in vectors per second.  --sym:
 * the SpMM of the symmetric storage (c->S, "sym-spmm-row"/"-col") against
 * that of the full one (c->A, "full-spmm-row"/"-col"), same layout. */
static int measure_spmm(const struct bench_options *o, struct bench_case *c, int ti, int k,
                        bsrmv_layout layout, double *times)
{
    const bsrmv_type t = c->info.vector_type; /* of X and Y */
    const int64_t nx = c->info.cols, ny = c->info.rows;
    const int row = layout == BSRMV_LAYOUT_ROW, sym = c->S != NULL;
    /* the peer's vectors: column-major (k SpMVs) or in `layout` (--sym) */
    const int pcol = sym ? !row : 1;
    const bsrmv_matrix *M = sym ? c->S : c->A;
    const size_t vs = bsrmv_type_size(t);
    void *xc = alloc_values(nx * k, t), *yc = alloc_values(ny * k, t);
    /* X is only read, so a run in the peer's layout shares its copy. */
    void *xl = row == !pcol ? xc : alloc_values(nx * k, t), *yl = alloc_values(ny * k, t);
    void *y0 = alloc_values(ny * k, t);
    double *tm = malloc((size_t)o->reps * sizeof *tm);
    int rc = 1;
    if (!xc || !yc || !xl || !yl || !y0 || !tm)
        goto done;
    bench_fill_scaled(xc, c->x, nx, k, pcol, t);
    bench_fill_scaled(y0, c->y0, ny, k, pcol, t);
    if (xl != xc)
        bench_fill_scaled(xl, c->x, nx, k, 0, t);
    const int64_t ldx = row ? k : nx, ldy = row ? k : ny;
    struct bench_record peer, mm;
    char peer_name[32];
    if (sym)
        snprintf(peer_name, sizeof peer_name, "full-spmm-%s", row ? "row" : "col");
    else
        snprintf(peer_name, sizeof peer_name, "spmvx%d", k);
    bench_record_init(&peer, c, "cpu", peer_name, o->threads[ti]);
    bench_record_init(&mm, c, "cpu",
                      sym ? (row ? "sym-spmm-row" : "sym-spmm-col")
                          : (row ? "spmm-row" : "spmm-col"),
                      o->threads[ti]);
    peer.k = mm.k = k;
    peer.layout = mm.layout = row ? "row" : "col";
    const double vec_bytes = (double)(nx + ny) * (double)vs;
    peer.bytes = sym ? c->bytes + (k - 1) * vec_bytes : c->bytes * k;
    mm.bytes = (sym ? (double)bsrmv_matrix_spmv_bytes(c->S) : c->bytes) + (k - 1) * vec_bytes;
    if (sym) {
        bsrmv_matrix_info si;
        bsrmv_matrix_get_info(c->S, &si);
        mm.nnzb = si.nnzb;
    }
    peer.stream_gbps = mm.stream_gbps = c->stream_gbps ? c->stream_gbps[ti] : 0;
    memcpy(yc, y0, (size_t)(ny * k) * vs);
    bench_fill_scaled(yl, c->y0, ny, k, !row, t);
    for (int w = 0; w < WARMUP_CALLS; w++) {
        if (sym ? bsrmv_spmm(BSRMV_OP_N, c->alpha, c->A, k, xc, ldx, c->beta, yc, ldy, layout)
                      != BSRMV_SUCCESS
                : spmv_columns(c, k, xc, yc) != 0) {
            rc = lib_failed(sym ? "bsrmv_spmm" : "bsrmv_spmv");
            goto done;
        }
        if (bsrmv_spmm(BSRMV_OP_N, c->alpha, M, k, xl, ldx, c->beta, yl, ldy, layout) !=
            BSRMV_SUCCESS) {
            rc = lib_failed("bsrmv_spmm");
            goto done;
        }
        if (w == 0) {
            peer.rel_err = bench_spmm_rel_err(c, yc, k, pcol);
            mm.rel_err = bench_spmm_rel_err(c, yl, k, !row);
        }
    }
    for (int i = 0; i < o->reps; i++) {
        double t0 = bench_now_ms();
        if (sym)
            bsrmv_spmm(BSRMV_OP_N, c->alpha, c->A, k, xc, ldx, c->beta, yc, ldy, layout);
        else
            spmv_columns(c, k, xc, yc);
        double t1 = bench_now_ms();
        bsrmv_spmm(BSRMV_OP_N, c->alpha, M, k, xl, ldx, c->beta, yl, ldy, layout);
        times[i] = t1 - t0;
        tm[i] = bench_now_ms() - t1;
    }
    bench_record_set_time(&peer, bench_median(times, o->reps));
    bench_record_set_time(&mm, bench_median(tm, o->reps));
    if (sym) /* the same product: the rate counts the full matrix's flops */
        mm.gflops = peer.gflops * peer.time_ms / mm.time_ms;
    mm.speedup = peer.time_ms / mm.time_ms;
    o->emit(o, &peer);
    o->emit(o, &mm);
    rc = 0;
done:
    if (rc && !tm)
        fprintf(stderr, "bsrmv: cannot allocate the SpMM benchmark buffers\n");
    if (xl != xc)
        free(xl);
    free(yl);
    free(xc);
    free(yc);
    free(y0);
    free(tm);
    return rc;
}

/* --sym: the full storage (c->A, "full") and the symmetric one (c->S,
 * "sym"), the auto kernels, timed alternately (each rep one of each) so
 * that a shared machine's load falls on both. */
static int measure_sym(const struct bench_options *o, struct bench_case *c, int ti, void *y,
                       double *times)
{
    const size_t ybytes = (size_t)c->info.rows * bsrmv_type_size(c->info.type);
    double *ts = malloc((size_t)o->reps * sizeof *ts);
    void *ys = alloc_values(c->info.rows, c->info.type);
    bsrmv_matrix_info si;
    int rc = 1;
    if (!ts || !ys) {
        fprintf(stderr, "bsrmv: cannot allocate the symmetric benchmark buffers\n");
        goto done;
    }
    if (bsrmv_matrix_set_cpu_kernel(c->A, BSRMV_CPU_AUTO) || bsrmv_matrix_get_info(c->S, &si)) {
        rc = lib_failed("preparing the matrices");
        goto done;
    }
    struct bench_record full, sym;
    bench_record_init(&full, c, "cpu", "full", o->threads[ti]);
    bench_record_init(&sym, c, "cpu", "sym", o->threads[ti]);
    sym.nnzb = si.nnzb;
    sym.bytes = bsrmv_matrix_spmv_bytes(c->S);
    full.stream_gbps = sym.stream_gbps = c->stream_gbps ? c->stream_gbps[ti] : 0;
    memcpy(y, c->y0, ybytes);
    memcpy(ys, c->y0, ybytes);
    for (int w = 0; w < WARMUP_CALLS; w++) {
        if (spmv(c, y) != 0 ||
            bsrmv_spmv(BSRMV_OP_N, c->alpha, c->S, c->x, c->info.cols, c->beta, ys,
                       c->info.rows) != BSRMV_SUCCESS) {
            rc = lib_failed("bsrmv_spmv");
            goto done;
        }
        if (w == 0) {
            full.rel_err = bench_rel_err(c, y);
            sym.rel_err = bench_rel_err(c, ys);
        }
    }
    for (int i = 0; i < o->reps; i++) {
        double t0 = bench_now_ms();
        spmv(c, y);
        double t1 = bench_now_ms();
        bsrmv_spmv(BSRMV_OP_N, c->alpha, c->S, c->x, c->info.cols, c->beta, ys, c->info.rows);
        times[i] = t1 - t0;
        ts[i] = bench_now_ms() - t1;
    }
    bench_record_set_time(&full, bench_median(times, o->reps));
    bench_record_set_time(&sym, bench_median(ts, o->reps));
    /* The same product: the rate counts the full matrix's flops. */
    sym.gflops = full.gflops * full.time_ms / sym.time_ms;
    sym.speedup = full.time_ms / sym.time_ms;
    o->emit(o, &full);
    o->emit(o, &sym);
    rc = 0;
done:
    free(ts);
    free(ys);
    return rc;
}

int bench_cpu(const struct bench_options *o, struct bench_case *c)
{
    const double t0 = bench_now_ms();
    const int max_threads = omp_get_max_threads(); /* for what runs after */
    void *y = alloc_values(c->info.rows, c->info.vector_type);
    double *times = malloc((size_t)o->reps * sizeof *times);
    int rc = 0;
    if (!y || !times) {
        fprintf(stderr, "bsrmv: cannot allocate the benchmark buffers\n");
        rc = 1;
    }
    for (int ti = 0; ti < o->n_threads && rc == 0; ti++) {
        omp_set_num_threads(o->threads[ti]);
        if (c->S)
            rc = measure_sym(o, c, ti, y, times);
        for (int ki = 0; ki < o->n_kernels && rc == 0 && !c->S; ki++)
            rc = measure(o, c, ti, o->kernels[ki], y, times);
        if (rc == 0 && o->n_k > 0 && bsrmv_matrix_set_cpu_kernel(c->A, BSRMV_CPU_AUTO))
            rc = lib_failed("choosing the CPU kernel");
        for (int li = 0; li < o->n_layouts && rc == 0; li++)
            for (int q = 0; q < o->n_k && rc == 0; q++)
                rc = measure_spmm(o, c, ti, o->k[q], o->layouts[li], times);
    }
    omp_set_num_threads(max_threads);
    free(times);
    free(y);
    c->ms.cpu = bench_now_ms() - t0;
    return rc;
}
