/* bench --gpu: every bsrmv GPU kernel that applies (--gpu-kernels all) or
 * only the dispatcher's pick (auto), cuSPARSE (cusparse<t>bsrmv column and
 * row direction, cusparseSpMV with CUSPARSE_SPMV_BSR_ALG1,
 * CUSPARSE_SPMV_CSR_ALG1 on the scalar CSR expansion; t = S, D, C, Z and
 * CUDA_R/C_32F/64F for the four value types), the device's read
 * bandwidth and the matrix's gather bound (bsrmv_gpu_gather_bound), on the
 * same matrix in the same run.  CUDA events around each call, warm-up,
 * median of >= 50 calls (of fewer, down to SLOW_REPS, where a call takes
 * so long that they would pass SLOW_MS); each call queued behind a stall
 * (bsrmv_gpu_stall) unless --cold-launch, so that its time is the GPU's
 * alone.  Each path is set up once and timed in every traffic mode
 * (--gpu-traffic) in turn.
 * GB/s always counts the BSR bytes of the case (bsrmv_matrix_spmv_bytes),
 * so every path is compared on the same work. */
#include "bench_gpu.h"
#include "json.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXREC 128
#define MAXCFG 96 /* bsrmv candidates timed per case */
#define MAXMODE 2 /* traffic modes (bench_options.gpu_traffic) */
/* A path's timed calls in one mode stop at SLOW_REPS once they would take
 * SLOW_MS: cuSPARSE takes ~100 ms a call on the arrow matrices, where 50
 * calls in two modes on five paths would be a minute a case. */
#define SLOW_MS 1000.0
#define SLOW_REPS 11

struct rec {
    char kernel[96];
    const char *backend;
    double ms, rel_err;
    int k;          /* SpMM: vectors per call (0: SpMV)                 */
    double bytes;   /* 0: the case's SpMV bytes                          */
    double speedup; /* SpMM: over k separate SpMVs (0: none)             */
    const char *layout; /* SpMM: of the multivectors (the peer's: compared in) */
    /* --sym: the symmetric storage's run, and the full storage's pick's
     * time to compare with (0: a full-storage record) */
    double full_ms;
    double mode_ms[MAXMODE]; /* SpMV: ms in each traffic mode */
};

static double g_read_gbps;
static char g_device[128];
/* Length of the stall each timed call is queued behind; 0: --cold-launch.
 * Grows where the host took longer than it to queue a call. */
static double g_stall_us;
/* The other traffic before each timed call (--gpu-traffic): a copy of
 * g_traffic / 2 bytes from one buffer to the other, so that the caches hold
 * what a solver's vector operations leave in them, not only the matrix. */
static size_t g_traffic;
static void *g_traffic_buf;
/* The modes time_calls times each path in, as traffic bytes; SpMM times
 * in the last mode alone. */
static size_t g_mode_traffic[MAXMODE];
static int g_nmodes = 1;

int bench_gpu_available(void)
{
    int n = 0;
    return bsrmv_gpu_device_count(&n) == BSRMV_SUCCESS && n > 0;
}

typedef int (*call_fn)(void *ctx);

/* Median time of `reps` calls (after 5 warm-up calls), each between two
 * events on stream s, in each of the g_nmodes traffic modes: ms[m].
 * Without a stall the GPU, idle after the last call,
 * records the first event as soon as the host queues it and then waits for
 * the host's launch work (a bsrmv call checks its pointers first, cuSPARSE
 * does its own): microseconds that a solver's loop, queued back to back,
 * never waits, and 2-5% of a 100-microsecond SpMV.  A sample whose calls
 * took the host longer to queue than half the stall is taken again behind
 * a longer stall.  The last four warm-up calls tell how long a call takes
 * (the first may hold a library's one-time setup).  Returns 0, or 1 on a
 * failed call. */
static int time_calls(call_fn f, void *ctx, int reps, cudaStream_t s, double *ms)
{
    cudaEvent_t e0, e1;
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!t || cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        free(t);
        return 1;
    }
    int rc = 0;
    for (int mode = 0; mode < g_nmodes && !rc; mode++) {
        g_traffic = g_mode_traffic[mode];
        float warm = 0;
        for (int i = 0; i < 5 && !rc; i++) {
            rc = f(ctx);
            if (i == 0 || i == 4)
                cudaEventRecord(i == 0 ? e0 : e1, s);
        }
        if (rc || cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&warm, e0, e1) != cudaSuccess) {
            rc = 1;
            break;
        }
        int n = reps;
        if (warm / 4 * reps > SLOW_MS && n > SLOW_REPS)
            n = SLOW_MS / (warm / 4) > SLOW_REPS ? (int)(SLOW_MS / (warm / 4)) : SLOW_REPS;
        for (int i = 0, retries = 0; i < n && !rc; i++) {
            float m = 0;
            const double h0 = bench_now_ms();
            if (g_traffic >= 2 && cudaMemcpyAsync((char *)g_traffic_buf + g_traffic / 2, g_traffic_buf,
                                                  g_traffic / 2, cudaMemcpyDeviceToDevice, s) != cudaSuccess) {
                rc = 1;
                break;
            }
            if (g_stall_us > 0 && bsrmv_gpu_stall(g_stall_us, s) != BSRMV_SUCCESS) {
                fprintf(stderr, "bsrmv: %s\n", bsrmv_last_error());
                rc = 1;
                break;
            }
            cudaEventRecord(e0, s);
            rc = f(ctx);
            cudaEventRecord(e1, s);
            const double queued_us = (bench_now_ms() - h0) * 1e3;
            if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&m, e0, e1) != cudaSuccess)
                rc = 1;
            t[i] = m;
            if (g_stall_us > 0 && queued_us > 0.5 * g_stall_us && g_stall_us < 1e5 && retries++ < 20) {
                g_stall_us *= 4;
                i--;
            }
        }
        if (!rc && cudaDeviceSynchronize() != cudaSuccess)
            rc = 1;
        if (!rc)
            ms[mode] = bench_median(t, n);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    free(t);
    return rc;
}

/* ---- bsrmv -------------------------------------------------------- */

struct bx {
    bsrmv_gpu_matrix *dA;
    void *dx, *dy;
    int64_t nx, ny;
    double alpha, beta;
    cudaStream_t s;
};

static int call_bsrmv(void *p)
{
    struct bx *b = p;
    bsrmv_status st = bsrmv_gpu_spmv(BSRMV_OP_N, b->alpha, b->dA, b->dx, b->nx, b->beta, b->dy, b->ny, b->s);
    if (st != BSRMV_SUCCESS) {
        fprintf(stderr, "bsrmv: bsrmv_gpu_spmv: %s\n", bsrmv_last_error());
        return 1;
    }
    return 0;
}

/* ---- cuSPARSE ------------------------------------------------------ */

struct cx {
    cusparseHandle_t h;
    int legacy; /* 1: cusparse<t>bsrmv, 0: cusparseSpMV */
    cusparseDirection_t dir;
    cusparseMatDescr_t descr;
    int mb, nb, nnzb, bs;
    const void *val;
    const int *rp, *ci;
    const void *x;
    void *y;
    bsrmv_type type;
    /* alpha and beta as values of the type: (re, im) pairs, so that the
     * real types read the first part and the complex ones both */
    double da[2], db[2];
    float fa[2], fb[2];
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vx, vy;
    cusparseSpMVAlg_t alg;
    void *buf;
};

/* cuSPARSE's data type for values of type t. */
static cudaDataType cuda_type(bsrmv_type t)
{
    switch (t) {
    case BSRMV_FLOAT: return CUDA_R_32F;
    case BSRMV_COMPLEX_FLOAT: return CUDA_C_32F;
    case BSRMV_COMPLEX_DOUBLE: return CUDA_C_64F;
    default: return CUDA_R_64F;
    }
}

