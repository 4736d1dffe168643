"""Device matrices from CuPy and PyTorch (skipped without a GPU)."""
import gc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

import bsrmv
import bsrmv.gpu as bg
from conftest import cvec, hermitian, random_bsr, random_complex, spmv_bound, tol_for

HAVE_GPU = bg.device_count() > 0
needs_gpu = pytest.mark.skipif(not HAVE_GPU, reason="no CUDA device or a CPU-only build")


class FakeDeviceArray:
    """Only __cuda_array_interface__: what the package reads of a device array."""

    def __init__(self, shape, typestr, strides=None, ptr=0x1000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (ptr, False), "version": 3, "stream": 1}


def test_interface_parsing():
    d = bg._Dev(FakeDeviceArray((4, 3), "<f8"), "x")
    assert d.contiguous and d.shape == (4, 3) and d.dtype == np.float64 and d.ptr == 0x1000
    assert not bg._Dev(FakeDeviceArray((4, 3), "<f8", (8, 32)), "x").contiguous
    assert bg._Dev(FakeDeviceArray((4, 1), "<f4", (4, 99)), "x").contiguous
    assert bg._stream_ptr(None, d) == 1  # the producer's stream from the interface
    with pytest.raises(bsrmv.ArgumentError, match="C-contiguous"):
        bg._convert(bg._Dev(FakeDeviceArray((4,), "<f8"), "x"), np.dtype(np.float32), "x")
    with pytest.raises(bsrmv.ArgumentError, match="not a device array"):
        bg._Dev(np.ones(3), "x")


def test_multivector_layouts():
    """Row- and column-major device arrays and their leading dimensions, as
    the k-vector products read them from __cuda_array_interface__."""
    c = bg._Dev(FakeDeviceArray((5, 3), "<f8"), "x")  # strides None: C-contiguous
    assert bg._dev_layouts(c) == (3, None)
    f = bg._Dev(FakeDeviceArray((5, 3), "<f8", (8, 40)), "x")
    assert bg._dev_layouts(f) == (None, 5)
    # column slice of a taller Fortran array: ld 7 > 5
    assert bg._dev_layouts(bg._Dev(FakeDeviceArray((5, 3), "<f4", (4, 28)), "x")) == (None, 7)
    # columns of a wider C array: ld 4 > 3
    assert bg._dev_layouts(bg._Dev(FakeDeviceArray((5, 3), "<f8", (32, 8)), "x")) == (4, None)
    # one column: both layouts
    assert bg._dev_layouts(bg._Dev(FakeDeviceArray((5, 1), "<f8", (8, 40)), "x")) == (1, 5)
    # neither (both strides > 1 element), or overlapping columns
    assert bg._dev_layouts(bg._Dev(FakeDeviceArray((5, 3), "<f8", (16, 96)), "x")) \
        == (None, None)
    assert bg._dev_layouts(bg._Dev(FakeDeviceArray((5, 3), "<f8", (8, 16)), "x")) \
        == (None, None)
    with pytest.raises(bsrmv.ArgumentError, match="Fortran-contiguous"):
        bg._convert(c, np.dtype(np.float64), "x", fortran=True)


class FakeCore:
    """Records the pointers and leading dimensions the device calls get."""

    def __init__(self):
        self.calls = []

    def spmm(self, *args):
        self.calls.append(("spmm",) + args)

    def spmv(self, *args):
        self.calls.append(("spmv",) + args)


def fake_matrix(shape, dtype, symmetric=False, vector_dtype=None):
    G = object.__new__(bg.GpuBSRMatrix)
    G._m, G._keep, G._host = FakeCore(), None, None
    G.shape, G.dtype, G.symmetric = shape, np.dtype(dtype), symmetric
    G.vector_dtype = np.dtype(vector_dtype or dtype)
    G.blocksize, G.nnzb, G.order, G.device = 1, 0, "row", 0
    return G


