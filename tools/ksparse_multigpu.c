/* bsrmv_ksparse_multigpu: the KSPARSE paper's multi-GPU SpMV (section
 * 5.6) as a baseline for the distributed one: one process, G GPUs, block
 * rows dealt to the GPUs in contiguous ranges balanced by stored blocks
 * (the paper's balanced variant; a contiguous deal needs no shuffle), x
 * replicated on every GPU, each GPU's rows of y copied into GPU 0's y.
 *
 *   bsrmv_ksparse_multigpu (--grid N|NX,NY,NZ | --powerlaw MB,MEAN,MAX) --bs B
 *                          --gpus G [--reps R] [--type float]
 *
 * Timed: the products and the gather (the paper's measure), and the same
 * with x broadcast from GPU 0 first (what an iterative solver would pay).
 * Host wall time after every GPU is synchronised, median of R, one JSON
 * line per measure. */
#include "args.h"
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"
#include "bsrmv_mpi.h"
#include "json.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_GPUS 16

static void die(bsrmv_status st, const char *what)
{
    if (st == BSRMV_SUCCESS)
        return;
    fprintf(stderr, "bsrmv_ksparse_multigpu: %s: %s: %s\n", what, bsrmv_status_string(st),
            bsrmv_last_error());
    exit(1);
}

static void cuda(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return;
    fprintf(stderr, "bsrmv_ksparse_multigpu: %s: %s\n", what, cudaGetErrorString(e));
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct gpu_part {
    bsrmv_gpu_matrix *dA;
    void *x, *y; /* full x; this GPU's rows of y (GPU 0: the whole y) */
    int64_t r0, rows;
    cudaStream_t s;
    cudaEvent_t done;
} gpu_part;

static int ngpu;
static gpu_part part[MAX_GPUS];
static int64_t nx_all;
static size_t vs;

static void spmv(int broadcast)
{
    if (broadcast) { /* x from GPU 0 to the others, on their streams */
        cuda(cudaSetDevice(0), "cudaSetDevice");
        cuda(cudaEventRecord(part[0].done, part[0].s), "event");
        for (int g = 1; g < ngpu; g++) {
            cuda(cudaSetDevice(g), "cudaSetDevice");
            cuda(cudaStreamWaitEvent(part[g].s, part[0].done, 0), "wait");
            cuda(cudaMemcpyPeerAsync(part[g].x, g, part[0].x, 0, (size_t)nx_all * vs, part[g].s),
                 "broadcasting x");
        }
    }
    for (int g = 0; g < ngpu; g++) {
        cuda(cudaSetDevice(g), "cudaSetDevice");
        void *y = g == 0 ? part[0].y : part[g].y;
        die(bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, part[g].dA, part[g].x, nx_all, 0.0, y,
                           part[g].rows, part[g].s),
            "SpMV");
        if (g > 0) /* the local result into its place in GPU 0's y */
            cuda(cudaMemcpyPeerAsync((char *)part[0].y + (size_t)part[g].r0 * vs, 0, part[g].y,
                                     g, (size_t)part[g].rows * vs, part[g].s),
                 "gathering y");
        cuda(cudaEventRecord(part[g].done, part[g].s), "event");
    }
    cuda(cudaSetDevice(0), "cudaSetDevice");
    for (int g = 1; g < ngpu; g++)
        cuda(cudaStreamWaitEvent(part[0].s, part[g].done, 0), "wait");
    cuda(cudaStreamSynchronize(part[0].s), "synchronising");
}