/* The letter of cusparse<t>bsrmv for type t. */
static char blas_letter(bsrmv_type t)
{
    switch (t) {
    case BSRMV_FLOAT: return 'S';
    case BSRMV_COMPLEX_FLOAT: return 'C';
    case BSRMV_COMPLEX_DOUBLE: return 'Z';
    default: return 'D';
    }
}

/* c's alpha (beta != 0: beta) as a value of c's type. */
static const void *cx_scalar(const struct cx *c, int beta)
{
    const int dbl = c->type == BSRMV_DOUBLE || c->type == BSRMV_COMPLEX_DOUBLE;
    return dbl ? (const void *)(beta ? c->db : c->da) : (const void *)(beta ? c->fb : c->fa);
}

static int call_cusparse(void *p)
{
    struct cx *c = p;
    cusparseStatus_t st;
    const void *a = cx_scalar(c, 0), *b = cx_scalar(c, 1);
    if (c->legacy) {
        switch (c->type) {
        case BSRMV_DOUBLE:
            st = cusparseDbsrmv(c->h, c->dir, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb, c->nb, c->nnzb, a,
                                c->descr, c->val, c->rp, c->ci, c->bs, c->x, b, c->y);
            break;
        case BSRMV_COMPLEX_DOUBLE:
            st = cusparseZbsrmv(c->h, c->dir, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb, c->nb, c->nnzb, a,
                                c->descr, c->val, c->rp, c->ci, c->bs, c->x, b, c->y);
            break;
        case BSRMV_COMPLEX_FLOAT:
            st = cusparseCbsrmv(c->h, c->dir, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb, c->nb, c->nnzb, a,
                                c->descr, c->val, c->rp, c->ci, c->bs, c->x, b, c->y);
            break;
        default:
            st = cusparseSbsrmv(c->h, c->dir, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb, c->nb, c->nnzb, a,
                                c->descr, c->val, c->rp, c->ci, c->bs, c->x, b, c->y);
        }
    } else {
        st = cusparseSpMV(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, a, c->mat, c->vx, b, c->vy,
                          cuda_type(c->type), c->alg, c->buf);
    }
    if (st != CUSPARSE_STATUS_SUCCESS) {
        fprintf(stderr, "bsrmv: cuSPARSE call failed: %s\n", cusparseGetErrorString(st));
        return 1;
    }
    return 0;
}

/* ---- helpers ------------------------------------------------------- */

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "bsrmv: %s: %s\n", what, cudaGetErrorString(e));
        return 0;
    }
    return 1;
}

/* Runs the call once from y0 and returns rel_err against the reference. */
static double check_once(struct bench_case *c, call_fn f, void *ctx, void *dy, void *yh, size_t ybytes,
                         cudaStream_t s)
{
    if (!cuda_ok(cudaMemcpy(dy, c->y0, ybytes, cudaMemcpyHostToDevice), "copy y0"))
        return NAN;
    if (f(ctx) || !cuda_ok(cudaStreamSynchronize(s), "SpMV") ||
        !cuda_ok(cudaMemcpy(yh, dy, ybytes, cudaMemcpyDeviceToHost), "copy y"))
        return NAN;
    return bench_rel_err(c, yh);
}

/* One cusparseSpMV path (cx->mat, cx->alg) as record r named `name`:
 * workspace, a checked call, then the timed calls.  Returns 1 when r holds
 * a measurement, 0 when the call failed or was wrong, -1 when cuSPARSE
 * offers no workspace for it (the path is not available). */
static int time_spmv(struct cx *cx, cudaDataType vt, const char *name, struct bench_case *c,
                     void *dy, void *yh, size_t ybytes, int reps, cudaStream_t s, struct rec *r)
{
    size_t bsz = 0;
    const void *a = cx_scalar(cx, 0), *bb = cx_scalar(cx, 1);
    if (cusparseSpMV_bufferSize(cx->h, CUSPARSE_OPERATION_NON_TRANSPOSE, a, cx->mat, cx->vx, bb,
                                cx->vy, vt, cx->alg, &bsz) != CUSPARSE_STATUS_SUCCESS ||
        cudaMalloc(&cx->buf, bsz + 16) != cudaSuccess)
        return -1;
    snprintf(r->kernel, sizeof r->kernel, "%s", name);
    r->backend = "cusparse";
    r->rel_err = check_once(c, call_cusparse, cx, dy, yh, ybytes, s);
    int ok = !isnan(r->rel_err) && time_calls(call_cusparse, cx, reps, s, r->mode_ms) == 0;
    cudaFree(cx->buf);
    cx->buf = NULL;
    return ok;
}

static void emit(const struct bench_options *o, const struct bench_case *c, const struct rec *r,
                 double best_cusparse_ms)
{
    struct bench_record br;
    bench_record_init(&br, c, r->backend, r->kernel, 0);
    br.k = r->k;
    br.speedup = r->speedup;
    br.layout = r->layout;
    if (r->bytes > 0)
        br.bytes = r->bytes;
    if (r->full_ms > 0) {
        bsrmv_matrix_info si;
        bsrmv_matrix_get_info(c->S, &si);
        br.nnzb = si.nnzb;
        if (r->k == 0) /* an SpMM record brings its own */
            br.bytes = bsrmv_matrix_spmv_bytes(c->S);
        br.speedup = r->full_ms / r->ms;
    }
    bench_record_set_time(&br, r->ms);
    /* the same product: the rate counts the full matrix's flops */
    if (r->full_ms > 0)
        br.gflops *= (double)c->info.nnzb / (double)br.nnzb;
    br.rel_err = r->rel_err;
    br.stream_gbps = g_read_gbps;
    if (!o->json) {
        o->emit(o, &br);
        return;
    }
    struct json_line j;
    json_begin(&j, stdout);
    json_str(&j, "matrix", br.matrix);
    json_int(&j, "bs", br.bs);
    json_int(&j, "rows", br.rows);
    json_int(&j, "cols", br.cols);
    json_int(&j, "nnzb", br.nnzb);
    json_int(&j, "bytes", (int64_t)br.bytes);
    json_str(&j, "backend", br.backend);
    json_str(&j, "kernel", br.kernel);
    json_int(&j, "threads", 0);
    json_num(&j, "time_ms", br.time_ms);
    json_num(&j, "gbps", br.gbps);
    json_num(&j, "gflops", br.gflops);
    json_num(&j, "rel_err", br.rel_err);
    json_str(&j, "type", bench_type_name(br.type, br.vtype));
    json_str(&j, "order", br.order == BSRMV_COL_MAJOR ? "col" : "row");
    json_str(&j, "device", g_device);
    if (g_read_gbps > 0)
        json_num(&j, "stream_frac", br.gbps / g_read_gbps);
    json_num(&j, "vs_best_cusparse", best_cusparse_ms > 0 ? best_cusparse_ms / r->ms : NAN);
    if (r->k > 0) {
        json_int(&j, "k", r->k);
        json_num(&j, "vectors_per_s", r->k / (r->ms * 1e-3));
        if (r->speedup > 0)
            json_num(&j, "speedup_vs_spmv", r->speedup);
        if (r->layout)
            json_str(&j, "layout", r->layout);
    } else if (br.speedup > 0) {
        json_num(&j, "speedup_vs_full", br.speedup);
    }
    json_num(&j, "stall_us", g_stall_us);
    json_int(&j, "traffic_bytes", (int64_t)g_traffic);
    json_end(&j);
    fflush(stdout);
}

/* One value of ts (4, 8 or 16) bytes: a constant-size memcpy is a single
 * move, where memcpy(d, s, ts) would be a call per value. */
