"""Host BSR matrices over the C library."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._errors import ArgumentError, DimensionError, SizeOverflowError

_INT32_MAX = np.iinfo(np.int32).max


def _value_dtype(dt: np.dtype) -> np.dtype:
    """float32, float64, complex64 and complex128 stay; any other complex
    type computes in complex128, any other real type in float64."""
    if dt in (np.float32, np.float64, np.complex64, np.complex128):
        return np.dtype(dt)
    if np.issubdtype(dt, np.complexfloating):
        return np.dtype(np.complex128)
    return np.dtype(np.float64)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.size > 0 and np.shares_memory(a, b))


def _real_dtype(dt: Any, name: str) -> np.dtype:
    d = np.dtype(dt)
    if d not in (np.float32, np.float64):
        raise ArgumentError(f"{name} must be float32 or float64, not {d}")
    return d


def _layouts(shape: Tuple[int, ...], strides: Tuple[int, ...], itemsize: int):
    """(ld of the row layout, ld of the column layout) of a 2-D array, in
    elements, each None where the array is not in that layout: unit stride
    along the rows (row) or down the columns (col), and the other stride a
    positive whole number of elements that keeps rows (columns) apart.  A
    dimension of one entry has no stride to check."""
    n, k = shape
    if n == 0 or k == 0:
        return max(k, 1), max(n, 1)
    out = []
    for inner, unit, outer, step in ((k, strides[1], n, strides[0]),
                                     (n, strides[0], k, strides[1])):
        ok = inner == 1 or unit == itemsize
        if outer == 1:
            ld = max(inner, 1)
        elif step % itemsize == 0 and step // itemsize >= inner:
            ld = step // itemsize
        else:
            ok = False
        out.append(ld if ok else None)
    return tuple(out)


def _in_layout_of(y: np.ndarray, x: np.ndarray, dt: np.dtype):
    """(x, row) for one SpMM call: y's layout decides (it is written in
    place; one in neither layout is an ArgumentError), row True for
    row-major, and x is converted once to dt in that layout where it is
    not in it already."""
    ly = _layouts(y.shape, y.strides, y.itemsize)
    if ly == (None, None):
        raise ArgumentError("y must be row-major or column-major with unit stride along"
                            f" one axis (strides {y.strides}; it is written in place)")
    row = ly[0] is not None
    lx = _layouts(x.shape, x.strides, x.itemsize)
    if x.dtype != dt or lx[0 if row else 1] is None:
        x = np.asarray(x, dtype=dt, order="C" if row else "F")
    return x, row


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

    Types: ``dtype`` is the type of the stored values (float32, float64,
    complex64 or complex128), ``vector_dtype`` that of x, y and the sums of
    every product; they are equal unless a float32 matrix computes with
    float64 vectors (mixed precision, see :meth:`astype`).  Complex
    matrices take complex alpha and beta; ``A.H`` is the conjugate
    transpose.

    Symmetric storage (``symmetric`` True): only the diagonal and upper
    blocks are stored (``nnzb`` counts those); products use both
    triangles and move about half the bytes.  A complex matrix in that
    storage is complex symmetric (A = A^T) or, ``hermitian`` True,
    Hermitian (A = A^H).

    Thread safety: SpMV and solves release the GIL and may run on the same
    matrix from several threads at once.
    """

    __slots__ = ("_m", "_keep", "shape", "dtype", "vector_dtype", "blocksize", "nnzb", "order",
                 "shared")

    def __init__(self, core: "_core.Matrix", keep: Optional[tuple] = None,
                 shared: Optional[dict] = None) -> None:
        self._m = core
        self._keep = keep
        bs = core.bs
        self.shape: Tuple[int, int] = (core.mb * bs, core.nb * bs)
        self.dtype = np.dtype(core.dtype_name)
        self.vector_dtype = np.dtype(core.vector_dtype_name)
        self.blocksize: int = bs
        self.nnzb: int = core.nnzb
        self.order: str = "row" if core.row_major else "col"
        self.shared = shared or {"data": False, "indices": False, "indptr": False}

    @property
    def symmetric(self) -> bool:
        """True for symmetric storage (diagonal and upper blocks only)."""
        return self._m.symmetric

    @property
    def hermitian(self) -> bool:
        """True for Hermitian storage (complex; the lower blocks are the
        conjugate transposes of the upper ones)."""
        return self._m.hermitian

    # ---- construction ---------------------------------------------------
    @classmethod
    def from_arrays(cls, data: Any, indices: Any, indptr: Any, shape: Tuple[int, int],
                    blocksize: Optional[int] = None, *, order: str = "row",
                    copy: Optional[bool] = None, symmetric: bool = False,
                    vector_dtype: Any = None, hermitian: bool = False) -> "BSRMatrix":
        """BSR arrays as scipy stores them.

        data: (nnzb, bs, bs) blocks, or nnzb*bs*bs values with ``blocksize``;
        ``order`` "row" (scipy's layout) or "col" for the entries inside a
        block.  indices: nnzb block-column indices, sorted and unique within
        each block row.  indptr: mb+1 offsets.  copy: None shares what it
        can, False refuses to copy data or indices, True copies everything
        into library-owned memory.

        symmetric=True: the arrays hold the diagonal and upper blocks of a
        symmetric matrix (a block below the diagonal is a
        :class:`bsrmv.StructureError`); the diagonal blocks are used as
        given.  The library reads this form with an int64 indptr only, so
        another indptr is copied to int64.  hermitian=True: the same for a
        Hermitian matrix (complex data: block (j, i) is the conjugate
        transpose of block (i, j); for real data the same as symmetric).
        vector_dtype=np.float64 on float32 data: mixed precision (float64 x
        and y, sums in float64); complex data computes in its own type.
        """
        symmetric = bool(symmetric or hermitian)
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
            ptr_in, dtype=np.int32 if ptr_in.dtype == np.int32 and not symmetric else np.int64)
        if np.issubdtype(vdt, np.complexfloating):
            if vector_dtype is not None and np.dtype(vector_dtype) != vdt:
                raise ArgumentError(f"a {vdt} matrix computes with {vdt} vectors, not "
                                    f"{np.dtype(vector_dtype)}")
            vector_double = False
        else:
            vector_double = vdt == np.float64 if vector_dtype is None else \
                _real_dtype(vector_dtype, "vector_dtype") == np.float64
        shared = {"data": _same(val, data_in), "indices": _same(col, ind_in),
                  "indptr": _same(row, ptr_in)}
        if copy is False and not (shared["data"] and shared["indices"]):
            what = [k for k in ("data", "indices") if not shared[k]]
            raise ArgumentError(
                f"copy=False but {' and '.join(what)} cannot be used in place (need float32/"
                f"float64/complex64/complex128 C-contiguous values and int32 C-contiguous "
                f"indices)")
        keep = (row, col, val)
        make = _core.Matrix.make_i32 if row.dtype == np.int32 else _core.Matrix.make
        core = make(row, col, val.reshape(-1), m // bs, n // bs, bs, order == "row", bool(copy),
                    keep, 2 if hermitian else 1 if symmetric else 0, vector_double)
        if copy:
            return cls(core)
        return cls(core, keep, shared)

    @classmethod
    def from_scipy(cls, A: Any, *, copy: Optional[bool] = None, symmetric: bool = False,
                   tol: float = 0.0, vector_dtype: Any = None,
                   hermitian: bool = False) -> "BSRMatrix":
        """A scipy ``bsr_array``/``bsr_matrix`` with square blocks.

        The blocks (row-major in scipy) and int32 column indices are used in
        place; see the class notes for what is copied.  The library needs
        sorted column indices without duplicates (scipy's canonical format;
        ``tobsr()`` does not always give it): with copy=None a matrix not in
        that format is brought to it in a copy (``shared`` then says
        nothing is shared; call ``A.sum_duplicates()`` on yours first to
        share it), with copy=False the library's check raises
        :class:`bsrmv.StructureError` naming the block row.

        symmetric=True: A is the whole symmetric matrix; every entry is
        checked against its mirror, ``|a_ij - a_ji| <= tol * max(|a_ij|,
        |a_ji|)`` (:class:`bsrmv.ArgumentError` naming the first entry that
        differs), and the diagonal and upper blocks are kept in a copy
        owned by the library (see :meth:`to_symmetric`).  hermitian=True: the
        same for a Hermitian matrix, each entry checked against the
        conjugate of its mirror (:meth:`to_hermitian`).  vector_dtype: as for
        :meth:`from_arrays`.
        """
        if symmetric or hermitian:
            if copy is False:
                raise ArgumentError("symmetric=True keeps a copy of the upper blocks; it"
                                    " cannot be combined with copy=False")
            full = cls.from_scipy(A, vector_dtype=vector_dtype)
            return full.to_hermitian(tol) if hermitian else full.to_symmetric(tol)
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
            M = cls.from_arrays(A.data, A.indices, A.indptr, A.shape, r, order="row",
                                vector_dtype=vector_dtype)
            M.shared = {k: False for k in M.shared}
            return M
        return cls.from_arrays(A.data, A.indices, A.indptr, A.shape, r, order="row", copy=copy,
                               vector_dtype=vector_dtype)

    def to_symmetric(self, tol: float = 0.0) -> "BSRMatrix":
        """The symmetric storage of this (full, square) matrix, a new
        library-owned matrix of the same types: every entry checked against
        its mirror to ``tol`` as in :meth:`from_scipy`, the upper blocks
        kept."""
        return BSRMatrix(self._m.to_sym(float(tol)))

    def to_hermitian(self, tol: float = 0.0) -> "BSRMatrix":
        """The Hermitian storage of this (full, square) matrix: as
        :meth:`to_symmetric`, each entry checked against the conjugate of its
        mirror (``|a_ij - conj(a_ji)| <= tol * max(|a_ij|, |a_ji|)``)."""
        return BSRMatrix(self._m.to_sym(float(tol), True))

    def to_full(self) -> "BSRMatrix":
        """The full storage of a symmetric matrix (both triangles), a new
        library-owned matrix; a full matrix is returned as it is."""
        return BSRMatrix(self._m.from_sym()) if self.symmetric else self

    def astype(self, dtype: Any, vector_dtype: Any = None) -> "BSRMatrix":
        """A copy with values rounded to ``dtype`` (float32 or float64, round
        to nearest), the same structure (shared with this matrix, which it
        keeps alive), block order and storage.  vector_dtype: the type of
        x, y and the sums, ``dtype`` by default; ``astype(np.float32,
        vector_dtype=np.float64)`` is the mixed-precision copy, whose
        products take and return float64 vectors while moving float32
        values.  A finite value beyond float32:
        :class:`bsrmv.SizeOverflowError`."""
        dt = _real_dtype(dtype, "dtype")
        row, col, val = self._arrays()
        with np.errstate(over="ignore"):
            new = val.astype(dt)
        if dt.itemsize < val.dtype.itemsize:
            bad = np.isinf(new) & np.isfinite(val)
            if bad.any():
                at = int(np.flatnonzero(bad.reshape(-1))[0])
                raise SizeOverflowError(f"value {val.reshape(-1)[at]!r} (entry {at}) is beyond"
                                        f" {dt}")
        M = BSRMatrix.from_arrays(new, col, row, self.shape, self.blocksize, order=self.order,
                                  symmetric=self.symmetric, hermitian=self.hermitian,
                                  vector_dtype=vector_dtype)
        M.shared["data"] = False  # a new array, not the caller's
        return M

    def to_scipy(self) -> Any:
        """The matrix as a ``scipy.sparse.bsr_array``; values are shared where
        the blocks are row-major (scipy may re-type the index arrays).  A
        symmetric matrix gives its full storage (both triangles, a copy)."""
        import scipy.sparse as sp

        row, col, val = self.to_full()._arrays()
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
        if x.dtype != self.vector_dtype or not x.flags.c_contiguous:
            if np.issubdtype(x.dtype, np.complexfloating) and \
                    not np.issubdtype(self.vector_dtype, np.complexfloating):
                raise ArgumentError(f"{name} is complex; the matrix is {self.dtype}")
            x = np.ascontiguousarray(x, dtype=self.vector_dtype)
        if x.shape[0] != n:
            raise DimensionError(f"{name} has {x.shape[0]} rows, expected {n}")
        return x

    def _apply(self, op: int, x: Any, alpha: float, beta: float, y: Any) -> np.ndarray:
        # Fast path: NumPy vectors as the library takes them; the binding
        # checks contiguity, writability and lengths, and refuses anything
        # else with a TypeError, which sends it down the converting path.
        # Complex scalars, complex matrices and op 2 (A^H) take the
        # converting path's scalar call.
        vdt = self.vector_dtype
        if type(alpha) is float and type(beta) is float and op < 2 and vdt.kind == "f" and \
                type(x) is np.ndarray and x.dtype is vdt and x.ndim == 1:
            if y is None and beta == 0.0:
                y = np.empty(self.shape[op], dtype=vdt)
                try:
                    self._m.spmv(op, alpha, x, 0.0, y)
                    return y
                except TypeError:
                    y = None
            elif type(y) is np.ndarray and y.dtype is vdt:
                try:
                    self._m.spmv(op, alpha, x, beta, y)
                    return y
                except TypeError:
                    pass
        return self._apply_slow(op, x, alpha, beta, y)

    def _apply_slow(self, op: int, x: Any, alpha: float, beta: float, y: Any) -> np.ndarray:
        n_in, n_out = (self.shape[1], self.shape[0]) if op == 0 else self.shape
        if np.ndim(x) == 2:
            return self._apply_multi(op, x, alpha, beta, y, n_in, n_out)
        x = self._vec(x, n_in, "x")
        if x.ndim != 1:
            raise DimensionError(f"x must be 1-D or 2-D, got {x.ndim}-D")
        if y is None:
            if beta != 0.0:
                raise ArgumentError("beta != 0 needs y=")
            y = np.empty(n_out, dtype=self.vector_dtype)
        else:
            self._check_out(y, (n_out,))
        self._spmv(op, alpha, x, beta, y)
        return y

    def _spmv(self, op: int, alpha: Any, x: np.ndarray, beta: Any, y: np.ndarray) -> None:
        if isinstance(alpha, complex) or isinstance(beta, complex) or op == 2 or \
                self.vector_dtype.kind == "c" or np.iscomplexobj(alpha) or np.iscomplexobj(beta):
            self._m.spmv_c(op, complex(alpha), x, complex(beta), y)
        else:
            self._m.spmv(op, float(alpha), x, float(beta), y)

    def _check_out(self, y: Any, shape: tuple) -> None:
        if not isinstance(y, np.ndarray):
            raise ArgumentError("y must be a NumPy array")
        if y.dtype != self.vector_dtype:
            raise ArgumentError(f"y is {y.dtype}, the matrix's vectors are {self.vector_dtype}"
                                " (y is written in place, so it is not converted)")
        if y.shape != shape:
            raise DimensionError(f"y has shape {y.shape}, expected {shape}")
        if not y.flags.writeable:
            raise ArgumentError("y is read-only")

    def _apply_multi(self, op, x, alpha, beta, y, n_in, n_out):
        """k vectors at once: one bsrmv_spmm call on X and Y as they are
        laid out (row-major, or column-major with a leading dimension), X
        converted once when its dtype or layout does not fit."""
        vdt = self.vector_dtype
        x = np.asarray(x)
        if x.shape[0] != n_in:
            raise DimensionError(f"x has {x.shape[0]} rows, expected {n_in}")
        if x.dtype != vdt and np.issubdtype(x.dtype, np.complexfloating) and vdt.kind != "c":
            raise ArgumentError(f"x is complex; the matrix is {self.dtype}")
        k = x.shape[1]
        lx = _layouts(x.shape, x.strides, x.itemsize)
        if y is None:
            if beta != 0.0:
                raise ArgumentError("beta != 0 needs y=")
            col = x.dtype == vdt and lx[0] is None and lx[1] is not None
            y = np.empty((n_out, k), dtype=vdt, order="F" if col else "C")
        else:
            self._check_out(y, (n_out, k))
        x, row = _in_layout_of(y, x, vdt)
        self._m.spmm(op, complex(alpha), x, complex(beta), y, row)
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

    def hmatvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0,
                y: Optional[np.ndarray] = None) -> np.ndarray:
        """y = alpha*A^H@x + beta*y, the conjugate transpose (A.T for a real
        matrix); as :meth:`matvec`."""
        return self._apply(2, x, alpha, beta, y)

    def __matmul__(self, x: Any) -> np.ndarray:
        return self._apply(0, x, 1.0, 0.0, None)

    @property
    def T(self) -> "TransposedBSRMatrix":
        """The transpose as a view (no copy): ``A.T @ x`` runs op = T."""
        return TransposedBSRMatrix(self)

    @property
    def H(self) -> "TransposedBSRMatrix":
        """The conjugate transpose as a view (no copy): ``A.H @ x`` runs
        op = C."""
        return TransposedBSRMatrix(self, conjugate=True)

    def aslinearoperator(self) -> Any:
        """A ``scipy.sparse.linalg.LinearOperator`` over this matrix."""
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.hmatvec,
                              matmat=self.matvec, rmatmat=self.hmatvec,
                              dtype=self.vector_dtype)

    @property
    def nbytes(self) -> float:
        """Bytes one SpMV moves at least (values, indices, row pointers, x, y)."""
        return self._m.spmv_bytes

    def __repr__(self) -> str:
        types = str(self.dtype) if self.vector_dtype == self.dtype else \
            f"{self.dtype} values, {self.vector_dtype} vectors"
        sym = ", Hermitian storage" if self.hermitian else \
            ", symmetric storage" if self.symmetric else ""
        return (f"<bsrmv.BSRMatrix {self.shape[0]}x{self.shape[1]}, bs={self.blocksize}, "
                f"nnzb={self.nnzb}, {types}, {self.order}-major blocks{sym}>")


