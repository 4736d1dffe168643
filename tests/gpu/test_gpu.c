/* GPU backend tests: every kernel x parameter set that applies, every
 * compiled bs and some runtime ones, both orders, both types, alpha and
 * beta in {0, 1, -2.5}, against the long-double reference of testutil; y is
 * poisoned with NaN where beta == 0.  Then the error paths.
 * Exit 77 (skipped) when there is no CUDA device.
 * BSRMV_GPU_TEST_QUICK=1: fewer sizes and scalars (for compute-sanitizer). */
#include "testutil.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXCFG 96 /* candidates tested per matrix */

static int quick;
static long runs, configs;

static void run_case(bsrmv_gpu_matrix *dA, const bsrmv_matrix *A, bsrmv_op op,
                     const bsrmv_gpu_config *cfg, double alpha, double beta, const void *x,
                     void *dx, void *dy, const void *y0, void *y, cudaStream_t s)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const size_t ts = bsrmv_type_size(in.type);
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    (void)x;
    if (beta == 0.0) {
        void *nan = tu_nan_vector(ny, in.type);
        TU_OK(bsrmv_gpu_to_device(dy, nan, ny * ts));
        free(nan);
    } else {
        TU_OK(bsrmv_gpu_to_device(dy, y0, ny * ts));
    }
    bsrmv_status st = bsrmv_gpu_spmv(op, alpha, dA, dx, nx, beta, dy, ny, s);
    char cs[96], what[256];
    bsrmv_gpu_config_string(cfg, cs, sizeof cs);
    snprintf(what, sizeof what, "gpu %s bs=%d %s %s op=%c alpha=%g beta=%g",
             cs, in.bs, in.type == BSRMV_DOUBLE ? "double" : "float",
             in.order == BSRMV_COL_MAJOR ? "col" : "row", op == BSRMV_OP_N ? 'N' : 'T', alpha, beta);
    TU_CHECK(st == BSRMV_SUCCESS, "%s: %s: %s", what, bsrmv_status_string(st), bsrmv_last_error());
    TU_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "%s: kernel failed: %s", what,
             cudaGetErrorString(cudaGetLastError()));
    TU_OK(bsrmv_gpu_to_host(y, dy, ny * ts));
    tu_check_result(what, A, op, alpha, x, beta, y0, y);
    ++runs;
}

/* A's arrays copied to the device by hand and wrapped (the library copies
 * nothing): val `shift` values past a 256-byte cudaMalloc boundary, and
 * with inf_odd every value of the odd block rows +Inf. */
typedef struct {
    void *rp, *ci, *v;
    bsrmv_gpu_matrix *W;
} wrapped;

static wrapped wrap_arrays(const bsrmv_matrix *A, int shift, int inf_odd)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &v));
    const size_t ts = bsrmv_type_size(in.type), b2 = (size_t)in.bs * in.bs;
    const size_t vbytes = (size_t)in.nnzb * b2 * ts;
    char *hv = malloc(vbytes + 1);
    TU_CHECK(hv != NULL, "malloc");
    memcpy(hv, v, vbytes);
    for (int64_t r = 1; inf_odd && r < in.mb; r += 2)
        for (size_t i = (size_t)rp[r] * b2; i < (size_t)rp[r + 1] * b2; ++i) {
            if (in.type == BSRMV_DOUBLE)
                ((double *)hv)[i] = INFINITY;
            else
                ((float *)hv)[i] = INFINITY;
        }
    wrapped w;
    TU_OK(bsrmv_gpu_malloc(&w.rp, (in.mb + 1) * sizeof(int64_t)));
    TU_OK(bsrmv_gpu_malloc(&w.ci, in.nnzb * sizeof(int32_t)));
    TU_OK(bsrmv_gpu_malloc(&w.v, vbytes + shift * ts));
    void *val = (char *)w.v + shift * ts;
    TU_OK(bsrmv_gpu_to_device(w.rp, rp, (in.mb + 1) * sizeof(int64_t)));
    TU_OK(bsrmv_gpu_to_device(w.ci, ci, in.nnzb * sizeof(int32_t)));
    TU_OK(bsrmv_gpu_to_device(val, hv, vbytes));
    free(hv);
    TU_OK(bsrmv_gpu_matrix_wrap(&w.W, in.mb, in.nb, in.bs, in.nnzb, w.rp, w.ci, val, in.type,
                                in.order, 0));
    return w;
}

