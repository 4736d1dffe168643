"""Krylov solvers of the C library (host and device)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

import numpy as np

from ._errors import ArgumentError
from ._matrix import BSRMatrix

_METHODS = {"cg": 0, "bicgstab": 1, "gmres": 2}


@dataclass
class SolveReport:
    """What a solve did.  ``residuals[i]`` is the recurrence's relative
    residual after iteration i+1; ``true_rel_residual`` is ||b - A x|| /
    ||b|| recomputed at exit; ``message`` says why it stopped when it did
    not converge."""

    converged: bool
    iterations: int
    rel_residual: float
    true_rel_residual: float
    seconds: float
    residuals: np.ndarray = field(repr=False)
    message: str = ""
    refinements: int = 0


def _report(t: tuple, refinements: int = 0) -> SolveReport:
    _status, msg, iters, conv, rel, true_rel, secs, hist = t
    return SolveReport(conv, iters, rel, true_rel, secs, hist, msg, refinements)


def _refine_on(A: Any, refine: Any, cls: type) -> Any:
    """The mixed-precision matrix (of A's class) a refined solve corrects
    on: `refine` itself, or None for one the caller makes from A."""
    if isinstance(refine, cls):
        return refine
    if refine is True:
        if A.dtype != np.float64 or A.vector_dtype != np.float64:
            raise ArgumentError(f"refine=True needs a float64 matrix (A is {A.dtype})")
        return None
    raise ArgumentError(f"refine must be True, False or a mixed-precision {cls.__name__}, not "
                        f"{type(refine).__name__}")


def _args(method: str, precond: Optional[str], tol: Optional[float], dtype: np.dtype):
    if method not in _METHODS:
        raise ArgumentError(f"method must be one of {sorted(_METHODS)}, not {method!r}")
    if precond not in ("block_jacobi", None, "none"):
        raise ArgumentError(f"precond must be 'block_jacobi' or None, not {precond!r}")
    if tol is None:
        tol = 1e-8 if dtype in (np.float64, np.complex128) else 1e-5
    if not tol > 0:
        raise ArgumentError("tol must be > 0")
    return _METHODS[method], precond == "block_jacobi", float(tol)


def solve(A: Any, b: Any, method: str = "cg", precond: Optional[str] = "block_jacobi", *,
          tol: Optional[float] = None, maxiter: int = 1000, restart: int = 30,
          x0: Any = None, stream: Any = None, refine: Any = False,
          inner_tol: Optional[float] = None) -> Tuple[Any, SolveReport]:
    """Solve A x = b with the library's preconditioned CG, BiCGSTAB or GMRES.

    A: a square :class:`BSRMatrix` (b a NumPy vector) or a
    :class:`bsrmv.gpu.GpuBSRMatrix` (b a CuPy/PyTorch vector; ``stream`` as
    for its products).  Stops at ||b - A x|| <= tol*||b|| (tol default 1e-8
    for float64 and complex128, 1e-5 for float32 and complex64) or after maxiter iterations; GMRES
    restarts every ``restart``.  Returns (x, report); a solve that does not
    converge returns its last iterate with ``report.converged`` False and
    the reason in ``report.message`` (like scipy's ``info``), other failures
    raise (e.g. :class:`bsrmv.SingularError` for a singular diagonal block).
    The GIL is released while it runs.

    A matrix in symmetric storage or of mixed precision (float32 values,
    float64 vectors: b and x in float64) solves as any other; the mixed one
    converges for its float32-rounded values.  refine=True (A float64) solves
    to A's own float64 residual by iterative refinement: each correction is
    solved on a float32 copy of A with float64 vectors
    (``A.astype(np.float32, vector_dtype=np.float64)``, uploaded for a
    device A; made per call, pass that copy as ``refine=`` to reuse it), the
    first to ``inner_tol`` (default 1e-6), the residuals computed with A.
    ``report.refinements`` counts the corrections."""
    mi, pc, tol = _args(method, precond, tol, getattr(A, "vector_dtype", A.dtype))
    if maxiter < 1:
        raise ArgumentError("maxiter must be >= 1")
    if inner_tol is not None and not inner_tol > 0:
        raise ArgumentError("inner_tol must be > 0")
    if not isinstance(A, BSRMatrix):
        from .gpu import GpuBSRMatrix

        if isinstance(A, GpuBSRMatrix):
            return A._solve(mi, pc, b, tol, int(maxiter), int(restart), x0, stream, refine,
                            inner_tol)
        raise ArgumentError(f"A must be a bsrmv matrix, not {type(A).__name__}")
    n = A.shape[0]
    bv = A._vec(b, n, "b")
    if bv.ndim != 1:
        raise ArgumentError("b must be one-dimensional")
    x = np.zeros(n, dtype=A.vector_dtype) if x0 is None else \
        np.array(A._vec(x0, n, "x0"), copy=True)
    if refine is False or refine is None:
        return x, _report(A._m.solve(mi, pc, bv, x, tol, int(maxiter), int(restart),
                                     x0 is None))
    Af = _refine_on(A, refine, BSRMatrix) or A.astype(np.float32, vector_dtype=np.float64)
    t, refinements = A._m.solve_refined(Af._m, mi, pc, bv, x, tol, int(maxiter), int(restart),
                                        x0 is None, float(inner_tol or 0.0))
    return x, _report(t, refinements)
