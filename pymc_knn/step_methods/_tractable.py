"""The tractable part of a Potts model's log posterior, compiled for the numba kernel.

Everything but the Potts term is tractable: the priors of the block's variables with the
Jacobians of their transforms, and every other term (observed or a ``pm.Potential``) that
depends on them. With the term's ``beta`` and ``theta`` (any PyTensor expressions of the model's
variables) it is compiled as one function of a flat vector ``x`` of all value variables, by
PyTensor's numba backend, and wrapped in a ``cfunc`` of the fixed signature
:data:`pymc_knn.kernels.mcmc.LOGP_SIGNATURE`, so the sampling kernel is compiled (and cached on
disk) once for every model. If the numba backend cannot compile a model's graph, a C-compiled
PyTensor function is called back from numba instead, with a warning: slower, same numbers
(through a ``cfunc`` of the same signature, so the kernel is not compiled again for it).
"""

from __future__ import annotations

import itertools
import math
import warnings
import weakref
from typing import NamedTuple

import numpy as np
import pytensor
import pytensor.tensor as pt
from numba import cfunc, njit, objmode
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.traversal import ancestors, graph_inputs

from ..distributions import potts_node
from ..kernels.mcmc import LOGP_SIGNATURE

__all__ = ["Layout", "TractableLogp"]


class Layout(NamedTuple):
    """Where each value variable sits in the flat vector ``x`` (block variables first)."""

    names: tuple
    shapes: tuple
    dtypes: tuple
    slices: tuple

    @classmethod
    def of(cls, value_vars, point) -> Layout:
        shapes = tuple(np.shape(point[v.name]) for v in value_vars)
        sizes = [int(np.prod(s, dtype=int)) for s in shapes]
        ends = list(itertools.accumulate(sizes))
        slices = tuple(slice(e - s, e) for s, e in zip(sizes, ends))
        return cls(
            tuple(v.name for v in value_vars), shapes, tuple(v.dtype for v in value_vars), slices
        )

    @property
    def size(self) -> int:
        return self.slices[-1].stop if self.slices else 0

    def to_x(self, point) -> np.ndarray:
        x = np.empty(self.size)
        for name, sl in zip(self.names, self.slices):
            x[sl] = np.ravel(point[name])
        return x

    def update(self, point, x, names) -> dict:
        """``point`` with the variables ``names`` read from ``x`` (original shapes and dtypes)."""
        new = dict(point)
        for name, shape, dtype, sl in zip(self.names, self.shapes, self.dtypes, self.slices):
            if name in names:
                new[name] = np.asarray(x[sl].reshape(shape), dtype=dtype)
        return new


def _depends_on(graph, value_vars) -> bool:
    return bool(set(value_vars) & set(ancestors([graph])))


def _constant_shared(outputs):
    """Replace shared variables (``pm.Data``) by their current values: the kernel sees constants."""
    shared = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
    if not shared:
        return outputs
    replace = {v: pt.constant(v.get_value(), dtype=v.dtype) for v in shared}
    return pytensor.clone_replace(outputs, replace, rebuild_strict=False)


_CALLBACKS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_KEYS = itertools.count()


