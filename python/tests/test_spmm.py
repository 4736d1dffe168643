"""Products with k vectors at once (bsrmv_spmm) against scipy."""
import numpy as np
import pytest

import bsrmv
from bsrmv._matrix import _layouts
from conftest import random_bsr, spmv_bound

SHAPES = [(1, 1), (1, 7), (7, 1), (9, 9), (17, 5), (4, 23)]
BLOCK_SIZES = list(range(1, 9)) + [11, 16]
SCALARS = [(1.0, 0.0), (0.0, 1.0), (-1.5, 0.0), (2.0, 1.0), (0.5, -0.25), (0.0, 0.0)]


class Spy:
    """Stands in for the binding: records what reaches the C calls."""

    def __init__(self, core):
        self.core = core
        self.calls = []

    def spmm(self, op, alpha, x, beta, y, row):
        self.calls.append(("spmm", x, y, row))
        return self.core.spmm(op, alpha, x, beta, y, row)

    def spmv(self, op, alpha, x, beta, y):
        self.calls.append(("spmv", x, y, None))
        return self.core.spmv(op, alpha, x, beta, y)

    def __getattr__(self, name):
        return getattr(self.core, name)


def spy_on(A):
    spy = Spy(A._m)
    A._m = spy
    return spy


def multivector(rng, n, k, dtype, layout):
    """An n x k array in one of the layouts the package passes in place:
    C (row-major), F (column-major), F with ld > n (rows of a taller
    Fortran array), C with ld > k (columns of a wider C array)."""
    if layout == "C":
        base = np.empty((n, k), dtype=dtype)
        view = base
    elif layout == "F":
        base = np.empty((n, k), dtype=dtype, order="F")
        view = base
    elif layout == "F-ld":
        base = np.empty((n + 3, k + 1), dtype=dtype, order="F")
        view = base[1:n + 1, 1:]
    else:  # "C-ld"
        base = np.empty((n + 1, k + 2), dtype=dtype)
        view = base[1:, 2:]
    base[...] = np.nan  # padding must stay untouched
    view[...] = rng.uniform(-1, 1, (n, k)).astype(dtype)
    return base, view


def reference(S, X, alpha, beta, Y0, transpose):
    A64 = S.astype(np.float64)
    ax = (A64.T if transpose else A64) @ X.astype(np.float64)
    return alpha * ax + (beta * Y0.astype(np.float64) if beta != 0 else 0)


def bound(S, X, dtype, alpha, beta, Y0, transpose):
    cols = [spmv_bound(S, X[:, j], dtype, transpose) for j in range(X.shape[1])]
    b = np.stack(cols, axis=1) if cols else np.zeros((Y0.shape[0], 0))
    return abs(alpha) * b + 2 * np.finfo(dtype).eps * abs(beta * Y0.astype(np.float64)) \
        + np.finfo(dtype).tiny


@pytest.mark.parametrize("dtype", [np.float64, np.float32, "mixed"])
@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_matches_scipy_in_place(rng, bs, dtype):
    """Every layout of y (and x alike) goes to one bsrmv_spmm call with the
    caller's arrays, and padding is never written.  "mixed": float32 values
    with float64 vectors, against the float32-rounded matrix in float64."""
    layouts = ["C", "F", "F-ld", "C-ld"]
    in_place = 0
    mixed = dtype == "mixed"
    if mixed:
        dtype = np.float64
    for mb, nb in SHAPES:
        S = random_bsr(rng, mb, nb, bs, dtype=dtype, long_row=(mb, nb) == (9, 9))
        A = bsrmv.BSRMatrix.from_scipy(S)
        if mixed:
            A = A.astype(np.float32, vector_dtype=np.float64)
            S = S.astype(np.float32).astype(np.float64)
        spy = spy_on(A)
        for transpose in (False, True):
            n_in, n_out = S.shape[::-1] if not transpose else S.shape
            for t, (alpha, beta) in enumerate(SCALARS):
                k = (1, 3, 5, 16, 17, 33, 2, 4, 8)[(t + 6 * transpose) % 9]
                lay = layouts[(t + bs) % 4]
                xb, X = multivector(rng, n_in, k, dtype, lay)
                yb, Y = multivector(rng, n_out, k, dtype, lay)
                Y0 = Y.copy()
                if beta == 0.0:
                    Y[...] = np.nan  # beta == 0 must not read y
                spy.calls.clear()
                f = A.rmatvec if transpose else A.matvec
                out = f(X, alpha=alpha, beta=beta, y=Y)
                assert out is Y
                assert len(spy.calls) == 1 and spy.calls[0][0] == "spmm"
                _, xs, ys, row = spy.calls[0]
                ly, lx = _layouts(Y.shape, Y.strides, Y.itemsize), \
                    _layouts(X.shape, X.strides, X.itemsize)
                assert ys is Y and row == (ly[0] is not None)
                if lx[0 if row else 1] is not None:
                    assert xs is X, "x in y's layout is not copied"
                    in_place += 1
                ref = reference(S, X, alpha, beta, Y0, transpose)
                assert np.all(np.isfinite(Y))
                assert np.all(np.abs(Y - ref) <= bound(S, X, dtype, alpha, beta, Y0,
                                                       transpose)), (mb, nb, bs, k, lay)
                # the padding (NaN) around the view is still NaN
                assert np.isnan(yb).sum() == yb.size - Y.size
    assert in_place >= 50