static void unwrap(wrapped *w)
{
    bsrmv_gpu_matrix_destroy(w->W);
    bsrmv_gpu_free(w->rp);
    bsrmv_gpu_free(w->ci);
    bsrmv_gpu_free(w->v);
}

/* Kernels that read past a block row's ends (the vector stream's first and
 * last units, streams over several rows, balanced units) must zero what
 * they read of the neighbouring rows, not multiply it: with +Inf in every
 * odd block row, the even rows must be the finite results of A itself. */
static void check_inf_neighbours(bsrmv_gpu_matrix *dA, const bsrmv_matrix *A,
                                 const bsrmv_gpu_config *cfg, void *dx, void *dy, cudaStream_t s)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const size_t ts = bsrmv_type_size(in.type);
    wrapped w = wrap_arrays(A, 0, 1);
    char *y[2];
    for (int k = 0; k < 2; ++k) {
        bsrmv_gpu_matrix *m = k ? w.W : dA;
        TU_OK(bsrmv_gpu_matrix_set_config(m, cfg));
        TU_OK(bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, m, dx, in.cols, 0.0, dy, in.rows, s));
        TU_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "kernel failed");
        y[k] = malloc(in.rows * ts);
        TU_OK(bsrmv_gpu_to_host(y[k], dy, in.rows * ts));
    }
    char cs[96];
    bsrmv_gpu_config_string(cfg, cs, sizeof cs);
    for (int64_t i = 0; i < in.rows; ++i) {
        if ((i / in.bs) % 2)
            continue;
        const double a = in.type == BSRMV_DOUBLE ? ((double *)y[0])[i] : ((float *)y[0])[i];
        const double b = in.type == BSRMV_DOUBLE ? ((double *)y[1])[i] : ((float *)y[1])[i];
        TU_CHECK(isfinite(b) && fabs(a - b) <= 1e-5 * (1.0 + fabs(a)),
                 "%s bs=%d: y[%lld] = %g next to +Inf rows, %g without", cs, in.bs, (long long)i, b, a);
    }
    free(y[0]);
    free(y[1]);
    unwrap(&w);
    ++runs;
}

/* A random matrix of shape sh on the host and uploaded, random x and y0 on
 * the host (n = the longer dimension), x copied to dx, dy for results. */
typedef struct {
    bsrmv_matrix *A;
    bsrmv_matrix_info in;
    int64_t n;
    void *x, *y0, *y, *dx, *dy;
    bsrmv_gpu_matrix *dA;
} fixture;

static fixture fixture_make(const tu_shape *sh, bsrmv_type type, bsrmv_order order, uint64_t seed,
                            cudaStream_t s)
{
    fixture f;
    f.A = tu_random_bsr(sh, type, order, seed);
    TU_CHECK(f.A != NULL, "tu_random_bsr");
    TU_OK(bsrmv_matrix_get_info(f.A, &f.in));
    const size_t ts = bsrmv_type_size(type);
    f.n = f.in.rows > f.in.cols ? f.in.rows : f.in.cols;
    f.x = tu_random_vector(f.n, type, seed + 1);
    f.y0 = tu_random_vector(f.n, type, seed + 2);
    f.y = malloc(f.n * ts);
    TU_OK(bsrmv_gpu_malloc(&f.dx, f.n * ts));
    TU_OK(bsrmv_gpu_malloc(&f.dy, f.n * ts));
    TU_OK(bsrmv_gpu_to_device(f.dx, f.x, f.n * ts));
    TU_OK(bsrmv_gpu_matrix_upload(&f.dA, f.A, 0, s));
    return f;
}

static void fixture_free(fixture *f)
{
    bsrmv_gpu_matrix_destroy(f->dA);
    bsrmv_gpu_free(f->dx);
    bsrmv_gpu_free(f->dy);
    free(f->x);
    free(f->y0);
    free(f->y);
    bsrmv_matrix_destroy(f->A);
}

