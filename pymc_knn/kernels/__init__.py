"""numba kernels: plain functions on arrays and a ``numpy.random.Generator``.

The edge-list and CSR conventions they share are described in :mod:`.structure`. The friendlier
entry points, taking a :class:`pymc_knn.graphs.Coupling`, are in :mod:`pymc_knn.samplers`.
"""

from .cftp import cftp_potts2, counter_uniform
from .energy import energy, knn_energy_all_k, local_fields, log_pseudo_likelihood, neighbour_counts
from .gibbs import gibbs_sweeps
from .swendsen_wang import swendsen_wang_sweeps

__all__ = [
    "cftp_potts2",
    "counter_uniform",
    "energy",
    "gibbs_sweeps",
    "knn_energy_all_k",
    "local_fields",
    "log_pseudo_likelihood",
    "neighbour_counts",
    "swendsen_wang_sweeps",
]