static inline void copy_value(char *d, const char *s, size_t ts)
{
    if (ts == 16)
        memcpy(d, s, 16);
    else if (ts == 8)
        memcpy(d, s, 8);
    else
        memcpy(d, s, 4);
}

/* Block order swap on the host: val of the other order.  These host-side
 * conversions touch every value of matrices up to ~1 GB: threads over
 * blocks (rows), which also spreads the first-touch page faults. */
static void *swap_order(const void *val, int64_t nnzb, int bs, size_t ts)
{
    void *o = malloc((size_t)nnzb * bs * bs * ts + 1);
    if (!o)
        return NULL;
    const char *s = val;
    char *d = o;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nnzb; k++) {
        const char *sb = s + (size_t)k * bs * bs * ts;
        char *db = d + (size_t)k * bs * bs * ts;
        for (int i = 0; i < bs; i++)
            for (int j = 0; j < bs; j++)
                copy_value(db + ((size_t)i * bs + j) * ts, sb + ((size_t)j * bs + i) * ts, ts);
    }
    return o;
}

/* The scalar CSR expansion of the BSR arrays, explicit zeros kept (the same
 * work as the BSR paths).  Scalar row i of block row ib starts at
 * rp[ib]*bs*bs + i*len*bs (len: blocks in the row), so block rows fill in
 * parallel without a prefix sum.  Returns 0, or 1 when out of memory. */
struct csr {
    int *rp, *ci;
    void *val;
};

static int csr_expand(const bsrmv_matrix_info *in, const int64_t *rp, const int32_t *ci,
                      const void *val, size_t ts, struct csr *out)
{
    const int bs = in->bs;
    const int64_t bs2 = (int64_t)bs * bs;
    const int64_t nnz = in->nnzb * bs2;
    out->rp = malloc(sizeof(int) * (size_t)(in->rows + 1));
    out->ci = malloc(sizeof(int) * (size_t)nnz + 4);
    out->val = malloc((size_t)nnz * ts + 8);
    if (!out->rp || !out->ci || !out->val)
        return 1;
    /* Entry (i, j) of block k sits at i*rstride + j*cstride. */
    const int64_t rstride = in->order == BSRMV_COL_MAJOR ? 1 : bs;
    const int64_t cstride = in->order == BSRMV_COL_MAJOR ? bs : 1;
    char *cv = out->val;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t ib = 0; ib < in->mb; ib++) {
        const int64_t len = rp[ib + 1] - rp[ib];
        for (int i = 0; i < bs; i++) {
            int64_t pos = rp[ib] * bs2 + i * len * bs;
            out->rp[ib * bs + i] = (int)pos;
            for (int64_t k = rp[ib]; k < rp[ib + 1]; k++)
                for (int j = 0; j < bs; j++, pos++) {
                    out->ci[pos] = ci[k] * bs + j;
                    copy_value(cv + pos * ts, (const char *)val + (size_t)(k * bs2 + i * rstride + j * cstride) * ts,
                               ts);
                }
        }
    }
    out->rp[in->rows] = (int)nnz;
    return 0;
}

static void csr_free(struct csr *c)
{
    free(c->rp);
    free(c->ci);
    free(c->val);
    *c = (struct csr){0};
}

/* Device name and read bandwidth, once per process (the first case). */
static void measure_device(const struct bench_options *o)
{
    if (g_device[0])
        return;
    bsrmv_gpu_device_name(0, g_device, sizeof g_device);
    size_t bytes = (size_t)2 << 30; /* 2 GiB read-only pass */
    if (bsrmv_gpu_read_bandwidth(bytes, 30, &g_read_gbps) != BSRMV_SUCCESS) {
        fprintf(stderr, "bsrmv: read bandwidth: %s\n", bsrmv_last_error());
        g_read_gbps = 0;
    }
    if (o->json) {
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "backend", "stream");
        json_str(&j, "kernel", "gpu_read");
        json_str(&j, "device", g_device);
        json_int(&j, "threads", 0);
        json_int(&j, "bytes", (int64_t)bytes);
        json_num(&j, "gbps", g_read_gbps);
        json_num(&j, "time_ms", (double)bytes / (g_read_gbps * 1e6));
        json_end(&j);
    } else {
        printf("GPU %s: read-only kernel over 2 GiB: %.1f GB/s\n", g_device, g_read_gbps);
    }
}

/* What the cuSPARSE paths need on the device besides x and y: 32-bit
 * row_ptr and col_idx, val in both block orders, the CSR expansion. */
struct cs_dev {
    void *rp32, *ci, *val, *val2, *csr_rp, *csr_ci, *csr_v;
};

static void cs_dev_free(struct cs_dev *d)
{
    cudaFree(d->rp32);
    cudaFree(d->ci);
    cudaFree(d->val);
    cudaFree(d->val2);
    cudaFree(d->csr_rp);
    cudaFree(d->csr_ci);
    cudaFree(d->csr_v);
    *d = (struct cs_dev){0};
}

static int upload(void **d, const void *h, size_t bytes)
{
    return cuda_ok(cudaMalloc(d, bytes + 16), "cudaMalloc") &&
           cuda_ok(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice), "copy to the device");
}

/* The BSR arrays of c as cuSPARSE takes them: 32-bit row_ptr, col_idx, val
 * in both block orders.  The host-side conversions count as cusparse_host.
 * Returns 1 when all are on the device. */
static int upload_bsr(struct bench_case *c, struct cs_dev *d)
{
    const bsrmv_matrix_info *in = &c->info;
    const size_t ts = bsrmv_type_size(in->type);
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    bsrmv_matrix_arrays(c->A, &rp, &ci, &val);
    double t0 = bench_now_ms();
    int *rp32 = malloc(sizeof(int) * (size_t)(in->mb + 1));
    void *val2 = swap_order(val, in->nnzb, in->bs, ts);
    if (rp32)
        for (int64_t i = 0; i <= in->mb; i++)
            rp32[i] = (int)rp[i];
    c->ms.cusparse_host += bench_now_ms() - t0;
    const size_t vbytes = (size_t)in->nnzb * in->bs * in->bs * ts;
    int ok = rp32 && val2 && upload(&d->rp32, rp32, sizeof(int) * (size_t)(in->mb + 1)) &&
             upload(&d->ci, ci, sizeof(int) * (size_t)in->nnzb) && upload(&d->val, val, vbytes) &&
             upload(&d->val2, val2, vbytes);
    if (!rp32 || !val2)
        fprintf(stderr, "bsrmv: out of host memory for the cuSPARSE arrays\n");
    free(rp32);
    free(val2);
    return ok;
}

/* Every cuSPARSE path on c: cusparse<t>bsrmv column and row direction,
 * cusparseSpMV BSR_ALG1 on both block orders, CSR_ALG1 on the scalar
 * expansion.  Records go to recs[*nrec...].  Returns 0, or 1 on a failure
 * that ends the run. */
