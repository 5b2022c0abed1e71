"""A note to the user when the samplers' numba kernels are about to be compiled.

The first ``pm.sample`` of a kind of term (kNN or d-nn) and auxiliary sampler on a machine
compiles the step's kernel for them (the whole iteration of every step method, about 70 s on 2
cores) before its first draw, with PyMC's progress bar standing at zero; later runs load it from
numba's cache on disk in about a second.
"""

from __future__ import annotations

import logging
import pickle
import re

_log = logging.getLogger("pymc")  # where pm.sample's own messages go
_noted = False


def cached_on_disk(dispatcher, *types: str) -> bool | None:
    """Whether ``dispatcher`` is compiled in this process or indexed in numba's cache on disk
    for a signature that names each of ``types`` (argument types' names, such as
    ``"KnnField"``); None when that cannot be told (not a numba dispatcher, or a numba whose
    cache reads otherwise): then nothing is said."""
    patterns = [re.compile(rf"\b{name}\(") for name in types]

    def names_all(signature) -> bool:
        return all(p.search(str(signature)) for p in patterns)

    try:
        if any(names_all(s) for s in dispatcher.signatures):
            return True
        index = dispatcher._cache._cache_file._load_index()  # {} when absent or stale
        return any(names_all(key[0]) for key in index)
    except (AttributeError, TypeError, IndexError, OSError, EOFError, pickle.UnpicklingError):
        return None  # numba's private cache API changed, or its index unreadable: say nothing


def note_first_compile(dispatcher, *types: str) -> None:
    """Log once per process, at INFO on PyMC's logger, that the first draws wait for numba
    to compile ``dispatcher`` for arguments of ``types`` (none of its signatures with them is
    cached yet)."""
    global _noted
    if _noted or cached_on_disk(dispatcher, *types) is not False:
        return
    _noted = True
    _log.info(
        "pymc_knn: compiling the samplers' numba kernels for this kind of model, once on this "
        "machine (about 1-2 minutes on 2 cores, before the first draws); they are cached on "
        "disk for later runs"
    )
