"""The package's Ops under PyTensor's numba backend (``mode="NUMBA"`` or ``linker=numba``).

Their ``perform`` methods drive the package's own numba kernels from Python (a term's graph,
couplings, counted warnings), so under the numba backend they run in numba's object mode, as
PyTensor's fall-back would run them; the time is spent in the kernels either way. Registered
here, they run so without PyTensor's warning that object mode "will be used", which would
otherwise be raised at every compilation of a model's logp or forward draws. Random variables
keep PyTensor's in-place rewrite: the core draw receives the generator the graph passes it.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
from pytensor.link.numba.dispatch.basic import generate_fallback_impl, numba_funcify
from pytensor.link.numba.dispatch.random import numba_core_rv_funcify

from .distributions import PottsEnergy, PottsRV
from .graphical.model import DecomposableGraphRV, GraphEvidence, _GraphLogPrior


def _object_mode(op, node, **kwargs):
    """PyTensor's object-mode fall-back for ``op``, without its warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Numba will use object mode", UserWarning)
        return generate_fallback_impl(op, node, **kwargs)


for _op in (PottsEnergy, _GraphLogPrior, GraphEvidence):
    numba_funcify.register(_op)(_object_mode)


def _core_draw(op, node):
    """One batch element's draw, ``op.rng_fn(rng, *params, None)``, in object mode; no cache
    key (the function closes over the Op, and so over its term's graph)."""
    dtype = node.outputs[1].type.numpy_dtype
    out_type = numba.types.Array(numba.from_dtype(dtype), 1, "C")

    def py_draw(rng, params):
        return np.ascontiguousarray(op.rng_fn(rng, *params, None), dtype=dtype)

    @numba.njit
    def draw(rng, *params):
        with numba.objmode(out=out_type):
            out = py_draw(rng, params)
        return out

    return draw, None


for _rv in (PottsRV, DecomposableGraphRV):
    numba_core_rv_funcify.register(_rv)(_core_draw)
