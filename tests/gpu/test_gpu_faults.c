/* GPU failure modes: device memory exhausted during upload, plan and
 * kernel changes (the card filled first), host memory passed as device
 * memory, x and y overlapping, NaN/Inf in val.  Each failure must be a
 * clear status with a message, leave no CUDA error behind
 * (cudaGetLastError and a synchronize stay clean), and a normal upload and
 * SpMV must work right after it.  Exit 77 (skipped) without a device.
 * BSRMV_GPU_FAULTS_NO_OOM=1 skips the memory-exhaustion part (under
 * compute-sanitizer, whose own allocations move the limits). */
#include "testutil.h"

#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#define CUDA_OK(call)                                                              \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        TU_CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));      \
    } while (0)

static int failures_checked;

/* After a failed call: the status and message it should have, no CUDA
 * error left for the caller, and the device still does a correct SpMV. */
static void healthy(const bsrmv_matrix *A);

static void failed_cleanly(const char *what, bsrmv_status got, bsrmv_status want,
                           const bsrmv_matrix *A)
{
    TU_CHECK(got == want, "%s: got %s, wanted %s (%s)", what, bsrmv_status_string(got),
             bsrmv_status_string(want), bsrmv_last_error());
    TU_CHECK(bsrmv_last_error()[0], "%s: no message", what);
    cudaError_t e = cudaGetLastError();
    TU_CHECK(e == cudaSuccess, "%s: left %s behind", what, cudaGetErrorString(e));
    e = cudaDeviceSynchronize();
    TU_CHECK(e == cudaSuccess, "%s: synchronize after it: %s", what, cudaGetErrorString(e));
    healthy(A);
    failures_checked++;
}

/* Upload, SpMV both ops against the host reference, destroy. */
static void healthy(const bsrmv_matrix *A)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const size_t vs = bsrmv_type_size(in.type);
    bsrmv_gpu_matrix *dA = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    for (int op = 0; op < 2; op++) {
        const int64_t nx = op ? in.rows : in.cols, ny = op ? in.cols : in.rows;
        void *x = tu_random_vector(nx, in.type, 3), *y0 = tu_random_vector(ny, in.type, 4);
        void *y = malloc((size_t)ny * vs), *dx, *dy;
        TU_OK(bsrmv_gpu_malloc(&dx, (size_t)nx * vs));
        TU_OK(bsrmv_gpu_malloc(&dy, (size_t)ny * vs));
        TU_OK(bsrmv_gpu_to_device(dx, x, (size_t)nx * vs));
        TU_OK(bsrmv_gpu_to_device(dy, y0, (size_t)ny * vs));
        TU_OK(bsrmv_gpu_spmv((bsrmv_op)op, 1.25, dA, dx, nx, -0.5, dy, ny, NULL));
        TU_OK(bsrmv_gpu_to_host(y, dy, (size_t)ny * vs));
        tu_check_result("healthy after a failure", A, (bsrmv_op)op, 1.25, x, -0.5, y0, y);
        bsrmv_gpu_free(dx);
        bsrmv_gpu_free(dy);
        free(x);
        free(y0);
        free(y);
    }
    bsrmv_gpu_matrix_destroy(dA);
    CUDA_OK(cudaGetLastError());
}

/* Fills the card until `leave` bytes are free (in 64 MiB pieces, then
 * smaller); returns the pieces to give back with release(). */
typedef struct hog {
    void *p[4096];
    int n;
} hog;

static void fill_card(hog *h, size_t leave)
{
    h->n = 0;
    size_t piece = (size_t)64 << 20;
    while (piece >= ((size_t)64 << 10) && h->n < 4096) {
        size_t free_b, total;
        CUDA_OK(cudaMemGetInfo(&free_b, &total));
        if (free_b <= leave)
            break;
        size_t want = free_b - leave < piece ? free_b - leave : piece;
        if (want < ((size_t)64 << 10))
            break;
        if (cudaMalloc(&h->p[h->n], want) == cudaSuccess)
            h->n++;
        else {
            cudaGetLastError();
            piece /= 2;
        }
    }
}

static void release(hog *h)
{
    for (int i = 0; i < h->n; i++)
        CUDA_OK(cudaFree(h->p[i]));
    h->n = 0;
}

/* Upload (arrays, then the plan) with less and less room left: every
 * attempt either succeeds or says BSRMV_ERR_DEVICE_NOMEM. */
