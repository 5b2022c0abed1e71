"""A note to the user when the samplers' numba kernels are about to be compiled.

The first ``pm.sample`` on a machine compiles the step's kernel (the whole iteration of every
step method and auxiliary sampler, about 90 s on 2 cores) before its first draw, with PyMC's
progress bar standing at zero; later runs load it from numba's cache on disk in about a second.
"""

from __future__ import annotations

import logging
import os

_log = logging.getLogger("pymc")  # where pm.sample's own messages go
_noted = False


def cached_on_disk(dispatcher) -> bool | None:
    """Whether ``dispatcher`` is compiled in this process or indexed in numba's cache on disk;
    None when that cannot be told (not a numba dispatcher, or a numba whose cache reads
    otherwise): then nothing is said."""
    try:
        return bool(dispatcher.signatures) or os.path.exists(
            dispatcher._cache._cache_file._index_path
        )
    except AttributeError:
        return None


def note_first_compile(dispatcher) -> None:
    """Log once per process, at INFO on PyMC's logger, that the first draws wait for numba
    to compile ``dispatcher`` (nothing of it is cached yet)."""
    global _noted
    if _noted or cached_on_disk(dispatcher) is not False:
        return
    _noted = True
    _log.info(
        "pymc_knn: compiling the samplers' numba kernels, once on this machine (about 1-3 "
        "minutes on 2 cores, before the first draws); they are cached on disk for later runs"
    )
