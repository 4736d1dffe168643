"""Complex values: complex64/complex128 matrices from arrays and scipy, their
products (A, A.T, A.H, complex alpha and beta, several vectors), symmetric
and Hermitian storage, and the solvers."""
import numpy as np
import pytest
import scipy.sparse as sp

import bsrmv
from conftest import cvec, hermitian, random_bsr, random_complex, tol_for

CTYPES = [np.complex128, np.complex64]
SCALARS = [(1.0, 0.0), (0.0, 1.0), (0.75 - 0.5j, 0.0), (2.0, 1.0 + 0.25j), (0.5j, -0.25)]


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("bs", [1, 2, 3, 5, 8, 11])
def test_products_match_scipy(rng, bs, dtype):
    for mb, nb in ((1, 1), (7, 5), (12, 12)):
        S = random_complex(rng, mb, nb, bs, dtype)
        for order in ("row", "col"):
            data = S.data if order == "row" else np.ascontiguousarray(S.data.transpose(0, 2, 1))
            A = bsrmv.BSRMatrix.from_arrays(data, S.indices, S.indptr, S.shape, order=order)
            assert A.dtype == dtype and A.vector_dtype == dtype
            D = S.toarray().astype(np.complex128)
            x = cvec(rng, S.shape[1], dtype)
            xt = cvec(rng, S.shape[0], dtype)
            y0 = cvec(rng, S.shape[0], dtype)
            for alpha, beta in SCALARS:
                y = y0.copy() if beta != 0 else np.full(S.shape[0], np.nan, dtype=dtype)
                A.matvec(x, alpha=alpha, beta=beta, y=y)
                ref = alpha * (D @ x) + (beta * y0 if beta != 0 else 0)
                assert np.all(np.abs(y - ref) <= tol_for(dtype, S, x) * (1 + abs(beta)))
            assert np.allclose(A.T @ xt, D.T @ xt, rtol=1e-4, atol=1e-4)
            assert np.allclose(A.H @ xt, D.conj().T @ xt, rtol=1e-4, atol=1e-4)
            X = np.stack([cvec(rng, S.shape[1], dtype) for _ in range(3)], axis=1)
            assert np.allclose(A @ X, D @ X, rtol=1e-4, atol=1e-4)


def test_from_scipy_and_back(rng):
    S = random_complex(rng, 6, 6, 3, np.complex128)
    A = bsrmv.BSRMatrix.from_scipy(S)
    assert A.shared["data"]
    assert np.array_equal(A.to_scipy().toarray(), S.toarray())
    x = cvec(rng, 18, np.complex128)
    assert np.allclose(A.aslinearoperator().rmatvec(x), S.toarray().conj().T @ x)


@pytest.mark.parametrize("dtype", CTYPES)
def test_hermitian_and_symmetric_storage(rng, dtype):
    for bs in (1, 3, 4, 9):
        H = hermitian(rng, 10, bs, dtype)
        A = bsrmv.BSRMatrix.from_scipy(H, hermitian=True)
        assert A.hermitian and A.symmetric and "Hermitian" in repr(A)
        D = H.toarray().astype(np.complex128)
        x = cvec(rng, H.shape[0], dtype)
        for op, M in ((A, D), (A.T, D.T), (A.H, D.conj().T)):
            assert np.allclose(op @ x, M @ x, rtol=1e-4, atol=1e-4)
        y = A.matvec(x, alpha=0.5 - 1j)
        assert np.allclose(y, (0.5 - 1j) * (D @ x), rtol=1e-4, atol=1e-4)
        assert np.array_equal(A.to_full().to_scipy().toarray(), H.toarray())
        # complex symmetric: A = A^T
        C = random_complex(rng, 10, 10, bs, dtype)
        C = (C + C.T).tobsr(blocksize=(bs, bs))
        C.sum_duplicates()
        B = bsrmv.BSRMatrix.from_scipy(C, symmetric=True)
        assert B.symmetric and not B.hermitian
        DC = C.toarray().astype(np.complex128)
        assert np.allclose(B @ x, DC @ x, rtol=1e-4, atol=1e-4)
        assert np.allclose(B.H @ x, DC.conj().T @ x, rtol=1e-4, atol=1e-4)
        with pytest.raises(bsrmv.ArgumentError, match="not Hermitian"):
            bsrmv.BSRMatrix.from_scipy(C, hermitian=True, tol=1e-3)