static void test_matrix(int bs, bsrmv_type type, bsrmv_order order, uint64_t seed, cudaStream_t s)
{
    const double all[3] = {0.0, 1.0, -2.5};
    tu_shape sh;
    int64_t target = quick ? 20000 : 120000; /* scalar entries, roughly */
    int64_t mb = target / ((int64_t)bs * bs * 6);
    if (mb < 12)
        mb = 12;
    if (mb > (quick ? 120 : 400))
        mb = quick ? 120 : 400;
    sh.mb = mb;
    sh.nb = mb + 5;
    sh.bs = bs;
    sh.mean_len = 6;
    sh.empty_frac = 0.15;
    sh.long_row = mb / 2;
    sh.long_len = sh.nb; /* a full block row: very long next to the rest */
    fixture f = fixture_make(&sh, type, order, seed, s);
    bsrmv_matrix *A = f.A;
    const bsrmv_matrix_info in = f.in;
    const size_t ts = bsrmv_type_size(type);
    const int64_t n = f.n;
    void *x = f.x, *y0 = f.y0, *y = f.y, *dx = f.dx, *dy = f.dy;
    bsrmv_gpu_matrix *dA = f.dA;

    bsrmv_gpu_config cfgs[MAXCFG];
    int nc = 0;
    TU_OK(bsrmv_gpu_candidates(dA, cfgs, MAXCFG, &nc));
    TU_CHECK(nc > 0 && nc <= MAXCFG, "bs=%d: %d candidates", bs, nc);
    {   /* the flat-stream mode of by_column (param > 0): col-major bs 2..8 only */
        int nflat = 0;
        for (int c = 0; c < nc; ++c)
            nflat += cfgs[c].kernel == BSRMV_GPU_BY_COLUMN && cfgs[c].param > 0;
        const int want = order == BSRMV_COL_MAJOR && bs >= 2 && bs <= 8;
        TU_CHECK(want ? nflat >= 3 : nflat == 0, "bs=%d: %d flat-stream candidates", bs, nflat);
        int nwide = 0; /* wide: bs 2, 4, 8, 12, 16, 24, 32 only */
        for (int c = 0; c < nc; ++c)
            nwide += cfgs[c].kernel == BSRMV_GPU_WIDE;
        const int wwide = bs == 2 || bs == 4 || bs == 8 || bs == 12 || bs == 16 || bs == 24 || bs == 32;
        TU_CHECK(wwide ? nwide >= 2 : nwide == 0, "bs=%d: %d wide candidates", bs, nwide);
        int nvs = 0; /* vector stream: bs 2-6 and 8 */
        for (int c = 0; c < nc; ++c)
            nvs += cfgs[c].kernel == BSRMV_GPU_VEC_STREAM;
        const int wvs = (bs >= 2 && bs <= 6) || bs == 8;
        TU_CHECK(wvs ? nvs >= 1 : nvs == 0, "bs=%d: %d vec_stream candidates", bs, nvs);
        int nlb = 0; /* lane-block: bs 2-8, 4 to 16 lanes a block row */
        for (int c = 0; c < nc; ++c)
            nlb += cfgs[c].kernel == BSRMV_GPU_LANE_BLOCK;
        const int wlb = bs >= 2 && bs <= 8;
        TU_CHECK(wlb ? nlb >= 4 : nlb == 0, "bs=%d: %d lane_block candidates", bs, nlb);
    }
    for (int c = 0; c <= nc; ++c) {
        bsrmv_gpu_config auto_cfg = {BSRMV_GPU_AUTO, 0, 0, 0, 0};
        const bsrmv_gpu_config *cfg = c < nc ? &cfgs[c] : &auto_cfg;
        TU_OK(bsrmv_gpu_matrix_set_config(dA, cfg));
        ++configs;
        for (int ia = 0; ia < 3; ++ia)
            for (int ib = 0; ib < 3; ++ib) {
                if (quick && !((ia == 1 && ib == 0) || (ia == 2 && ib == 2) || (ia == 0 && ib == 2)))
                    continue;
                run_case(dA, A, BSRMV_OP_N, cfg, all[ia], all[ib], x, dx, dy, y0, y, s);
            }
    }
    /* by-column at column-major bs 6 reads several values a lane, and in
     * float their x pair, in one load each */
    const int bycol_pieces = bs == 6 && order == BSRMV_COL_MAJOR;
    /* x one element past a 16-byte boundary: the kernels with vector loads
     * (wide; by-column at column-major float bs 6) must take their one-
     * value-per-load variant */
    for (int c = 0; c < nc; ++c) {
        const int pieces = cfgs[c].kernel == BSRMV_GPU_BY_COLUMN && bycol_pieces;
        if (cfgs[c].kernel != BSRMV_GPU_WIDE && !pieces)
            continue;
        void *dx1;
        TU_OK(bsrmv_gpu_malloc(&dx1, (n + 1) * ts));
        void *xs = (char *)dx1 + ts;
        TU_OK(bsrmv_gpu_to_device(xs, x, n * ts));
        TU_OK(bsrmv_gpu_matrix_set_config(dA, &cfgs[c]));
        run_case(dA, A, BSRMV_OP_N, &cfgs[c], -2.5, 1.0, x, xs, dy, y0, y, s);
        run_case(dA, A, BSRMV_OP_N, &cfgs[c], 1.0, 0.0, x, xs, dy, y0, y, s);
        bsrmv_gpu_free(dx1);
    }
    /* val one value past a 16-byte boundary (wrapped arrays): the vector
     * stream, the lane-block kernel and by-column at column-major bs 6 must
     * take their one-value-per-load variants, staged by-column */
    for (int c = 0; c < nc; ++c) {
        const int pieces = cfgs[c].kernel == BSRMV_GPU_BY_COLUMN && bycol_pieces;
        if (cfgs[c].kernel != BSRMV_GPU_VEC_STREAM && cfgs[c].kernel != BSRMV_GPU_STAGED &&
            cfgs[c].kernel != BSRMV_GPU_LANE_BLOCK && !pieces)
            continue;
        wrapped w = wrap_arrays(A, 1, 0);
        TU_OK(bsrmv_gpu_matrix_set_config(w.W, &cfgs[c]));
        run_case(w.W, A, BSRMV_OP_N, &cfgs[c], -2.5, 1.0, x, dx, dy, y0, y, s);
        run_case(w.W, A, BSRMV_OP_N, &cfgs[c], 1.0, 0.0, x, dx, dy, y0, y, s);
        unwrap(&w);
    }
    if (bs <= 8)
        for (int c = 0; c < nc; ++c)
            check_inf_neighbours(dA, A, &cfgs[c], dx, dy, s);
    /* transpose (one kernel) */
    for (int ia = 1; ia < 3; ++ia)
        for (int ib = 0; ib < 3; ib += 2) {
            bsrmv_gpu_config t = {BSRMV_GPU_TRANSPOSE, 0, 0, 0, 0};
            run_case(dA, A, BSRMV_OP_T, &t, all[ia], all[ib], x, dx, dy, y0, y, s);
        }

    /* the same arrays wrapped (no copy) must give the same results */
    if (bs == 3 || bs == 17 || bs == 33) {
        wrapped w = wrap_arrays(A, 0, 0);
        bsrmv_gpu_plan_info p;
        TU_OK(bsrmv_gpu_matrix_get_plan(w.W, &p));
        TU_CHECK(p.owns_arrays == 0 && p.row_len_max == in.row_len_max && p.empty_rows == in.empty_rows,
                 "plan of a wrapped matrix");
        bsrmv_gpu_config a = {BSRMV_GPU_AUTO, 0, 0, 0, 0};
        run_case(w.W, A, BSRMV_OP_N, &a, -2.5, 1.0, x, dx, dy, y0, y, s);
        run_case(w.W, A, BSRMV_OP_T, &a, 1.0, 0.0, x, dx, dy, y0, y, s);
        unwrap(&w);
    }
    fixture_free(&f);
}

