/* bench --gpu: every bsrmv GPU kernel that applies, the dispatcher's pick,
 * cuSPARSE (cusparse<t>bsrmv column and row direction, cusparseSpMV with
 * CUSPARSE_SPMV_BSR_ALG1, CUSPARSE_SPMV_CSR_ALG1 on the scalar CSR
 * expansion) and the device's read bandwidth, on the same matrix in the
 * same run.  CUDA events around each call, warm-up, median of >= 50 calls.
 * GB/s always counts the BSR bytes of the case (bsrmv_matrix_spmv_bytes),
 * so every path is compared on the same work. */
#include "bench_gpu.h"
#include "json.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXREC 96

struct rec {
    char kernel[96];
    const char *backend;
    double ms, rel_err;
};

static double g_read_gbps;
static char g_device[128];

int bench_gpu_available(void)
{
    int n = 0;
    return bsrmv_gpu_device_count(&n) == BSRMV_SUCCESS && n > 0;
}

typedef int (*call_fn)(void *ctx);

/* Median time of `reps` calls (after 5 warm-up calls), each between two
 * events on stream s.  Returns 0, or 1 on a failed call. */
static int time_calls(call_fn f, void *ctx, int reps, cudaStream_t s, double *ms)
{
    cudaEvent_t e0, e1;
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!t || cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        free(t);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < 5 && !rc; i++)
        rc = f(ctx);
    for (int i = 0; i < reps && !rc; i++) {
        float m = 0;
        cudaEventRecord(e0, s);
        rc = f(ctx);
        cudaEventRecord(e1, s);
        if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&m, e0, e1) != cudaSuccess)
            rc = 1;
        t[i] = m;
    }
    if (!rc && cudaDeviceSynchronize() != cudaSuccess)
        rc = 1;
    if (!rc)
        *ms = bench_median(t, reps);
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
    double alpha, beta;
    float fa, fb;
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vx, vy;
    cusparseSpMVAlg_t alg;
    void *buf;
};

