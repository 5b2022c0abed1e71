"""A pytest plugin: seconds numba spends compiling each function during a test run.

Run the default tests on a cold cache with it (numba's event API; outermost compilations only,
so a kernel's callees count toward the first kernel that compiled them):

    rm -rf /tmp/nbcache && NUMBA_CACHE_DIR=/tmp/nbcache PYTHONPATH=benchmarks \\
        .venv/bin/python -m pytest -m "not slow" -q -p numba_compile_times -p no:cacheprovider

The table goes to ``numba_compile_times.txt`` (or ``$NUMBA_COMPILE_TIMES``): total, then each
function's seconds and number of compilations (one per type signature). :class:`CompileTimer`
also keeps each function's own seconds, its callees' excluded (``first_compile.py``).
"""

import atexit
import collections
import os
import time

from numba.core import event


class CompileTimer(event.Listener):
    """Per function: ``outermost`` seconds (compilations not inside another, their callees
    included), ``own`` seconds (every compilation, its callees' excluded) and ``count``."""

    def __init__(self):
        self.stack = []
        self.outermost: collections.Counter = collections.Counter()
        self.own: collections.Counter = collections.Counter()
        self.count: collections.Counter = collections.Counter()

    def on_start(self, ev):
        self.stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        start, inner = self.stack.pop()
        seconds = time.perf_counter() - start
        func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
        name = f"{func.__module__}.{func.__qualname__}" if func else "?"
        self.own[name] += seconds - inner
        if self.stack:  # a callee compiled inside another compilation
            self.stack[-1][1] += seconds
            return
        self.outermost[name] += seconds
        self.count[name] += 1


def _report(timer):
    path = os.environ.get("NUMBA_COMPILE_TIMES", "numba_compile_times.txt")
    with open(path, "w") as f:
        total, n = sum(timer.outermost.values()), sum(timer.count.values())
        f.write(f"total {total:.1f} s over {n} compilations\n")
        for name, seconds in timer.outermost.most_common():
            f.write(f"{seconds:7.1f} s {timer.count[name]:4d}  {name}\n")


def pytest_configure(config):
    timer = CompileTimer()
    event.register("numba:compile", timer)
    atexit.register(_report, timer)
