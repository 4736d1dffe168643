/* GPU ranks (one device per rank, rank % devices): the distributed SpMV
 * and transpose on the device, gathered and checked against the
 * long-double reference of the whole matrix on every rank.  Exits 77
 * (skipped) when a rank has no usable GPU. */
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"
#include "bsrmv_mpi.h"
#include "testutil.h"

#include <string.h>

static int rank, size;

static void check_gpu(const char *what, const bsrmv_matrix *G, int uneven, uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(G, &in));
    const int64_t *rp;
    const int32_t *ci;
    const void *val;
    TU_OK(bsrmv_matrix_arrays(G, &rp, &ci, &val));
    int64_t *rs = malloc((size_t)(size + 1) * sizeof *rs);
    TU_CHECK(rs != NULL, "out of memory");
    if (uneven) { /* 1: the last rank gets most; 2: all, the others none */
        for (int p = 0; p <= size; p++)
            rs[p] = p == size ? in.mb : uneven == 2 ? 0 : in.mb * p / (4 * size);
    } else {
        TU_OK(bsrmv_dist_partition(rp, in.mb, size, rs));
    }
    bsrmv_dist_matrix *D;
    TU_OK(bsrmv_dist_matrix_scatter(&D, MPI_COMM_WORLD, 0, G, rs));
    int ndev = 0;
    TU_OK(bsrmv_gpu_device_count(&ndev));
    bsrmv_dist_gpu_matrix *dD;
    TU_OK(bsrmv_dist_gpu_matrix_upload(&dD, D, rank % ndev));
    const int bs = in.bs;
    const bsrmv_type t = in.type;
    const size_t vs = bsrmv_type_size(t);
    static const double ab[][2] = {{1.0, 0.0}, {-0.5, 2.0}, {0.0, 1.5}};
    for (int op = 0; op < 2; op++) {
        const int64_t nx = (op ? in.mb : in.nb) * bs, ny = (op ? in.nb : in.mb) * bs;
        const int64_t r0 = rs[rank] * bs, r1 = rs[rank + 1] * bs;
        /* square: the columns follow the rows */
        const int64_t myx = r1 - r0, myy = r1 - r0;
        void *x = tu_random_vector(nx, t, seed + 1), *y0 = tu_random_vector(ny, t, seed + 2);
        void *yw = tu_nan_vector(ny, t), *yh = tu_nan_vector(myy + 1, t);
        void *dx, *dy;
        TU_OK(bsrmv_gpu_malloc(&dx, (size_t)(myx + 1) * vs));
        TU_OK(bsrmv_gpu_malloc(&dy, (size_t)(myy + 1) * vs));
        TU_OK(bsrmv_gpu_to_device(dx, (const char *)x + r0 * vs, (size_t)myx * vs));
        for (size_t c = 0; c < sizeof ab / sizeof ab[0]; c++) {
            const double alpha = ab[c][0], beta = ab[c][1];
            if (beta == 0) /* NaN in y must not leak into the result */
                TU_OK(bsrmv_gpu_to_device(dy, yh, (size_t)myy * vs));
            else
                TU_OK(bsrmv_gpu_to_device(dy, (const char *)y0 + r0 * vs, (size_t)myy * vs));
            TU_OK(bsrmv_dist_gpu_spmv((bsrmv_op)op, alpha, dD, dx, myx, beta, dy, myy, NULL));
            TU_OK(bsrmv_dist_gpu_sync(dD));
            void *part = malloc((size_t)(myy + 1) * vs);
            TU_CHECK(part != NULL, "out of memory");
            TU_OK(bsrmv_gpu_to_host(part, dy, (size_t)myy * vs));
            int *cnt = malloc((size_t)size * sizeof *cnt), *dsp = malloc((size_t)size * sizeof *dsp);
            for (int r = 0; r < size; r++) {
                cnt[r] = (int)((rs[r + 1] - rs[r]) * bs * (int64_t)vs);
                dsp[r] = (int)(rs[r] * bs * (int64_t)vs);
            }
            MPI_Allgatherv(part, cnt[rank], MPI_BYTE, yw, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
            free(cnt);
            free(dsp);
            free(part);
            char msg[160];
            snprintf(msg, sizeof msg, "GPU %s op %c alpha %g beta %g, %d ranks", what,
                     op ? 'T' : 'N', alpha, beta, size);
            tu_check_result(msg, G, (bsrmv_op)op, alpha, x, beta, y0, yw);
        }
        bsrmv_gpu_free(dx);
        bsrmv_gpu_free(dy);
        free(x);
        free(y0);
        free(yw);
        free(yh);
    }
    bsrmv_dist_gpu_matrix_destroy(dD);
    bsrmv_dist_matrix_destroy(D);
    free(rs);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ndev = 0, have, all;
    have = bsrmv_gpu_device_count(&ndev) == BSRMV_SUCCESS && ndev > 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0)
            printf("skipped: a rank has no usable GPU (%s)\n", bsrmv_last_error());
        MPI_Finalize();
        return 77;
    }
    int cases = 0;
    static const int bss[] = {1, 2, 3, 4, 5, 6, 8, 9, 16};
    for (size_t b = 0; b < sizeof bss / sizeof bss[0]; b++)
        for (int t = 0; t < 2; t++)
            for (int o = 0; o < 2; o++) {
                const tu_shape sh = {.mb = 300, .nb = 300, .bs = bss[b], .mean_len = 6,
                                     .empty_frac = 0.1, .long_row = 7, .long_len = 250};
                bsrmv_matrix *G = tu_random_bsr(&sh, (bsrmv_type)t, (bsrmv_order)o, 10 + b);
                char what[64];
                snprintf(what, sizeof what, "bs %d %s %s", bss[b], t ? "double" : "float",
                         o ? "row" : "col");
                check_gpu(what, G, (int)(b + t + o) % 2, 20 + b);
                bsrmv_matrix_destroy(G);
                cases++;
            }
    bsrmv_matrix *G;
    TU_OK(bsrmv_generate_powerlaw(&G, 4000, 4000, 4, 8, 1.7, 4000, 3, BSRMV_DOUBLE,
                                  BSRMV_COL_MAJOR));
    check_gpu("power-law bs 4", G, 0, 99);
    bsrmv_matrix_destroy(G);
    TU_OK(bsrmv_generate_grid(&G, 20, 20, 20, 3, 27, 4, BSRMV_FLOAT, BSRMV_ROW_MAJOR));
    check_gpu("grid27 bs 3", G, 0, 98);
    check_gpu("grid27 bs 3, all rows on the last rank", G, 2, 97);
    bsrmv_matrix_destroy(G);
    if (rank == 0)
        printf("test_mpi_gpu: %d ranks, %d matrices, each op N and T x 3 alpha/beta: passed\n",
               size, cases + 3);
    MPI_Finalize();
    return 0;
}