def test_multivector_calls(monkeypatch):
    """What the k-vector product passes to the library for each layout
    (no device needed: the arrays are only described, and their made-up
    pointers are taken to be on the matrix's device, which CUDA would not
    say of them where CuPy and a GPU are present)."""
    monkeypatch.setattr(bg, "_device_of", lambda obj, fw, ptr: 0)
    G = fake_matrix((6, 4), np.float64)
    xf = FakeDeviceArray((4, 3), "<f8", (8, 32), ptr=0x1000)       # Fortran, ld 4
    yf = FakeDeviceArray((6, 3), "<f8", (8, 64), ptr=0x9000)       # rows of a taller one: ld 8
    assert G.matvec(xf, alpha=2.0, beta=0.5, y=yf) is yf
    assert G._m.calls == [("spmm", 0, 2.0, 3, 0x1000, 4, 0.5, 0x9000, 8, False, 1)]
    G._m.calls.clear()
    xc = FakeDeviceArray((6, 3), "<f8", None, ptr=0x2000)          # C order, ld 3
    yc = FakeDeviceArray((4, 3), "<f8", (40, 8), ptr=0xa000)       # columns of a wider one: ld 5
    G.rmatvec(xc, y=yc)
    assert G._m.calls == [("spmm", 1, 1.0, 3, 0x2000, 3, 0.0, 0xa000, 5, True, 1)]
    G._m.calls.clear()
    G.matvec(FakeDeviceArray((4, 0), "<f8"), y=FakeDeviceArray((6, 0), "<f8"))
    assert G._m.calls == []
    # x not in y's layout, in a framework the package cannot convert with
    with pytest.raises(bsrmv.ArgumentError, match="Fortran-contiguous"):
        G.matvec(FakeDeviceArray((4, 3), "<f8"), y=yf)
    with pytest.raises(bsrmv.ArgumentError, match="float64"):
        G.matvec(xf, y=FakeDeviceArray((6, 3), "<f4", (4, 24)))
    with pytest.raises(bsrmv.DimensionError, match="expected"):
        G.matvec(xf, y=FakeDeviceArray((6, 2), "<f8", (8, 48)))
    with pytest.raises(bsrmv.DimensionError, match="x has 6 rows"):
        G.matvec(xc, y=yf)
    with pytest.raises(bsrmv.ArgumentError, match="row-major or column-major"):
        G.matvec(xf, y=FakeDeviceArray((6, 3), "<f8", (16, 96)))
    with pytest.raises(bsrmv.ArgumentError, match="beta != 0 needs y="):
        G.matvec(xf, beta=1.0)
    # symmetric: one SpMM, as for full storage, in either layout
    S = fake_matrix((6, 6), np.float64, symmetric=True)
    x = FakeDeviceArray((6, 2), "<f8", (8, 56), ptr=0x1000)        # ld 7
    y = FakeDeviceArray((6, 2), "<f8", (8, 48), ptr=0x9000)        # ld 6
    S.matvec(x, y=y)
    assert S._m.calls == [("spmm", 0, 1.0, 2, 0x1000, 7, 0.0, 0x9000, 6, False, 1)]
    S._m.calls.clear()
    S.matvec(FakeDeviceArray((6, 2), "<f8", None, ptr=0x2000),
             y=FakeDeviceArray((6, 2), "<f8", None, ptr=0xa000))
    assert S._m.calls == [("spmm", 0, 1.0, 2, 0x2000, 2, 0.0, 0xa000, 2, True, 1)]
    # mixed precision: one SpMM of float64 vectors, either layout
    M = fake_matrix((6, 6), np.float32, vector_dtype=np.float64)
    M.matvec(x, y=y)
    M.rmatvec(FakeDeviceArray((6, 2), "<f8", None, ptr=0x2000),
              y=FakeDeviceArray((6, 2), "<f8", None, ptr=0xa000))
    assert M._m.calls == [("spmm", 0, 1.0, 2, 0x1000, 7, 0.0, 0x9000, 6, False, 1),
                          ("spmm", 1, 1.0, 2, 0x2000, 2, 0.0, 0xa000, 2, True, 1)]


