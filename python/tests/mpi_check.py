"""bsrmv.mpi on every rank of MPI.COMM_WORLD (run by test_mpi.py under
mpiexec with 1 and 3 ranks): products of scattered and per-rank matrices
against scipy's product of the whole matrix (float64, float32, complex128;
op N, T and H; one vector and several in both layouts; alpha and beta,
complex ones too; a rank without rows), a rectangular matrix, symmetric
storage, solves against the whole system, and the errors every rank must
see the same way.  Exits non-zero (MPI_Abort) on the first failure."""
import sys
import traceback

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import bsrmv
import bsrmv.mpi as bm

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
TOL = {np.float64: 1e-12, np.float32: 2e-5, np.complex128: 1e-12}


def random_bsr(mb, nb, bs, dtype, seed, density=0.15, dominant=False):
    """The same matrix on every rank (same seed); a fifth of the block
    rows empty."""
    rng = np.random.default_rng(seed)
    mask = rng.random((mb, nb)) < density
    mask[rng.random(mb) < 0.2] = False
    if dominant:
        mask[np.arange(mb), np.arange(mb)] = True
    d = sp.csr_array(mask.astype(np.float64))
    nnzb = d.nnz
    data = rng.standard_normal((nnzb, bs, bs))
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.standard_normal((nnzb, bs, bs))
    A = sp.bsr_array((data.astype(dtype), d.indices, d.indptr), shape=(mb * bs, nb * bs))
    if dominant:
        A = (A + sp.eye(mb * bs, dtype=dtype) * (4.0 * bs * mb * density + 8)).tobsr(
            blocksize=(bs, bs))
    A.sort_indices()
    return A


def close(what, got, want, dtype, tol=None):
    """Products: within 50 roundings of the type; solves: tol."""
    err = np.max(np.abs(got - want), initial=0.0)
    scale = max(np.max(np.abs(want), initial=0.0), 1.0)
    if not err <= (TOL[dtype] * 50 if tol is None else tol) * scale:
        raise AssertionError(f"rank {rank}: {what}: max error {err:.3g} (scale {scale:.3g})")


def vec(n, dtype, seed, k=None):
    rng = np.random.default_rng(seed)
    shape = (n,) if k is None else (n, k)
    v = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def check_products(what, D, G, dtype, seed):
    r0, r1 = D.row_range
    c0, c1 = D.col_range
    assert D.shape == G.shape, (D.shape, G.shape)
    assert D.local_shape == (r1 - r0, c1 - c0)
    cplx = np.dtype(dtype).kind == "c"
    alpha, beta = (0.5 - 1.25j, 2j) if cplx else (1.5, -0.5)
    x = vec(G.shape[1], dtype, seed)
    y0 = vec(G.shape[0], dtype, seed + 1)
    close(f"{what} A@x", D @ x[c0:c1], (G @ x)[r0:r1], dtype)
    y = y0[r0:r1].copy()
    D.matvec(x[c0:c1], alpha, beta, y)
    close(f"{what} alpha A x + beta y", y, alpha * (G @ x)[r0:r1] + beta * y0[r0:r1], dtype)
    xt = vec(G.shape[0], dtype, seed + 2)
    close(f"{what} A.T x", D.rmatvec(xt[r0:r1]), (G.T @ xt)[c0:c1], dtype)
    close(f"{what} A^H x", D.hmatvec(xt[r0:r1]), (G.conj().T @ xt)[c0:c1], dtype)
    X = vec(G.shape[1], dtype, seed + 3, k=4)
    want = (G @ X)[r0:r1]
    close(f"{what} A@X row-major", D @ np.ascontiguousarray(X[c0:c1]), want, dtype)
    Y = np.asfortranarray(np.zeros((r1 - r0, 4), dtype=dtype))
    D.matvec(np.asfortranarray(X[c0:c1]), 1.0, 0.0, Y)
    close(f"{what} A@X column-major", Y, want, dtype)
    XT = vec(G.shape[0], dtype, seed + 4, k=3)
    close(f"{what} A.T X", D.rmatvec(XT[r0:r1]), (G.T @ XT)[c0:c1], dtype)


