"""Distributed BSR matrices over MPI (the C library's ``bsrmv_mpi.h``),
with mpi4py communicators::

    from mpi4py import MPI
    import bsrmv.mpi as bm

    A = bm.DistMatrix.scatter(MPI.COMM_WORLD, G if rank == 0 else None)
    y = A @ x_local                     # this rank's rows of y
    x, report = A.solve(b_local, "cg")

Each rank owns a contiguous range of block rows (``row_range``) and holds
the entries of y for those rows and of x for its range of block columns
(``col_range``; for a square matrix the same range).  Every method that
communicates is collective: all ranks of the communicator call it in the
same order with the same scalar arguments.  Errors on any rank reach every
rank that depends on it as the package's exceptions, with the library's
message naming the rank.  The module needs a package built against the MPI
library that mpi4py runs on (``bsrmv.mpi.available()``).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._errors import ArgumentError, DimensionError
from ._matrix import BSRMatrix, _in_layout_of, _value_dtype
from ._solve import SolveReport, _args, _report

__all__ = ["DistMatrix", "available"]


def available() -> bool:
    """Whether this build of the package has the distributed matrices."""
    return bool(_core.has_mpi)


def _handle(comm: Any) -> int:
    if not available():
        raise ArgumentError("bsrmv was built without MPI (no bsrmv_mpi library found)")
    if isinstance(comm, int):
        return comm
    py2f = getattr(comm, "py2f", None)
    if py2f is None:
        raise ArgumentError("comm must be an mpi4py communicator (or its Fortran handle)")
    return int(py2f())


class DistMatrix:
    """A BSR matrix distributed by block rows over an MPI communicator.

    Build one with :meth:`scatter` (a whole matrix on one rank) or
    :meth:`from_local` (each rank's own rows).  The library copies the
    arrays.  ``shape`` is the global shape; ``local_shape`` this rank's
    part (rows of y, entries of x).  Products take and return this rank's
    entries only; the halo of x travels between neighbours behind the
    local product.  Symmetric storage (``symmetric`` True) holds each
    rank's diagonal and upper blocks and moves about half the bytes.

    Freeing is collective in MPI (persistent requests, a duplicated
    communicator): call :meth:`free` on every rank, or drop the matrix at
    the same point on every rank; after ``MPI_Finalize`` nothing is freed.
    """

    __slots__ = ("_m", "shape", "local_shape", "dtype", "blocksize", "row_range", "col_range",
                 "symmetric", "hermitian", "rank", "size")

    def __init__(self, core: "_core.DistMatrix") -> None:
        self._m = core
        i = core.info
        bs = i["bs"]
        self.blocksize: int = bs
        self.shape: Tuple[int, int] = (i["mb_global"] * bs, i["nb_global"] * bs)
        self.local_shape: Tuple[int, int] = (i["mb"] * bs, i["nb"] * bs)
        self.row_range = (i["row_begin"] * bs, (i["row_begin"] + i["mb"]) * bs)
        self.col_range = (i["col_begin"] * bs, (i["col_begin"] + i["nb"]) * bs)
        self.dtype = np.dtype(i["dtype_name"])
        self.symmetric: bool = i["symmetric"] != 0
        self.hermitian: bool = i["symmetric"] == 2
        self.rank: int = i["rank"]
        self.size: int = i["size"]

    # ---- construction ---------------------------------------------------
    @classmethod
    def scatter(cls, comm: Any, A: Optional[BSRMatrix], root: int = 0,
                row_starts: Optional[Sequence[int]] = None) -> "DistMatrix":
        """Collective: distribute the :class:`bsrmv.BSRMatrix` ``A`` given on
        ``root`` (None, or anything, elsewhere: only root's is read) by
        block rows.  row_starts (on root): size+1 block-row offsets, rank r
        getting rows [row_starts[r], row_starts[r+1]); None balances the
        stored blocks plus rows.  A square matrix uses the row partition for
        x too; a matrix in symmetric storage stays in it."""
        h = _handle(comm)
        g = None
        if isinstance(A, BSRMatrix):
            row, col, val = A._arrays()
            if row.dtype != np.int64:  # scipy's int32 indptr: the library scatters int64 ones
                A = BSRMatrix.from_arrays(val, col, row.astype(np.int64), A.shape,
                                          order=A.order)
            g = A._m
        starts = np.ascontiguousarray(row_starts if row_starts is not None else [],
                                      dtype=np.int64)
        return cls(_core.DistMatrix.scatter(h, int(root), g, starts))

    @classmethod
    def from_local(cls, comm: Any, local: Any, shape: Tuple[int, int], row_begin: int,
                   col_begin: Optional[int] = None, ncols: Optional[int] = None, *,
                   symmetric: bool = False, hermitian: bool = False) -> "DistMatrix":
        """Collective: each rank passes its own block rows.

        local: a scipy ``bsr_array``/``bsr_matrix`` of this rank's rows with
        *global* column indices (shape (rows, shape[1]), square blocks), or
        a tuple (data, indices, indptr) of the same arrays (data (nnzb, bs,
        bs), row-major blocks).  shape: the global shape.  row_begin: the
        first global row (a multiple of bs).  col_begin, ncols: this rank's
        range of x (default: its rows' range, for square matrices).  The
        ranges must tile the matrix in rank order (else
        :class:`bsrmv.StructureError` on every rank).  symmetric=True (or
        hermitian=True for complex data): the rows hold their diagonal and
        upper blocks only, x on the same range as the rows."""
        h = _handle(comm)
        if isinstance(local, tuple):
            data, indices, indptr = local
        elif getattr(local, "format", None) == "bsr":
            if local.blocksize[0] != local.blocksize[1]:
                raise ArgumentError(f"blocks must be square, got blocksize {local.blocksize}")
            if not local.has_canonical_format:
                local = local.copy()
                local.sum_duplicates()
            data, indices, indptr = local.data, local.indices, local.indptr
        else:
            raise ArgumentError("local must be a scipy BSR array/matrix or (data, indices, "
                                "indptr)")
        data = np.asarray(data)
        if data.ndim != 3 or data.shape[1] != data.shape[2]:
            raise ArgumentError("data must be (nnzb, bs, bs) square blocks")
        bs = data.shape[1]
        m, n = (int(s) for s in shape)
        rows = (len(indptr) - 1) * bs
        if m % bs or n % bs or row_begin % bs:
            raise DimensionError(f"shape {(m, n)} and row_begin {row_begin} must be multiples "
                                 f"of the block size {bs}")
        col_begin = row_begin if col_begin is None else int(col_begin)
        ncols = rows if ncols is None else int(ncols)
        if col_begin % bs or ncols % bs:
            raise DimensionError(f"col_begin and ncols must be multiples of the block size {bs}")
        val = np.ascontiguousarray(data, dtype=_value_dtype(data.dtype))
        core = _core.DistMatrix.create(
            h, m // bs, n // bs, bs, row_begin // bs, col_begin // bs, ncols // bs,
            np.ascontiguousarray(indptr, dtype=np.int64),
            np.ascontiguousarray(indices, dtype=np.int64), val.reshape(-1), True,
            2 if hermitian else 1 if symmetric else 0)
        return cls(core)

    def free(self) -> None:
        """Collective: release the matrix now (the halo's persistent requests
        and the duplicated communicator); later calls raise."""
        self._m.free()

    # ---- products -------------------------------------------------------
    def _apply(self, op: int, x: Any, alpha: Any, beta: Any, y: Any) -> np.ndarray:
        n_in, n_out = (self.local_shape[1], self.local_shape[0]) if op == 0 else self.local_shape
        dt = self.dtype
        x = np.asarray(x)
        if np.iscomplexobj(x) and dt.kind != "c":
            raise ArgumentError(f"x is complex; the matrix is {dt}")
        if x.ndim not in (1, 2) or x.shape[0] != n_in:
            raise DimensionError(f"x has shape {x.shape}; this rank's part has {n_in} rows")
        if x.ndim == 1:
            x = np.ascontiguousarray(x, dtype=dt)
            shape = (n_out,)
        else:
            shape = (n_out, x.shape[1])
        if y is None:
            if beta != 0:
                raise ArgumentError("beta != 0 needs y=")
            y = np.empty(shape, dtype=dt)
        elif not isinstance(y, np.ndarray) or y.dtype != dt or y.shape != shape:
            raise ArgumentError(f"y must be a NumPy {dt} array of shape {shape} (it is written "
                                "in place)")
        if x.ndim == 1:
            if not y.flags.c_contiguous:
                raise ArgumentError("y must be C-contiguous")
            self._m.spmv(op, complex(alpha), x, complex(beta), y)
            return y
        x, row = _in_layout_of(y, x, dt)
        self._m.spmm(op, complex(alpha), x, complex(beta), y, row)
        return y

    def matvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0,
               y: Optional[np.ndarray] = None) -> np.ndarray:
        """Collective: this rank's rows of y = alpha*A@x + beta*y from its
        entries of x (1-D, or 2-D for several vectors in one exchange per
        neighbour); y, if given, is written in place."""
        return self._apply(0, x, alpha, beta, y)

    def rmatvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0,
                y: Optional[np.ndarray] = None) -> np.ndarray:
        """Collective: y = alpha*A.T@x + beta*y (x on this rank's rows, y on
        its columns)."""
        return self._apply(1, x, alpha, beta, y)

    def hmatvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0,
                y: Optional[np.ndarray] = None) -> np.ndarray:
        """Collective: y = alpha*A^H@x + beta*y (A.T for a real matrix)."""
        return self._apply(2, x, alpha, beta, y)

    def __matmul__(self, x: Any) -> np.ndarray:
        return self._apply(0, x, 1.0, 0.0, None)

    # ---- solves ---------------------------------------------------------
    def solve(self, b: Any, method: str = "cg", precond: Optional[str] = "block_jacobi", *,
              tol: Optional[float] = None, maxiter: int = 1000, restart: int = 30,
              x0: Any = None) -> Tuple[np.ndarray, SolveReport]:
        """Collective: solve A x = b with b and x this rank's rows, as
        :func:`bsrmv.solve` (the same methods, tolerances and report, the
        dot products summed over the ranks; block Jacobi on each rank's
        diagonal blocks).  Every rank gets the same report."""
        mi, pc, tol = _args(method, precond, tol, self.dtype)
        if maxiter < 1:
            raise ArgumentError("maxiter must be >= 1")
        n = self.local_shape[0]
        bv = np.ascontiguousarray(b, dtype=self.dtype)
        if bv.shape != (n,):
            raise DimensionError(f"b has shape {bv.shape}; this rank has {n} rows")
        x = np.zeros(n, dtype=self.dtype) if x0 is None else \
            np.array(np.asarray(x0, dtype=self.dtype), copy=True)
        if x.shape != (n,):
            raise DimensionError(f"x0 has shape {x.shape}; this rank has {n} rows")
        return x, _report(self._m.solve(mi, pc, bv, x, tol, int(maxiter), int(restart),
                                        x0 is None))

    @property
    def info(self) -> dict:
        """This rank's part: block ranges, stored blocks (local and in other
        ranks' columns), ghost block columns, neighbours, halo bytes."""
        return dict(self._m.info)

    def __repr__(self) -> str:
        return (f"<bsrmv.mpi.DistMatrix {self.shape[0]}x{self.shape[1]} {self.dtype} "
                f"bs={self.blocksize}, rank {self.rank}/{self.size} rows "
                f"{self.row_range[0]}:{self.row_range[1]}"
                f"{', symmetric' if self.symmetric else ''}>")
