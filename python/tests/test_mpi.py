"""bsrmv.mpi: mpi_check.py under mpiexec on 1 and 3 ranks (skipped without
mpi4py, mpiexec or a package built with MPI)."""
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py")
import bsrmv.mpi  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(__file__), "mpi_check.py")


@pytest.mark.parametrize("ranks", [1, 3])
def test_ranks(ranks):
    if not bsrmv.mpi.available():
        pytest.skip("bsrmv built without MPI")
    exe = shutil.which("mpiexec") or shutil.which("mpirun")
    if exe is None:
        pytest.skip("no mpiexec")
    # Open MPI: more ranks than cores, and as root in containers
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
    r = subprocess.run([exe, "-n", str(ranks), sys.executable, SCRIPT], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"mpi_check: ok on {ranks} rank(s)" in r.stdout, r.stdout + r.stderr


def test_without_communicator():
    if not bsrmv.mpi.available():
        pytest.skip("bsrmv built without MPI")
    with pytest.raises(bsrmv.ArgumentError):
        bsrmv.mpi.DistMatrix.scatter(object(), None)
