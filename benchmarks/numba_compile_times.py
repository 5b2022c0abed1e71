"""A pytest plugin: seconds numba spends compiling each function during a test run.

Run the default tests on a cold cache with it (numba's event API; outermost compilations only,
so a kernel's callees count toward the first kernel that compiled them):

    rm -rf /tmp/nbcache && NUMBA_CACHE_DIR=/tmp/nbcache PYTHONPATH=benchmarks \\
        .venv/bin/python -m pytest -m "not slow" -q -p numba_compile_times -p no:cacheprovider

The table goes to ``numba_compile_times.txt`` (or ``$NUMBA_COMPILE_TIMES``): total, then each
function's seconds and number of compilations (one per type signature).
"""

import atexit
import collections
import os
import time

from numba.core import event

_SECONDS: collections.Counter = collections.Counter()
_COUNT: collections.Counter = collections.Counter()


class _Timer(event.Listener):
    def __init__(self):
        self.started = []

    def on_start(self, ev):
        self.started.append(time.perf_counter())

    def on_end(self, ev):
        seconds = time.perf_counter() - self.started.pop()
        if self.started:  # a callee compiled inside another compilation
            return
        func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
        name = f"{func.__module__}.{func.__qualname__}" if func else "?"
        _SECONDS[name] += seconds
        _COUNT[name] += 1


def _report():
    path = os.environ.get("NUMBA_COMPILE_TIMES", "numba_compile_times.txt")
    with open(path, "w") as f:
        f.write(f"total {sum(_SECONDS.values()):.1f} s over {sum(_COUNT.values())} compilations\n")
        for name, seconds in _SECONDS.most_common():
            f.write(f"{seconds:7.1f} s {_COUNT[name]:4d}  {name}\n")


event.register("numba:compile", _Timer())
atexit.register(_report)
