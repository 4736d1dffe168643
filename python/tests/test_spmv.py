import numpy as np
import pytest

import bsrmv
from conftest import random_bsr, spmv_bound

SHAPES = [(1, 1), (1, 7), (7, 1), (9, 9), (17, 5), (4, 23)]
BLOCK_SIZES = list(range(1, 9)) + [11, 16]


def reference(S, x, alpha, beta, y0, transpose=False):
    A64 = S.astype(np.float64)
    ax = (A64.T if transpose else A64) @ x.astype(np.float64)
    return alpha * ax + (beta * y0.astype(np.float64) if beta != 0 else 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_matches_scipy(rng, bs, dtype, index_dtype):
    for mb, nb in SHAPES:
        S = random_bsr(rng, mb, nb, bs, dtype=dtype, index_dtype=index_dtype,
                       long_row=(mb, nb) == (9, 9))
        A = bsrmv.BSRMatrix.from_scipy(S)
        assert A.shared["data"]
        assert A.shared["indices"] == (index_dtype == np.int32)
        assert A.shape == S.shape and A.dtype == dtype
        for transpose in (False, True):
            n_in, n_out = S.shape[::-1] if not transpose else S.shape
            x = rng.uniform(-1, 1, n_in).astype(dtype)
            for alpha, beta in [(1.0, 0.0), (0.0, 1.0), (-1.5, 0.0), (2.0, 1.0), (0.5, -0.25),
                                (0.0, 0.0)]:
                y0 = rng.uniform(-1, 1, n_out).astype(dtype)
                y = y0.copy()
                if beta == 0.0:
                    y[:] = np.nan  # beta == 0 must not read y
                f = A.rmatvec if transpose else A.matvec
                out = f(x, alpha=alpha, beta=beta, y=y)
                assert out is y
                ref = reference(S, x, alpha, beta, y0, transpose)
                bound = abs(alpha) * spmv_bound(S, x, dtype, transpose) \
                    + 2 * np.finfo(dtype).eps * abs(beta * y0.astype(np.float64)) \
                    + np.finfo(dtype).tiny
                assert np.all(np.isfinite(y))
                assert np.all(np.abs(y - ref) <= bound), (mb, nb, bs, alpha, beta, transpose)
            # operators agree with the explicit calls
            if transpose:
                assert np.array_equal(A.T @ x, A.rmatvec(x))
            else:
                assert np.array_equal(A @ x, A.matvec(x))


def test_large_matrix(rng):
    """A matrix beyond the caches, every block row long."""
    bs = 4
    S = random_bsr(rng, 3000, 3000, bs, density=0.01, empty_rows=False)
    A = bsrmv.BSRMatrix.from_scipy(S)
    x = rng.uniform(-1, 1, S.shape[1])
    assert np.all(np.abs(A @ x - S @ x) <= spmv_bound(S, x, np.float64))
    y = rng.uniform(-1, 1, S.shape[0])
    assert np.all(np.abs(A.T @ y - S.T @ y) <= spmv_bound(S, y, np.float64, transpose=True))


def test_generated_grid_matches_scipy(rng):
    for order in ("row", "col"):
        A = bsrmv.grid(6, 3, order=order, shape3d=(6, 5, 4))
        S = A.to_scipy()
        x = rng.uniform(-1, 1, A.shape[1])
        assert np.all(np.abs(A @ x - S @ x) <= spmv_bound(S, x, np.float64))


def test_matrix_of_vectors(rng):
    S = random_bsr(rng, 6, 8, 3)
    A = bsrmv.BSRMatrix.from_scipy(S)
    X = rng.uniform(-1, 1, (S.shape[1], 4))
    assert np.allclose(A @ X, S @ X, rtol=0, atol=1e-13)
    Y = rng.uniform(-1, 1, (S.shape[0], 4))
    out = A.matvec(X, alpha=2.0, beta=-1.0, y=Y.copy())
    assert np.allclose(out, 2.0 * (S @ X) - Y, rtol=0, atol=1e-13)


def test_linear_operator(rng):
    import scipy.sparse as sp
    from scipy.sparse.linalg import aslinearoperator, gmres

    S = random_bsr(rng, 10, 10, 3, empty_rows=False)
    S = (S + 30.0 * sp.eye_array(30)).tobsr(blocksize=(3, 3))
    S.sum_duplicates()
    A = bsrmv.BSRMatrix.from_scipy(S)
    L = A.aslinearoperator()
    x = rng.uniform(-1, 1, 30)
    assert np.allclose(L @ x, S @ x, rtol=0, atol=1e-13)
    assert np.allclose(L.H @ x, S.T @ x, rtol=0, atol=1e-13)
    assert np.allclose(L.matvec(x.reshape(-1, 1)).ravel(), S @ x, rtol=0, atol=1e-13)
    b = rng.uniform(-1, 1, 30)
    sol, info = gmres(L, b, rtol=1e-12, atol=0)
    assert info == 0
    ref, _ = gmres(aslinearoperator(S), b, rtol=1e-12, atol=0)
    assert np.allclose(sol, ref, rtol=1e-8, atol=1e-10)


def test_empty_matrix():
    import scipy.sparse as sp

    S = sp.bsr_array((6, 9), blocksize=(3, 3))
    A = bsrmv.BSRMatrix.from_scipy(S)
    y = A @ np.ones(9)
    assert np.array_equal(y, np.zeros(6))