def test_complex_calls(monkeypatch):
    """Complex scalars and A^H reach the library as they are; complex x or
    b for a real matrix is refused before any call."""
    monkeypatch.setattr(bg, "_device_of", lambda obj, fw, ptr: 0)
    Z = fake_matrix((6, 4), np.complex128)
    x = FakeDeviceArray((6,), "<c16", ptr=0x1000)
    y = FakeDeviceArray((4,), "<c16", ptr=0x9000)
    Z.hmatvec(x, alpha=0.5 - 1j, beta=2j, y=y)
    X = FakeDeviceArray((4, 3), "<c16", (16, 64), ptr=0x2000)
    Y = FakeDeviceArray((6, 3), "<c16", (16, 96), ptr=0xa000)
    Z.matvec(X, alpha=1j, y=Y)
    assert Z._m.calls == [("spmv", 2, 0.5 - 1j, 0x1000, 6, 2j, 0x9000, 4, 1),
                          ("spmm", 0, 1j, 3, 0x2000, 4, 0j, 0xa000, 6, False, 1)]
    assert all(type(a) is complex for c in Z._m.calls for a in (c[2], c[5 if c[0] == "spmv" else 6]))
    R = fake_matrix((6, 4), np.float64)
    with pytest.raises(bsrmv.ArgumentError, match="x is complex"):
        R.matvec(FakeDeviceArray((4,), "<c16"), y=FakeDeviceArray((6,), "<f8"))
    with pytest.raises(bsrmv.ArgumentError, match="x is complex"):
        R.matvec(FakeDeviceArray((4, 2), "<c8"), y=FakeDeviceArray((6, 2), "<f8"))
    assert R._m.calls == []


@pytest.mark.skipif(HAVE_GPU, reason="a GPU is present")
def test_without_a_device_gpu_calls_raise():
    with pytest.raises(bsrmv.NoDeviceError) as e:
        bg.GpuBSRMatrix.from_host(bsrmv.grid(3, 2))
    assert str(e.value)


# ---- CuPy ---------------------------------------------------------------

@pytest.fixture
def cupy():
    if not HAVE_GPU:
        pytest.skip("no GPU")
    return pytest.importorskip("cupy")


@pytest.fixture
def torch():
    if not HAVE_GPU:
        pytest.skip("no GPU")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bs", list(range(1, 9)) + [16])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_cupy_matches_scipy(cupy, rng, bs, dtype, index_dtype):
    for mb, nb in [(1, 1), (9, 9), (17, 5), (300, 200)]:
        S = random_bsr(rng, mb, nb, bs, dtype=dtype, index_dtype=index_dtype)
        G = bg.GpuBSRMatrix.from_arrays(cupy.asarray(S.data), cupy.asarray(S.indices),
                                        cupy.asarray(S.indptr), S.shape)
        for transpose in (False, True):
            n_in, n_out = S.shape[::-1] if not transpose else S.shape
            x = rng.uniform(-1, 1, n_in).astype(dtype)
            y0 = rng.uniform(-1, 1, n_out).astype(dtype)
            f = G.rmatvec if transpose else G.matvec
            for alpha, beta in [(1.0, 0.0), (-1.5, 0.5), (0.0, 2.0)]:
                yd = cupy.asarray(y0) if beta else cupy.full(n_out, cupy.nan, dtype=dtype)
                out = f(cupy.asarray(x), alpha=alpha, beta=beta, y=yd)
                assert out is yd
                A64 = S.astype(np.float64)
                ref = alpha * ((A64.T if transpose else A64) @ x.astype(np.float64)) \
                    + (beta * y0 if beta else 0)
                bound = abs(alpha) * spmv_bound(S, x, dtype, transpose) \
                    + 2 * np.finfo(dtype).eps * abs(beta * y0.astype(np.float64))
                assert np.all(np.abs(cupy.asnumpy(out) - ref) <= bound)
        y = G @ cupy.asarray(rng.uniform(-1, 1, S.shape[1]).astype(dtype))
        assert isinstance(y, cupy.ndarray) and y.dtype == dtype


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cupy_tune(cupy, rng, dtype):
    """The measured choice keeps a configuration that gives the product."""
    S = random_bsr(rng, 400, 300, 3, dtype=dtype)
    G = bg.GpuBSRMatrix.from_arrays(cupy.asarray(S.data), cupy.asarray(S.indices),
                                    cupy.asarray(S.indptr), S.shape)
    x = rng.uniform(-1, 1, S.shape[1]).astype(dtype)
    ref = S.astype(np.float64) @ x.astype(np.float64)
    for candidates in (0, 1, 4):
        assert G.tune(candidates) > 0
        assert G.kernel
        y = cupy.asnumpy(G @ cupy.asarray(x))
        assert np.all(np.abs(y - ref) <= spmv_bound(S, x, dtype, False))
    with pytest.raises(bsrmv.ArgumentError):
        G.tune(-1)


