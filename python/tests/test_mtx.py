"""bsrmv.read_mtx against scipy.io."""
import gzip

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import bsrmv


@pytest.fixture
def scalar(rng):
    return sp.random_array((11, 7), density=0.3, format="coo", random_state=7)


def test_split_pads_to_blocks(tmp_path, scalar, rng):
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(path, scalar)
    for bs in (1, 2, 3, 4):
        A = bsrmv.read_mtx(path, bs=bs)
        m, n = -(-11 // bs) * bs, -(-7 // bs) * bs
        assert A.shape == (m, n) and A.order == "row"
        dense = np.zeros((m, n))
        dense[:11, :7] = scalar.toarray()
        assert np.array_equal(A.to_scipy().toarray(), dense)
        x = rng.uniform(-1, 1, n)
        assert np.allclose(A @ x, dense @ x, rtol=0, atol=1e-13)


def test_promote_and_gzip(tmp_path, scalar):
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(path, scalar)
    gz = tmp_path / "a.mtx.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    A = bsrmv.read_mtx(gz, bs=3, blocking="promote", dtype=np.float32, seed=5)
    assert A.shape == (33, 21) and A.dtype == np.float32 and A.nnzb == scalar.nnz
    blocks = A.to_scipy()
    csr = scalar.tocsr()
    csr.sort_indices()
    assert np.array_equal(blocks.indices, csr.indices)
    ratio = blocks.data / csr.data[:, None, None]
    assert np.all((ratio >= 0.75 - 1e-6) & (ratio <= 1.25 + 1e-6))
    B = bsrmv.read_mtx(gz, bs=3, blocking="promote", dtype=np.float32, seed=5)
    assert np.array_equal(B.to_scipy().data, blocks.data)


def test_read_errors(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1.0\n")
    with pytest.raises(bsrmv.FormatError, match=r"bad\.mtx:3: column index"):
        bsrmv.read_mtx(bad, bs=2)
    with pytest.raises(bsrmv.FileError, match="cannot open"):
        bsrmv.read_mtx(tmp_path / "missing.mtx", bs=2)
    with pytest.raises(bsrmv.ArgumentError, match="blocking"):
        bsrmv.read_mtx(bad, bs=2, blocking="pad")
