/* A small SPD block matrix for the examples: a chain of n nodes with bs
 * unknowns each; diagonal blocks 4 on the diagonal and 1 elsewhere
 * (symmetric, strictly diagonally dominant with the couplings), couplings
 * to the neighbours -I.  Arrays are malloc'd; the caller frees them. */
#ifndef EXAMPLES_CHAIN_H
#define EXAMPLES_CHAIN_H
#include <bsrmv.h>
#include <stdlib.h>

static bsrmv_status chain_matrix(bsrmv_matrix **A, int64_t n, int bs)
{
    int64_t nnzb = 3 * n - 2, k = 0;
    int64_t *row_ptr = malloc((size_t)(n + 1) * sizeof *row_ptr);
    int32_t *col_idx = malloc((size_t)nnzb * sizeof *col_idx);
    double *val = calloc((size_t)(nnzb * bs * bs), sizeof *val);
    bsrmv_status s = BSRMV_ERR_NOMEM;
    if (row_ptr && col_idx && val) {
        row_ptr[0] = 0;
        for (int64_t i = 0; i < n; i++) {
            for (int64_t j = i - 1; j <= i + 1; j++) {
                if (j < 0 || j >= n)
                    continue;
                double *b = val + k * bs * bs;
                for (int r = 0; r < bs; r++)
                    for (int c = 0; c < bs; c++)
                        b[c * bs + r] = j != i ? (r == c ? -1.0 : 0.0) : (r == c ? 4.0 : 1.0 / bs);
                col_idx[k++] = (int32_t)j;
            }
            row_ptr[i + 1] = k;
        }
        /* create copies the arrays: they can go right after */
        s = bsrmv_matrix_create(A, n, n, bs, nnzb, row_ptr, col_idx, val, BSRMV_DOUBLE,
                                BSRMV_COL_MAJOR);
    }
    free(row_ptr);
    free(col_idx);
    free(val);
    return s;
}
#endif