@needs_gpu
def test_cupy_zero_copy_lifetime_and_streams(cupy, rng):
    S = random_bsr(rng, 200, 200, 3, empty_rows=False)
    d, ci, rp = cupy.asarray(S.data), cupy.asarray(S.indices), cupy.asarray(S.indptr)
    G = bg.GpuBSRMatrix.from_arrays(d, ci, rp, S.shape)
    x = rng.uniform(-1, 1, S.shape[1])
    xd = cupy.asarray(x)
    y1 = cupy.asnumpy(G @ xd)
    d *= 2.0  # same (current) stream as the product: ordered
    y2 = cupy.asnumpy(G @ xd)
    assert np.allclose(y2, 2 * y1, rtol=1e-14, atol=0)
    del d, ci, rp
    gc.collect()
    cupy.get_default_memory_pool().free_all_blocks()
    junk = cupy.full(10_000_000, 7.0)
    assert np.allclose(cupy.asnumpy(G @ xd), 2 * (S @ x), rtol=1e-13, atol=1e-13)
    del junk
    # the current stream is followed; an explicit stream= too
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        xs = cupy.asarray(x)
        ys = G @ xs
    s.synchronize()
    assert np.allclose(cupy.asnumpy(ys), 2 * (S @ x), rtol=1e-13, atol=1e-13)
    s2 = cupy.cuda.Stream(non_blocking=True)
    yo = cupy.zeros(S.shape[0])
    cupy.cuda.Device().synchronize()  # yo's fill (current stream) before s2 writes it
    G.matvec(xd, y=yo, stream=s2)
    s2.synchronize()
    assert np.allclose(cupy.asnumpy(yo), 2 * (S @ x), rtol=1e-13, atol=1e-13)


@needs_gpu
def test_cupy_conversions_and_errors(cupy, rng):
    S = random_bsr(rng, 20, 20, 2, empty_rows=False)
    G = bg.GpuBSRMatrix.from_arrays(cupy.asarray(S.data), cupy.asarray(S.indices),
                                    cupy.asarray(S.indptr), S.shape)
    x = rng.uniform(-1, 1, 40)
    strided = cupy.zeros(80)
    strided[::2] = cupy.asarray(x)
    assert np.allclose(cupy.asnumpy(G @ strided[::2]), S @ x, rtol=1e-13, atol=1e-13)
    assert np.allclose(cupy.asnumpy(G @ cupy.asarray(x, dtype=cupy.float32)), S @ x,
                       rtol=1e-6, atol=1e-6)
    with pytest.raises(bsrmv.ArgumentError, match="device array"):
        G @ x
    with pytest.raises(bsrmv.DimensionError):
        G @ cupy.ones(41)
    with pytest.raises(bsrmv.ArgumentError, match="float64"):
        G.matvec(cupy.asarray(x), y=cupy.zeros(40, dtype=cupy.float32))
    bad = cupy.asarray(S.indices)
    bad[0] = 1000
    with pytest.raises(bsrmv.Error):
        G2 = bg.GpuBSRMatrix.from_arrays(cupy.asarray(S.data), bad, cupy.asarray(S.indptr) + 1,
                                         S.shape)
        del G2


