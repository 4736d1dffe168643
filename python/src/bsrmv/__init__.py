"""bsrmv: block-sparse (BSR) matrix times vector for scipy.sparse, NumPy,
CuPy and PyTorch users, over the bsrmv C library.

Host::

    A = bsrmv.BSRMatrix.from_scipy(S)      # S: scipy bsr_array, blocks shared
    y = A @ x                              # or A.matvec(x, alpha=, beta=, y=)
    x, report = bsrmv.solve(A, b, "bicgstab")

Device: :mod:`bsrmv.gpu`; several processes: :mod:`bsrmv.mpi`.  Errors raise :class:`bsrmv.Error` subclasses
carrying the library's message.
"""
from . import _core
from ._errors import *  # noqa: F401,F403
from ._errors import __all__ as _error_names
from ._matrix import (BSRMatrix, TransposedBSRMatrix, get_num_threads, grid, read_mtx,
                      set_num_threads)
from ._solve import SolveReport, solve

__version__ = "0.1.0"

__all__ = ["BSRMatrix", "TransposedBSRMatrix", "SolveReport", "solve", "read_mtx", "grid",
           "set_num_threads", "get_num_threads", "gpu", "mpi"] + list(_error_names)


def __getattr__(name: str):
    if name in ("gpu", "mpi"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'bsrmv' has no attribute {name!r}")
