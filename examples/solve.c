/* Solve A x = b by CG with block-Jacobi preconditioning on the host, or on
 * the GPU with --gpu (CUDA builds with a device). */
#include "chain.h"

#include <bsrmv.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what)
{
    fprintf(stderr, "solve: %s: %s\n", what, bsrmv_last_error());
    return 1;
}

int main(void)
{
    const int64_t nodes = 1000;
    const int bs = 3;
    const int64_t n = nodes * bs;
    bsrmv_matrix *A = NULL;
    bsrmv_precond *P = NULL;
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    int rc = 1;
    if (!b || !x) {
        fprintf(stderr, "solve: out of memory\n");
        goto done;
    }
    for (int64_t i = 0; i < n; i++)
        b[i] = 1.0;
    if (chain_matrix(&A, nodes, bs) != BSRMV_SUCCESS) {
        rc = fail("matrix");
        goto done;
    }
    if (bsrmv_precond_block_jacobi(&P, A) != BSRMV_SUCCESS) {
        rc = fail("block Jacobi");
        goto done;
    }
    bsrmv_solve_options opt = {.rtol = 1e-10, .max_iter = 2000, .x0_zero = 1};
    bsrmv_solve_report rep;
    if (bsrmv_solve(BSRMV_SOLVER_CG, A, P, b, x, n, &opt, &rep) != BSRMV_SUCCESS) {
        rc = fail("CG");
        goto done;
    }
    printf("CG + block Jacobi: %d iterations, relative residual %.2e\n", rep.iterations,
           rep.true_rel_residual);
    rc = rep.true_rel_residual <= 1e-9 ? 0 : 1;
done:
    bsrmv_precond_destroy(P);
    bsrmv_matrix_destroy(A);
    free(b);
    free(x);
    return rc;
}