static int cusparse_paths(struct bench_case *c, struct bx *b, int reps, struct rec *recs, int *nrec)
{
    const bsrmv_matrix_info *in = &c->info;
    const size_t ts = bsrmv_type_size(in->type);
    const size_t ybytes = (size_t)in->rows * ts;
    const int64_t nnz = in->nnzb * in->bs * in->bs;
    const double t0 = bench_now_ms();
    const double host0 = c->ms.cusparse_host;
    void *yh = malloc(ybytes + 16);
    struct cs_dev d = {0};
    cusparseHandle_t h = NULL;
    int rc = 0;
    if (!yh) {
        fprintf(stderr, "bsrmv: out of host memory\n");
        return 1;
    }
    int fits32 = in->nnzb < 2147483647 && in->mb < 2147483647 && in->nb < 2147483647;
    if (!fits32 || cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(stderr, "bsrmv: cuSPARSE skipped (no handle or 64-bit sizes)\n");
        goto done;
    }
    cusparseSetStream(h, b->s);
    if (!upload_bsr(c, &d)) {
        rc = 1;
        goto done;
    }
    const void *v_col = in->order == BSRMV_COL_MAJOR ? d.val : d.val2;
    const void *v_row = in->order == BSRMV_COL_MAJOR ? d.val2 : d.val;
    struct cx cx = {
        .h = h,
        .mb = (int)in->mb,
        .nb = (int)in->nb,
        .nnzb = (int)in->nnzb,
        .bs = in->bs,
        .rp = d.rp32,
        .ci = d.ci,
        .x = b->dx,
        .y = b->dy,
        .type = in->type,
        .da = {c->alpha, 0.0},
        .db = {c->beta, 0.0},
        .fa = {(float)c->alpha, 0.0f},
        .fb = {(float)c->beta, 0.0f},
        .legacy = 1,
    };
    cusparseCreateMatDescr(&cx.descr);
    for (int dir = 0; dir < 2; dir++) {
        cx.dir = dir == 0 ? CUSPARSE_DIRECTION_COLUMN : CUSPARSE_DIRECTION_ROW;
        cx.val = dir == 0 ? v_col : v_row;
        struct rec *r = &recs[*nrec];
        snprintf(r->kernel, sizeof r->kernel, "%cbsrmv_%s", blas_letter(in->type), dir == 0 ? "col" : "row");
        r->backend = "cusparse";
        r->rel_err = check_once(c, call_cusparse, &cx, b->dy, yh, ybytes, b->s);
        if (time_calls(call_cusparse, &cx, reps, b->s, r->mode_ms) == 0)
            (*nrec)++;
    }
    /* cusparseSpMV, BSR_ALG1, both block orders */
    const cudaDataType vt = cuda_type(in->type);
    cx.legacy = 0;
    cusparseCreateDnVec(&cx.vx, in->cols, b->dx, vt);
    cusparseCreateDnVec(&cx.vy, in->rows, b->dy, vt);
    /* cusparseSpMV in CUDA_C_64F crashes inside cuSPARSE 13.0 on the H100:
     * a segmentation fault in libcusparse under the BSR_ALG1 call, and the
     * run still crashed with only the CSR_ALG1 call left (the same calls in
     * CUDA_C_32F run).  Complex double has the Zbsrmv peers only. */
    const int generic = in->type != BSRMV_COMPLEX_DOUBLE;
    if (!generic)
        fprintf(stderr, "bsrmv: cusparseSpMV skipped for complex double (crashes in cuSPARSE)\n");
    for (int dir = 0; generic && dir < 2; dir++) {
        void *vv = (void *)(dir == 0 ? v_col : v_row);
        if (cusparseCreateBsr(&cx.mat, in->mb, in->nb, in->nnzb, in->bs, in->bs, d.rp32, d.ci, vv,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt,
                              dir == 0 ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW) != CUSPARSE_STATUS_SUCCESS)
            continue;
        cx.alg = CUSPARSE_SPMV_BSR_ALG1;
        int got = time_spmv(&cx, vt, dir == 0 ? "SpMV_BSR_ALG1_col" : "SpMV_BSR_ALG1_row", c, b->dy, yh,
                            ybytes, reps, b->s, &recs[*nrec]);
        if (got < 0)
            fprintf(stderr, "bsrmv: cusparseSpMV BSR (%s) not available\n", dir == 0 ? "col" : "row");
        *nrec += got > 0;
        cusparseDestroySpMat(cx.mat);
    }
    /* The block copies make room for the scalar CSR expansion, CSR_ALG1. */
    cudaFree(d.val);
    cudaFree(d.val2);
    d.val = d.val2 = NULL;
    if (generic && nnz < 2147483647) {
        const int64_t *rp;
        const int32_t *ci;
        const void *val;
        bsrmv_matrix_arrays(c->A, &rp, &ci, &val);
        struct csr e = {0};
        double th = bench_now_ms();
        int built = csr_expand(in, rp, ci, val, ts, &e) == 0;
        c->ms.cusparse_host += bench_now_ms() - th;
        if (!built)
            fprintf(stderr, "bsrmv: out of host memory for the CSR expansion: CSR_ALG1 skipped\n");
        if (built && upload(&d.csr_rp, e.rp, sizeof(int) * (size_t)(in->rows + 1)) &&
            upload(&d.csr_ci, e.ci, sizeof(int) * (size_t)nnz) && upload(&d.csr_v, e.val, (size_t)nnz * ts) &&
            cusparseCreateCsr(&cx.mat, in->rows, in->cols, nnz, d.csr_rp, d.csr_ci, d.csr_v, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt) == CUSPARSE_STATUS_SUCCESS) {
            cx.alg = CUSPARSE_SPMV_CSR_ALG1;
            *nrec += time_spmv(&cx, vt, "SpMV_CSR_ALG1", c, b->dy, yh, ybytes, reps, b->s, &recs[*nrec]) > 0;
            cusparseDestroySpMat(cx.mat);
        }
        csr_free(&e);
    }
    cusparseDestroyDnVec(cx.vx);
    cusparseDestroyDnVec(cx.vy);
    cusparseDestroyMatDescr(cx.descr);
done:
    if (h)
        cusparseDestroy(h);
    cs_dev_free(&d);
    free(yh);
    c->ms.cusparse += bench_now_ms() - t0 - (c->ms.cusparse_host - host0);
    return rc;
}

