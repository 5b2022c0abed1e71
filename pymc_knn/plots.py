"""Plots of a fitted model: predictive maps with uncertainty zones, the posterior of k.

Like ArviZ's plots they draw on given axes (or new ones) and return the axes. ArviZ's own trace,
forest, rank and pair plots work unchanged on the InferenceData of ``pm.sample``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from .predict import Posterior, predictive_summary

__all__ = ["plot_k_posterior", "plot_predictive_map", "predictive_grid"]

CLASS_COLOURS = ("#c0392b", "#1f1f1f", "#2471a3", "#229954", "#d68910", "#7d3c98")
UNCERTAIN_COLOUR = "#f4d03f"


def predictive_grid(
    idata, *, model=None, var_name=None, grid_size=200, margin=0.05, ci_prob=0.95, classes=None
) -> xr.Dataset:
    """The predictive summary on a regular grid over two covariates' training range.

    Returns
    -------
    xarray.Dataset
        The variables of :func:`pymc_knn.predictive_summary` with the point dimension unstacked
        into ``(x1, x0)`` (rows, columns), the grid coordinates on the covariates' own scale,
        plus ``zone`` (``x1, x0``): the Bayes class index where sure, ``G`` where uncertain, and
        the training points ``training_X`` (train_point, feature), ``training_y``.
    """
    post = Posterior(idata, model, var_name)
    graph = post.term.graph
    if graph.n_features != 2:
        raise ValueError(
            f"a predictive map needs exactly two covariates; {post.name!r} has "
            f"{graph.n_features}: plot a pair of them by fitting a model on those two"
        )
    if isinstance(grid_size, bool) or not isinstance(grid_size, (int, np.integer)) or grid_size < 2:
        raise ValueError(f"grid_size must be an integer >= 2, got {grid_size!r}")
    X = graph.X * graph.scale_ + graph.mean_
    lo, hi = X.min(axis=0), X.max(axis=0)
    # a constant covariate still gets a band around its value, so that the map has an area
    pad = np.where(hi > lo, margin * (hi - lo), np.maximum(np.abs(lo), 1.0) * 0.5)
    axes = [np.linspace(lo[i] - pad[i], hi[i] + pad[i], grid_size) for i in range(2)]
    xx, yy = np.meshgrid(*axes)
    summary = predictive_summary(
        idata,
        np.column_stack([xx.ravel(), yy.ravel()]),
        model=model,
        var_name=var_name,
        ci_prob=ci_prob,
        classes=classes,
    )
    G = summary.sizes["class"]
    zone = np.where(summary["uncertain"].values, G, np.argmax(summary["proba"].values, axis=1))
    summary["zone"] = ("point", zone)
    grid = summary.assign_coords(x0=("point", xx.ravel()), x1=("point", yy.ravel()))
    grid = grid.set_index(point=["x1", "x0"]).unstack("point")
    grid["training_X"] = (("train_point", "feature"), X)
    grid["training_y"] = ("train_point", post.y)
    return grid


def plot_predictive_map(
    idata,
    *,
    model=None,
    var_name=None,
    class_index=1,
    grid_size=200,
    ci_prob=0.95,
    classes=None,
    feature_names=None,
    training=True,
    axes=None,
    grid=None,
):
    """The two panels of Cucala et al. (2009), Fig. 3, for a model on two covariates.

    Left: level sets of the posterior predictive probability of class ``class_index``. Right:
    the zones of sure allocation to each class and the uncertainty zone, where the
    ``ci_prob`` credible interval of the class probability contains 0.5 (two classes) or the
    two most probable classes' intervals overlap.

    Parameters
    ----------
    idata, model, var_name, classes
        As for :func:`pymc_knn.predict_proba`.
    class_index : int
        The class whose probability the left panel shows.
    grid_size : int
        Grid points per covariate.
    feature_names : sequence of two str, optional
        Axis labels.
    training : bool
        Overlay the training points.
    axes : sequence of two matplotlib Axes, optional
    grid : xarray.Dataset, optional
        A :func:`predictive_grid` computed before (then ``grid_size`` and ``ci_prob`` are its).

    Returns
    -------
    numpy.ndarray of two matplotlib Axes
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    if grid is None:
        grid = predictive_grid(
            idata,
            model=model,
            var_name=var_name,
            grid_size=grid_size,
            ci_prob=ci_prob,
            classes=classes,
        )
    labels = [str(c) for c in grid["class"].values]
    G = len(labels)
    if not 0 <= class_index < G:
        raise ValueError(f"class_index must be in 0..{G - 1}, got {class_index!r}")
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 4.6), constrained_layout=True)
    axes = np.asarray(axes)
    x0, x1 = grid["x0"].values, grid["x1"].values
    proba = grid["proba"].sel({"class": grid["class"].values[class_index]}).values
    cs = axes[0].contourf(x0, x1, proba, levels=np.linspace(0, 1, 11), cmap="RdGy")
    axes[0].figure.colorbar(cs, ax=axes[0], label=f"P(class {labels[class_index]})")
    axes[0].set_title("posterior predictive probability")
    colours = [CLASS_COLOURS[g % len(CLASS_COLOURS)] for g in range(G)]
    zone_cmap = ListedColormap([_lighten(c) for c in colours] + [UNCERTAIN_COLOUR])
    axes[1].pcolormesh(
        x0, x1, grid["zone"].values, cmap=zone_cmap, vmin=-0.5, vmax=G + 0.5, shading="nearest"
    )
    axes[1].set_title(f"zones ({grid.attrs['ci_prob']:.0%} credible intervals)")
    handles = [Patch(color=_lighten(c), label=f"sure: {lab}") for c, lab in zip(colours, labels)]
    handles.append(Patch(color=UNCERTAIN_COLOUR, label="uncertain"))
    axes[1].legend(handles=handles, loc="upper right", fontsize="small", framealpha=0.8)
    for ax in axes:
        if training:
            X, y = grid["training_X"].values, grid["training_y"].values
            for g in range(G):
                ax.scatter(
                    *X[y == g].T,
                    s=10,
                    color=colours[g],
                    edgecolor="white",
                    linewidth=0.3,
                    label=labels[g],
                )
        if feature_names is not None:
            ax.set_xlabel(feature_names[0])
            ax.set_ylabel(feature_names[1])
    return axes


def _lighten(colour, amount=0.55):
    from matplotlib.colors import to_rgb

    rgb = np.asarray(to_rgb(colour))
    return tuple(rgb + (1 - rgb) * amount)


def plot_k_posterior(idata, var_name="k", *, ax=None, color="C0"):
    """Bar plot of the posterior probabilities of an integer parameter (by default ``k``).

    Returns
    -------
    matplotlib Axes
    """
    import matplotlib.pyplot as plt

    posterior = getattr(idata, "posterior", None)
    if posterior is None or var_name not in posterior:
        raise ValueError(f"idata has no posterior draws of {var_name!r}")
    values = np.asarray(posterior[var_name]).ravel()
    if values.size == 0 or not np.all(np.equal(np.mod(values, 1), 0)):
        raise ValueError(f"{var_name!r} must be an integer parameter (such as k)")
    ks, counts = np.unique(values.astype(np.int64), return_counts=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5), constrained_layout=True)
    ax.bar(ks, counts / values.size, width=0.8, color=color)
    ax.set_xlabel(var_name)
    ax.set_ylabel("posterior probability")
    ax.set_title(f"posterior of {var_name} ({values.size} draws)")
    return ax