static void test_errors(void)
{
    tu_shape sh = {40, 40, 3, 5, 0.1, -1, 0};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 7);
    bsrmv_gpu_matrix *dA;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    const int64_t n = 120;
    double *hx = calloc(n, sizeof(double)), *hy = calloc(n, sizeof(double));
    void *dx, *dy;
    TU_OK(bsrmv_gpu_malloc(&dx, n * sizeof(double)));
    TU_OK(bsrmv_gpu_malloc(&dy, n * sizeof(double)));
    /* x is read (gather bound, SpMV): defined values, so that initcheck sees none undefined */
    TU_CHECK(cudaMemset(dx, 0, n * sizeof(double)) == cudaSuccess, "cudaMemset");
    /* host pointers where device pointers are required */
    TU_FAILS(bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, hx, n, 0, dy, n, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, dx, n, 0, hy, n, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, NULL, n, 0, dy, n, NULL), BSRMV_ERR_ARGUMENT);
    /* alpha == 0 does not read x: a host x is accepted */
    TU_OK(bsrmv_gpu_spmv(BSRMV_OP_N, 0, dA, hx, n, 0, dy, n, NULL));
    /* lengths */
    TU_FAILS(bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, dx, n - 1, 0, dy, n, NULL), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, dx, n, 0, dy, n + 1, NULL), BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_gpu_spmv((bsrmv_op)7, 1, dA, dx, n, 0, dy, n, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv(BSRMV_OP_N, 1, NULL, dx, n, 0, dy, n, NULL), BSRMV_ERR_ARGUMENT);
    /* wrapping host arrays */
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &v));
    bsrmv_gpu_matrix *dW = (bsrmv_gpu_matrix *)1;
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    TU_FAILS(bsrmv_gpu_matrix_wrap(&dW, in.mb, in.nb, 3, in.nnzb, rp, ci, v, BSRMV_DOUBLE,
                                   BSRMV_COL_MAJOR, 0), BSRMV_ERR_ARGUMENT);
    TU_CHECK(dW == NULL, "handle not cleared");
    TU_FAILS(bsrmv_gpu_matrix_upload(&dW, A, 99, NULL), BSRMV_ERR_ARGUMENT);
    /* device out of memory: an absurd size */
    void *p = (void *)1;
    TU_FAILS(bsrmv_gpu_malloc(&p, (size_t)1 << 50), BSRMV_ERR_DEVICE_NOMEM);
    TU_CHECK(p == NULL, "pointer not cleared");
    /* the benchmark's gather bound: timed, and the same pointer checks */
    double ms = -1;
    TU_OK(bsrmv_gpu_gather_bound(dA, dx, 3, &ms));
    TU_CHECK(ms > 0, "gather bound: %g ms", ms);
    TU_FAILS(bsrmv_gpu_gather_bound(dA, hx, 3, &ms), BSRMV_ERR_ARGUMENT);
    TU_CHECK(ms == 0, "gather bound: time not cleared after a failure");
    TU_FAILS(bsrmv_gpu_gather_bound(NULL, dx, 3, &ms), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_gather_bound(dA, dx, 0, &ms), BSRMV_ERR_ARGUMENT);
    /* the benchmark's stall: bounds, and it holds the stream that long */
    TU_FAILS(bsrmv_gpu_stall(0, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_stall(-1, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_stall(NAN, NULL), BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_stall(2e6, NULL), BSRMV_ERR_ARGUMENT);
    cudaEvent_t e0, e1;
    TU_CHECK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess, "events");
    cudaEventRecord(e0, NULL);
    TU_OK(bsrmv_gpu_stall(2000, NULL));
    cudaEventRecord(e1, NULL);
    float held = 0;
    TU_CHECK(cudaEventSynchronize(e1) == cudaSuccess && cudaEventElapsedTime(&held, e0, e1) == cudaSuccess,
             "stall: events");
    TU_CHECK(held >= 1.99f && held < 50.0f, "a 2 ms stall held the stream %g ms", held);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    /* the library still works after the failures */
    TU_OK(bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, dx, n, 0, dy, n, NULL));
    TU_CHECK(cudaDeviceSynchronize() == cudaSuccess, "device broken after the error paths");
    /* kernels that are not built for this bs */
    bsrmv_gpu_config bad = {BSRMV_GPU_BY_BLOCK, 32, 1, 128, 0};
    bsrmv_gpu_matrix *d8;
    tu_shape s8 = {20, 20, 8, 4, 0, -1, 0};
    bsrmv_matrix *A8 = tu_random_bsr(&s8, BSRMV_FLOAT, BSRMV_ROW_MAJOR, 9);
    TU_OK(bsrmv_gpu_matrix_upload(&d8, A8, 0, NULL));
    TU_FAILS(bsrmv_gpu_matrix_set_config(d8, &bad), BSRMV_ERR_UNSUPPORTED);
    TU_OK(bsrmv_gpu_gather_bound(d8, dx, 3, &ms)); /* float, row-major; dx holds 160 floats */
    TU_CHECK(ms > 0, "gather bound (float, row-major): %g ms", ms);
    /* tune table: a line for float row bs 8 is taken by the next plan */
    const char *path = "bsrmv_test_tune.txt";
    FILE *f = fopen(path, "w");
    TU_CHECK(f != NULL, "cannot write %s", path);
    fprintf(f, "# test\nfloat row 8 k2_medium 4 1 0 2\n");
    fclose(f);
    TU_OK(bsrmv_gpu_load_tune_file(path));
    bsrmv_gpu_matrix_destroy(d8);
    TU_OK(bsrmv_gpu_matrix_upload(&d8, A8, 0, NULL));
    bsrmv_gpu_plan_info pi;
    TU_OK(bsrmv_gpu_matrix_get_plan(d8, &pi));
    TU_CHECK(pi.from_tune_table == 1 && pi.config.kernel == BSRMV_GPU_K2_MEDIUM, "tune table not used");
    f = fopen(path, "w");
    fprintf(f, "float row eight k2_medium\n");
    fclose(f);
    TU_FAILS(bsrmv_gpu_load_tune_file(path), BSRMV_ERR_FORMAT);
    TU_FAILS(bsrmv_gpu_load_tune_file("/nonexistent/tune.txt"), BSRMV_ERR_IO);
    remove(path);
    bsrmv_gpu_matrix_destroy(d8);
    bsrmv_matrix_destroy(A8);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    free(hx);
    free(hy);
    bsrmv_matrix_destroy(A);
}

