"""What an InferenceData remembers of a Potts term, so that a saved fit predicts on its own.

``pm.sample`` (any PyMC route that builds an InferenceData from a model) stores, for each
observed ``PottsKNN`` or ``DistanceNN`` term ``y``, the training covariates as given in
``constant_data["y_X"]`` (dims: the points' dim of ``observed_data["y"]``, ``y_dim_0`` unless
``dims=`` named it, and ``y_feature``), with the term's options and the names of the posterior
variables that are its ``beta`` and ``theta`` as JSON in the attribute ``pymc_knn``.
:func:`term_from_idata` rebuilds the term from them, after ``az.from_netcdf`` too.
"""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from .terms import PottsTerm

ATTR = "pymc_knn"


def covariates_name(name: str) -> str:
    return f"{name}_X"


def _parameter(model, var) -> dict | None:
    """How a saved fit finds a term input: a posterior variable's name, or a constant."""
    named = {v.name for v in model.free_RVs + model.deterministics}
    if var.name in named:
        return {"name": var.name}
    try:
        return {"value": float(np.asarray(var.eval()))}
    except Exception:  # noqa: BLE001 - an expression of free variables: not recoverable
        return None


def training_data(model, dims=None, coords=None) -> dict:
    """``{name}_X`` DataArrays, one per observed Potts term of ``model``.

    The points' dim is the observed labels' (``dims=`` of the term, or ``idata_kwargs``'s
    ``dims``; ``dims`` and ``coords`` are those of the InferenceData being built), else
    ``{name}_dim_0``.
    """
    from .distributions import missing_labels, potts_node, potts_terms, term_name

    out = {}
    for rv in potts_terms(model):
        if rv not in model.observed_RVs:
            continue
        node, name = potts_node(rv), term_name(rv)
        term = node.op.term
        missing = missing_labels(model, rv)
        spec = {
            **term.spec(),
            "beta": _parameter(model, node.inputs[2]),
            "theta": _parameter(model, node.inputs[3]),
            "missing_labels": [] if missing is None else missing[0].tolist(),
        }
        label_dims = list((dims if dims is not None else model.named_vars_to_dims).get(name) or [])
        point = label_dims[0] if len(label_dims) == 1 else f"{name}_dim_0"
        known = {} if coords is None else coords
        out[covariates_name(name)] = xr.DataArray(
            term.graph.X_input,
            dims=(point, f"{name}_feature"),
            coords={point: np.asarray(known[point])} if point in known else None,
            attrs={ATTR: json.dumps(spec)},
        )
    return out


def with_training_data(dataset, model, dims=None, coords=None):
    """``dataset`` (a constant_data group, or None) with the model's Potts records added."""
    records = training_data(model, dims, coords)
    if not records:
        return dataset
    extra = xr.Dataset(records)
    return extra if dataset is None else dataset.assign(**records)


def recorded_terms(idata) -> dict:
    """``{name: (X, spec)}`` of the Potts terms an InferenceData records."""
    data = getattr(idata, "constant_data", None)
    if data is None:
        return {}
    out = {}
    for key, var in data.data_vars.items():
        if ATTR in var.attrs and key.endswith("_X"):
            out[key[:-2]] = (np.asarray(var.values, dtype=np.float64), json.loads(var.attrs[ATTR]))
    return out


def term_from_idata(idata, var_name=None):
    """``(name, term, spec)`` of the Potts term an InferenceData records.

    Raises ``ValueError`` when it records none (not sampled with this package, or with a version
    that did not record it) or several and ``var_name`` does not choose one.
    """
    records = recorded_terms(idata)
    if var_name is not None:
        records = {k: v for k, v in records.items() if k == var_name}
    if len(records) != 1:
        raise ValueError(
            "prediction needs the model that produced idata: idata records "
            + (
                f"the Potts terms {sorted(recorded_terms(idata))}: give var_name="
                if records
                else "no Potts term's training data (constant_data['<name>_X'])"
            )
            + "; pass model=model or call inside `with model:`"
        )
    ((name, (X, spec)),) = records.items()
    return name, PottsTerm.from_spec(X, spec), spec
