"""Thread count control and the GIL released during SpMV and solves."""
import sys
import threading
import time

import numpy as np
import pytest

import bsrmv


def observe_while_running(work, look, tries=10):
    """Run work() in a thread, calling look() from this thread until it
    ends; True once look() has returned True.  A call that holds the GIL
    lets look() run only before or after it, never during it."""
    for _ in range(tries):
        t = threading.Thread(target=work)
        t.start()
        seen = False
        while t.is_alive() and not seen:
            seen = look()
        t.join()
        if seen:
            return True
    return False


@pytest.fixture(scope="module")
def big():
    # about 60 MB: one product takes milliseconds to tens of milliseconds
    return bsrmv.grid(40, 4, shape3d=(40, 40, 16))


def test_gil_released_during_spmv(big):
    """y half written (first row done, last row not yet) is only visible
    from Python if the product runs without the GIL."""
    bsrmv.set_num_threads(1)
    x = np.ones(big.shape[1])
    y = np.empty(big.shape[0])

    def work():
        big.matvec(x, y=y)

    def half_written():
        return bool(y[0] == y[0] and y[-1] != y[-1])

    def tries():
        y[:] = np.nan
        return observe_while_running(work, half_written, tries=1)

    assert any(tries() for _ in range(10))


def max_python_gap(work):
    """Run work() in a thread while this thread runs Python code; the
    longest stretch this thread could not run (s), and work()'s duration.
    A call that holds the GIL blocks this thread for its whole length."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        ready, done = threading.Event(), threading.Event()
        span = []

        def run():
            ready.wait()
            t0 = time.perf_counter()
            work()
            span.append(time.perf_counter() - t0)
            done.set()

        t = threading.Thread(target=run)
        gap = 0.0
        t.start()
        last = time.perf_counter()
        ready.set()
        while not done.is_set():
            now = time.perf_counter()
            gap = max(gap, now - last)
            last = now
        t.join()
        return gap, span[0]
    finally:
        sys.setswitchinterval(old)


def test_gil_released_during_solve(big):
    """One solve is one long library call: holding the GIL would block this
    thread for all of it; a loaded machine stalls it for a few ms at most."""
    bsrmv.set_num_threads(1)
    b = np.ones(big.shape[0])
    runs = [max_python_gap(
        lambda: bsrmv.solve(big, b, "bicgstab", precond=None, tol=1e-300, maxiter=10))
        for _ in range(3)]
    gap, total = min(runs)
    assert gap < 0.25 * total, f"Python blocked {gap * 1e3:.1f} ms by a {total * 1e3:.1f} ms solve"


def test_two_threads_same_matrix(big):
    """Concurrent products on one matrix give the serial results."""
    rng = np.random.default_rng(3)
    xs = [rng.uniform(-1, 1, big.shape[1]) for _ in range(2)]
    expect = [big @ x for x in xs]
    out = [None, None]
    barrier = threading.Barrier(2)

    def run(i):
        barrier.wait()
        for _ in range(3):
            out[i] = big @ xs[i]

    ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in range(2):
        assert np.array_equal(out[i], expect[i])


def test_thread_count_applies_in_every_thread():
    bsrmv.set_num_threads(1)
    seen = []
    t = threading.Thread(target=lambda: seen.append(bsrmv.get_num_threads()))
    t.start()
    t.join()
    assert bsrmv.get_num_threads() == 1 and seen == [1]
    bsrmv.set_num_threads(2)
    assert bsrmv.get_num_threads() == 2
    with pytest.raises(bsrmv.ArgumentError, match=">= 1"):
        bsrmv.set_num_threads(0)
