"""Solvers against scipy.sparse.linalg.spsolve."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import bsrmv
from conftest import random_bsr


def system(rng, nb, bs, symmetric, dtype=np.float64):
    M = random_bsr(rng, nb, nb, bs, density=0.2, empty_rows=False).astype(np.float64)
    if symmetric:
        M = M + M.T
    # diagonal dominance by rows (and, symmetric, by columns): nonsingular, SPD
    shift = np.abs(M).sum(axis=1).max() + 1.0
    A = (M + shift * sp.eye_array(nb * bs)).tobsr(blocksize=(bs, bs)).astype(dtype)
    A.sum_duplicates()
    return A


@pytest.mark.parametrize("bs", [1, 3, 5])
@pytest.mark.parametrize("method,symmetric", [("cg", True), ("bicgstab", False),
                                              ("gmres", False), ("bicgstab", True)])
@pytest.mark.parametrize("precond", ["block_jacobi", None])
def test_solution_matches_spsolve(rng, bs, method, symmetric, precond):
    S = system(rng, 30, bs, symmetric)
    b = rng.uniform(-1, 1, S.shape[0])
    ref = spsolve(S.tocsc(), b)
    A = bsrmv.BSRMatrix.from_scipy(S)
    x, rep = bsrmv.solve(A, b, method, precond=precond, tol=1e-10)
    assert rep.converged and rep.message == ""
    assert rep.true_rel_residual <= 1e-10
    assert rep.iterations >= 1 and len(rep.residuals) == rep.iterations
    assert rep.residuals[-1] == pytest.approx(rep.rel_residual)
    assert np.linalg.norm(x - ref) <= 1e-8 * np.linalg.norm(ref)


def test_float32_and_initial_guess(rng):
    S = system(rng, 20, 4, False, np.float32)
    b = rng.uniform(-1, 1, S.shape[0]).astype(np.float32)
    ref = spsolve(S.astype(np.float64).tocsc(), b.astype(np.float64))
    A = bsrmv.BSRMatrix.from_scipy(S)
    x, rep = bsrmv.solve(A, b, "bicgstab")
    assert x.dtype == np.float32 and rep.converged
    assert np.linalg.norm(x - ref) <= 1e-4 * np.linalg.norm(ref)
    x2, rep2 = bsrmv.solve(A, b, "bicgstab", x0=ref)
    assert rep2.converged and rep2.iterations <= 1


def test_not_converged_returns_last_iterate(rng):
    S = system(rng, 30, 2, False)
    b = rng.uniform(-1, 1, S.shape[0])
    A = bsrmv.BSRMatrix.from_scipy(S)
    x, rep = bsrmv.solve(A, b, "gmres", precond=None, tol=1e-14, maxiter=2, restart=2)
    assert not rep.converged and rep.message
    assert rep.iterations == 2 and np.all(np.isfinite(x))


def test_solver_errors(rng):
    S = system(rng, 10, 3, True)
    S.data[0] = 0.0  # the first block row's diagonal block (canonical order, first column)
    A = bsrmv.BSRMatrix.from_scipy(S)
    assert S.indices[0] == 0
    with pytest.raises(bsrmv.SingularError, match="block row 0"):
        bsrmv.solve(A, np.ones(S.shape[0]), "cg")
    R = bsrmv.BSRMatrix.from_scipy(random_bsr(rng, 4, 5, 2))
    with pytest.raises(bsrmv.DimensionError):
        bsrmv.solve(R, np.ones(8), "gmres", precond=None)
    with pytest.raises(bsrmv.ArgumentError, match="method"):
        bsrmv.solve(A, np.ones(S.shape[0]), "lu")
    with pytest.raises(bsrmv.DimensionError):
        bsrmv.solve(A, np.ones(S.shape[0] + 1))