@pytest.mark.parametrize("dtype", CTYPES)
def test_several_vectors(rng, dtype):
    """(n, k) x in one SpMM call: A, A.T and A.H of full, Hermitian and
    complex symmetric storage, complex alpha and beta into a given y of
    either layout (NaN where beta == 0)."""
    for bs in (1, 3, 5):
        S = random_complex(rng, 9, 9, bs, dtype)
        C = (S + S.T).tobsr(blocksize=(bs, bs))
        C.sum_duplicates()
        H = hermitian(rng, 9, bs, dtype)
        cases = ((bsrmv.BSRMatrix.from_scipy(S), S), (bsrmv.BSRMatrix.from_scipy(C, symmetric=True), C),
                 (bsrmv.BSRMatrix.from_scipy(H, hermitian=True), H))
        for A, M in cases:
            D = M.toarray().astype(np.complex128)
            n = D.shape[0]
            for k in (2, 5, 17):
                X = np.stack([cvec(rng, n, dtype) for _ in range(k)], axis=1)
                for op, R in ((A, D), (A.T, D.T), (A.H, D.conj().T)):
                    assert np.allclose(op @ X, R @ X, rtol=1e-4, atol=1e-4)
                for order in ("C", "F"):
                    for alpha, beta in SCALARS:
                        y0 = np.asarray(np.stack([cvec(rng, n, dtype) for _ in range(k)], axis=1), order=order)
                        y = y0.copy(order=order) if beta != 0 else np.full((n, k), np.nan, dtype=dtype, order=order)
                        A.matvec(X, alpha=alpha, beta=beta, y=y)
                        ref = alpha * (D @ X) + (beta * y0 if beta != 0 else 0)
                        assert np.allclose(y, ref, rtol=1e-4, atol=1e-4), (bs, k, order, alpha, beta)


@pytest.mark.parametrize("dtype", CTYPES)
def test_solvers(rng, dtype):
    tol = 1e-9 if dtype == np.complex128 else 1e-4
    n = 40
    # diagonally dominant, not Hermitian
    S = random_complex(rng, n // 2, n // 2, 2, np.complex128)
    D = S.toarray() + np.diag(np.abs(S.toarray()).sum(axis=1) * (1 + 0.5j) + 1)
    N = sp.bsr_array(D.astype(dtype), blocksize=(2, 2))
    A = bsrmv.BSRMatrix.from_scipy(N)
    b = cvec(rng, n, dtype)
    for method in ("bicgstab", "gmres"):
        for pc in ("block_jacobi", None):
            x, rep = bsrmv.solve(A, b, method, pc, tol=tol)
            assert rep.converged and x.dtype == dtype
            Dd = N.toarray().astype(np.complex128)
            assert np.linalg.norm(b - Dd @ x) <= 2 * tol * np.linalg.norm(b)
    # Hermitian positive definite: CG, full and Hermitian storage
    H = hermitian(rng, n // 4, 4, dtype, shift=40.0)
    Dh = H.toarray().astype(np.complex128)
    assert np.all(np.linalg.eigvalsh(Dh) > 0)
    for A in (bsrmv.BSRMatrix.from_scipy(H), bsrmv.BSRMatrix.from_scipy(H, hermitian=True)):
        x, rep = bsrmv.solve(A, b, "cg", tol=tol)
        assert rep.converged
        assert np.linalg.norm(b - Dh @ x) <= 2 * tol * np.linalg.norm(b)
    # an indefinite Hermitian matrix: CG must not claim a solution
    I = hermitian(rng, n // 4, 4, dtype, shift=0.0)
    I = (I - 40.0 * sp.eye_array(n)).tobsr(blocksize=(4, 4)).astype(dtype)
    x, rep = bsrmv.solve(bsrmv.BSRMatrix.from_scipy(I), b, "cg", None, tol=tol)
    assert not rep.converged and "positive definite" in rep.message


def test_errors(rng):
    S = random_complex(rng, 4, 4, 2, np.complex128)
    with pytest.raises(bsrmv.ArgumentError, match="complex128 vectors"):
        bsrmv.BSRMatrix.from_scipy(S, vector_dtype=np.float64)
    R = random_bsr(rng, 4, 4, 2)
    A = bsrmv.BSRMatrix.from_scipy(R)
    with pytest.raises(bsrmv.ArgumentError, match="complex alpha"):
        A.matvec(np.ones(8), alpha=1j)
    with pytest.raises(bsrmv.ArgumentError, match="complex"):
        A @ (np.ones(8) + 1j)
    C = bsrmv.BSRMatrix.from_scipy(S)
    with pytest.raises(bsrmv.ArgumentError):
        bsrmv.solve(C, cvec(rng, 8, np.complex128), refine=True)
    # a real vector is converted to the complex type
    assert np.allclose(C @ np.ones(8), S.toarray() @ np.ones(8))