/* The measured choice: every candidate timed on the matrix, the fastest
 * kept (from_tune_table 2) and still correct, for regular and irregular
 * rows; its arguments checked. */
static void test_measured_choice(cudaStream_t s)
{
    const tu_shape shapes[2] = {{3000, 3000, 3, 12, 0.0, -1, 0}, {6000, 6000, 2, 4, 0.05, 17, 3000}};
    for (int i = 0; i < 2; ++i) {
        fixture f = fixture_make(&shapes[i], i ? BSRMV_DOUBLE : BSRMV_FLOAT, BSRMV_COL_MAJOR, 77 + i, s);
        double ms = -1;
        TU_OK(bsrmv_gpu_matrix_tune(f.dA, 0, 3, s, &ms));
        bsrmv_gpu_plan_info pi;
        TU_OK(bsrmv_gpu_matrix_get_plan(f.dA, &pi));
        TU_CHECK(pi.from_tune_table == 2 && ms > 0, "measured choice: from_tune_table %d, %g ms",
                 pi.from_tune_table, ms);
        for (int k = 0; k < 2; ++k)
            run_case(f.dA, f.A, BSRMV_OP_N, &pi.config, k ? -2.5 : 1.0, k ? 0.5 : 0.0, f.x, f.dx, f.dy, f.y0,
                     f.y, s);
        /* back to the table's choice, then a measured choice among two */
        TU_OK(bsrmv_gpu_matrix_set_config(f.dA, NULL));
        TU_OK(bsrmv_gpu_matrix_get_plan(f.dA, &pi));
        TU_CHECK(pi.from_tune_table == 0, "the table's choice again");
        TU_OK(bsrmv_gpu_matrix_tune(f.dA, 1, 0, s, NULL));
        TU_OK(bsrmv_gpu_matrix_get_plan(f.dA, &pi));
        TU_CHECK(pi.from_tune_table == 2, "measured choice among two");
        run_case(f.dA, f.A, BSRMV_OP_N, &pi.config, 1.0, 0.0, f.x, f.dx, f.dy, f.y0, f.y, s);
        TU_FAILS(bsrmv_gpu_matrix_tune(NULL, 0, 0, s, NULL), BSRMV_ERR_ARGUMENT);
        TU_FAILS(bsrmv_gpu_matrix_tune(f.dA, -1, 0, s, NULL), BSRMV_ERR_ARGUMENT);
        fixture_free(&f);
    }
}