@pytest.mark.parametrize("order", ["row", "col"])
def test_operators_and_new_arrays(rng, order):
    S = random_bsr(rng, 12, 9, 3)
    A = bsrmv.BSRMatrix.from_arrays(S.data, S.indices, S.indptr, S.shape)
    if order == "col":
        A = bsrmv.BSRMatrix.from_arrays(np.ascontiguousarray(S.data.transpose(0, 2, 1)),
                                        S.indices, S.indptr, S.shape, order="col")
    for xorder in ("C", "F"):
        X = np.asarray(rng.uniform(-1, 1, (27, 6)), order=xorder)
        Y = A @ X
        # a new y takes x's layout, so neither is converted
        assert Y.flags.c_contiguous if xorder == "C" else Y.flags.f_contiguous
        assert np.all(np.abs(Y - S @ X) <= bound(S, X, np.float64, 1, 0, Y, False))
        W = np.asarray(rng.uniform(-1, 1, (36, 4)), order=xorder)
        assert np.allclose(A.T @ W, S.T @ W, rtol=0, atol=1e-13)
        assert np.array_equal(A.T @ W, A.rmatvec(W))
    L = A.aslinearoperator()
    X = rng.uniform(-1, 1, (27, 5))
    assert np.allclose(L.matmat(X), S @ X, rtol=0, atol=1e-13)
    # A real matrix's conjugate transpose is its transpose: one SpMM too.
    spy = spy_on(A)
    W = rng.uniform(-1, 1, (36, 5))
    assert np.allclose(L.rmatmat(W), S.T @ W, rtol=0, atol=1e-13)
    assert [c[0] for c in spy.calls] == ["spmm"]


def test_converted_once(rng):
    """x in another dtype or in neither layout is converted (once); the
    result is the same."""
    S = random_bsr(rng, 8, 8, 4)
    A = bsrmv.BSRMatrix.from_scipy(S)
    spy = spy_on(A)
    big = rng.uniform(-1, 1, (64, 12))
    for X in (big[::2, ::2], big[::2, :6].astype(np.float32), big[:32, :6].tolist()):
        spy.calls.clear()
        Y = A @ X
        assert len(spy.calls) == 1 and spy.calls[0][0] == "spmm"
        assert np.allclose(Y, S @ np.asarray(X, dtype=np.float64), rtol=0, atol=1e-13)
    # into a Fortran y: x converted to column-major
    Y = np.zeros((32, 6), order="F")
    A.matvec(big[::2, ::2], y=Y)
    assert spy.calls[-1][3] is False and spy.calls[-1][1].flags.f_contiguous
    assert np.allclose(Y, S @ big[::2, ::2], rtol=0, atol=1e-13)


def test_empty_shapes(rng):
    S = random_bsr(rng, 5, 4, 2)
    A = bsrmv.BSRMatrix.from_scipy(S)
    assert (A @ np.ones((8, 0))).shape == (10, 0)
    E = bsrmv.BSRMatrix.from_scipy(random_bsr(rng, 0, 3, 2))
    assert (E @ np.ones((6, 4))).shape == (0, 4)
    Z = bsrmv.BSRMatrix.from_scipy(random_bsr(rng, 3, 0, 2))
    Y = np.full((6, 3), 2.0, order="F")
    Z.matvec(np.ones((0, 3)), alpha=1.0, beta=0.5, y=Y)
    assert np.array_equal(Y, np.ones((6, 3)))


def test_bad_inputs(rng):
    S = random_bsr(rng, 4, 3, 2)
    A = bsrmv.BSRMatrix.from_scipy(S)
    X = rng.uniform(-1, 1, (6, 3))
    with pytest.raises(bsrmv.DimensionError, match="x has 5 rows, expected 6"):
        A @ X[:5]
    with pytest.raises(bsrmv.DimensionError, match=r"y has shape \(8, 2\), expected \(8, 3\)"):
        A.matvec(X, y=np.zeros((8, 2)))
    with pytest.raises(bsrmv.ArgumentError, match="y is float32"):
        A.matvec(X, y=np.zeros((8, 3), dtype=np.float32))
    with pytest.raises(bsrmv.ArgumentError, match="beta != 0 needs y="):
        A.matvec(X, beta=1.0)
    with pytest.raises(bsrmv.ArgumentError, match="row-major or column-major"):
        A.matvec(X, y=np.zeros((16, 6))[::2, ::2])
    ro = np.zeros((8, 3))
    ro.flags.writeable = False
    with pytest.raises(bsrmv.ArgumentError, match="read-only"):
        A.matvec(X, y=ro)
    with pytest.raises(bsrmv.ArgumentError, match="complex"):
        A @ X.astype(np.complex128)
    with pytest.raises(bsrmv.ArgumentError, match="complex alpha or beta"):
        A.matvec(X, alpha=1j)
    # x and y in the same memory: the library refuses the overlap
    Z = np.zeros((8, 3))
    with pytest.raises(bsrmv.ArgumentError, match="overlap"):
        A.T.matvec(Z, y=Z[:6])
    with pytest.raises(bsrmv.DimensionError, match="1-D or 2-D"):
        A @ np.ones((6, 3, 1))
