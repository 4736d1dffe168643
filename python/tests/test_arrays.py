"""Conversion policy, sharing (zero-copy) and lifetime."""
import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

import bsrmv
from conftest import random_bsr


@pytest.fixture
def S(rng):
    return random_bsr(rng, 8, 6, 3, empty_rows=False)


def test_zero_copy_values_change_results(S, rng):
    A = bsrmv.BSRMatrix.from_scipy(S)
    assert A.shared == {"data": True, "indices": True, "indptr": True}
    x = rng.uniform(-1, 1, S.shape[1])
    y1 = A @ x
    S.data *= 2.0
    S.data[0, 0, 0] += 1.0
    y2 = A @ x
    assert np.allclose(y2, S @ x, rtol=0, atol=1e-13)
    assert not np.allclose(y1, y2)


def test_int64_indptr_shared(S):
    S.indptr = S.indptr.astype(np.int64)
    A = bsrmv.BSRMatrix.from_arrays(S.data, S.indices, S.indptr, S.shape)
    assert A.shared == {"data": True, "indices": True, "indptr": True}


def test_int32_indptr_read_in_place(S, rng):
    assert S.indptr.dtype == np.int32
    A32 = bsrmv.BSRMatrix.from_scipy(S, copy=False)
    A64 = bsrmv.BSRMatrix.from_arrays(S.data, S.indices, S.indptr.astype(np.int64), S.shape)
    C32 = bsrmv.BSRMatrix.from_scipy(S, copy=True)  # a library-owned int32 copy
    assert A32.shared["indptr"] and A64.shared["indptr"]
    x = rng.uniform(-1, 1, S.shape[1])
    ref = A64 @ x
    assert np.array_equal(A32 @ x, ref)
    assert np.array_equal(C32 @ x, ref)
    T = C32.to_scipy()
    assert T.indptr.dtype == np.int32 and np.array_equal(T.indptr, S.indptr)



def test_to_scipy_shares_values(S, rng):
    A = bsrmv.BSRMatrix.from_scipy(S)
    T = A.to_scipy()
    assert np.shares_memory(T.data, S.data)
    assert abs(T - S).max() == 0
    G = bsrmv.grid(4, 2, order="col")
    x = rng.uniform(-1, 1, G.shape[1])
    assert np.allclose(G.to_scipy() @ x, G @ x, rtol=0, atol=1e-13)
    R = bsrmv.grid(4, 2, order="row")
    Rs = R.to_scipy()
    Rs.data[...] = 0.0  # library-owned arrays, shared with the scipy view
    assert np.array_equal(R @ x, np.zeros(R.shape[0]))


def test_lifetime_after_scipy_matrix_is_deleted(rng):
    S = random_bsr(rng, 50, 50, 4, empty_rows=False)
    x = rng.uniform(-1, 1, S.shape[1])
    expect = S @ x
    A = bsrmv.BSRMatrix.from_scipy(S)
    data_ref = weakref.ref(S.data)
    del S
    gc.collect()
    assert data_ref() is not None, "the matrix must keep the values alive"
    junk = [np.full(50 * 16 * 60, 7.0) for _ in range(20)]  # reuse freed memory, if any
    assert np.allclose(A @ x, expect, rtol=0, atol=1e-13)
    del A, junk
    gc.collect()
    assert data_ref() is None, "the values must be released with the matrix"


def test_copy_true_owns_arrays(S, rng):
    A = bsrmv.BSRMatrix.from_scipy(S, copy=True)
    assert not any(A.shared.values())
    x = rng.uniform(-1, 1, S.shape[1])
    y1 = A @ x
    S.data *= 3.0
    assert np.array_equal(A @ x, y1)


def test_copy_false_refuses_conversions(S):
    with pytest.raises(bsrmv.ArgumentError, match="copy=False"):
        bsrmv.BSRMatrix.from_arrays(S.data.astype(np.float16), S.indices, S.indptr, S.shape,
                                    copy=False)
    with pytest.raises(bsrmv.ArgumentError, match="indices"):
        bsrmv.BSRMatrix.from_arrays(S.data, S.indices.astype(np.int64), S.indptr, S.shape,
                                    copy=False)
    # an indptr of another integer type is converted (int32 and int64 are read in place)
    A = bsrmv.BSRMatrix.from_arrays(S.data, S.indices, S.indptr.astype(np.int16), S.shape,
                                    copy=False)
    assert A.shared["data"] and A.shared["indices"] and not A.shared["indptr"]