class TractableLogp:
    """``lp, beta, theta`` at a flat vector of value variables, for Python and for numba.

    Parameters
    ----------
    model : pymc.Model
    term_rv : TensorVariable
        The Potts term.
    block : list of TensorVariable
        The value variables the step moves; they come first in ``x``.

    Attributes
    ----------
    layout : Layout
    kernel_fn : numba first-class function for :func:`pymc_knn.kernels.mcmc.run_iterations`
    backend : {"numba", "python"}
    """

    def __init__(self, model, term_rv, block, point=None):
        point = model.initial_point() if point is None else point
        value_vars = list(block) + [v for v in model.value_vars if v not in block]
        self.layout = Layout.of(value_vars, point)
        node = potts_node(term_rv)
        beta, theta = model.replace_rvs_by_values(node.inputs[2:4])
        others = [rv for rv in model.basic_RVs if potts_node(rv) is not node]
        others += list(model.potentials)
        terms = [t for t in others if _depends_on(model.logp(vars=[t], jacobian=True), block)]
        lp = model.logp(vars=terms, jacobian=True) if terms else pt.constant(0.0)
        outputs = [pt.cast(lp, "float64"), pt.cast(beta, "float64"), pt.cast(theta, "float64")]
        outputs, x = self._joined(_constant_shared(outputs), value_vars)
        self._graph = (x, outputs)
        self.backend = "numba"
        try:
            self._fn = pytensor.function([x], outputs, mode="NUMBA", on_unused_input="ignore")
            self._fn(self.layout.to_x(point))
            self.kernel_fn = _numba_wrapper(self._fn.vm.jit_fn)
        except Exception as err:  # noqa: BLE001 - any failure of the numba backend
            warnings.warn(
                f"PyTensor's numba backend could not compile the model's log density "
                f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}); the "
                "sampler calls a C-compiled function from numba instead: same results, a few "
                "microseconds more per iteration",
                UserWarning,
                stacklevel=3,
            )
            self._use_python()

    def _joined(self, outputs, value_vars):
        """``outputs`` as functions of one float64 vector ``x`` (integer variables cast back)."""
        x = pt.vector("x", dtype="float64")
        replace = {
            v: x[sl].reshape(shape).astype(v.dtype)
            for v, sl, shape in zip(value_vars, self.layout.slices, self.layout.shapes)
        }
        return pytensor.clone_replace(outputs, replace, rebuild_strict=False), x

    def _use_python(self):
        x, outputs = self._graph
        self.backend = "python"
        self._fn = pytensor.function([x], outputs, on_unused_input="ignore")
        self._fn.trust_input = True
        self._key = next(_KEYS)
        self.error = None
        _CALLBACKS[self._key] = self
        self.kernel_fn = _python_wrapper(self._key)

    def __call__(self, x, out=None) -> float:
        lp, beta, theta = self._fn(np.asarray(x, dtype=np.float64))
        if out is not None:
            out[0], out[1] = beta, theta
        return float(lp)

    def raise_error(self) -> None:
        """Raise what the called-back function raised during the kernel's last run (the
        ``cfunc`` between them returns nan instead: numba cannot raise through it)."""
        err, self.error = getattr(self, "error", None), None
        if err is not None:
            raise err

    def evaluate(self, x) -> tuple[float, float, float]:
        """``(lp, beta, theta)`` at ``x``."""
        lp, beta, theta = self._fn(np.asarray(x, dtype=np.float64))
        return float(lp), float(beta), float(theta)

    def __getstate__(self):
        state = dict(self.__dict__)
        for name in ("_fn", "kernel_fn", "_key", "error"):
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self.backend == "python":
            self._use_python()
            return
        x, outputs = self._graph
        self._fn = pytensor.function([x], outputs, mode="NUMBA", on_unused_input="ignore")
        self.kernel_fn = _numba_wrapper(self._fn.vm.jit_fn)


def _numba_wrapper(jit_fn):
    @cfunc(LOGP_SIGNATURE)
    def tractable(x, out):
        lp, beta, theta = jit_fn(x)
        out[0] = beta.item()
        out[1] = theta.item()
        return lp.item()

    return tractable


def _python_call(key, x, out):
    tractable = _CALLBACKS[key]
    try:
        return tractable(x, out)
    except BaseException as err:  # noqa: BLE001 - a cfunc cannot raise: kept, raised after
        if tractable.error is None:
            tractable.error = err
        return math.nan  # the kernel rejects the move; the step raises the error after it


def _python_wrapper(key):
    @njit(LOGP_SIGNATURE)
    def call(x, out):
        with objmode(lp="float64"):
            lp = _python_call(key, x, out)
        return lp

    # a cfunc, as for the numba backend: the kernel sees one first-class function type and is
    # compiled once (an njit dispatcher is a type of its own: a kernel compiled for each model)
    @cfunc(LOGP_SIGNATURE)
    def tractable(x, out):
        return call(x, out)

    return tractable
