/*
 * bsrmv_gen.h: reproducible test matrices (the benchmarks', the tests' and
 * the solvers' examples).  Part of the library's API like bsrmv.h; every
 * generator returns a new matrix the caller destroys with
 * bsrmv_matrix_destroy, and is safe to call from several threads at once.
 */
#ifndef BSRMV_GEN_H
#define BSRMV_GEN_H

#include "bsrmv.h"

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default) /* exported, as in bsrmv.h */
#endif

/* The KSPARSE test-matrix method for a matrix made with BSRMV_PROMOTE
 * (every block a_ij times ones): block entry (r, c) becomes
 * a_ij * (1 + 0.25*u), u in [-1, 1) drawn from seed and the entry's
 * (block, r, c) (not its storage position: both block orders get the same
 * matrix), so the blocks are not constant.  Changes A's values in place;
 * A must own its arrays (a wrapped matrix: BSRMV_ERR_UNSUPPORTED).  A
 * finite value that would leave the type's range: BSRMV_ERR_OVERFLOW and
 * nothing is changed.  In symmetric storage the diagonal blocks stay
 * symmetric ((r, c) and (c, r) get the same factor).  A must not be in
 * use by another thread. */
bsrmv_status bsrmv_matrix_perturb_promoted(bsrmv_matrix *A, uint64_t seed);

/* A 3D nx*ny*nz grid of nodes, bs unknowns per node, each node coupled to
 * its neighbours by a 7-point (faces) or 27-point (faces, edges, corners)
 * stencil: block row = node, one dense bs x bs block per neighbour.
 * Off-diagonal entries are uniform in [-1, 0); the diagonal block is made
 * strictly diagonally dominant by rows, so the matrix is nonsingular.
 * Complex types: off-diagonal a*(1 + i*f), f uniform in [-1/2, 1/2), and
 * the diagonal 1 + 1.125*(the row's sum of |a|) + i/2 (still dominant). */
bsrmv_status bsrmv_generate_grid(bsrmv_matrix **A, int64_t nx, int64_t ny, int64_t nz,
                                 int bs, int stencil_points, uint64_t seed,
                                 bsrmv_type type, bsrmv_order order);

/* Irregular block patterns (circuit/power-network/graph-like), for the
 * load-balancing kernels.  Block values uniform in [-1, 1) (complex types:
 * both parts), entry (r, c) the same in both orders.  The matrix depends on the seed only, not on
 * the number of OpenMP threads that build it (they build it in parallel).
 *
 * Power law: mb x nb blocks; block-row lengths follow a Pareto
 * distribution with tail exponent `exponent` (> 1; e.g. 1.5..2.5, smaller =
 * heavier tail), rounded and clipped to [0, max_len], its scale chosen so
 * that the mean is about mean_len (0 <= mean_len <= max_len <= nb).  The
 * longest drawn row (the first on ties) is then set to max_len exactly, so
 * the extreme case is always present.  Columns of a row are distinct,
 * uniformly random and sorted.  Errors: BSRMV_ERR_ARGUMENT for sizes or
 * parameters out of range, BSRMV_ERR_OVERFLOW for nb > INT32_MAX or sizes
 * that overflow, BSRMV_ERR_NOMEM. */
bsrmv_status bsrmv_generate_powerlaw(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                     double mean_len, double exponent, int64_t max_len,
                                     uint64_t seed, bsrmv_type type, bsrmv_order order);

/* The power law with local columns, as a mesh, a road network or a graph
 * in a bandwidth-reducing order has them: row i draws its columns from the
 * `band` block columns centred on column (i + 1/2)*nb/mb (the window moved
 * inside [0, nb) at the edges), max_len <= band <= nb; band = nb is
 * bsrmv_generate_powerlaw.  The row lengths are those of the same seed
 * there.  Errors as for the power law. */
bsrmv_status bsrmv_generate_powerlaw_banded(bsrmv_matrix **A, int64_t mb, int64_t nb, int bs,
                                            double mean_len, double exponent, int64_t max_len,
                                            int64_t band, uint64_t seed, bsrmv_type type,
                                            bsrmv_order order);

/* Arrow: n x n blocks (1 <= n <= INT32_MAX, 0 <= dense <= n); the first
 * `dense` block rows and block columns are full, plus the diagonal (so
 * rows 0..dense-1 hold n blocks each and every other row dense+1 blocks).
 * Errors as for the power law. */
bsrmv_status bsrmv_generate_arrow(bsrmv_matrix **A, int64_t n, int64_t dense, int bs,
                                  uint64_t seed, bsrmv_type type, bsrmv_order order);

/* Reservoir-style matrices (KSPARSE paper, section 3): an nx*ny*nz grid of
 * cells, 7-point connectivity, nc coupled components per cell (bs = nc, any
 * nc >= 1), every block dense.  Per cell a log-normal permeability (sigma 1,
 * z ten times less permeable); per face a transmissibility T (harmonic mean
 * of the two cells) and a dense nc x nc coupling.  Fluxes are upwinded on a
 * random potential field: the off-diagonal block (i, j) carries an extra
 * mobility-derivative term when j is upstream, so A is not symmetric.  The
 * diagonal block sums the face couplings plus an accumulation term large
 * enough that every scalar column is strictly diagonally dominant
 * (conservation makes the flux part weakly so): A is nonsingular and block
 * Jacobi is a convergent splitting, BiCGSTAB with it converges.  Real
 * types only (complex: BSRMV_ERR_UNSUPPORTED), as the block Laplacian. */
bsrmv_status bsrmv_generate_reservoir(bsrmv_matrix **A, int64_t nx, int64_t ny, int64_t nz,
                                      int nc, uint64_t seed, bsrmv_type type,
                                      bsrmv_order order);

/* The symmetric positive definite sibling (for CG): the same cells, faces
 * and log-normal transmissibilities with symmetric couplings and no
 * upwinding, A = sum over faces of (e_i - e_j)(e_i - e_j)^T (x) T_f L_f plus
 * a block diagonal accumulation term, with every L_f and accumulation block
 * SPD; the accumulation is 5% of the cell's transmissibility sum, so the
 * condition number grows like a Laplacian's. */
bsrmv_status bsrmv_generate_block_laplacian(bsrmv_matrix **A, int64_t nx, int64_t ny,
                                            int64_t nz, int bs, uint64_t seed,
                                            bsrmv_type type, bsrmv_order order);

/* Fill v[0..n) with uniform values in [-1, 1) from seed (v of type t; a
 * complex value gets two, its real and imaginary parts). */
bsrmv_status bsrmv_fill_random(void *v, int64_t n, bsrmv_type t, uint64_t seed);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* BSRMV_GEN_H */
