"""Ctrl-C reaches long numba loops.

In process: a timer signal's handler runs while a kernel runs, and its exception stops it.
In child processes: SIGINT, as Ctrl-C sends it. Each child starts a call that would run for minutes to hours uninterrupted, prints a marker just
before it, and reports how the call ended. The parent sends SIGINT once the call is under way
and gives the child GRACE seconds to report: without a signal check inside the kernels, the
child would report only when the call ends, long after.
"""

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import pymc_knn as pk
from pymc_knn.samplers import gibbs

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

ROOT = Path(__file__).resolve().parents[1]
STARTUP = 300.0
"""Seconds a child may take to import and compile before its marker (a cold numba cache)."""
GRACE = 10.0
"""Seconds from SIGINT to the child's report: generous for a loaded CI machine, far below the
minutes each call needs uninterrupted."""


class Tick(Exception):
    pass


@pytest.fixture
def knn_coupling():
    X = np.random.default_rng(0).normal(size=(2000, 2))
    return pk.KNNGraph(X, k_max=10).coupling(10)


def _with_timer(handler, call):
    """``call()`` with SIGALRM every millisecond handled by ``handler``."""
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 1e-3, 1e-3)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)


def test_handlers_run_inside_a_kernel_and_leave_its_draw_alone(knn_coupling):
    """Without the check, the pending signals would run the handler once, after the call."""
    z = np.zeros(2000, dtype=np.int64)
    expected = gibbs(knn_coupling, 1.0, z, 2, np.random.default_rng(1), sweeps=2000)
    ticks = []
    got = _with_timer(
        lambda *_: ticks.append(1),
        lambda: gibbs(knn_coupling, 1.0, z, 2, np.random.default_rng(1), sweeps=2000),
    )
    assert len(ticks) >= 5
    np.testing.assert_array_equal(got, expected)


def test_a_handlers_exception_stops_a_kernel(knn_coupling):
    """The handler's own exception comes out (not KeyboardInterrupt), on its third run."""
    ticks = []

    def handler(*_):
        ticks.append(1)
        if len(ticks) == 3:
            # a tick between this raise and _with_timer's finally would run the handler again
            signal.setitimer(signal.ITIMER_REAL, 0.0)
            raise Tick(len(ticks))

    z = np.zeros(2000, dtype=np.int64)
    with pytest.raises(Tick) as raised:  # 100,000 sweeps: seconds uninterrupted
        _with_timer(
            handler,
            lambda: gibbs(knn_coupling, 1.0, z, 2, np.random.default_rng(1), sweeps=100_000),
        )
    assert raised.value.args == (3,)


def _start(code: str) -> subprocess.Popen:
    # Python's own SIGINT handler in the child, even if this process inherited SIGINT ignored
    # (a background job of a non-interactive shell)
    code = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n" + code
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        os.killpg(proc.pid, signal.SIGKILL)  # its sampling workers too: they hold the pipes
        pytest.fail(f"the child printed nothing for {timeout:g} s: {proc.communicate()[1]}")
    line = proc.stdout.readline()
    if not line:
        pytest.fail(f"the child exited early: {proc.communicate()[1]}")
    return line.strip()


def _interrupt(proc: subprocess.Popen, marker: str, count: int = 1, group: bool = False) -> str:
    """Wait for ``count`` lines ``marker``, let the calls run, send SIGINT (to the child's
    process group if ``group``, as Ctrl-C in a terminal does); the child's next line."""
    seen = 0
    while seen < count:  # workers' lines may interleave: "slowslow", then an empty line
        line = _read_line(proc, STARTUP)
        assert line == marker * (len(line) // len(marker)), line
        seen += len(line) // len(marker)
    time.sleep(0.5)
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    line = ""
    while not line:
        line = _read_line(proc, GRACE)
    return line


def _finish(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


SAMPLERS_CHILD = """
import time
import numpy as np
import pymc_knn as pk
from pymc_knn.samplers import cftp, gibbs, swendsen_wang

X = np.random.default_rng(0).normal(size=(2000, 2))
c = pk.KNNGraph(X, k_max=10).coupling(10)
z = np.zeros(2000, dtype=np.int64)
rng = np.random.default_rng(1)
# far above the critical beta: the bounding chains never meet, so CFTP runs to max_sweeps
calls = {
    "cftp": lambda s: cftp(c, 3.0, z, rng, max_sweeps=s),
    "gibbs": lambda s: gibbs(c, 3.0, z, 2, rng, sweeps=s),
    "swendsen_wang": lambda s: swendsen_wang(c, 3.0, z, 2, rng, sweeps=s),
}
for name, call in calls.items():
    call(1)  # compiled before the marker
    print(name, flush=True)
    t0 = time.perf_counter()
    try:
        call(1 << 24)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted after {time.perf_counter() - t0:.2f} s", flush=True)
"""


def test_ctrl_c_interrupts_long_auxiliary_draws():
    proc = _start(SAMPLERS_CHILD)
    try:
        for name in ("cftp", "gibbs", "swendsen_wang"):
            assert _interrupt(proc, name).startswith("interrupted"), name
        assert proc.wait(GRACE) == 0
    finally:
        _finish(proc)


SAMPLE_CHILD = """
import logging
import numpy as np
import pymc as pm
import pymc_knn as pk

KEEP = 3


class SlowAfter(pk.Exchange):
    \"\"\"Exchange whose auxiliary draws run for hours after KEEP quick draws of a chain.\"\"\"

    def step(self, point):
        self.done = getattr(self, "done", 0) + 1
        if self.done == KEEP + 1:
            self.chain.aux = self.chain.aux._replace(max_sweeps=1 << 26)
            print("slow", flush=True)
        return super().step(point)


if __name__ == "__main__":
    logging.getLogger("pymc").setLevel(logging.ERROR)
    X = np.random.default_rng(0).normal(size=(2000, 2))
    y = (X[:, 0] > 0).astype(np.int64)
    with pm.Model():
        beta = pm.Uniform("beta", 2.8, 3.0)
        pk.PottsKNN("y", X=X, beta=beta, k=10, k_max=10, observed=y)
        step = SlowAfter(sampler="cftp", max_sweeps=4)
        idata = pm.sample(draws=1000, tune=0, chains=CORES, cores=CORES, step=step,
                          random_seed=1, progressbar=False, compute_convergence_checks=False)
    print("returned", *idata.posterior.sizes.values(), flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("cores", [1, 2])
def test_ctrl_c_in_pm_sample_keeps_the_draws_made(cores):
    """PyMC catches KeyboardInterrupt and returns the draws made so far: in the sampling loop
    (one core), and in the parent and each worker process (Ctrl-C reaches the whole group).

    With two cores this passes without the check too, more slowly: PyMC's parent, interrupted,
    terminates workers that do not stop within 2 s (7 s in all, measured)."""
    proc = _start(f"CORES = {cores}\n" + SAMPLE_CHILD)
    try:
        assert _interrupt(proc, "slow", count=cores, group=cores > 1) == f"returned {cores} 3"
        assert proc.wait(GRACE) == 0
    finally:
        _finish(proc)
