import numpy as np
import pytest
import scipy.sparse as sp


def random_bsr(rng, mb, nb, bs, density=0.3, dtype=np.float64, index_dtype=np.int32,
               empty_rows=True, long_row=False):
    """A random canonical scipy bsr_array: some empty block rows, optionally
    one block row holding every block column."""
    pattern = rng.random((mb, nb)) < density
    if empty_rows and mb > 2:
        pattern[rng.integers(0, mb, size=max(1, mb // 5))] = False
    if long_row and mb > 0:
        pattern[rng.integers(0, mb)] = True
    rows, cols = np.nonzero(pattern)
    indptr = np.zeros(mb + 1, dtype=index_dtype)
    np.cumsum(np.bincount(rows, minlength=mb), out=indptr[1:])
    data = rng.uniform(-1, 1, size=(len(cols), bs, bs)).astype(dtype)
    S = sp.bsr_array((data, cols.astype(index_dtype), indptr), shape=(mb * bs, nb * bs))
    # scipy may re-type small index arrays; put back the ones asked for
    S.indices = S.indices.astype(index_dtype, copy=False)
    S.indptr = S.indptr.astype(index_dtype, copy=False)
    return S


def spmv_bound(S, x, dtype, transpose=False):
    """Elementwise error bound of a dot product summed in any order:
    gamma_k * (|A| |x|) with k the longest scalar row, gamma_k ~ k*eps."""
    absA = abs(S.astype(np.float64))
    if transpose:
        absA = absA.T
    k = max(1, int(np.max(np.diff(absA.tocsr().indptr), initial=1)))
    eps = np.finfo(dtype).eps
    return 2 * k * eps * (absA @ np.abs(x.astype(np.float64))) + np.finfo(dtype).tiny


def random_complex(rng, mb, nb, bs, dtype, density=0.3):
    """random_bsr's patterns with complex values (one long row past 3 block rows)."""
    R = random_bsr(rng, mb, nb, bs, density=density, long_row=mb > 3)
    I = random_bsr(rng, mb, nb, bs, density=density)
    S = (R + 1j * I).tobsr(blocksize=(bs, bs)).astype(dtype)
    S.sum_duplicates()
    return S


def cvec(rng, n, dtype):
    return (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)).astype(dtype)


def tol_for(dtype, S, x):
    """An elementwise bound of a complex product's error (complex multiplies
    round more than real ones: 8 k eps rather than spmv_bound's 2 k eps)."""
    eps = np.finfo(dtype).eps
    k = max(1, int(np.max(np.diff(S.tocsr().indptr), initial=1)))
    return 8 * k * eps * (abs(S.astype(np.complex128)) @ np.abs(x) + 1)


def hermitian(rng, nb, bs, dtype, shift=0.0):
    """A Hermitian bsr_array, shifted by shift * I (positive definite for a
    large enough shift)."""
    R = random_complex(rng, nb, nb, bs, np.complex128)
    H = (R + R.conj().T + shift * sp.eye_array(nb * bs)).tobsr(blocksize=(bs, bs))
    H.sum_duplicates()
    return H.astype(dtype)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