def test_converted_inputs(S, rng):
    x = rng.uniform(-1, 1, S.shape[1])
    ref = S @ x
    # float16 values and int64 indices: converted copies, same result
    A = bsrmv.BSRMatrix.from_arrays(S.data.astype(np.float16).astype(np.float64), S.indices,
                                    S.indptr, S.shape)
    assert A.dtype == np.float64
    A16 = bsrmv.BSRMatrix.from_arrays(S.data.astype(np.float16), S.indices.astype(np.int64),
                                      S.indptr, S.shape)
    assert A16.dtype == np.float64 and not A16.shared["data"] and not A16.shared["indices"]
    assert np.array_equal(A16 @ x, A @ x)
    # non-contiguous blocks: copied
    big = np.zeros((S.data.shape[0], 3, 6))
    big[:, :, ::2] = S.data
    A2 = bsrmv.BSRMatrix.from_arrays(big[:, :, ::2], S.indices, S.indptr, S.shape)
    assert not A2.shared["data"]
    assert np.allclose(A2 @ x, ref, rtol=0, atol=1e-13)
    # flat data with blocksize=, and column-major blocks
    A3 = bsrmv.BSRMatrix.from_arrays(S.data.reshape(-1), S.indices, S.indptr, S.shape, 3)
    assert np.allclose(A3 @ x, ref, rtol=0, atol=1e-13)
    A4 = bsrmv.BSRMatrix.from_arrays(np.ascontiguousarray(S.data.transpose(0, 2, 1)),
                                     S.indices, S.indptr, S.shape, order="col")
    assert np.allclose(A4 @ x, ref, rtol=0, atol=1e-13)
    # vectors: strided, float32, int and lists are converted
    Af = bsrmv.BSRMatrix.from_scipy(S)
    xs = np.zeros(2 * S.shape[1])
    xs[::2] = x
    assert np.array_equal(Af @ xs[::2], Af @ x)
    assert np.allclose(Af @ x.astype(np.float32), S @ x.astype(np.float32), rtol=0, atol=1e-6)
    xi = np.arange(S.shape[1])
    assert np.allclose(Af @ xi, S @ xi.astype(float), rtol=0, atol=1e-12)
    assert np.allclose(Af @ list(x), ref, rtol=0, atol=1e-13)


def test_unsorted_scipy_matrix_is_canonicalised_or_refused(rng):
    S = random_bsr(rng, 6, 6, 2, empty_rows=False, density=0.8)
    # reverse the blocks of every row: valid scipy, not canonical
    for i in range(6):
        a, b = S.indptr[i], S.indptr[i + 1]
        S.indices[a:b] = S.indices[a:b][::-1].copy()
        S.data[a:b] = S.data[a:b][::-1].copy()
    S.has_sorted_indices = False
    x = rng.uniform(-1, 1, 12)
    A = bsrmv.BSRMatrix.from_scipy(S)
    assert not any(A.shared.values())
    assert np.allclose(A @ x, S @ x, rtol=0, atol=1e-13)
    with pytest.raises(bsrmv.StructureError, match="not sorted"):
        bsrmv.BSRMatrix.from_scipy(S, copy=False)


def test_rejected_outputs(S):
    A = bsrmv.BSRMatrix.from_scipy(S)
    x = np.ones(S.shape[1])
    with pytest.raises(bsrmv.ArgumentError, match="float32"):
        A.matvec(x, y=np.zeros(S.shape[0], dtype=np.float32))
    with pytest.raises(bsrmv.DimensionError):
        A.matvec(x, y=np.zeros(S.shape[0] + 1))
    ro = np.zeros(S.shape[0])
    ro.flags.writeable = False
    with pytest.raises(bsrmv.ArgumentError, match="read-only"):
        A.matvec(x, y=ro)
    with pytest.raises(TypeError):
        A._m.spmv(0, 1.0, x, 0.0, np.zeros(2 * S.shape[0])[::2])  # strided y never reaches C
    with pytest.raises(bsrmv.ArgumentError, match="overlap"):
        v = np.zeros(S.shape[0] + S.shape[1])
        A._m.spmv(0, 1.0, v[:S.shape[1]], 0.0, v[S.shape[1] - 1:S.shape[1] - 1 + S.shape[0]])
    with pytest.raises(bsrmv.ArgumentError, match="beta"):
        A.matvec(x, beta=1.0)
    with pytest.raises(bsrmv.ArgumentError, match="complex"):
        A @ (x + 1j)


def test_bad_matrices_raise_with_messages(S):
    with pytest.raises(bsrmv.DimensionError, match="multiple of the block size"):
        bsrmv.BSRMatrix.from_arrays(S.data, S.indices, S.indptr, (S.shape[0] + 1, S.shape[1]))
    with pytest.raises(bsrmv.ArgumentError, match="square"):
        bsrmv.BSRMatrix.from_scipy(sp.bsr_array(np.ones((4, 6)), blocksize=(2, 3)))
    with pytest.raises(bsrmv.ArgumentError, match="BSR"):
        bsrmv.BSRMatrix.from_scipy(S.tocsr())
    with pytest.raises(bsrmv.ArgumentError, match="integer"):
        bsrmv.BSRMatrix.from_arrays(S.data, S.indices + 0.5, S.indptr, S.shape)
    with pytest.raises(bsrmv.DimensionError, match="indptr"):
        bsrmv.BSRMatrix.from_arrays(S.data, S.indices, S.indptr[:-1], S.shape)
    with pytest.raises(bsrmv.DimensionError, match="data has"):
        bsrmv.BSRMatrix.from_arrays(S.data[:-1], S.indices, S.indptr, S.shape)
    bad = S.indices.copy()
    bad[0] = 99
    with pytest.raises(bsrmv.StructureError, match="col_idx") as e:
        bsrmv.BSRMatrix.from_arrays(S.data, bad, S.indptr, S.shape)
    assert isinstance(e.value, ValueError) and e.value.status == "BSRMV_ERR_STRUCTURE"
    ptr = S.indptr.copy()
    ptr[-1] += 1
    with pytest.raises(bsrmv.StructureError, match="row_ptr"):
        bsrmv.BSRMatrix.from_arrays(S.data, S.indices, ptr, S.shape)


def test_error_classes():
    for name in ("ArgumentError", "StructureError", "DimensionError", "FormatError",
                 "SingularError"):
        assert issubclass(getattr(bsrmv, name), (bsrmv.Error, ValueError))
    for name in ("DeviceError", "NoDeviceError", "NotConvergedError", "UnsupportedError"):
        assert issubclass(getattr(bsrmv, name), RuntimeError)
    assert issubclass(bsrmv.FileError, OSError)