@needs_gpu
def test_cupy_solve(cupy, rng):
    M = random_bsr(rng, 40, 40, 3, density=0.15, empty_rows=False)
    S = (M + (abs(M).sum(axis=1).max() + 1) * sp.eye_array(120)).tobsr(blocksize=(3, 3))
    S.sum_duplicates()
    b = rng.uniform(-1, 1, 120)
    ref = spsolve(S.tocsc(), b)
    G = bg.GpuBSRMatrix.from_arrays(cupy.asarray(S.data), cupy.asarray(S.indices),
                                    cupy.asarray(S.indptr), S.shape)
    for method in ("bicgstab", "gmres"):
        x, rep = bsrmv.solve(G, cupy.asarray(b), method, tol=1e-10)
        assert rep.converged, rep.message
        assert np.linalg.norm(cupy.asnumpy(x) - ref) <= 1e-8 * np.linalg.norm(ref)
    H = bg.GpuBSRMatrix.from_host(bsrmv.BSRMatrix.from_scipy(S))
    x, rep = bsrmv.solve(H, cupy.asarray(b), "bicgstab", tol=1e-10)
    assert rep.converged and np.linalg.norm(cupy.asnumpy(x) - ref) <= 1e-8 * np.linalg.norm(ref)
    assert H.kernel


CSCALARS = [(1.0, 0.0), (0.0, 1.0), (0.75 - 0.5j, 0.0), (2.0, 1.0 + 0.25j)]


@needs_gpu
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("bs", [1, 2, 3, 4, 8, 11])
def test_cupy_complex_matches_scipy(cupy, rng, bs, dtype):
    """Complex device matrices (both block orders) against scipy: A, A^T and
    A^H, complex alpha and beta, y poisoned with NaN, several vectors in
    both layouts."""
    for mb, nb in [(1, 1), (9, 6), (120, 80)]:
        S = random_complex(rng, mb, nb, bs, dtype)
        D = S.toarray().astype(np.complex128)
        for order in ("row", "col"):
            data = S.data if order == "row" else np.ascontiguousarray(S.data.transpose(0, 2, 1))
            G = bg.GpuBSRMatrix.from_arrays(cupy.asarray(data), cupy.asarray(S.indices),
                                            cupy.asarray(S.indptr), S.shape, order=order)
            assert G.dtype == dtype and G.vector_dtype == dtype
            for op, M in ((0, D), (1, D.T), (2, D.conj().T)):
                f = (G.matvec, G.rmatvec, G.hmatvec)[op]
                x = cvec(rng, M.shape[1], dtype)
                y0 = cvec(rng, M.shape[0], dtype)
                Sx = S if op == 0 else S.T
                for alpha, beta in CSCALARS:
                    yd = cupy.asarray(y0) if beta != 0 else cupy.full(M.shape[0], cupy.nan,
                                                                      dtype=dtype)
                    out = f(cupy.asarray(x), alpha=alpha, beta=beta, y=yd)
                    assert out is yd
                    ref = alpha * (M @ x) + (beta * y0 if beta != 0 else 0)
                    assert np.all(np.abs(cupy.asnumpy(out) - ref)
                                  <= tol_for(dtype, Sx, x) * (1 + abs(beta)))
                for k, layout in ((3, "F"), (5, "C")):
                    X = np.asarray(np.stack([cvec(rng, M.shape[1], dtype) for _ in range(k)], 1),
                                   order=layout)
                    Y = f(cupy.asarray(X), alpha=0.5j)
                    assert Y.dtype == dtype
                    assert np.allclose(cupy.asnumpy(Y), 0.5j * (M @ X), rtol=1e-4, atol=1e-4)
    with pytest.raises(bsrmv.ArgumentError, match="complex alpha"):
        R = random_bsr(rng, 4, 4, 2)
        Gr = bg.GpuBSRMatrix.from_arrays(cupy.asarray(R.data), cupy.asarray(R.indices),
                                         cupy.asarray(R.indptr), R.shape)
        Gr.matvec(cupy.ones(8), alpha=1j)
    with pytest.raises(bsrmv.ArgumentError, match="x is complex"):
        Gr.matvec(cupy.ones(8, dtype=cupy.complex128))


