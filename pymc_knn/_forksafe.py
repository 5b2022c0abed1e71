"""numba's parallel kernels in processes forked from one where they ran.

numba's OpenMP threading layer (GNU OpenMP: numba's default on Linux without TBB) ends a process
that runs a ``parallel=True`` kernel after being forked from a process where such a kernel ran
("Terminating: fork() called from a process already using GNU OpenMP, this is unsafe."). PyMC
forks its chain processes on Linux, and a d-nn model's chains widen their kept tables with the
parallel neighbour search; a user's ``multiprocessing`` pool (fork) may predict. In such a
process, :class:`ForkSafe` hands out serial twins of the parallel kernels (``prange`` runs as
``range``; compiled and cached under their own names): the same answers, on one thread.
"""

from __future__ import annotations

import functools
import importlib
import multiprocessing
import os
import types

import numba

_forked_from_pool = False


def _note_fork() -> None:
    global _forked_from_pool
    try:
        _forked_from_pool = _forked_from_pool or numba.threading_layer() == "omp"
    except ValueError:  # no parallel kernel has run in the parent
        pass


os.register_at_fork(after_in_child=_note_fork)


def forked_from_pool() -> bool:
    """Whether this process was forked from one whose numba OpenMP pool ran."""
    return _forked_from_pool


def may_thread() -> bool:
    """Whether a kernel called from numba code here may use the thread pool: not in a process
    forked from one whose pool ran, nor in a ``multiprocessing`` child (PyMC's chain processes
    already share the cores out, one chain each), and with several threads."""
    return (
        not _forked_from_pool
        and multiprocessing.parent_process() is None
        and numba.get_num_threads() > 1
    )


@functools.cache
def serial(kernel):
    """``kernel`` (a ``parallel=True`` numba function) compiled without the thread pool."""
    f = kernel.py_func
    twin = types.FunctionType(f.__code__, f.__globals__, f"{f.__name__}_serial", f.__defaults__)
    twin.__qualname__ = f"{f.__qualname__}_serial"
    return numba.njit(cache=True)(twin)


class ForkSafe:
    """A kernels module whose parallel kernels are their serial twins in a process forked from
    one whose numba OpenMP pool ran (:func:`forked_from_pool`), and themselves elsewhere."""

    def __init__(self, module: types.ModuleType):
        self._module = module

    @classmethod
    def of(cls, name: str) -> ForkSafe:
        """The wrapper of the module named ``name`` (how a pickled one comes back: dask and
        cloudpickle may send a function that refers to one by value)."""
        return cls(importlib.import_module(name))

    def __reduce__(self):
        return ForkSafe.of, (self._module.__name__,)

    def __getattr__(self, name):
        if name.startswith("__") or name == "_module":  # not set yet: unpickling, copying
            raise AttributeError(name)
        kernel = getattr(self._module, name)
        if _forked_from_pool and getattr(kernel, "targetoptions", {}).get("parallel"):
            return serial(kernel)
        return kernel
