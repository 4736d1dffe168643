/* 64-bit sizes and offsets: products that overflow are refused with
 * BSRMV_ERR_OVERFLOW, and x offsets past 2^31 entries are computed in 64
 * bits (x lives in a sparse mapping; only the touched pages exist). */
#define _DEFAULT_SOURCE
#include "testutil.h"

#include <sys/mman.h>

static void refused_sizes(void)
{
    bsrmv_matrix *A = NULL;
    int64_t rp[2] = {0, 0};
    /* mb*bs overflows int64. */
    TU_FAILS(bsrmv_matrix_wrap(&A, INT64_MAX / 2, 1, 4, 0, rp, NULL, NULL, BSRMV_DOUBLE,
                               BSRMV_COL_MAJOR), BSRMV_ERR_OVERFLOW);
    /* nnzb*bs*bs overflows int64. */
    TU_FAILS(bsrmv_matrix_wrap(&A, 1, 1, 1 << 30, (int64_t)1 << 10, rp, NULL, NULL,
                               BSRMV_DOUBLE, BSRMV_COL_MAJOR), BSRMV_ERR_OVERFLOW);
    /* More block columns than a 32-bit col_idx can name. */
    TU_FAILS(bsrmv_matrix_wrap(&A, 1, (int64_t)1 << 31, 1, 0, rp, NULL, NULL, BSRMV_DOUBLE,
                               BSRMV_COL_MAJOR), BSRMV_ERR_OVERFLOW);
    /* A COO too large to allocate is an error, not a crash. */
    bsrmv_coo *coo = NULL;
    bsrmv_status s = bsrmv_coo_create(&coo, 10, 10, INT64_MAX / 4);
    TU_CHECK(s == BSRMV_ERR_NOMEM || s == BSRMV_ERR_OVERFLOW, "huge COO: %s",
             bsrmv_status_string(s));
    TU_CHECK(coo == NULL, "handle set on failure");
    /* Promotion whose size overflows. */
    TU_OK(bsrmv_coo_create(&coo, INT64_MAX / 8, 4, 1));
    coo->row[0] = 0;
    coo->col[0] = 0;
    coo->val[0] = 1;
    TU_FAILS(bsrmv_matrix_from_coo(&A, coo, 64, BSRMV_PROMOTE, BSRMV_DOUBLE,
                                   BSRMV_COL_MAJOR), BSRMV_ERR_OVERFLOW);
    bsrmv_coo_destroy(coo);
}

static void x_past_2_31(void)
{
    /* nb*bs = 2^31 + 4: the last block column starts past 2^31. */
    const int bs = 2;
    const int64_t nb = ((int64_t)1 << 30) + 2, n = nb * bs;
    size_t bytes = (size_t)n * sizeof(double);
    double *x = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (x == MAP_FAILED) {
        printf("test_overflow: cannot map %zu bytes; x offset case skipped\n", bytes);
        return;
    }
    int64_t rp[3] = {0, 2, 3};
    int32_t ci[3] = {0, (int32_t)(nb - 1), (int32_t)(nb - 2)};
    double val[12];
    for (int i = 0; i < 12; i++)
        val[i] = i + 1;
    x[0] = 1;
    x[1] = 2;
    x[n - 4] = 5;
    x[n - 3] = 7;
    x[n - 2] = 3;
    x[n - 1] = 4;
    bsrmv_matrix *A = NULL;
    TU_OK(bsrmv_matrix_wrap(&A, 2, nb, bs, 3, rp, ci, val, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    double y[4];
    for (int k = 0; k < 2; k++) {
        TU_OK(bsrmv_matrix_set_cpu_kernel(A, (bsrmv_cpu_kernel)k));
        TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, A, x, n, 0.0, y, 4));
        /* Column-major blocks: block 0 = [1 3; 2 4], block 1 = [5 7; 6 8],
         * block 2 = [9 11; 10 12]. */
        double want[4] = {1 * 1 + 3 * 2 + 5 * 3 + 7 * 4, 2 * 1 + 4 * 2 + 6 * 3 + 8 * 4,
                          9 * 5 + 11 * 7, 10 * 5 + 12 * 7};
        for (int i = 0; i < 4; i++)
            TU_CHECK(y[i] == want[i], "kernel %d: y[%d] = %g, wanted %g", k, i, y[i], want[i]);
    }
    TU_CHECK(bsrmv_matrix_spmv_bytes(A) > (double)bytes, "byte count lost precision");
    bsrmv_matrix_destroy(A);
    munmap(x, bytes);
}

int main(void)
{
    refused_sizes();
    x_past_2_31();
    printf("test_overflow: all passed\n");
    return 0;
}