@needs_gpu
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cupy_complex_storage_and_solve(cupy, rng, dtype):
    """Hermitian and complex symmetric storage uploaded from the host, and
    the device solvers on complex systems (BiCGSTAB, GMRES; CG on a
    Hermitian positive definite one, in full and Hermitian storage)."""
    tol = 1e-9 if dtype == np.complex128 else 1e-4
    H = hermitian(rng, 10, 4, dtype, shift=40.0)
    Dh = H.toarray().astype(np.complex128)
    n = H.shape[0]
    b = cvec(rng, n, dtype)
    x = cvec(rng, n, dtype)
    for host in (bsrmv.BSRMatrix.from_scipy(H), bsrmv.BSRMatrix.from_scipy(H, hermitian=True)):
        G = bg.GpuBSRMatrix.from_host(host)
        assert G.dtype == dtype and G.symmetric == host.symmetric
        for f, M in ((G.matvec, Dh), (G.rmatvec, Dh.T), (G.hmatvec, Dh.conj().T)):
            assert np.all(np.abs(cupy.asnumpy(f(cupy.asarray(x), alpha=1 - 2j)) - (1 - 2j) * (M @ x))
                          <= 3 * tol_for(dtype, H, x))
        X = np.asfortranarray(np.stack([cvec(rng, n, dtype) for _ in range(3)], 1))
        assert np.allclose(cupy.asnumpy(G @ cupy.asarray(X)), Dh @ X, rtol=1e-4, atol=1e-4)
        xs, rep = bsrmv.solve(G, cupy.asarray(b), "cg", tol=tol)
        assert rep.converged, rep.message
        assert np.linalg.norm(b - Dh @ cupy.asnumpy(xs)) <= 2 * tol * np.linalg.norm(b)
    C = random_complex(rng, 12, 12, 3, np.complex128)
    Dn = C.toarray() + np.diag(np.abs(C.toarray()).sum(axis=1) * (1 + 0.5j) + 1)
    N = sp.bsr_array(Dn.astype(dtype), blocksize=(3, 3))
    G = bg.GpuBSRMatrix.from_arrays(cupy.asarray(N.data), cupy.asarray(N.indices),
                                    cupy.asarray(N.indptr), N.shape)
    b = cvec(rng, N.shape[0], dtype)
    for method in ("bicgstab", "gmres"):
        xs, rep = bsrmv.solve(G, cupy.asarray(b), method, tol=tol)
        assert rep.converged and xs.dtype == dtype, rep.message
        assert np.linalg.norm(b - N.toarray().astype(np.complex128) @ cupy.asnumpy(xs)) \
            <= 2 * tol * np.linalg.norm(b)
    with pytest.raises(bsrmv.ArgumentError, match="b is complex"):
        R = bsrmv.BSRMatrix.from_scipy(
            (random_bsr(rng, 4, 4, 2) + 4 * sp.eye_array(8)).tobsr(blocksize=(2, 2)))
        bsrmv.solve(bg.GpuBSRMatrix.from_host(R), cupy.ones(8, dtype=cupy.complex128), "bicgstab")


# ---- PyTorch -------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bs", [1, 2, 3, 4, 6, 8])
def test_torch_matches_scipy(torch, rng, bs, dtype):
    S = random_bsr(rng, 50, 40, bs, dtype=dtype, index_dtype=np.int64)
    dev = torch.device("cuda")
    d = torch.from_numpy(S.data).to(dev)
    G = bg.GpuBSRMatrix.from_arrays(d, torch.from_numpy(S.indices).to(dev),
                                    torch.from_numpy(S.indptr).to(dev), S.shape)
    x = rng.uniform(-1, 1, S.shape[1]).astype(dtype)
    y = G @ torch.from_numpy(x).to(dev)
    assert isinstance(y, torch.Tensor) and y.device.type == "cuda"
    assert np.all(np.abs(y.cpu().numpy() - S.astype(np.float64) @ x.astype(np.float64))
                  <= spmv_bound(S, x, dtype))
    xt = rng.uniform(-1, 1, S.shape[0]).astype(dtype)
    yt = G.rmatvec(torch.from_numpy(xt).to(dev))
    assert np.all(np.abs(yt.cpu().numpy() - S.astype(np.float64).T @ xt.astype(np.float64))
                  <= spmv_bound(S, xt, dtype, transpose=True))
    d.mul_(-1.0)  # zero-copy: the next product sees it
    y2 = G @ torch.from_numpy(x).to(dev)
    assert np.allclose(y2.cpu().numpy(), -y.cpu().numpy(), rtol=1e-6 if dtype == np.float32
                       else 1e-14, atol=0)


