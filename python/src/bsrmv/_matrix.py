"""Host BSR matrices over the C library."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._errors import ArgumentError, DimensionError

_INT32_MAX = np.iinfo(np.int32).max


def _value_dtype(dt: np.dtype) -> np.dtype:
    """float32 and float64 stay; any other real type computes in float64."""
    if dt == np.float32 or dt == np.float64:
        return np.dtype(dt)
    if np.issubdtype(dt, np.complexfloating):
        raise ArgumentError(f"complex values ({dt}) are not supported")
    return np.dtype(np.float64)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.size > 0 and np.shares_memory(a, b))


class BSRMatrix:
    """A square-block BSR matrix the library computes with.

    Build one with :meth:`from_scipy`, :meth:`from_arrays`,
    :func:`bsrmv.read_mtx` or :func:`bsrmv.grid`.

    Sharing: where the arrays allow it, the matrix reads the caller's
    ``data`` and ``indices`` in place (no copy) and keeps them alive for as
    long as it lives; changing values in ``data`` changes the next result,
    changing the structure (indices, indptr) is not allowed.  ``shared``
    tells which arrays are shared.  An int32 or int64 C-contiguous
    ``indptr`` is read in place (the library takes both widths; scipy's is
    usually int32), other integer types are copied to int64; int64 column
    indices are copied to int32; values that are not float32/float64 or not
    C-contiguous are copied (``copy=False`` turns any copy of ``data`` or
    ``indices`` into an error).

    Thread safety: SpMV and solves release the GIL and may run on the same
    matrix from several threads at once.
    """

    __slots__ = ("_m", "_keep", "shape", "dtype", "blocksize", "nnzb", "order", "shared")

    def __init__(self, core: "_core.Matrix", keep: Optional[tuple] = None,
                 shared: Optional[dict] = None) -> None:
        self._m = core
        self._keep = keep
        bs = core.bs
        self.shape: Tuple[int, int] = (core.mb * bs, core.nb * bs)
        self.dtype = np.dtype(np.float64 if core.is_double else np.float32)
        self.blocksize: int = bs
        self.nnzb: int = core.nnzb
        self.order: str = "row" if core.row_major else "col"
        self.shared = shared or {"data": False, "indices": False, "indptr": False}

    # ---- construction ---------------------------------------------------
    @classmethod
    def from_arrays(cls, data: Any, indices: Any, indptr: Any, shape: Tuple[int, int],
                    blocksize: Optional[int] = None, *, order: str = "row",
                    copy: Optional[bool] = None) -> "BSRMatrix":
        """BSR arrays as scipy stores them.

        data: (nnzb, bs, bs) blocks, or nnzb*bs*bs values with ``blocksize``;
        ``order`` "row" (scipy's layout) or "col" for the entries inside a
        block.  indices: nnzb block-column indices, sorted and unique within
        each block row.  indptr: mb+1 offsets.  copy: None shares what it
        can, False refuses to copy data or indices, True copies everything
        into library-owned memory.
        """
        if order not in ("row", "col"):
            raise ArgumentError(f"order must be 'row' or 'col', not {order!r}")
        data_in = np.asarray(data)
        if blocksize is None:
            if data_in.ndim != 3:
                raise ArgumentError("data must be (nnzb, bs, bs) blocks, or pass blocksize=")
            blocksize = data_in.shape[1]
        bs = int(blocksize)
        if data_in.ndim == 3 and data_in.shape[1:] != (bs, bs):
            raise ArgumentError(f"blocks must be square bs x bs, got {data_in.shape[1:]}")
        m, n = (int(s) for s in shape)
        if bs < 1 or m % bs or n % bs:
            raise DimensionError(f"shape {(m, n)} is not a multiple of the block size {bs}")

        vdt = _value_dtype(data_in.dtype)
        val = np.ascontiguousarray(data_in, dtype=vdt)
        ind_in = np.asarray(indices)
        ptr_in = np.asarray(indptr)
        for name, a in (("indices", ind_in), ("indptr", ptr_in)):
            if a.ndim != 1 or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
                raise ArgumentError(f"{name} must be a one-dimensional integer array "
                                    f"(got {a.ndim}-D {a.dtype})")
        if ind_in.dtype != np.int32 and ind_in.size and (
                ind_in.max(initial=0) > _INT32_MAX or ind_in.min(initial=0) < 0):
            raise ArgumentError("block-column indices must lie in [0, 2**31)")
        col = np.ascontiguousarray(ind_in, dtype=np.int32)
        row = np.ascontiguousarray(
            ptr_in, dtype=np.int32 if ptr_in.dtype == np.int32 else np.int64)
        shared = {"data": _same(val, data_in), "indices": _same(col, ind_in),
                  "indptr": _same(row, ptr_in)}
        if copy is False and not (shared["data"] and shared["indices"]):
            what = [k for k in ("data", "indices") if not shared[k]]
            raise ArgumentError(
                f"copy=False but {' and '.join(what)} cannot be used in place (need float32/"
                f"float64 C-contiguous values and int32 C-contiguous indices)")
        keep = (row, col, val)
        make = _core.Matrix.make_i32 if row.dtype == np.int32 else _core.Matrix.make
        core = make(row, col, val.reshape(-1), m // bs, n // bs, bs, order == "row", bool(copy),
                    keep)
        if copy:
            return cls(core)
        return cls(core, keep, shared)

    @classmethod
    def from_scipy(cls, A: Any, *, copy: Optional[bool] = None) -> "BSRMatrix":
        """A scipy ``bsr_array``/``bsr_matrix`` with square blocks.

        The blocks (row-major in scipy) and int32 column indices are used in
        place; see the class notes for what is copied.  The library needs
        sorted column indices without duplicates (scipy's canonical format;
        ``tobsr()`` does not always give it): with copy=None a matrix not in
        that format is brought to it in a copy (``shared`` then says
        nothing is shared; call ``A.sum_duplicates()`` on yours first to
        share it), with copy=False the library's check raises
        :class:`bsrmv.StructureError` naming the block row.
        """
        fmt = getattr(A, "format", None)
        if fmt != "bsr":
            raise ArgumentError(f"from_scipy needs a scipy BSR array/matrix, got format {fmt!r}"
                                " (convert with .tobsr(blocksize=(bs, bs)))")
        r, c = A.blocksize
        if r != c:
            raise ArgumentError(f"blocks must be square, got blocksize {A.blocksize}")
        if copy is None and not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
            M = cls.from_arrays(A.data, A.indices, A.indptr, A.shape, r, order="row")
            M.shared = {k: False for k in M.shared}
            return M
        return cls.from_arrays(A.data, A.indices, A.indptr, A.shape, r, order="row", copy=copy)

    def to_scipy(self) -> Any:
        """The matrix as a ``scipy.sparse.bsr_array``; values are shared where
        the blocks are row-major (scipy may re-type the index arrays)."""
        import scipy.sparse as sp

        row, col, val = self._arrays()
        if self.order == "col":
            val = np.ascontiguousarray(val.transpose(0, 2, 1))
        return sp.bsr_array((val, col, row), shape=self.shape, copy=False)

    def _arrays(self):
        if self._keep is not None:
            row, col, val = self._keep
            bs = self.blocksize
            return row, col, val.reshape(-1, bs, bs)
        return self._m.arrays()

    # ---- products -------------------------------------------------------
    def _vec(self, x: Any, n: int, name: str) -> np.ndarray:
        x = np.asarray(x)
        if x.dtype != self.dtype or not x.flags.c_contiguous:
            if np.issubdtype(x.dtype, np.complexfloating):
                raise ArgumentError(f"{name} is complex; the matrix is {self.dtype}")
            x = np.ascontiguousarray(x, dtype=self.dtype)
        if x.shape[0] != n:
            raise DimensionError(f"{name} has {x.shape[0]} rows, expected {n}")
        return x

    def _apply(self, op: int, x: Any, alpha: float, beta: float, y: Any) -> np.ndarray:
        # Fast path: NumPy vectors as the library takes them; the binding
        # checks contiguity, writability and lengths, and refuses anything
        # else with a TypeError, which sends it down the converting path.
        if type(x) is np.ndarray and x.dtype is self.dtype:
            if y is None and beta == 0.0 and x.ndim == 1:
                y = np.empty(self.shape[op], dtype=self.dtype)
                try:
                    self._m.spmv(op, alpha, x, 0.0, y)
                    return y
                except TypeError:
                    y = None
            elif type(y) is np.ndarray and y.dtype is self.dtype:
                try:
                    self._m.spmv(op, alpha, x, beta, y)
                    return y
                except TypeError:
                    pass
        return self._apply_slow(op, x, alpha, beta, y)

    def _apply_slow(self, op: int, x: Any, alpha: float, beta: float, y: Any) -> np.ndarray:
        n_in, n_out = (self.shape[1], self.shape[0]) if op == 0 else self.shape
        x = self._vec(x, n_in, "x")
        if x.ndim == 2:
            return self._apply_columns(op, x, alpha, beta, y, n_out)
        if x.ndim != 1:
            raise DimensionError(f"x must be 1-D or 2-D, got {x.ndim}-D")
        if y is None:
            if beta != 0.0:
                raise ArgumentError("beta != 0 needs y=")
            y = np.empty(n_out, dtype=self.dtype)
        else:
            self._check_out(y, (n_out,))
        self._m.spmv(op, alpha, x, beta, y)
        return y

    def _check_out(self, y: Any, shape: tuple) -> None:
        if not isinstance(y, np.ndarray):
            raise ArgumentError("y must be a NumPy array")
        if y.dtype != self.dtype:
            raise ArgumentError(f"y is {y.dtype}, the matrix is {self.dtype} (y is written in"
                                " place, so it is not converted)")
        if y.shape != shape:
            raise DimensionError(f"y has shape {y.shape}, expected {shape}")
        if not y.flags.writeable:
            raise ArgumentError("y is read-only")

    def _apply_columns(self, op, x, alpha, beta, y, n_out):
        k = x.shape[1]
        if y is None:
            if beta != 0.0:
                raise ArgumentError("beta != 0 needs y=")
            y = np.empty((n_out, k), dtype=self.dtype)
        else:
            self._check_out(y, (n_out, k))
        xc = np.empty(x.shape[0], dtype=self.dtype)
        yc = np.empty(n_out, dtype=self.dtype)
        for j in range(k):
            xc[:] = x[:, j]
            if beta != 0.0:
                yc[:] = y[:, j]
            self._m.spmv(op, alpha, xc, beta, yc)
            y[:, j] = yc
        return y

    def matvec(self, x: Any, alpha: float = 1.0, beta: float = 0.0,
               y: Optional[np.ndarray] = None) -> np.ndarray:
        """y = alpha*A@x + beta*y; returns y.

        x (length ncols, or ncols x k) is converted to the matrix dtype and
        made contiguous if needed.  y, if given, is written in place and must
        already be of the matrix dtype, C-contiguous and the right shape.
        beta == 0 never reads y (NaN in y does not propagate)."""
        return self._apply(0, x, alpha, beta, y)

    def rmatvec(self, x: Any, alpha: float = 1.0, beta: float = 0.0,
                y: Optional[np.ndarray] = None) -> np.ndarray:
        """y = alpha*A.T@x + beta*y (x of length nrows); as :meth:`matvec`."""
        return self._apply(1, x, alpha, beta, y)

    def __matmul__(self, x: Any) -> np.ndarray:
        return self._apply(0, x, 1.0, 0.0, None)

    @property
    def T(self) -> "TransposedBSRMatrix":
        """The transpose as a view (no copy): ``A.T @ x`` runs op = T."""
        return TransposedBSRMatrix(self)

    def aslinearoperator(self) -> Any:
        """A ``scipy.sparse.linalg.LinearOperator`` over this matrix."""
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.rmatvec,
                              matmat=self.matvec, rmatmat=self.rmatvec, dtype=self.dtype)

    @property
    def nbytes(self) -> float:
        """Bytes one SpMV moves at least (values, indices, row pointers, x, y)."""
        return self._m.spmv_bytes

    def __repr__(self) -> str:
        return (f"<bsrmv.BSRMatrix {self.shape[0]}x{self.shape[1]}, bs={self.blocksize}, "
                f"nnzb={self.nnzb}, {self.dtype}, {self.order}-major blocks>")


class TransposedBSRMatrix:
    """``A.T``: products with the transpose of a :class:`BSRMatrix`."""

    __slots__ = ("_a",)

    def __init__(self, a: BSRMatrix) -> None:
        self._a = a

    @property
    def shape(self) -> Tuple[int, int]:
        return (self._a.shape[1], self._a.shape[0])

    @property
    def dtype(self) -> np.dtype:
        return self._a.dtype

    @property
    def T(self) -> BSRMatrix:
        return self._a

    def matvec(self, x: Any, alpha: float = 1.0, beta: float = 0.0,
               y: Optional[np.ndarray] = None) -> np.ndarray:
        return self._a.rmatvec(x, alpha, beta, y)

    def __matmul__(self, x: Any) -> np.ndarray:
        return self._a.rmatvec(x)


def read_mtx(path: str, bs: int, blocking: str = "split", *, dtype: Any = np.float64,
             seed: int = 0) -> BSRMatrix:
    """Read a Matrix Market file (.mtx or .mtx.gz) into bs x bs blocks.

    blocking="split" cuts aligned blocks (zero-filled, padded to a multiple
    of bs); "promote" turns every scalar into a dense block with values
    drawn from ``seed`` (the KSPARSE test-matrix method).  Blocks are
    row-major, so :meth:`BSRMatrix.to_scipy` shares them."""
    if blocking not in ("split", "promote"):
        raise ArgumentError(f"blocking must be 'split' or 'promote', not {blocking!r}")
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ArgumentError(f"dtype must be float32 or float64, not {dt}")
    return BSRMatrix(_core.Matrix.read_mtx(str(path), int(bs), blocking == "promote", int(seed),
                                           dt == np.float64))


def grid(n: int, bs: int, *, points: int = 27, dtype: Any = np.float64, seed: int = 1,
         order: str = "row", shape3d: Optional[Tuple[int, int, int]] = None) -> BSRMatrix:
    """The library's test matrix: an n x n x n grid (or ``shape3d``) of
    nodes with bs unknowns each, coupled by a 7- or 27-point stencil (one
    dense block per neighbour, diagonally dominant), built in C."""
    if order not in ("row", "col"):
        raise ArgumentError(f"order must be 'row' or 'col', not {order!r}")
    nx, ny, nz = shape3d if shape3d is not None else (n, n, n)
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ArgumentError(f"dtype must be float32 or float64, not {dt}")
    return BSRMatrix(_core.Matrix.generate_grid(nx, ny, nz, bs, points, seed, dt == np.float64,
                                                order == "row"))


def set_num_threads(n: int) -> None:
    """Threads for every later SpMV and solve, from any Python thread (the
    default is OpenMP's: OMP_NUM_THREADS or the core count)."""
    _core.set_num_threads(int(n))


def get_num_threads() -> int:
    """Threads an SpMV started now would use."""
    return _core.get_num_threads()
