"""BSR matrices in GPU memory, from CuPy or PyTorch arrays, without copies.

Device arrays are read through ``__cuda_array_interface__`` (CuPy, PyTorch,
Numba); objects that only speak DLPack are imported with
``cupy.from_dlpack`` (zero-copy).  Work is enqueued on ``stream``: a
``cupy.cuda.Stream``, a ``torch.cuda.Stream``, a raw ``cudaStream_t``
integer, or None for the current stream of the framework the vector comes
from (``cupy.cuda.get_current_stream()``, ``torch.cuda.current_stream()``).
Products return as soon as the kernel is queued, like the frameworks' own.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _core
from ._errors import ArgumentError, DimensionError, NoDeviceError
from ._matrix import BSRMatrix, _layouts, _value_dtype

_INT32_MAX = np.iinfo(np.int32).max
# the library's bsrmv_type values
_TYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.complex64): 2,
              np.dtype(np.complex128): 3}


def device_count() -> int:
    """CUDA devices the library sees (0 without a GPU or a CUDA build)."""
    return _core.gpu_device_count()


def _framework(a: Any) -> str:
    return type(a).__module__.split(".")[0]


def _dlpack_on_cuda(a: Any) -> bool:
    try:
        kind, _ = a.__dlpack_device__()
    except (AttributeError, TypeError):
        return False
    return int(kind) in (2, 13)  # kDLCUDA, kDLCUDAManaged


def _import_dlpack(a: Any) -> Any:
    """A DLPack-only device array as a CuPy array sharing its memory."""
    try:
        import cupy
    except ImportError:
        raise ArgumentError(f"{type(a).__name__} has no __cuda_array_interface__ and CuPy is"
                            " not installed to import it through DLPack") from None
    return cupy.from_dlpack(a)


class _Dev:
    """A device array as the library needs it: pointer, length, dtype and
    device, plus the owner (kept alive by whoever holds this)."""

    __slots__ = ("obj", "fw", "ptr", "shape", "strides", "dtype", "device", "contiguous")

    def __init__(self, obj: Any, name: str) -> None:
        if _framework(obj) == "torch" and getattr(obj, "requires_grad", False):
            obj = obj.detach()
        if not hasattr(obj, "__cuda_array_interface__"):
            if _dlpack_on_cuda(obj):
                obj = _import_dlpack(obj)
            else:
                raise ArgumentError(f"{name} is not a device array ({type(obj).__name__}); use a"
                                    " CuPy array or a CUDA PyTorch tensor")
        cai = obj.__cuda_array_interface__
        self.obj = obj
        self.fw = _framework(obj)
        self.ptr = int(cai["data"][0])
        self.shape = tuple(int(s) for s in cai["shape"])
        self.dtype = np.dtype(cai["typestr"])
        self.strides = cai.get("strides")
        self.contiguous = _c_contiguous(self.shape, self.strides, self.dtype.itemsize)
        self.device = _device_of(obj, self.fw, self.ptr)


def _c_contiguous(shape: Tuple[int, ...], strides: Any, itemsize: int) -> bool:
    if strides is None or int(np.prod(shape)) <= 1:
        return True
    step = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n > 1 and s != step:
            return False
        step *= n
    return True


def _dev_layouts(d: _Dev):
    """(row ld, col ld) of a 2-D device array, as :func:`bsrmv._matrix._layouts`."""
    strides = d.strides
    if strides is None:
        strides = (d.shape[1] * d.dtype.itemsize, d.dtype.itemsize)
    return _layouts(d.shape, tuple(int(s) for s in strides), d.dtype.itemsize)


def _device_of(obj: Any, fw: str, ptr: int) -> int:
    if fw == "cupy":
        return int(obj.device.id)
    if fw == "torch":
        return int(obj.device.index)
    try:
        import cupy

        return int(cupy.cuda.runtime.pointerGetAttributes(ptr).device)
    except Exception:
        return 0


def _convert(d: _Dev, dtype: np.dtype, name: str, fortran: bool = False) -> _Dev:
    """d in dtype and C-contiguous (or, 2-D, Fortran-contiguous), converted
    by its own framework if needed (a copy on the device)."""
    if d.dtype == dtype and (_dev_layouts(d)[1] is not None if fortran else d.contiguous):
        return d
    if d.fw == "cupy":
        import cupy

        with cupy.cuda.Device(d.device):
            make = cupy.asfortranarray if fortran else cupy.ascontiguousarray
            return _Dev(make(d.obj, dtype=dtype), name)
    if d.fw == "torch":
        import torch

        t = d.obj.to(getattr(torch, dtype.name))
        return _Dev(t.t().contiguous().t() if fortran else t.contiguous(), name)
    raise ArgumentError(f"{name} must be {'Fortran' if fortran else 'C'}-contiguous {dtype}"
                        f" (got {d.dtype}{'' if d.contiguous else ', strided'})")


def _empty(like: _Dev, n: Tuple[int, ...], dtype: np.dtype, fortran: bool = False) -> Any:
    if like.fw == "torch":
        import torch

        t = torch.empty(n[::-1] if fortran else n, dtype=getattr(torch, dtype.name),
                        device=like.obj.device)
        return t.t() if fortran else t
    import cupy

    with cupy.cuda.Device(like.device):
        return cupy.empty(n, dtype=dtype, order="F" if fortran else "C")


def _stream_ptr(stream: Any, like: Optional[_Dev]) -> int:
    """cudaStream_t of `stream`, or the current stream of like's framework."""
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attr in ("ptr", "cuda_stream"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        raise ArgumentError(f"stream must be a CuPy/PyTorch stream or an int, not "
                            f"{type(stream).__name__}")
    if like is None:
        return 0
    if like.fw == "cupy":
        import cupy

        with cupy.cuda.Device(like.device):
            return int(cupy.cuda.get_current_stream().ptr)
    if like.fw == "torch":
        import torch

        return int(torch.cuda.current_stream(like.obj.device).cuda_stream)
    s = like.obj.__cuda_array_interface__.get("stream")
    return int(s) if s is not None else 0


def _synchronize(stream: int, like: _Dev) -> None:
    """Wait for `stream` (the producer's) before the library reads the
    arrays with its own synchronous copies."""
    if like.fw == "torch":
        import torch

        if stream:
            torch.cuda.ExternalStream(stream, device=like.obj.device).synchronize()
        else:
            torch.cuda.synchronize(like.obj.device)
        return
    import cupy

    with cupy.cuda.Device(like.device):
        if stream:
            cupy.cuda.ExternalStream(stream).synchronize()
        else:
            cupy.cuda.Device(like.device).synchronize()


class GpuBSRMatrix:
    """A BSR matrix in device memory (see the module notes).

    :meth:`from_arrays` reads the caller's device arrays in place (int32
    indptr and int64 indices are converted on the device, as on the host)
    and keeps them alive; :meth:`from_host` uploads a :class:`BSRMatrix`.
    Calls on one matrix from several threads are serialised (the library's
    device handles are not thread-safe), but products of one matrix queued
    on different streams must not run at the same time: the load-balanced
    kernels keep partial sums in the matrix's device memory.  Use one
    stream per matrix, or one matrix per stream.

    ``vector_dtype`` and ``symmetric`` are those of the host matrix an
    uploaded one came from (mixed precision and symmetric storage reach
    the device through :meth:`from_host` only)."""

    __slots__ = ("_m", "_keep", "_host", "shape", "dtype", "vector_dtype", "symmetric",
                 "blocksize", "nnzb", "order", "device")

    def __init__(self, core: "_core.GpuMatrix", shape, dtype, bs, nnzb, order, keep=None,
                 host: Optional[BSRMatrix] = None) -> None:
        self._m = core
        self._keep = keep
        self._host = host
        self.shape: Tuple[int, int] = shape
        self.dtype = np.dtype(dtype)
        self.vector_dtype = np.dtype(core.vector_dtype_name)
        self.symmetric: bool = host is not None and host.symmetric
        self.blocksize: int = bs
        self.nnzb: int = nnzb
        self.order: str = order
        self.device: int = core.device

    @classmethod
    def from_arrays(cls, data: Any, indices: Any, indptr: Any, shape: Tuple[int, int],
                    blocksize: Optional[int] = None, *, order: str = "row",
                    stream: Any = None) -> "GpuBSRMatrix":
        """Device BSR arrays as scipy lays them out (see
        :meth:`bsrmv.BSRMatrix.from_arrays`).  The arrays' producer stream is
        synchronised once, because the library reads indptr to plan."""
        if device_count() == 0:
            raise NoDeviceError("no CUDA device (or bsrmv built without CUDA)")
        if order not in ("row", "col"):
            raise ArgumentError(f"order must be 'row' or 'col', not {order!r}")
        dv = _Dev(data, "data")
        if blocksize is None:
            if len(dv.shape) != 3:
                raise ArgumentError("data must be (nnzb, bs, bs) blocks, or pass blocksize=")
            blocksize = dv.shape[1]
        bs = int(blocksize)
        m, n = (int(s) for s in shape)
        if bs < 1 or m % bs or n % bs:
            raise DimensionError(f"shape {(m, n)} is not a multiple of the block size {bs}")
        dv = _convert(dv, _value_dtype(dv.dtype), "data")
        ci = _convert(_Dev(indices, "indices"), np.dtype(np.int32), "indices")
        rp = _convert(_Dev(indptr, "indptr"), np.dtype(np.int64), "indptr")
        if len({dv.device, ci.device, rp.device}) != 1:
            raise ArgumentError("data, indices and indptr are on different devices")
        nnzb = ci.shape[0] if ci.shape else 0
        if rp.shape != (m // bs + 1,):
            raise DimensionError(f"indptr has shape {rp.shape}, expected ({m // bs + 1},)")
        if int(np.prod(dv.shape)) != nnzb * bs * bs:
            raise DimensionError(f"data has {int(np.prod(dv.shape))} values, expected "
                                 f"nnzb*bs*bs = {nnzb * bs * bs}")
        _synchronize(_stream_ptr(stream, dv), dv)
        core = _core.GpuMatrix.wrap(rp.ptr, ci.ptr, dv.ptr, m // bs, n // bs, bs, nnzb,
                                    _TYPE_CODE[dv.dtype], order == "row", dv.device)
        return cls(core, (m, n), dv.dtype, bs, nnzb, order, keep=(rp.obj, ci.obj, dv.obj))

    @classmethod
    def from_host(cls, A: BSRMatrix, device: int = 0, stream: Any = None) -> "GpuBSRMatrix":
        """Copy a host matrix to `device` (complete when the call returns)."""
        core = _core.GpuMatrix.upload(A._m, int(device), _stream_ptr(stream, None))
        return cls(core, A.shape, A.dtype, A.blocksize, A.nnzb, A.order, host=A)

    @property
    def kernel(self) -> str:
        """The kernel the plan chose, e.g. "by_column/g8/r4/t256/p0"."""
        return self._m.kernel

    def tune(self, candidates: int = 0, stream: Any = None) -> float:
        """The measured choice (``bsrmv_gpu_matrix_tune``): times the
        plan's choice and the other kernel configurations that apply on this
        matrix, as a solver's loop calls it, and keeps the fastest for the
        products that follow.  ``candidates`` > 0 times only that many
        others, those the plan ranks next (8: about 4 ms on an H200,
        within 5% of the fastest in 92-94% of the cases on held-out
        matrices); 0 times them all (tens of milliseconds, a few thousand
        products; docs/GPU.md).  Returns the GPU time it took, in ms."""
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 0:
            raise ArgumentError(f"candidates must be an int >= 0, got {candidates!r}")
        return self._m.tune(candidates, _stream_ptr(stream, None))

    def _apply(self, op: int, x: Any, alpha: Any, beta: Any, y: Any, stream: Any) -> Any:
        n_in, n_out = (self.shape[1], self.shape[0]) if op == 0 else self.shape
        xd = _Dev(x, "x")
        if xd.dtype.kind == "c" and self.vector_dtype.kind != "c":
            raise ArgumentError(f"x is complex; the matrix is {self.dtype}")
        if len(xd.shape) == 2:
            return self._apply_multi(op, xd, alpha, beta, y, stream, n_in, n_out)
        vdt = self.vector_dtype
        xd = _convert(xd, vdt, "x")
        if xd.shape != (n_in,):
            raise DimensionError(f"x has shape {xd.shape}, expected ({n_in},)")
        if xd.device != self.device:
            raise ArgumentError(f"x is on device {xd.device}, the matrix on {self.device}")
        if y is None:
            if beta != 0.0:
                raise ArgumentError("beta != 0 needs y=")
            y = _empty(xd, (n_out,), vdt)
        yd = _Dev(y, "y")
        if not yd.contiguous or yd.dtype != vdt:
            raise ArgumentError(f"y must be C-contiguous {vdt} (it is written in place)")
        if yd.shape != (n_out,):
            raise DimensionError(f"y has shape {yd.shape}, expected ({n_out},)")
        if yd.device != self.device:
            raise ArgumentError(f"y is on device {yd.device}, the matrix on {self.device}")
        self._m.spmv(op, complex(alpha), xd.ptr, n_in, complex(beta), yd.ptr, n_out,
                     _stream_ptr(stream, xd))
        return y

    def _apply_multi(self, op, xd, alpha, beta, y, stream, n_in, n_out):
        """k vectors: one bsrmv_gpu_spmm call in y's layout (row-major, or
        column-major with a leading dimension), x converted once by its
        framework when its dtype or layout does not fit (mixed precision:
        x and y in float64)."""
        vdt = self.vector_dtype
        if xd.shape[0] != n_in:
            raise DimensionError(f"x has {xd.shape[0]} rows, expected {n_in}")
        k = xd.shape[1]
        lx = _dev_layouts(xd)
        if y is None:
            if beta != 0.0:
                raise ArgumentError("beta != 0 needs y=")
            col = xd.dtype == vdt and lx[0] is None and lx[1] is not None
            y = _empty(xd, (n_out, k), vdt, fortran=col)
        yd = _Dev(y, "y")
        if yd.dtype != vdt:
            raise ArgumentError(f"y must be {vdt} (it is written in place)")
        if yd.shape != (n_out, k):
            raise DimensionError(f"y has shape {yd.shape}, expected ({n_out}, {k})")
        ly = _dev_layouts(yd)
        if ly == (None, None):
            raise ArgumentError("y must be row-major or column-major"
                                f" (strides {yd.strides}; it is written in place)")
        row = ly[0] is not None
        if xd.dtype != vdt or lx[0 if row else 1] is None:
            xd = _convert(xd, vdt, "x", fortran=not row)
            lx = _dev_layouts(xd)
        for d in (xd, yd):
            if d.device != self.device:
                raise ArgumentError(f"x and y must be on device {self.device}, the matrix's")
        if k == 0:
            return y
        s = _stream_ptr(stream, xd)
        i = 0 if row else 1
        self._m.spmm(op, complex(alpha), k, xd.ptr, lx[i], complex(beta), yd.ptr, ly[i], row, s)
        return y

    def matvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0, y: Any = None,
               stream: Any = None) -> Any:
        """y = alpha*A@x + beta*y on the device; y is allocated by x's
        framework when not given (then of the matrix's vector dtype).
        alpha and beta may be complex for a complex matrix."""
        return self._apply(0, x, alpha, beta, y, stream)

    def rmatvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0, y: Any = None,
                stream: Any = None) -> Any:
        """y = alpha*A.T@x + beta*y on the device."""
        return self._apply(1, x, alpha, beta, y, stream)

    def hmatvec(self, x: Any, alpha: Any = 1.0, beta: Any = 0.0, y: Any = None,
                stream: Any = None) -> Any:
        """y = alpha*A^H@x + beta*y on the device, the conjugate transpose
        (A.T for a real matrix)."""
        return self._apply(2, x, alpha, beta, y, stream)

    def __matmul__(self, x: Any) -> Any:
        return self._apply(0, x, 1.0, 0.0, None, None)

    def _host_copy(self) -> BSRMatrix:
        if self._host is not None:
            return self._host
        rp, ci, dv = (_to_numpy(a) for a in self._keep)
        return BSRMatrix.from_arrays(dv.reshape(-1), ci, rp, self.shape, self.blocksize,
                                     order=self.order)

    def _solve(self, method, precond, b, tol, maxiter, restart, x0, stream, refine=False,
               inner_tol=None):
        from ._solve import _report, _refine_on

        n = self.shape[0]
        bd = _Dev(b, "b")
        if bd.dtype.kind == "c" and self.vector_dtype.kind != "c":
            raise ArgumentError(f"b is complex; the matrix is {self.dtype}")
        bd = _convert(bd, self.vector_dtype, "b")
        if bd.shape != (n,):
            raise DimensionError(f"b has shape {bd.shape}, expected ({n},)")
        if x0 is None:
            x = _empty(bd, (n,), self.vector_dtype)
        else:
            x0d = _convert(_Dev(x0, "x0"), self.vector_dtype, "x0")
            x = x0d.obj.copy() if x0d.fw == "cupy" else x0d.obj.clone()
        xd = _Dev(x, "x")
        sp = _stream_ptr(stream, bd)
        if refine is False or refine is None:
            host = self._host_copy() if precond else None
            return x, _report(self._m.solve(method, host._m if host else None, bd.ptr, xd.ptr, n,
                                            tol, maxiter, restart, x0 is None, sp))
        Gf = _refine_on(self, refine, GpuBSRMatrix)
        if Gf is None:
            Gf = GpuBSRMatrix.from_host(
                self._host_copy().astype(np.float32, vector_dtype=np.float64), self.device)
        host = Gf._host_copy() if precond else None
        t, refinements = self._m.solve_refined(Gf._m, method, host._m if host else None, bd.ptr,
                                               xd.ptr, n, tol, maxiter, restart, x0 is None,
                                               float(inner_tol or 0.0), sp)
        return x, _report(t, refinements)

    def __repr__(self) -> str:
        return (f"<bsrmv.gpu.GpuBSRMatrix {self.shape[0]}x{self.shape[1]}, bs={self.blocksize},"
                f" nnzb={self.nnzb}, {self.dtype}, device {self.device}, kernel {self.kernel}>")


def _to_numpy(a: Any) -> np.ndarray:
    if _framework(a) == "torch":
        return a.detach().cpu().numpy()
    import cupy

    return cupy.asnumpy(a)
