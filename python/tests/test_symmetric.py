"""Symmetric storage: the upper block triangle of a symmetric matrix."""
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import bsrmv
from conftest import random_bsr, spmv_bound

BLOCK_SIZES = list(range(1, 9)) + [11]
SCALARS = [(1.0, 0.0), (0.0, 1.0), (-1.5, 0.0), (2.0, 1.0), (0.5, -0.25), (0.0, 0.0)]


def random_sym(rng, nb, bs, density=0.3, dtype=np.float64, shift=0.0):
    """A random symmetric canonical bsr_array (an empty block row or two,
    one long row), plus shift on the diagonal."""
    R = random_bsr(rng, nb, nb, bs, density=density, long_row=nb > 3)
    S = (R + R.T + shift * sp.eye_array(nb * bs)).tobsr(blocksize=(bs, bs)).astype(dtype)
    S.sum_duplicates()
    return S


def upper_blocks(S):
    """The diagonal and upper blocks of S as BSR arrays (int64 indptr)."""
    bs = S.blocksize[0]
    rows = np.repeat(np.arange(S.shape[0] // bs), np.diff(S.indptr))
    keep = S.indices >= rows
    indptr = np.zeros(S.shape[0] // bs + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=S.shape[0] // bs), out=indptr[1:])
    return S.data[keep], S.indices[keep], indptr


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_products_match_scipy(rng, bs, dtype):
    for nb in (1, 2, 9, 30):
        S = random_sym(rng, nb, bs, dtype=dtype)
        A = bsrmv.BSRMatrix.from_scipy(S, symmetric=True)
        assert A.symmetric and A.shape == S.shape and A.dtype == dtype
        assert A.nnzb == len(upper_blocks(S)[1])
        assert np.array_equal(A.to_scipy().toarray(), S.toarray())
        for t, (alpha, beta) in enumerate(SCALARS):
            x = rng.uniform(-1, 1, S.shape[1]).astype(dtype)
            y0 = rng.uniform(-1, 1, S.shape[0]).astype(dtype)
            y = y0.copy() if beta else np.full_like(y0, np.nan)
            f = A.rmatvec if t % 2 else A.matvec
            assert f(x, alpha=alpha, beta=beta, y=y) is y
            ref = alpha * (S.astype(np.float64) @ x.astype(np.float64)) \
                + (beta * y0.astype(np.float64) if beta else 0)
            bound = abs(alpha) * spmv_bound(S, x, dtype) \
                + 2 * np.finfo(dtype).eps * abs(beta * y0) + np.finfo(dtype).tiny
            assert np.all(np.abs(y - ref) <= bound), (nb, bs, alpha, beta)
        # k vectors (one SpMM of the stored half), either layout, in place
        for order in ("C", "F"):
            X = np.asarray(rng.uniform(-1, 1, (S.shape[1], 3)), dtype=dtype, order=order)
            Y = np.full((S.shape[0], 3), np.nan, dtype=dtype, order=order)
            assert A.matvec(X, y=Y) is Y
            ref = S.astype(np.float64) @ X.astype(np.float64)
            assert np.allclose(Y, ref, rtol=0, atol=50 * bs * nb * np.finfo(dtype).eps)
            assert np.allclose(A.T @ X, ref, rtol=0, atol=50 * bs * nb * np.finfo(dtype).eps)


def test_from_arrays_shares_upper_blocks(rng):
    S = random_sym(rng, 12, 3)
    data, indices, indptr = upper_blocks(S)
    data = np.ascontiguousarray(data)
    indices = np.ascontiguousarray(indices)
    A = bsrmv.BSRMatrix.from_arrays(data, indices, indptr, S.shape, symmetric=True)
    assert A.symmetric and A.shared == {"data": True, "indices": True, "indptr": True}
    x = rng.uniform(-1, 1, S.shape[1])
    assert np.allclose(A @ x, S @ x, rtol=0, atol=1e-13)
    # an int32 indptr is widened (the library's symmetric form is int64)
    B = bsrmv.BSRMatrix.from_arrays(data, indices, indptr.astype(np.int32), S.shape,
                                    symmetric=True)
    assert B.shared == {"data": True, "indices": True, "indptr": False}
    data[...] *= 2  # values in place: the next product sees them
    assert np.allclose(A @ x, 2 * (S @ x), rtol=0, atol=1e-13)


def test_refusals(rng):
    S = random_sym(rng, 6, 2)
    N = S.copy()
    N.data[len(N.data) // 2, 0, 1] += 1.0  # (r, c), r != c: its mirror keeps its value
    with pytest.raises(bsrmv.ArgumentError, match=r"not symmetric: entry \(\d+, \d+\)"):
        bsrmv.BSRMatrix.from_scipy(N, symmetric=True)
    with pytest.raises(bsrmv.DimensionError, match="square"):
        bsrmv.BSRMatrix.from_scipy(random_bsr(rng, 3, 4, 2), symmetric=True)
    with pytest.raises(bsrmv.ArgumentError, match="copy=False"):
        bsrmv.BSRMatrix.from_scipy(S, symmetric=True, copy=False)
    # a block below the diagonal in arrays that claim symmetric storage
    with pytest.raises(bsrmv.StructureError):
        bsrmv.BSRMatrix.from_arrays(S.data, S.indices, S.indptr.astype(np.int64), S.shape,
                                    symmetric=True)
    with pytest.raises(bsrmv.DimensionError, match="square"):
        bsrmv.BSRMatrix.from_arrays(np.ones((1, 2, 2)), [1], [0, 1], (2, 4), symmetric=True)
    A = bsrmv.BSRMatrix.from_scipy(S, symmetric=True)
    with pytest.raises(bsrmv.UnsupportedError):
        A.to_symmetric()


def test_tolerance_and_round_trip(rng):
    S = random_sym(rng, 10, 3)
    N = S.copy()
    N.data *= 1 + 1e-12 * rng.uniform(-1, 1, N.data.shape)
    with pytest.raises(bsrmv.ArgumentError):
        bsrmv.BSRMatrix.from_scipy(N, symmetric=True)
    A = bsrmv.BSRMatrix.from_scipy(N, symmetric=True, tol=1e-10)
    assert A.symmetric
    F = bsrmv.BSRMatrix.from_scipy(S)
    Ssym = F.to_symmetric()
    assert Ssym.symmetric and not F.symmetric and F.to_full() is F
    back = Ssym.to_full()
    assert not back.symmetric
    assert np.array_equal(back.to_scipy().toarray(), S.toarray())


def test_solvers(rng):
    S = random_sym(rng, 25, 3, density=0.2, shift=10.0)
    A = bsrmv.BSRMatrix.from_scipy(S, symmetric=True)
    b = rng.uniform(-1, 1, S.shape[0])
    ref = spsolve(S.tocsc(), b)
    for method in ("cg", "bicgstab", "gmres"):
        x, rep = bsrmv.solve(A, b, method, tol=1e-11)
        assert rep.converged, rep.message
        assert np.allclose(x, ref, rtol=0, atol=1e-8 * np.abs(ref).max())


def test_read_mtx_keeps_one_triangle(tmp_path, rng):
    S = random_sym(rng, 7, 1).tocoo()
    path = tmp_path / "s.mtx"
    scipy.io.mmwrite(path, S, symmetry="symmetric")
    assert "symmetric" in path.read_text().splitlines()[0]
    for bs in (1, 2, 3):
        A = bsrmv.read_mtx(path, bs=bs, symmetric=True)
        F = bsrmv.read_mtx(path, bs=bs)
        assert A.symmetric and not F.symmetric and A.nnzb < F.nnzb
        assert np.array_equal(A.to_scipy().toarray(), F.to_scipy().toarray())
        x = rng.uniform(-1, 1, A.shape[1])
        assert np.allclose(A @ x, F @ x, rtol=0, atol=1e-13)
    # promoted blocks from one triangle: a symmetric matrix again
    P = bsrmv.read_mtx(path, bs=3, blocking="promote", seed=5, symmetric=True)
    Pf = P.to_scipy().toarray()
    assert P.symmetric and P.shape == (21, 21) and np.array_equal(Pf, Pf.T)
    x = rng.uniform(-1, 1, 21)
    assert np.allclose(P @ x, Pf @ x, rtol=0, atol=1e-13)
    general = tmp_path / "g.mtx"
    scipy.io.mmwrite(general, random_bsr(rng, 4, 4, 1).tocoo())
    assert not bsrmv.read_mtx(general, bs=2, symmetric=True).symmetric
