"""Mixed precision: float32 values with float64 vectors, and iterative
refinement to the float64 residual."""
import numpy as np
import pytest
from scipy.sparse.linalg import spsolve

import bsrmv
from conftest import random_bsr, spmv_bound

SCALARS = [(1.0, 0.0), (0.0, 1.0), (-1.5, 0.0), (2.0, 1.0), (0.5, -0.25), (0.0, 0.0)]


@pytest.mark.parametrize("bs", list(range(1, 9)) + [11])
def test_products_in_double(rng, bs):
    """The product is that of the float32-rounded matrix in float64
    arithmetic: within the float64 bound of that reference, far inside
    what float32 sums would give."""
    for mb, nb in [(1, 1), (9, 9), (17, 5), (4, 23)]:
        S = random_bsr(rng, mb, nb, bs, long_row=(mb, nb) == (9, 9))
        A = bsrmv.BSRMatrix.from_scipy(S).astype(np.float32, vector_dtype=np.float64)
        assert A.dtype == np.float32 and A.vector_dtype == np.float64
        S32 = S.astype(np.float32).astype(np.float64)
        for transpose in (False, True):
            n_in, n_out = S.shape[::-1] if not transpose else S.shape
            M = S32.T if transpose else S32
            for alpha, beta in SCALARS:
                x = rng.uniform(-1, 1, n_in)
                y0 = rng.uniform(-1, 1, n_out)
                y = y0.copy() if beta else np.full(n_out, np.nan)
                f = A.rmatvec if transpose else A.matvec
                assert f(x, alpha=alpha, beta=beta, y=y) is y
                ref = alpha * (M @ x) + (beta * y0 if beta else 0)
                bound = abs(alpha) * spmv_bound(S32, x, np.float64, transpose) \
                    + 4e-16 * abs(beta * y0) + 1e-300
                assert np.all(np.abs(y - ref) <= bound)
            # k vectors (one SpMM; tests/test_spmm.py checks every layout)
            for order in ("C", "F"):
                X = np.asarray(rng.uniform(-1, 1, (n_in, 4)), order=order)
                Y = (A.T if transpose else A) @ X
                assert Y.dtype == np.float64
                assert np.allclose(Y, M @ X, rtol=0, atol=1e-13)


def test_wrapped_float32_arrays(rng):
    S = random_bsr(rng, 20, 20, 3, dtype=np.float32)
    A = bsrmv.BSRMatrix.from_scipy(S, vector_dtype=np.float64)
    assert A.shared["data"] and A.vector_dtype == np.float64
    x = rng.uniform(-1, 1, S.shape[1])
    y = A @ x
    assert y.dtype == np.float64
    assert np.allclose(y, S.astype(np.float64) @ x, rtol=0, atol=1e-13)
    # float32 input vectors are widened; float32 output arrays are refused
    assert np.allclose(A @ x.astype(np.float32), S.astype(np.float64) @ x.astype(np.float32),
                       rtol=0, atol=1e-13)
    with pytest.raises(bsrmv.ArgumentError, match="float64"):
        A.matvec(x, y=np.empty(S.shape[0], dtype=np.float32))
    assert "float32 values, float64 vectors" in repr(A)
    assert A.aslinearoperator().dtype == np.float64


def test_astype(rng):
    S = random_bsr(rng, 10, 8, 4)  # int32 indptr: the copy keeps it
    A = bsrmv.BSRMatrix.from_scipy(S)
    B = A.astype(np.float32)
    assert B.dtype == B.vector_dtype == np.float32 and B.shared["data"] is False
    assert np.array_equal(B.to_scipy().toarray(), S.toarray().astype(np.float32))
    C = B.astype(np.float64)
    assert C.dtype == np.float64
    T = S.tocsr()[:32, :32]
    Sym = bsrmv.BSRMatrix.from_scipy((T + T.T).tobsr(blocksize=(4, 4)), symmetric=True)
    Ms = Sym.astype(np.float32, vector_dtype=np.float64)
    assert Ms.symmetric and Ms.vector_dtype == np.float64
    x = rng.uniform(-1, 1, 32)
    assert np.allclose(Ms @ x, Sym.to_scipy().astype(np.float32).astype(np.float64) @ x,
                       rtol=0, atol=1e-13)
    big = bsrmv.BSRMatrix.from_arrays(np.full((1, 2, 2), 1e300), [0], [0, 1], (2, 2))
    with pytest.raises(bsrmv.SizeOverflowError, match="beyond float32"):
        big.astype(np.float32)
    with pytest.raises(bsrmv.ArgumentError, match="float32 or float64"):
        A.astype(np.int32)
    with pytest.raises(bsrmv.ArgumentError, match="vector_dtype"):
        A.astype(np.float32, vector_dtype=np.float16)
    with pytest.raises(bsrmv.UnsupportedError, match="double values with float vectors"):
        bsrmv.BSRMatrix.from_scipy(S, vector_dtype=np.float32)


def grid_system(rng, spd):
    A = bsrmv.grid(6, 3, points=7, shape3d=(6, 5, 4))
    if spd:
        S = A.to_scipy()
        S = ((S + S.T) / 2).tobsr(blocksize=(3, 3))
        S.sum_duplicates()
        A = bsrmv.BSRMatrix.from_scipy(S)
    b = rng.uniform(-1, 1, A.shape[0])
    return A, b


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres"])
def test_refined_solve_reaches_double_residual(rng, method):
    A, b = grid_system(rng, spd=method == "cg")
    S = A.to_scipy().tocsc()
    ref = spsolve(S, b)
    x, rep = bsrmv.solve(A, b, method, tol=1e-11, refine=True)
    assert rep.converged, rep.message
    assert rep.refinements >= 1 and rep.true_rel_residual <= 1e-11
    assert np.linalg.norm(b - S @ x) <= 1.01e-11 * np.linalg.norm(b)
    assert np.allclose(x, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    # the mixed matrix alone solves its float32-rounded system
    Af = A.astype(np.float32, vector_dtype=np.float64)
    xf, repf = bsrmv.solve(Af, b, method, tol=1e-11)
    assert repf.converged and xf.dtype == np.float64
    assert np.linalg.norm(b - S @ xf) > 1e-9 * np.linalg.norm(b)
    # refine= a prebuilt copy, and an inner tolerance
    x2, rep2 = bsrmv.solve(A, b, method, tol=1e-11, refine=Af, inner_tol=1e-3)
    assert rep2.converged and rep2.refinements >= rep.refinements
    assert np.allclose(x2, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_refine_refusals(rng):
    A, b = grid_system(rng, spd=False)
    with pytest.raises(bsrmv.ArgumentError, match="float64 matrix"):
        bsrmv.solve(A.astype(np.float32), b, "bicgstab", refine=True)
    with pytest.raises(bsrmv.ArgumentError, match="refine must be"):
        bsrmv.solve(A, b, "bicgstab", refine="yes")
    with pytest.raises(bsrmv.ArgumentError, match="inner_tol"):
        bsrmv.solve(A, b, "bicgstab", refine=True, inner_tol=-1.0)
    # Af of another shape: the library's check
    other = bsrmv.grid(3, 3).astype(np.float32, vector_dtype=np.float64)
    with pytest.raises(bsrmv.Error):
        bsrmv.solve(A, b, "bicgstab", refine=other)
    # Af without double vectors
    with pytest.raises(bsrmv.ArgumentError):
        bsrmv.solve(A, b, "bicgstab", refine=A.astype(np.float32))