int main(int argc, char **argv)
{
    args_init("bsrmv_ksparse_multigpu", "bsrmv_ksparse_multigpu (--grid N|NX,NY,NZ | --powerlaw MB,MEAN,MAX) "
                                        "--bs B --gpus G [--reps R] [--type float]");
    int64_t grid[3] = {0}, pl[3] = {0};
    int bs = 3, reps = 30;
    bsrmv_type type = BSRMV_DOUBLE;
    ngpu = 1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = args_value(argc, argv, &i, "--grid"))) {
            if (sscanf(v, "%ld,%ld,%ld", &grid[0], &grid[1], &grid[2]) != 3)
                grid[0] = grid[1] = grid[2] = args_integer("--grid", v, 1, 1 << 20);
        } else if ((v = args_value(argc, argv, &i, "--powerlaw"))) {
            if (sscanf(v, "%ld,%ld,%ld", &pl[0], &pl[1], &pl[2]) != 3)
                args_fail("--powerlaw: expected MB,MEAN,MAX, got '%s'", v);
        } else if ((v = args_value(argc, argv, &i, "--bs")))
            bs = (int)args_integer("--bs", v, 1, 1024);
        else if ((v = args_value(argc, argv, &i, "--gpus")))
            ngpu = (int)args_integer("--gpus", v, 1, MAX_GPUS);
        else if ((v = args_value(argc, argv, &i, "--reps")))
            reps = (int)args_integer("--reps", v, 1, 100000);
        else if ((v = args_value(argc, argv, &i, "--type")))
            type = strcmp(v, "float") ? BSRMV_DOUBLE : BSRMV_FLOAT;
        else
            args_fail("unknown option '%s'", argv[i]);
    }
    if (!grid[0] && !pl[0])
        args_fail("give a matrix: --grid or --powerlaw");
    int have = 0;
    die(bsrmv_gpu_device_count(&have), "counting GPUs");
    if (have < ngpu) {
        fprintf(stderr, "bsrmv_ksparse_multigpu: %d GPUs asked, %d present\n", ngpu, have);
        return 1;
    }
    vs = bsrmv_type_size(type);
    bsrmv_matrix *A;
    char name[128];
    if (grid[0]) {
        snprintf(name, sizeof name, "grid27_%ldx%ldx%ld", grid[0], grid[1], grid[2]);
        die(bsrmv_generate_grid(&A, grid[0], grid[1], grid[2], bs, 27, 1, type,
                                BSRMV_COL_MAJOR),
            "generating");
    } else {
        snprintf(name, sizeof name, "powerlaw_%ld_%ld_%ld", pl[0], pl[1], pl[2]);
        die(bsrmv_generate_powerlaw(&A, pl[0], pl[0], bs, (double)pl[1], 2.0, pl[2], 1, type,
                                    BSRMV_COL_MAJOR),
            "generating");
    }
    bsrmv_matrix_info in;
    die(bsrmv_matrix_get_info(A, &in), "info");
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    die(bsrmv_matrix_arrays(A, &rp, &ci, &val), "arrays");
    int64_t starts[MAX_GPUS + 1];
    die(bsrmv_dist_partition(rp, in.mb, ngpu, starts), "partition");
    nx_all = in.cols;
    const size_t blk = (size_t)bs * bs * vs;
    void *hx = malloc((size_t)nx_all * vs);
    if (!hx)
        die(BSRMV_ERR_NOMEM, "x");
    die(bsrmv_fill_random(hx, nx_all, type, 7), "x");
    for (int g = 0; g < ngpu; g++) {
        gpu_part *p = &part[g];
        const int64_t a = starts[g], b = starts[g + 1];
        int64_t *lrp = malloc((size_t)(b - a + 1) * sizeof *lrp);
        if (!lrp)
            die(BSRMV_ERR_NOMEM, "row_ptr");
        for (int64_t i = a; i <= b; i++)
            lrp[i - a] = rp[i] - rp[a];
        bsrmv_matrix *S;
        die(bsrmv_matrix_wrap(&S, b - a, in.nb, bs, rp[b] - rp[a], lrp, ci + rp[a],
                              (const char *)val + (size_t)rp[a] * blk, type, BSRMV_COL_MAJOR),
            "slicing");
        cuda(cudaSetDevice(g), "cudaSetDevice");
        for (int h = 0; h < ngpu; h++) {
            int ok = 0;
            if (h != g && cudaDeviceCanAccessPeer(&ok, g, h) == cudaSuccess && ok)
                cudaDeviceEnablePeerAccess(h, 0);
        }
        cudaGetLastError(); /* already enabled is fine */
        die(bsrmv_gpu_matrix_upload(&p->dA, S, g, NULL), "uploading");
        bsrmv_matrix_destroy(S);
        free(lrp);
        p->r0 = a * bs;
        p->rows = (b - a) * bs;
        cuda(cudaStreamCreateWithFlags(&p->s, cudaStreamNonBlocking), "stream");
        cuda(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming), "event");
        die(bsrmv_gpu_malloc(&p->x, (size_t)nx_all * vs), "x");
        die(bsrmv_gpu_malloc(&p->y, (size_t)(g == 0 ? in.rows : p->rows) * vs + 16), "y");
        die(bsrmv_gpu_to_device(p->x, hx, (size_t)nx_all * vs), "x");
    }
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t)
        die(BSRMV_ERR_NOMEM, "timings");
    for (int broadcast = 0; broadcast < 2; broadcast++) {
        for (int r = 0; r < 3; r++)
            spmv(broadcast);
        for (int r = 0; r < reps; r++) {
            const double t0 = now();
            spmv(broadcast);
            t[r] = now() - t0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        const double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "bench", "ksparse_multigpu");
        json_str(&j, "matrix", name);
        json_int(&j, "gpus", ngpu);
        json_int(&j, "bs", bs);
        json_str(&j, "type", type == BSRMV_DOUBLE ? "double" : "float");
        json_int(&j, "mb", in.mb);
        json_int(&j, "nnzb", in.nnzb);
        json_int(&j, "x_broadcast", broadcast);
        json_int(&j, "reps", reps);
        json_num(&j, "ms", med * 1e3);
        json_num(&j, "ms_best", t[0] * 1e3);
        json_num(&j, "gbps", bsrmv_matrix_spmv_bytes(A) / med * 1e-9);
        json_end(&j);
        fflush(stdout);
    }
    free(t);
    for (int g = 0; g < ngpu; g++) {
        cudaSetDevice(g);
        bsrmv_gpu_matrix_destroy(part[g].dA);
        bsrmv_gpu_free(part[g].x);
        bsrmv_gpu_free(part[g].y);
        cudaStreamDestroy(part[g].s);
        cudaEventDestroy(part[g].done);
    }
    free(hx);
    bsrmv_matrix_destroy(A);
    return 0;
}