static int call_cusparse(void *p)
{
    struct cx *c = p;
    cusparseStatus_t st;
    const void *a = c->type == BSRMV_DOUBLE ? (const void *)&c->alpha : (const void *)&c->fa;
    const void *b = c->type == BSRMV_DOUBLE ? (const void *)&c->beta : (const void *)&c->fb;
    if (c->legacy) {
        if (c->type == BSRMV_DOUBLE)
            st = cusparseDbsrmv(c->h, c->dir, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb, c->nb, c->nnzb, a,
                                c->descr, c->val, c->rp, c->ci, c->bs, c->x, b, c->y);
        else
            st = cusparseSbsrmv(c->h, c->dir, CUSPARSE_OPERATION_NON_TRANSPOSE, c->mb, c->nb, c->nnzb, a,
                                c->descr, c->val, c->rp, c->ci, c->bs, c->x, b, c->y);
    } else {
        st = cusparseSpMV(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, a, c->mat, c->vx, b, c->vy,
                          c->type == BSRMV_DOUBLE ? CUDA_R_64F : CUDA_R_32F, c->alg, c->buf);
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
    const void *a = cx->type == BSRMV_DOUBLE ? (const void *)&cx->alpha : (const void *)&cx->fa;
    const void *bb = cx->type == BSRMV_DOUBLE ? (const void *)&cx->beta : (const void *)&cx->fb;
    if (cusparseSpMV_bufferSize(cx->h, CUSPARSE_OPERATION_NON_TRANSPOSE, a, cx->mat, cx->vx, bb,
                                cx->vy, vt, cx->alg, &bsz) != CUSPARSE_STATUS_SUCCESS ||
        cudaMalloc(&cx->buf, bsz + 16) != cudaSuccess)
        return -1;
    snprintf(r->kernel, sizeof r->kernel, "%s", name);
    r->backend = "cusparse";
    r->rel_err = check_once(c, call_cusparse, cx, dy, yh, ybytes, s);
    int ok = !isnan(r->rel_err) && time_calls(call_cusparse, cx, reps, s, &r->ms) == 0;
    cudaFree(cx->buf);
    cx->buf = NULL;
    return ok;
}

static void emit(const struct bench_options *o, const struct bench_case *c, const struct rec *r,
                 double best_cusparse_ms)
{
    struct bench_record br;
    bench_record_init(&br, c, r->backend, r->kernel, 0);
    bench_record_set_time(&br, r->ms);
    br.rel_err = r->rel_err;
    br.stream_gbps = g_read_gbps;
    if (!o->json) {
        bench_emit(o, &br);
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
    json_str(&j, "type", br.type == BSRMV_FLOAT ? "float" : "double");
    json_str(&j, "order", br.order == BSRMV_COL_MAJOR ? "col" : "row");
    json_str(&j, "device", g_device);
    if (g_read_gbps > 0)
        json_num(&j, "stream_frac", br.gbps / g_read_gbps);
    json_num(&j, "vs_best_cusparse", best_cusparse_ms > 0 ? best_cusparse_ms / r->ms : NAN);
    json_end(&j);
    fflush(stdout);
}

/* Block order swap on the host: val of the other order. */
static void *swap_order(const void *val, int64_t nnzb, int bs, size_t ts)
{
    void *o = malloc((size_t)nnzb * bs * bs * ts);
    if (!o)
        return NULL;
    const char *s = val;
    char *d = o;
    for (int64_t k = 0; k < nnzb; k++) {
        const char *sb = s + (size_t)k * bs * bs * ts;
        char *db = d + (size_t)k * bs * bs * ts;
        for (int i = 0; i < bs; i++)
            for (int j = 0; j < bs; j++)
                memcpy(db + ((size_t)i * bs + j) * ts, sb + ((size_t)j * bs + i) * ts, ts);
    }
    return o;
}

int bench_gpu(const struct bench_options *o, struct bench_case *c)
{
    return bench_gpu_run(o, c, 1, NULL);
}

int bench_gpu_run(const struct bench_options *o, struct bench_case *c, int with_cusparse,
                  struct bench_gpu_summary *sum)
{
    const bsrmv_matrix_info *in = &c->info;
    const size_t ts = bsrmv_type_size(in->type);
    const int reps = o->reps >= 50 ? o->reps : 50;
    struct rec *recs = calloc(MAXREC, sizeof *recs);
    int nrec = 0, rc = 0;
    cudaStream_t s = NULL;
    struct bx b = {0};
    void *yh = malloc((size_t)in->rows * ts + 16);
    void *d_rp32 = NULL, *d_ci = NULL, *d_val2 = NULL, *d_csr_rp = NULL, *d_csr_ci = NULL, *d_csr_v = NULL;
    cusparseHandle_t h = NULL;
    if (!recs || !yh) {
        free(recs);
        free(yh);
        fprintf(stderr, "bsrmv: out of host memory\n");
        return 1;
    }
    if (!g_device[0]) {
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
    if (!cuda_ok(cudaStreamCreate(&s), "cudaStreamCreate"))
        goto fail;
    if (bsrmv_gpu_matrix_upload(&b.dA, c->A, 0, s) != BSRMV_SUCCESS) {
        fprintf(stderr, "bsrmv: upload: %s\n", bsrmv_last_error());
        goto fail;
    }
    b.nx = in->cols;
    b.ny = in->rows;
    b.alpha = c->alpha;
    b.beta = c->beta;
    b.s = s;
    if (bsrmv_gpu_malloc(&b.dx, (size_t)in->cols * ts) || bsrmv_gpu_malloc(&b.dy, (size_t)in->rows * ts) ||
        bsrmv_gpu_to_device(b.dx, c->x, (size_t)in->cols * ts)) {
        fprintf(stderr, "bsrmv: %s\n", bsrmv_last_error());
        goto fail;
    }
    const size_t ybytes = (size_t)in->rows * ts;

    /* ---- cuSPARSE paths ---- */
    double best_cs = 0;
    char best_cs_name[64] = "";
    if (with_cusparse) {
        const int64_t *rp;
        const int32_t *ci;
        const void *val;
        bsrmv_matrix_arrays(c->A, &rp, &ci, &val);
        int fits32 = in->nnzb < 2147483647 && in->mb < 2147483647 && in->nb < 2147483647;
        if (!fits32 || cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS) {
            fprintf(stderr, "bsrmv: cuSPARSE skipped (no handle or 64-bit sizes)\n");
        } else {
            cusparseSetStream(h, s);
            int *rp32 = malloc(sizeof(int) * (size_t)(in->mb + 1));
            void *val2 = swap_order(val, in->nnzb, in->bs, ts);
            const size_t vbytes = (size_t)in->nnzb * in->bs * in->bs * ts;
            if (!rp32 || !val2)
                goto fail;
            for (int64_t i = 0; i <= in->mb; i++)
                rp32[i] = (int)rp[i];
            int ok = cuda_ok(cudaMalloc(&d_rp32, sizeof(int) * (size_t)(in->mb + 1)), "cudaMalloc") &&
                     cuda_ok(cudaMalloc(&d_ci, sizeof(int) * (size_t)in->nnzb + 4), "cudaMalloc") &&
                     cuda_ok(cudaMalloc(&d_val2, vbytes + 16), "cudaMalloc") &&
                     cuda_ok(cudaMemcpy(d_rp32, rp32, sizeof(int) * (size_t)(in->mb + 1), cudaMemcpyHostToDevice), "copy") &&
                     cuda_ok(cudaMemcpy(d_ci, ci, sizeof(int) * (size_t)in->nnzb, cudaMemcpyHostToDevice), "copy") &&
                     cuda_ok(cudaMemcpy(d_val2, val2, vbytes, cudaMemcpyHostToDevice), "copy");
            free(rp32);
            free(val2);
            /* the uploaded matrix's own val: upload again through a wrap-free copy */
            void *d_val = NULL;
            if (ok) {
                ok = cuda_ok(cudaMalloc(&d_val, vbytes + 16), "cudaMalloc") &&
                     cuda_ok(cudaMemcpy(d_val, val, vbytes, cudaMemcpyHostToDevice), "copy");
            }
            if (!ok) {
                cudaFree(d_val);
                goto fail;
            }
            const void *v_col = in->order == BSRMV_COL_MAJOR ? d_val : d_val2;
            const void *v_row = in->order == BSRMV_COL_MAJOR ? d_val2 : d_val;
            struct cx cx = {0};
            cx.h = h;
            cx.mb = (int)in->mb;
            cx.nb = (int)in->nb;
            cx.nnzb = (int)in->nnzb;
            cx.bs = in->bs;
            cx.rp = d_rp32;
            cx.ci = d_ci;
            cx.x = b.dx;
            cx.y = b.dy;
            cx.type = in->type;
            cx.alpha = c->alpha;
            cx.beta = c->beta;
            cx.fa = (float)c->alpha;
            cx.fb = (float)c->beta;
            cusparseCreateMatDescr(&cx.descr);
            cx.legacy = 1;
            for (int d = 0; d < 2; d++) {
                cx.dir = d == 0 ? CUSPARSE_DIRECTION_COLUMN : CUSPARSE_DIRECTION_ROW;
                cx.val = d == 0 ? v_col : v_row;
                struct rec *r = &recs[nrec];
                snprintf(r->kernel, sizeof r->kernel, "%sbsrmv_%s", in->type == BSRMV_DOUBLE ? "D" : "S",
                         d == 0 ? "col" : "row");
                r->backend = "cusparse";
                r->rel_err = check_once(c, call_cusparse, &cx, b.dy, yh, ybytes, s);
                if (time_calls(call_cusparse, &cx, reps, s, &r->ms) == 0)
                    nrec++;
            }
            /* cusparseSpMV, BSR_ALG1, both block orders */
            const cudaDataType vt = in->type == BSRMV_DOUBLE ? CUDA_R_64F : CUDA_R_32F;
            cx.legacy = 0;
            cusparseCreateDnVec(&cx.vx, in->cols, b.dx, vt);
            cusparseCreateDnVec(&cx.vy, in->rows, b.dy, vt);
            for (int d = 0; d < 2; d++) {
                void *vv = (void *)(d == 0 ? v_col : v_row);
                if (cusparseCreateBsr(&cx.mat, in->mb, in->nb, in->nnzb, in->bs, in->bs, d_rp32, d_ci, vv,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt,
                                      d == 0 ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW) != CUSPARSE_STATUS_SUCCESS)
                    continue;
                cx.alg = CUSPARSE_SPMV_BSR_ALG1;
                int got = time_spmv(&cx, vt, d == 0 ? "SpMV_BSR_ALG1_col" : "SpMV_BSR_ALG1_row", c,
                                    b.dy, yh, ybytes, reps, s, &recs[nrec]);
                if (got < 0)
                    fprintf(stderr, "bsrmv: cusparseSpMV BSR (%s) not available\n", d == 0 ? "col" : "row");
                nrec += got > 0;
                cusparseDestroySpMat(cx.mat);
            }
            cudaFree(d_val);
            /* scalar CSR expansion, CSR_ALG1 */
            const int64_t nnz = in->nnzb * in->bs * in->bs;
            if (nnz < 2147483647) {
                int *crp = malloc(sizeof(int) * (size_t)(in->rows + 1));
                int *cci = malloc(sizeof(int) * (size_t)nnz);
                char *cv = malloc((size_t)nnz * ts);
                if (crp && cci && cv) {
                    const int bs = in->bs;
                    int64_t pos = 0;
                    crp[0] = 0;
                    for (int64_t bi = 0; bi < in->mb; bi++)
                        for (int i = 0; i < bs; i++) {
                            for (int64_t k = rp[bi]; k < rp[bi + 1]; k++)
                                for (int j = 0; j < bs; j++) {
                                    const size_t src = (size_t)k * bs * bs +
                                                       (in->order == BSRMV_COL_MAJOR ? (size_t)j * bs + i : (size_t)i * bs + j);
                                    cci[pos] = ci[k] * bs + j;
                                    memcpy(cv + pos * ts, (const char *)val + src * ts, ts);
                                    pos++;
                                }
                            crp[bi * bs + i + 1] = (int)pos;
                        }
                    cudaFree(d_val2);
                    d_val2 = NULL;
                    if (cuda_ok(cudaMalloc(&d_csr_rp, sizeof(int) * (size_t)(in->rows + 1)), "cudaMalloc") &&
                        cuda_ok(cudaMalloc(&d_csr_ci, sizeof(int) * (size_t)nnz + 4), "cudaMalloc") &&
                        cuda_ok(cudaMalloc(&d_csr_v, (size_t)nnz * ts + 16), "cudaMalloc") &&
                        cuda_ok(cudaMemcpy(d_csr_rp, crp, sizeof(int) * (size_t)(in->rows + 1), cudaMemcpyHostToDevice), "copy") &&
                        cuda_ok(cudaMemcpy(d_csr_ci, cci, sizeof(int) * (size_t)nnz, cudaMemcpyHostToDevice), "copy") &&
                        cuda_ok(cudaMemcpy(d_csr_v, cv, (size_t)nnz * ts, cudaMemcpyHostToDevice), "copy") &&
                        cusparseCreateCsr(&cx.mat, in->rows, in->cols, nnz, d_csr_rp, d_csr_ci, d_csr_v,
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                          vt) == CUSPARSE_STATUS_SUCCESS) {
                        cx.alg = CUSPARSE_SPMV_CSR_ALG1;
                        nrec += time_spmv(&cx, vt, "SpMV_CSR_ALG1", c, b.dy, yh, ybytes, reps, s,
                                          &recs[nrec]) > 0;
                        cusparseDestroySpMat(cx.mat);
                    }
                }
                free(crp);
                free(cci);
                free(cv);
            }
            cusparseDestroyDnVec(cx.vx);
            cusparseDestroyDnVec(cx.vy);
            cusparseDestroyMatDescr(cx.descr);
        }
        for (int i = 0; i < nrec; i++)
            if (recs[i].ms > 0 && (best_cs == 0 || recs[i].ms < best_cs)) {
                best_cs = recs[i].ms;
                snprintf(best_cs_name, sizeof best_cs_name, "%s", recs[i].kernel);
            }
    }

    /* ---- bsrmv kernels ---- */
    bsrmv_gpu_config cfgs[64];
    int nc = 0;
    bsrmv_gpu_candidates(b.dA, cfgs, 64, &nc);
    if (nc > 64)
        nc = 64;
    double best = 0;
    int best_i = -1;
    for (int i = 0; i <= nc && nrec < MAXREC; i++) {
        struct rec *r = &recs[nrec];
        r->backend = "gpu";
        if (i < nc) {
            if (bsrmv_gpu_matrix_set_config(b.dA, &cfgs[i]) != BSRMV_SUCCESS)
                continue;
            bsrmv_gpu_config_string(&cfgs[i], r->kernel, sizeof r->kernel);
        } else {
            bsrmv_gpu_matrix_set_config(b.dA, NULL);
            bsrmv_gpu_plan_info p;
            bsrmv_gpu_matrix_get_plan(b.dA, &p);
            char cs[80];
            bsrmv_gpu_config_string(&p.config, cs, sizeof cs);
            snprintf(r->kernel, sizeof r->kernel, "auto:%s%s", cs, p.from_tune_table ? "(tuned)" : "");
        }
        r->rel_err = check_once(c, call_bsrmv, &b, b.dy, yh, ybytes, s);
        if (time_calls(call_bsrmv, &b, reps, s, &r->ms) != 0) {
            rc = 1;
            continue;
        }
        if (i < nc && (best == 0 || r->ms < best)) {
            best = r->ms;
            best_i = i;
        }
        nrec++;
    }

    double tol = in->type == BSRMV_FLOAT ? 3.5e-4 : 1.5e-8;
    for (int i = 0; i < nrec; i++) {
        emit(o, c, &recs[i], best_cs);
        if (!(recs[i].rel_err <= tol) && strcmp(recs[i].backend, "gpu") == 0) {
            fprintf(stderr, "bsrmv: %s: wrong result, rel_err %.3g\n", recs[i].kernel, recs[i].rel_err);
            rc = 1;
        }
    }
    if (sum) {
        memset(sum, 0, sizeof *sum);
        snprintf(sum->device, sizeof sum->device, "%s", g_device);
        sum->read_gbps = g_read_gbps;
        if (best_cs > 0) {
            sum->best_cusparse_gbps = c->bytes / (best_cs * 1e6);
            snprintf(sum->best_cusparse, sizeof sum->best_cusparse, "%s", best_cs_name);
        }
        sum->ncand = nc;
        for (int i = 0; i < nrec; i++) {
            if (strcmp(recs[i].backend, "gpu"))
                continue;
            double g = c->bytes / (recs[i].ms * 1e6);
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
    goto done;
fail:
    rc = 1;
done:
    if (h)
        cusparseDestroy(h);
    cudaFree(d_rp32);
    cudaFree(d_ci);
    cudaFree(d_val2);
    cudaFree(d_csr_rp);
    cudaFree(d_csr_ci);
    cudaFree(d_csr_v);
    bsrmv_gpu_free(b.dx);
    bsrmv_gpu_free(b.dy);
    bsrmv_gpu_matrix_destroy(b.dA);
    if (s)
        cudaStreamDestroy(s);
    free(recs);
    free(yh);
    return rc;
}