@needs_gpu
def test_torch_streams(torch, rng):
    S = random_bsr(rng, 100, 100, 4, empty_rows=False)
    dev = torch.device("cuda")
    G = bg.GpuBSRMatrix.from_arrays(torch.from_numpy(S.data).to(dev),
                                    torch.from_numpy(S.indices).to(dev),
                                    torch.from_numpy(S.indptr).to(dev), S.shape)
    x = rng.uniform(-1, 1, S.shape[1])
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        xd = torch.from_numpy(x).to(dev, non_blocking=False)
        y = G @ xd
    s.synchronize()
    assert np.allclose(y.cpu().numpy(), S @ x, rtol=1e-13, atol=1e-13)
    y2 = torch.zeros(S.shape[0], dtype=torch.float64, device=dev)
    torch.cuda.synchronize()  # y2's fill (current stream) before s writes it
    G.matvec(xd, y=y2, stream=s)
    s.synchronize()
    assert np.allclose(y2.cpu().numpy(), S @ x, rtol=1e-13, atol=1e-13)


# ---- k vectors, symmetric storage, mixed precision ------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bs", [1, 2, 3, 4, 6, 8, 11])
def test_cupy_spmm_layouts(cupy, rng, bs, dtype):
    S = random_bsr(rng, 60, 45, bs, dtype=dtype)
    G = bg.GpuBSRMatrix.from_arrays(cupy.asarray(S.data), cupy.asarray(S.indices),
                                    cupy.asarray(S.indptr), S.shape)
    A64 = S.astype(np.float64)
    for transpose in (False, True):
        n_in, n_out = S.shape[::-1] if not transpose else S.shape
        f = G.rmatvec if transpose else G.matvec
        for k, order in [(1, "C"), (3, "F"), (8, "C"), (17, "F")]:
            X = np.asarray(rng.uniform(-1, 1, (n_in, k)), dtype=dtype, order=order)
            Y0 = np.asarray(rng.uniform(-1, 1, (n_out, k)), dtype=dtype, order=order)
            for alpha, beta in [(1.0, 0.0), (-1.5, 0.5), (0.0, 2.0)]:
                # y a view with ld > n (F) or ld > k (C), NaN around it
                if order == "F":
                    base = cupy.full((n_out + 2, k), cupy.nan, dtype=dtype, order="F")
                    Yd = base[1:n_out + 1]
                else:
                    base = cupy.full((n_out, k + 3), cupy.nan, dtype=dtype)
                    Yd = base[:, 3:]
                if beta:
                    Yd[...] = cupy.asarray(Y0)
                out = f(cupy.asarray(X), alpha=alpha, beta=beta, y=Yd)
                assert out is Yd
                ref = alpha * ((A64.T if transpose else A64) @ X.astype(np.float64)) \
                    + (beta * Y0 if beta else 0)
                tol = 1e-4 if dtype == np.float32 else 1e-12
                assert np.allclose(cupy.asnumpy(Yd), ref, rtol=tol, atol=tol)
                assert int(cupy.isnan(base).sum()) == base.size - Yd.size
        Y = G @ cupy.asarray(np.asfortranarray(
            rng.uniform(-1, 1, (S.shape[1], 4)).astype(dtype)))
        assert Y.flags.f_contiguous