def test_products():
    for t, dtype in enumerate((np.float64, np.float32, np.complex128)):
        bs = (2, 3, 4)[t]
        G = random_bsr(41, 41, bs, dtype, 10 + t)
        A = bsrmv.BSRMatrix.from_scipy(G) if rank == 0 else None
        D = bm.DistMatrix.scatter(comm, A)
        assert D.dtype == dtype and D.blocksize == bs and D.size == size
        check_products(f"scatter {np.dtype(dtype)} bs {bs}", D, G, dtype, 100 * t)
        D.free()
        # each rank's own rows, the last rank none (when there are several)
        nb = 41
        cuts = [nb * r // (size - 1) for r in range(size)] + [nb] if size > 1 else [0, nb]
        b0, b1 = cuts[rank], cuts[rank + 1]
        rows = G.tocsr()[b0 * bs:b1 * bs].tobsr(blocksize=(bs, bs))
        rows.sort_indices()
        D = bm.DistMatrix.from_local(comm, rows, G.shape, b0 * bs)
        assert D.row_range == (b0 * bs, b1 * bs)
        check_products(f"from_local {np.dtype(dtype)} bs {bs}", D, G, dtype, 200 * t)
        info = D.info
        assert info["nnzb_local"] + info["nnzb_offrank"] == len(rows.indices), info


def test_rectangular():
    G = random_bsr(30, 47, 3, np.float64, 7)
    D = bm.DistMatrix.scatter(comm, bsrmv.BSRMatrix.from_scipy(G) if rank == 0 else None)
    check_products("rectangular", D, G, np.float64, 300)


def test_symmetric_and_solve():
    bs = 3
    B = random_bsr(50, 50, bs, np.float64, 21, density=0.08)
    S = (B + B.T + sp.eye(150) * 40.0).tobsr(blocksize=(bs, bs))
    S.sort_indices()
    A = bsrmv.BSRMatrix.from_scipy(S, symmetric=True) if rank == 0 else None
    D = bm.DistMatrix.scatter(comm, A)
    assert D.symmetric
    check_products("symmetric", D, S, np.float64, 400)
    r0, r1 = D.row_range
    b = vec(150, np.float64, 5)
    x, rep = D.solve(b[r0:r1], "cg")
    assert rep.converged, rep
    want = sp.linalg.spsolve(S.tocsc(), b)
    close("CG on symmetric storage", x, want[r0:r1], np.float64, 1e-6)
    # every rank has the same report
    assert comm.allreduce(rep.iterations, op=MPI.MAX) == comm.allreduce(rep.iterations,
                                                                         op=MPI.MIN)
    N = random_bsr(40, 40, 2, np.complex128, 22, dominant=True)
    D = bm.DistMatrix.scatter(comm, bsrmv.BSRMatrix.from_scipy(N) if rank == 0 else None)
    r0, r1 = D.row_range
    bc = vec(80, np.complex128, 6)
    for method in ("bicgstab", "gmres"):
        x, rep = D.solve(bc[r0:r1], method, tol=1e-11)
        assert rep.converged, (method, rep)
        close(f"{method} complex", x, sp.linalg.spsolve(N.tocsc(), bc)[r0:r1], np.complex128,
              1e-8)
    x, rep = D.solve(bc[r0:r1], "bicgstab", maxiter=1, precond=None)
    assert not rep.converged and rep.message, rep


def test_errors():
    G = random_bsr(20, 20, 2, np.float64, 3)
    D = bm.DistMatrix.scatter(comm, bsrmv.BSRMatrix.from_scipy(G) if rank == 0 else None)
    n = D.local_shape[1]
    try:
        D @ np.zeros(n + 1)
        raise AssertionError("a wrong x length was taken")
    except bsrmv.DimensionError:
        pass
    try:
        D @ np.zeros(n, dtype=np.complex128)
        raise AssertionError("complex x for a real matrix was taken")
    except bsrmv.ArgumentError:
        pass
    # every rank claims rows from 0: the ranges overlap (with several ranks),
    # and every rank gets the same error
    rows = G.tocsr()[0:4].tobsr(blocksize=(2, 2))
    if size > 1:
        try:
            bm.DistMatrix.from_local(comm, rows, G.shape, 0)
            raise AssertionError("overlapping row ranges were taken")
        except bsrmv.StructureError as e:
            assert "rank" in str(e), str(e)
    D.free()
    try:
        D @ np.zeros(n)
        raise AssertionError("a freed matrix was used")
    except bsrmv.ArgumentError:
        pass
    try:
        bm.DistMatrix.scatter("not a communicator", None)
        raise AssertionError("a bad communicator was taken")
    except bsrmv.ArgumentError:
        pass


def main():
    assert bm.available()
    for t in (test_products, test_rectangular, test_symmetric_and_solve, test_errors):
        t()
        comm.Barrier()
    if rank == 0:
        print(f"mpi_check: ok on {size} rank(s)")


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        comm.Abort(1)