static void test_out_of_memory(const bsrmv_matrix *A)
{
    static hog h;
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const size_t need = (size_t)(bsrmv_matrix_spmv_bytes(A));
    int nomem = 0, ok = 0;
    for (int step = 0; step <= 16; step++) {
        size_t leave = need * (size_t)step / 8; /* 0 .. 2x the matrix */
        fill_card(&h, leave);
        bsrmv_gpu_matrix *dA = (bsrmv_gpu_matrix *)&h;
        bsrmv_status s = bsrmv_gpu_matrix_upload(&dA, A, 0, NULL);
        if (s == BSRMV_SUCCESS) {
            ok++;
            /* Kernel changes that build plan data, with the card still full. */
            bsrmv_gpu_config cfgs[64];
            int n = 0;
            TU_OK(bsrmv_gpu_candidates(dA, cfgs, 64, &n));
            for (int i = 0; i < n; i++) {
                bsrmv_status c = bsrmv_gpu_matrix_set_config(dA, &cfgs[i]);
                TU_CHECK(c == BSRMV_SUCCESS || c == BSRMV_ERR_DEVICE_NOMEM,
                         "set_config under full memory: %s (%s)", bsrmv_status_string(c),
                         bsrmv_last_error());
                TU_CHECK(cudaGetLastError() == cudaSuccess, "set_config left an error");
            }
            bsrmv_gpu_matrix_destroy(dA);
            release(&h);
            CUDA_OK(cudaGetLastError());
            healthy(A);
        } else {
            nomem++;
            TU_CHECK(dA == NULL, "handle set on failure");
            release(&h);
            failed_cleanly("upload into a full card", s, BSRMV_ERR_DEVICE_NOMEM, A);
        }
    }
    TU_CHECK(nomem > 0, "the card was never too full (need %zu bytes)", need);
    TU_CHECK(ok > 0, "no upload fit even with twice the room");
    printf("device out of memory: %d uploads refused, %d fit, all clean\n", nomem, ok);

    /* Vectors the caller cannot allocate: the helper says so too. */
    void *p = NULL;
    failed_cleanly("bsrmv_gpu_malloc(1 PB)", bsrmv_gpu_malloc(&p, (size_t)1 << 50),
                   BSRMV_ERR_DEVICE_NOMEM, A);
    TU_CHECK(p == NULL, "pointer set on failure");
}

/* Host memory where device memory belongs: an argument error. */
static void test_host_pointers(const bsrmv_matrix *A)
{
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &v));
    TU_OK(bsrmv_matrix_get_info(A, &in));
    bsrmv_gpu_matrix *dA = NULL;
    failed_cleanly("wrap of host arrays",
                   bsrmv_gpu_matrix_wrap(&dA, in.mb, in.nb, in.bs, in.nnzb, rp, ci, v, in.type,
                                         in.order, 0),
                   BSRMV_ERR_ARGUMENT, A);
    TU_CHECK(dA == NULL, "handle set on failure");

    /* Pinned host memory is not device memory either. */
    const size_t vs = bsrmv_type_size(in.type);
    void *pinned;
    CUDA_OK(cudaMallocHost(&pinned, (size_t)in.nnzb * (size_t)(in.bs * in.bs) * vs + 64));
    void *d_rp, *d_ci;
    TU_OK(bsrmv_gpu_malloc(&d_rp, (size_t)(in.mb + 1) * sizeof *rp));
    TU_OK(bsrmv_gpu_malloc(&d_ci, (size_t)in.nnzb * sizeof *ci));
    TU_OK(bsrmv_gpu_to_device(d_rp, rp, (size_t)(in.mb + 1) * sizeof *rp));
    TU_OK(bsrmv_gpu_to_device(d_ci, ci, (size_t)in.nnzb * sizeof *ci));
    failed_cleanly("wrap with pinned host values",
                   bsrmv_gpu_matrix_wrap(&dA, in.mb, in.nb, in.bs, in.nnzb, d_rp, d_ci, pinned,
                                         in.type, in.order, 0),
                   BSRMV_ERR_ARGUMENT, A);

    /* Host x or y for a device SpMV. */
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    void *hx = calloc((size_t)in.cols, vs), *hy = calloc((size_t)in.rows, vs), *dx, *dy;
    TU_OK(bsrmv_gpu_malloc(&dx, (size_t)in.cols * vs));
    TU_OK(bsrmv_gpu_malloc(&dy, (size_t)in.rows * vs));
    failed_cleanly("spmv with host x",
                   bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, hx, in.cols, 0, dy, in.rows, NULL),
                   BSRMV_ERR_ARGUMENT, A);
    failed_cleanly("spmv with host y",
                   bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, dx, in.cols, 0, hy, in.rows, NULL),
                   BSRMV_ERR_ARGUMENT, A);
    /* x and y overlapping in device memory (square A). */
    if (in.rows == in.cols)
        failed_cleanly("spmv with y on top of x",
                       bsrmv_gpu_spmv(BSRMV_OP_N, 1, dA, dx, in.cols, 0.5, (char *)dx + vs,
                                      in.rows, NULL),
                       BSRMV_ERR_ARGUMENT, A);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    bsrmv_gpu_free(d_rp);
    bsrmv_gpu_free(d_ci);
    CUDA_OK(cudaFreeHost(pinned));
    free(hx);
    free(hy);
    printf("host pointers and overlap: refused, all clean\n");
}