/* Whether name begins with one of the comma-separated prefixes. */
static int has_prefix(const char *prefixes, const char *name)
{
    for (const char *p = prefixes; *p;) {
        const size_t n = strcspn(p, ",");
        if (n > 0 && strncmp(name, p, n) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* The bsrmv kernels: the dispatcher's pick ("auto:..."), then every
 * candidate that applies (o->gpu_kernels ALL, only those named by
 * o->gpu_kernel_prefixes if given), each checked once and timed.  The pick
 * goes first, right after cuSPARSE: timed after the whole list it ran 1-3%
 * faster than the same kernel timed alone (H100),
 * which would flatter it against cuSPARSE.
 * The index of the fastest candidate in the first traffic mode goes to
 * *best_i (-1: none). */
static int bsrmv_kernels(const struct bench_options *o, struct bench_case *c, struct bx *b, int reps,
                         struct rec *recs, int *nrec, bsrmv_gpu_config *cfgs, int *nc, int *best_i)
{
    const size_t ybytes = (size_t)c->info.rows * bsrmv_type_size(c->info.vector_type);
    const double t0 = bench_now_ms();
    void *yh = malloc(ybytes + 16);
    int rc = 0;
    if (!yh) {
        fprintf(stderr, "bsrmv: out of host memory\n");
        return 1;
    }
    *nc = 0;
    if (o->gpu_kernels == BENCH_GPU_ALL)
        bsrmv_gpu_candidates(b->dA, cfgs, MAXCFG, nc);
    if (*nc > MAXCFG)
        *nc = MAXCFG;
    double best = 0;
    *best_i = -1;
    for (int i = -1; i < *nc && *nrec < MAXREC; i++) {
        struct rec *r = &recs[*nrec];
        r->backend = "gpu";
        if (i >= 0) {
            bsrmv_gpu_config_string(&cfgs[i], r->kernel, sizeof r->kernel);
            if ((o->gpu_kernel_prefixes && !has_prefix(o->gpu_kernel_prefixes, r->kernel)) ||
                bsrmv_gpu_matrix_set_config(b->dA, &cfgs[i]) != BSRMV_SUCCESS)
                continue;
        } else {
            double tune_ms = 0;
            if (o->gpu_tune && bsrmv_gpu_matrix_tune(b->dA, o->gpu_tune_max, 0, b->s, &tune_ms) != BSRMV_SUCCESS) {
                fprintf(stderr, "bsrmv: bsrmv_gpu_matrix_tune: %s\n", bsrmv_last_error());
                rc = 1;
                continue;
            }
            if (o->gpu_tune)
                fprintf(stderr, "bsrmv: %s bs %d: measured choice in %.2f ms\n", c->matrix, c->info.bs, tune_ms);
            else
                bsrmv_gpu_matrix_set_config(b->dA, NULL);
            bsrmv_gpu_plan_info p;
            bsrmv_gpu_matrix_get_plan(b->dA, &p);
            char cs[80];
            bsrmv_gpu_config_string(&p.config, cs, sizeof cs);
            snprintf(r->kernel, sizeof r->kernel, "auto:%s%s", cs,
                     p.from_tune_table == 2 ? "(measured)" : p.from_tune_table ? "(tuned)" : "");
        }
        r->rel_err = check_once(c, call_bsrmv, b, b->dy, yh, ybytes, b->s);
        if (time_calls(call_bsrmv, b, reps, b->s, r->mode_ms) != 0) {
            rc = 1;
            continue;
        }
        if (i >= 0 && (best == 0 || r->mode_ms[0] < best)) {
            best = r->mode_ms[0];
            *best_i = i;
        }
        (*nrec)++;
    }
    free(yh);
    c->ms.gpu_kernels += bench_now_ms() - t0;
    return rc;
}

static void summarise(const struct bench_case *c, const struct rec *recs, int nrec, double best_cs,
                      const char *best_cs_name, const bsrmv_gpu_config *cfgs, int nc, int best_i,
                      struct bench_gpu_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    snprintf(sum->device, sizeof sum->device, "%s", g_device);
    sum->read_gbps = g_read_gbps;
    if (best_cs > 0) {
        sum->best_cusparse_gbps = c->bytes / (best_cs * 1e6);
        snprintf(sum->best_cusparse, sizeof sum->best_cusparse, "%s", best_cs_name);
    }
    sum->ncand = nc;
    for (int i = 0; i < nrec; i++) {
        double g = c->bytes / (recs[i].ms * 1e6);
        if (!strcmp(recs[i].backend, "bound"))
            sum->bound_gbps = g;
        if (strcmp(recs[i].backend, "gpu"))
            continue;
        if (!strncmp(recs[i].kernel, "auto:", 5)) {
            sum->auto_gbps = g;
            snprintf(sum->auto_kernel, sizeof sum->auto_kernel, "%s", recs[i].kernel + 5);
        } else if (g > sum->best_gbps) {
            sum->best_gbps = g;
            snprintf(sum->best, sizeof sum->best, "%s", recs[i].kernel);
        }
    }
    if (best_i >= 0)
        sum->best_cfg = cfgs[best_i];
}

/* ---- SpMM (--k) ---------------------------------------------------- */

/* bsrmv_gpu_spmm, or k bsrmv_gpu_spmv calls (column-major vectors). */
struct mmx {
    bsrmv_gpu_matrix *dA;
    int k;
    bsrmv_layout layout;
    const void *dX;
    void *dY;
    int64_t ldx, ldy, nx, ny;
    size_t vs;
    double alpha, beta;
    cudaStream_t s;
};

static int call_spmm(void *p)
{
    struct mmx *m = p;
    if (bsrmv_gpu_spmm(BSRMV_OP_N, m->alpha, m->dA, m->k, m->dX, m->ldx, m->beta, m->dY, m->ldy,
                       m->layout, m->s) != BSRMV_SUCCESS) {
        fprintf(stderr, "bsrmv: bsrmv_gpu_spmm: %s\n", bsrmv_last_error());
        return 1;
    }
    return 0;
}

static int call_spmv_k(void *p)
{
    struct mmx *m = p;
    for (int j = 0; j < m->k; j++)
        if (bsrmv_gpu_spmv(BSRMV_OP_N, m->alpha, m->dA, (const char *)m->dX + (size_t)j * m->nx * m->vs,
                           m->nx, m->beta, (char *)m->dY + (size_t)j * m->ny * m->vs, m->ny,
                           m->s) != BSRMV_SUCCESS) {
            fprintf(stderr, "bsrmv: bsrmv_gpu_spmv: %s\n", bsrmv_last_error());
            return 1;
        }
    return 0;
}

/* cusparseSpMM on one sparse descriptor and algorithm. */
struct cmm {
    cusparseHandle_t h;
    cusparseSpMatDescr_t mat;
    cusparseDnMatDescr_t B, C;
    cusparseSpMMAlg_t alg;
    cudaDataType vt;
    const void *alpha, *beta;
    void *buf;
};

static int call_cusparse_mm(void *p)
{
    struct cmm *c = p;
    cusparseStatus_t st = cusparseSpMM(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                       c->alpha, c->mat, c->B, c->beta, c->C, c->vt, c->alg, c->buf);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        fprintf(stderr, "bsrmv: cusparseSpMM failed: %s\n", cusparseGetErrorString(st));
        return 1;
    }
    return 0;
}

/* Runs the call once from Y0 and returns the worst column rel_err. */
static double check_mm(struct bench_case *c, call_fn f, void *ctx, void *dY, const void *Y0, void *Yh,
                       size_t bytes, int k, int col, cudaStream_t s)
{
    if (!cuda_ok(cudaMemcpy(dY, Y0, bytes, cudaMemcpyHostToDevice), "copy Y0"))
        return NAN;
    if (f(ctx) || !cuda_ok(cudaStreamSynchronize(s), "SpMM") ||
        !cuda_ok(cudaMemcpy(Yh, dY, bytes, cudaMemcpyDeviceToHost), "copy Y"))
        return NAN;
    return bench_spmm_rel_err(c, Yh, k, col);
}

/* One cusparseSpMM path as record r: workspace, preprocessing (not timed),
 * a checked call, the timed calls.  1: r holds a measurement; 0: the call
 * failed or was wrong; -1: cuSPARSE does not offer it for this matrix and
 * layout. */
static int time_spmm_cusparse(struct cmm *cm, const char *name, struct bench_case *c, void *dY,
                              const void *Y0, void *Yh, size_t ybytes, int k, int col, int reps,
                              cudaStream_t s, struct rec *r)
{
    size_t bsz = 0;
    if (cusparseSpMM_bufferSize(cm->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                cm->alpha, cm->mat, cm->B, cm->beta, cm->C, cm->vt, cm->alg,
                                &bsz) != CUSPARSE_STATUS_SUCCESS ||
        cudaMalloc(&cm->buf, bsz + 16) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    int ok = -1;
    if (cusparseSpMM_preprocess(cm->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                cm->alpha, cm->mat, cm->B, cm->beta, cm->C, cm->vt, cm->alg,
                                cm->buf) == CUSPARSE_STATUS_SUCCESS &&
        cusparseSpMM(cm->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, cm->alpha,
                     cm->mat, cm->B, cm->beta, cm->C, cm->vt, cm->alg, cm->buf) == CUSPARSE_STATUS_SUCCESS) {
        snprintf(r->kernel, sizeof r->kernel, "%s_%s", name, col ? "col" : "row");
        r->backend = "cusparse";
        r->k = k;
        r->rel_err = check_mm(c, call_cusparse_mm, cm, dY, Y0, Yh, ybytes, k, col, s);
        ok = !isnan(r->rel_err) && time_calls(call_cusparse_mm, cm, reps, s, &r->ms) == 0;
    }
    cudaFree(cm->buf);
    cm->buf = NULL;
    return ok;
}

/* The multivectors of one (k, layout): X and Y in the layout, column-major
 * copies for the k SpMVs, Y0 on the host in both. */
struct mm_bufs {
    void *X, *Y0, *Xc, *Y0c, *Yh; /* host   */
    void *dX, *dY, *dXc, *dYc;    /* device */
};

static void mm_bufs_free(struct mm_bufs *m)
{
    free(m->X);
    free(m->Y0);
    free(m->Xc);
    free(m->Y0c);
    free(m->Yh);
    cudaFree(m->dX);
    cudaFree(m->dY);
    cudaFree(m->dXc);
    cudaFree(m->dYc);
    *m = (struct mm_bufs){0};
}

static int mm_bufs_make(struct bench_case *c, int k, int col, struct mm_bufs *m)
{
    const bsrmv_type t = c->info.vector_type;
    const size_t vs = bsrmv_type_size(t);
    const size_t xb = (size_t)c->info.cols * k * vs, yb = (size_t)c->info.rows * k * vs;
    m->X = malloc(xb + 16);
    m->Y0 = malloc(yb + 16);
    m->Xc = malloc(xb + 16);
    m->Y0c = malloc(yb + 16);
    m->Yh = malloc(yb + 16);
    if (!m->X || !m->Y0 || !m->Xc || !m->Y0c || !m->Yh) {
        fprintf(stderr, "bsrmv: out of host memory for the SpMM vectors\n");
        return 0;
    }
    bench_fill_scaled(m->X, c->x, c->info.cols, k, col, t);
    bench_fill_scaled(m->Y0, c->y0, c->info.rows, k, col, t);
    bench_fill_scaled(m->Xc, c->x, c->info.cols, k, 1, t);
    bench_fill_scaled(m->Y0c, c->y0, c->info.rows, k, 1, t);
    return upload(&m->dX, m->X, xb) && upload(&m->dY, m->Y0, yb) && upload(&m->dXc, m->Xc, xb) &&
           upload(&m->dYc, m->Y0c, yb);
}

/* One bsrmv record of spmm_one: `name` (k appended where it ends in "x"),
 * checked against the reference in ctx's own Y and layout, then timed. 0,
 * or 1 where timing failed. */
static int mine_rec(struct rec *r, const char *name, int k, double bytes, struct bench_case *c, call_fn fn,
                    struct mmx *ctx, const struct mm_bufs *m, size_t ybytes, int reps, cudaStream_t s)
{
    const size_t n = strlen(name);
    if (n && name[n - 1] == 'x')
        snprintf(r->kernel, sizeof r->kernel, "%s%d", name, k);
    else
        snprintf(r->kernel, sizeof r->kernel, "%s", name);
    r->backend = "gpu";
    r->k = k;
    r->bytes = bytes;
    const void *Y0 = ctx->dY == m->dYc ? m->Y0c : m->Y0;
    r->rel_err = check_mm(c, fn, ctx, ctx->dY, Y0, m->Yh, ybytes, k, ctx->layout == BSRMV_LAYOUT_COL, s);
    return time_calls(fn, ctx, reps, s, &r->ms) != 0;
}

/* k vectors in `lay`: k bsrmv_gpu_spmv calls ("spmvxK"), bsrmv_gpu_spmm
 * ("spmm-row"/"spmm-col") and cusparseSpMM with the BSR descriptor (both
 * block orders, BSR_ALG1) and the CSR expansion (CSR_ALG1..3), in the same
 * layout, each checked against (j+1) * y_ref and timed the same way; with
 * dS (--sym: the symmetric storage's handle) the same two bsrmv calls on
 * it ("sym-spmvxK", "sym-spmm-L": bytes those of the stored blocks read
 * once per SpMV, resp. once, speedup over the full storage's same call);
 * the records, then a summary line (and one for the symmetric storage) on
 * stderr. */
static int spmm_one(const struct bench_options *o, struct bench_case *c, struct bx *b, const struct cs_dev *d,
                    cusparseHandle_t h, bsrmv_gpu_matrix *dS, int k, bsrmv_layout lay, int reps)
{
    const bsrmv_matrix_info *in = &c->info;
    const size_t vs = bsrmv_type_size(in->vector_type); /* of X and Y */
    const int col = lay == BSRMV_LAYOUT_COL;
    const size_t ybytes = (size_t)in->rows * k * vs;
    const cudaDataType vt = cuda_type(in->type);
    const int dbl = in->type == BSRMV_DOUBLE || in->type == BSRMV_COMPLEX_DOUBLE;
    const double vec_bytes = (double)(in->rows + in->cols) * (double)vs;
    struct rec recs[10];
    int nrec = 0, rc = 0;
    struct mm_bufs m = {0};
    memset(recs, 0, sizeof recs);
    if (!mm_bufs_make(c, k, col, &m)) {
        mm_bufs_free(&m);
        return 1;
    }
    struct mmx peer = {b->dA, k, BSRMV_LAYOUT_COL, m.dXc, m.dYc, in->cols, in->rows, in->cols, in->rows, vs,
                       c->alpha, c->beta, b->s};
    struct mmx mine = peer;
    mine.layout = lay;
    mine.dX = m.dX;
    mine.dY = m.dY;
    mine.ldx = col ? in->cols : k;
    mine.ldy = col ? in->rows : k;
    /* k SpMVs with the plan's choice, then the SpMM */
    if (mine_rec(&recs[nrec++], "spmvx", k, c->bytes * k, c, call_spmv_k, &peer, &m, ybytes, reps, b->s) ||
        mine_rec(&recs[nrec++], col ? "spmm-col" : "spmm-row", k, c->bytes + (k - 1) * vec_bytes, c, call_spmm,
                 &mine, &m, ybytes, reps, b->s))
        goto fail;
    recs[1].speedup = recs[0].ms / recs[1].ms;
    if (dS) {
        struct mmx speer = peer, smine = mine;
        speer.dA = smine.dA = dS;
        const double sb = (double)bsrmv_matrix_spmv_bytes(c->S);
        if (mine_rec(&recs[nrec++], "sym-spmvx", k, sb * k, c, call_spmv_k, &speer, &m, ybytes, reps, b->s) ||
            mine_rec(&recs[nrec++], col ? "sym-spmm-col" : "sym-spmm-row", k, sb + (k - 1) * vec_bytes, c,
                     call_spmm, &smine, &m, ybytes, reps, b->s))
            goto fail;
        /* their speedups: over the full storage's same call */
        recs[2].full_ms = recs[0].ms;
        recs[3].full_ms = recs[1].ms;
    }
    const int nmine = nrec;
    /* cuSPARSE */
    struct cmm cm = {.h = h, .vt = vt};
    /* alpha and beta in the values' type (a complex one: imaginary part 0) */
    const double da[2] = {c->alpha, 0}, db[2] = {c->beta, 0};
    const float fa[2] = {(float)c->alpha, 0}, fb[2] = {(float)c->beta, 0};
    cm.alpha = dbl ? (const void *)da : (const void *)fa;
    cm.beta = dbl ? (const void *)db : (const void *)fb;
    const cusparseOrder_t dord = col ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW;
    if (h && cusparseCreateDnMat(&cm.B, in->cols, k, col ? in->cols : k, m.dX, vt, dord) == CUSPARSE_STATUS_SUCCESS &&
        cusparseCreateDnMat(&cm.C, in->rows, k, col ? in->rows : k, m.dY, vt, dord) == CUSPARSE_STATUS_SUCCESS) {
        const void *v_col = in->order == BSRMV_COL_MAJOR ? d->val : d->val2;
        const void *v_row = in->order == BSRMV_COL_MAJOR ? d->val2 : d->val;
        for (int dir = 0; dir < 2 && d->val; dir++) {
            if (cusparseCreateBsr(&cm.mat, in->mb, in->nb, in->nnzb, in->bs, in->bs, d->rp32, d->ci,
                                  (void *)(dir == 0 ? v_col : v_row), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_BASE_ZERO, vt,
                                  dir == 0 ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW) != CUSPARSE_STATUS_SUCCESS)
                continue;
            cm.alg = CUSPARSE_SPMM_BSR_ALG1;
            int got = time_spmm_cusparse(&cm, dir == 0 ? "SpMM_BSR_ALG1_bcol" : "SpMM_BSR_ALG1_brow", c, m.dY,
                                         m.Y0, m.Yh, ybytes, k, col, reps, b->s, &recs[nrec]);
            nrec += got > 0;
            cusparseDestroySpMat(cm.mat);
        }
        const int64_t nnz = in->nnzb * in->bs * in->bs;
        if (d->csr_v && cusparseCreateCsr(&cm.mat, in->rows, in->cols, nnz, d->csr_rp, d->csr_ci, d->csr_v,
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                          vt) == CUSPARSE_STATUS_SUCCESS) {
            static const struct {
                cusparseSpMMAlg_t alg;
                const char *name;
            } csr_algs[] = {{CUSPARSE_SPMM_CSR_ALG1, "SpMM_CSR_ALG1"},
                            {CUSPARSE_SPMM_CSR_ALG2, "SpMM_CSR_ALG2"},
                            {CUSPARSE_SPMM_CSR_ALG3, "SpMM_CSR_ALG3"}};
            for (size_t q = 0; q < sizeof csr_algs / sizeof csr_algs[0]; q++) {
                cm.alg = csr_algs[q].alg;
                int got = time_spmm_cusparse(&cm, csr_algs[q].name, c, m.dY, m.Y0, m.Yh, ybytes, k, col, reps,
                                             b->s, &recs[nrec]);
                nrec += got > 0;
            }
            cusparseDestroySpMat(cm.mat);
        }
    }
    if (cm.B)
        cusparseDestroyDnMat(cm.B);
    if (cm.C)
        cusparseDestroyDnMat(cm.C);
    double best_cs = 0;
    const char *best_name = "none";
    for (int i = 0; i < nrec; i++)
        if (!strcmp(recs[i].backend, "cusparse") && (best_cs == 0 || recs[i].ms < best_cs)) {
            best_cs = recs[i].ms;
            best_name = recs[i].kernel;
        }
    const double tol = in->vector_type == BSRMV_FLOAT || in->vector_type == BSRMV_COMPLEX_FLOAT ? 3.5e-4 : 1.5e-8;
    for (int i = 0; i < nrec; i++) {
        recs[i].layout = col ? "col" : "row";
        emit(o, c, &recs[i], best_cs);
        if (!(recs[i].rel_err <= tol) && strcmp(recs[i].backend, "gpu") == 0) {
            fprintf(stderr, "bsrmv: %s (k = %d): wrong result, rel_err %.3g\n", recs[i].kernel, k, recs[i].rel_err);
            rc = 1;
        }
    }
    /* one line per case for scripts (scripts/gpu_spmm.sh): matrix bs type
     * (double, float, mixed) layout k, bsrmv_gpu_spmm ms, k SpMVs ms, their
     * ratio, the best cuSPARSE SpMM path, its ms, its ratio (0 where none
     * ran) */
    fprintf(stderr, "spmm-summary %s %d %s %s %d %.5f %.5f %.3f %s %.5f %.3f\n", c->matrix, in->bs,
            bench_type_name(in->type, in->vector_type), col ? "col" : "row", k, recs[1].ms, recs[0].ms,
            recs[1].speedup, best_name, best_cs, best_cs > 0 ? best_cs / recs[1].ms : 0.0);
    /* symmetric storage: its SpMM ms, its k SpMVs ms, their ratio, the
     * full storage's SpMM ms and the ratio to it */
    if (nmine == 4)
        fprintf(stderr, "sym-spmm-summary %s %d %s %s %d %.5f %.5f %.3f %.5f %.3f\n", c->matrix,
                in->bs, bench_type_name(in->type, in->vector_type), col ? "col" : "row", k,
                recs[3].ms, recs[2].ms, recs[2].ms / recs[3].ms, recs[1].ms, recs[1].ms / recs[3].ms);
    mm_bufs_free(&m);
    return rc;
fail:
    mm_bufs_free(&m);
    return 1;
}

/* Every --layout x --k on c: the cuSPARSE arrays (both block orders, the
 * CSR expansion) are made once for all of them. */
static int spmm_paths(const struct bench_options *o, struct bench_case *c, struct bx *b, int reps)
{
    const bsrmv_matrix_info *in = &c->info;
    const size_t ts = bsrmv_type_size(in->type);
    const int64_t nnz = in->nnzb * in->bs * in->bs;
    struct cs_dev d = {0};
    cusparseHandle_t h = NULL;
    bsrmv_gpu_matrix *dS = NULL;
    int rc = 0;
    /* the k SpMVs run the plan's choice, whatever the kernel list left set */
    bsrmv_gpu_matrix_set_config(b->dA, NULL);
    const int fits32 = nnz < 2147483647 && in->mb < 2147483647 && in->nb < 2147483647;
    if (in->type != in->vector_type) {
        /* cusparseSpMM takes A, X and Y of one real type */
        fprintf(stderr, "bsrmv: cuSPARSE SpMM skipped (float values with double vectors)\n");
    } else if (!fits32 || cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(stderr, "bsrmv: cuSPARSE SpMM skipped (no handle or 64-bit sizes)\n");
        h = NULL;
    } else {
        cusparseSetStream(h, b->s);
        if (!upload_bsr(c, &d)) {
            rc = 1;
            goto done;
        }
        const int64_t *rp;
        const int32_t *ci;
        const void *val;
        bsrmv_matrix_arrays(c->A, &rp, &ci, &val);
        struct csr e = {0};
        const double th = bench_now_ms();
        const int built = csr_expand(in, rp, ci, val, ts, &e) == 0;
        c->ms.cusparse_host += bench_now_ms() - th;
        if (!built || !upload(&d.csr_rp, e.rp, sizeof(int) * (size_t)(in->rows + 1)) ||
            !upload(&d.csr_ci, e.ci, sizeof(int) * (size_t)nnz) || !upload(&d.csr_v, e.val, (size_t)nnz * ts)) {
            fprintf(stderr, "bsrmv: no CSR expansion for cusparseSpMM: the CSR algorithms skipped\n");
            cudaFree(d.csr_v);
            d.csr_v = NULL;
        }
        csr_free(&e);
    }
    if (c->S && bsrmv_gpu_matrix_upload(&dS, c->S, 0, b->s) != BSRMV_SUCCESS) {
        fprintf(stderr, "bsrmv: upload of the symmetric matrix: %s\n", bsrmv_last_error());
        rc = 1;
        goto done;
    }
    for (int li = 0; li < o->n_layouts && !rc; li++)
        for (int q = 0; q < o->n_k && !rc; q++)
            rc = spmm_one(o, c, b, &d, h, dS, o->k[q], o->layouts[li], reps);
done:
    bsrmv_gpu_matrix_destroy(dS);
    if (h)
        cusparseDestroy(h);
    cs_dev_free(&d);
    return rc;
}

/* Every path of one case in every traffic mode: cuSPARSE, the gather
 * bound, bsrmv's kernels (and the symmetric storage's); their records
 * written mode by mode, and the first mode's summed up into sum where
 * given. */
static int measure_paths(const struct bench_options *o, struct bench_case *c, struct bx *b, int reps,
                         int with_cusparse, struct bench_gpu_summary *sum)
{
    const bsrmv_matrix_info *in = &c->info;
    const int mixed = in->type != in->vector_type;
    const int cplx = bench_parts(in->type) == 2;
    struct rec *recs = calloc(MAXREC, sizeof *recs);
    bsrmv_gpu_config cfgs[MAXCFG];
    int nrec = 0, nc = 0, best_i = -1, rc = 1;
    if (!recs) {
        fprintf(stderr, "bsrmv: out of host memory\n");
        return 1;
    }
    /* cuSPARSE has no float-value, double-vector BSR product, and the
     * gather bound reads x in the value type: neither for mixed */
    if (with_cusparse && !mixed && cusparse_paths(c, b, reps, recs, &nrec) != 0)
        goto done;
    /* the matrix's gather without its rows: what separates a kernel from
     * it is the cost of the rows.  It reads no other traffic: one
     * measurement stands for every mode. */
    double bound = 0;
    if (!mixed && !cplx && bsrmv_gpu_gather_bound(b->dA, b->dx, reps, &bound) != BSRMV_SUCCESS)
        fprintf(stderr, "bsrmv: gather bound: %s\n", bsrmv_last_error());
    else if (bound > 0) {
        snprintf(recs[nrec].kernel, sizeof recs[nrec].kernel, "gather_bound");
        recs[nrec].backend = "bound";
        recs[nrec].rel_err = NAN;
        for (int m = 0; m < g_nmodes; m++)
            recs[nrec].mode_ms[m] = bound;
        nrec++;
    }
    rc = bsrmv_kernels(o, c, b, reps, recs, &nrec, cfgs, &nc, &best_i);
    /* --sym: the pick and the SYM candidates on the symmetric storage,
     * against the full storage's pick (the first bsrmv record) */
    int sym_first = nrec, full_i = -1;
    if (rc == 0 && c->S) {
        for (int i = 0; i < nrec && full_i < 0; i++)
            if (!strncmp(recs[i].kernel, "auto:", 5))
                full_i = i;
        struct bx bsym = *b;
        bsrmv_gpu_config scfgs[MAXCFG];
        int snc = 0, sbest = -1;
        if (bsrmv_gpu_matrix_upload(&bsym.dA, c->S, 0, b->s) != BSRMV_SUCCESS) {
            fprintf(stderr, "bsrmv: upload of the symmetric matrix: %s\n", bsrmv_last_error());
            rc = 1;
            goto done;
        }
        rc = bsrmv_kernels(o, c, &bsym, reps, recs, &nrec, scfgs, &snc, &sbest);
        bsrmv_gpu_matrix_destroy(bsym.dA);
        for (int i = sym_first; i < nrec; i++) {
            char k[96];
            snprintf(k, sizeof k, "sym:%s", recs[i].kernel);
            memcpy(recs[i].kernel, k, sizeof k);
        }
    }

    double tol = in->vector_type == BSRMV_FLOAT || in->vector_type == BSRMV_COMPLEX_FLOAT ? 3.5e-4 : 1.5e-8;
    for (int i = 0; i < nrec; i++)
        if (!(recs[i].rel_err <= tol) && strcmp(recs[i].backend, "gpu") == 0) {
            fprintf(stderr, "bsrmv: %s: wrong result, rel_err %.3g\n", recs[i].kernel, recs[i].rel_err);
            rc = 1;
        }
    for (int m = 0; m < g_nmodes; m++) {
        g_traffic = g_mode_traffic[m];
        double best_cs = 0;
        char best_cs_name[64] = "";
        for (int i = 0; i < nrec; i++) {
            recs[i].ms = recs[i].mode_ms[m];
            if (i >= sym_first && full_i >= 0)
                recs[i].full_ms = recs[full_i].mode_ms[m];
            if (!strcmp(recs[i].backend, "cusparse") && recs[i].ms > 0 && (best_cs == 0 || recs[i].ms < best_cs)) {
                best_cs = recs[i].ms;
                snprintf(best_cs_name, sizeof best_cs_name, "%s", recs[i].kernel);
            }
        }
        for (int i = 0; i < nrec; i++)
            emit(o, c, &recs[i], best_cs);
        if (sum && m == 0)
            summarise(c, recs, nrec, best_cs, best_cs_name, cfgs, nc, best_i, sum);
    }
done:
    free(recs);
    return rc;
}

int bench_gpu(const struct bench_options *o, struct bench_case *c)
{
    return bench_gpu_run(o, c, 1, NULL);
}

int bench_gpu_run(const struct bench_options *o, struct bench_case *c, int with_cusparse,
                  struct bench_gpu_summary *sum)
{
    const bsrmv_matrix_info *in = &c->info;
    const size_t ts = bsrmv_type_size(in->vector_type); /* of x and y */
    const int reps = o->gpu_reps > 0 ? o->gpu_reps : o->reps >= 50 ? o->reps : 50;
    int rc = 0;
    struct bx b = {0};
    const double t0 = bench_now_ms();
    g_stall_us = o->cold_launch ? 0 : g_stall_us > 0 ? g_stall_us : 100;
    measure_device(o);
    if (!cuda_ok(cudaStreamCreate(&b.s), "cudaStreamCreate"))
        goto fail;
    if (bsrmv_gpu_matrix_upload(&b.dA, c->A, 0, b.s) != BSRMV_SUCCESS) {
        fprintf(stderr, "bsrmv: upload: %s\n", bsrmv_last_error());
        goto fail;
    }
    b.nx = in->cols;
    b.ny = in->rows;
    b.alpha = c->alpha;
    b.beta = c->beta;
    if (bsrmv_gpu_malloc(&b.dx, (size_t)in->cols * ts) || bsrmv_gpu_malloc(&b.dy, (size_t)in->rows * ts) ||
        bsrmv_gpu_to_device(b.dx, c->x, (size_t)in->cols * ts)) {
        fprintf(stderr, "bsrmv: %s\n", bsrmv_last_error());
        goto fail;
    }
    c->ms.gpu_setup += bench_now_ms() - t0;

    /* every path times in each traffic mode; the summary is the first
     * mode's, SpMM runs in the last */
    g_nmodes = o->n_gpu_traffic > 0 ? o->n_gpu_traffic : 1;
    size_t most = 0;
    for (int m = 0; m < g_nmodes; m++) {
        const double tr = o->n_gpu_traffic ? o->gpu_traffic[m] : 0;
        g_mode_traffic[m] = tr == BENCH_TRAFFIC_CG ? (size_t)10 * (size_t)in->rows * ts : (size_t)tr;
        most = g_mode_traffic[m] > most ? g_mode_traffic[m] : most;
    }
    if (most >= 2 && bsrmv_gpu_malloc(&g_traffic_buf, most)) {
        fprintf(stderr, "bsrmv: %s\n", bsrmv_last_error());
        goto fail;
    }
    if (most >= 2 && !cuda_ok(cudaMemset(g_traffic_buf, 0, most), "cudaMemset"))
        goto fail;
    rc = measure_paths(o, c, &b, reps, with_cusparse, sum);
    g_mode_traffic[0] = g_mode_traffic[g_nmodes - 1];
    g_nmodes = 1;
    if (o->n_k > 0 && with_cusparse && spmm_paths(o, c, &b, reps) != 0)
        rc = 1;
    goto done;
fail:
    rc = 1;
done:
    bsrmv_gpu_free(g_traffic_buf);
    g_traffic_buf = NULL;
    g_traffic = 0;
    g_mode_traffic[0] = 0;
    g_nmodes = 1;
    bsrmv_gpu_free(b.dx);
    bsrmv_gpu_free(b.dy);
    bsrmv_gpu_matrix_destroy(b.dA);
    if (b.s)
        cudaStreamDestroy(b.s);
    return rc;
}