class TransposedBSRMatrix:
    """``A.T`` (``A.H`` with conjugate): products with the transpose (the
    conjugate transpose) of a :class:`BSRMatrix`."""

    __slots__ = ("_a", "_conj")

    def __init__(self, a: BSRMatrix, conjugate: bool = False) -> None:
        self._a = a
        self._conj = conjugate

    @property
    def shape(self) -> Tuple[int, int]:
        return (self._a.shape[1], self._a.shape[0])

    @property
    def dtype(self) -> np.dtype:
        return self._a.dtype

    @property
    def vector_dtype(self) -> np.dtype:
        return self._a.vector_dtype

    @property
    def T(self) -> BSRMatrix:
        if self._conj:
            raise ArgumentError("A.H.T is conj(A), which has no view; use A.H.H or A")
        return self._a

    @property
    def H(self) -> BSRMatrix:
        if not self._conj:
            raise ArgumentError("A.T.H is conj(A), which has no view; use A.T.T or A")
        return self._a

    def matvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0,
               y: Optional[np.ndarray] = None) -> np.ndarray:
        return self._a._apply(2 if self._conj else 1, x, alpha, beta, y)

    def __matmul__(self, x: Any) -> np.ndarray:
        return self._a._apply(2 if self._conj else 1, x, 1.0, 0.0, None)


def read_mtx(path: str, bs: int, blocking: str = "split", *, dtype: Any = np.float64,
             seed: int = 0, symmetric: bool = False) -> BSRMatrix:
    """Read a Matrix Market file (.mtx or .mtx.gz) into bs x bs blocks.

    blocking="split" cuts aligned blocks (zero-filled, padded to a multiple
    of bs); "promote" turns every scalar into a dense block with values
    drawn from ``seed`` (the KSPARSE test-matrix method).  Blocks are
    row-major, so :meth:`BSRMatrix.to_scipy` shares them.  symmetric=True:
    a file marked "symmetric" gives a matrix in symmetric storage, built
    from the triangle the file stores without expanding it (other files
    are read whole; ``A.symmetric`` tells which)."""
    if blocking not in ("split", "promote"):
        raise ArgumentError(f"blocking must be 'split' or 'promote', not {blocking!r}")
    dt = np.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ArgumentError(f"dtype must be float32 or float64, not {dt}")
    return BSRMatrix(_core.Matrix.read_mtx(str(path), int(bs), blocking == "promote", int(seed),
                                           dt == np.float64, bool(symmetric)))


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
