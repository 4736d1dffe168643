"""Exceptions: one class per status code of the C library.

Every class derives from :class:`bsrmv.Error` and from the built-in
exception that fits the failure (``ValueError`` for bad input,
``RuntimeError`` for device or convergence failures, ...), so code that
catches ``ValueError`` keeps working.  The message is the library's
``bsrmv_last_error()`` text; ``status`` names the C status code.
"""
from __future__ import annotations

import builtins

from . import _core


class Error(Exception):
    """Base class of every bsrmv failure."""

    status: str = ""


class ArgumentError(Error, ValueError):
    """A bad argument: wrong dtype, device, NULL, unknown option."""

    status = "BSRMV_ERR_ARGUMENT"


class NoMemoryError(Error, MemoryError):
    """A host allocation failed."""

    status = "BSRMV_ERR_NOMEM"


class SizeOverflowError(Error, builtins.OverflowError):
    """A size or offset does not fit its type (e.g. > 2**31 block columns)."""

    status = "BSRMV_ERR_OVERFLOW"


class StructureError(Error, ValueError):
    """Index arrays break a BSR rule (unsorted, duplicate, out of range)."""

    status = "BSRMV_ERR_STRUCTURE"


class DimensionError(Error, ValueError):
    """A vector or array length does not match the matrix."""

    status = "BSRMV_ERR_DIMENSION"


class FileError(Error, OSError):
    """A file could not be opened, read or written."""

    status = "BSRMV_ERR_IO"


class FormatError(Error, ValueError):
    """A malformed Matrix Market file (the message names the line)."""

    status = "BSRMV_ERR_FORMAT"


class UnsupportedError(Error, NotImplementedError):
    """A valid request this build cannot serve."""

    status = "BSRMV_ERR_UNSUPPORTED"


class DeviceError(Error, RuntimeError):
    """A CUDA call failed."""

    status = "BSRMV_ERR_DEVICE"


class DeviceMemoryError(Error, MemoryError):
    """A device allocation failed."""

    status = "BSRMV_ERR_DEVICE_NOMEM"


class NoDeviceError(Error, RuntimeError):
    """No usable GPU, or the package was built without CUDA."""

    status = "BSRMV_ERR_NO_DEVICE"


class SingularError(Error, ValueError):
    """A diagonal block is missing or singular (block-Jacobi)."""

    status = "BSRMV_ERR_SINGULAR"


class NotConvergedError(Error, RuntimeError):
    """A solver hit its iteration limit or broke down."""

    status = "BSRMV_ERR_NOT_CONVERGED"


_BY_STATUS = {
    cls.status: cls
    for cls in (ArgumentError, NoMemoryError, SizeOverflowError, StructureError, DimensionError,
                FileError, FormatError, UnsupportedError, DeviceError, DeviceMemoryError,
                NoDeviceError, SingularError, NotConvergedError)
}
_core._register_errors({
    code: _BY_STATUS[_core.status_string(code)] for code in range(1, _core.n_status)
})

__all__ = ["Error"] + [cls.__name__ for cls in _BY_STATUS.values()]