/* The staged kernel sizes its buffers by the longest row, so the matrices
 * above (a full block row) leave it out.  Here: rows of 0-4 blocks (mean
 * 2, 15% empty) and one of 12 (the last: it reaches the arrays' ends), on
 * 30000 values per SM (12000 under racecheck): every thread block of the
 * rule's configurations runs more stages than it has buffers, so buffers
 * are refilled and every mbarrier goes through both phase parities.
 * staged_tails counts the matrices whose val or col_idx bytes end inside
 * a 16-byte piece (the tails the threads copy). */
static int staged_tails;

static void test_staged(int bs, bsrmv_type type, bsrmv_order order, uint64_t seed, cudaStream_t s)
{
    int dev = 0, major = 0, sms = 0;
    TU_CHECK(cudaGetDevice(&dev) == cudaSuccess, "cudaGetDevice");
    TU_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
                 cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess,
             "cudaDeviceGetAttribute");
    tu_shape sh;
    sh.mb = (int64_t)sms * (quick == 2 ? 12000 : 30000) / (2 * (int64_t)bs * bs) + 3;
    sh.nb = sh.mb - 3;
    sh.bs = bs;
    sh.mean_len = 2;
    sh.empty_frac = 0.15;
    sh.long_row = sh.mb - 1;
    sh.long_len = 12;
    fixture f = fixture_make(&sh, type, order, seed, s);
    bsrmv_matrix *A = f.A;
    const size_t ts = bsrmv_type_size(type);
    staged_tails += ((size_t)f.in.nnzb * bs * bs * ts) % 16 != 0 || ((size_t)f.in.nnzb * 4) % 16 != 0;
    void *x = f.x, *y0 = f.y0, *y = f.y, *dx = f.dx, *dy = f.dy;
    bsrmv_gpu_matrix *dA = f.dA;
    bsrmv_gpu_config cfgs[MAXCFG];
    int nc = 0, ns = 0;
    TU_OK(bsrmv_gpu_candidates(dA, cfgs, MAXCFG, &nc));
    TU_CHECK(nc <= MAXCFG, "bs=%d: %d candidates", bs, nc);
    for (int c = 0; c < nc; ++c) {
        if (cfgs[c].kernel != BSRMV_GPU_STAGED)
            continue;
        ++ns;
        /* racecheck (slow on shared memory): one configuration per kernel
         * structure, 3 buffers with the gather one stage ahead (g2) and 4
         * with it two ahead (rows 2) */
        if (quick == 2 && cfgs[c].group != 2 && cfgs[c].rows != 2)
            continue;
        TU_OK(bsrmv_gpu_matrix_set_config(dA, &cfgs[c]));
        ++configs;
        run_case(dA, A, BSRMV_OP_N, &cfgs[c], 1.0, 0.0, x, dx, dy, y0, y, s);
        run_case(dA, A, BSRMV_OP_N, &cfgs[c], -2.5, 1.0, x, dx, dy, y0, y, s);
        if (!quick)
            run_case(dA, A, BSRMV_OP_N, &cfgs[c], 1.0, 1.0, x, dx, dy, y0, y, s);
        check_inf_neighbours(dA, A, &cfgs[c], dx, dy, s);
    }
    TU_CHECK(major >= 9 ? ns >= 1 : ns == 0, "bs=%d: %d staged candidates on sm_%d", bs, ns, major);
    fixture_free(&f);
}

