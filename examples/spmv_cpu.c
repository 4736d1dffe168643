/* The README's example: y = A x for a small BSR matrix, with errors checked. */
#include <bsrmv.h>
#include <stdio.h>

int main(void)
{   /* 2 x 2 block rows/columns of 2 x 2 blocks: (0,0), (0,1), (1,1) */
    int64_t row_ptr[] = {0, 2, 3};
    int32_t col_idx[] = {0, 1, 1};
    double val[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; /* column-major blocks */
    double x[4] = {1, 1, 1, 1}, y[4];
    bsrmv_matrix *A;
    if (bsrmv_matrix_wrap(&A, 2, 2, 2, 3, row_ptr, col_idx, val, BSRMV_DOUBLE,
                          BSRMV_COL_MAJOR) != BSRMV_SUCCESS) {
        fprintf(stderr, "bsrmv: %s\n", bsrmv_last_error()); /* which rule broke, where */
        return 1;
    }
    bsrmv_status s = bsrmv_spmv(BSRMV_OP_N, 1.0, A, x, 4, 0.0, y, 4);
    if (s == BSRMV_SUCCESS) printf("y = %g %g %g %g\n", y[0], y[1], y[2], y[3]);
    else fprintf(stderr, "bsrmv: %s\n", bsrmv_last_error());
    bsrmv_matrix_destroy(A);
    return s != BSRMV_SUCCESS;
}