@needs_gpu
def test_torch_spmm(torch, rng):
    S = random_bsr(rng, 40, 30, 3, index_dtype=np.int64)
    dev = torch.device("cuda")
    G = bg.GpuBSRMatrix.from_arrays(torch.from_numpy(S.data).to(dev),
                                    torch.from_numpy(S.indices).to(dev),
                                    torch.from_numpy(S.indptr).to(dev), S.shape)
    X = rng.uniform(-1, 1, (S.shape[1], 5))
    Y = G @ torch.from_numpy(X).to(dev)
    assert isinstance(Y, torch.Tensor) and Y.shape == (S.shape[0], 5)
    assert np.allclose(Y.cpu().numpy(), S @ X, rtol=1e-12, atol=1e-12)
    Yf = torch.empty((5, S.shape[0]), dtype=torch.float64, device=dev).t()  # column-major
    G.matvec(torch.from_numpy(X).to(dev), y=Yf)
    assert np.allclose(Yf.cpu().numpy(), S @ X, rtol=1e-12, atol=1e-12)


@needs_gpu
def test_cupy_symmetric_and_mixed(cupy, rng):
    R = random_bsr(rng, 50, 50, 3)
    S = (R + R.T + 20 * sp.eye_array(150)).tobsr(blocksize=(3, 3))
    S.sum_duplicates()
    sym = bsrmv.BSRMatrix.from_scipy(S, symmetric=True)
    mixed = bsrmv.BSRMatrix.from_scipy(S).astype(np.float32, vector_dtype=np.float64)
    S32 = S.astype(np.float32).astype(np.float64)
    x = rng.uniform(-1, 1, 150)
    X = rng.uniform(-1, 1, (150, 4))
    for host, ref in ((sym, S), (mixed, S32)):
        G = bg.GpuBSRMatrix.from_host(host)
        assert G.symmetric == host.symmetric and G.vector_dtype == np.float64
        assert np.allclose(cupy.asnumpy(G @ cupy.asarray(x)), ref @ x, rtol=1e-12, atol=1e-12)
        # one SpMM in x's layout, or in y's
        Y = G @ cupy.asarray(X)
        assert Y.flags.c_contiguous
        assert np.allclose(cupy.asnumpy(Y), ref @ X, rtol=1e-12, atol=1e-12)
        Yf = cupy.zeros((150, 4), order="F")
        G.matvec(cupy.asarray(X), y=Yf)
        assert np.allclose(cupy.asnumpy(Yf), ref @ X, rtol=1e-12, atol=1e-12)
        xs, rep = bsrmv.solve(G, cupy.asarray(x), "cg", tol=1e-10)
        assert rep.converged
        assert np.linalg.norm(ref @ cupy.asnumpy(xs) - x) <= 1e-9 * np.linalg.norm(x)


@needs_gpu
def test_cupy_refined_solve(cupy, rng):
    M = random_bsr(rng, 40, 40, 3, density=0.15, empty_rows=False)
    S = (M + (abs(M).sum(axis=1).max() + 1) * sp.eye_array(120)).tobsr(blocksize=(3, 3))
    S.sum_duplicates()
    b = rng.uniform(-1, 1, 120)
    A = bsrmv.BSRMatrix.from_scipy(S)
    G = bg.GpuBSRMatrix.from_host(A)
    x, rep = bsrmv.solve(G, cupy.asarray(b), "bicgstab", tol=1e-11, refine=True)
    assert rep.converged and rep.refinements >= 1, rep.message
    assert np.linalg.norm(b - S @ cupy.asnumpy(x)) <= 1.01e-11 * np.linalg.norm(b)
    Gf = bg.GpuBSRMatrix.from_host(A.astype(np.float32, vector_dtype=np.float64))
    x2, rep2 = bsrmv.solve(G, cupy.asarray(b), "gmres", tol=1e-11, refine=Gf)
    assert rep2.converged
    assert np.linalg.norm(b - S @ cupy.asnumpy(x2)) <= 1.01e-11 * np.linalg.norm(b)
    with pytest.raises(bsrmv.ArgumentError, match="refine must be"):
        bsrmv.solve(G, cupy.asarray(b), "gmres", refine=A)