/* A 32-bit row_ptr is widened on upload: the same plan and, bit for bit,
 * the same result as the 64-bit matrix, within the reference's bound. */
static void test_int32_upload(cudaStream_t s)
{
    tu_shape sh = {300, 280, 3, 6.0, 0.1, 5, 200};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 11);
    bsrmv_matrix *N = tu_narrow(A);
    bsrmv_gpu_matrix *dA, *dN;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, s));
    TU_OK(bsrmv_gpu_matrix_upload(&dN, N, 0, s));
    bsrmv_gpu_plan_info pa, pn;
    TU_OK(bsrmv_gpu_matrix_get_plan(dA, &pa));
    TU_OK(bsrmv_gpu_matrix_get_plan(dN, &pn));
    TU_CHECK(pa.config.kernel == pn.config.kernel && pa.device_bytes == pn.device_bytes &&
                 pa.row_len_max == pn.row_len_max,
             "the int32 matrix got another plan");
    const int64_t nx = 280 * 3, ny = 300 * 3;
    double *x = tu_random_vector(nx, BSRMV_DOUBLE, 12), *y0 = tu_random_vector(ny, BSRMV_DOUBLE, 13);
    double *ya = malloc(ny * sizeof *ya), *yn = malloc(ny * sizeof *yn);
    void *dx, *dy;
    TU_OK(bsrmv_gpu_malloc(&dx, nx * sizeof(double)));
    TU_OK(bsrmv_gpu_malloc(&dy, ny * sizeof(double)));
    TU_OK(bsrmv_gpu_to_device(dx, x, nx * sizeof(double)));
    TU_OK(bsrmv_gpu_to_device(dy, y0, ny * sizeof(double)));
    TU_OK(bsrmv_gpu_spmv(BSRMV_OP_N, -2.5, dA, dx, nx, 1.0, dy, ny, s));
    TU_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync");
    TU_OK(bsrmv_gpu_to_host(ya, dy, ny * sizeof(double)));
    TU_OK(bsrmv_gpu_to_device(dy, y0, ny * sizeof(double)));
    TU_OK(bsrmv_gpu_spmv(BSRMV_OP_N, -2.5, dN, dx, nx, 1.0, dy, ny, s));
    TU_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync");
    TU_OK(bsrmv_gpu_to_host(yn, dy, ny * sizeof(double)));
    TU_CHECK(memcmp(ya, yn, ny * sizeof(double)) == 0, "int32 and int64 uploads differ");
    tu_check_result("gpu int32 row_ptr", N, BSRMV_OP_N, -2.5, x, 1.0, y0, yn);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    free(x);
    free(y0);
    free(ya);
    free(yn);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_gpu_matrix_destroy(dN);
    bsrmv_matrix_destroy(A);
    bsrmv_matrix_destroy(N);
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    quick = tu_gpu_quick();
    if (quick)
        printf("quick mode\n");
    cudaStream_t s;
    TU_CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");

    test_errors();
    printf("error paths: ok\n");
    test_measured_choice(s);
    printf("measured choice: ok\n");
    test_int32_upload(s);
    printf("int32 row_ptr upload: ok\n");

    static const int full[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 9, 10, 17, 20, 33, 48, 64, 100, 150};
    static const int small[] = {1, 2, 3, 5, 8, 12, 32, 9, 33};
    static const int tiny[] = {2, 8, 16, 33}; /* BSRMV_GPU_TEST_QUICK=2 (racecheck) */
    const int *list = quick == 2 ? tiny : quick ? small : full;
    const int nl = quick == 2 ? 4 : quick ? (int)(sizeof small / sizeof *small) : (int)(sizeof full / sizeof *full);
    uint64_t seed = 1000;
    for (int i = 0; i < nl; ++i) {
        for (int t = 0; t < 2; ++t)
            for (int o = 0; o < 2; ++o)
                test_matrix(list[i], t ? BSRMV_DOUBLE : BSRMV_FLOAT, o ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR,
                            seed++, s);
        printf("bs=%d: ok (%ld runs so far)\n", list[i], runs);
        fflush(stdout);
    }
    /* bs 2 and the rule's float sizes 3, 7, 12 first: the quick runs (the
     * sanitizers') take 2 or 4 of them; bs 6 runs in
     * the full test */
    static const int staged[] = {2, 3, 7, 12, 4, 5, 6, 8};
    for (int i = 0; i < (quick == 2 ? 2 : quick ? 4 : 8); ++i)
        for (int t = 0; t < 2; ++t)
            for (int o = 0; o < 2; ++o)
                test_staged(staged[i], t ? BSRMV_DOUBLE : BSRMV_FLOAT, o ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR,
                            seed++, s);
    TU_CHECK(staged_tails > 0, "no staged test matrix with array tails");
    printf("staged: ok (%ld runs so far, %d matrices with tails)\n", runs, staged_tails);
    cudaStreamDestroy(s);
    printf("gpu: %ld SpMV runs over %ld kernel configurations: all correct\n", runs, configs);
    return 0;
}