/* NaN and Inf in val propagate to the rows they touch, exactly as on the
 * host, with every kernel that applies. */
static void test_nonfinite_values(bsrmv_type type)
{
    tu_shape sh = {400, 400, 3, 5.0, 0.05, 17, 200};
    bsrmv_matrix *A = tu_random_bsr(&sh, type, BSRMV_COL_MAJOR, 77);
    const int64_t *rp;
    const int32_t *ci;
    const void *cv;
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_arrays(A, &rp, &ci, &cv));
    TU_OK(bsrmv_matrix_get_info(A, &in));
    void *v = (void *)cv; /* the test owns A */
    const int64_t nval = in.nnzb * in.bs * in.bs;
    for (int64_t k = 0; k < nval; k += 97) {
        double bad = k % 3 == 0 ? NAN : k % 3 == 1 ? INFINITY : -INFINITY;
        if (type == BSRMV_DOUBLE)
            ((double *)v)[k] = bad;
        else
            ((float *)v)[k] = (float)bad;
    }
    const size_t vs = bsrmv_type_size(type);
    bsrmv_gpu_matrix *dA = NULL;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    bsrmv_gpu_config cfgs[64];
    int n = 0;
    TU_OK(bsrmv_gpu_candidates(dA, cfgs, 64, &n));
    const int64_t len = in.rows;
    void *x = tu_random_vector(len, type, 8), *y0 = tu_random_vector(len, type, 9);
    void *want = malloc((size_t)len * vs), *got = malloc((size_t)len * vs), *dx, *dy;
    memcpy(want, y0, (size_t)len * vs);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, A, x, len, 1.0, want, len));
    TU_OK(bsrmv_gpu_malloc(&dx, (size_t)len * vs));
    TU_OK(bsrmv_gpu_malloc(&dy, (size_t)len * vs));
    TU_OK(bsrmv_gpu_to_device(dx, x, (size_t)len * vs));
    int nonfinite = 0;
    for (int i = -1; i < n; i++) {
        if (i >= 0 && cfgs[i].kernel == BSRMV_GPU_TRANSPOSE)
            continue;
        TU_OK(bsrmv_gpu_matrix_set_config(dA, i < 0 ? NULL : &cfgs[i]));
        TU_OK(bsrmv_gpu_to_device(dy, y0, (size_t)len * vs));
        TU_OK(bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, dA, dx, len, 1.0, dy, len, NULL));
        TU_OK(bsrmv_gpu_to_host(got, dy, (size_t)len * vs));
        CUDA_OK(cudaGetLastError());
        for (int64_t r = 0; r < len; r++) {
            double a = tu_get(want, type, r), b = tu_get(got, type, r);
            if (isfinite(a)) {
                TU_CHECK(isfinite(b), "row %lld: host %g, device %g (config %d)", (long long)r,
                         a, b, i);
                continue;
            }
            nonfinite += i < 0;
            /* NaN stays NaN; an infinity keeps its sign unless the row also
             * met the opposite one or a NaN (then NaN on both). */
            TU_CHECK((isnan(a) && isnan(b)) || a == b, "row %lld: host %g, device %g (config %d)",
                     (long long)r, a, b, i);
        }
    }
    TU_CHECK(nonfinite > 0, "no row met a non-finite value");
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    bsrmv_gpu_matrix_destroy(dA);
    free(x);
    free(y0);
    free(want);
    free(got);
    bsrmv_matrix_destroy(A);
    printf("NaN/Inf in val (%s): %d non-finite rows as on the host, %d kernels\n",
           type == BSRMV_DOUBLE ? "double" : "float", nonfinite, n + 1);
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    tu_shape sh = {6000, 6000, 4, 8.0, 0.02, 5, 3000};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 1);
    healthy(A);
    const char *skip = getenv("BSRMV_GPU_FAULTS_NO_OOM");
    if (skip && *skip && *skip != '0')
        printf("device out of memory: skipped (BSRMV_GPU_FAULTS_NO_OOM)\n");
    else
        test_out_of_memory(A);
    test_host_pointers(A);
    test_nonfinite_values(BSRMV_DOUBLE);
    test_nonfinite_values(BSRMV_FLOAT);
    bsrmv_matrix_destroy(A);
    printf("test_gpu_faults: %d failures checked, no CUDA error left behind\n",
           failures_checked);
    return 0;
}
